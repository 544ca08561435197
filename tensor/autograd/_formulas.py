"""Derivative formulas, one row per differentiable operator overload.

Imports: ``dispatch`` and sibling autograd modules.  Formulas call operators
(``ops.core``), never arrays, so they run on every backend, and under
``create_graph=True`` they record their own graph (second derivatives).

A formula is ``f(grad, a, out) -> tuple``: ``grad`` is the gradient of the output
(a tuple for several outputs), ``a`` the call bound to its schema (defaults filled,
by argument name), ``out`` the forward result.  It returns one gradient per tensor
argument of the schema, in order (``None`` where there is none; a shorter tuple
leaves the rest None); ``sum_to`` undoes broadcasting.  ``saves`` declares which
values a formula reads (what the autograd layer version-checks).  Rows are keyed
by ``name.overload`` as in ``ops.core``.

This module holds the elementwise rows and merges the families' tables
(``_formulas_reduction``, ``_formulas_linalg``, ``_formulas_shape``,
``_formulas_nn``); every in-place form shares its functional row.  Beside
``FORMULAS``: ``NOT_DIFFERENTIABLE`` (outputs never require grad) and
``WITHOUT_FORMULA`` (differentiable, left to the autograd fallback, with why).
Composite operators need no row: their decomposition is differentiated.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from . import _formulas_common as common
from . import _formulas_linalg, _formulas_nn, _formulas_reduction, _formulas_shape

__all__ = ["FORMULAS", "NOT_DIFFERENTIABLE", "WITHOUT_FORMULA", "sum_to"]

core = common.core
Formula = common.Formula
sum_to = common.sum_to
_is_tensor = common.is_tensor
_t = common.grad_for
saves = common.saves


# -- binary arithmetic -------------------------------------------------------------------------
@saves()
def _add(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    alpha = a.get("alpha", 1)
    return _t(g, a["self"]), _t(g if alpha == 1 else g * alpha, a["other"])


@saves()
def _sub(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    alpha = a.get("alpha", 1)
    return _t(g, a["self"]), _t(-g if alpha == 1 else g * -alpha, a["other"])


@saves()
def _rsub(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    alpha = a.get("alpha", 1)
    return _t(-g if alpha == 1 else g * -alpha, a["self"]), _t(g, a["other"])


@saves("self:other", "other:self")
def _mul(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    return _t(g * y, x), _t(g * x, y) if _is_tensor(y) else None


@saves("self:other", "other")
def _div(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    if a.get("rounding_mode") is not None:  # floor/trunc division: zero almost everywhere
        return _t(g * 0, x), _t(g * 0, y) if _is_tensor(y) else None
    gx = g / y
    return _t(gx, x), _t(-gx * x / y, y) if _is_tensor(y) else None


@saves("self", "exponent", "result")
def _pow(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["exponent"]
    grads: list[Any] = []
    if _is_tensor(x):
        if _is_tensor(y):
            gx = core.where(y == 0, 0.0, g * y * x ** (y - 1))
        else:
            gx = g * 0 if y == 0 else g * y * x ** (y - 1)
        grads.append(_t(gx, x))
    if _is_tensor(y):
        if _is_tensor(x):
            gy = core.where(core.logical_and(x == 0, y >= 0), 0.0, g * out * core.log(x))
        elif x == 0:
            gy = core.where(y >= 0, 0.0, g * out * float("-inf"))
        else:
            gy = g * out * math.log(x) if x > 0 else g * float("nan")
        grads.append(_t(gy, y))
    return tuple(grads)


@saves("self", "other")
def _maximum(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    # Ties split the gradient evenly, as PyTorch does.
    gt, eq = core.gt(x, y), core.eq(x, y)
    half = g * 0.5
    gx = core.where(gt, g, core.where(eq, half, g * 0))
    gy = core.where(gt, g * 0, core.where(eq, half, g))
    return _t(gx, x), _t(gy, y)


@saves("self", "other")
def _minimum(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    lt, eq = core.lt(x, y), core.eq(x, y)
    half = g * 0.5
    gx = core.where(lt, g, core.where(eq, half, g * 0))
    gy = core.where(lt, g * 0, core.where(eq, half, g))
    return _t(gx, x), _t(gy, y)


@saves("self", "other")
def _atan2(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    y, x = a["self"], a["other"]
    denom = x * x + y * y
    return _t(g * x / denom, y), _t(-g * y / denom, x)


@saves("self", "other", "result")
def _hypot(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    return _t(g * x / out, x), _t(g * y / out, y)


@saves("self", "other")
def _fmod(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    gy = _t(-g * core.trunc(x / y), y) if _is_tensor(y) else None
    return _t(g, x), gy


@saves("self", "other")
def _remainder(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    gy = _t(-g * core.floor(x / y), y) if _is_tensor(y) else None
    return (_t(g, x), gy) if _is_tensor(x) else (gy,)


@saves(
    "condition",
)
def _where(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    cond, x, y = a["condition"], a["self"], a["other"]
    zero = g * 0
    grads: list[Any] = [None]  # the condition
    if _is_tensor(x):
        grads.append(_t(core.where(cond, g, zero), x))
    if _is_tensor(y):
        grads.append(_t(core.where(cond, zero, g), y))
    return tuple(grads)


@saves("self", "end", "weight")
def _lerp(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, end, w = a["self"], a["end"], a["weight"]
    grads = [_t(g * (1 - w), x), _t(g * w, end)]
    if _is_tensor(w):
        grads.append(_t(g * (end - x), w))
    return tuple(grads)


@saves("tensor1:tensor2", "tensor2:tensor1")
def _addcmul(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    t1, t2, value = a["tensor1"], a["tensor2"], a.get("value", 1)
    gv = g if value == 1 else g * value
    return _t(g, a["self"]), _t(gv * t2, t1), _t(gv * t1, t2)


@saves("tensor1:tensor2", "tensor2")
def _addcdiv(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    t1, t2, value = a["tensor1"], a["tensor2"], a.get("value", 1)
    gv = g if value == 1 else g * value
    return _t(g, a["self"]), _t(gv / t2, t1), _t(-gv * t1 / (t2 * t2), t2)


def _clamp_mask(x: Any, lo: Any, hi: Any) -> Any:
    keep = x == x  # all True, NaN positions excepted (PyTorch passes no gradient there)
    if lo is not None:
        keep = core.logical_and(keep, x >= lo)
    if hi is not None:
        keep = core.logical_and(keep, x <= hi)
    return keep


@saves(
    "self",
)
def _clamp(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    return (core.where(_clamp_mask(x, a.get("min"), a.get("max")), g, g * 0),)


@saves("self", "min", "max")
def _clamp_tensor(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, lo, hi = a["self"], a.get("min"), a.get("max")
    zero = g * 0
    gx = _t(core.where(_clamp_mask(x, lo, hi), g, zero), x)
    g_lo = _t(core.where(core.lt(x, lo), g, zero), lo) if lo is not None else None
    g_hi = _t(core.where(core.gt(x, hi), g, zero), hi) if hi is not None else None
    return gx, g_lo, g_hi


# -- unary --------------------------------------------------------------------------------------
def _unary(d: Callable[[Any, Any, Any], Any], saved: tuple[str, ...] = ("self",)) -> Formula:
    """A one-argument row: ``d(grad, x, out)`` gives the input's gradient; ``saved`` says
    whether it reads ``x`` ("self"), ``out`` ("result") or neither."""

    def formula(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
        return (d(g, a["self"], out),)

    return saves(*saved)(formula)


def _zero(g: Any, x: Any, out: Any) -> Any:
    return g * 0


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@saves(
    "self",
)
def _gelu(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    if a.get("approximate", "none") == "tanh":
        inner = _SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
        t = core.tanh(inner)
        d_inner = _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x)
        return (g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * d_inner),)
    cdf = 0.5 * (1 + core.erf(x * _INV_SQRT_2))
    pdf = core.exp(-0.5 * x * x) * _INV_SQRT_2PI
    return (g * (cdf + x * pdf),)


@saves(
    "self",
)
def _softplus(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, beta, threshold = a["self"], a.get("beta", 1), a.get("threshold", 20)
    z = core.sigmoid(x * beta)
    return (core.where(x * beta > threshold, g, g * z),)


@saves(
    "self",
)
def _nan_to_num(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    return (core.where(core.isfinite(x), g, g * 0),)


# -- conversions and random numbers ------------------------------------------------------------
@saves()
def _to_copy(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    if g.dtype != x.dtype or g.device != x.device:
        g = core._to_copy(g, dtype=x.dtype, device=x.device)
    return (g,)


@saves()
def _normal(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    # PyTorch: the mean and std of a sample get zero gradients (not "not differentiable").
    return tuple(_t(core.zeros_like(g), v) for v in (a.get("mean"), a.get("std")) if _is_tensor(v))


_ELEMENTWISE: dict[str, Formula] = {
    "add.Tensor": _add,
    "add.Scalar": _add,
    "sub.Tensor": _sub,
    "sub.Scalar": _sub,
    "rsub.Tensor": _rsub,
    "rsub.Scalar": _rsub,
    "mul.Tensor": _mul,
    "mul.Scalar": _mul,
    "div.Tensor": _div,
    "div.Scalar": _div,
    "pow.Tensor_Tensor": _pow,
    "pow.Tensor_Scalar": _pow,
    "pow.Scalar": _pow,
    "maximum": _maximum,
    "minimum": _minimum,
    "max.other": _maximum,
    "min.other": _minimum,
    "atan2": _atan2,
    "hypot": _hypot,
    "fmod.Tensor": _fmod,
    "fmod.Scalar": _fmod,
    "remainder.Tensor": _remainder,
    "remainder.Scalar": _remainder,
    "remainder.Scalar_Tensor": _remainder,
    "where.self": _where,
    "where.ScalarOther": _where,
    "where.ScalarSelf": _where,
    "lerp.Scalar": _lerp,
    "lerp.Tensor": _lerp,
    "clamp": _clamp,
    "clamp.Tensor": _clamp_tensor,
    "addcmul": _addcmul,
    "addcdiv": _addcdiv,
    "neg": _unary(lambda g, x, out: -g, saved=()),
    "abs": _unary(lambda g, x, out: g * core.sign(x)),
    "sign": _unary(_zero, ()),
    "exp": _unary(lambda g, x, out: g * out, saved=("result",)),
    "exp2": _unary(lambda g, x, out: g * out * math.log(2.0), saved=("result",)),
    "expm1": _unary(lambda g, x, out: g * (out + 1), saved=("result",)),
    "log": _unary(lambda g, x, out: g / x),
    "log2": _unary(lambda g, x, out: g / (x * math.log(2.0))),
    "log10": _unary(lambda g, x, out: g / (x * math.log(10.0))),
    "log1p": _unary(lambda g, x, out: g / (x + 1)),
    "sqrt": _unary(lambda g, x, out: g / (2 * out), saved=("result",)),
    "rsqrt": _unary(lambda g, x, out: g * -0.5 * out * out * out, saved=("result",)),
    "square": _unary(lambda g, x, out: g * 2 * x),
    "reciprocal": _unary(lambda g, x, out: -g * out * out, saved=("result",)),
    "sin": _unary(lambda g, x, out: g * core.cos(x)),
    "cos": _unary(lambda g, x, out: -g * core.sin(x)),
    "tan": _unary(lambda g, x, out: g * (1 + out * out), saved=("result",)),
    "asin": _unary(lambda g, x, out: g * core.rsqrt(1 - x * x)),
    "acos": _unary(lambda g, x, out: -g * core.rsqrt(1 - x * x)),
    "atan": _unary(lambda g, x, out: g / (1 + x * x)),
    "sinh": _unary(lambda g, x, out: g * core.cosh(x)),
    "cosh": _unary(lambda g, x, out: g * core.sinh(x)),
    "tanh": _unary(lambda g, x, out: g * (1 - out * out), saved=("result",)),
    "asinh": _unary(lambda g, x, out: g * core.rsqrt(x * x + 1)),
    "acosh": _unary(lambda g, x, out: g * core.rsqrt(x * x - 1)),
    "atanh": _unary(lambda g, x, out: g / (1 - x * x)),
    "sigmoid": _unary(lambda g, x, out: g * out * (1 - out), saved=("result",)),
    # PyTorch's threshold_backward: zero where the output is not positive, even for a
    # NaN or infinite incoming gradient.
    "relu": _unary(lambda g, x, out: core.where.ScalarOther(out > 0, g, 0), saved=("result",)),
    "silu": _unary(lambda g, x, out: g * core.sigmoid(x) * (1 + x * (1 - core.sigmoid(x)))),
    "erf": _unary(lambda g, x, out: g * (2.0 / math.sqrt(math.pi)) * core.exp(-x * x)),
    "erfc": _unary(lambda g, x, out: g * (-2.0 / math.sqrt(math.pi)) * core.exp(-x * x)),
    "floor": _unary(_zero, ()),
    "ceil": _unary(_zero, ()),
    "trunc": _unary(_zero, ()),
    "round": _unary(_zero, ()),
    "frac": _unary(lambda g, x, out: g, saved=()),
    "gelu": _gelu,
    "softplus": _softplus,
    "nan_to_num": _nan_to_num,
    "_to_copy": _to_copy,
    "normal.Tensor_Tensor": _normal,
    "normal.Tensor_float": _normal,
    "normal.float_Tensor": _normal,
}

_FUNCTIONAL: dict[str, Formula] = {
    **_ELEMENTWISE,
    **_formulas_reduction.FORMULAS,
    **_formulas_linalg.FORMULAS,
    **_formulas_shape.FORMULAS,
    **_formulas_nn.FORMULAS,
}

# Operators with an in-place form (``add_.Tensor``...), which shares the functional row's
# formula; the autograd layer does the in-place bookkeeping (see ``_layer``).
_INPLACE = (
    "add", "sub", "mul", "div", "remainder", "pow", "fmod", "atan2", "hypot", "lerp", "clamp",
    "addcmul", "addcdiv", "neg", "abs", "sign", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
    "rsqrt", "square", "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
    "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "relu", "erf", "erfc", "floor",
    "ceil", "trunc", "frac", "round", "nan_to_num", "masked_fill", "index_put", "scatter",
    "scatter_add", "cumsum", "cumprod", "addmm", "tril", "triu",
)  # fmt: skip


def _inplace_key(key: str) -> str:
    name, dot, overload = key.partition(".")
    return f"{name}_{dot}{overload}"


@saves()
def _zeros(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (core.zeros_like(g),)


# In-place comparisons write 0/1 into a float self: PyTorch gives self a zero gradient.
_INPLACE_COMPARISONS = {
    f"{name}_.{ov}": _zeros for name in ("eq", "ne", "lt", "le", "gt", "ge") for ov in ("Tensor", "Scalar")
}  # fmt: skip

FORMULAS: dict[str, Formula] = {
    **_FUNCTIONAL,
    **{
        _inplace_key(k): f
        for k, f in _FUNCTIONAL.items()
        if k.partition(".")[0] in _INPLACE and k not in ("remainder.Scalar_Tensor", "pow.Scalar")
    },
    **_INPLACE_COMPARISONS,
}


# Operators whose outputs never carry gradients (PyTorch's "not differentiable"
# entries): their Autograd slot is a fallthrough, so they skip autograd entirely.
# Comparisons, predicates, logical and bitwise ops, index-valued results, and the
# factories (which take no tensor to differentiate).
NOT_DIFFERENTIABLE = frozenset(
    {
        *(f"{name}.{ov}" for name in ("eq", "ne", "lt", "le", "gt", "ge") for ov in ("Tensor", "Scalar")),
        *(f"{name}.{ov}" for name in ("bitwise_and", "bitwise_or", "bitwise_xor") for ov in ("Tensor", "Scalar")),
        *(f"{name}.{ov}" for name in ("bitwise_left_shift", "bitwise_right_shift") for ov in ("Tensor", "Tensor_Scalar")),
        "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_not",
        "isclose", "isnan", "isinf", "isfinite", "where.Scalar",
        "argmax", "argmin", "all", "any", "count_nonzero",
        "argsort", "argsort.stable", "nonzero",
        *(f"{name}_.{ov}" for name in ("bitwise_and", "bitwise_or", "bitwise_xor") for ov in ("Tensor", "Scalar")),
        *(f"{name}_.{ov}" for name in ("bitwise_left_shift", "bitwise_right_shift") for ov in ("Tensor", "Tensor_Scalar")),
        "logical_and_", "logical_or_", "logical_xor_", "logical_not_", "bitwise_not_",
        "empty", "zeros", "ones", "full", "arange", "linspace", "eye",
        "rand", "randn", "randint", "normal.float_float",
        "empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
    }
)  # fmt: skip

# Differentiable operators left to PyTorch's autograd fallback (their outputs require
# grad; backward warns and passes no gradient on), with the reason.
WITHOUT_FORMULA: dict[str, str] = {
    "floor_divide.Tensor": "PyTorch has no formula either (its autograd fallback)",
    "floor_divide.Scalar": "PyTorch has no formula either (its autograd fallback)",
    "floor_divide_.Tensor": "PyTorch has no formula either (its autograd fallback)",
    "floor_divide_.Scalar": "PyTorch has no formula either (its autograd fallback)",
    "scatter.reduce": "PyTorch: derivative not implemented",
    "scatter_.reduce": "PyTorch: derivative not implemented",
    "scatter_.value_reduce": "PyTorch: derivative not implemented",
    "scatter.value_reduce": "PyTorch: derivative not implemented",
    "_unique2": "PyTorch: derivative not implemented",
    "unique_dim": "PyTorch: derivative not implemented",
    "_cross_entropy_backward": "a backward kernel: cross_entropy's formula calls it only when "
    "the backward records no graph; with create_graph it differentiates a composite",
}

"""Derivative formulas, one row per differentiable operator overload.

Imports: ``dispatch`` and sibling autograd modules.  Formulas call operators
(``ops.core``), never arrays, so they run on every backend, and under
``create_graph=True`` they record their own graph (second derivatives).

A formula is ``f(grad, a, out) -> tuple``: ``grad`` is the gradient of the output
(a tuple for several outputs), ``a`` the call bound to its schema (defaults filled,
by argument name), ``out`` the forward result.  It returns one gradient per tensor
argument of the schema, in order (``None`` where there is none); ``sum_to`` undoes
broadcasting.  Rows are keyed by ``name.overload`` as in ``ops.core``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from dispatch import ops

__all__ = ["FORMULAS", "NOT_DIFFERENTIABLE", "sum_to"]

core = ops.core
Formula = Callable[[Any, dict[str, Any], Any], tuple[Any, ...]]


def sum_to(g: Any, like: Any) -> Any:
    """Sum ``g`` down to ``like``'s shape (undo broadcasting); ``like`` may be a number."""
    shape = tuple(getattr(like, "shape", ()))
    gshape = tuple(g.shape)
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    if lead > 0:
        g = core.sum(g, list(range(lead)), False)
    ones = [i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1]
    if ones:
        g = core.sum(g, ones, True)
    return g


def _is_tensor(v: Any) -> bool:
    return getattr(v, "_dispatch_bits", None) is not None


def _t(g: Any, like: Any) -> Any:
    """``sum_to`` for a tensor argument, None for a number (no gradient)."""
    return sum_to(g, like) if _is_tensor(like) else None


# -- binary arithmetic -------------------------------------------------------------------------
def _add(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    alpha = a.get("alpha", 1)
    return _t(g, a["self"]), _t(g if alpha == 1 else g * alpha, a["other"])


def _sub(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    alpha = a.get("alpha", 1)
    return _t(g, a["self"]), _t(-g if alpha == 1 else g * -alpha, a["other"])


def _rsub(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    alpha = a.get("alpha", 1)
    return _t(-g if alpha == 1 else g * -alpha, a["self"]), _t(g, a["other"])


def _mul(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    return _t(g * y, x), _t(g * x, y) if _is_tensor(y) else None


def _div(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    if a.get("rounding_mode") is not None:  # floor/trunc division: zero almost everywhere
        return _t(g * 0, x), _t(g * 0, y) if _is_tensor(y) else None
    gx = g / y
    return _t(gx, x), _t(-gx * x / y, y) if _is_tensor(y) else None


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


def _maximum(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    # Ties split the gradient evenly, as PyTorch does.
    gt, eq = core.gt(x, y), core.eq(x, y)
    half = g * 0.5
    gx = core.where(gt, g, core.where(eq, half, g * 0))
    gy = core.where(gt, g * 0, core.where(eq, half, g))
    return _t(gx, x), _t(gy, y)


def _minimum(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    lt, eq = core.lt(x, y), core.eq(x, y)
    half = g * 0.5
    gx = core.where(lt, g, core.where(eq, half, g * 0))
    gy = core.where(lt, g * 0, core.where(eq, half, g))
    return _t(gx, x), _t(gy, y)


def _atan2(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    y, x = a["self"], a["other"]
    denom = x * x + y * y
    return _t(g * x / denom, y), _t(-g * y / denom, x)


def _hypot(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    return _t(g * x / out, x), _t(g * y / out, y)


def _fmod(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    gy = _t(-g * core.trunc(x / y), y) if _is_tensor(y) else None
    return _t(g, x), gy


def _remainder(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    gy = _t(-g * core.floor(x / y), y) if _is_tensor(y) else None
    return (_t(g, x), gy) if _is_tensor(x) else (gy,)


def _where(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    cond, x, y = a["condition"], a["self"], a["other"]
    zero = g * 0
    grads: list[Any] = [None]  # the condition
    if _is_tensor(x):
        grads.append(_t(core.where(cond, g, zero), x))
    if _is_tensor(y):
        grads.append(_t(core.where(cond, zero, g), y))
    return tuple(grads)


def _lerp(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, end, w = a["self"], a["end"], a["weight"]
    grads = [_t(g * (1 - w), x), _t(g * w, end)]
    if _is_tensor(w):
        grads.append(_t(g * (end - x), w))
    return tuple(grads)


def _clamp_mask(x: Any, lo: Any, hi: Any) -> Any:
    keep = x == x  # all True, NaN positions excepted (PyTorch passes no gradient there)
    if lo is not None:
        keep = core.logical_and(keep, x >= lo)
    if hi is not None:
        keep = core.logical_and(keep, x <= hi)
    return keep


def _clamp(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    return (core.where(_clamp_mask(x, a.get("min"), a.get("max")), g, g * 0),)


def _clamp_tensor(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, lo, hi = a["self"], a.get("min"), a.get("max")
    zero = g * 0
    gx = _t(core.where(_clamp_mask(x, lo, hi), g, zero), x)
    g_lo = _t(core.where(core.lt(x, lo), g, zero), lo) if lo is not None else None
    g_hi = _t(core.where(core.gt(x, hi), g, zero), hi) if hi is not None else None
    return gx, g_lo, g_hi


# -- unary --------------------------------------------------------------------------------------
def _unary(d: Callable[[Any, Any, Any], Any]) -> Formula:
    """A one-argument row: ``d(grad, x, out)`` gives the input's gradient."""

    def formula(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
        return (d(g, a["self"], out),)

    return formula


def _zero(g: Any, x: Any, out: Any) -> Any:
    return g * 0


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


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


def _softplus(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, beta, threshold = a["self"], a.get("beta", 1), a.get("threshold", 20)
    z = core.sigmoid(x * beta)
    return (core.where(x * beta > threshold, g, g * z),)


def _nan_to_num(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    return (core.where(core.isfinite(x), g, g * 0),)


# -- reductions ---------------------------------------------------------------------------------
def _dims(dim: Any, ndim: int) -> list[int]:
    if dim is None:
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted(d % ndim if ndim else 0 for d in dims)


def _unreduce(g: Any, x: Any, dim: Any, keepdim: bool) -> Any:
    """Bring a reduction's gradient back to ``x``'s shape (broadcasting does the rest)."""
    if not keepdim and dim is not None and x.ndim:
        for d in _dims(dim, x.ndim):
            g = core.unsqueeze(g, d)  # a view operator (issue 5's shape family)
    return g * core.ones_like(x)


def _sum(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    return (_unreduce(g, x, a.get("dim"), a.get("keepdim", False)),)


def _mean(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, dim = a["self"], a.get("dim")
    count = 1
    for d in _dims(dim, x.ndim):
        count *= x.shape[d]
    return (_unreduce(g, x, dim, a.get("keepdim", False)) / max(count, 1),)


FORMULAS: dict[str, Formula] = {
    "sum": _sum,
    "mean": _mean,
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
    "neg": _unary(lambda g, x, out: -g),
    "abs": _unary(lambda g, x, out: g * core.sign(x)),
    "sign": _unary(_zero),
    "exp": _unary(lambda g, x, out: g * out),
    "exp2": _unary(lambda g, x, out: g * out * math.log(2.0)),
    "expm1": _unary(lambda g, x, out: g * (out + 1)),
    "log": _unary(lambda g, x, out: g / x),
    "log2": _unary(lambda g, x, out: g / (x * math.log(2.0))),
    "log10": _unary(lambda g, x, out: g / (x * math.log(10.0))),
    "log1p": _unary(lambda g, x, out: g / (x + 1)),
    "sqrt": _unary(lambda g, x, out: g / (2 * out)),
    "rsqrt": _unary(lambda g, x, out: g * -0.5 * out * out * out),
    "square": _unary(lambda g, x, out: g * 2 * x),
    "reciprocal": _unary(lambda g, x, out: -g * out * out),
    "sin": _unary(lambda g, x, out: g * core.cos(x)),
    "cos": _unary(lambda g, x, out: -g * core.sin(x)),
    "tan": _unary(lambda g, x, out: g * (1 + out * out)),
    "asin": _unary(lambda g, x, out: g * core.rsqrt(1 - x * x)),
    "acos": _unary(lambda g, x, out: -g * core.rsqrt(1 - x * x)),
    "atan": _unary(lambda g, x, out: g / (1 + x * x)),
    "sinh": _unary(lambda g, x, out: g * core.cosh(x)),
    "cosh": _unary(lambda g, x, out: g * core.sinh(x)),
    "tanh": _unary(lambda g, x, out: g * (1 - out * out)),
    "asinh": _unary(lambda g, x, out: g * core.rsqrt(x * x + 1)),
    "acosh": _unary(lambda g, x, out: g * core.rsqrt(x * x - 1)),
    "atanh": _unary(lambda g, x, out: g / (1 - x * x)),
    "sigmoid": _unary(lambda g, x, out: g * out * (1 - out)),
    "relu": _unary(lambda g, x, out: core.where(out > 0, g, g * 0)),
    "silu": _unary(lambda g, x, out: g * core.sigmoid(x) * (1 + x * (1 - core.sigmoid(x)))),
    "erf": _unary(lambda g, x, out: g * (2.0 / math.sqrt(math.pi)) * core.exp(-x * x)),
    "erfc": _unary(lambda g, x, out: g * (-2.0 / math.sqrt(math.pi)) * core.exp(-x * x)),
    "floor": _unary(_zero),
    "ceil": _unary(_zero),
    "trunc": _unary(_zero),
    "round": _unary(_zero),
    "frac": _unary(lambda g, x, out: g),
    "gelu": _gelu,
    "softplus": _softplus,
    "nan_to_num": _nan_to_num,
}


# Operators whose outputs never carry gradients (PyTorch's "not differentiable"
# entries): their Autograd slot is a fallthrough, so they skip autograd entirely.
NOT_DIFFERENTIABLE = frozenset(
    {
        "empty_like",
        "zeros_like",
        "ones_like",
        "full_like",
        "rand_like",
        "randn_like",
    }
)

"""Rows of the elementwise operators (binary, ternary, unary), with their derivatives.

Imports: ``tensor._dtype`` and this package's ``_grad`` and ``_row``.  Each section
holds its formulas first and its rows below them (Note [One row per operator] in
``tensor.optable``).  The backends map these rows to kernels by name (their
``elementwise`` and ``ternary`` tables).
"""

from __future__ import annotations

import cmath
import math
from collections.abc import Callable
from typing import Any

from .._dtype import dtype
from . import _grad
from ._row import (
    ALL,
    COMPLEXES,
    FLOATS,
    INEXACT,
    INPLACE_FUNCTION,
    INT_BOOL,
    INTS,
    NO_BOOL,
    REAL,
    REAL_NO_BOOL,
    InPlace,
    NoFormula,
    OpInfo,
    Rule,
    bool_to_int64,
    same,
    to_bool,
    to_float,
    to_real,
)

__all__ = ["ROWS", "maximum_grad", "minimum_grad"]

core = _grad.core
saves = _grad.saves
holomorphic = _grad.holomorphic
_t = _grad.grad_for
_is_tensor = _grad.is_tensor


def _unary(
    name: str, dtypes: frozenset[dtype] = ALL, rule: Rule = to_float, **kw: object
) -> OpInfo:
    return OpInfo(name, (f"{name}(Tensor self) -> Tensor",), "unary", dtypes, rule, **kw)  # type: ignore[arg-type]


def _binary(
    name: str,
    dtypes: frozenset[dtype] = ALL,
    rule: Rule = same,
    *,
    scalar: bool = True,
    extra: str = "",
    **kw: object,
) -> OpInfo:
    schemas = [f"{name}.Tensor(Tensor self, Tensor other{extra}) -> Tensor"]
    if scalar:
        schemas.append(f"{name}.Scalar(Tensor self, Scalar other{extra}) -> Tensor")
    return OpInfo(name, tuple(schemas), "binary", dtypes, rule, **kw)  # type: ignore[arg-type]


def _tensor_only(name: str, dtypes: frozenset[dtype], rule: Rule = same, **kw: object) -> OpInfo:
    return OpInfo(
        name,
        (f"{name}(Tensor self, Tensor other) -> Tensor",),
        "binary",
        dtypes,
        rule,
        **kw,  # type: ignore[arg-type]
    )


_ALPHA = ", *, Scalar alpha=1"


# -- binary arithmetic -------------------------------------------------------------------------
@saves()
@holomorphic
def _add(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    alpha = a.get("alpha", 1)
    return _t(g, a["self"]), _t(g if alpha == 1 else g * alpha, a["other"])


@saves()
@holomorphic
def _sub(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    alpha = a.get("alpha", 1)
    return _t(g, a["self"]), _t(-g if alpha == 1 else g * -alpha, a["other"])


@saves()
@holomorphic
def _rsub(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    alpha = a.get("alpha", 1)
    return _t(-g if alpha == 1 else g * -alpha, a["self"]), _t(g, a["other"])


@saves("self:other", "other:self")
@holomorphic
def _mul(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    return _t(g * y, x), _t(g * x, y) if _is_tensor(y) else None


@saves("self:other", "other")
@holomorphic
def _div(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    if a.get("rounding_mode") is not None:  # floor/trunc division: zero almost everywhere
        return _t(g * 0, x), _t(g * 0, y) if _is_tensor(y) else None
    gx = g / y
    return _t(gx, x), _t(-gx * x / y, y) if _is_tensor(y) else None


@saves("self", "other")
def _remainder(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    gy = _t(-g * core.floor(x / y), y) if _is_tensor(y) else None
    return (_t(g, x), gy) if _is_tensor(x) else (gy,)


@saves("self", "other")
def _fmod(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    gy = _t(-g * core.trunc(x / y), y) if _is_tensor(y) else None
    return _t(g, x), gy


@saves("self", "exponent", "result")
@holomorphic
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
        # PyTorch compares the exponent's real part for complex exponents
        y_re = core.real(y) if y.dtype.is_complex else y
        if _is_tensor(x):
            gy = core.where(core.logical_and(x == 0, y_re >= 0), 0.0, g * out * core.log(x))
        elif x == 0:
            gy = core.where(y_re >= 0, 0.0, g * out * float("-inf"))
        elif isinstance(x, complex):
            gy = g * out * cmath.log(x)
        else:
            gy = g * out * math.log(x) if x > 0 else g * float("nan")
        grads.append(_t(gy, y))
    return tuple(grads)


@saves("self", "other")
def maximum_grad(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    """``maximum``'s formula, ``max.other``'s too (``reduction``)."""
    x, y = a["self"], a["other"]
    # Ties split the gradient evenly, as PyTorch does.
    gt, eq = core.gt(x, y), core.eq(x, y)
    half = g * 0.5
    gx = core.where(gt, g, core.where(eq, half, g * 0))
    gy = core.where(gt, g * 0, core.where(eq, half, g))
    return _t(gx, x), _t(gy, y)


@saves("self", "other")
def minimum_grad(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    """``minimum``'s formula, ``min.other``'s too (``reduction``)."""
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


@saves("self", "other", "result")
@holomorphic
def _logaddexp(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    return _t(g * core.exp(x - out), x), _t(g * core.exp(y - out), y)


@saves("self", "other", "result")
def _logaddexp2(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    return _t(g * core.exp2(x - out), x), _t(g * core.exp2(y - out), y)


@saves("self", "result")
def _copysign(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    # PyTorch's copysign_tensor_self_backward: the sign flip, 0 where self is 0; the sign
    # source gets no gradient.
    x = a["self"]
    flip = core.where(core.eq.Scalar(x, 0), x * 0, core.sign(x) * core.sign(out))
    return _t(g * flip, x), None


_ARITHMETIC: tuple[OpInfo, ...] = (
    _binary(
        "add", extra=_ALPHA, dunders=("__add__",), rdunders=("__radd__",),
        grad=_add, inplace=InPlace(("__iadd__",)),
    ),
    _binary(
        "sub", NO_BOOL, extra=_ALPHA, dunders=("__sub__",),
        grad=_sub, inplace=InPlace(("__isub__",)),
    ),
    _binary(
        "rsub", NO_BOOL, extra=_ALPHA, function=None, method=False, rdunders=("__rsub__",),
        grad=_rsub,
    ),
    _binary(
        "mul", dunders=("__mul__",), rdunders=("__rmul__",),
        grad=_mul, inplace=InPlace(("__imul__",)),
    ),
    _binary(
        "div", rule=to_float, extra=", *, str? rounding_mode=None",
        dunders=("__truediv__",), rdunders=("__rtruediv__",),
        grad=_div, inplace=InPlace(("__itruediv__",)),
    ),
    _binary(
        "floor_divide", REAL_NO_BOOL, dunders=("__floordiv__",), rdunders=("__rfloordiv__",),
        grad=NoFormula("PyTorch has no formula either (its autograd fallback)"),
        inplace=InPlace(("__ifloordiv__",)),
    ),
    OpInfo(
        "remainder",
        (
            "remainder.Tensor(Tensor self, Tensor other) -> Tensor",
            "remainder.Scalar(Tensor self, Scalar other) -> Tensor",
            "remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor",
        ),
        "binary", REAL_NO_BOOL, dunders=("__mod__",), rdunders=("__rmod__",),
        grad=_remainder, inplace=InPlace(("__imod__",)),
    ),
    _binary("fmod", REAL_NO_BOOL, grad=_fmod, inplace=InPlace()),
    OpInfo(
        "pow",
        (
            "pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
            "pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
            "pow.Scalar(Scalar self, Tensor exponent) -> Tensor",
        ),
        "binary", NO_BOOL, dunders=("__pow__",), rdunders=("__rpow__",),
        grad=_pow, autocast={"cuda": "fp32"}, inplace=InPlace(("__ipow__",)),
    ),
    _tensor_only("maximum", REAL, grad=maximum_grad),
    _tensor_only("minimum", REAL, grad=minimum_grad),
    _tensor_only(
        "atan2", REAL, to_float, grad=_atan2, autocast={"cuda": "promote"}, inplace=InPlace()
    ),
    _tensor_only("hypot", FLOATS, grad=_hypot, inplace=InPlace()),
    _tensor_only("logaddexp", INEXACT, grad=_logaddexp),
    _tensor_only("logaddexp2", FLOATS, grad=_logaddexp2),
    _binary("copysign", REAL, to_float, grad=_copysign, inplace=InPlace()),
    _tensor_only("nextafter", FLOATS, grad=NoFormula("PyTorch has no derivative for nextafter")),
)  # fmt: skip


# -- comparisons, logical and bitwise operators: not differentiable ---------------------------
@saves()
def _comparison_inplace(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    """In-place comparisons write 0/1 into a float self: PyTorch gives self a zero gradient."""
    return (core.zeros_like(g),)


_COMPARISON_INPLACE = InPlace(grad=_comparison_inplace)

_LOGICAL: tuple[OpInfo, ...] = (
    _binary("eq", rule=to_bool, dunders=("__eq__",), grad=False, inplace=_COMPARISON_INPLACE),
    _binary("ne", rule=to_bool, dunders=("__ne__",), grad=False, inplace=_COMPARISON_INPLACE),
    _binary("lt", REAL, to_bool, dunders=("__lt__",), grad=False, inplace=_COMPARISON_INPLACE),
    _binary("le", REAL, to_bool, dunders=("__le__",), grad=False, inplace=_COMPARISON_INPLACE),
    _binary("gt", REAL, to_bool, dunders=("__gt__",), grad=False, inplace=_COMPARISON_INPLACE),
    _binary("ge", REAL, to_bool, dunders=("__ge__",), grad=False, inplace=_COMPARISON_INPLACE),
    _tensor_only("logical_and", ALL, to_bool, grad=False, inplace=InPlace()),
    _tensor_only("logical_or", ALL, to_bool, grad=False, inplace=InPlace()),
    _tensor_only("logical_xor", ALL, to_bool, grad=False, inplace=InPlace()),
    _binary(
        "bitwise_and", INT_BOOL, dunders=("__and__",), rdunders=("__rand__",),
        grad=False, inplace=InPlace(("__iand__",)),
    ),
    _binary(
        "bitwise_or", INT_BOOL, dunders=("__or__",), rdunders=("__ror__",),
        grad=False, inplace=InPlace(("__ior__",)),
    ),
    _binary(
        "bitwise_xor", INT_BOOL, dunders=("__xor__",), rdunders=("__rxor__",),
        grad=False, inplace=InPlace(("__ixor__",)),
    ),
    OpInfo(
        "bitwise_left_shift",
        (
            "bitwise_left_shift.Tensor(Tensor self, Tensor other) -> Tensor",
            "bitwise_left_shift.Tensor_Scalar(Tensor self, Scalar other) -> Tensor",
        ),
        "binary", INTS, dunders=("__lshift__",), grad=False, inplace=InPlace(("__ilshift__",)),
    ),
    OpInfo(
        "bitwise_right_shift",
        (
            "bitwise_right_shift.Tensor(Tensor self, Tensor other) -> Tensor",
            "bitwise_right_shift.Tensor_Scalar(Tensor self, Scalar other) -> Tensor",
        ),
        "binary", INTS, dunders=("__rshift__",), grad=False, inplace=InPlace(("__irshift__",)),
    ),
    OpInfo(
        "isclose",
        (
            "isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, "
            "bool equal_nan=False) -> Tensor",
        ),
        "binary", ALL, to_bool, grad=False, out=False,
    ),
)  # fmt: skip


# -- ternary ------------------------------------------------------------------------------------
@saves("condition")
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
@holomorphic
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


@saves("self")
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


@saves("tensor1:tensor2", "tensor2:tensor1")
@holomorphic
def _addcmul(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    t1, t2, value = a["tensor1"], a["tensor2"], a.get("value", 1)
    gv = g if value == 1 else g * value
    return _t(g, a["self"]), _t(gv * t2, t1), _t(gv * t1, t2)


@saves("tensor1:tensor2", "tensor2")
@holomorphic
def _addcdiv(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    t1, t2, value = a["tensor1"], a["tensor2"], a.get("value", 1)
    gv = g if value == 1 else g * value
    return _t(g, a["self"]), _t(gv / t2, t1), _t(-gv * t1 / (t2 * t2), t2)


_TERNARY: tuple[OpInfo, ...] = (
    OpInfo(
        "where",
        (
            "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
            "where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor",
            "where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor",
            "where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor",
        ),
        "ternary", ALL, py="where", out=True,
        grad={"self": _where, "ScalarOther": _where, "ScalarSelf": _where, "Scalar": False},
    ),
    OpInfo(
        "lerp",
        (
            "lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor",
            "lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor",
        ),
        "ternary", INEXACT, grad=_lerp, inplace=InPlace(),
    ),
    OpInfo(
        "clamp",
        (
            "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
            "clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
        ),
        "ternary", REAL_NO_BOOL,
        grad={"default": _clamp, "Tensor": _clamp_tensor}, inplace=INPLACE_FUNCTION,
    ),
    OpInfo(
        "addcmul",
        ("addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",),
        "ternary", NO_BOOL, grad=_addcmul, autocast={"cuda": "promote"}, inplace=InPlace(),
    ),
    OpInfo(
        "addcdiv",
        ("addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",),
        # Integer results are refused before (PyTorch: "Integer division with addcdiv ...").
        "ternary", INEXACT, grad=_addcdiv, autocast={"cuda": "promote"}, inplace=InPlace(),
    ),
)  # fmt: skip


# -- unary --------------------------------------------------------------------------------------
def _unary_grad(
    d: Callable[[Any, Any, Any], Any],
    saved: tuple[str, ...] = ("self",),
    *,
    complex_rule: bool = True,
) -> Any:
    """A one-argument formula: ``d(grad, x, out)`` gives the input's gradient; ``saved``
    says whether it reads ``x`` ("self"), ``out`` ("result") or neither.  ``d`` is written
    as for real numbers, ``grad * f'(x)``: complex gradients get PyTorch's
    ``grad * conj(f'(x))`` (Note [Complex gradients]) unless ``complex_rule=False`` (the
    non-holomorphic abs, real, imag, conj, whose ``d`` says what it does)."""

    def formula(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
        return (d(g, a["self"], out),)

    return saves(*saved)(holomorphic(formula) if complex_rule else formula)


def _abs(g: Any, x: Any, out: Any) -> Any:
    """PyTorch's ``grad * self.sgn()``: sgn(z) = z / |z| (0 at 0) for complex inputs."""
    return g * _grad.sgn(x)


def _zero(g: Any, x: Any, out: Any) -> Any:
    return g * 0


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_LN2, _LN10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


@saves("self")
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


@saves("self")
def _softplus(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, beta, threshold = a["self"], a.get("beta", 1), a.get("threshold", 20)
    z = core.sigmoid(x * beta)
    return (core.where(x * beta > threshold, g, g * z),)


@saves("self")
def _nan_to_num(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    return (core.where(core.isfinite(x), g, g * 0),)


_UNARY: tuple[OpInfo, ...] = (
    _unary(
        "neg", NO_BOOL, same, dunders=("__neg__",),
        grad=_unary_grad(lambda g, x, out: -g, saved=()), inplace=INPLACE_FUNCTION,
    ),
    _unary(
        "abs", NO_BOOL, to_real, dunders=("__abs__",),
        grad=_unary_grad(_abs, complex_rule=False), inplace=INPLACE_FUNCTION,
    ),
    _unary("sign", REAL, same, grad=_unary_grad(_zero, ()), inplace=InPlace()),
    _unary(
        "exp", grad=_unary_grad(lambda g, x, out: g * out, saved=("result",)),
        autocast={"cuda": "fp32"}, inplace=INPLACE_FUNCTION,
    ),
    _unary(
        "exp2", grad=_unary_grad(lambda g, x, out: g * out * _LN2, saved=("result",)),
        inplace=INPLACE_FUNCTION,
    ),
    _unary(
        "expm1", grad=_unary_grad(lambda g, x, out: g * (out + 1), saved=("result",)),
        autocast={"cuda": "fp32"}, inplace=INPLACE_FUNCTION,
    ),
    _unary(
        "log", grad=_unary_grad(lambda g, x, out: g / x),
        autocast={"cuda": "fp32"}, inplace=INPLACE_FUNCTION,
    ),
    _unary(
        "log2", grad=_unary_grad(lambda g, x, out: g / (x * _LN2)),
        autocast={"cuda": "fp32"}, inplace=INPLACE_FUNCTION,
    ),
    _unary(
        "log10", grad=_unary_grad(lambda g, x, out: g / (x * _LN10)),
        autocast={"cuda": "fp32"}, inplace=INPLACE_FUNCTION,
    ),
    _unary(
        "log1p", grad=_unary_grad(lambda g, x, out: g / (x + 1)),
        autocast={"cuda": "fp32"}, inplace=INPLACE_FUNCTION,
    ),
    _unary(
        "sqrt", grad=_unary_grad(lambda g, x, out: g / (2 * out), saved=("result",)),
        inplace=INPLACE_FUNCTION,
    ),
    _unary(
        "rsqrt", grad=_unary_grad(lambda g, x, out: g * -0.5 * out * out * out, saved=("result",)),
        autocast={"cuda": "fp32"}, inplace=INPLACE_FUNCTION,
    ),
    _unary(
        "square", ALL, bool_to_int64, grad=_unary_grad(lambda g, x, out: g * 2 * x),
        inplace=INPLACE_FUNCTION,
    ),
    _unary(
        "reciprocal", grad=_unary_grad(lambda g, x, out: -g * out * out, saved=("result",)),
        autocast={"cuda": "fp32"}, inplace=INPLACE_FUNCTION,
    ),
    _unary("sin", grad=_unary_grad(lambda g, x, out: g * core.cos(x)), inplace=INPLACE_FUNCTION),
    _unary("cos", grad=_unary_grad(lambda g, x, out: -g * core.sin(x)), inplace=INPLACE_FUNCTION),
    _unary(
        "tan", grad=_unary_grad(lambda g, x, out: g * (1 + out * out), saved=("result",)),
        autocast={"cuda": "fp32"}, inplace=INPLACE_FUNCTION,
    ),
    _unary(
        "asin", grad=_unary_grad(lambda g, x, out: g * core.rsqrt(1 - x * x)),
        autocast={"cuda": "fp32"}, inplace=INPLACE_FUNCTION,
    ),
    _unary(
        "acos", grad=_unary_grad(lambda g, x, out: -g * core.rsqrt(1 - x * x)),
        autocast={"cuda": "fp32"}, inplace=INPLACE_FUNCTION,
    ),
    _unary("atan", grad=_unary_grad(lambda g, x, out: g / (1 + x * x)), inplace=INPLACE_FUNCTION),
    _unary(
        "sinh", grad=_unary_grad(lambda g, x, out: g * core.cosh(x)),
        autocast={"cuda": "fp32"}, inplace=INPLACE_FUNCTION,
    ),
    _unary(
        "cosh", grad=_unary_grad(lambda g, x, out: g * core.sinh(x)),
        autocast={"cuda": "fp32"}, inplace=INPLACE_FUNCTION,
    ),
    _unary(
        "tanh", grad=_unary_grad(lambda g, x, out: g * (1 - out * out), saved=("result",)),
        inplace=INPLACE_FUNCTION,
    ),
    _unary(
        "asinh", grad=_unary_grad(lambda g, x, out: g * core.rsqrt(x * x + 1)),
        inplace=INPLACE_FUNCTION,
    ),
    _unary(
        "acosh", grad=_unary_grad(lambda g, x, out: g * core.rsqrt(x * x - 1)),
        inplace=INPLACE_FUNCTION,
    ),
    _unary("atanh", grad=_unary_grad(lambda g, x, out: g / (1 - x * x)), inplace=INPLACE_FUNCTION),
    _unary(
        "sigmoid", grad=_unary_grad(lambda g, x, out: g * out * (1 - out), saved=("result",)),
        inplace=INPLACE_FUNCTION,
    ),
    _unary(
        "relu", REAL_NO_BOOL, same, out=False, inplace=INPLACE_FUNCTION,
        # PyTorch's threshold_backward, ``out <= 0 ? 0 : g``: zero where the output is at
        # most 0, even for a NaN or infinite incoming gradient; a NaN output passes ``g``.
        grad=_unary_grad(lambda g, x, out: core.where.ScalarSelf(out <= 0, 0, g), saved=("result",)),
    ),
    _unary(
        "erf", REAL, grad=_unary_grad(lambda g, x, out: g * _TWO_OVER_SQRT_PI * core.exp(-x * x)),
        inplace=INPLACE_FUNCTION,
    ),
    _unary(
        "erfc", REAL, grad=_unary_grad(lambda g, x, out: g * -_TWO_OVER_SQRT_PI * core.exp(-x * x)),
        inplace=INPLACE_FUNCTION,
    ),
    _unary("floor", REAL_NO_BOOL, same, grad=_unary_grad(_zero, ()), inplace=INPLACE_FUNCTION),
    _unary("ceil", REAL_NO_BOOL, same, grad=_unary_grad(_zero, ()), inplace=INPLACE_FUNCTION),
    _unary("trunc", REAL_NO_BOOL, same, grad=_unary_grad(_zero, ()), inplace=INPLACE_FUNCTION),
    _unary(
        "frac", FLOATS, same, grad=_unary_grad(lambda g, x, out: g, saved=()),
        inplace=INPLACE_FUNCTION,
    ),
    _unary("logical_not", ALL, to_bool, grad=False, inplace=InPlace()),
    _unary("bitwise_not", INT_BOOL, same, dunders=("__invert__",), grad=False, inplace=InPlace()),
    _unary("isnan", ALL, to_bool, grad=False, out=False),
    _unary("isinf", ALL, to_bool, grad=False, out=False),
    _unary("isfinite", ALL, to_bool, grad=False, out=False),
    _unary("signbit", REAL, to_bool, grad=False),
    # Note [real, imag and conj are copies]: PyTorch returns views (and a lazy conjugate
    # bit); these rows compute new tensors, as the Array API standard's functions do, so a
    # write into the result does not reach the input.
    _unary("real", ALL, to_real, out=False, grad=_unary_grad(lambda g, x, out: g.to(x.dtype), saved=("self",), complex_rule=False)),
    _unary(
        "imag", COMPLEXES, to_real, out=False,
        grad=_unary_grad(
            lambda g, x, out: g.to(x.dtype) * 1j, saved=("self",), complex_rule=False
        ),
    ),
    _unary("conj", ALL, same, out=False, grad=_unary_grad(lambda g, x, out: core.conj(g), saved=(), complex_rule=False)),
    _unary(
        "silu", INEXACT, same, function="nn.functional.silu", method=False,
        grad=_unary_grad(lambda g, x, out: g * core.sigmoid(x) * (1 + x * (1 - core.sigmoid(x)))),
    ),
    OpInfo(
        "round", ("round(Tensor self, *, int decimals=0) -> Tensor",), "unary", REAL_NO_BOOL,
        grad=_unary_grad(_zero, ()), inplace=INPLACE_FUNCTION,
    ),
    OpInfo(
        "gelu", ("gelu(Tensor self, *, str approximate='none') -> Tensor",), "unary", FLOATS,
        function="nn.functional.gelu", method=False, grad=_gelu,
    ),
    OpInfo(
        "softplus", ("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor",),
        "unary", FLOATS, function="nn.functional.softplus", method=False,
        grad=_softplus, autocast={"cuda": "fp32"},
    ),
    OpInfo(
        "nan_to_num",
        ("nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor",),
        "unary", ALL, grad=_nan_to_num, inplace=INPLACE_FUNCTION,
    ),
)  # fmt: skip

ROWS: tuple[OpInfo, ...] = _ARITHMETIC + _LOGICAL + _TERNARY + _UNARY

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
    if a.get("rounding_mode") is not None:  # floor/trunc division: zeros (PyTorch's)
        gy = core.zeros_like(y) if _is_tensor(y) else None
        return _t(core.zeros_like(x), x) if _is_tensor(x) else None, gy
    # PyTorch's ``grad / other`` and ``-grad * ((self / other) / other)``.
    return _t(g / y, x), _t(-g * (x / y / y), y) if _is_tensor(y) else None


@saves("self", "other")
def _remainder(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    # PyTorch's ``-grad * self.div(other, rounding_mode="floor")``: its floor division, not
    # ``floor(self / other)`` (they differ for an infinite self, or a self and an
    # infinite other of opposite signs).
    x, y = a["self"], a["other"]
    if _is_tensor(y):  # remainder.Scalar_Tensor (PyTorch has no derivative): x / y floored
        q = core.div(x, y, rounding_mode="floor") if _is_tensor(x) else core.floor(x / y)
        gy = _t(-g * q, y)
    else:
        gy = None
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
    # PyTorch's pow_backward_self / pow_backward / pow_backward_exponent, in their order of
    # operations: ``grad * (exponent * self ** (exponent - 1))``, zeros for a 0 exponent;
    # ``grad * where(self == 0 and exponent >= 0, 0, result * log(self))``.
    if _is_tensor(x):
        if _is_tensor(y):
            gx = core.where(y == 0, 0.0, g * (y * x ** (y - 1)))
        else:
            gx = core.zeros_like(x) if y == 0 else g * (y * x ** (y - 1))
        grads.append(_t(gx, x))
    if _is_tensor(y):
        # PyTorch compares the exponent's real part for complex exponents
        y_re = core.real(y) if y.dtype.is_complex else y
        if _is_tensor(x):
            gy = g * core.where(core.logical_and(x == 0, y_re >= 0), 0.0, out * core.log(x))
        elif x == 0:
            gy = g * core.where(y_re >= 0, 0.0, out * float("-inf"))
        elif isinstance(x, complex):
            gy = g * (out * cmath.log(x))
        else:
            gy = g * (out * math.log(x)) if x > 0 else g * float("nan")
        grads.append(_t(gy, y))
    return tuple(grads)


def _max_min_grads(g: Any, x: Any, y: Any, lose_x: Any, lose_y: Any) -> tuple[Any, ...]:
    """PyTorch's ``where(self == other, grad / 2, grad).masked_fill_(lose, 0)`` for each
    side: ties split the gradient evenly, the side that loses gets exactly 0 (not ``g * 0``:
    NaN for an inf gradient), and a NaN on either side (no order, no tie) passes ``g`` to
    both."""
    split = core.where(core.eq(x, y), g / 2, g)
    return _t(core.where(lose_x, 0, split), x), _t(core.where(lose_y, 0, split), y)


@saves("self", "other")
def maximum_grad(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    """``maximum``'s formula, ``max.other``'s too (``reduction``)."""
    x, y = a["self"], a["other"]
    return _max_min_grads(g, x, y, core.lt(x, y), core.gt(x, y))


@saves("self", "other")
def minimum_grad(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    """``minimum``'s formula, ``min.other``'s too (``reduction``)."""
    x, y = a["self"], a["other"]
    return _max_min_grads(g, x, y, core.gt(x, y), core.lt(x, y))


@saves("self", "other")
def _atan2(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    # PyTorch's atan2_backward: the reciprocal of ``self**2 + other**2``, 0 where that is
    # 0 (both 0: gradients 0, not NaN), times ``grad * other`` and ``-grad * self``.
    y, x = a["self"], a["other"]
    denom = y * y + x * x
    recip = core.where.ScalarSelf(denom == 0, 0, core.reciprocal(denom))
    return _t(g * x * recip, y), _t(-g * y * recip, x)


@saves("self", "other", "result")
def _hypot(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    return _t(g * x / out, x), _t(g * y / out, y)


@saves("self", "other", "result")
@holomorphic
def _logaddexp(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    # PyTorch's ``grad / (1 + exp(other - self))``: with an infinite input the other
    # gets 0 (or the whole ``g``), where ``exp(x - out)`` is NaN.
    x, y = a["self"], a["other"]
    return _t(g / (core.exp(y - x) + 1), x), _t(g / (core.exp(x - y) + 1), y)


@saves("self", "other", "result")
def _logaddexp2(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    # PyTorch's ``grad / (1 + pow(2, other - self))`` (as logaddexp's).
    x, y = a["self"], a["other"]
    return _t(g / (core.exp2(y - x) + 1), x), _t(g / (core.exp2(x - y) + 1), y)


@saves("self", "other", "result")
def _copysign(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    # PyTorch's copysign_tensor_self_backward: ``grad * (result / self)``, the ratio 0
    # where self is 0 (NaN where self is infinite or NaN); a tensor sign source gets zeros.
    x, y = a["self"], a["other"]
    ratio = core.where.ScalarSelf(core.eq.Scalar(x, 0), 0, out / x)
    return _t(g * ratio, x), core.zeros_like(y) if _is_tensor(y) else None


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
    # PyTorch's ``where(condition, grad, 0)``: exactly 0 where not taken (``g * 0`` would be
    # NaN for an infinite gradient).
    cond, x, y = a["condition"], a["self"], a["other"]
    grads: list[Any] = [None]  # the condition
    if _is_tensor(x):
        grads.append(_t(core.where.ScalarOther(cond, g, 0), x))
    if _is_tensor(y):
        grads.append(_t(core.where.ScalarSelf(cond, 0, g), y))
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
    return (core.where.ScalarOther(_clamp_mask(x, a.get("min"), a.get("max")), g, 0),)


@saves("self", "min", "max")
def _clamp_tensor(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    # PyTorch's clamp_backward and clamp_backward_min_max: exact zeros where not taken;
    # with both bounds, min gets the gradient only where it is below max, and max also
    # where it is below min (max wins there, as in the forward).
    x, lo, hi = a["self"], a.get("min"), a.get("max")
    gx = _t(core.where.ScalarOther(_clamp_mask(x, lo, hi), g, 0), x)
    g_lo = g_hi = None
    if lo is not None:
        below = core.lt(x, lo)
        if hi is not None:
            below = core.logical_and(below, core.lt(lo, hi))
        g_lo = _t(core.where.ScalarOther(below, g, 0), lo)
    if hi is not None:
        above = core.gt(x, hi)
        if lo is not None:
            above = core.logical_or(above, core.lt(hi, lo))
        g_hi = _t(core.where.ScalarOther(above, g, 0), hi)
    return gx, g_lo, g_hi


@saves("tensor1:tensor2", "tensor2:tensor1")
@holomorphic
def _addcmul(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    # PyTorch's ``grad * (tensor2 * value)`` and ``grad * (tensor1 * value)``.
    t1, t2, value = a["tensor1"], a["tensor2"], a.get("value", 1)
    if value == 1 and not isinstance(value, float):
        return _t(g, a["self"]), _t(g * t2, t1), _t(g * t1, t2)
    return _t(g, a["self"]), _t(g * (t2 * value), t1), _t(g * (t1 * value), t2)


@saves("tensor1:tensor2", "tensor2")
@holomorphic
def _addcdiv(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    # PyTorch's ``grad * (value / tensor2)`` and ``-grad * (value * tensor1 / (tensor2 *
    # tensor2))``.
    t1, t2, value = a["tensor1"], a["tensor2"], a.get("value", 1)
    return _t(g, a["self"]), _t(g * (value / t2), t1), _t(-g * (value * t1 / (t2 * t2)), t2)


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
    return core.zeros_like(g)  # PyTorch's zeros (``g * 0`` is NaN for an infinite g)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = math.sqrt(0.5)  # M_SQRT1_2, PyTorch's kAlpha (1 / sqrt(2.0) is an ulp low)
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
        # PyTorch's ``-0.5 * grad * result.pow(3)`` (its pow by 3: ``r * r * r``).
        "rsqrt", grad=_unary_grad(lambda g, x, out: g * -0.5 * (out * out * out), saved=("result",)),
        autocast={"cuda": "fp32"}, inplace=INPLACE_FUNCTION,
    ),
    _unary(
        "square", ALL, bool_to_int64, grad=_unary_grad(lambda g, x, out: g * 2 * x),
        inplace=INPLACE_FUNCTION,
    ),
    _unary(
        "reciprocal", grad=_unary_grad(lambda g, x, out: -g * (out * out), saved=("result",)),
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

"""The standard's elementwise functions, each one call of the operator of its name.

Imports: ``tensor`` and ``._helpers``.  Binary functions take the standard's promotion
(Note [The standard's promotion in the standard namespace] in ``_helpers``); PyTorch's
names that differ from the standard's (``neg``/``negative``, ``ne``/``not_equal``...)
are mapped in ``_UNARY`` and ``_BINARY``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensor as tt
from tensor._tensor import Tensor

from ._helpers import promote

# standard name -> the tensor namespace's operator
_UNARY = {
    "abs": "abs", "acos": "acos", "acosh": "acosh", "asin": "asin", "asinh": "asinh",
    "atan": "atan", "atanh": "atanh", "bitwise_invert": "bitwise_not", "ceil": "ceil",
    "conj": "conj", "cos": "cos", "cosh": "cosh", "exp": "exp", "expm1": "expm1",
    "floor": "floor", "imag": "imag", "isfinite": "isfinite", "isinf": "isinf",
    "isnan": "isnan", "log": "log", "log1p": "log1p", "log2": "log2", "log10": "log10",
    "logical_not": "logical_not", "negative": "neg", "real": "real",
    "reciprocal": "reciprocal", "sign": "sign", "signbit": "signbit", "sin": "sin",
    "sinh": "sinh", "sqrt": "sqrt", "square": "square", "tan": "tan", "tanh": "tanh",
    "trunc": "trunc",
}  # fmt: skip
_BINARY = {
    "add": "add", "atan2": "atan2", "bitwise_and": "bitwise_and",
    "bitwise_left_shift": "bitwise_left_shift", "bitwise_or": "bitwise_or",
    "bitwise_right_shift": "bitwise_right_shift", "bitwise_xor": "bitwise_xor",
    "copysign": "copysign", "divide": "div", "equal": "eq", "floor_divide": "floor_divide",
    "greater": "gt", "greater_equal": "ge", "hypot": "hypot", "less": "lt",
    "less_equal": "le", "logaddexp": "logaddexp", "logical_and": "logical_and",
    "logical_or": "logical_or", "logical_xor": "logical_xor", "maximum": "maximum",
    "minimum": "minimum", "multiply": "mul", "nextafter": "nextafter",
    "not_equal": "ne", "pow": "pow", "remainder": "remainder", "subtract": "sub",
}  # fmt: skip
# Operators whose PyTorch schema takes a tensor in both places (no Scalar overload): a
# Python number is made an array of the other operand's dtype, as the standard says.
_TENSOR_ONLY = {
    "atan2", "hypot", "logaddexp", "logical_and", "logical_or", "logical_xor", "maximum",
    "minimum", "nextafter", "bitwise_left_shift", "bitwise_right_shift",
}  # fmt: skip


def _make_unary(name: str, op: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def fn(x: Tensor, /) -> Tensor:
        return op(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The standard's ``{name}``: ``tensor.{op.__name__}``."
    return fn


def _make_binary(name: str, op: Callable[..., Tensor]) -> Callable[..., Tensor]:
    tensor_only = name in _TENSOR_ONLY

    def fn(x1: Any, x2: Any, /) -> Tensor:
        x1, x2 = promote(x1, x2)
        if not isinstance(x1, Tensor):
            if tensor_only:
                x1 = tt.full((), x1, dtype=x2.dtype, device=x2.device)
            else:
                return _reflected(op, x1, x2)
        elif not isinstance(x2, Tensor) and tensor_only:
            x2 = tt.full((), x2, dtype=x1.dtype, device=x1.device)
        return op(x1, x2)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The standard's ``{name}``: ``tensor.{op.__name__}``."
    return fn


def _reflected(op: Callable[..., Tensor], scalar: Any, x: Tensor) -> Tensor:
    """``op(scalar, x)``: the scalar as a 0-d array of ``x``'s dtype (the standard's rule
    for a Python scalar operand), where it fits; else PyTorch's promotion decides."""
    try:
        s = tt.full((), scalar, dtype=x.dtype, device=x.device)
    except (TypeError, ValueError, OverflowError, RuntimeError):
        s = tt.tensor(scalar, device=x.device)
    return op(s, x)


__all__ = [*_UNARY, *_BINARY, "clip", "positive", "round"]

for _name, _op in _UNARY.items():
    globals()[_name] = _make_unary(_name, getattr(tt, _op))
for _name, _op in _BINARY.items():
    globals()[_name] = _make_binary(_name, getattr(tt, _op))


_pytorch_remainder = globals()["remainder"]


def remainder(x1: Any, x2: Any, /) -> Tensor:  # type: ignore[no-redef]
    """The standard's ``remainder``: ``tensor.remainder``, but a zero result takes the
    divisor's sign, as the standard's special cases (and Python's ``%``) say; PyTorch's
    (the ``%`` operator on tensors) keeps the dividend's."""
    out = _pytorch_remainder(x1, x2)
    if out.dtype.is_floating_point:
        return tt.where(out == 0, tt.copysign(out, x2), out)
    return out


def positive(x: Tensor, /) -> Tensor:
    return +x


def round(x: Tensor, /) -> Tensor:  # noqa: A001
    return tt.round(x)


def clip(x: Tensor, /, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """``tensor.clamp``; bounds given as arrays promote with ``x`` as the standard says
    (the result has ``x``'s dtype)."""
    if min is None and max is None:
        return +x
    if isinstance(min, Tensor):
        min = min.to(x.dtype)  # noqa: A001
    if isinstance(max, Tensor):
        max = max.to(x.dtype)  # noqa: A001
    return tt.clamp(x, min, max)

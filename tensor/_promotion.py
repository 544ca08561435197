"""PyTorch's type promotion: ``promote_types``, ``result_type`` and the rules kernels share.

Imports: ``tensor._dtype`` only (tensors are recognised by their ``_dtype`` slot and
their shape, so this module does not import the Tensor class).

Rules (c10/core/ScalarType.h ``promoteTypes``; ATen/native/TypeProperties.cpp):
- Categories order bool < integer < floating < complex.  Within a category the
  wider type wins; uint8 with int8 gives int16; float16 with bfloat16 gives
  float32; an integer with a float gives the float, whatever their sizes.
- Participants of ``result_type`` are ranked dimensioned tensors > zero-dim
  tensors > Python scalars ("wrapped numbers").  A lower-ranked participant only
  matters when its category is higher than everything above it; then it
  contributes the default type of its category (Python float → default dtype).
"""

from __future__ import annotations

import builtins
from typing import Any

from . import _dtype
from ._dtype import BOOL, COMPLEX, FLOAT, INT, dtype

__all__ = [
    "PYTHON_SCALARS",
    "can_cast",
    "promote_types",
    "result_type",
    "scalar_dtype",
]

PYTHON_SCALARS = (builtins.bool, int, float, complex)

_INT_ORDER = {
    _dtype.uint8: 1, _dtype.int8: 1, _dtype.int16: 2, _dtype.int32: 3, _dtype.int64: 4,
}  # fmt: skip
_FLOAT_ORDER = {_dtype.float16: 1, _dtype.bfloat16: 1, _dtype.float32: 2, _dtype.float64: 3}


def _promote(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    ka, kb = a.category, b.category
    if ka < kb:
        a, b, ka, kb = b, a, kb, ka  # a is now the higher category
    if kb == BOOL:
        return a
    if ka == INT:  # both integers
        if a is _dtype.uint8 or b is _dtype.uint8:
            other = b if a is _dtype.uint8 else a
            return _dtype.int16 if other is _dtype.int8 else other
        return a if _INT_ORDER[a] >= _INT_ORDER[b] else b
    if ka == FLOAT:
        if kb == INT:
            return a
        if _FLOAT_ORDER[a] == _FLOAT_ORDER[b] == 1:  # float16 with bfloat16
            return _dtype.float32
        return a if _FLOAT_ORDER[a] >= _FLOAT_ORDER[b] else b
    # a is complex
    if kb == INT:
        return a
    if kb == FLOAT:
        return _dtype.complex128 if b is _dtype.float64 else a
    return a if a.itemsize >= b.itemsize else b


# Precomputed once: a call does one dict lookup.
_TABLE: dict[tuple[dtype, dtype], dtype] = {
    (a, b): _promote(a, b) for a in _dtype.DTYPES for b in _dtype.DTYPES
}


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both can be converted to, by PyTorch's table.

    >>> import tensor as tt
    >>> tt.promote_types(tt.uint8, tt.int8)
    tensor.int16
    >>> tt.promote_types(tt.int64, tt.float16)
    tensor.float16
    """
    return _TABLE[_dtype.to_dtype(type1, arg="type1"), _dtype.to_dtype(type2, arg="type2")]


def scalar_dtype(value: Any) -> dtype:
    """The dtype a Python scalar takes as a wrapped number (bool, int64, default float/complex)."""
    t = type(value)
    if t is float:
        return _dtype._Defaults.float_dtype
    if t is int:
        return _dtype.int64
    if t is builtins.bool:
        return _dtype.bool
    if t is complex:
        return _dtype._Defaults.complex_dtype
    if isinstance(value, builtins.bool):
        return _dtype.bool
    if isinstance(value, int):
        return _dtype.int64
    if isinstance(value, float):
        return _dtype._Defaults.float_dtype
    if isinstance(value, complex):
        return _dtype._Defaults.complex_dtype
    raise TypeError(f"expected a tensor or a Python number, got {type(value).__name__}")


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    # c10's combine_categories: a lower-ranked group counts only with a higher category.
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.category == COMPLEX:
        return higher
    if lower.category == COMPLEX:
        return higher.to_complex() if higher.category == FLOAT else lower
    if higher.category == FLOAT:
        return higher
    if higher.category == BOOL or lower.category == FLOAT:
        return _TABLE[higher, lower]
    return higher


def result_type(*operands: Any) -> dtype:
    """The dtype PyTorch computes for an elementwise op over these tensors and scalars.

    >>> import tensor as tt
    >>> tt.result_type(tt.tensor([1, 2], dtype=tt.int8), 1000)
    tensor.int8
    >>> tt.result_type(tt.tensor([1, 2]), 2.5)
    tensor.float32
    >>> tt.result_type(tt.tensor([1.0], dtype=tt.float16), tt.tensor(1.0, dtype=tt.float64))
    tensor.float16
    """
    dim = zero = wrapped = None
    for x in operands:
        d = getattr(x, "_dtype", None)
        if d is not None:
            if getattr(x, "_wrapped_number", False):
                d = _wrapped_dtype(d)
                wrapped = d if wrapped is None else _TABLE[wrapped, d]
            elif x._array.ndim:
                dim = d if dim is None else _TABLE[dim, d]
            else:
                zero = d if zero is None else _TABLE[zero, d]
        elif isinstance(x, dtype):
            dim = x if dim is None else _TABLE[dim, x]
        else:
            d = scalar_dtype(x)
            wrapped = d if wrapped is None else _TABLE[wrapped, d]
    out = _combine(dim, _combine(zero, wrapped))
    if out is None:
        raise TypeError("result_type() needs at least one tensor or number")
    return out


def _wrapped_dtype(d: dtype) -> dtype:
    # A wrapped number keeps only its category (c10 update_result_type_state).
    if d.category == FLOAT:
        return _dtype._Defaults.float_dtype
    if d.category == COMPLEX:
        return _dtype._Defaults.complex_dtype
    return d


def can_cast(from_: dtype, to: dtype) -> bool:
    """Whether PyTorch's same-kind casting allows ``from_`` → ``to`` (no category drop).

    >>> import tensor as tt
    >>> tt.can_cast(tt.float64, tt.int32), tt.can_cast(tt.int32, tt.float16)
    (False, True)
    """
    return _dtype.to_dtype(from_, arg="from_").category <= _dtype.to_dtype(to, arg="to").category


# INT is re-exported for callers that test categories.
KINDS = {"bool": BOOL, "int": INT, "float": FLOAT, "complex": COMPLEX}

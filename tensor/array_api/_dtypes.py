"""The standard's data-type functions: ``astype``, ``can_cast``, ``finfo``, ``iinfo``,
``isdtype``, ``result_type``.

Imports: ``tensor`` and ``._helpers``.  ``finfo``/``iinfo`` return the standard's objects
(``dtype`` is the dtype object; ``tensor.finfo`` keeps PyTorch's, whose ``dtype`` is a name).
"""

from __future__ import annotations

import builtins
import functools
from dataclasses import dataclass
from typing import Any

import tensor as tt
from tensor._tensor import Tensor

__all__ = ["astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type"]

_SIGNED = frozenset({tt.int8, tt.int16, tt.int32, tt.int64})
_UNSIGNED = frozenset({tt.uint8})
_REAL_FLOATING = frozenset({tt.float32, tt.float64, tt.float16, tt.bfloat16})
_COMPLEX = frozenset({tt.complex64, tt.complex128})
_KINDS = {
    "bool": frozenset({tt.bool}),
    "signed integer": _SIGNED,
    "unsigned integer": _UNSIGNED,
    "integral": _SIGNED | _UNSIGNED,
    "real floating": _REAL_FLOATING,
    "complex floating": _COMPLEX,
    "numeric": _SIGNED | _UNSIGNED | _REAL_FLOATING | _COMPLEX,
}


def isdtype(dtype: Any, kind: Any) -> builtins.bool:
    if not isinstance(dtype, tt.dtype):
        raise TypeError(f"isdtype: dtype must be a dtype, not {type(dtype).__name__}")
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of {sorted(_KINDS)}")
        return dtype in _KINDS[kind]
    if isinstance(kind, tt.dtype):
        return dtype == kind
    raise TypeError(f"isdtype: kind must be a dtype, a kind name or a tuple, not {kind!r}")


def astype(x: Tensor, dtype: Any, /, *, copy: builtins.bool = True, device: Any = None) -> Tensor:
    if device is not None:
        x = x.to(device)
    if not copy and x.dtype == dtype:
        return x
    out = x.to(dtype)
    return out.clone() if out is x else out


def can_cast(from_: Any, to: Any, /) -> builtins.bool:
    if isinstance(from_, Tensor):
        from_ = from_.dtype
    if from_ == to:
        return True
    promoted = None
    try:
        promoted = tt.promote_types(from_, to)
    except (TypeError, RuntimeError):
        return False
    return promoted == to


def result_type(*arrays_and_dtypes: Any) -> Any:
    """The standard's promotion of arrays, dtypes and Python scalars (scalars are weak:
    they take the arrays' dtype when of the same kind)."""
    dtypes = []
    scalars = []
    for a in arrays_and_dtypes:
        if isinstance(a, Tensor):
            dtypes.append(a.dtype)
        elif isinstance(a, tt.dtype):
            dtypes.append(a)
        elif isinstance(a, (builtins.bool, builtins.int, builtins.float, complex)):
            scalars.append(a)
        else:
            raise TypeError(f"result_type: expected arrays, dtypes or scalars, got {a!r}")
    if not dtypes:
        raise ValueError("result_type: at least one array or dtype is required")
    dt = functools.reduce(tt.promote_types, dtypes)
    for s in scalars:
        dt = tt.result_type(tt.empty(0, dtype=dt, device="meta"), s)
    return dt


@dataclass(frozen=True)
class finfo_object:  # noqa: N801 - the standard's name
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: Any


@dataclass(frozen=True)
class iinfo_object:  # noqa: N801
    bits: int
    max: int
    min: int
    dtype: Any


def _as_dtype(type_: Any, what: str) -> Any:
    if isinstance(type_, Tensor):
        return type_.dtype
    if isinstance(type_, tt.dtype):
        return type_
    raise TypeError(f"{what}: expected a dtype or an array, not {type(type_).__name__}")


def finfo(type: Any, /) -> finfo_object:  # noqa: A002
    dt = _as_dtype(type, "finfo")
    info = tt.finfo(dt)
    return finfo_object(info.bits, info.eps, info.max, info.min, info.smallest_normal, dt.to_real())


def iinfo(type: Any, /) -> iinfo_object:  # noqa: A002
    dt = _as_dtype(type, "iinfo")
    info = tt.iinfo(dt)
    return iinfo_object(info.bits, info.max, info.min, dt)

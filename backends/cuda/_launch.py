"""Launch geometry for our raw kernels: grid sizes and the strided-layout struct.

Imports: NumPy and the standard library (no CuPy: it only describes arrays by their
shape, strides and itemsize, so it is testable without a GPU).

``geometry(shape, arrays)`` returns the ``ad::Geometry`` struct of
``_include/ad_geometry.cuh`` as a NumPy structured scalar (CuPy passes those to
kernels by value): the broadcast shape, each operand's strides in elements (0 along
broadcast dimensions), with size-1 dimensions dropped and neighbouring dimensions
merged where every operand is contiguous across them.  ``None`` when more than
``MAX_DIMS`` dimensions remain (the caller makes its operands contiguous then).
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

__all__ = ["BLOCK", "GEOMETRY", "MAX_DIMS", "collapse", "geometry", "grid"]

MAX_DIMS = 8
MAX_OPERANDS = 3
BLOCK = 256
# Enough blocks to fill any current GPU many times over; grid-stride loops do the rest.
_MAX_BLOCKS = 8192

GEOMETRY = np.dtype(
    [
        ("n", "<i8"),
        ("ndim", "<i4"),
        ("pad", "<i4"),
        ("shape", "<i8", (MAX_DIMS,)),
        ("strides", "<i8", (MAX_OPERANDS, MAX_DIMS)),
    ]
)
_PACK = struct.Struct(f"<qii{MAX_DIMS}q{MAX_OPERANDS * MAX_DIMS}q")
assert _PACK.size == GEOMETRY.itemsize == 272


def grid(n: int, block: int = BLOCK) -> tuple[int]:
    """The 1-D grid of a grid-stride kernel over ``n`` elements."""
    return (max(1, min((n + block - 1) // block, _MAX_BLOCKS)),)


def collapse(shape: tuple[int, ...], strides: list[list[int]]) -> tuple[list[int], list[list[int]]]:
    """Drop size-1 dimensions and merge neighbours that every operand steps through
    contiguously (outer stride == inner stride * inner size)."""
    out_shape: list[int] = []
    out_strides: list[list[int]] = [[] for _ in strides]
    for d, size in enumerate(shape):
        if size == 1:
            continue
        if out_shape and all(
            st[-1] == s[d] * size for st, s in zip(out_strides, strides, strict=True)
        ):
            out_shape[-1] *= size
            for st, s in zip(out_strides, strides, strict=True):
                st[-1] = s[d]
            continue
        out_shape.append(size)
        for st, s in zip(out_strides, strides, strict=True):
            st.append(s[d])
    return out_shape, out_strides


def element_strides(array: Any, shape: tuple[int, ...]) -> list[int]:
    """``array``'s strides in elements, broadcast to ``shape`` (0 where it is broadcast)."""
    pad = len(shape) - array.ndim
    item = array.itemsize
    out = [0] * pad
    for size, stride in zip(array.shape, array.strides, strict=True):
        out.append(0 if size == 1 else stride // item)
    return out


def geometry(shape: tuple[int, ...], arrays: list[Any]) -> Any:
    """The ``ad::Geometry`` of a launch over ``shape`` reading ``arrays`` (at most 3)."""
    n = 1
    for size in shape:
        n *= size
    dims, strides = collapse(shape, [element_strides(a, shape) for a in arrays])
    if len(dims) > MAX_DIMS:
        return None
    flat_strides: list[int] = []
    for k in range(MAX_OPERANDS):
        row = strides[k] if k < len(strides) else []
        flat_strides.extend(row + [0] * (MAX_DIMS - len(row)))
    buf = _PACK.pack(n, len(dims), 0, *dims, *([0] * (MAX_DIMS - len(dims))), *flat_strides)
    return np.frombuffer(buf, GEOMETRY)[0]

"""``MetaArray``: the array of a meta tensor, with a shape, a dtype and a strided layout.

Imports: NumPy (dtypes only) and ``tensor._layout``.

A meta tensor has no data, but it has PyTorch's strides and storage offset, so
views of it (``transpose``, slicing, ``view``, ``expand``, ``diagonal``) have the
layouts they would have on the CPU and ``view`` refuses the same layouts.  The
methods mirror the NumPy ones the shared kernels call (``reshape(copy=False)``,
``transpose``, basic ``__getitem__``, ``astype``, ``copy``), so one kernel serves
NumPy, CuPy and meta arrays.  Strides are in bytes, as NumPy's; ``offset`` counts
elements from the start of the storage, which views share (``_storage``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from . import _layout

__all__ = ["MetaArray"]


class _Flags(NamedTuple):
    c_contiguous: bool
    writeable: bool = True


class MetaArray:
    """The array of a meta tensor: shape, dtype and layout, never data.

    >>> a = MetaArray((2, 3), np.dtype("float32"))
    >>> a.T.shape, a.T.strides, a.T.flags.c_contiguous
    ((3, 2), (4, 12), False)
    """

    __slots__ = ("_storage", "dtype", "ndim", "offset", "shape", "size", "strides")

    def __init__(
        self,
        shape: tuple[int, ...],
        np_dtype: Any,
        strides: tuple[int, ...] | None = None,
        offset: int = 0,
        storage: object | None = None,
    ) -> None:
        self.shape = shape
        self.ndim = len(shape)
        self.dtype = np_dtype
        size = 1
        for n in shape:
            size *= n
        self.size = size
        if strides is None:
            item = np_dtype.itemsize
            strides = tuple(s * item for s in _layout.contiguous_strides(shape))
        self.strides = strides
        self.offset = offset
        self._storage = storage if storage is not None else object()

    # -- views: same storage, another layout --------------------------------------------
    def _elements(self) -> tuple[int, ...]:
        item = self.dtype.itemsize
        return tuple(s // item for s in self.strides)

    def _view(self, shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> MetaArray:
        item = self.dtype.itemsize
        return MetaArray(shape, self.dtype, tuple(s * item for s in strides), offset, self._storage)

    def reshape(self, shape: Any, *, copy: bool | None = None) -> MetaArray:
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        shape = _layout.infer_size("reshape", shape, self.size)
        strides = _layout.view_strides(self.shape, self._elements(), shape)
        if strides is None:
            if copy is False:
                raise ValueError("cannot reshape this layout without copying")
            return MetaArray(shape, self.dtype)
        if copy:
            return MetaArray(shape, self.dtype)
        return self._view(shape, strides, self.offset)

    def transpose(self, *axes: Any) -> MetaArray:
        if len(axes) == 1 and not isinstance(axes[0], int):
            axes = tuple(axes[0])
        if not axes:
            axes = tuple(reversed(range(self.ndim)))
        s = self._elements()
        return self._view(
            tuple(self.shape[a] for a in axes), tuple(s[a] for a in axes), self.offset
        )

    @property
    def T(self) -> MetaArray:  # noqa: N802 - NumPy's name
        return self.transpose()

    def __getitem__(self, key: Any) -> MetaArray:
        shape, strides, offset = _layout.basic_index(self.shape, self._elements(), self.offset, key)
        return self._view(shape, strides, offset)

    def __setitem__(self, key: Any, value: Any) -> None:
        """Writes into a meta array change nothing (there is no data)."""

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> MetaArray:
        s = self._elements()
        n1, n2 = self.shape[axis1], self.shape[axis2]
        n = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
        start = self.offset
        if n:
            start += offset * s[axis2] if offset >= 0 else -offset * s[axis1]
        keep = [d for d in range(self.ndim) if d not in (axis1, axis2)]
        return self._view(
            tuple(self.shape[d] for d in keep) + (n,),
            tuple(s[d] for d in keep) + (s[axis1] + s[axis2],),
            start,
        )

    def broadcast_to(self, shape: tuple[int, ...]) -> MetaArray:
        s = self._elements()
        lead = len(shape) - self.ndim
        strides = [0] * lead
        for d, n in enumerate(self.shape):
            strides.append(s[d] if n == shape[lead + d] else 0)
        return self._view(tuple(shape), tuple(strides), self.offset)

    def as_strided(self, shape: tuple[int, ...], strides: tuple[int, ...]) -> MetaArray:
        """A view with element ``strides`` from this array's first element."""
        return self._view(tuple(shape), tuple(strides), self.offset)

    # -- copies -------------------------------------------------------------------------------
    def astype(self, np_dtype: Any, copy: bool = True) -> MetaArray:
        return MetaArray(self.shape, np.dtype(np_dtype))

    def copy(self, order: str = "C") -> MetaArray:
        return MetaArray(self.shape, self.dtype)

    @property
    def flags(self) -> _Flags:
        return _Flags(_layout.is_contiguous(self.shape, self._elements()))

    @property
    def itemsize(self) -> int:
        return int(self.dtype.itemsize)

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"

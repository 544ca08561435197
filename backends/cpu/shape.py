"""CPU kernels of the shape, view, indexing, joining and sorting operators (NumPy arrays).

Imports: NumPy and ``backends.common``.

The kernels are written once in ``backends.common`` (``views``, ``indexing``,
``joining``, ``sorting``); this module gives them NumPy's functions where the
array-API namespace has no spelling for what they need (a view without a copy,
a writeable diagonal view, unbuffered scatter-add).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..common import fastpaths, indexing, joining, searching, sorting, variants, views
from ..common.elementwise import Namespace, namespace_of, rename_all
from ..common.frontend import FrontEnd

__all__ = ["INDEX_FNS", "SEARCH_FNS", "VIEW_FNS", "kernels"]

_as_strided = np.lib.stride_tricks.as_strided
_NP = namespace_of(np.ndarray)


def _reshape(x: np.ndarray, shape: Any, copy: bool | None) -> np.ndarray:
    # The method, not np.reshape (fromnumeric's Python wrapper), and without the copy
    # keyword where it can be left out (parsing it costs ~0.17 us): copy=None is the
    # method's default, and a C-contiguous array reshapes without a copy whatever the
    # shape, so copy=False needs saying only for the others.
    if copy is None or (copy is False and x.flags.c_contiguous):
        return x.reshape(shape)
    return x.reshape(shape, copy=copy)


_ndarray = np.ndarray


def _broadcast_to(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``np.broadcast_to(x, shape)``: a read-only view, as PyTorch refuses writes to
    expanded data.  Note [Expand fast path]: NumPy's is Python (~2.4 us on a [4, 8]
    array); the same view comes from the ndarray constructor over ``x``'s memory with
    stride 0 for the new and the broadcast dims (~0.8 us), where ``x`` exports a buffer
    (C- or F-contiguous, a dtype the buffer protocol names: not bfloat16) and the shape
    broadcasts; its strides are NumPy's (0 for every dim of one), checked against it.  Anything
    else, and every call with the fast paths off, is NumPy's."""
    if type(x) is _ndarray and fastpaths.ENABLED:
        lead = len(shape) - x.ndim
        if lead >= 0:
            strides = [0] * lead
            for have, stride, n in zip(x.shape, x.strides, shape[lead:], strict=True):
                if have == 1:  # stride 0 even where it stays 1, as NumPy's (the copies'
                    strides.append(0)  # layouts follow strides: Note [Copies keep the layout])
                elif have == n:
                    strides.append(stride)
                else:
                    break  # NumPy says what is wrong
            else:
                try:
                    out = _ndarray(shape, x.dtype, x, 0, strides)
                except (ValueError, TypeError, BufferError):
                    pass
                else:
                    out.flags.writeable = False
                    return out
    return np.broadcast_to(x, shape)


VIEW_FNS: dict[str, Any] = {
    "reshape": _reshape,
    # NumPy checks a raw size itself (Note [View fast path] in backends.common.views).
    "reshape_raw": _reshape,
    "broadcast_to": _broadcast_to,
    "diagonal": views.strided_diagonal(_as_strided),
}


# Note [Accumulation at flat indices]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# What the array API lacks: unbuffered accumulation at (repeated) indices, NumPy's
# ``ufunc.at``.  Its loop over a row index into a matrix costs ~0.55 us a row (the
# embedding backward's scatter of 512 gradient rows of 64 into a [1000, 64] weight: 290
# us of PyTorch's whole 88-us forward and backward), where its loop over one-dimensional
# indices into a vector runs at ~2 ns an element.  So a key of integer arrays into a
# C-contiguous array goes through the vector: each indexed position's flat offset (the
# keys times their dims' element strides, summed as they broadcast together, then every
# offset of the trailing dims), the values broadcast to the indexed shape and flattened
# in the same C order.  Each element receives the same contributions in the same order
# as the matrix loop gives them (positions in C order), so the same bits (290 -> 75 us).
# Each key's range is checked on the key itself, before broadcasting (NumPy's
# ``ravel_multi_index`` checks the broadcast positions: twice the time for a grid key
# such as a scatter's or max_pool2d's gradient).  Anything else (slices, masks, negative
# or out-of-range indices, other layouts) takes ``ufunc.at`` as it is, which wraps
# negatives and raises PyTorch's IndexError where it must.
# tests/backends/test_flat_accumulation.py.
def _flat_at(ufunc: Any) -> Any:
    at = ufunc.at

    def flat_at(x: Any, key: Any, values: Any) -> None:
        if (
            fastpaths.ENABLED
            and type(x) is np.ndarray
            and type(key) is tuple
            and 0 < len(key) <= x.ndim
            and x.flags.c_contiguous
            and x.flags.writeable
            and all(type(k) is np.ndarray and k.dtype.kind in "iu" for k in key)
        ):
            offsets = _offsets(key, x.shape)
            if offsets is not None:
                tail = x.shape[len(key) :]
                try:  # values that do not broadcast: ufunc.at says so
                    flat_values = np.broadcast_to(values, offsets.shape + tail).reshape(-1)
                except ValueError:
                    offsets = None
            if offsets is not None:
                if tail:  # int32 offsets where they fit: half the bytes to write and read
                    size = math.prod(tail)
                    kind = np.int32 if x.size < 2**31 else np.int64
                    offsets = offsets.astype(kind)[..., None] * size + np.arange(size, dtype=kind)
                at(x.reshape(-1), offsets.reshape(-1), flat_values)
                return
        at(x, key, values)

    return flat_at


def _offsets(key: tuple[np.ndarray, ...], shape: tuple[int, ...]) -> Any:
    """The flat offsets of the positions ``key`` names in a C-contiguous array of
    ``shape`` (its leading ``len(key)`` dims), broadcast together; None where an index is
    negative or out of range or the keys do not broadcast."""
    offsets: Any = None
    stride = 1
    for k, size in zip(key[::-1], shape[len(key) - 1 :: -1], strict=True):
        if k.size and (k.min() < 0 or k.max() >= size):
            return None
        term = k.astype(np.intp, copy=False)
        if stride != 1:
            term = term * stride
        try:
            offsets = term if offsets is None else offsets + term
        except ValueError:  # keys that do not broadcast together
            return None
        stride *= size
    return offsets


INDEX_FNS: dict[str, Any] = {"add_at": _flat_at(np.add), "multiply_at": _flat_at(np.multiply)}
# np.concatenate's C function itself, past the __array_function__ dispatcher that looks
# for overrides on every input (~0.15 us on ten arrays, ci/bench/ops.py): a tensor's
# array is an ndarray, and the kernels want NumPy's own concatenation.
_concatenate = getattr(np.concatenate, "_implementation", np.concatenate)


def _searchsorted(
    bd: np.ndarray, v: np.ndarray, sorter: np.ndarray | None, right: bool, out_int32: bool
) -> np.ndarray:
    if bd.dtype.kind == "V":  # bfloat16: float32 holds it exactly (and NumPy compares it)
        bd, v = bd.astype(np.float32), v.astype(np.float32)
    # Fast path: np.searchsorted (C, ~4x the vectorised search on 4096 x 100k:
    # ci/bench/search.py) gives PyTorch's positions wherever no boundary is NaN (Note
    # [Searching operators]); NaN values go last in both.  Checked against the general
    # path by tests/backends/test_fastpath_search.py.
    if fastpaths.ENABLED and bd.ndim == 1 and not (bd.dtype.kind == "f" and np.isnan(bd).any()):
        out = np.searchsorted(bd, v, side="right" if right else "left", sorter=sorter)
    else:
        out = searching.bisect(_NP, bd, v, sorter, "right" if right else "left")
    return np.asarray(out, dtype=np.int32 if out_int32 else np.int64)


def _isin(x: np.ndarray, t: np.ndarray, assume_unique: bool, invert: bool) -> np.ndarray:
    if x.dtype.kind == "V":  # bfloat16: np.isin sorts, which ml_dtypes gets wrong at NaN
        x, t = x.astype(np.float32), t.astype(np.float32)
    return np.isin(x, t, assume_unique=assume_unique, invert=invert)


SEARCH_FNS: dict[str, Any] = {"searchsorted": _searchsorted, "isin": _isin}


def kernels(front: FrontEnd) -> dict[str, Any]:
    """Every shape-family CPU kernel, by qualified overload name."""
    ns = Namespace(np.ndarray, __name__, front, asarray=np.asarray)
    out: dict[str, Any] = {}
    out.update(views.kernels(front, VIEW_FNS))
    out.update(variants.mutation_kernels(front, meta=False))
    out.update(indexing.kernels(ns, INDEX_FNS))
    out.update(joining.kernels(ns, {"diag": np.diag, "concat": _concatenate}))
    out.update(sorting.kernels(ns))
    out.update(searching.kernels(ns, SEARCH_FNS))
    return rename_all(out, __name__)

"""CUDA kernels of the reductions and scans: our row kernels (``reduce.cu``).

Imports: CuPy, NumPy, ``tensor``, ``backends.common`` and ``backends.cuda``'s
``_compile``/``_launch``/``_tables``.

``reduce_launcher(name)`` is ``fn(x, axes, keepdim)`` for the shared reduction
factory (``backends.common.reduction``, which owns the argument conventions and
dtype rules): it moves the reduced axes last (a copy when they are not already
last and contiguous: PyTorch reduces strided inputs in place, we pay one pass),
views the operand as [rows, cols] and picks a plan:
- many rows, or short rows: one block per row, one pass (``reduce_rows``);
- a whole contiguous array: ``reduce_flat`` (vector loads, one partial per block)
  then ``reduce_rows`` over the partials;
- few long rows: ``reduce_rows`` over column chunks into partials, then again.
Scans (cumsum, cumprod) use ``scan_rows`` the same way.  The reductions with more
math than one operator (mean, var/std, logsumexp, norms) are composed from these and
elementwise steps; argmax/argmin and count_nonzero are CuPy's reductions; complex
dtypes use CuPy's as well.
"""

from __future__ import annotations

import math
from typing import Any

import cupy
import ml_dtypes
import numpy as np

import tensor

from ..common import reduction as red
from ..common.elementwise import Namespace
from . import _compile, _tables

__all__ = ["REDUCTIONS", "kernels"]

NS = Namespace(cupy.ndarray, __name__, asarray=cupy.asarray)
_function = _compile.function
_ROWS_BLOCK = (256,)
_SCAN_BLOCK = (512,)
_MAX_GRID_X = 65535
_FLAT_BLOCKS = 1024  # partials of a whole-array reduction: ~8 blocks per SM on an H100
_CHUNK = 256 * 32  # columns per block when long rows are split


def _np_dtype(name: str) -> Any:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def _as_rows(x: Any, axes: Any) -> tuple[Any, int, int, list[int], tuple[int, ...]]:
    """``x`` as a C-contiguous [rows, cols] matrix with the reduced axes last; also the
    kept shape and the reduced axes."""
    nd = x.ndim
    reduced = tuple(range(nd)) if axes is None else tuple(sorted(a % nd for a in axes))
    kept = [d for d in range(nd) if d not in reduced]
    kept_shape = [x.shape[d] for d in kept]
    rows = math.prod(kept_shape)
    cols = math.prod(x.shape[d] for d in reduced)
    order = kept + list(reduced)
    if order != list(range(nd)):
        x = cupy.transpose(x, order)
    x = cupy.ascontiguousarray(x).reshape(rows, cols)
    return x, rows, cols, kept_shape, reduced


def _finish_shape(out: Any, kept_shape: list[int], reduced: tuple[int, ...], nd: int,
                  keepdim: bool) -> Any:  # fmt: skip
    if not keepdim:
        return out.reshape(kept_shape)
    shape = [1] * nd
    it = iter(kept_shape)
    for d in range(nd):
        if d not in reduced:
            shape[d] = next(it)
    return out.reshape(shape)


_CUPY_REDUCTIONS = {
    "sum": cupy.sum, "mean": cupy.sum, "prod": cupy.prod, "amax": cupy.max, "amin": cupy.min,
    "max": cupy.max, "min": cupy.min, "all": cupy.all, "any": cupy.any,
}  # fmt: skip


def reduce_launcher(name: str) -> Any:
    """``fn(x, axes, keepdim)`` running reduction ``name``'s row kernels (CuPy's reduction
    for dtypes without one: complex, and half precision where the shared code does not
    widen it first)."""
    fallback = _CUPY_REDUCTIONS[name]
    table: dict[Any, tuple[dict[str, str], Any, Any]] = {}
    for dt in _tables.reduction_dtypes(name):
        _, acc, out = _tables.reduction_types(name, dt)
        table[_np_dtype(dt)] = (
            _tables.reduction_expressions(name, dt),
            _np_dtype(acc),
            _np_dtype(out),
        )

    def run(x: Any, axes: Any, keepdim: bool) -> Any:
        entry = table.get(x.dtype)
        if entry is None:
            return fallback(x, axis=axes, keepdims=keepdim)
        exprs, acc, odt = entry
        if axes is None and not keepdim and x._c_contiguous:
            # The whole of a contiguous array (x.sum()): one row, no reshapes.
            out = cupy.empty((), odt)
            _reduce(x, out, 1, x.size, exprs, acc)
            return out
        nd = x.ndim
        m, rows, cols, kept_shape, reduced = _as_rows(x, axes)
        out = cupy.empty(rows, odt)
        if rows:
            _reduce(m, out, rows, cols, exprs, acc)
        return _finish_shape(out, kept_shape, reduced, nd, keepdim)

    return run


def _reduce(m: Any, out: Any, rows: int, cols: int, exprs: dict[str, str], acc: Any) -> None:
    i64 = np.int64
    if rows == 1 and cols >= 1 << 16 and m.itemsize <= 4 and m.data.ptr % (4 * m.itemsize) == 0:
        blocks = min(_FLAT_BLOCKS, (cols + 1023) // 1024)
        partial = cupy.empty(blocks, acc)
        _function("reduce.cu", exprs["flat"])((blocks,), _ROWS_BLOCK, (m, partial, i64(cols)))
        _function("reduce.cu", exprs["finish"])(
            (1, 1), _ROWS_BLOCK, (partial, out, i64(1), i64(blocks), i64(blocks))
        )
        return
    grid_x = min(rows, _MAX_GRID_X)
    if rows >= 256 or cols <= 2 * _CHUNK:
        _function("reduce.cu", exprs["rows"])(
            (grid_x, 1), _ROWS_BLOCK, (m, out, i64(rows), i64(cols), i64(cols))
        )
        return
    chunks = min((cols + _CHUNK - 1) // _CHUNK, 1024)
    chunk = (cols + chunks - 1) // chunks
    partial = cupy.empty(rows * chunks, acc)
    _function("reduce.cu", exprs["partial"])(
        (grid_x, chunks), _ROWS_BLOCK, (m, partial, i64(rows), i64(cols), i64(chunk))
    )
    _function("reduce.cu", exprs["finish"])(
        (grid_x, 1), _ROWS_BLOCK, (partial, out, i64(rows), i64(chunks), i64(chunks))
    )


def scan_launcher(name: str) -> Any:
    """``fn(x, axis)`` running scan ``name`` along ``axis``."""
    table = {}
    for dt in _tables.reduction_dtypes(name):
        table[_np_dtype(dt)] = _tables.reduction_expressions(name, dt)["scan"]

    def run(x: Any, axis: int) -> Any:
        expr = table.get(x.dtype)
        if expr is None:
            return (cupy.cumsum if name == "cumsum" else cupy.cumprod)(x, axis=axis)
        if x.ndim == 0:
            return x.copy()
        moved = cupy.ascontiguousarray(cupy.moveaxis(x, axis, -1))
        cols = moved.shape[-1]
        rows = moved.size // cols if cols else 0
        out = cupy.empty(moved.shape, x.dtype)
        if rows and cols:
            _function("reduce.cu", expr)(
                (min(rows, _MAX_GRID_X),), _SCAN_BLOCK, (moved, out, np.int64(rows), np.int64(cols))
            )
        return cupy.moveaxis(out, -1, axis)

    return run


# -- composed reductions ----------------------------------------------------------------------
_SUM = reduce_launcher("sum")
_MAX = reduce_launcher("amax")


def _count(x: Any, axes: Any) -> int:
    if axes is None:
        return int(x.size)
    return math.prod(x.shape[a] for a in axes)


_sum = _SUM
row_max, row_sum = _MAX, _SUM  # for backends.cuda.nn
row_min = reduce_launcher("amin")


def _mean(x: Any, axes: Any, keepdim: bool) -> Any:
    return cupy.true_divide(_sum(x, axes, keepdim), _count(x, axes))


def _var(x: Any, axes: Any, keepdim: bool, correction: Any) -> Any:
    # Two passes (the mean, then squared deviations): as accurate as Welford here.
    n = _count(x, axes)
    d = x - cupy.true_divide(_sum(x, axes, True), n)
    sq = (d.real * d.real + d.imag * d.imag) if d.dtype.kind == "c" else d * d
    return cupy.true_divide(_sum(sq, axes, keepdim), max(n - correction, 0))


def _logsumexp(x: Any, axes: Any, keepdim: bool) -> Any:
    if x.size == 0:
        return cupy.log(_sum(cupy.exp(x), axes, keepdim))
    m = _MAX(x, axes, True)
    m = cupy.where(cupy.isfinite(m), m, 0)
    out = cupy.log(_sum(cupy.exp(x - m), axes, True)) + m
    return out if keepdim else cupy.squeeze(out, axis=axes)


def _norm(x: Any, axes: Any, keepdim: bool, p: Any) -> Any:
    a = cupy.abs(x)
    if p == 2:
        return cupy.sqrt(_sum(a * a, axes, keepdim))
    if p == 1:
        return _sum(a, axes, keepdim)
    if p == float("inf"):
        return _MAX(a, axes, keepdim) if a.size else _sum(a, axes, keepdim)  # empty: 0s
    if p == float("-inf"):
        return cupy.min(a, axis=axes, keepdims=keepdim)
    if p == 0:
        return _sum((a != 0).astype(a.dtype), axes, keepdim)
    return cupy.power(_sum(cupy.power(a, p), axes, keepdim), 1.0 / p)


def _one(axes: Any) -> Any:
    return None if axes is None else axes[0]


REDUCTIONS: dict[str, tuple[Any, bool]] = {
    "sum": (_sum, True),
    "mean": (_mean, True),
    "prod": (reduce_launcher("prod"), True),
    "amax": (reduce_launcher("amax"), False),
    "amin": (reduce_launcher("amin"), False),
    "argmax": (lambda x, axes, keepdim: cupy.argmax(x, axis=_one(axes), keepdims=keepdim), False),
    "argmin": (lambda x, axes, keepdim: cupy.argmin(x, axis=_one(axes), keepdims=keepdim), False),
    "all": (reduce_launcher("all"), False),
    "any": (reduce_launcher("any"), False),
    "logsumexp": (_logsumexp, True),
    "count_nonzero": (lambda x, axes, keepdim: cupy.count_nonzero(x, axis=axes), False),
    "var": (_var, True),
    "std": (lambda x, axes, keepdim, c: cupy.sqrt(_var(x, axes, keepdim, c)), True),
    "norm": (_norm, True),
    "linalg_vector_norm": (_norm, True),
    "cumsum": (scan_launcher("cumsum"), True),
    "cumprod": (scan_launcher("cumprod"), True),
}
# Whole-tensor sum in one call, for the kernels' fast path (x.sum()).
WHOLE: dict[str, Any] = {"sum": lambda x, axes: _sum(x, None, False)}
EXTREMES: dict[str, tuple[Any, Any]] = {
    "max": (REDUCTIONS["amax"][0], cupy.argmax),
    "min": (REDUCTIONS["amin"][0], cupy.argmin),
}


def kernels() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, (fn, accumulate) in REDUCTIONS.items():
        out[name] = red.reduction(
            tensor.op_info(name), fn, NS, accumulate=accumulate, whole=WHOLE.get(name)
        )
    for name, (whole, index) in EXTREMES.items():
        op = tensor.op_info(name)
        out[name] = red.max_min_all(op, whole, NS)
        out[f"{name}.dim"] = red.max_min_dim(op, index, NS)
    return out

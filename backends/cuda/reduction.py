"""CUDA kernels of the reductions and scans: our row kernels (``reduce.cu``).

Imports: CuPy, NumPy, ``backends.common`` and ``backends.cuda``'s
``_compile``/``_launch``/``_tables``.

``reduce_launcher(op)`` is ``fn(x, axes, keepdim)`` for the shared reduction
factory (``backends.common.reduction``, which owns the argument conventions and
dtype rules): it moves the reduced axes last (a copy when they are not already
last and contiguous: PyTorch reduces strided inputs in place, we pay one pass),
views the operand as [rows, cols] and picks a plan:
- many rows, or short rows: one block per row, one pass (``reduce_rows``);
- a whole contiguous array: ``reduce_flat`` (vector loads, one partial per block)
  then ``reduce_rows`` over the partials;
- few long rows: ``reduce_rows`` over column chunks into partials, then again.
Scans (cumsum, cumprod) use ``scan_rows`` the same way.  The reductions with more
math than one operator (mean, var/std, logsumexp, norms) are the family's default
math, composed from these and elementwise steps; argmax/argmin and count_nonzero are
CuPy's reductions (the default math too); complex dtypes use CuPy's as well.  The
launchers are built from the operators' table rows (which dtypes get our kernels), at
registration.
"""

from __future__ import annotations

import math
from typing import Any

import cupy
import ml_dtypes
import numpy as np

from ..common import reduction as red
from ..common.elementwise import Namespace
from ..common.frontend import FrontEnd
from . import _compile, _tables

__all__ = ["kernels", "reduce_launcher", "scan_launcher"]

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


def reduce_launcher(op: Any) -> Any:
    """``fn(x, axes, keepdim)`` running reduction ``op``'s (its table row) row kernels
    (CuPy's reduction for dtypes without one: complex, and half precision where the
    shared code does not widen it first)."""
    name = op.name
    fallback = _CUPY_REDUCTIONS[name]
    table: dict[Any, tuple[dict[str, str], Any, Any]] = {}
    for dt in _tables.reduction_dtypes(op):
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


def scan_launcher(op: Any) -> Any:
    """``fn(x, axis)`` running scan ``op`` (its table row) along ``axis``."""
    name = op.name
    table = {}
    for dt in _tables.reduction_dtypes(op):
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


def kernels(front: FrontEnd) -> dict[str, Any]:
    """Every reduction and scan CUDA kernel, by qualified overload name: our row kernels
    where the table has them, the family's default math for the rest (mean, var, std,
    logsumexp and the norms composed from the row kernels; argmax, argmin and
    count_nonzero CuPy's): Note [Default reduction math] in backends/common/reduction.py."""
    ns = Namespace(cupy.ndarray, __name__, front, asarray=cupy.asarray)
    op_info = front.op_info
    overrides: dict[str, Any] = {
        name: reduce_launcher(op_info(name))
        for name in ("sum", "prod", "amax", "amin", "all", "any")
    }
    overrides.update({name: scan_launcher(op_info(name)) for name in ("cumsum", "cumprod")})
    sum_ = overrides["sum"]
    # Whole-tensor sum in one call, for the kernels' fast path (x.sum()).
    whole = {"sum": lambda x, axes: sum_(x, None, False)}
    return red.kernels(front, ns, overrides, whole=whole)

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
math than one operator (mean, var/std, logsumexp, norms) are composed from these and
elementwise steps; argmax/argmin and count_nonzero are CuPy's reductions; complex
dtypes use CuPy's as well.  The launchers are built from the operators' table rows
(which dtypes get our kernels), so ``reductions(op_info)`` makes them at registration.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import cupy
import ml_dtypes
import numpy as np

from ..common import reduction as red
from ..common.elementwise import Namespace
from ..common.frontend import FrontEnd
from . import _compile, _tables

__all__ = ["kernels", "reduce_launcher", "reductions", "scan_launcher"]

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


# -- composed reductions ----------------------------------------------------------------------
def _count(x: Any, axes: Any) -> int:
    if axes is None:
        return int(x.size)
    return math.prod(x.shape[a] for a in axes)


def _one(axes: Any) -> Any:
    return None if axes is None else axes[0]


def reductions(op_info: Callable[[str], Any]) -> dict[str, tuple[Any, bool]]:
    """Each reduction's ``(fn, accumulate)`` for the shared factory, by operator name:
    ``fn(x, axes, keepdim, *extra)`` on CuPy arrays (our row kernels for the dtypes of
    the rows ``op_info`` gives; composed from them where the math is more than one
    operator), and whether half precision accumulates in float32."""
    sum_ = reduce_launcher(op_info("sum"))
    max_ = reduce_launcher(op_info("amax"))

    def mean(x: Any, axes: Any, keepdim: bool) -> Any:
        return cupy.true_divide(sum_(x, axes, keepdim), _count(x, axes))

    def var(x: Any, axes: Any, keepdim: bool, correction: Any) -> Any:
        # Two passes (the mean, then squared deviations): as accurate as Welford here.
        n = _count(x, axes)
        d = x - cupy.true_divide(sum_(x, axes, True), n)
        sq = (d.real * d.real + d.imag * d.imag) if d.dtype.kind == "c" else d * d
        return cupy.true_divide(sum_(sq, axes, keepdim), max(n - correction, 0))

    def logsumexp(x: Any, axes: Any, keepdim: bool) -> Any:
        if x.size == 0:
            return cupy.log(sum_(cupy.exp(x), axes, keepdim))
        m = max_(x, axes, True)
        m = cupy.where(cupy.isfinite(m), m, 0)
        out = cupy.log(sum_(cupy.exp(x - m), axes, True)) + m
        return out if keepdim else cupy.squeeze(out, axis=axes)

    def norm(x: Any, axes: Any, keepdim: bool, p: Any) -> Any:
        a = cupy.abs(x)
        if p == 2:
            return cupy.sqrt(sum_(a * a, axes, keepdim))
        if p == 1:
            return sum_(a, axes, keepdim)
        if p == float("inf"):
            return max_(a, axes, keepdim) if a.size else sum_(a, axes, keepdim)  # empty: 0s
        if p == float("-inf"):
            return cupy.min(a, axis=axes, keepdims=keepdim)
        if p == 0:
            return sum_((a != 0).astype(a.dtype), axes, keepdim)
        return cupy.power(sum_(cupy.power(a, p), axes, keepdim), 1.0 / p)

    def argmax(x: Any, axes: Any, keepdim: bool) -> Any:
        return cupy.argmax(x, axis=_one(axes), keepdims=keepdim)

    def argmin(x: Any, axes: Any, keepdim: bool) -> Any:
        return cupy.argmin(x, axis=_one(axes), keepdims=keepdim)

    def count_nonzero(x: Any, axes: Any, keepdim: bool) -> Any:
        return cupy.count_nonzero(x, axis=axes)

    def std(x: Any, axes: Any, keepdim: bool, c: Any) -> Any:
        return cupy.sqrt(var(x, axes, keepdim, c))

    return {
        "sum": (sum_, True),
        "mean": (mean, True),
        "prod": (reduce_launcher(op_info("prod")), True),
        "amax": (reduce_launcher(op_info("amax")), False),
        "amin": (reduce_launcher(op_info("amin")), False),
        "argmax": (argmax, False),
        "argmin": (argmin, False),
        "all": (reduce_launcher(op_info("all")), False),
        "any": (reduce_launcher(op_info("any")), False),
        "logsumexp": (logsumexp, True),
        "count_nonzero": (count_nonzero, False),
        "var": (var, True),
        "std": (std, True),
        "norm": (norm, True),
        "linalg_vector_norm": (norm, True),
        "cumsum": (scan_launcher(op_info("cumsum")), True),
        "cumprod": (scan_launcher(op_info("cumprod")), True),
    }


def kernels(front: FrontEnd) -> dict[str, Any]:
    """Every reduction and scan CUDA kernel, by qualified overload name."""
    ns = Namespace(cupy.ndarray, __name__, front, asarray=cupy.asarray)
    table = reductions(front.op_info)
    sum_ = table["sum"][0]
    # Whole-tensor sum in one call, for the kernels' fast path (x.sum()).
    whole = {"sum": lambda x, axes: sum_(x, None, False)}
    out: dict[str, Any] = {}
    for name, (fn, accumulate) in table.items():
        out[name] = red.reduction(
            front.op_info(name), fn, ns, accumulate=accumulate, whole=whole.get(name)
        )
    # max(self) / min(self) / max.dim / min.dim: (whole-tensor fn, index fn along an axis).
    for name, (whole_fn, index) in (
        ("max", (table["amax"][0], cupy.argmax)),
        ("min", (table["amin"][0], cupy.argmin)),
    ):
        op = front.op_info(name)
        out[name] = red.max_min_all(op, whole_fn, ns)
        out[f"{name}.dim"] = red.max_min_dim(op, index, ns)
    return out

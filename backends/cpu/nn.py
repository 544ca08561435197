"""CPU kernels of the neural-network functions (NumPy arrays).

Imports: NumPy and ``backends.common``.

The kernels are written once in ``backends.common.nn`` and ``backends.common.conv``;
this module gives them NumPy's strided window view and the CPU random engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..common import conv, nn
from ..common.elementwise import Namespace, rename_all
from ..common.frontend import FrontEnd
from .creation import engine

__all__ = ["NN_FNS", "kernels"]


# Row and whole sums of small float matrices through BLAS (a product with a cached ones
# vector): NumPy's axis reductions cost ~1.5 us of iterator setup on a [64, 10] matrix,
# the product ~0.5 us.  Up to _BLAS_SUM terms per sum the product's accumulation error is
# of the pairwise sum's order; longer rows keep add.reduce.
# The product is NumPy's ``dot`` without its ``__array_function__`` dispatcher when the
# matrix is C-contiguous (0.4 against 0.9 us on [2, 3]): the same BLAS call as ``@``,
# equal bit for bit (tests/backends/test_products_dot.py); strided ones keep ``@``.
_BLAS_SUM = 256
_ONES: dict[tuple[Any, int], np.ndarray] = {}
_dot: Any = getattr(np.dot, "_implementation", np.dot)
_BLAS = (np.dtype(np.float32), np.dtype(np.float64))
# ufunc.reduce directly, arguments by position (axis second): .max()/.sum() add a Python
# wrapper per call, and keywords cost ~0.3 us a call to parse (cross_entropy calls three).
_maximum_reduce: Any = np.maximum.reduce
_minimum_reduce: Any = np.minimum.reduce
_add_reduce: Any = np.add.reduce


def _ones(dt: Any, n: int) -> np.ndarray:
    ones = _ONES.get((dt, n))
    if ones is None:
        ones = _ONES[(dt, n)] = np.ones(n, dt)
    return ones


_COLUMNS: dict[tuple[Any, int], np.ndarray] = {}


def _ones_column(dt: Any, n: int) -> np.ndarray:
    ones = _COLUMNS.get((dt, n))
    if ones is None:
        ones = _COLUMNS[(dt, n)] = np.ones((n, 1), dt)
    return ones


def _row_sum(a: np.ndarray) -> np.ndarray:
    if a.ndim == 2 and a.shape[1] <= _BLAS_SUM and a.dtype in _BLAS:
        ones = _ones(a.dtype, a.shape[1])
        if type(a) is np.ndarray and a.flags.c_contiguous:
            return _dot(a, ones)  # type: ignore[no-any-return]
        return a @ ones  # type: ignore[no-any-return]
    return _add_reduce(a, 1)  # type: ignore[no-any-return]


def _total(a: np.ndarray) -> Any:
    if a.ndim == 1 and a.shape[0] <= _BLAS_SUM and a.dtype in _BLAS:
        ones = _ones(a.dtype, a.shape[0])
        if type(a) is np.ndarray and a.flags.c_contiguous:
            return _dot(a, ones)
        return a @ ones
    return _add_reduce(a, None)


def _max_keep(a: np.ndarray, axis: int) -> np.ndarray:
    return _maximum_reduce(a, axis, None, None, True)


def _sum_keep(a: np.ndarray, axis: int) -> np.ndarray:
    """Sums along ``axis``, kept as a dim of 1: a product with a ones column for the rows
    of a small float matrix (as ``_row_sum``), else add.reduce."""
    if axis == 1 and a.ndim == 2 and a.shape[1] <= _BLAS_SUM and a.dtype in _BLAS:
        return a @ _ones_column(a.dtype, a.shape[1])
    return _add_reduce(a, axis, None, None, True)


def mean_keep(a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The mean over ``axes`` kept as dims of 1, as the CPU mean kernel computes it
    (NumPy's sum, then the division by the count): layer_norm's forward and its backward
    lane compute with it what the formula's ``mean`` calls compute (Note [Layer norm's
    statistics kept for the backward] in backends/common/nn.py)."""
    count = 1
    for axis in axes:
        count *= a.shape[axis]
    return _add_reduce(a, axes, None, None, True) / count  # type: ignore[no-any-return]


_F32_F64 = (np.dtype(np.float32), np.dtype(np.float64))
_kept_norm: list[Any] = [None]


def _keep_layer_norm(x: Any, k: int, eps: float, xhat: Any, rstd: Any) -> None:
    """Note [Layer norm's statistics kept for the backward] (backends/common/nn.py)."""
    if type(x) is np.ndarray and x.dtype in _F32_F64 and x.size <= nn._KEPT_NORM_SIZE:
        _kept_norm[0] = (x, k, eps, xhat, rstd)
    else:
        _kept_norm[0] = None


def take_layer_norm(x: Any, k: int, eps: Any) -> Any:
    """``(xhat, rstd)`` kept by the last layer_norm forward when its input was the array
    ``x`` normalized over its last ``k`` dims with ``eps``, emptying the slot; else None."""
    kept = _kept_norm[0]
    if kept is not None and kept[0] is x and kept[1] == k and kept[2] == eps:
        _kept_norm[0] = None
        return kept[3], kept[4]
    return None


NN_FNS: dict[str, Any] = {
    "mean_keep": mean_keep,
    "keep_layer_norm": _keep_layer_norm,
    "engine": engine,
    "row_sum": _row_sum,
    "total": _total,
    "max_keep": _max_keep,
    "sum_keep": _sum_keep,
    "max_all": lambda a: _maximum_reduce(a, None),
    "min_all": lambda a: _minimum_reduce(a, None),
}


def kernels(front: FrontEnd) -> dict[str, Any]:
    """Every nn CPU kernel, by qualified overload name."""
    ns = Namespace(np.ndarray, __name__, front, asarray=np.asarray)
    out: dict[str, Any] = {}
    out.update(nn.kernels(ns, NN_FNS))
    out.update(conv.kernels(ns, {"sliding_window_view": np.lib.stride_tricks.sliding_window_view}))
    return rename_all(out, __name__)

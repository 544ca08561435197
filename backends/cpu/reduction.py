"""CPU kernels of the reductions and scans: one row per operator, NumPy doing the math.

Imports: NumPy and ``backends.common``.

Each row of ``REDUCTIONS`` is ``(fn, accumulate)``: ``fn(x, axes, keepdim, *extra)``
with ``axes`` None (all) or a tuple, and whether half-precision inputs are
accumulated in float32 (PyTorch does, for sums and products).  The argument
conventions and dtype rules are shared (``backends.common.reduction``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..common import reduction as red
from ..common.elementwise import Namespace
from ..common.frontend import FrontEnd

__all__ = ["EXTREMES", "REDUCTIONS", "kernels"]


def _one(axes: tuple[int, ...] | None) -> int | None:
    return None if axes is None else axes[0]


def _sum(x: Any, axes: Any, keepdim: bool) -> Any:
    return np.add.reduce(x, axis=axes, keepdims=keepdim)


def _count(x: Any, axes: Any) -> int:
    if axes is None:
        return int(x.size)
    n = 1
    for a in axes:
        n *= x.shape[a]
    return n


def _mean(x: Any, axes: Any, keepdim: bool) -> Any:
    # Not np.mean: its empty-slice warnings come from NumPy's own module (not filtered).
    return np.true_divide(np.add.reduce(x, axis=axes, keepdims=keepdim), _count(x, axes))


# PyTorch's CPU var/std accumulate single precision in double (its Welford's acc type), so
# a float32 deviation of 1e38 squares without overflowing; std takes the root in double too.
_VAR_ACC = {np.dtype(np.float32): np.float64, np.dtype(np.complex64): np.complex128}


def _var64(x: Any, axes: Any, keepdim: bool, correction: Any) -> Any:
    """var in the accumulation dtype (float64 for float32); the caller casts back."""
    acc = _VAR_ACC.get(x.dtype)
    if acc is not None:
        x = x.astype(acc)
    n = _count(x, axes)
    d = x - np.true_divide(np.add.reduce(x, axis=axes, keepdims=True), n)
    sq = (d.real * d.real + d.imag * d.imag) if d.dtype.kind == "c" else d * d
    # PyTorch clamps the divisor at 0: too few elements give inf or nan, never a sign flip.
    return np.true_divide(np.add.reduce(sq, axis=axes, keepdims=keepdim), max(n - correction, 0))


def _var(x: Any, axes: Any, keepdim: bool, correction: Any) -> Any:
    out = _var64(x, axes, keepdim, correction)
    return out.astype(x.real.dtype, copy=False) if x.dtype in _VAR_ACC else out


def _std(x: Any, axes: Any, keepdim: bool, correction: Any) -> Any:
    out = np.sqrt(_var64(x, axes, keepdim, correction))
    return out.astype(x.real.dtype, copy=False) if x.dtype in _VAR_ACC else out


def _logsumexp(x: Any, axes: Any, keepdim: bool) -> Any:
    if x.size == 0:
        return np.log(np.add.reduce(np.exp(x), axis=axes, keepdims=keepdim))
    m = np.maximum.reduce(x, axis=axes, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    out = np.log(np.add.reduce(np.exp(x - m), axis=axes, keepdims=True)) + m
    return out if keepdim else np.squeeze(out, axis=axes)


def _scan_dtype(x: Any) -> Any:
    """PyTorch's CPU scans of float32 accumulate in float64 (``acc_type``): a running
    product that overflows float32 and then meets a 0 gives 0, not inf * 0 = NaN."""
    return np.float64 if x.dtype == np.float32 else None


def _norm(x: Any, axes: Any, keepdim: bool, p: Any) -> Any:
    a = np.abs(x)
    if p == 2:
        return np.sqrt(np.add.reduce(a * a, axis=axes, keepdims=keepdim))
    if p == 1:
        return np.add.reduce(a, axis=axes, keepdims=keepdim)
    if p == float("inf"):
        return np.maximum.reduce(a, axis=axes, keepdims=keepdim, initial=0)
    if p == float("-inf"):
        return np.minimum.reduce(a, axis=axes, keepdims=keepdim)
    if p == 0:
        return np.add.reduce((a != 0).astype(a.dtype), axis=axes, keepdims=keepdim)
    return np.power(np.add.reduce(np.power(a, p), axis=axes, keepdims=keepdim), 1.0 / p)


REDUCTIONS: dict[str, tuple[Any, bool]] = {
    "sum": (_sum, True),
    "mean": (_mean, True),
    "prod": (lambda x, axes, keepdim: np.multiply.reduce(x, axis=axes, keepdims=keepdim), True),
    "amax": (lambda x, axes, keepdim: np.maximum.reduce(x, axis=axes, keepdims=keepdim), False),
    "amin": (lambda x, axes, keepdim: np.minimum.reduce(x, axis=axes, keepdims=keepdim), False),
    "argmax": (lambda x, axes, keepdim: np.argmax(x, axis=_one(axes), keepdims=keepdim), False),
    "argmin": (lambda x, axes, keepdim: np.argmin(x, axis=_one(axes), keepdims=keepdim), False),
    "all": (lambda x, axes, keepdim: np.all(x, axis=axes, keepdims=keepdim), False),
    "any": (lambda x, axes, keepdim: np.any(x, axis=axes, keepdims=keepdim), False),
    "logsumexp": (_logsumexp, True),
    "count_nonzero": (lambda x, axes, keepdim: np.count_nonzero(x, axis=axes), False),
    "var": (_var, True),
    "std": (_std, True),
    "norm": (_norm, True),
    "linalg_vector_norm": (_norm, True),
    "cumsum": (lambda x, axis: np.cumsum(x, axis=axis, dtype=_scan_dtype(x)), True),
    "cumprod": (lambda x, axis: np.cumprod(x, axis=axis, dtype=_scan_dtype(x)), True),
}
# Note [Tiny sums]
# ``x.sum()`` of a small float32/float64 vector is a hot call (ci/bench/ops.py), and
# NumPy's add.reduce spends ~0.7 us on its iterator setup whatever the size; a BLAS dot
# with a cached column of ones takes ~0.3 us (and gives an array, not a NumPy scalar).
# Up to _TINY_SUM elements the rounding error of the dot's sequential/SIMD accumulation
# is of the same order as the pairwise sum's (both a few ulps of the largest term);
# larger vectors keep add.reduce's pairwise summation.  An all-zero result is returned
# as +0.0, as PyTorch's and add.reduce's sums start from +0 (a dot of [-0.0] gives -0.0).
_TINY_SUM = 256
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_ONES: dict[Any, dict[int, np.ndarray]] = {_F32: {}, _F64: {}}  # dtype -> n -> ones((n, 1))


def _whole_sum(x: Any, axes: Any) -> Any:
    dt = x.dtype
    cache = _ONES.get(dt) if dt is _F32 or dt is _F64 else None
    if cache is not None and x.ndim == 1:
        n = x.shape[0]
        ones = cache.get(n)
        if ones is None and n <= _TINY_SUM:
            ones = cache[n] = np.ones((n, 1), dt)
        if ones is not None:
            out = x.dot(ones)  # shape (1,): an array, not a NumPy scalar to convert back
            out.shape = ()
            if not out:
                out[()] = 0  # +0.0, not the dot's -0.0
            return out
    return np.add.reduce(x, axes)


# Whole-tensor reductions in one call, for the kernels' fast path (x.sum()).
WHOLE: dict[str, Any] = {"sum": _whole_sum}
# Reductions over one axis: the ufunc's reduce itself, called by position (g.sum(0)).
ALONG: dict[str, Any] = {"sum": np.add.reduce}
# max(self) / max.dim / min(self) / min.dim: (whole-tensor fn, index fn along an axis).
# max.other / min.other are maximum / minimum: composites of the front end.
EXTREMES: dict[str, tuple[Any, Any]] = {
    "max": (REDUCTIONS["amax"][0], np.argmax),
    "min": (REDUCTIONS["amin"][0], np.argmin),
}


def kernels(front: FrontEnd) -> dict[str, Any]:
    """Every reduction and scan CPU kernel, by qualified overload name."""
    ns = Namespace(np.ndarray, __name__, front, asarray=np.asarray)
    out: dict[str, Any] = {}
    for name, (fn, accumulate) in REDUCTIONS.items():
        out[name] = red.reduction(
            front.op_info(name),
            fn,
            ns,
            accumulate=accumulate,
            whole=WHOLE.get(name),
            along=ALONG.get(name),
        )
    for name, (whole, index) in EXTREMES.items():
        op = front.op_info(name)
        out[name] = red.max_min_all(op, whole, ns)
        out[f"{name}.dim"] = red.max_min_dim(op, index, ns)
    return out

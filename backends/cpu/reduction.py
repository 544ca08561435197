"""CPU kernels of the reductions and scans: one row per operator, NumPy doing the math.

Imports: NumPy and ``backends.common``.

Each row of ``REDUCTIONS`` is ``fn(x, axes, keepdim, *extra)`` with ``axes`` None
(all) or a tuple: the CPU's overrides of the family's default math.  The argument
conventions, dtype rules, the loop and the default math are shared
(``backends.common.reduction``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..common import reduction as red
from ..common.elementwise import Namespace
from ..common.frontend import FrontEnd

__all__ = ["REDUCTIONS", "kernels"]


def _sum(x: Any, axes: Any, keepdim: bool) -> Any:
    return np.add.reduce(x, axis=axes, keepdims=keepdim)


def _count(x: Any, axes: Any) -> int:
    if axes is None:
        return int(x.size)
    n = 1
    for a in axes:
        n *= x.shape[a]
    return n


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


def _scan_dtype(x: Any) -> Any:
    """PyTorch's CPU scans of float32 accumulate in float64 (``acc_type``): a running
    product that overflows float32 and then meets a 0 gives 0, not inf * 0 = NaN."""
    return np.float64 if x.dtype == np.float32 else None


# The rows whose CPU math is not the default (Note [Default reduction math] in
# backends/common/reduction.py): ufunc reduce is ~1 us faster than np.max's wrapper on a
# tiny tensor; var/std and the scans of float32 accumulate in float64 (PyTorch's CPU
# acc type); mean, logsumexp and the norms are the default, composed from these.
REDUCTIONS: dict[str, Any] = {
    "sum": _sum,
    "prod": lambda x, axes, keepdim: np.multiply.reduce(x, axis=axes, keepdims=keepdim),
    "amax": lambda x, axes, keepdim: np.maximum.reduce(x, axis=axes, keepdims=keepdim),
    "amin": lambda x, axes, keepdim: np.minimum.reduce(x, axis=axes, keepdims=keepdim),
    "var": _var,
    "std": _std,
    # The array's own methods: what the array API's argmax/argmin reach through two
    # Python wrappers (array_api_compat's, fromnumeric's), the same values and types.
    "argmax": lambda x, axes, keepdim: x.argmax(
        None if axes is None else axes[0], None, keepdims=keepdim
    ),
    "argmin": lambda x, axes, keepdim: x.argmin(
        None if axes is None else axes[0], None, keepdims=keepdim
    ),
    "cumsum": lambda x, axis: np.cumsum(x, axis=axis, dtype=_scan_dtype(x)),
    "cumprod": lambda x, axis: np.cumprod(x, axis=axis, dtype=_scan_dtype(x)),
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


def kernels(front: FrontEnd) -> dict[str, Any]:
    """Every reduction and scan CPU kernel, by qualified overload name."""
    ns = Namespace(np.ndarray, __name__, front, asarray=np.asarray)
    return red.kernels(front, ns, REDUCTIONS, whole=WHOLE, along=ALONG)

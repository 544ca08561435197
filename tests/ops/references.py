"""NumPy references of the op database: each computes the expected values in float64.

Imports: NumPy, ml_dtypes.  References receive the samples' NumPy arrays (in their own
dtypes) and widen them (``up``/``upf``) as their operator's semantics need.
"""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np

from .samples import up, upf


# -- references --------------------------------------------------------------------------------------
def np_round(x: np.ndarray, decimals: int = 0) -> np.ndarray:
    return np.round(up(x), decimals)


def erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(upf(x))


def erfc(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erfc, otypes=[np.float64])(upf(x))


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-upf(x)))


def gelu(x: np.ndarray, approximate: str = "none") -> np.ndarray:
    x = up(x)
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def nan_to_num(x: np.ndarray) -> Any:
    if x.dtype.kind in "biu":
        return x
    info = ml_dtypes.finfo(x.real.dtype)
    return np.nan_to_num(up(x), posinf=float(info.max), neginf=float(info.min))


def logaddexp(x: Any, y: Any) -> Any:
    """NumPy's for real inputs; for complex, PyTorch's branch of the log: the operand with
    the larger real part plus log1p(exp(other - it))."""
    x, y = upf(x), upf(y)
    if x.dtype.kind != "c":
        return np.logaddexp(x, y)
    first = x.real >= y.real
    hi, lo = np.where(first, x, y), np.where(first, y, x)
    return hi + np.log1p(np.exp(lo - hi))


def add_alpha2(x: Any, y: Any) -> Any:
    if x.dtype == bool and np.asarray(y).dtype == bool:
        return x | y  # bool results: alpha=2 is True
    return np.add(up(x), 2 * up(y))


def trunc_div(x: Any, y: Any) -> Any:
    return np.trunc(np.true_divide(upf(x), upf(y)))


def var(x: np.ndarray, dim: Any = None, correction: float = 1, keepdim: bool = False) -> Any:
    return np.var(up(x), axis=axis(dim), ddof=correction, keepdims=keepdim)


def axis(dim: Any) -> Any:
    if isinstance(dim, list):
        return tuple(dim)
    return dim


def logsumexp(x: np.ndarray, dim: Any, keepdim: bool = False) -> Any:
    # Shifted by the maximum, as the kernel does: for complex inputs the imaginary part
    # of a logarithm is only defined modulo 2*pi, and this picks the same branch.
    x = upf(x)
    ax = axis(dim)
    with np.errstate(all="ignore"):
        if x.size == 0:
            return np.log(np.sum(np.exp(x), axis=ax, keepdims=keepdim))
        m = np.max(x, axis=ax, keepdims=True)
        m = np.where(np.isfinite(m), m, 0)
        out = np.log(np.sum(np.exp(x - m), axis=ax, keepdims=True)) + m
        return out if keepdim else np.squeeze(out, axis=ax)


def norm(x: np.ndarray, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Any:
    a = np.abs(up(x))
    ax = axis(dim)
    if p in ("fro", 2):
        return np.sqrt(np.sum(a * a, axis=ax, keepdims=keepdim))
    if p == math.inf:
        return np.max(a, axis=ax, keepdims=keepdim, initial=0)
    if p == 1:
        return np.sum(a, axis=ax, keepdims=keepdim)
    return np.sum(a**p, axis=ax, keepdims=keepdim) ** (1 / p)


def max_dim(x: np.ndarray, dim: int, keepdim: bool = False) -> tuple[Any, Any]:
    idx = np.argmax(up(x), axis=dim, keepdims=keepdim)
    return np.max(up(x), axis=dim, keepdims=keepdim), idx


def min_dim(x: np.ndarray, dim: int, keepdim: bool = False) -> tuple[Any, Any]:
    idx = np.argmin(up(x), axis=dim, keepdims=keepdim)
    return np.min(up(x), axis=dim, keepdims=keepdim), idx


def sum(x: np.ndarray, dim: Any = None, keepdim: bool = False) -> Any:
    return np.sum(up(x), axis=axis(dim), keepdims=keepdim)


def pow(x: Any, y: Any) -> Any:
    return np.power(up(x), up(y))


def arange_ref(*args: Any, dtype: Any = None, device: Any = None) -> np.ndarray:
    start, end, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
    if dtype is not None and dtype.category <= 1:  # PyTorch truncates start and step first
        n = len(np.arange(start, end, step))
        return int(start) + np.arange(n) * int(step)
    return np.arange(start, end, step)


def linspace_ref(
    start: Any, end: Any, steps: int, dtype: Any = None, device: Any = None
) -> np.ndarray:
    out = np.linspace(start, end, steps)
    return np.trunc(out) if dtype is not None and dtype.category <= 1 else out

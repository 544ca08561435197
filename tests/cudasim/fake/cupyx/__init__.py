"""``cupyx`` of the cudasim stand-in: ``scatter_add`` and pinned host memory."""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from tests.cudasim import _array


def scatter_add(a: Any, slices: Any, value: Any) -> None:
    """``a[slices] += value`` with repeated indices all applied (atomicAdd on the GPU)."""
    _array.check_no_host("scatter_add", (a, slices, value))
    np.add.at(_array.host_view(a), _array.host_key(slices), _array.host_view(value))


def empty_pinned(shape: Any, dtype: Any = float, order: str = "C") -> np.ndarray:
    """Host memory (pinned on a GPU machine), 0xff bytes until written."""
    out = np.empty(shape, dtype, order=order)
    ctypes.memset(out.ctypes.data, 0xFF, out.nbytes)
    return out


def zeros_pinned(shape: Any, dtype: Any = float, order: str = "C") -> np.ndarray:
    return np.zeros(shape, dtype, order=order)


__all__ = ["empty_pinned", "scatter_add", "zeros_pinned"]

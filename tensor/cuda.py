"""``tt.cuda``: whether CUDA devices can be used, and how many.

Imports: ``backends.cuda`` (which never fails to import, with or without CuPy/GPU).

>>> import tensor as tt
>>> isinstance(tt.cuda.is_available(), bool)
True
"""

from __future__ import annotations

import backends.cuda as _backend

__all__ = ["device_count", "is_available", "synchronize"]


def is_available() -> bool:
    """True when CuPy is installed and at least one CUDA device is visible."""
    return _backend.is_available()


def device_count() -> int:
    """The number of visible CUDA devices (0 without CuPy or a GPU)."""
    return _backend.device_count()


def synchronize(device: int | None = None) -> None:
    """Wait for all work queued on a CUDA device to finish (no-op without CUDA)."""
    _backend.synchronize(device)

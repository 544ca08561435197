"""The CUDA backend (CuPy).  Importing it never fails and never imports CuPy.

Imports: the standard library; CuPy only when ``is_available()`` is first asked,
through ``importlib``, so machines without CuPy or a GPU import this package fine.

Kernels arrive with the CUDA issue; until then ``is_available()`` reports whether
a GPU could be used, and ``register()`` registers nothing.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from typing import Any

__all__ = ["device_count", "is_available", "register", "synchronize"]


class _State:
    lock = threading.Lock()
    probed = False
    cupy: Any = None  # the module, once probed and usable
    count = 0
    reason = "not probed yet"


def _probe() -> None:
    with _State.lock:
        if _State.probed:
            return
        _State.probed = True
        if importlib.util.find_spec("cupy") is None:
            _State.reason = "CuPy is not installed"
            return
        try:
            cupy = importlib.import_module("cupy")
            count = int(cupy.cuda.runtime.getDeviceCount())
        except Exception as e:  # no driver, no device, broken install: all mean "no CUDA"
            _State.reason = f"CuPy could not reach a GPU ({type(e).__name__}: {e})"
            return
        if count <= 0:
            _State.reason = "no CUDA device is visible"
            return
        _State.cupy, _State.count, _State.reason = cupy, count, ""


def is_available() -> bool:
    """True when CuPy is installed and at least one CUDA device is visible."""
    _probe()
    return _State.count > 0


def device_count() -> int:
    """The number of visible CUDA devices (0 without CuPy or a GPU)."""
    _probe()
    return _State.count


def unavailable_reason() -> str:
    """Why CUDA cannot be used ("" when it can), for skip messages."""
    _probe()
    return _State.reason


def synchronize(device: int | None = None) -> None:
    """Wait for the work queued on a device (every device when None); no-op without CUDA."""
    if not is_available():
        return
    cupy = _State.cupy
    if device is None:
        for i in range(_State.count):
            with cupy.cuda.Device(i):
                cupy.cuda.runtime.deviceSynchronize()
    else:
        with cupy.cuda.Device(device):
            cupy.cuda.runtime.deviceSynchronize()


def register() -> None:
    """Register the CUDA kernels (none yet: they come with the CUDA issue)."""

"""``cupy.cuda.runtime`` of the cudasim stand-in."""

from __future__ import annotations

from typing import Any

from tests.cudasim import _device

CUDARuntimeError = _device.CUDARuntimeError
is_hip = False


def getDevice() -> int:  # noqa: N802 - CUDA's names
    return _device.current()


def setDevice(device: int) -> None:  # noqa: N802
    _device.set_current(device)


def getDeviceCount() -> int:  # noqa: N802
    return _device.count()


def deviceSynchronize() -> None:  # noqa: N802
    _device.synchronize_device()


def getDeviceProperties(device: int) -> dict[str, Any]:  # noqa: N802
    return _device.properties(device)


def runtimeGetVersion() -> int:  # noqa: N802
    return 13000


def driverGetVersion() -> int:  # noqa: N802
    return 13000


def memGetInfo() -> tuple[int, int]:  # noqa: N802
    total = 1 << 34
    return total, total

"""``cupy.cuda`` of the cudasim stand-in: devices, streams, events (tests/cudasim/_device.py)."""

from __future__ import annotations

from tests.cudasim import _device, _launch

from . import compiler, device, function, memory, nvrtc, runtime, stream

Device = _device.Device
Stream = _device.Stream
ExternalStream = _device.Stream
Event = _device.Event
get_current_stream = _device.get_current_stream
get_elapsed_time = _device.get_elapsed_time
MemoryPointer = memory.MemoryPointer
Function = _launch.Kernel


def is_available() -> bool:
    return True


__all__ = [
    "Device", "Event", "ExternalStream", "Function", "MemoryPointer", "Stream", "compiler", "device",
    "function", "get_current_stream", "get_elapsed_time", "is_available", "memory", "nvrtc", "runtime",
    "stream",
]  # fmt: skip

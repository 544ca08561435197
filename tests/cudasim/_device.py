"""The fake CuPy's devices, streams and events: the CUDA runtime's bookkeeping, on the host.

Imports: the standard library only.

Devices: ``ARRAYDISPATCH_CUDASIM_DEVICES`` of them (default 1), a current one per thread
as in the CUDA runtime; selecting one that does not exist raises CuPy's
``CUDARuntimeError`` ("invalid device ordinal").

Streams and events: kernels and NumPy-backed operations run when called, so the work of
every stream is done in call order.  The one asynchrony kept is the one a program can
get wrong without noticing: a device-to-host copy into pinned memory with
``blocking=False`` is queued on its stream (from a snapshot of the source taken at
the call) and lands only when the stream, an event recorded after it, or the device is
synchronised, or ``done`` is asked; pinned memory starts as 0xff bytes, so reading it
too early reads NaN or -1.  ``Event.elapsed_time`` is host time between the records.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

__all__ = [
    "CUDARuntimeError",
    "Device",
    "Event",
    "Stream",
    "count",
    "current",
    "enqueue",
    "get_current_stream",
    "get_elapsed_time",
    "set_current",
    "synchronize_device",
]


class CUDARuntimeError(RuntimeError):
    """CuPy's ``cupy.cuda.runtime.CUDARuntimeError`` (a RuntimeError)."""


def count() -> int:
    return int(os.environ.get("ARRAYDISPATCH_CUDASIM_DEVICES", "1"))


_tls = threading.local()


def current() -> int:
    return getattr(_tls, "device", 0)


def set_current(index: int) -> None:
    index = int(index)
    if not 0 <= index < count():
        raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
    _tls.device = index


class Device:
    """``cupy.cuda.Device``: a device index, and a context manager making it current."""

    __module__ = "cupy.cuda"

    def __init__(self, device: Any = None) -> None:
        self.id = current() if device is None else int(device)
        self._previous: list[int] = []

    def __enter__(self) -> Device:
        self._previous.append(current())
        set_current(self.id)
        return self

    def __exit__(self, *exc: object) -> None:
        _tls.device = self._previous.pop()

    def use(self) -> None:
        set_current(self.id)

    def synchronize(self) -> None:
        synchronize_device(self.id)

    @property
    def compute_capability(self) -> str:
        return "90"

    def __int__(self) -> int:
        return self.id

    def __index__(self) -> int:
        return self.id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("cuda", self.id))

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id}>"


def properties(index: int) -> dict[str, Any]:
    if not 0 <= int(index) < count():
        raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
    return {
        "name": b"cudasim (kernels on the CPU)",
        "major": 9,
        "minor": 0,
        "totalGlobalMem": 1 << 34,
        "multiProcessorCount": 132,
        "warpSize": 32,
        "maxThreadsPerBlock": 1024,
        "sharedMemPerBlock": 48 * 1024,
    }


# -- streams and events -----------------------------------------------------------------------
_ids = itertools.count(0x1000, 0x10)
_streams: weakref.WeakSet[Stream] = weakref.WeakSet()
_streams_lock = threading.Lock()


class Stream:
    """``cupy.cuda.Stream``: its queue holds only deferred device-to-host copies."""

    __module__ = "cupy.cuda"
    null: Stream  # the legacy default stream, set below

    def __init__(self, null: bool = False, non_blocking: bool = False, ptr: int | None = None,
                 priority: int | None = None) -> None:  # fmt: skip
        self.ptr = 0 if null else (ptr if ptr is not None else next(_ids))
        self.device_id = current()
        self.priority = int(priority or 0)
        self.non_blocking = non_blocking
        self._queue: list[tuple[int, Callable[[], None]]] = []
        self._seq = 0
        self._lock = threading.Lock()
        with _streams_lock:
            _streams.add(self)

    def _push(self, fn: Callable[[], None]) -> None:
        with self._lock:
            self._seq += 1
            self._queue.append((self._seq, fn))

    def _run_until(self, seq: int | None = None) -> None:
        while True:
            with self._lock:
                if not self._queue or (seq is not None and self._queue[0][0] > seq):
                    return
                _, fn = self._queue.pop(0)
            fn()

    @property
    def done(self) -> bool:
        self._run_until()
        return True

    def synchronize(self) -> None:
        self._run_until()

    def wait_event(self, event: Event) -> None:
        event.synchronize()  # later work here waits for it: run what it marks now

    def record(self, event: Event | None = None) -> Event:
        event = Event() if event is None else event
        event.record(self)
        return event

    def use(self) -> Stream:
        _stack(self.device_id)[:] = [self]
        return self

    def __enter__(self) -> Stream:
        _stack(self.device_id).append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _stack(self.device_id).pop()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and (other.ptr, other.device_id) == (
            self.ptr,
            self.device_id,
        )

    def __hash__(self) -> int:
        return hash((self.ptr, self.device_id))

    def __repr__(self) -> str:
        return f"<Stream {self.ptr:#x} (device {self.device_id})>"


Stream.null = Stream(null=True)


def _stack(device: int) -> list[Stream]:
    stacks = getattr(_tls, "streams", None)
    if stacks is None:
        stacks = _tls.streams = {}
    return stacks.setdefault(device, [])


def get_current_stream(device_id: int | None = None) -> Stream:
    stack = _stack(current() if device_id is None else int(device_id))
    return stack[-1] if stack else Stream.null


def enqueue(stream: Any, fn: Callable[[], None]) -> None:
    """Queue ``fn`` on ``stream`` (the current one when None)."""
    (stream if isinstance(stream, Stream) else get_current_stream())._push(fn)


def synchronize_device(index: int | None = None) -> None:
    index = current() if index is None else index
    with _streams_lock:
        streams = [s for s in _streams if s.device_id == index or s.ptr == 0]
    for s in streams:
        s._run_until()


class Event:
    """``cupy.cuda.Event``: a point in a stream's queue, and the host time it was recorded."""

    __module__ = "cupy.cuda"

    def __init__(self, block: bool = False, disable_timing: bool = False,
                 interprocess: bool = False) -> None:  # fmt: skip
        self.block, self.disable_timing = block, disable_timing
        self._stream: Stream | None = None
        self._seq = 0
        self._time: float | None = None
        self.ptr = next(_ids)

    def record(self, stream: Stream | None = None) -> None:
        self._stream = stream if stream is not None else get_current_stream()
        self._seq = self._stream._seq
        self._time = time.perf_counter()

    @property
    def done(self) -> bool:
        self.synchronize()
        return True

    def synchronize(self) -> None:
        if self._stream is not None:
            self._stream._run_until(self._seq)


def get_elapsed_time(start: Event, end: Event) -> float:
    for e in (start, end):
        if e.disable_timing or e._time is None:
            raise CUDARuntimeError("cudaErrorInvalidResourceHandle: invalid resource handle")
    end.synchronize()
    return (end._time - start._time) * 1000.0  # type: ignore[operator]

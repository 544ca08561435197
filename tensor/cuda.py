"""``tt.cuda``: CUDA devices, streams and events, as ``torch.cuda`` has them.

Imports: ``backends.cuda`` (which never fails to import, with or without CuPy/GPU)
and ``tensor``'s devices, generators and front end; CuPy only once CUDA is initialised.

Everything here initialises CUDA on first use (``backends.cuda.init``, given the
front end ``tensor._frontend.FRONT``) except
``is_available()`` and ``device_count()``, which only probe, so on a machine
without a GPU they answer False and 0 and the rest raise the error saying why.
Kernels launch on CuPy's current stream of the current device: ``tt.cuda.stream(s)``
makes ``s`` current (and its device, as PyTorch's stream context does), so the ops
in the block queue on it.

>>> import tensor as tt
>>> isinstance(tt.cuda.is_available(), bool)
True
"""

from __future__ import annotations

import types
from typing import Any

import backends.cuda as _backend

from . import _random
from ._device import CudaHooks
from ._device import device as _device_type
from ._frontend import FRONT

__all__ = [
    "Event",
    "Stream",
    "StreamContext",
    "current_device",
    "current_stream",
    "default_stream",
    "device",
    "device_count",
    "empty_cache",
    "get_device_capability",
    "get_device_name",
    "is_available",
    "manual_seed",
    "manual_seed_all",
    "memory_allocated",
    "set_device",
    "stream",
    "synchronize",
]


def _init() -> None:
    """Initialise CUDA (once), registering its kernels with this package's front end."""
    _backend.init(FRONT)


# tensor's devices reach CUDA through these (lazy init; no CuPy import before first use).
CudaHooks.init = _init
CudaHooks.current = _backend.current_device_if_initialized
CudaHooks.count = _backend.device_count


def _cupy() -> types.ModuleType:
    _init()
    return _backend.cupy_module()


def _index(d: Any) -> int:
    """A device argument (None, int, "cuda:1", tt.device) as a CUDA device index."""
    if d is None:
        return current_device()
    if isinstance(d, int) and not isinstance(d, bool):
        return d
    dev = d if isinstance(d, _device_type) else _device_type(d)
    if dev.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {dev}")
    return current_device() if dev.index is None else dev.index


def is_available() -> bool:
    """True when CuPy is installed and at least one CUDA device is visible."""
    return _backend.is_available()


def device_count() -> int:
    """The number of visible CUDA devices (0 without CuPy or a GPU)."""
    return _backend.device_count()


def current_device() -> int:
    """The index of the current CUDA device (per thread, as CUDA's runtime keeps it)."""
    _init()
    return _backend.current_device()


def set_device(d: Any) -> None:
    """Make ``d`` the current CUDA device (a negative index does nothing, as PyTorch)."""
    index = _index(d)
    if index >= 0:
        _cupy().cuda.runtime.setDevice(index)


class device:  # noqa: N801 - PyTorch's spelling
    """Context manager: the current CUDA device inside the block (``torch.cuda.device``).

    ``device(None)`` and ``device(-1)`` change nothing.
    """

    def __init__(self, device: Any) -> None:
        self.index = -1 if device is None else _index(device)
        self.prev = -1

    def __enter__(self) -> None:
        if self.index < 0:
            return
        cp = _cupy()
        self.prev = cp.cuda.runtime.getDevice()
        if self.prev != self.index:
            cp.cuda.runtime.setDevice(self.index)

    def __exit__(self, *exc: object) -> None:
        if self.index >= 0 and self.prev != self.index:
            _cupy().cuda.runtime.setDevice(self.prev)


def synchronize(device: Any = None) -> None:
    """Wait until all work queued on a CUDA device (the current one when None) is done."""
    _init()
    _backend.synchronize(_index(device))


def get_device_name(device: Any = None) -> str:
    props = _cupy().cuda.runtime.getDeviceProperties(_index(device))
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def get_device_capability(device: Any = None) -> tuple[int, int]:
    props = _cupy().cuda.runtime.getDeviceProperties(_index(device))
    return int(props["major"]), int(props["minor"])


def memory_allocated(device: Any = None) -> int:
    """Bytes of device memory held by tensors (CuPy's memory pool of that device)."""
    cp = _cupy()
    with cp.cuda.Device(_index(device)):
        return int(cp.get_default_memory_pool().used_bytes())


def empty_cache() -> None:
    """Return the memory pool's unused blocks to the driver (current device)."""
    _cupy().get_default_memory_pool().free_all_blocks()


def manual_seed(seed: int) -> None:
    """Seed the current CUDA device's default generator."""
    _random.default_generator(_device_type("cuda", current_device())).manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    """Seed every CUDA device's default generator (``tt.manual_seed`` does this too)."""
    for i in range(device_count()):
        _random.default_generator(_device_type("cuda", i)).manual_seed(seed)


# -- streams and events -----------------------------------------------------------------------
class Stream:
    """A CUDA stream of one device (``torch.cuda.Stream``), wrapping a CuPy stream.

    Work queued on different streams may run concurrently; order it with
    ``wait_stream``/``wait_event``.
    """

    def __init__(self, device: Any = None, priority: int = 0, *, _stream: Any = None) -> None:
        cp = _cupy()
        self.device_index = _index(device)
        if _stream is None:
            with cp.cuda.Device(self.device_index):
                _stream = cp.cuda.Stream(non_blocking=False, priority=priority or None)
        self._stream = _stream

    @property
    def device(self) -> _device_type:
        return _device_type("cuda", self.device_index)

    @property
    def cuda_stream(self) -> int:
        """The ``cudaStream_t`` handle, as an int."""
        return int(self._stream.ptr)

    @property
    def priority(self) -> int:
        return int(self._stream.priority)

    def query(self) -> bool:
        """True when all work queued on the stream is done."""
        return bool(self._stream.done)

    def synchronize(self) -> None:
        self._stream.synchronize()

    def record_event(self, event: Event | None = None) -> Event:
        event = Event() if event is None else event
        event.record(self)
        return event

    def wait_event(self, event: Event) -> None:
        self._stream.wait_event(event._event)

    def wait_stream(self, other: Stream) -> None:
        """Work queued here after this call waits for the work queued on ``other`` so far."""
        self.wait_event(other.record_event())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream

    def __hash__(self) -> int:
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self) -> str:
        return f"<tt.cuda.Stream device=cuda:{self.device_index} cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A CUDA event (``torch.cuda.Event``): a point in a stream to wait on or time."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False) -> None:
        self._event = _cupy().cuda.Event(block=blocking, disable_timing=not enable_timing)

    def record(self, stream: Stream | None = None) -> None:
        """Record the event on ``stream`` (the current stream when None)."""
        self._event.record(None if stream is None else stream._stream)

    def wait(self, stream: Stream | None = None) -> None:
        (current_stream() if stream is None else stream).wait_event(self)

    def query(self) -> bool:
        return bool(self._event.done)

    def synchronize(self) -> None:
        self._event.synchronize()

    def elapsed_time(self, end: Event) -> float:
        """Milliseconds from this event to ``end`` (both recorded, with enable_timing=True)."""
        return float(_cupy().cuda.get_elapsed_time(self._event, end._event))


def current_stream(device: Any = None) -> Stream:
    """The stream kernels of ``device`` (the current one when None) are queued on now."""
    index = _index(device)
    return Stream(index, _stream=_cupy().cuda.get_current_stream(index))


def default_stream(device: Any = None) -> Stream:
    """The device's default (legacy null) stream."""
    return Stream(_index(device), _stream=_cupy().cuda.Stream.null)


class StreamContext:
    """``with tt.cuda.stream(s):`` kernels inside the block queue on ``s`` (on s's device).

    ``stream(None)`` changes nothing, as in PyTorch.  Contexts nest; each restores the
    previous stream and device on exit, also when the block raises.
    """

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream
        self._device: device | None = None

    def __enter__(self) -> Stream | None:
        s = self.stream
        if s is None:
            return None
        self._device = device(s.device_index)
        self._device.__enter__()
        try:
            s._stream.__enter__()
        except BaseException:
            self._device.__exit__(None, None, None)
            raise
        return s

    def __exit__(self, *exc: object) -> None:
        s = self.stream
        if s is None or self._device is None:
            return
        try:
            s._stream.__exit__(*exc)
        finally:
            self._device.__exit__(None, None, None)


def stream(s: Stream | None) -> StreamContext:
    """Context manager making ``s`` the current stream (see ``StreamContext``)."""
    return StreamContext(s)

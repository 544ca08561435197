"""CUDA runtime glue: moving arrays between host and devices, DLPack, device guards.

Imports: CuPy, NumPy, ``dispatch`` and ``backends.common``.  Loaded only by
``backends.cuda.init()`` after CuPy found a GPU, so it may import CuPy at the top.
What it needs of the front end (the Tensor type, its constructor, devices, the cast
rule) comes from the ``FrontEnd`` given to ``transfer_hooks`` and ``guard``.

Note [Transfers]
Host→device copies are synchronous unless ``non_blocking=True``: then the host data
is first copied into pinned (page-locked) memory and the device copy is queued on
the current stream.  The pinned buffer must outlive the copy, so it is kept, with
an event recorded after the copy, in ``_IN_FLIGHT`` until the event has passed (the
job PyTorch's caching host allocator does).  Device→host copies with
``non_blocking=True`` land in a pinned NumPy array that is valid once the current
stream is synchronised, as in PyTorch.  Copies between two devices are always
finished before returning (both devices' memory pools are stream-ordered on their
own streams; waiting is the simple safe rule).

Note [Device guards]
A CUDA kernel runs on the device of its first CUDA tensor (PyTorch's DeviceGuard):
``guard`` wraps every CUDA kernel so that
- tensors of two devices raise an error naming both (0-d CPU tensors are allowed,
  as in PyTorch, and are copied to the device: a scalar-sized transfer);
- on a machine with several GPUs, the kernel runs with the current CuPy device set
  to the tensors' one.  With one GPU there is nothing to switch and the wrapper
  only scans the arguments.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from typing import Any

import cupy
import cupyx
import numpy as np
from cupy.cuda import runtime

import dispatch

from ..common import errors
from ..common.frontend import FrontEnd

__all__ = [
    "current_device",
    "device_count",
    "from_dlpack",
    "guard",
    "guard_device_kwarg",
    "to_numpy",
    "transfer_hooks",
]

_Device = cupy.cuda.Device
_ndarray = cupy.ndarray


def current_device() -> int:
    """The current CUDA device index (CuPy's, which is the CUDA runtime's, per thread)."""
    return int(runtime.getDevice())


def device_count() -> int:
    return int(runtime.getDeviceCount())


# -- transfers (Note [Transfers]) -------------------------------------------------------------
_IN_FLIGHT: collections.deque[tuple[Any, Any]] = collections.deque()
_IN_FLIGHT_LOCK = threading.Lock()


def _retire() -> None:
    # Drop pinned staging buffers whose copies have finished (oldest first).
    with _IN_FLIGHT_LOCK:
        while _IN_FLIGHT and _IN_FLIGHT[0][0].done:
            _IN_FLIGHT.popleft()


def _keep_until_done(buffer: Any) -> None:
    event = cupy.cuda.Event(disable_timing=True)
    event.record()
    with _IN_FLIGHT_LOCK:
        _IN_FLIGHT.append((event, buffer))


def _pinned_copy(host: np.ndarray) -> np.ndarray:
    pinned = cupyx.empty_pinned(host.shape, host.dtype)
    np.copyto(pinned, host)
    return pinned


def transfer_hooks(
    front: FrontEnd,
) -> tuple[Callable[..., Any], Callable[..., Any], type, Callable[[Any], Any]]:
    """What ``front.set_cuda_hooks`` takes: ``to_device``, ``to_numpy``, CuPy's array
    type and ``from_dlpack``; ``to_device`` casts with the front end's ``cast_array``."""
    cast_array = front.cast_array

    def to_device(
        array: Any,
        index: int,
        np_dtype: Any = None,
        copy: bool = False,
        non_blocking: bool = False,
    ) -> Any:
        """``array`` (NumPy or CuPy) as a CuPy array on device ``index``, cast to
        ``np_dtype``."""
        if isinstance(array, _ndarray):
            source = array.device.id
            with _Device(source):
                out = (
                    array
                    if np_dtype is None or array.dtype == np_dtype
                    else cast_array(array, np_dtype)
                )
                if source == index:
                    return out.copy() if copy and out is array else out
                out = cupy.ascontiguousarray(out)
            with _Device(index):
                moved = cupy.empty(out.shape, out.dtype)
                moved.data.copy_from_device(out.data, out.nbytes)  # peer copy through UVA
                cupy.cuda.get_current_stream().synchronize()
            return moved
        host = np.asarray(array)
        if np_dtype is not None and host.dtype != np_dtype:
            with np.errstate(over="ignore", invalid="ignore"):
                host = cast_array(host, np_dtype)
        with _Device(index):
            if not non_blocking:
                return cupy.asarray(host)
            _retire()
            pinned = _pinned_copy(host)
            out = cupy.empty(host.shape, host.dtype)
            out.set(pinned)  # queued on the current stream: pinned memory makes it asynchronous
            _keep_until_done(pinned)
            return out

    return to_device, to_numpy, _ndarray, from_dlpack


def to_numpy(array: Any, non_blocking: bool = False) -> np.ndarray:
    """A host copy of a CuPy array (a pinned one, valid after synchronising, if non_blocking)."""
    with _Device(array.device.id):
        if not non_blocking:
            return array.get()  # type: ignore[no-any-return]
        out = cupyx.empty_pinned(array.shape, array.dtype)
        array.get(out=out, blocking=False)
        return out  # type: ignore[no-any-return]


def from_dlpack(obj: Any) -> Any:
    """A CuPy array sharing memory with a CUDA DLPack producer (no copy)."""
    return cupy.from_dlpack(obj)


# -- device guards (Note [Device guards]) -----------------------------------------------------
def _argument_names(qualname: str) -> list[str]:
    name, _, overload = qualname.partition(".")
    packet = getattr(dispatch.ops.core, name)
    op = getattr(packet, overload or "default")
    return [a.name for a in op._schema.arguments]


def _mismatch(qualname: str, first: tuple[int, Any], second: tuple[int, Any]) -> RuntimeError:
    try:
        names = _argument_names(qualname)
    except (AttributeError, IndexError):
        names = []

    def label(i: int) -> str:
        return names[i] if i < len(names) else f"#{i}"

    op = qualname.partition(".")[0]
    return errors.device_mismatch(op, (label(first[0]), first[1]), (label(second[0]), second[1]))


# Arguments the single-GPU guard lets through unscanned.
_PLAIN = frozenset({int, float, bool, complex, type(None), str})

# Ops whose CPU index tensors PyTorch moves to self's device instead of refusing them.
_CPU_INDICES_ALLOWED = frozenset({"index.Tensor", "index_put", "index_put_"})


def _scan(
    front: FrontEnd, qualname: str, args: tuple[Any, ...]
) -> tuple[Any, tuple[Any, ...] | None]:
    """The CUDA device of the tensor arguments, and the arguments with CPU tensors that may
    join a CUDA op (0-d ones; index tensors of indexing ops) moved there (None when nothing
    moved); raises when two devices meet.  Tensors inside list arguments count too."""
    dev = None
    first = 0
    to_move: list[tuple[int, int]] = []  # (argument position, list position or -1)
    bad: tuple[int, Any] | None = None
    indices_ok = qualname in _CPU_INDICES_ALLOWED
    for i, a in enumerate(args):
        if type(a) is list or type(a) is tuple:
            items = enumerate(a)
        else:
            items = ((-1, a),)  # type: ignore[assignment]
        for j, t in items:
            d = getattr(t, "_device", None)
            if d is None:
                continue
            if d.type == "cuda":
                if dev is None:
                    dev, first = d, i
                elif d is not dev:
                    raise _mismatch(qualname, (first, dev), (i, d))
            elif d.type == "cpu" and (t._array.ndim == 0 or (indices_ok and j >= 0)):
                to_move.append((i, j))
            elif bad is None:
                bad = (i, d)  # reported once the CUDA argument is known
    if bad is not None:
        raise _mismatch(qualname, (first, dev or "cuda"), bad)
    if not to_move or dev is None:
        return dev, None
    moved = list(args)
    with _Device(dev.index):
        for i, j in to_move:
            if j < 0:
                moved[i] = _moved(front, args[i], dev)
            else:
                items = list(moved[i])
                items[j] = _moved(front, items[j], dev)
                moved[i] = items
    return dev, tuple(moved)


def _moved(front: FrontEnd, t: Any, dev: Any) -> Any:
    """CPU tensor ``t`` copied to CUDA device ``dev``; a wrapped Python number stays one
    (``7 // x`` wraps 7 on the CPU, and its promotion rank must survive the move)."""
    out = front.make(cupy.asarray(t._array), t._dtype, dev)
    if t._wrapped_number:
        out.__class__ = type(t)  # the wrapped-number subclass (same slots, no fields of its own)
    return out


def guard(
    front: FrontEnd, kernel: Callable[..., Any], qualname: str, multi_device: bool
) -> Callable[..., Any]:
    """``kernel`` checking its tensors' devices and (with several GPUs) running on theirs."""

    if multi_device:

        def guarded(*args: Any, **kwargs: Any) -> Any:
            dev, moved = _scan(front, qualname, args)
            if moved is not None:
                args = moved
            if dev is not None and dev.index != runtime.getDevice():
                with _Device(dev.index):
                    return kernel(*args, **kwargs)
            return kernel(*args, **kwargs)

    else:
        only = front.device("cuda", 0)  # devices are interned: one GPU, one device object
        tensor_type = front.Tensor

        def guarded(*args: Any, **kwargs: Any) -> Any:
            # Fast path: every argument a Tensor on the one GPU, or a number (no CPU tensor
            # to move, no mismatch to report); lists and anything else are scanned.
            for a in args:
                t = type(a)
                if t is tensor_type:
                    if a._device is not only:
                        break
                elif t not in _PLAIN:
                    break
            else:
                return kernel(*args, **kwargs)
            _, moved = _scan(front, qualname, args)
            if moved is not None:
                args = moved
            return kernel(*args, **kwargs)

    guarded.__name__ = getattr(kernel, "__name__", qualname)
    guarded.__qualname__ = getattr(kernel, "__qualname__", qualname)
    guarded.__module__ = getattr(kernel, "__module__", __name__)
    guarded.__wrapped__ = kernel  # type: ignore[attr-defined]
    return guarded


def guard_device_kwarg(kernel: Callable[..., Any], multi_device: bool) -> Callable[..., Any]:
    """A factory kernel run with the current device set to its ``device=`` argument."""
    if not multi_device:
        return kernel

    def guarded(*args: Any, **kwargs: Any) -> Any:
        dev = kwargs.get("device")
        index = getattr(dev, "index", None)
        if index is None or index == runtime.getDevice():
            return kernel(*args, **kwargs)
        with _Device(index):
            return kernel(*args, **kwargs)

    guarded.__name__ = kernel.__name__
    guarded.__qualname__ = kernel.__qualname__
    guarded.__module__ = kernel.__module__
    guarded.__wrapped__ = kernel  # type: ignore[attr-defined]
    return guarded

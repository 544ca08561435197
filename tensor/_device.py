"""Devices: ``tt.device("cuda:1")`` objects, and the dispatch keys each device type carries.

Imports: ``dispatch`` (keys only).

Device objects are interned: ``device("cpu") is device("cpu")``, so kernels can
compare devices with ``is``.  Each device holds the key-set bits its tensors
carry (SEMANTICS.md §2): CPU, ADInplaceOrView, AutogradCPU, AutocastCPU for a CPU
tensor; Meta, ADInplaceOrView, AutogradMeta for a meta tensor; CUDA,
ADInplaceOrView, AutogradCUDA, AutocastCUDA for a CUDA tensor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dispatch import DispatchKey, DispatchKeySet

__all__ = [
    "DEVICE_TYPES",
    "CudaHooks",
    "PluginHooks",
    "add_device_type",
    "canonical",
    "device",
    "device_types",
    "indexed",
    "remove_device_type",
    "to_device",
]

_K = DispatchKey
# Device type -> (backend key, key-set bits its tensors carry).
_KEYS: dict[str, tuple[DispatchKey, int]] = {
    "cpu": (
        _K.CPU,
        DispatchKeySet([_K.CPU, _K.ADInplaceOrView, _K.AutogradCPU, _K.AutocastCPU]).bits,
    ),
    "cuda": (
        _K.CUDA,
        DispatchKeySet([_K.CUDA, _K.ADInplaceOrView, _K.AutogradCUDA, _K.AutocastCUDA]).bits,
    ),
    "meta": (_K.Meta, DispatchKeySet([_K.Meta, _K.ADInplaceOrView, _K.AutogradMeta]).bits),
}
DEVICE_TYPES = tuple(_KEYS)
_INTERNED: dict[Any, device] = {}


class device:  # noqa: N801 - PyTorch's spelling
    """A device: its ``type`` ("cpu", "cuda", "meta") and ``index`` (None or an int).

    >>> import tensor as tt
    >>> d = tt.device("cuda:1")
    >>> d.type, d.index
    ('cuda', 1)
    >>> tt.device("cpu")
    device(type='cpu')
    >>> tt.device("cuda", 0) == tt.device("cuda:0")
    True
    """

    __slots__ = ("_bits", "_str", "backend_key", "index", "type")

    type: str
    index: int | None

    def __new__(cls, type: str | device | int, index: int | None = None) -> device:  # noqa: A002
        arg_key = (type, index)
        found = _INTERNED.get(arg_key)
        if found is not None:
            return found
        if isinstance(type, device):
            if index is not None:
                raise ValueError("device(): pass an index only with a device type string")
            return type
        if isinstance(type, int) and not isinstance(type, bool):  # torch.device(0) is cuda:0
            type, index = "cuda", type
        if not isinstance(type, str):
            raise TypeError(f"device(): expected a string such as 'cpu' or 'cuda:0', got {type!r}")
        name, _, idx = type.partition(":")
        if idx:
            if index is not None:
                raise ValueError(f"device(): type {type!r} already has an index; got index={index}")
            if not (idx.isascii() and idx.isdigit()):  # "¹".isdigit(), int("¹") raises
                raise RuntimeError(f"Invalid device string: {type!r} (expected e.g. 'cuda:0')")
            index = int(idx)
        if name not in _KEYS and not (
            PluginHooks.resolve is not None and PluginHooks.resolve(name)
        ):
            raise RuntimeError(
                f"Expected one of {', '.join(_KEYS)} device type at start of device "
                f"string: {type!r} (a device of your own: tt.register_device)"
            )
        if index is not None:
            if not isinstance(index, int) or index < 0:
                raise RuntimeError(f"Device index must not be negative, got {index!r}")
            if name == "cpu" and index != 0:
                raise RuntimeError(f"CPU device index must be 0 or absent, got {index}")
        key = (name, index)
        d = _INTERNED.get(key)
        if d is None:
            d = object.__new__(cls)
            object.__setattr__(d, "type", name)
            object.__setattr__(d, "index", index)
            object.__setattr__(d, "_str", name if index is None else f"{name}:{index}")
            backend_key, bits = _KEYS[name]
            object.__setattr__(d, "backend_key", backend_key)
            object.__setattr__(d, "_bits", bits)
            _INTERNED[key] = d
        _INTERNED[arg_key] = d  # the next device("cuda:1") is one dict lookup
        return d

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("device objects are immutable")

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self._str

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, ValueError, TypeError):
                return False
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (device, (self._str,))


CPU = device("cpu")
META = device("meta")


class PluginHooks:
    """How ``device`` finds a plug-in device that is known but not registered yet
    (``"strict"``, ``"dask"``: registered on first use, as CUDA initialises on first use).
    ``resolve(name)`` registers it and returns True, or returns False."""

    resolve: Callable[[str], bool] | None = None


def add_device_type(name: str, backend_key: DispatchKey) -> None:
    """Make ``name`` a device type whose tensors carry ``backend_key`` and its autograd,
    autocast (c10's AutocastPrivateUse1) and ADInplaceOrView keys (``tensor.register_device``)."""
    keys = [backend_key, _K.ADInplaceOrView, _K.parse(f"Autograd{backend_key.name}")]
    # c10's one autocast key of the PrivateUse backends, for all three devices: Note
    # [Autocast on plug-in devices] in tensor._autocast.
    keys.append(_K.AutocastPrivateUse1)
    _KEYS[name] = (backend_key, DispatchKeySet(keys).bits)


def remove_device_type(name: str) -> None:
    """Forget plug-in device type ``name`` and its interned devices."""
    _KEYS.pop(name, None)
    for arg_key, d in list(_INTERNED.items()):
        if d.type == name:
            del _INTERNED[arg_key]


def device_types() -> tuple[str, ...]:
    """Every device type known now (built-in and registered)."""
    return tuple(_KEYS)


def to_device(value: Any) -> device:
    """Turn a device-like argument (``device``, str, int or None = cpu) into a device."""
    if value is None:
        return CPU
    d = _INTERNED.get((value, None))
    if d is not None:
        return d
    return device(value)


class CudaHooks:
    """How devices reach the CUDA backend without importing it (filled in by ``tensor``).

    ``init()`` initialises CUDA on first use (loads CuPy, registers the CUDA kernels) or
    raises the error saying why CUDA is unavailable; ``current()`` is the current device
    index; ``count()`` the number of devices.
    """

    init: Callable[[], None] | None = None
    current: Callable[[], int] | None = None
    count: Callable[[], int] | None = None


def canonical(d: device) -> device:
    """The device a tensor on ``d`` lives on: ``cuda`` → ``cuda:<current device>``.

    The first CUDA device asked for initialises CUDA (PyTorch's lazy init), so a
    machine without a GPU gets the error saying so here, before any work is done.
    """
    if d.type != "cuda":  # PyTorch: a CPU tensor's device is ``cpu``, even made on "cpu:0"
        return d if d.index is None else device(d.type)
    init = CudaHooks.init
    if init is not None:
        init()
    if d.index is None:
        return device("cuda", CudaHooks.current() if CudaHooks.current is not None else 0)
    count = CudaHooks.count() if CudaHooks.count is not None else 0
    if d.index >= count:
        raise RuntimeError(
            f"CUDA error: invalid device ordinal: {d} was asked for but only {count} CUDA "
            f"device(s) are visible (cuda:0 to cuda:{count - 1})"
        )
    return d


def indexed(d: device) -> device:
    """``cuda`` → ``cuda:<current>`` without initialising CUDA (generators' devices)."""
    if d.type == "cuda" and d.index is None:
        current = CudaHooks.current
        return device("cuda", current() if current is not None else 0)
    return d

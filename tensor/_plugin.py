"""``register_device``: any array-API library as a device, in one pure-Python call.

Imports: ``dispatch``, ``backends.common.device`` and ``tensor``'s own modules; the
known plug-in devices (``backends.devices.strict``, ``backends.devices.dask``) by name,
through ``importlib``, the first time their device type is asked for.

PyTorch adds a device in C++: a PrivateUse1 kernel library, ``rename_privateuse1_backend``
and a device module.  Here it is ``tt.register_device(name, array_type=...,
namespace=...)``: the device takes the next free PrivateUse key (three, so three
plug-in devices at once) with its Autograd and Autocast counterparts, its name
becomes a device type (``tt.device(name)``, ``device=name`` in factories,
``.to(name)``) and an ``impl`` type (``impl(qualname, name)``), and the shared kernels
its library can run are registered for it (Note [Plug-in devices] in
``backends.common.device``).
"""

from __future__ import annotations

import importlib
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from backends.common.device import DeviceKernels, DeviceSpec
from backends.common.device import register as _register_kernels
from dispatch import DispatchKey, rename_privateuse_backend

from . import _convert, _device
from ._frontend import FRONT

__all__ = ["PluginDevice", "get_device", "register_device", "registered_devices"]

_SLOTS = (DispatchKey.PrivateUse1, DispatchKey.PrivateUse2, DispatchKey.PrivateUse3)
_NAME = re.compile(r"[a-z_][a-z0-9_]*")
_BUILTIN_TYPES = frozenset({"cpu", "cuda", "meta"})
# Devices this package ships, registered on first use of their name (as CUDA
# initialises on first use) through ``register_device`` itself: each module's
# ``arguments()`` gives the call's arguments (backends never import tensor).
KNOWN = {"strict": "backends.devices.strict", "dask": "backends.devices.dask"}
_LOCK = threading.RLock()


class PluginDevice:
    """A registered plug-in device: ``name``, ``key`` (its backend DispatchKey), ``spec``,
    the kernels registered for it (``registered``), the families and rows left out with
    the reason (``missing``), whether its views share memory (``views_share_memory``);
    ``destroy()`` removes it (its tensors stop working)."""

    def __init__(self, spec: DeviceSpec, key: DispatchKey, kernels: DeviceKernels) -> None:
        self.name = spec.name
        self.key = key
        self.spec = spec
        self._kernels = kernels

    @property
    def registered(self) -> list[str]:
        return self._kernels.registered

    @property
    def missing(self) -> dict[str, str]:
        return self._kernels.missing

    @property
    def views_share_memory(self) -> bool:
        return self._kernels.views_share_memory

    def destroy(self) -> None:
        with _LOCK:
            if _DEVICES.get(self.name) is not self:
                return
            self._kernels.destroy()
            _convert.remove_plugin(self.name)
            _device.remove_device_type(self.name)
            rename_privateuse_backend(self.key, None)
            del _DEVICES[self.name]

    def __repr__(self) -> str:
        return (
            f"<PluginDevice {self.name!r} at {self.key.name}: {len(self.registered)} kernels, "
            f"{len(self.missing)} left out>"
        )


_DEVICES: dict[str, PluginDevice] = {}


def register_device(
    name: str,
    *,
    array_type: type | tuple[type, ...],
    namespace: Any,
    library: Any = None,
    to_cpu: Callable[[Any], np.ndarray] | None = None,
    from_cpu: Callable[..., Any] | None = None,
    engine: Callable[[int], Any] | None = None,
    functions: Mapping[str, Any] | None = None,
    known_shape: Callable[[Any], Any] | None = None,
) -> PluginDevice:
    """Make ``name`` a device whose tensors wrap ``array_type`` arrays of an array-API
    ``namespace``; returns the device (``destroy()`` removes it).

    ``to_cpu(array)`` gives a NumPy array (default: ``numpy.from_dlpack``, else
    ``numpy.asarray``); ``from_cpu(ndarray, index, **options)`` makes a device array
    (default: ``namespace.asarray``; ``options`` come from ``tt.tensor(...,
    device=name, **options)``); ``engine(seed)`` a random engine with NumPy Generator's
    ``random``/``standard_normal``/``integers`` (random factories raise without one);
    ``library`` the raw library where it differs from the namespace; ``functions``
    what the shared kernels take from a library and the standard lacks;
    ``known_shape(array)`` the array with sizes a lazy library left unknown computed (see
    ``backends.common.device.DeviceSpec``).  Operators the library cannot run raise
    ``NotImplementedError`` naming the operator and the device; register your own
    kernels with ``dispatch.impl(qualname, name)``.

    >>> import numpy as np, tensor as tt
    >>> dev = tt.register_device("npdoc", array_type=np.ndarray, namespace=np)
    >>> x = tt.tensor([1.0, 2.0], device="npdoc")
    >>> (x * 2).sum().to("cpu").item(), x.device
    (6.0, device(type='npdoc'))
    >>> dev.destroy()
    """
    with _LOCK:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ValueError(
                f"register_device(): a device name is lower-case letters, digits and _ "
                f"(e.g. 'mydev'), got {name!r}"
            )
        if name in _BUILTIN_TYPES or name in _DEVICES:
            raise RuntimeError(
                f"register_device(): the device type {name!r} exists already"
                + (" (destroy() the registered one first)" if name in _DEVICES else "")
            )
        used = {d.key for d in _DEVICES.values()}
        free = [k for k in _SLOTS if k not in used]
        if not free:
            raise RuntimeError(
                f"register_device(): all three PrivateUse keys are taken (by "
                f"{', '.join(sorted(_DEVICES))}); destroy() one of them first"
            )
        key = free[0]
        spec = DeviceSpec(
            name=name,
            array_type=array_type,
            namespace=namespace,
            library=library,
            to_cpu=to_cpu,
            from_cpu=from_cpu,
            engine=engine,
            functions=dict(functions or {}),
            known_shape=known_shape,
        )
        rename_privateuse_backend(key, name)
        try:
            _device.add_device_type(name, key)
            kernels = _register_kernels(FRONT, spec, key.name)
            _convert.add_plugin(spec, kernels.views_share_memory)
        except BaseException:
            _device.remove_device_type(name)
            rename_privateuse_backend(key, None)
            raise
        dev = _DEVICES[name] = PluginDevice(spec, key, kernels)
        return dev


def get_device(name: str) -> PluginDevice | None:
    """The plug-in device registered as ``name`` (a known one is registered now), or None."""
    if name not in _DEVICES:
        _resolve(name)
    return _DEVICES.get(name)


def registered_devices() -> dict[str, PluginDevice]:
    """The plug-in devices registered now, by name."""
    return dict(_DEVICES)


def _resolve(name: str) -> bool:
    """``tt.device(name)`` of an unknown type: register it if this package ships it."""
    module = KNOWN.get(name)
    if module is None:
        return False
    with _LOCK:
        if name not in _DEVICES:
            register_device(name, **importlib.import_module(module).arguments())
    return True


_device.PluginHooks.resolve = _resolve

"""The public names of the device API, pinned (API.md and the README name them).

A rename or removal here breaks users' code: change these lists only with the docs.
"""

from __future__ import annotations

import inspect

import numpy as np

import backends.common.device
import dispatch
import tensor as tt

# Plug-in devices: the one call, its handle, and the dispatcher's side of it.
TENSOR_DEVICE_API = ("register_device", "PluginDevice", "device")
DISPATCH_DEVICE_API = ("rename_privateuse_backend", "privateuse_backend_name", "key_for_type")
REGISTER_DEVICE_PARAMETERS = (
    "name",
    "array_type",
    "namespace",
    "library",
    "to_cpu",
    "from_cpu",
    "engine",
    "functions",
    "known_shape",
)
PRIVATE_USE_KEYS = (
    "PrivateUse1",
    "PrivateUse2",
    "PrivateUse3",
    "AutogradPrivateUse1",
    "AutogradPrivateUse2",
    "AutogradPrivateUse3",
    "AutocastPrivateUse1",
)


def test_tensor_exports_the_device_api() -> None:
    for name in TENSOR_DEVICE_API:
        assert name in tt.__all__ and hasattr(tt, name), name


def test_dispatch_exports_the_device_api() -> None:
    for name in DISPATCH_DEVICE_API:
        assert name in dispatch.__all__ and hasattr(dispatch, name), name


def test_register_device_signature() -> None:
    params = inspect.signature(tt.register_device).parameters
    assert tuple(params) == REGISTER_DEVICE_PARAMETERS
    assert all(p.kind is p.KEYWORD_ONLY for n, p in params.items() if n != "name")
    # The spec the backends build from has the same fields.
    fields = backends.common.device.DeviceSpec.__dataclass_fields__
    assert set(REGISTER_DEVICE_PARAMETERS) == set(fields)


def test_plugin_device_handle() -> None:
    dev = tt.register_device("apidev", array_type=np.ndarray, namespace=np)
    try:
        assert isinstance(dev, tt.PluginDevice)
        assert dev.name == "apidev" and dev.key.name.startswith("PrivateUse")
        assert dev.spec.namespace is np
        assert "add.Tensor" in dev.registered and isinstance(dev.missing, dict)
        assert dev.views_share_memory is True
    finally:
        dev.destroy()


def test_private_use_keys() -> None:
    for name in PRIVATE_USE_KEYS:
        assert dispatch.DispatchKey.parse(name).name == name

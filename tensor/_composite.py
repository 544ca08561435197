"""Device-independent kernels of the built-in operators, registered by ``tensor`` itself.

Imports: ``dispatch`` and ``tensor``'s ``_convert``, ``_device``, ``_dtype``,
``_definitions``, ``optable``, ``_tensor``.

- BackendSelect kernels of the factories (``zeros``, ``rand`` ...): a factory has
  no tensor argument to dispatch on, so, as in PyTorch, its BackendSelect kernel
  reads ``device`` and redispatches to that device's backend key.
- CompositeExplicitAutograd kernels: ``_to_copy`` (moves and converts arrays for
  every backend pair) and the ``*_like`` factories (which call the plain factory).
- CompositeImplicitAutograd kernels: ``max.other``/``min.other`` (and their out=
  forms) are ``maximum``/``minimum``; the composites of ``tensor._composite_shape`` and
  ``tensor._composite_nn``, ``tensor._composite_variants``.
"""

from __future__ import annotations

from typing import Any

from dispatch import DispatchKeySet, Library, ops

from . import _composite_nn, _composite_shape, _composite_variants, _convert, _dtype
from ._device import canonical, to_device
from ._device import device as _device_type
from ._tensor import Tensor, make
from .optable import OP_TABLE

__all__ = ["LIB", "register"]

LIB: Library | None = None

# Factories dispatched by their `device` argument (normal.float_float has no tensors).
_SELECTED = [op.name for op in OP_TABLE if op.family == "factory" and op.name != "normal"]


_BACKEND_KEYSETS: dict[Any, DispatchKeySet] = {}


def _backend_select(op: Any) -> Any:
    def select(keyset: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        dev = kwargs.get("device")
        # CPU and meta device objects without an index are canonical already; "cpu:0"
        # becomes "cpu" (the factories' fast paths use the device they are given).
        if type(dev) is not _device_type or dev.index is not None or dev.type == "cuda":
            dev = canonical(to_device(dev))
        kwargs["device"] = dev
        ks = _BACKEND_KEYSETS.get(dev.backend_key)
        if ks is None:
            ks = _BACKEND_KEYSETS[dev.backend_key] = DispatchKeySet(dev.backend_key)
        return op.redispatch(ks, *args, **kwargs)

    select.__name__ = select.__qualname__ = f"{op.name.split('::')[-1]}_backend_select"
    return select


def to_copy(
    self: Tensor, *, dtype: Any = None, device: Any = None, non_blocking: bool = False
) -> Tensor:
    """``_to_copy``: a copy of ``self`` with another dtype and/or on another device."""
    dt = self._dtype if dtype is None else _dtype.to_dtype(dtype, op="to")
    dev = self._device if device is None else canonical(to_device(device))
    if self._device.type == "meta" and dev.type != "meta":
        raise NotImplementedError(
            f"to(): Cannot copy out of meta tensor; no data! (moving a meta tensor to {dev}). "
            f"Meta tensors have shapes and dtypes only; create the tensor on {dev} instead."
        )
    np_dtype = None if dt is self._dtype else dt.numpy_dtype
    array = _convert.move_array(self._array, dev, np_dtype, copy=True, non_blocking=non_blocking)
    return make(array, dt, dev)


def _like(name: str) -> Any:
    factory = getattr(ops.core, name.removesuffix("_like")).default

    if name == "full_like":

        def full_like(
            self: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None
        ) -> Tensor:
            return factory(
                tuple(self._array.shape), fill_value,
                dtype=self._dtype if dtype is None else dtype,
                device=self._device if device is None else device,
            )  # fmt: skip

        return full_like

    def like(self: Tensor, *, dtype: Any = None, device: Any = None) -> Tensor:
        return factory(
            tuple(self._array.shape),
            dtype=self._dtype if dtype is None else dtype,
            device=self._device if device is None else device,
        )

    like.__name__ = like.__qualname__ = name
    return like


def max_other(self: Tensor, other: Tensor) -> Tensor:
    return ops.core.maximum.default(self, other)  # type: ignore[no-any-return]


def min_other(self: Tensor, other: Tensor) -> Tensor:
    return ops.core.minimum.default(self, other)  # type: ignore[no-any-return]


def max_other_out(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
    return ops.core.maximum.out(self, other, out=out)  # type: ignore[no-any-return]


def min_other_out(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
    return ops.core.minimum.out(self, other, out=out)  # type: ignore[no-any-return]


def register() -> None:
    """Register these kernels (once) into ``LIB``, an IMPL library of ``core``."""
    global LIB
    if LIB is not None:
        return
    lib = Library("core", "IMPL")
    for name in _SELECTED:
        op = getattr(ops.core, name).default
        lib.impl(name, _backend_select(op), "BackendSelect", with_keyset=True)
    lib.impl(
        "normal.float_float",
        _backend_select(ops.core.normal.float_float),
        "BackendSelect",
        with_keyset=True,
    )
    lib.impl("_to_copy", to_copy, "CompositeExplicitAutograd")
    for op in OP_TABLE:
        if op.family == "like":
            lib.impl(op.name, _like(op.name), "CompositeExplicitAutograd")
    lib.impl("max.other", max_other, "CompositeImplicitAutograd")
    lib.impl("min.other", min_other, "CompositeImplicitAutograd")
    lib.impl("max.other_out", max_other_out, "CompositeImplicitAutograd")
    lib.impl("min.other_out", min_other_out, "CompositeImplicitAutograd")
    _composite_shape.register(lib)
    _composite_nn.register(lib)
    _composite_variants.register(lib)
    LIB = lib

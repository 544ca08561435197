"""Meta kernels of the factories: the shared size and dtype rules, no data, no randomness.

Imports: ``dispatch``, ``tensor`` and ``backends.common``.
"""

from __future__ import annotations

from typing import Any

import tensor
from dispatch import Library
from tensor import Tensor

from ..common import creation, variants

__all__ = ["register"]

_make_meta = Tensor._make_meta


def _meta(device: Any) -> Any:
    return tensor.device("meta") if device is None else tensor.device(device)


def _named(name: str, fn: Any) -> Any:
    fn.__name__ = fn.__qualname__ = name
    return fn


def kernels() -> dict[str, Any]:
    op = tensor.op_info
    out: dict[str, Any] = {}
    for name in ("empty", "zeros", "ones"):

        def filled(size: Any, *, dtype: Any = None, device: Any = None, name: str = name) -> Any:
            dt = creation.factory_dtype(op(name), dtype)
            return _make_meta(creation.size_of(name, size), dt, _meta(device))

        out[name] = _named(name, filled)

    def full(size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
        dt = creation.factory_dtype(op("full"), dtype, (fill_value,))
        return _make_meta(creation.size_of("full", size), dt, _meta(device))

    def arange(
        start: Any, end: Any, step: Any = 1, *, dtype: Any = None, device: Any = None
    ) -> Any:
        dt = creation.factory_dtype(op("arange"), dtype, (start, end, step))
        return _make_meta((creation.arange_length(start, end, step, dt),), dt, _meta(device))

    def linspace(start: Any, end: Any, steps: int, *, dtype: Any = None, device: Any = None) -> Any:
        dt = creation.factory_dtype(op("linspace"), dtype)
        if steps < 0:
            raise RuntimeError(f"linspace(): number of steps must be non-negative, got {steps}")
        return _make_meta((steps,), dt, _meta(device))

    def eye(n: int, m: Any = None, *, dtype: Any = None, device: Any = None) -> Any:
        dt = creation.factory_dtype(op("eye"), dtype)
        return _make_meta(creation.size_of("eye", (n, n if m is None else m)), dt, _meta(device))

    for name in ("rand", "randn"):

        def sample(
            size: Any,
            *,
            generator: Any = None,
            dtype: Any = None,
            device: Any = None,
            name: str = name,
        ) -> Any:
            dt = creation.factory_dtype(op(name), dtype)
            return _make_meta(creation.size_of(name, size), dt, _meta(device))

        out[name] = _named(name, sample)

    def randint(
        low: Any,
        high: Any,
        size: Any,
        *,
        generator: Any = None,
        dtype: Any = None,
        device: Any = None,
    ) -> Any:
        dt = creation.factory_dtype(op("randint"), dtype)
        creation.check_randint(dt, low, high)
        return _make_meta(creation.size_of("randint", size), dt, _meta(device))

    def normal(
        mean: Any,
        std: Any = 1.0,
        size: Any = None,
        *,
        generator: Any = None,
        dtype: Any = None,
        device: Any = None,
    ) -> Any:
        shape, dt = creation.plan_normal(op("normal"), mean, std, size)
        if dt is None:
            dt = creation.factory_dtype(op("normal"), dtype)
        tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
        return _make_meta(shape, dt, tensors[0]._device if tensors else _meta(device))

    out.update(full=full, arange=arange, linspace=linspace, eye=eye, randint=randint)
    for overload in ("Tensor_Tensor", "Tensor_float", "float_Tensor", "float_float"):
        out[f"normal.{overload}"] = normal
    return out


def register(lib: Library) -> None:
    found = kernels()
    found.update(variants.kernels(found, f"{__name__}.variants"))  # zeros.out, ...
    for qualname, kernel in found.items():
        lib.impl(qualname, kernel, "Meta")

"""Meta kernels of the factories: the shared size and dtype rules, no data, no randomness.

Imports: ``dispatch`` and ``backends.common``.
"""

from __future__ import annotations

from typing import Any

from dispatch import Library

from ..common import creation, variants
from ..common.frontend import FrontEnd

__all__ = ["kernels", "register"]


def _named(name: str, fn: Any) -> Any:
    fn.__name__ = fn.__qualname__ = name
    return fn


def kernels(front: FrontEnd) -> dict[str, Any]:
    """The factories' Meta kernels, by qualified overload name."""
    op = front.op_info
    make_meta, device_type = front.make_meta, front.device
    factory_dtype = creation.factory_dtype
    out: dict[str, Any] = {}

    def _meta(device: Any) -> Any:
        return device_type("meta") if device is None else device_type(device)

    for name in ("empty", "zeros", "ones"):

        def filled(size: Any, *, dtype: Any = None, device: Any = None, name: str = name) -> Any:
            dt = factory_dtype(front, op(name), dtype)
            return make_meta(creation.size_of(name, size), dt, _meta(device))

        out[name] = _named(name, filled)

    def full(size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
        dt = factory_dtype(front, op("full"), dtype, (fill_value,))
        return make_meta(creation.size_of("full", size), dt, _meta(device))

    def arange(
        start: Any, end: Any, step: Any = 1, *, dtype: Any = None, device: Any = None
    ) -> Any:
        dt = factory_dtype(front, op("arange"), dtype, (start, end, step))
        length = creation.arange_length(front, start, end, step, dt)
        return make_meta((length,), dt, _meta(device))

    def linspace(start: Any, end: Any, steps: int, *, dtype: Any = None, device: Any = None) -> Any:
        dt = factory_dtype(front, op("linspace"), dtype)
        if steps < 0:
            raise RuntimeError(f"linspace(): number of steps must be non-negative, got {steps}")
        return make_meta((steps,), dt, _meta(device))

    def eye(n: int, m: Any = None, *, dtype: Any = None, device: Any = None) -> Any:
        dt = factory_dtype(front, op("eye"), dtype)
        return make_meta(creation.size_of("eye", (n, n if m is None else m)), dt, _meta(device))

    for name in ("rand", "randn"):

        def sample(
            size: Any,
            *,
            generator: Any = None,
            dtype: Any = None,
            device: Any = None,
            name: str = name,
        ) -> Any:
            dt = factory_dtype(front, op(name), dtype)
            return make_meta(creation.size_of(name, size), dt, _meta(device))

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
        dt = factory_dtype(front, op("randint"), dtype)
        creation.check_randint(dt, low, high)
        return make_meta(creation.size_of("randint", size), dt, _meta(device))

    def normal(
        mean: Any,
        std: Any = 1.0,
        size: Any = None,
        *,
        generator: Any = None,
        dtype: Any = None,
        device: Any = None,
    ) -> Any:
        shape, dt = creation.plan_normal(front, op("normal"), mean, std, size)
        if dt is None:
            dt = factory_dtype(front, op("normal"), dtype)
        tensors = [t for t in (mean, std) if isinstance(t, front.Tensor)]
        return make_meta(shape, dt, tensors[0]._device if tensors else _meta(device))

    out.update(full=full, arange=arange, linspace=linspace, eye=eye, randint=randint)
    for overload in ("Tensor_Tensor", "Tensor_float", "float_Tensor", "float_float"):
        out[f"normal.{overload}"] = normal
    return out


def register(lib: Library, front: FrontEnd) -> None:
    """Register the factories' Meta kernels (and their ``out=`` forms) into ``lib``."""
    found = kernels(front)
    found.update(variants.kernels(front, found, f"{__name__}.variants"))  # zeros.out, ...
    for qualname, kernel in found.items():
        lib.impl(qualname, kernel, "Meta")

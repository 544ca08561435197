"""CUDA kernels of the factories and random numbers (CuPy arrays, CuPy's XORWOW engine).

Imports: CuPy, ``dispatch`` and ``backends.common``.

The factories are the shared ones (``backends.common.creation``) given CuPy's
namespace: ``zeros``/``ones``/``full``/``arange``/``eye`` are CuPy's fill kernels,
random numbers come from a ``cupy.random.Generator`` per device (cuRAND's XORWOW
bit generator, seeded from the device's ``tt.Generator``; ``tt.manual_seed`` reseeds
every device).  Each kernel runs with the current device set to its ``device=``
argument when the machine has several GPUs.
"""

from __future__ import annotations

from typing import Any

import cupy

from dispatch import Library

from ..common import creation, variants
from ..common.elementwise import Namespace
from ..common.frontend import FrontEnd
from . import _runtime

__all__ = ["cupy_engine", "engine", "register"]


def cupy_engine(seed: int) -> Any:
    """The CUDA random engine of a seed, on the current device (same seed, same numbers)."""
    return cupy.random.Generator(cupy.random.XORWOW(seed))


def engine(front: FrontEnd, generator: Any, device: Any) -> Any:
    """The CuPy engine of ``generator`` (the device's default one when None), made on the
    generator's device (the engine's state lives there)."""
    index = getattr(getattr(generator, "device", None), "index", None) or device.index or 0

    def make(seed: int) -> Any:
        with cupy.cuda.Device(index):
            return cupy_engine(seed)

    return creation.generator_engine(front, generator, device, "cuda", make)


def register(lib: Library, front: FrontEnd) -> None:
    """Register the factories' CUDA kernels (and their ``out=`` forms) into ``lib``."""
    multi = _runtime.device_count() > 1
    ns = Namespace(cupy.ndarray, __name__, front, asarray=cupy.asarray)
    found = creation.kernels(ns, engine)
    found.update(variants.kernels(front, found, f"{__name__}.variants"))  # zeros.out, ...
    for qualname, kernel in found.items():
        lib.impl(qualname, _runtime.guard_device_kwarg(kernel, multi), "CUDA")

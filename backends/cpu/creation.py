"""CPU kernels of the factories and random numbers (NumPy arrays, NumPy's PCG64 engine).

Imports: NumPy, ``dispatch`` and ``backends.common``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatch import Library

from ..common import creation, variants
from ..common.elementwise import Namespace
from ..common.frontend import FrontEnd

__all__ = ["engine", "numpy_engine", "register"]


def numpy_engine(seed: int) -> np.random.Generator:
    """The CPU random engine of a seed: NumPy's PCG64 (same seed, same numbers)."""
    return np.random.Generator(np.random.PCG64(seed))


def engine(front: FrontEnd, generator: Any, device: Any) -> np.random.Generator:
    """The NumPy engine of ``generator`` (the device's default one when None)."""
    return creation.generator_engine(front, generator, device, "cpu", numpy_engine)  # type: ignore[no-any-return]


def register(lib: Library, front: FrontEnd) -> None:
    """Register the factories' CPU kernels (and their ``out=`` forms) into ``lib``."""
    ns = Namespace(np.ndarray, __name__, front, asarray=np.asarray)
    found = creation.kernels(ns, engine)
    found.update(variants.kernels(front, found, f"{__name__}.variants"))  # zeros.out, ...
    for qualname, kernel in found.items():
        lib.impl(qualname, kernel, "CPU")

"""CPU kernels of the factories and random numbers (NumPy arrays, NumPy's PCG64 engine).

Imports: NumPy, ``dispatch``, ``tensor`` and ``backends.common``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatch import Library

from ..common import creation, variants
from ..common.elementwise import Namespace

__all__ = ["engine", "numpy_engine", "register"]

NS = Namespace(np.ndarray, __name__, asarray=np.asarray)


def numpy_engine(seed: int) -> np.random.Generator:
    """The CPU random engine of a seed: NumPy's PCG64 (same seed, same numbers)."""
    return np.random.Generator(np.random.PCG64(seed))


def engine(generator: Any, device: Any) -> np.random.Generator:
    """The NumPy engine of ``generator`` (the device's default one when None)."""
    return creation.generator_engine(generator, device, "cpu", numpy_engine)  # type: ignore[no-any-return]


def register(lib: Library) -> None:
    found = creation.kernels(NS, engine)
    found.update(variants.kernels(found, f"{__name__}.variants"))  # zeros.out, ...
    for qualname, kernel in found.items():
        lib.impl(qualname, kernel, "CPU")

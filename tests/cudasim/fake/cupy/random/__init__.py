"""``cupy.random`` of the cudasim stand-in: NumPy's PCG64 behind CuPy's Generator API.

The numbers differ from cuRAND's XORWOW (the op database compares only shapes and
dtypes of random results on CUDA); the same seed gives the same numbers, as there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.cudasim import _array


class XORWOW:
    """A seed holder standing for cuRAND's XORWOW bit generator."""

    def __init__(self, seed: Any = None, *, size: int = -1) -> None:
        self.seed = seed


class Generator:
    """``cupy.random.Generator``: NumPy's methods, results on the device."""

    def __init__(self, bit_generator: XORWOW) -> None:
        self.bit_generator = bit_generator
        self._rng = np.random.Generator(np.random.PCG64(bit_generator.seed))

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._rng, name)

        def sample(*args: Any, **kwargs: Any) -> Any:
            return _array.to_device(method(*_array.host_views(args), **kwargs))

        return sample


def default_rng(seed: Any = None) -> Generator:
    return Generator(XORWOW(seed))


def seed(seed: Any = None) -> None:
    np.random.seed(seed)


def __getattr__(name: str) -> Any:  # the legacy functions (cupy.random.rand, ...)
    fn = getattr(np.random, name)
    return _array.wrap(fn, f"random.{name}")

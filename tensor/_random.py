"""Random number generators: one default ``Generator`` per device, seeded by ``manual_seed``.

Imports: NumPy and ``tensor._device``.

A Generator holds a seed and, once used, a backend engine (a NumPy
``np.random.Generator`` on the CPU; the CUDA backend makes a CuPy one) built by
the backend's factory from the seed, so the same seed gives the same numbers.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ._device import device, indexed, to_device

__all__ = ["Generator", "default_generator", "initial_seed", "manual_seed", "seed"]

_DEFAULT_SEED = 67280421310721  # PyTorch's default CPU seed


class Generator:
    """A random number generator for one device.

    >>> import tensor as tt
    >>> g = tt.Generator().manual_seed(0)
    >>> a = tt.rand(3, generator=g); _ = g.manual_seed(0)
    >>> bool((tt.rand(3, generator=g) == a).all())
    True
    """

    __slots__ = ("_engine", "_lock", "_seed", "device")

    def __init__(self, device: device | str | None = None) -> None:
        d = to_device(device)
        self.device = device_type_index(d)
        self._seed = _DEFAULT_SEED
        self._engine: Any = None
        self._lock = threading.Lock()

    def manual_seed(self, seed: int) -> Generator:
        """Reset the generator to ``seed``; returns the generator."""
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
            raise TypeError(f"manual_seed(): seed must be an int, got {type(seed).__name__}")
        with self._lock:
            self._seed = int(seed) & 0xFFFF_FFFF_FFFF_FFFF
            self._engine = None
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy; returns the new seed."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def engine(self, factory: Callable[[int], Any]) -> Any:
        """The backend engine, made by ``factory(seed)`` on first use after a seed."""
        eng = self._engine
        if eng is None:
            with self._lock:
                if self._engine is None:
                    self._engine = factory(self._seed)
                eng = self._engine
        return eng

    def get_state(self) -> Any:
        """An opaque snapshot (seed and engine state) for ``set_state``."""
        eng = self._engine
        if eng is not None and not isinstance(eng, np.random.Generator):
            raise NotImplementedError(
                f"get_state(): the {self.device} generator's engine (CuPy's, on the GPU) has no "
                f"host snapshot; reseed it with manual_seed() to repeat a sequence"
            )
        state = eng.bit_generator.state if eng is not None else None
        return (self._seed, state)

    def set_state(self, state: Any) -> Generator:
        seed_value, engine_state = state
        self.manual_seed(seed_value)
        if engine_state is not None:
            eng = self.engine(numpy_engine)
            eng.bit_generator.state = engine_state
        return self

    def __repr__(self) -> str:
        return f"<tensor.Generator device={self.device}>"


device_type_index = indexed  # "cuda" -> "cuda:<current>", without initialising CUDA


def numpy_engine(seed: int) -> np.random.Generator:
    """The CPU engine: NumPy's PCG64 from the seed."""
    return np.random.Generator(np.random.PCG64(seed))


_DEFAULTS: dict[device, Generator] = {}
_DEFAULTS_LOCK = threading.Lock()


def default_generator(d: device | str | None = None) -> Generator:
    """The default generator of a device (created on first use with the current seed)."""
    dev = device_type_index(to_device(d))
    gen = _DEFAULTS.get(dev)
    if gen is None:
        with _DEFAULTS_LOCK:
            gen = _DEFAULTS.get(dev)
            if gen is None:
                gen = Generator(dev)
                gen.manual_seed(_State.seed)
                _DEFAULTS[dev] = gen
    return gen


class _State:
    seed: int = _DEFAULT_SEED


def manual_seed(seed: int) -> Generator:
    """Seed every device's default generator; returns the CPU one.

    >>> import tensor as tt
    >>> _ = tt.manual_seed(0); a = tt.randn(2)
    >>> _ = tt.manual_seed(0); bool((tt.randn(2) == a).all())
    True
    """
    cpu = default_generator("cpu")
    cpu.manual_seed(seed)
    _State.seed = cpu.initial_seed()
    for gen in list(_DEFAULTS.values()):
        gen.manual_seed(_State.seed)
    return cpu


def seed() -> int:
    """Seed every default generator from the operating system's entropy."""
    s = int.from_bytes(os.urandom(8), "little") >> 1
    manual_seed(s)
    return s


def initial_seed() -> int:
    return default_generator("cpu").initial_seed()

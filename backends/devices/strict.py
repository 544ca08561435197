"""The ``strict`` device: tensors over array_api_strict, the standard's strictest reading.

Imports: NumPy; array_api_strict when ``arguments()`` is called (the ``strict`` extra).

Every shared kernel of ``backends.common`` that this device runs, runs against nothing
but the standard: a NumPy-only habit in a kernel (a method the standard lacks, a NumPy
dtype where the standard wants its own, value-based casting) fails here loudly, as a
``NotImplementedError`` naming the operator and the device, instead of passing on the
CPU and breaking on CuPy or Dask later (Note [Plug-in devices] in
``backends.common.device``).  array_api_strict has no random numbers; the engine draws
with NumPy's PCG64 on the host and wraps the result.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

__all__ = ["INSTALL_HINT", "arguments"]

INSTALL_HINT = "pip install 'arraydispatch[strict]' (array-api-strict)"


class StrictEngine:
    """NumPy's PCG64 engine whose draws come back as array_api_strict arrays."""

    def __init__(self, xp: Any, seed: int) -> None:
        self._xp = xp
        self._rng = np.random.Generator(np.random.PCG64(seed))

    def random(self, shape: Any, dtype: Any = np.float64) -> Any:
        return self._xp.asarray(self._rng.random(shape, dtype=dtype))

    def standard_normal(self, shape: Any, dtype: Any = np.float64) -> Any:
        return self._xp.asarray(self._rng.standard_normal(shape, dtype=dtype))

    def integers(self, low: Any, high: Any, size: Any, dtype: Any = np.int64) -> Any:
        return self._xp.asarray(self._rng.integers(low, high, size, dtype=dtype))


def _library() -> Any:
    try:
        return importlib.import_module("array_api_strict")
    except ImportError as e:
        raise ImportError(
            f"device 'strict' needs array_api_strict, which is not installed: {INSTALL_HINT}"
        ) from e


def arguments() -> dict[str, Any]:
    """The ``register_device("strict", **arguments())`` call's arguments."""
    xp = _library()

    def from_cpu(array: np.ndarray, index: Any = None) -> Any:
        return xp.asarray(array)

    return {
        "array_type": type(xp.asarray(0)),
        "namespace": xp,
        "to_cpu": np.from_dlpack,
        "from_cpu": from_cpu,
        "engine": lambda seed: StrictEngine(xp, seed),
    }

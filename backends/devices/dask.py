"""The ``dask`` device: tensors over dask.array, chunked and lazy, local or distributed.

Imports: NumPy; dask.array and array_api_compat when ``arguments()`` is called (the
``dask`` extra: ``pip install -e ".[dask]"``).

A tensor on ``"dask"`` wraps a dask array: every operator adds tasks to its graph and
nothing is computed until a value is asked for (``.to("cpu")``, ``.numpy()``,
``.item()``, ``print``).  Autograd records over the same tensors, so ``backward()``
builds the gradients' graphs too.  Computing uses dask's scheduler: the threaded one
by default, or a ``dask.distributed`` cluster when a ``Client`` is active
(``Client(LocalCluster(...))`` on one machine, ``Client("tcp://scheduler:8786")`` on
many).  ``tt.tensor(data, device="dask", chunks=...)`` picks the chunks (default
``"auto"``); random factories draw with dask's own generator, chunk by chunk.

Dask arrays are values: a view is a new graph, not a window on the same memory, so
the device refuses in-place writes into views and into tensors that have views
(Note [Plug-in devices] in ``backends.common.device``).  Data-dependent shapes
(``nonzero``, mask indexing, ``unique``) give dask arrays of unknown chunk sizes where
dask supports them; where the shared kernel needs a size dask does not know yet, the
call raises ``NotImplementedError`` naming the operator.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

__all__ = ["INSTALL_HINT", "arguments"]

INSTALL_HINT = "pip install 'arraydispatch[dask]' (dask[array] and distributed)"


def _import(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise RuntimeError(
            f"device 'dask' needs {name}, which is not installed: {INSTALL_HINT}"
        ) from e


def arguments() -> dict[str, Any]:
    """The ``register_device("dask", **arguments())`` call's arguments."""
    da = _import("dask.array")
    xp = _import("array_api_compat.dask.array")

    def from_cpu(array: np.ndarray, index: Any = None, *, chunks: Any = "auto") -> Any:
        return da.from_array(np.ascontiguousarray(array), chunks=chunks)

    def to_cpu(array: Any) -> np.ndarray:
        return np.asarray(array.compute())

    return {
        "array_type": da.Array,
        "namespace": xp,
        "library": da,
        "to_cpu": to_cpu,
        "from_cpu": from_cpu,
        "engine": lambda seed: da.random.default_rng(seed),
        "functions": {
            "sliding_window_view": da.lib.stride_tricks.sliding_window_view,
            "diag": da.diag,
            "concat": da.concatenate,
            "einsum": da.einsum,
            "dot": da.dot,
            "vdot": da.vdot,
            "tensordot": da.tensordot,
        },
    }

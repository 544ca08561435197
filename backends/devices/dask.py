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
import types
from typing import Any

import numpy as np

__all__ = ["INSTALL_HINT", "arguments"]

INSTALL_HINT = "pip install 'arraydispatch[dask]' (dask[array] and distributed)"


def _import(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise ImportError(
            f"device 'dask' needs {name}, which is not installed: {INSTALL_HINT}"
        ) from e


def _namespace(da: Any, compat: Any) -> types.ModuleType:
    """array_api_compat's dask namespace, with ``eye`` that gives non-square matrices
    (dask 2026.8's ``eye(2, M=4)`` builds a graph with a missing chunk, and compat's
    passes through to it), NumPy's float16, and a ``linalg.cholesky`` that gives L."""
    xp = types.ModuleType(compat.__name__)
    xp.__dict__.update(vars(compat))

    def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None,
            device: Any = None) -> Any:  # fmt: skip
        cols = n_rows if n_cols is None else n_cols
        rows = da.arange(n_rows, dtype=np.int64)[:, None] + k
        return (rows == da.arange(cols, dtype=np.int64)[None, :]).astype(dtype or np.float64)

    xp.eye = eye  # type: ignore[attr-defined]
    # Dask computes float16 as NumPy does; array_api_compat names the standard's dtypes
    # only.  With it the device holds float16 tensors, and autocast("dask") has its
    # default dtype (Note [Autocast on plug-in devices] in tensor._autocast).
    xp.float16 = np.float16  # type: ignore[attr-defined]
    # compat's cholesky reads dask's result as L, but dask.array.linalg.cholesky gives U
    # unless asked for lower=True (dask 2026.8, array_api_compat 1.16): ask.
    linalg = types.ModuleType(compat.linalg.__name__)
    linalg.__dict__.update(vars(compat.linalg))

    def cholesky(x: Any, /, *, upper: bool = False) -> Any:
        return da.linalg.cholesky(x, lower=not upper)

    linalg.cholesky = cholesky  # type: ignore[attr-defined]
    xp.linalg = linalg  # type: ignore[attr-defined]
    return xp


def _frompyfunc(da: Any) -> Any:
    """``frompyfunc`` whose blocks are arrays even when 0-d (NumPy's gives a bare float
    there, which dask's next blockwise step cannot ``astype``): erf, erfc, gelu."""

    def frompyfunc(fn: Any, nin: int, nout: int) -> Any:
        ufunc = np.frompyfunc(fn, nin, nout)

        def block(b: Any) -> Any:
            return np.asarray(ufunc(b), dtype=object)

        return lambda x: da.map_blocks(block, x, dtype=object)

    return frompyfunc


def arguments() -> dict[str, Any]:
    """The ``register_device("dask", **arguments())`` call's arguments."""
    da = _import("dask.array")
    xp = _namespace(da, _import("array_api_compat.dask.array"))

    def from_cpu(array: np.ndarray, index: Any = None, *, chunks: Any = "auto") -> Any:
        # A copy: the tensor must not see later writes to the caller's array (and
        # np.ascontiguousarray would make a 0-d array 1-d).
        return da.from_array(np.array(array, order="C", copy=True), chunks=chunks)

    def known_shape(array: Any) -> Any:
        """Sizes dask leaves unknown (nonzero, masks) computed, as a tensor needs a shape."""
        return array.compute_chunk_sizes()

    def to_cpu(array: Any) -> np.ndarray:
        return np.asarray(array.compute())

    return {
        "array_type": da.Array,
        "namespace": xp,
        "library": da,
        "to_cpu": to_cpu,
        "from_cpu": from_cpu,
        "engine": lambda seed: da.random.default_rng(seed),
        "known_shape": known_shape,
        "functions": {
            "sliding_window_view": da.lib.stride_tricks.sliding_window_view,
            "diag": da.diag,
            "concat": da.concatenate,
            "einsum": da.einsum,
            "dot": da.dot,
            "vdot": da.vdot,
            "tensordot": da.tensordot,
            "frompyfunc": _frompyfunc(da),
        },
    }

"""``cupy.linalg`` of the cudasim stand-in: NumPy's, on device arrays."""

from __future__ import annotations

import numpy as np

from tests.cudasim import _array

LinAlgError = np.linalg.LinAlgError
__all__ = ["LinAlgError"]
for _name in dir(np.linalg):
    _fn = getattr(np.linalg, _name)
    if not _name.startswith("_") and callable(_fn) and not isinstance(_fn, type):
        globals()[_name] = _array.wrap(_fn, f"linalg.{_name}")
        __all__.append(_name)

_np_solve = solve  # noqa: F821 (bound by the loop above)


def solve(a, b):  # type: ignore[no-untyped-def]
    """CuPy's solve: no broadcasting of batch dimensions (cupy/linalg/_solve.py's check)."""
    if not ((a.ndim == b.ndim or a.ndim == b.ndim + 1) and a.shape[:-1] == b.shape[: a.ndim - 1]):
        raise ValueError(
            "a must have (..., M, M) shape and b must have (..., M, K) for multidimensional b"
        )
    return _np_solve(a, b)

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

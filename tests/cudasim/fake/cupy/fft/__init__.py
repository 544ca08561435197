"""``cupy.fft`` of the cudasim stand-in: NumPy's, on device arrays."""

from __future__ import annotations

import numpy as np

from tests.cudasim import _array

__all__: list[str] = []
for _name in dir(np.fft):
    _fn = getattr(np.fft, _name)
    if not _name.startswith("_") and callable(_fn) and not isinstance(_fn, type):
        globals()[_name] = _array.wrap(_fn, f"fft.{_name}")
        __all__.append(_name)

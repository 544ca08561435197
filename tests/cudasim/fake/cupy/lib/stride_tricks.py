"""``cupy.lib.stride_tricks`` of the cudasim stand-in: views of device arrays."""

from __future__ import annotations

import numpy as np

from tests.cudasim import _array

as_strided = _array.wrap(np.lib.stride_tricks.as_strided, "lib.stride_tricks.as_strided")
sliding_window_view = _array.wrap(
    np.lib.stride_tricks.sliding_window_view, "lib.stride_tricks.sliding_window_view"
)

__all__ = ["as_strided", "sliding_window_view"]

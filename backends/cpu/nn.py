"""CPU kernels of the neural-network functions (NumPy arrays).

Imports: NumPy and ``backends.common``.

The kernels are written once in ``backends.common.nn`` and ``backends.common.conv``;
this module gives them NumPy's strided window view and the CPU random engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..common import conv, nn
from ..common.elementwise import Namespace, rename_all
from .creation import engine

__all__ = ["NN_FNS", "NS", "kernels"]

NS = Namespace(np.ndarray, __name__, asarray=np.asarray)


# ufunc.reduce directly: .max()/.sum() add a Python wrapper per call (ci/bench/ops.py: the
# cross_entropy row spends most of its time in small reductions).
NN_FNS: dict[str, Any] = {
    "engine": engine,
    "row_max": lambda a: np.maximum.reduce(a, axis=1, keepdims=True),
    "row_sum": lambda a: np.add.reduce(a, axis=1),
    "total": np.add.reduce,
}


def kernels() -> dict[str, Any]:
    """Every nn CPU kernel, by qualified overload name."""
    out: dict[str, Any] = {}
    out.update(nn.kernels(NS, NN_FNS))
    out.update(conv.kernels(NS, {"sliding_window_view": np.lib.stride_tricks.sliding_window_view}))
    return rename_all(out, __name__)

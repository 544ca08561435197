"""CUDA kernels of the neural-network functions (CuPy arrays).

Imports: CuPy and ``backends.common``.

The kernels are the shared ones (``backends.common.nn``, ``backends.common.conv``):
softmax, log_softmax and cross_entropy are written with row reductions (our
``reduce.cu`` row kernels) and elementwise steps (CuPy's kernels); conv2d
is im2col (CuPy's strided ``sliding_window_view``, a view) and one cuBLAS GEMM,
the same plan as PyTorch's fallback convolution without cuDNN.  Dropout draws from
the device's CuPy generator.  Fused softmax/cross-entropy kernels would save the
intermediate arrays' memory traffic; they are the first thing to write when the
GPU benchmark shows these rows dominating.
"""

from __future__ import annotations

from typing import Any

import cupy
from cupy.lib.stride_tricks import sliding_window_view

from ..common import conv, nn
from ..common.elementwise import Namespace, rename_all
from ..common.frontend import FrontEnd
from . import reduction
from .creation import engine

__all__ = ["kernels", "nn_fns"]


def nn_fns(front: FrontEnd) -> dict[str, Any]:
    """The functions the shared nn kernels take: our row reductions and the engine."""
    row_sum, row_max, row_min = (
        reduction.reduce_launcher(front.op_info(name)) for name in ("sum", "amax", "amin")
    )
    return {
        "engine": engine,
        "row_sum": lambda a: row_sum(a, (1,), False),
        "total": lambda a: row_sum(a, None, False),
        "max_all": lambda a: row_max(a, None, False),
        "min_all": lambda a: row_min(a, None, False),
    }


def kernels(front: FrontEnd) -> dict[str, Any]:
    """Every nn CUDA kernel, by qualified overload name."""
    ns = Namespace(cupy.ndarray, __name__, front, asarray=cupy.asarray)
    out: dict[str, Any] = {}
    out.update(nn.kernels(ns, nn_fns(front)))
    out.update(conv.kernels(ns, {"sliding_window_view": sliding_window_view}))
    return rename_all(out, __name__)

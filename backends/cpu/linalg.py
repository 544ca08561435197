"""CPU kernels of the matrix products: NumPy's matmul (BLAS for floats), dot, einsum.

Imports: NumPy and ``backends.common``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..common import decompositions, linalg
from ..common.elementwise import Namespace
from ..common.frontend import FrontEnd
from . import _blas

__all__ = ["PRODUCTS", "kernels"]

PRODUCTS: dict[str, Any] = {
    "matmul": np.matmul,
    "dot": np.dot,
    "vdot": np.vdot,
    "einsum": lambda eq, *arrays: np.einsum(eq, *arrays, optimize=len(arrays) > 2),
    "tensordot": np.tensordot,
    "gemm": _blas.gemm,  # Note [Linear by gemm]
}


def kernels(front: FrontEnd) -> dict[str, Any]:
    """Every matrix-product CPU kernel, by qualified overload name."""
    ns = Namespace(np.ndarray, __name__, front, asarray=np.asarray)
    return linalg.kernels(ns, PRODUCTS) | decompositions.kernels(ns, np.linalg, np.fft)

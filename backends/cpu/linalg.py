"""CPU kernels of the matrix products: NumPy's matmul (BLAS for floats), dot, einsum.

Imports: NumPy, ``dispatch`` and ``backends.common``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatch import Library

from ..common import linalg
from ..common.elementwise import Namespace

__all__ = ["PRODUCTS", "kernels", "register"]

NS = Namespace(np.ndarray, __name__, asarray=np.asarray)

PRODUCTS: dict[str, Any] = {
    "matmul": np.matmul,
    "dot": np.dot,
    "vdot": np.vdot,
    "einsum": lambda eq, *arrays: np.einsum(eq, *arrays, optimize=len(arrays) > 2),
    "tensordot": np.tensordot,
}


def kernels() -> dict[str, Any]:
    return linalg.kernels(NS, PRODUCTS)


def register(lib: Library) -> None:
    for qualname, kernel in kernels().items():
        lib.impl(qualname, kernel, "CPU")

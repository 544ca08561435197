"""CUDA kernels of the matrix products: cuBLAS through CuPy.

Imports: CuPy and ``backends.common``.

``cupy.matmul``/``dot``/``tensordot`` call cuBLAS GEMM (tensor cores for float16 and
bfloat16; float32 follows CuPy's default math mode); ``einsum`` is CuPy's, which
also reduces to GEMMs.  Writing our own GEMM would only lose to cuBLAS, so these
are library calls by choice.  The argument checks and dtype rules are shared
(``backends.common.linalg``).
"""

from __future__ import annotations

from typing import Any

import cupy

from ..common import decompositions, linalg
from ..common.elementwise import Namespace
from ..common.frontend import FrontEnd

__all__ = ["PRODUCTS", "kernels"]

PRODUCTS: dict[str, Any] = {
    "matmul": cupy.matmul,
    "dot": cupy.dot,
    "vdot": cupy.vdot,
    "einsum": cupy.einsum,
    "tensordot": cupy.tensordot,
}


def kernels(front: FrontEnd) -> dict[str, Any]:
    """Every matrix-product CUDA kernel, by qualified overload name."""
    ns = Namespace(cupy.ndarray, __name__, front, asarray=cupy.asarray)
    # cuBLAS's float16 GEMM accumulates in float32 (CuPy's default compute type), so
    # float16 products run as they are; bfloat16 ones are computed in float32 (CuPy's
    # bfloat16 GEMM is not relied on yet).
    accumulate = {k: v for k, v in linalg.accumulation(front).items() if k.name != "float16"}
    decomps = decompositions.kernels(ns, cupy.linalg, cupy.fft)
    return linalg.kernels(ns, PRODUCTS, accumulate) | decomps

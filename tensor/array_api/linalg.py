"""The standard's ``linalg`` extension over ``tt.linalg``'s operators and products.

Imports: ``tensor`` and ``._helpers``.  The decompositions return PyTorch's named
tuples, whose fields are the standard's (``eigenvalues``/``eigenvectors``, ``Q``/``R``,
``sign``/``logabsdet``, ``U``/``S``/``Vh``).
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import tensor as tt
from tensor._tensor import Tensor

from ._helpers import axes, promote

__all__ = [
    "cholesky",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
]


def cholesky(x: Tensor, /, *, upper: builtins.bool = False) -> Tensor:
    return tt.linalg.cholesky(x, upper=upper)


def det(x: Tensor, /) -> Tensor:
    return tt.linalg.det(x)


def eig(x: Tensor, /) -> Any:
    return tt.linalg.eig(x)


def eigvals(x: Tensor, /) -> Tensor:
    return tt.linalg.eigvals(x)


def eigh(x: Tensor, /) -> Any:
    return tt.linalg.eigh(x)


def eigvalsh(x: Tensor, /) -> Tensor:
    return tt.linalg.eigvalsh(x)


def inv(x: Tensor, /) -> Tensor:
    return tt.linalg.inv(x)


def matrix_power(x: Tensor, n: int, /) -> Tensor:
    return tt.linalg.matrix_power(x, n)


def matrix_rank(x: Tensor, /, *, rtol: Any = None) -> Tensor:
    return tt.linalg.matrix_rank(x, rtol=rtol)


def pinv(x: Tensor, /, *, rtol: Any = None) -> Tensor:
    return tt.linalg.pinv(x, rtol=rtol)


def qr(x: Tensor, /, *, mode: str = "reduced") -> Any:
    return tt.linalg.qr(x, mode)


def slogdet(x: Tensor, /) -> Any:
    return tt.linalg.slogdet(x)


def solve(x1: Tensor, x2: Tensor, /) -> Tensor:
    """The standard's rule: ``x2`` is a vector only when 1-D (PyTorch also takes a batch
    of vectors shaped like ``x1`` without its last dim; a leading 1 keeps that a matrix)."""
    x1, x2 = promote(x1, x2)
    if x2.ndim > 1 and x2.ndim == x1.ndim - 1:
        x2 = x2.unsqueeze(0)
    return tt.linalg.solve(x1, x2)


def svd(x: Tensor, /, *, full_matrices: builtins.bool = True) -> Any:
    return tt.linalg.svd(x, full_matrices)


def svdvals(x: Tensor, /) -> Tensor:
    return tt.linalg.svdvals(x)


def matmul(x1: Tensor, x2: Tensor, /) -> Tensor:
    from . import matmul as mm

    return mm(x1, x2)


def matrix_transpose(x: Tensor, /) -> Tensor:
    from . import matrix_transpose as mt

    return mt(x)


def tensordot(x1: Tensor, x2: Tensor, /, *, axes: Any = 2) -> Tensor:
    from . import tensordot as td

    return td(x1, x2, axes=axes)


def vecdot(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    from . import vecdot as vd

    return vd(x1, x2, axis=axis)


def diagonal(x: Tensor, /, *, offset: int = 0) -> Tensor:
    return tt.diagonal(x, offset, -2, -1)


def outer(x1: Tensor, x2: Tensor, /) -> Tensor:
    x1, x2 = promote(x1, x2)
    return tt.outer(x1, x2)


def trace(x: Tensor, /, *, offset: int = 0, dtype: Any = None) -> Tensor:
    d = tt.diagonal(x, offset, -2, -1)
    if dtype is None and x.dtype in (tt.int8, tt.int16, tt.int32, tt.uint8):
        dtype = tt.int64
    return tt.sum(d, -1, dtype=dtype)


def cross(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    x1, x2 = promote(x1, x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(f"cross: both arrays must have size 3 along axis {axis}")
    a = [tt.select(x1, axis, i) for i in range(3)]
    b = [tt.select(x2, axis, i) for i in range(3)]
    out = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    ndim = builtins.max(x1.ndim, x2.ndim)
    return tt.stack(out, axis if axis >= 0 else ndim + axis)


def vector_norm(
    x: Tensor,
    /,
    *,
    axis: Any = None,
    keepdims: builtins.bool = False,
    ord: Any = 2,  # noqa: A002
) -> Tensor:
    dims = axes(axis, x.ndim)
    if dims == ():
        return tt.abs(x) if x.dtype.is_complex or x.dtype.is_floating_point else tt.abs(x)
    return tt.linalg.vector_norm(x, ord, dims, keepdims)


def matrix_norm(
    x: Tensor,
    /,
    *,
    keepdims: builtins.bool = False,
    ord: Any = "fro",  # noqa: A002
) -> Tensor:
    """Frobenius and nuclear norms, the 1/inf norms (largest column/row sum of absolute
    values) and the 2-norms (largest/smallest singular value), over the last two axes."""
    if ord == "fro":
        out = tt.linalg.vector_norm(x, 2, (-2, -1), False)
    elif ord in ("nuc", 2, -2):
        s = tt.linalg.svdvals(x)
        out = tt.sum(s, -1) if ord == "nuc" else (tt.amax(s, -1) if ord == 2 else tt.amin(s, -1))
    elif ord in (1, -1, math.inf, -math.inf):
        sums = tt.sum(tt.abs(x), -2 if ord in (1, -1) else -1)
        out = tt.amax(sums, -1) if ord in (1, math.inf) else tt.amin(sums, -1)
    else:
        raise ValueError(f"matrix_norm: ord {ord!r} is not 'fro', 'nuc', 1, -1, 2, -2, inf or -inf")
    return out.unsqueeze(-1).unsqueeze(-1) if keepdims else out

"""``tt.linalg``: linear-algebra functions (PyTorch's ``torch.linalg`` names).

Imports: ``tensor._generated`` (the functions are generated from the operator table) and
the package's operator functions for the compositions.

>>> import tensor as tt
>>> tt.linalg.vector_norm(tt.tensor([3.0, 4.0])).item()
5.0
>>> tt.linalg.inv(tt.tensor([[2.0, 0.0], [0.0, 4.0]])).tolist()
[[0.5, 0.0], [0.0, 0.25]]

The decompositions and solvers are operators (``core::linalg_svd``...: library LAPACK
calls, Note [Library decompositions] in ``backends.common.decompositions``);
``matrix_power``, ``pinv`` and ``matrix_rank`` are compositions of them, as in PyTorch.
"""

from __future__ import annotations

from typing import Any

from ._generated import FUNCTIONS

__all__ = [
    "cholesky",
    "det",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "matrix_power",
    "matrix_rank",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "vecdot",
    "vector_norm",
]

vector_norm = FUNCTIONS["linalg.vector_norm"]
cholesky = FUNCTIONS["linalg.cholesky"]
det = FUNCTIONS["linalg.det"]
eig = FUNCTIONS["linalg.eig"]
eigvals = FUNCTIONS["linalg.eigvals"]
eigh = FUNCTIONS["linalg.eigh"]
eigvalsh = FUNCTIONS["linalg.eigvalsh"]
inv = FUNCTIONS["linalg.inv"]
qr = FUNCTIONS["linalg.qr"]
slogdet = FUNCTIONS["linalg.slogdet"]
solve = FUNCTIONS["linalg.solve"]
svd = FUNCTIONS["linalg.svd"]
svdvals = FUNCTIONS["linalg.svdvals"]
vecdot = FUNCTIONS["linalg.vecdot"]


def matrix_power(A: Any, n: int) -> Any:  # noqa: N803
    """``torch.linalg.matrix_power``: ``A`` times itself ``n`` times, by squaring (``inv``
    first for negative ``n``; the identity for 0)."""
    import tensor as tt

    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"linalg.matrix_power: A must be batches of square matrices, got shape {tuple(A.shape)}"
        )
    if n == 0:
        eye = tt.eye(A.shape[-1], dtype=A.dtype, device=A.device)
        return tt.broadcast_to(eye, A.shape).clone()
    if n < 0:
        A, n = inv(A), -n  # noqa: N806
    result = None
    base = A
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return result if result is not A else A.clone()


def pinv(A: Any, *, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Any:  # noqa: N803
    """``torch.linalg.pinv``: from the SVD, singular values at or below the tolerance
    (``max(atol, rtol * largest)``; ``rtol`` defaults to ``eps * max(m, n)``) dropped."""
    import tensor as tt

    u, sv, vh = svd(A, full_matrices=False)
    keep = sv > _tolerance(A, sv, atol, rtol)
    inv_s = tt.where(keep, 1 / tt.where(keep, sv, 1), 0)
    return (vh.mT.conj() * inv_s.unsqueeze(-2).to(A.dtype)) @ u.mT.conj()


def matrix_rank(A: Any, *, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Any:  # noqa: N803
    """``torch.linalg.matrix_rank``: the singular values above the tolerance, counted."""
    import tensor as tt

    sv = svdvals(A)
    return tt.sum(sv > _tolerance(A, sv, atol, rtol), -1)


def _tolerance(A: Any, S: Any, atol: Any, rtol: Any) -> Any:  # noqa: N803
    import tensor as tt

    # tensor tolerances are per matrix (shaped like the batch): one per row of S
    if isinstance(rtol, tt.Tensor):
        rtol = rtol.unsqueeze(-1)
    if isinstance(atol, tt.Tensor):
        atol = atol.unsqueeze(-1)
    if rtol is None:
        rtol = tt.finfo(S.dtype).eps * max(A.shape[-2:]) if atol is None or atol == 0 else 0.0
    largest = tt.amax(S, -1, True) if S.shape[-1] else tt.zeros((*S.shape[:-1], 1), dtype=S.dtype)
    cutoff = largest * rtol
    if atol is not None:
        cutoff = tt.maximum(
            cutoff, atol if not isinstance(atol, (int, float)) else tt.full_like(cutoff, atol)
        )
    return cutoff

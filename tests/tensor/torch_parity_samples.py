"""Samples for the parity sweep (``test_torch_parity.py``): OPS.md's operator names and one
or more small calls of each, written once for ``tensor`` and ``torch``.

Imports: NumPy only (the test converts the samples for each library).

``OPS_MD`` is the operator list of OPS.md, section by section, as written there (plus
the in-place primitives' base names: ``copy`` for ``copy_``).  ``SAMPLES[name]`` holds
the calls that exercise every spelling of ``name``: a ``Sample``'s first argument is the
receiver of the method forms (``self_index`` says otherwise), NumPy arrays become
tensors of either library, ``Dt("float64")`` a dtype.  ``kinds`` limits a sample to some
spellings (``torch.embedding`` takes ``weight`` first, ``F.embedding`` takes ``input``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["OPS_MD", "SAMPLES", "Dt", "Sample"]

OPS_MD = {
    "elementwise, binary": """add sub mul div floor_divide remainder fmod pow maximum minimum
        atan2 hypot eq ne lt le gt ge logical_and logical_or logical_xor bitwise_and bitwise_or
        bitwise_xor bitwise_left_shift bitwise_right_shift isclose where lerp clamp addcmul addcdiv""",
    "elementwise, unary": """neg abs sign exp exp2 expm1 log log2 log10 log1p sqrt rsqrt square
        reciprocal sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh sigmoid relu gelu
        silu softplus erf erfc floor ceil round trunc frac logical_not bitwise_not isnan isinf
        isfinite nan_to_num""",
    "reductions and scans": """sum mean prod amax amin max min argmax argmin var std all any
        logsumexp cumsum cumprod norm count_nonzero""",
    "linear algebra": "matmul mm bmm addmm dot vdot outer einsum linalg.vector_norm tensordot",
    "shape, views and indexing": """reshape view flatten unflatten squeeze unsqueeze permute
        transpose t mT expand broadcast_to contiguous clone cat stack split chunk unbind flip roll
        narrow repeat tile tril triu diagonal diag __getitem__ __setitem__ index_select gather
        scatter scatter_add masked_fill masked_select nonzero take_along_dim sort argsort topk
        unique""",
    "neural-network functions": """softmax log_softmax linear layer_norm dropout embedding
        cross_entropy mse_loss binary_cross_entropy_with_logits conv2d max_pool2d avg_pool2d""",
    "in-place and out= variants": "add sub mul div clamp zero fill copy masked_fill index_put",
    "conversions and creation": """to type_as empty zeros ones full arange linspace eye rand randn
        randint normal empty_like zeros_like ones_like full_like rand_like randn_like
        from_dlpack""",
}


@dataclass(frozen=True)
class Dt:
    """A dtype argument, by name (``getattr(lib, name)``)."""

    name: str


@dataclass
class Sample:
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    kinds: frozenset[str] | None = None  # spelling kinds it serves (None: all)
    self_index: int = 0  # the argument that is the receiver of the method forms
    values: bool = True  # False: random results, compare dtype and shape only


def S(*args: Any, kinds: str = "", self_index: int = 0, values: bool = True, **kw: Any) -> Sample:
    return Sample(args, kw, frozenset(kinds.split()) if kinds else None, self_index, values)


_rng = np.random.default_rng(20250)


def _u(lo: float, hi: float, *shape: int) -> np.ndarray:
    return _rng.uniform(lo, hi, shape).astype(np.float32)


A = _u(0.1, 0.9, 2, 3)  # in every unary op's domain but acosh's
B = _u(0.1, 0.9, 2, 3)
N = _u(-2.0, 2.0, 2, 3)  # signed
P = _u(1.1, 3.0, 2, 3)
A3 = _u(-1.0, 1.0, 2, 3, 4)
M23, M34, M24 = _u(-1, 1, 2, 3), _u(-1, 1, 3, 4), _u(-1, 1, 2, 4)
B233, B234 = _u(-1, 1, 2, 3, 3), _u(-1, 1, 2, 3, 4)
SQ = _u(-1, 1, 3, 3)
V, W = _u(-1, 1, 3), _u(-1, 1, 3)
I = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int64)  # noqa: E741
J = np.array([[1, 0, 2], [3, 1, 2]], dtype=np.int64)
MASK = np.array([[True, False, True], [False, False, True]])
MASK2 = np.array([[True, True, False], [False, True, True]])
SPECIAL = np.array([[np.nan, np.inf, -np.inf], [1.0, -2.5, 0.0]], dtype=np.float32)
IDX = np.array([2, 0], dtype=np.int64)
ROW = np.array([1], dtype=np.int64)
TWO = np.array(2.0, dtype=np.float32)  # a 0-d tensor argument
IDX2 = np.array([[0, 2, 1], [1, 1, 0]], dtype=np.int64)
REP = np.array([[3, 1, 3, 2], [1, 1, 3, 2], [3, 1, 3, 2]], dtype=np.int64)
EMPTY3 = np.zeros((0, 3, 4), dtype=np.float32)
ONES = _u(-1, 1, 2, 1, 3)
IMG, KER = _u(-1, 1, 2, 3, 6, 6), _u(-1, 1, 4, 3, 3, 3)
LOGITS, TARGET = _u(-2, 2, 4, 5), np.array([1, 0, 4, 2], dtype=np.int64)
PROB = _u(0, 1, 2, 3)
EMB = _u(-1, 1, 5, 3)


def _unary() -> list[Sample]:
    return [S(A), S(I), S(MASK), S(np.float64(0.5) * np.ones((), dtype=np.float64))]


# Unary operators defined on (0.1, 0.9), the range of A.
_UNARY_01 = """neg abs exp exp2 expm1 log log2 log10 log1p sqrt rsqrt square reciprocal sin cos tan
    asin acos atan sinh cosh tanh asinh atanh sigmoid erf erfc trunc frac"""


def _binary(*extra: Sample) -> list[Sample]:
    return [S(A, B), S(A, 2.0), S(N, P), S(I, 2.5), S(I, A), S(MASK, I), S(A, TWO), *extra]


def _compare() -> list[Sample]:
    return [S(A, B), S(A, 0.5), S(I, J), S(I, 2.5), S(MASK, I)]


def _bitwise() -> list[Sample]:
    return [S(I, J), S(I, 3), S(MASK, MASK2)]


SAMPLES: dict[str, list[Sample]] = {
    # -- elementwise, binary
    "add": _binary(S(A, B, alpha=2.0), S(I, J)),
    "sub": _binary(S(A, B, alpha=2.0), S(I, J)),
    "mul": _binary(S(I, J)),
    "div": _binary(S(N, P, rounding_mode="floor"), S(N, P, rounding_mode="trunc"), S(I, J + 1)),
    "floor_divide": [S(N, P), S(I, J + 1), S(N, 2.0)],
    "remainder": [S(N, P), S(I, J + 1), S(N, 1.5)],
    "fmod": [S(N, P), S(I, J + 1), S(N, 1.5)],
    "pow": [S(A, B), S(A, 2.0), S(I, J), S(2.0, A, kinds="torch"), S(I, -1), S(I, 0.5)],
    "maximum": [S(N, A)],
    "minimum": [S(N, A)],
    "atan2": [S(N, P)],
    "hypot": [S(N, P)],
    **{name: _compare() for name in ("eq", "ne", "lt", "le", "gt", "ge")},
    **{name: [S(N, A), S(MASK, MASK2)] for name in ("logical_and", "logical_or", "logical_xor")},
    **{name: _bitwise() for name in ("bitwise_and", "bitwise_or", "bitwise_xor")},
    "bitwise_left_shift": [S(I, J), S(I, 2)],
    "bitwise_right_shift": [S(I * 8, J), S(I * 8, 2)],
    "isclose": [S(A, A + 1e-9), S(A, B, rtol=0.5, atol=0.2), S(SPECIAL, SPECIAL, equal_nan=True)],
    "where": [S(MASK, A, B, self_index=1), S(MASK, A, 0.5, self_index=1)],
    "lerp": [S(A, B, 0.3), S(A, B, P)],
    "addcmul": [S(N, A, B), S(N, A, P, value=0.5), S(I, J, J, value=2)],
    "addcdiv": [S(N, A, P), S(N, A, P, value=-0.5)],
    "clamp": [S(N, -0.5, 0.5), S(N, min=0.0), S(N, max=0.2), S(N, A - 1, A)],
    # -- elementwise, unary
    **{name: _unary() for name in _UNARY_01.split()},
    "acosh": [S(P)],
    "sign": [S(N)],
    "relu": [S(N)],
    "gelu": [S(N), S(N, approximate="tanh")],
    "silu": [S(N)],
    "softplus": [S(N), S(N, beta=2.0, threshold=1.0)],
    "floor": [S(N)],
    "ceil": [S(N)],
    "round": [S(N * 3), S(N * 3, decimals=1)],
    "logical_not": [S(N), S(MASK)],
    "bitwise_not": [S(I), S(MASK)],
    "isnan": [S(SPECIAL)],
    "isinf": [S(SPECIAL)],
    "isfinite": [S(SPECIAL)],
    "nan_to_num": [S(SPECIAL), S(SPECIAL, nan=1.0, posinf=2.0, neginf=-2.0)],
    # -- reductions and scans
    "sum": [
        S(N), S(N, 1), S(N, dim=(0, 1), keepdim=True), S(I, dtype=Dt("float64")), S(MASK),
        S(I, dim=()), S(TWO),
    ],
    "mean": [S(N), S(N, 1), S(N, dim=0, keepdim=True), S(I), S(I, dtype=Dt("float64"))],
    "prod": [S(N), S(N, 1), S(N, dim=0, keepdim=True), S(I)],
    "amax": [S(N), S(N, 1), S(N, dim=(0, 1), keepdim=True)],
    "amin": [S(N), S(N, 1)],
    "max": [S(N), S(N, 1), S(N, dim=0, keepdim=True), S(N, A)],
    "min": [S(N), S(N, 1), S(N, dim=0, keepdim=True), S(N, A)],
    "argmax": [S(N), S(N, 1), S(N, dim=0, keepdim=True)],
    "argmin": [S(N), S(N, 1)],
    "var": [S(N), S(N, 1), S(N, dim=1, correction=0), S(N, 1, keepdim=True)],
    "std": [S(N), S(N, 1), S(N, dim=1, correction=0)],
    "all": [S(MASK), S(MASK, 1), S(N, dim=0, keepdim=True)],
    "any": [S(MASK), S(MASK, 1), S(N, dim=0, keepdim=True)],
    "logsumexp": [S(N, 1), S(N, dim=(0, 1), keepdim=True)],
    "cumsum": [S(N, 1), S(I, dim=0)],
    "cumprod": [S(N, 1), S(I, dim=0)],
    "norm": [S(N), S(N, 1), S(N, p=1, dim=1), S(N, p="fro"), S(N, p=float("inf"), dim=0)],
    "count_nonzero": [S(MASK), S(MASK, 1), S(J, dim=0)],
    # -- linear algebra
    "matmul": [S(M23, M34), S(B233, B234), S(V, W)],
    "mm": [S(M23, M34)],
    "bmm": [S(B233, B234)],
    "addmm": [S(M24, M23, M34), S(M24, M23, M34, beta=0.5, alpha=2.0)],
    "dot": [S(V, W)],
    "vdot": [S(V, W)],
    "outer": [S(V, W)],
    "einsum": [S("ij,jk->ik", M23, M34), S("ii", SQ), S("bij,bjk", B233, B234)],
    "linalg.vector_norm": [S(N), S(N, 1), S(N, ord=1, dim=0, keepdim=True)],
    "tensordot": [S(M23, M34, 1), S(M23, M23, dims=2), S(M23, M34, dims=([1], [0]))],
    # -- shape, views and indexing
    "reshape": [S(A3, (6, 4)), S(A3, (-1,)), S(A3, shape=(4, 6))],
    "view": [S(A3, (6, 4)), S(A3, 4, 6), S(A3, size=(24,))],
    "flatten": [S(A3), S(A3, 1), S(A3, start_dim=0, end_dim=1), S(EMPTY3, 1), S(EMPTY3)],
    "unflatten": [S(A3, 2, (2, 2)), S(A3, -1, (2, -1))],
    "squeeze": [S(ONES), S(ONES, 1), S(ONES, (0, 1))],
    "unsqueeze": [S(A, 0), S(A, -1)],
    "permute": [S(A3, (2, 0, 1)), S(A3, dims=(1, 0, 2))],
    "transpose": [S(A3, 0, 2)],
    "t": [S(A)],
    "mT": [S(A3)],
    "expand": [S(ONES, 2, 4, 3), S(ONES, (2, -1, 3)), S(ONES, size=(3, 2, 2, 3))],
    "broadcast_to": [S(ONES, (2, 4, 3))],
    "contiguous": [S(A)],
    "clone": [S(A)],
    "cat": [S([A, B]), S([A, B], 1), S((A, N), dim=-1)],
    "stack": [S([A, B]), S([A, B], dim=2)],
    "split": [S(A3, 2, 2), S(A3, [1, 3], dim=2)],
    "chunk": [S(A3, 2, 2)],
    "unbind": [S(A3), S(A3, 1)],
    "flip": [S(A3, (0,)), S(A3, [0, 2]), S(A3, dims=(1,))],
    "roll": [S(A3, 1), S(A3, 1, 2), S(A3, shifts=(1, 2), dims=(0, 1))],
    "narrow": [S(A3, 2, 1, 2)],
    "repeat": [S(A, 2, 1), S(A, (1, 2, 2)), S(A, repeats=(2, 2))],
    "tile": [S(A, (2,)), S(A, (2, 1, 2)), S(A, dims=(2, 1))],
    "tril": [S(SQ), S(SQ, 1), S(SQ, diagonal=-1)],
    "triu": [S(SQ), S(SQ, 1), S(SQ, diagonal=-1)],
    "diagonal": [S(A3), S(A3, 1, 1, 2)],
    "diag": [S(V), S(SQ), S(SQ, 1)],
    "__getitem__": [
        S(A3, (0, slice(None, None, 2))), S(A3, MASK), S(A3, IDX), S(A3, (Ellipsis, None, 1)),
    ],
    "__setitem__": [S(A3, (0, 1), 5.0), S(A3, MASK, 0.0), S(A3, IDX, A3[0])],
    "index_select": [S(A, 1, IDX)],
    "gather": [S(A, 1, IDX2)],
    "scatter": [S(A, 1, IDX2, B), S(A, 1, IDX2, 0.5), S(A, 1, IDX2, B, reduce="add")],
    "scatter_add": [S(A, 1, IDX2, B)],
    "masked_fill": [S(A, MASK, 0.5), S(A, MASK, TWO)],
    "masked_select": [S(A, MASK)],
    "nonzero": [S(MASK), S(MASK, as_tuple=True)],
    "take_along_dim": [S(A, IDX2, 1), S(A, IDX2[:1].reshape(-1)[:2])],
    "sort": [S(N), S(N, 0), S(N, dim=1, descending=True), S(REP, stable=True)],
    "argsort": [S(N), S(N, 0, descending=True), S(REP, stable=True)],
    "topk": [S(N, 2), S(N, 1, dim=0, largest=False)],
    "unique": [
        S(REP), S(REP, sorted=True), S(REP, return_inverse=True), S(REP, return_counts=True),
        S(REP, True, True, True), S(REP, return_inverse=True, return_counts=True, dim=0),
        S(REP, dim=1), S(REP, return_counts=True, dim=1), S(REP, sorted=False),
        S(REP, False, True, True), S(REP, sorted=False, return_inverse=True, dim=0),
    ],
    # -- neural-network functions
    "softmax": [S(N, 1), S(N, dim=0), S(N, 1, dtype=Dt("float64"))],
    "log_softmax": [S(N, 1), S(N, dim=0)],
    "linear": [S(M23, M34.T), S(M23, M34.T, V[:1].repeat(4))],
    "layer_norm": [S(N, (3,)), S(N, [3], V, W, 1e-3)],
    "dropout": [
        S(N, 0.5, True, kinds="torch", values=False), S(N, 0.0, False, kinds="torch"),
        S(N, kinds="F", values=False), S(N, p=0.3, training=False, kinds="F"),
    ],
    "embedding": [S(EMB, IDX, kinds="torch"), S(IDX2, EMB, kinds="F")],
    "cross_entropy": [S(LOGITS, TARGET), S(LOGITS, TARGET, reduction="sum")],
    "mse_loss": [S(A, B), S(A, B, reduction="none")],
    "binary_cross_entropy_with_logits": [
        S(N, PROB), S(N, PROB, reduction="sum", kinds="F"), S(N, PROB, A, kinds="F"),
        S(N, PROB, None, None, 2, kinds="torch"), S(N, PROB, A, B[0], 1, kinds="torch"),
        S(N, PROB, reduction=0, kinds="torch"), S(N, PROB, pos_weight=B[0], kinds="torch"),
    ],
    "conv2d": [S(IMG, KER), S(IMG, KER, None, 2, 1), S(IMG, KER, padding="same")],
    "max_pool2d": [S(IMG, 2), S(IMG, 3, 2, 1)],
    "avg_pool2d": [S(IMG, 2), S(IMG, 3, 2, 1)],
    # -- in-place primitives
    "zero": [S(A)],
    "fill": [S(A, 0.5), S(A, TWO)],
    "copy": [S(A, B), S(A, V)],
    "index_put": [S(A, (ROW,), V), S(A, (ROW, IDX), TWO, True), S(A, [MASK], TWO)],
    # -- conversions and creation
    "to": [S(A, Dt("float64")), S(A, "cpu"), S(A, "cpu", Dt("int64")), S(A, I), S(A, copy=True)],
    "type_as": [S(A, I)],
    "empty": [S(2, 3, values=False), S((2, 3), dtype=Dt("int64"), values=False)],
    "zeros": [S(2, 3), S((2, 3), dtype=Dt("int64"))],
    "ones": [S(2, 3), S([2, 3], dtype=Dt("bool"))],
    "full": [S((2, 3), 1.5), S((2,), 7), S((2,), True)],
    "arange": [S(5), S(1, 4, 0.5), S(0, 10, 3, dtype=Dt("float32"))],
    "linspace": [S(0, 1, 5), S(-1.0, 1.0, steps=4, dtype=Dt("float64"))],
    "eye": [S(3), S(2, 3), S(2, dtype=Dt("int64"))],
    "rand": [S(2, 3, values=False), S((2, 3), dtype=Dt("float64"), values=False)],
    "randn": [S(2, 3, values=False)],
    "randint": [S(5, (2, 3), values=False), S(1, 5, (2,), values=False)],
    "normal": [
        S(A, values=False, kinds="torch"), S(0.0, 1.0, (2, 3), values=False, kinds="torch"),
        S(A, 2.0, values=False, kinds="torch"),
        S(A, values=False, kinds="Tensor"), S(A, 1.0, 0.5, values=False, kinds="Tensor"),
    ],
    "empty_like": [S(A, values=False)],
    "zeros_like": [S(A), S(A, dtype=Dt("int64"))],
    "ones_like": [S(A)],
    "full_like": [S(A, 2.5), S(I, 3)],
    "rand_like": [S(A, values=False)],
    "randn_like": [S(A, values=False)],
    "from_dlpack": [S(A)],
}  # fmt: skip

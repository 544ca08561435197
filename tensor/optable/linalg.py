"""Rows of the matrix products, with their derivatives.

Imports: this package's ``_grad`` and ``_row``.  Formulas first, rows below them.
Gradients an argument does not need are not computed (they are the expensive
products).  ``einsum``'s formula is one ``einsum`` per operand: the output's
gradient contracted with the other operands, with ones for labels only that
operand has (summed in the forward) and identity matrices for labels it repeats
(diagonals); ``tensordot`` is that with the equation it stands for.
``linalg_vector_norm`` is a reduction (``reduction``).
"""

from __future__ import annotations

import string
from typing import Any

from .._dtype import INT, dtype, get_default_dtype
from . import _grad, _linalg_grad
from ._row import (
    ALL,
    BOOLS,
    COMPLEXES,
    FLOATS,
    INEXACT,
    INTS,
    NO_BOOL,
    InPlace,
    NoFormula,
    OpInfo,
    same,
)

__all__ = ["ROWS"]

core = _grad.core
needs = _grad.needs_grad

# PyTorch runs the matrix products in lower precision under autocast, on both devices.
_LOWER = {"cpu": "lower_precision_fp", "cuda": "lower_precision_fp"}


def _mT(x: Any) -> Any:
    return core.transpose.int(x, -2, -1)


# Note [Transposed products' gradients]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# PyTorch's mm_mat1_backward / mm_mat2_backward: when an operand is the transpose of a
# contiguous matrix (F.linear's ``w.t()``), its gradient is computed transposed,
# ``(g^T @ mat1)^T`` instead of ``mat1^T @ g``, so that the transpose's own backward
# turns it back into a contiguous matrix: the weight's gradient then has the weight's
# layout and AccumulateGrad stores it instead of copying it (Note [Stealing gradients]).
# Same products, summed in the order PyTorch's are.
def _transposed(t: Any) -> bool:
    """A matrix that is the transpose of a contiguous one (strides (1, rows))."""
    # The array's byte strides, not ``t.stride()`` (a tuple built in Python): this runs
    # for every matrix product's backward.  An array without strides (Meta) is not one.
    array = t._array
    strides = getattr(array, "strides", None)
    if strides is None or len(strides) != 2:
        return False
    rows, cols = array.shape
    item = array.itemsize
    return rows > 1 and cols > 1 and strides[0] == item and strides[1] == rows * item


def _mat1_grad(g: Any, m1: Any, m2: Any) -> Any:
    if _transposed(m1):
        return _mT(core.mm(m2, _mT(g)))
    return core.mm(g, _mT(m2))


def _mat2_grad(g: Any, m1: Any, m2: Any) -> Any:
    if _transposed(m2):
        return _mT(core.mm(_mT(g), m1))
    return core.mm(_mT(m1), g)


@_grad.saves("self:other", "other:self")
@_grad.holomorphic
def _matmul(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    if x.ndim == 1 and y.ndim == 1:  # dot
        return (g * y if needs(x) else None), (g * x if needs(y) else None)
    if x.ndim == 2 and y.ndim == 2:  # PyTorch's matmul is mm here
        gx = _mat1_grad(g, x, y) if needs(x) else None
        gy = _mat2_grad(g, x, y) if needs(y) else None
        return gx, gy
    # Promote vectors to matrices as matmul does, then reduce broadcast batch dims.
    x2 = core.unsqueeze(x, 0) if x.ndim == 1 else x
    y2 = core.unsqueeze(y, -1) if y.ndim == 1 else y
    g2 = core.unsqueeze(g, -2) if x.ndim == 1 else g
    g2 = core.unsqueeze(g2, -1) if y.ndim == 1 else g2
    gx = gy = None
    if needs(x):
        gx = core.reshape(_grad.sum_to(core.matmul(g2, _mT(y2)), x2), list(x.shape))
    if needs(y):
        gy = core.reshape(_grad.sum_to(core.matmul(_mT(x2), g2), y2), list(y.shape))
    return gx, gy


@_grad.saves("self:mat2", "mat2:self")
@_grad.holomorphic
def _mm(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["mat2"]
    return (
        _mat1_grad(g, x, y) if needs(x) else None,
        _mat2_grad(g, x, y) if needs(y) else None,
    )


@_grad.saves("self:mat2", "mat2:self")
@_grad.holomorphic
def _bmm(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["mat2"]
    return (
        core.bmm(g, _mT(y)) if needs(x) else None,
        core.bmm(_mT(x), g) if needs(y) else None,
    )


@_grad.saves("mat1:mat2", "mat2:mat1")
@_grad.holomorphic
def _addmm(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    s, m1, m2, beta, alpha = a["self"], a["mat1"], a["mat2"], a["beta"], a["alpha"]
    gs = _grad.grad_for(g if beta == 1 else g * beta, s) if needs(s) else None
    gm = g if alpha == 1 else g * alpha
    return (
        gs,
        _mat1_grad(gm, m1, m2) if needs(m1) else None,
        _mat2_grad(gm, m1, m2) if needs(m2) else None,
    )


@_grad.saves("self:tensor", "tensor:self", "self:other", "other:self")
@_grad.holomorphic
def _dot(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["tensor" if "tensor" in a else "other"]
    return (g * y if needs(x) else None), (g * x if needs(y) else None)


@_grad.saves("self:other", "other:self")
def _vdot(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    # sum(conj(x) * y): antiholomorphic in x (PyTorch's ``self: grad.conj() * other``)
    x, y = a["self"], a["other"]
    gx = core.conj(g) if needs(x) and g.dtype.is_complex else g
    return (gx * y if needs(x) else None), (g * x if needs(y) else None)


@_grad.saves("self:vec2", "vec2:self")
@_grad.holomorphic
def _outer(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["vec2"]
    return (
        core.matmul(g, y) if needs(x) else None,
        core.matmul(x, g) if needs(y) else None,
    )


# -- einsum, tensordot --------------------------------------------------------------------------
def _explicit(equation: str, xs: list[Any]) -> tuple[list[str], str]:
    """The operands' and output's labels, with ``...`` spelled out in fresh letters and
    an implicit output (no ``->``) made explicit."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    ins = lhs.split(",")
    used = set(eq)
    fresh = [c for c in string.ascii_letters if c not in used]
    ell = max((x.ndim - len(s) + 3 for s, x in zip(ins, xs, strict=True) if "..." in s), default=0)
    ell_labels = "".join(fresh[:ell])
    ins = [
        s.replace("...", ell_labels[ell - (x.ndim - len(s) + 3) :]) if "..." in s else s
        for s, x in zip(ins, xs, strict=True)
    ]
    if arrow:
        rhs = rhs.replace("...", ell_labels)
    else:
        counts = {c: lhs.count(c) for c in set(lhs) if c.isalpha()}
        rhs = ell_labels + "".join(sorted(c for c, n in counts.items() if n == 1))
    return ins, rhs


def _einsum_grads(g: Any, ins: list[str], rhs: str, xs: list[Any]) -> tuple[Any, ...]:
    sizes: dict[str, int] = {}
    for labels, x in zip(ins, xs, strict=True):
        for c, n in zip(labels, x.shape, strict=True):
            if n != 1 or c not in sizes:
                sizes[c] = n
    grads: list[Any] = []
    for i, (labels, x) in enumerate(zip(ins, xs, strict=True)):
        if not needs(x):
            grads.append(None)
            continue
        others = [(s, y) for j, (s, y) in enumerate(zip(ins, xs, strict=True)) if j != i]
        terms = [rhs] + [s for s, _ in others]
        operands = [g] + [y for _, y in others]
        available = set("".join(terms))
        # Labels only this operand has were summed: broadcast back with ones.
        lonely = "".join(dict.fromkeys(c for c in labels if c not in available))
        if lonely:
            terms.append(lonely)
            operands.append(core.ones([x.shape[labels.index(c)] for c in lonely], dtype=g.dtype,
                                      device=g.device))  # fmt: skip
        # Repeated labels (a diagonal): a fresh label per repeat, tied by an identity matrix.
        spare = iter(c for c in string.ascii_letters if c not in set("".join(ins) + rhs))
        target = ""
        for c in labels:
            if c in target:
                fresh = next(spare)
                terms.append(c + fresh)
                n = x.shape[labels.index(c)]
                operands.append(core.eye(n, n, dtype=g.dtype, device=g.device))
                target += fresh
            else:
                target += c
        grad = core.einsum(",".join(terms) + "->" + target, operands)
        # Dims this operand broadcast (size 1 here, larger elsewhere) are summed back.
        ones = [k for k, (c, n) in enumerate(zip(labels, x.shape, strict=True))
                if n == 1 and sizes[c] != 1]  # fmt: skip
        if ones:
            grad = core.sum(grad, ones, True)
        grads.append(grad)
    return tuple(grads)


@_grad.saves("tensors")
@_grad.holomorphic
def _einsum(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    xs = list(a["tensors"])
    ins, rhs = _explicit(a["equation"], xs)
    return _einsum_grads(g, ins, rhs, xs)


@_grad.saves("self", "other")
@_grad.holomorphic
def _tensordot(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, y = a["self"], a["other"]
    dx = [d % x.ndim for d in a["dims_self"]]
    dy = [d % y.ndim for d in a["dims_other"]]
    letters = iter(string.ascii_letters)
    lx = [next(letters) for _ in range(x.ndim)]
    ly = [next(letters) for _ in range(y.ndim)]
    for i, j in zip(dx, dy, strict=True):
        ly[j] = lx[i]
    rhs = "".join(c for k, c in enumerate(lx) if k not in dx)
    rhs += "".join(c for k, c in enumerate(ly) if k not in dy)
    return _einsum_grads(g, ["".join(lx), "".join(ly)], rhs, [x, y])


@_grad.saves("x:y", "y:x")
def _vecdot(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    # out = sum(conj(x) * y, dim): dL/dy = g x, dL/dx = conj(g) y, PyTorch's complex
    # convention (as inv/det/solve below; Note [Decomposition derivatives]), with g laid
    # back along the summed dim and summed to each argument's shape.
    x, y = a["x"], a["y"]
    ndim = max(x.ndim, y.ndim)
    shape = [max(p, q) if 0 not in (p, q) else 0 for p, q in zip(
        [1] * (ndim - x.ndim) + list(x.shape), [1] * (ndim - y.ndim) + list(y.shape), strict=True
    )]  # fmt: skip
    # g along the summed dim again, at its full size (the other operand may lack it)
    gu = core.expand(core.unsqueeze(g, _grad.wrap_dim(a["dim"], ndim)), shape) if ndim else g
    cplx = x.dtype.is_complex
    gx = gy = None
    if needs(x):
        gx = _grad.grad_for((core.conj(gu) if cplx else gu) * y, x)
    if needs(y):
        gy = _grad.grad_for(gu * x, y)
    return gx, gy


ROWS: tuple[OpInfo, ...] = (
    OpInfo(
        "matmul", ("matmul(Tensor self, Tensor other) -> Tensor",), "linalg", NO_BOOL,
        dunders=("__matmul__",), grad=_matmul, autocast=_LOWER,
    ),
    OpInfo("mm", ("mm(Tensor self, Tensor mat2) -> Tensor",), "linalg", NO_BOOL, grad=_mm, autocast=_LOWER),
    OpInfo("bmm", ("bmm(Tensor self, Tensor mat2) -> Tensor",), "linalg", NO_BOOL, grad=_bmm, autocast=_LOWER),
    OpInfo(
        "addmm",
        ("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",),
        "linalg", NO_BOOL, grad=_addmm, autocast=_LOWER, inplace=InPlace(),
    ),
    OpInfo(
        "dot", ("dot(Tensor self, Tensor tensor) -> Tensor",), "linalg", NO_BOOL,
        grad=_dot, autocast={"cuda": "promote"},
    ),
    OpInfo(
        "vdot", ("vdot(Tensor self, Tensor other) -> Tensor",), "linalg", NO_BOOL,
        grad=_vdot, autocast={"cuda": "promote"},
    ),
    OpInfo("outer", ("outer(Tensor self, Tensor vec2) -> Tensor",), "linalg", ALL, grad=_outer),
    OpInfo(
        "linalg_vecdot", ("linalg_vecdot(Tensor x, Tensor y, *, int dim=-1) -> Tensor",), "linalg",
        INEXACT, function="linalg.vecdot", method=False, out=False, grad=_vecdot,
        autocast=_LOWER,
    ),
    OpInfo(
        "einsum", ("einsum(str equation, Tensor[] tensors) -> Tensor",), "linalg", ALL,
        method=False, py="einsum", grad=_einsum, autocast={"cuda": "lower_precision_fp"},
    ),
    OpInfo(
        "tensordot",
        ("tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor",),
        "linalg", NO_BOOL, method=False, py="tensordot", out=True,
        grad=_tensordot, autocast={"cuda": "promote"},
    ),
)  # fmt: skip


# -- decompositions, solvers and FFTs (Note [Library decompositions] in
# backends.common.decompositions): PyTorch's torch.linalg / torch.fft schemas.  float16 and
# bfloat16 are refused, as PyTorch's CPU LAPACK and pocketfft do.
_LAPACK = (FLOATS - {d for d in FLOATS if d.itemsize == 2}) | COMPLEXES
_NO_FORMULA = NoFormula("no derivative formula for this decomposition yet (issue #18)")


def _to_complex(d: dtype) -> tuple[dtype, dtype]:
    """FFTs with complex results; integers and bool compute in the default float dtype."""
    if d.category <= INT:
        d = get_default_dtype()
    return d, d if d.is_complex else d.to_complex()


def _to_real(d: dtype) -> tuple[dtype, dtype]:
    if d.category <= INT:
        d = get_default_dtype()
    return d, d.to_real()


# PyTorch's FFTs take integer and bool inputs (as the default float dtype), not float16
# or bfloat16 on the CPU.
_FFT = _LAPACK | INTS | BOOLS


# PyTorch 2.13's CPU autocast list runs these in float32 (its CUDA list names none).
_CPU_FP32 = {
    "linalg_cholesky", "linalg_eig", "linalg_eigvals", "linalg_eigh", "linalg_eigvalsh",
    "linalg_inv", "linalg_qr", "linalg_solve", "linalg_svd", "linalg_svdvals",
}  # fmt: skip


def _mH(x: Any) -> Any:  # noqa: N802
    """The conjugate transpose of the last two dims (the transpose for real dtypes)."""
    t = _mT(x)
    return core.conj(t) if x.dtype.is_complex else t


@_grad.saves("result")
def _inv(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    # d(A^-1) = -A^-1 dA A^-1, so dL/dA = -A^-H g A^-H
    h = _mH(out)
    return (-core.matmul(core.matmul(h, g), h),)


@_grad.saves("A", "result")
def _det(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    # d det(A) = det(A) tr(A^-1 dA), so dL/dA = g conj(det(A)) A^-H, for invertible A
    # (PyTorch's ``grad * det.conj()``: Note [Complex gradients])
    A = a["A"]  # noqa: N806
    scale = g * (core.conj(out) if A.dtype.is_complex else out)
    inv_h = _mH(core.linalg_inv(A))
    return (core.unsqueeze(core.unsqueeze(scale, -1), -1) * inv_h,)


@_grad.saves("A", "result")
def _solve(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    # X = A^-1 B: dL/dB = A^-H g, dL/dA = -dL/dB X^H (left=True; vectors as columns)
    A, B = a["A"], a["B"]  # noqa: N806
    if not a.get("left", True):
        raise NotImplementedError("linalg.solve: no derivative formula for left=False yet")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    g2 = core.unsqueeze(g, -1) if vector else g
    x2 = core.unsqueeze(out, -1) if vector else out
    gb = core.linalg_solve(_mH(A), g2)
    ga = -core.matmul(gb, _mH(x2))
    gb = core.squeeze.dim(gb, -1) if vector else gb
    return (
        _grad.grad_for(ga, A) if needs(A) else None,
        _grad.grad_for(gb, B) if needs(B) else None,
    )


# Note [Decomposition derivatives] in _linalg_grad for the others.
_FORMULAS = {"linalg_inv": _inv, "linalg_det": _det, "linalg_solve": _solve} | _linalg_grad.FORMULAS


def _decomposition(
    name: str, schema: str, dtypes: frozenset[dtype] = _LAPACK, **kw: object
) -> OpInfo:
    if name in _CPU_FP32:
        kw["autocast"] = {"cpu": "fp32"}
    kw.setdefault("grad", _FORMULAS.get(name, _NO_FORMULA))
    return OpInfo(
        name,
        (schema,),
        "linalg",
        dtypes,
        same,
        function=name.replace("_", ".", 1),
        method=False,
        out=False,
        **kw,  # type: ignore[arg-type]
    )


def _fft(name: str, nd: bool, rule: object, dtypes: frozenset[dtype] = _FFT) -> OpInfo:
    sizes = "int[1]? s=None, int[1]? dim=None" if nd else "int? n=None, int dim=-1"
    return OpInfo(
        name,
        (f"{name}(Tensor self, {sizes}, str? norm=None) -> Tensor",),
        "linalg",
        dtypes,
        rule,
        function=name.replace("_", ".", 1),
        method=False,
        out=False,  # type: ignore[arg-type]
        grad=_linalg_grad.FORMULAS[name],
        autocast={"cpu": "fp32"},  # PyTorch 2.13 CPU autocast list
    )


ROWS += (
    _decomposition("linalg_cholesky", "linalg_cholesky(Tensor self, *, bool upper=False) -> Tensor"),
    _decomposition("linalg_det", "linalg_det(Tensor A) -> Tensor"),
    _decomposition("linalg_eig", "linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)"),
    _decomposition("linalg_eigvals", "linalg_eigvals(Tensor self) -> Tensor"),
    _decomposition(
        "linalg_eigh", "linalg_eigh(Tensor self, str UPLO=\"L\") -> (Tensor eigenvalues, Tensor eigenvectors)"
    ),
    _decomposition("linalg_eigvalsh", "linalg_eigvalsh(Tensor self, str UPLO=\"L\") -> Tensor"),
    _decomposition("linalg_inv", "linalg_inv(Tensor A) -> Tensor"),
    _decomposition("linalg_qr", "linalg_qr(Tensor A, str mode='reduced') -> (Tensor Q, Tensor R)"),
    _decomposition("linalg_slogdet", "linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)"),
    _decomposition("linalg_solve", "linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor"),
    _decomposition(
        "linalg_svd",
        "linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> (Tensor U, Tensor S, Tensor Vh)",
    ),
    _decomposition("linalg_svdvals", "linalg_svdvals(Tensor A, *, str? driver=None) -> Tensor"),
    _fft("fft_fft", False, _to_complex),
    _fft("fft_ifft", False, _to_complex),
    _fft("fft_rfft", False, _to_complex, _FFT - COMPLEXES),
    _fft("fft_ihfft", False, _to_complex, _FFT - COMPLEXES),
    _fft("fft_irfft", False, _to_real),
    _fft("fft_hfft", False, _to_real),
    _fft("fft_fftn", True, _to_complex),
    _fft("fft_ifftn", True, _to_complex),
    _fft("fft_rfftn", True, _to_complex, _FFT - COMPLEXES),
    _fft("fft_irfftn", True, _to_real),
)  # fmt: skip

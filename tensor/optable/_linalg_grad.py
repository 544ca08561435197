"""Derivative formulas of the decompositions and FFTs (``linalg_*``, ``fft_*`` rows).

Imports: this package's ``_grad``.  Everything is written with operators (``ops.core``),
so the formulas run on every backend and record their own graph under
``create_graph=True`` (second derivatives go through ``linalg_solve``, ``linalg_eigh``...).

Note [Decomposition derivatives]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
PyTorch's formulas (``torch/csrc/autograd/FunctionsManual.cpp``: ``cholesky_backward``,
``linalg_eig_backward`` with ``is_hermitian``, ``linalg_qr_backward``, ``svd_backward``,
``slogdet_backward``, ``fft_r2c_backward``/``fft_c2r_backward`` and ``_fft_c2c``'s),
in PyTorch's complex convention, as ``linalg_inv``/``det``/``solve`` have theirs.  What
differs is only what our operator set lacks: a triangular solve is ``linalg_solve`` (of
the conjugate transpose, for a solve from the right), ``diag_embed`` is a product with an
identity, and in-place diagonal writes are masks.  Outputs that got no gradient arrive
as zeros (the autograd layer materialises them), so the "undefined gradient" shortcuts
are the general formula with zeros; ``svdvals``/``eigvalsh``/``eigvals`` recompute the vectors their
formula needs (PyTorch computes them in the forward when the input requires grad).
``eig``'s is the non-Hermitian branch (``is_hermitian=false``): solves with ``V^H``
instead of products with ``V``, gaps ``conj(L_j - L_i)``, and ``V^H gV`` projected onto
the tangent space of matrices with unit-norm columns (LAPACK's normalisation of the
eigenvectors, whose phases are free: a loss that depends on them raises, as in PyTorch,
for real inputs too since their eigenvectors are complex); a real input's gradient is
the real part (``handle_r_to_c``), without a check on the imaginary part.  ``eigvals``
uses PyTorch's eigenvalues-only shortcut ``V^{-H} diag(gL) V^H``.
``eigh``, ``eigvalsh`` and ``cholesky`` read one triangle of their input, and their
gradient is PyTorch's, the one for Hermitian perturbations (compare with finite
differences through ``(A + A^H) / 2``, as PyTorch's own gradchecks do).

FFTs are linear: the gradient is the adjoint transform with the same scaling, which is
the opposite direction with ``norm`` swapped ("backward" <-> "forward"); the input's
zero-padding (``n``/``s`` larger than the input) is cut off again and its trimming padded
with zeros; one-sided spectra are filled with zeros (``rfft``'s backward) or their
mirrored bins counted twice (``irfft``'s: PyTorch's doubling correction).
"""

from __future__ import annotations

from typing import Any

from . import _grad

__all__ = ["FORMULAS"]

core = _grad.core


# -- helpers ---------------------------------------------------------------------------------------
def _mT(x: Any) -> Any:  # noqa: N802
    return core.transpose.int(x, -2, -1)


def _mH(x: Any) -> Any:  # noqa: N802
    t = _mT(x)
    return core.conj(t) if x.dtype.is_complex else t


def _eye(n: int, like: Any) -> Any:
    return core.eye(n, n, dtype=like.dtype.to_real(), device=like.device)


def _diag(x: Any) -> Any:
    return core.diagonal(x, 0, -2, -1)


def _diag_embed(v: Any) -> Any:
    return core.unsqueeze(v, -2) * _eye(v.shape[-1], v)


def _solve_right(x: Any, r: Any) -> Any:
    """``x @ r^{-1}``: the solve ``y r = x``, as ``r^H y^H = x^H``."""
    return _mH(core.linalg_solve(_mH(r), _mH(x)))


def _solve_right_h(x: Any, r: Any) -> Any:
    """``x @ r^{-H}``: the solve ``y r^H = x``, as ``r y^H = x^H``."""
    return _mH(core.linalg_solve(r, _mH(x)))


def _check_phase(vhgv_diag: Any, what: str) -> None:
    """PyTorch's check that a loss does not depend on the eigenvectors' (singular
    vectors') arbitrary phases, in the complex case."""
    im = core.abs(core.imag(vhgv_diag))
    if im.numel() and float(core.amax(im)) > 1e-2:
        raise RuntimeError(
            f"{what}: The {'eigenvectors' if 'eig' in what else 'singular vectors'} in the "
            "complex case are specified up to multiplication by e^{i phi}. The specified loss "
            "function depends on this quantity, so it is ill-defined."
        )


# -- decompositions --------------------------------------------------------------------------------
@_grad.saves("result")
def _cholesky(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    # gA = L^{-H} Phi(L^H gL) L^{-1}, Phi(X) = tril(X) Hermitian-completed with a halved diagonal
    low, gl = (_mH(out), _mH(g)) if a.get("upper", False) else (out, g)
    phi = core.tril(core.matmul(_mH(low), gl))
    phi = 0.5 * (phi + _mH(core.tril(phi, -1)))
    return (_solve_right(core.linalg_solve(_mH(low), phi), low),)


def _eigh_backward(gl: Any, gv: Any, values: Any, vectors: Any) -> Any:
    vhgv = core.matmul(_mH(vectors), gv)
    if vhgv.dtype.is_complex:
        _check_phase(_diag(vhgv), "linalg_eigh_backward")
    vhgv = 0.5 * (vhgv - _mH(vhgv))  # onto the skew-Hermitian matrices
    eye = _eye(values.shape[-1], values)
    gaps = core.unsqueeze(values, -2) - core.unsqueeze(values, -1) + eye
    inner = vhgv / gaps * (1 - eye) + _diag_embed(gl)
    return core.matmul(vectors, core.matmul(inner, _mH(vectors)))


@_grad.saves("result")
def _eigh(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (_eigh_backward(g[0], g[1], out[0], out[1]),)


@_grad.saves("self")
def _eigvalsh(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    _, vectors = core.linalg_eigh(a["self"], a.get("UPLO", "L"))
    return (core.matmul(vectors * core.unsqueeze(g, -2), _mH(vectors)),)


def _eig_backward(gl: Any, gv: Any, values: Any, vectors: Any) -> Any:
    # gA = V^{-H} (diag(gL) + (V^H gV - V^H V diag(re(diag(V^H gV)))) / conj(E)) V^H,
    # E_ij = L_j - L_i off the diagonal (PyTorch's non-Hermitian branch; the projection
    # is onto the tangent space of matrices with unit-norm columns, LAPACK's gauge)
    vh = _mH(vectors)
    vhgv = core.matmul(vh, gv)
    diag = _diag(vhgv)
    _check_phase(diag, "linalg_eig_backward")
    vhgv = vhgv - core.matmul(vh, vectors * core.unsqueeze(core.real(diag), -2))
    lconj = core.conj(values)
    eye = _eye(values.shape[-1], values)
    gaps = core.unsqueeze(lconj, -2) - core.unsqueeze(lconj, -1) + eye
    inner = vhgv / gaps * (1 - eye) + _diag_embed(gl)
    return core.linalg_solve(vh, core.matmul(inner, vh))


def _real_for(ga: Any, x: Any) -> Any:
    """A real input's gradient is the real part (PyTorch's handle_r_to_c)."""
    return ga if x.dtype.is_complex else core.real(ga)


@_grad.saves("result")
def _eig(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (_real_for(_eig_backward(g[0], g[1], out[0], out[1]), a["self"]),)


@_grad.saves("self")
def _eigvals(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    # PyTorch's eigenvalues-only shortcut, V^{-H} diag(gL) V^H; the vectors are recomputed
    # (PyTorch computes them in the forward when the input requires grad)
    _, vectors = core.linalg_eig(a["self"])
    vh = _mH(vectors)
    ga = core.linalg_solve(vh, core.unsqueeze(g, -1) * vh)
    return (_real_for(ga, a["self"]),)


@_grad.saves("result")
def _qr(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    mode = a.get("mode", "reduced")
    if mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
            "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
            "through linalg.qr."
        )
    gq, gr = g
    q, r = out
    m, n = q.shape[-2], r.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError(
            "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
        )
    ga = core.matmul(gr, _mH(r)) - core.matmul(_mH(q), gq)
    if m >= n:
        x = core.triu(ga)
        x = (x + _mH(x)) * (1 - 0.5 * _eye(n, x))  # X + X^H with its (real) diagonal halved
        return (_solve_right_h(core.matmul(q, x) + gq, r),)
    x = -ga
    x = core.tril(x - _mH(x)) * (1 - 0.5 * _eye(m, x))  # imaginary diagonal halved
    ga = _solve_right_h(core.matmul(q, x), core.narrow(r, -1, 0, m))
    pad = core.zeros([*ga.shape[:-1], n - m], dtype=ga.dtype, device=ga.device)
    return (core.cat([ga, pad], -1) + core.matmul(q, gr),)


def _svd_backward(gu: Any, gs: Any, gvh: Any, u: Any, s: Any, vh: Any) -> Any:
    m, n = u.shape[-2], vh.shape[-1]
    cplx = u.dtype.is_complex
    uhgu = core.matmul(_mH(u), gu)
    uhgu = uhgu - _mH(uhgu)
    vhgv = core.matmul(vh, _mH(gvh))
    vhgv = vhgv - _mH(vhgv)
    if cplx:
        _check_phase(_diag(uhgu) + _diag(vhgv), "svd_backward")
    eye = _eye(s.shape[-1], s)
    s2 = s * s
    gaps = core.unsqueeze(s2, -2) - core.unsqueeze(s2, -1) + eye
    inner = (uhgu * core.unsqueeze(s, -2) + core.unsqueeze(s, -1) * vhgv) / gaps * (1 - eye)
    inner = inner + _diag_embed(gs)
    if cplx:
        inner = inner + _diag_embed(_diag(uhgu) / (2 * s))
    if m > n:
        ga = core.matmul(u, inner)
        gu_sinv = gu / core.unsqueeze(s, -2)
        ga = ga + gu_sinv - core.matmul(u, core.matmul(_mH(u), gu_sinv))
        return core.matmul(ga, vh)
    if m < n:
        ga = core.matmul(inner, vh)
        sinv_gvh = gvh / core.unsqueeze(s, -1)
        ga = ga + sinv_gvh - core.matmul(core.matmul(sinv_gvh, _mH(vh)), vh)
        return core.matmul(u, ga)
    return core.matmul(u, core.matmul(inner, vh))


@_grad.saves("result")
def _svd(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    gu, gs, gvh = g
    u, s, vh = out
    if a.get("full_matrices", True):  # PyTorch: the leading k vectors only
        k = s.shape[-1]
        gu, u = core.narrow(gu, -1, 0, k), core.narrow(u, -1, 0, k)
        gvh, vh = core.narrow(gvh, -2, 0, k), core.narrow(vh, -2, 0, k)
    return (_svd_backward(gu, gs, gvh, u, s, vh),)


@_grad.saves("A")
def _svdvals(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    u, _, vh = core.linalg_svd(a["A"], False)
    if u.shape[-2] >= vh.shape[-1]:
        return (core.matmul(u, core.unsqueeze(g, -1) * vh),)
    return (core.matmul(u * core.unsqueeze(g, -2), vh),)


@_grad.saves("A", "result")
def _slogdet(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    # (d slogdet)*(g_sign, g_abs) = (g_abs - i Im(conj(g_sign) sign)) A^{-H}
    gsign, glog = g
    A = a["A"]  # noqa: N806
    scale = glog
    if A.dtype.is_complex:
        scale = core._to_copy(glog, dtype=A.dtype) - 1j * core.imag(core.conj(gsign) * out[0])
    inv_h = _mH(core.linalg_inv(A))
    return (core.unsqueeze(core.unsqueeze(scale, -1), -1) * inv_h,)


# -- FFTs ------------------------------------------------------------------------------------------
_SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _plan(x: Any, a: dict[str, Any], nd: bool) -> tuple[list[int], list[Any]]:
    """The transformed dims (non-negative) and the sizes asked for (None: the input's)."""
    ndim = x.ndim
    if not nd:
        return [a.get("dim", -1) % ndim], [a.get("n")]
    s, dim = a.get("s"), a.get("dim")
    if dim is None:
        dims = list(range(ndim)) if s is None else list(range(ndim - len(s), ndim))
    else:
        dims = [d % ndim for d in ([dim] if isinstance(dim, int) else dim)]
    return dims, list(s) if s is not None else [None] * len(dims)


def _fit(g: Any, dims: list[int], lengths: list[int]) -> Any:
    """``g`` cut or zero-padded along ``dims`` to ``lengths``: the adjoint of the input's
    own padding (cut again) or trimming (padded with zeros)."""
    for d, length in zip(dims, lengths, strict=True):
        have = g.shape[d]
        if have > length:
            g = core.narrow(g, d, 0, length)
        elif have < length:
            shape = list(g.shape)
            shape[d] = length - have
            g = core.cat([g, core.zeros(shape, dtype=g.dtype, device=g.device)], d)
    return g


def _double_mirrored(g: Any, d: int, n: int) -> Any:
    """fft_c2r_backward's correction: bins 1 .. n - (n // 2 + 1) of a one-sided spectrum
    stand for two bins each of the full one."""
    half = g.shape[d]
    twice = n - half
    if twice <= 0:
        return g
    weights = core.ones([half], dtype=g.dtype.to_real(), device=g.device)
    weights = core.cat([
        core.narrow(weights, 0, 0, 1), 2 * core.narrow(weights, 0, 1, twice),
        core.narrow(weights, 0, 1 + twice, half - 1 - twice),
    ], 0)  # fmt: skip
    return g * core.reshape(weights, [half] + [1] * (g.ndim - 1 - d))


def _transform(name: str, g: Any, dims: list[int], norm: Any, nd: bool) -> Any:
    """Transform ``name`` of ``g`` over ``dims`` at ``g``'s own sizes."""
    if nd:
        return getattr(core, f"fft_{name}n")(g, None, dims, norm)
    return getattr(core, f"fft_{name}")(g, None, dims[0], norm)


def _fft_formula(kind: str, nd: bool) -> _grad.Formula:
    """The formula of one FFT row: ``kind`` is c2c ("fft", "ifft"), r2c ("rfft",
    "ihfft") or c2r ("irfft", "hfft")."""

    @_grad.saves()
    def formula(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
        x = a["self"]
        norm = a.get("norm")
        dims, _ = _plan(x, a, nd)
        lengths = [x.shape[d] for d in dims]
        if kind in ("fft", "ifft"):
            gx = _transform("ifft" if kind == "fft" else "fft", g, dims, _SWAP[norm], nd)
        elif kind in ("rfft", "ihfft"):
            # the other half of the spectrum was dropped: its gradient is zero
            full = [g.shape[d] for d in dims]
            full[-1] = _out_length(a, x, dims, nd)
            gh = core.conj(g) if kind == "ihfft" else g
            gx = core.real(_transform("ifft", _fit(gh, dims, full), dims,
                                      norm if kind == "ihfft" else _SWAP[norm], nd))  # fmt: skip
        else:  # irfft, hfft: a real spectrum's transform of a one-sided input
            n = g.shape[dims[-1]]
            gx = _transform("rfft", g, dims, _SWAP[norm] if kind == "irfft" else norm, nd)
            gx = _double_mirrored(gx, dims[-1], n)
            if kind == "hfft":
                gx = core.conj(gx)
        if gx.dtype.is_complex and not x.dtype.is_complex:
            gx = core.real(gx)  # a real input's gradient is real (PyTorch's handle_r_to_c)
        return (_fit(gx, dims, lengths),)

    return formula


def _out_length(a: dict[str, Any], x: Any, dims: list[int], nd: bool) -> int:
    """The signal length of a one-sided transform's last dim (``n``, or the input's)."""
    _, sizes = _plan(x, a, nd)
    return sizes[-1] if sizes[-1] is not None else x.shape[dims[-1]]


FORMULAS: dict[str, _grad.Formula] = {
    "linalg_cholesky": _cholesky,
    "linalg_eig": _eig,
    "linalg_eigvals": _eigvals,
    "linalg_eigh": _eigh,
    "linalg_eigvalsh": _eigvalsh,
    "linalg_qr": _qr,
    "linalg_svd": _svd,
    "linalg_svdvals": _svdvals,
    "linalg_slogdet": _slogdet,
    "fft_fft": _fft_formula("fft", False),
    "fft_ifft": _fft_formula("ifft", False),
    "fft_rfft": _fft_formula("rfft", False),
    "fft_ihfft": _fft_formula("ihfft", False),
    "fft_irfft": _fft_formula("irfft", False),
    "fft_hfft": _fft_formula("hfft", False),
    "fft_fftn": _fft_formula("fft", True),
    "fft_ifftn": _fft_formula("ifft", True),
    "fft_rfftn": _fft_formula("rfft", True),
    "fft_irfftn": _fft_formula("irfft", True),
}

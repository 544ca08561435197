"""Derivatives of the decompositions and FFTs (``tensor.optable._linalg_grad``) beyond what
the op database's samples reach:

- gradcheck (float64, finite differences) for every ``n``/``s``/``dim``/``norm`` shape of
  the FFTs (padding, trimming, odd and even lengths, one-sided spectra), QR of tall and
  wide matrices, Cholesky's ``upper``, SVD of both shapes, slogdet, and second
  derivatives of a few;
- the same gradients as PyTorch, complex inputs included (gradcheck compares real
  Jacobians only), for random output gradients;
- PyTorch's errors where PyTorch refuses to differentiate (QR's ``mode='r'`` and
  ``'complete'`` of a tall matrix).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensor as tt
from tensor.autograd import gradcheck

RNG = np.random.default_rng(18)


def _parts(out: Any) -> tuple[Any, ...]:
    outs = out if isinstance(out, tuple) else (out,)
    flat: list[Any] = []
    for o in outs:
        flat += [tt.real(o), tt.imag(o)] if o.dtype.is_complex else [o]
    return tuple(flat)


def _leaf(*shape: int) -> Any:
    return tt.from_numpy(RNG.standard_normal(shape)).requires_grad_()


def _sym(a: Any) -> Any:
    return (a + a.mT) * 0.5


def _separated(*batch: int, n: int) -> np.ndarray:
    """Random n x n matrices with well-separated eigenvalues: diag(1, 2, ...) plus noise
    (the non-Hermitian eigendecomposition's derivative divides by the eigenvalues' gaps)."""
    return np.diag(np.arange(1.0, n + 1)) + 0.3 * RNG.standard_normal((*batch, n, n))


def _spd(n: int) -> np.ndarray:
    a = RNG.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


FFT_CASES: list[tuple[str, Callable[[Any], Any]]] = []
for _norm in (None, "ortho", "forward"):
    for _n in (None, 4, 9):
        FFT_CASES += [
            (f"fft-n{_n}-{_norm}", lambda x, n=_n, m=_norm: tt.fft.fft(x, n=n, norm=m)),
            (f"ifft-dim0-n{_n}-{_norm}", lambda x, n=_n, m=_norm: tt.fft.ifft(x, n, 0, m)),
            (f"rfft-n{_n}-{_norm}", lambda x, n=_n, m=_norm: tt.fft.rfft(x, n=n, norm=m)),
            (f"ihfft-n{_n}-{_norm}", lambda x, n=_n, m=_norm: tt.fft.ihfft(x, n=n, norm=m)),
            (f"irfft-n{_n}-{_norm}", lambda x, n=_n, m=_norm: tt.fft.irfft(x, n=n, norm=m)),
            (f"hfft-n{_n}-{_norm}", lambda x, n=_n, m=_norm: tt.fft.hfft(x, n=n, norm=m)),
        ]
    for _s in (None, [3, 5], [5, 8]):
        FFT_CASES += [
            (f"fftn-s{_s}-{_norm}", lambda x, s=_s, m=_norm: tt.fft.fftn(x, s=s, norm=m)),
            (f"ifftn-s{_s}-{_norm}", lambda x, s=_s, m=_norm: tt.fft.ifftn(x, s=s, norm=m)),
            (f"rfftn-s{_s}-{_norm}", lambda x, s=_s, m=_norm: tt.fft.rfftn(x, s=s, norm=m)),
            (f"irfftn-s{_s}-{_norm}", lambda x, s=_s, m=_norm: tt.fft.irfftn(x, s=s, norm=m)),
        ]
FFT_CASES.append(("rfftn-dim0", lambda x: tt.fft.rfftn(x, dim=[0])))
FFT_CASES.append(("irfftn-dims10", lambda x: tt.fft.irfftn(x, s=[4, 7], dim=[1, 0])))


@pytest.mark.parametrize(("name", "call"), FFT_CASES, ids=[c[0] for c in FFT_CASES])
def test_fft_gradcheck(name: str, call: Callable[[Any], Any]) -> None:
    assert gradcheck(lambda x: _parts(call(x)), (_leaf(4, 6),))


LINALG_CASES: list[tuple[str, Callable[[Any], Any], Callable[[], Any]]] = [
    ("cholesky", lambda a: tt.linalg.cholesky(_sym(a)), lambda: _spd(4)),
    ("cholesky-upper", lambda a: tt.linalg.cholesky(_sym(a), upper=True), lambda: _spd(4)),
    ("eigh-values-abs-vectors",
     lambda a: (lambda r: (r[0], tt.abs(r[1])))(tt.linalg.eigh(_sym(a))), lambda: _spd(4)),
    ("eigh-upper", lambda a: tt.linalg.eigh(_sym(a), UPLO="U")[0], lambda: _spd(3)),
    ("eigvalsh", lambda a: tt.linalg.eigvalsh(_sym(a)), lambda: _spd(4)),
    ("eig-values", lambda a: tt.linalg.eig(a)[0], lambda: RNG.standard_normal((4, 4))),
    ("eig-values-abs-vectors",
     lambda a: (lambda r: (r[0], tt.abs(r[1])))(tt.linalg.eig(a)), lambda: _separated(n=4)),
    ("eig-vectors-sq-batch",
     lambda a: (lambda v: v * v.conj())(tt.linalg.eig(a)[1]), lambda: _separated(2, n=3)),
    ("eigvals", lambda a: tt.linalg.eigvals(a), lambda: RNG.standard_normal((2, 3, 3))),
    ("qr-tall", lambda a: tuple(tt.abs(t) for t in tt.linalg.qr(a)),
     lambda: RNG.standard_normal((5, 3))),
    ("qr-wide", lambda a: tuple(tt.abs(t) for t in tt.linalg.qr(a)),
     lambda: RNG.standard_normal((3, 5))),
    ("qr-complete-wide", lambda a: tuple(tt.abs(t) for t in tt.linalg.qr(a, "complete")),
     lambda: RNG.standard_normal((2, 3, 4))),
    ("svd-tall", lambda a: tuple(tt.abs(t) for t in tt.linalg.svd(a, False)),
     lambda: RNG.standard_normal((5, 3))),
    ("svd-wide-batch", lambda a: tuple(tt.abs(t) for t in tt.linalg.svd(a, False)),
     lambda: RNG.standard_normal((2, 3, 4))),
    ("svd-full-S", lambda a: tt.linalg.svd(a)[1], lambda: RNG.standard_normal((3, 5))),
    ("svdvals", lambda a: tt.linalg.svdvals(a), lambda: RNG.standard_normal((4, 2))),
    ("slogdet", lambda a: tt.linalg.slogdet(a), lambda: RNG.standard_normal((2, 3, 3))),
    ("vecdot-bcast", lambda a: tt.linalg.vecdot(a, a[0], dim=-1),
     lambda: RNG.standard_normal((3, 4))),
]  # fmt: skip


@pytest.mark.parametrize(("name", "call", "make"), LINALG_CASES, ids=[c[0] for c in LINALG_CASES])
def test_linalg_gradcheck(name: str, call: Callable[[Any], Any], make: Any) -> None:
    x = tt.from_numpy(make()).requires_grad_()
    assert gradcheck(lambda a: _parts(call(a)), (x,))


_SECOND = ("cholesky", "eigvalsh", "eig-values", "eigvals", "qr-tall", "svdvals", "slogdet")


@pytest.mark.parametrize(
    ("name", "call", "make"),
    [c for c in LINALG_CASES if c[0] in _SECOND]
    + [("rfft", lambda a: tt.fft.rfft(a, n=5), lambda: RNG.standard_normal((2, 4)))],
    ids=[*_SECOND, "rfft"],
)
def test_second_derivatives(name: str, call: Callable[[Any], Any], make: Any) -> None:
    x = tt.from_numpy(make()).requires_grad_()

    def first(a: Any) -> Any:
        with tt.enable_grad():
            a = a if a.requires_grad else a.detach().requires_grad_()
            outs = _parts(call(a))
            seeds = [tt.from_numpy(np.cos(np.arange(o.numel())).reshape(o.shape)) for o in outs]
            (g,) = tt.autograd.grad(list(outs), [a], grad_outputs=seeds, create_graph=True)
        return g

    assert gradcheck(first, (x,))


def test_eig_refuses_phase_dependent_losses() -> None:
    # PyTorch's check: a loss of complex eigenvectors' real parts depends on their phases
    v = tt.linalg.eig(tt.from_numpy(_complex(3, 3)).requires_grad_())[1]
    with pytest.raises(RuntimeError, match="linalg_eig_backward: The eigenvectors"):
        tt.real(v).sum().backward()


def test_qr_refuses_what_pytorch_refuses() -> None:
    a = _leaf(4, 3)
    _, r = tt.linalg.qr(a, mode="r")
    with pytest.raises(RuntimeError, match="mode='r'"):
        r.sum().backward()
    q, r = tt.linalg.qr(a, mode="complete")
    with pytest.raises(RuntimeError, match="mode='complete' and nrows > ncols"):
        (q.sum() + r.sum()).backward()


# -- the same gradients as PyTorch, complex inputs included ----------------------------------------
def _complex(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def _hpd(n: int) -> np.ndarray:
    a = _complex(n, n)
    return a @ a.conj().T + n * np.eye(n)


TORCH_CASES: list[tuple[str, str, Callable[[Any, Any], Any], Callable[[], np.ndarray]]] = [
    ("cholesky", "c", lambda lib, a: lib.linalg.cholesky(a), lambda: _hpd(3)),
    ("cholesky-upper", "c", lambda lib, a: lib.linalg.cholesky(a, upper=True), lambda: _hpd(3)),
    ("eigvalsh", "c", lambda lib, a: lib.linalg.eigvalsh(a), lambda: _hpd(4)),
    ("eigh-values", "c", lambda lib, a: lib.linalg.eigh(a)[0], lambda: _hpd(4)),
    # eig: eigenvalues, and losses of the eigenvectors that do not depend on their phases
    ("eig-values", "c", lambda lib, a: lib.linalg.eig(a)[0], lambda: _complex(4, 4)),
    ("eig-abs-vectors", "c", lambda lib, a: (lambda r: (r[0], lib.abs(r[1])))(lib.linalg.eig(a)),
     lambda: _complex(2, 3, 3)),
    ("eig-vectors-sq", "c", lambda lib, a: (lambda v: v * v.conj())(lib.linalg.eig(a)[1]),
     lambda: _complex(4, 4)),
    ("eig-mixed", "c", lambda lib, a: (lambda r: lib.abs(r[0] * r[1]))(lib.linalg.eig(a)),
     lambda: _complex(3, 3)),
    ("eigvals", "c", lambda lib, a: lib.linalg.eigvals(a), lambda: _complex(2, 4, 4)),
    ("eig-values-real", "r", lambda lib, a: lib.linalg.eig(a)[0],
     lambda: RNG.standard_normal((5, 5))),
    ("eig-abs-vectors-real", "r",
     lambda lib, a: (lambda r: (r[0], lib.abs(r[1])))(lib.linalg.eig(a)),
     lambda: RNG.standard_normal((2, 4, 4))),
    ("eig-vectors-sq-real", "r", lambda lib, a: (lambda v: v * v.conj())(lib.linalg.eig(a)[1]),
     lambda: RNG.standard_normal((4, 4))),
    ("eigvals-real", "r", lambda lib, a: lib.linalg.eigvals(a), lambda: RNG.standard_normal((4, 4))),
    ("qr-tall", "c", lambda lib, a: lib.linalg.qr(a), lambda: _complex(4, 3)),
    ("qr-wide", "c", lambda lib, a: lib.linalg.qr(a), lambda: _complex(2, 4)),
    ("svdvals", "c", lambda lib, a: lib.linalg.svdvals(a), lambda: _complex(3, 5)),
    ("svd-S", "c", lambda lib, a: lib.linalg.svd(a, full_matrices=False)[1],
     lambda: _complex(4, 2)),
    ("slogdet", "c", lambda lib, a: lib.linalg.slogdet(a), lambda: _complex(3, 3)),
    ("vecdot", "c", lambda lib, a: lib.linalg.vecdot(a, a.flip(0), dim=0),
     lambda: _complex(3, 2)),
    ("fft-n", "c", lambda lib, a: lib.fft.fft(a, n=7, norm="ortho"), lambda: _complex(2, 5)),
    ("ifft", "c", lambda lib, a: lib.fft.ifft(a, dim=0), lambda: _complex(4, 3)),
    ("irfft", "c", lambda lib, a: lib.fft.irfft(a, n=7), lambda: _complex(2, 5)),
    ("irfft-even", "c", lambda lib, a: lib.fft.irfft(a, norm="forward"), lambda: _complex(5)),
    ("hfft", "c", lambda lib, a: lib.fft.hfft(a, n=6, norm="ortho"), lambda: _complex(4)),
    ("fftn", "c", lambda lib, a: lib.fft.fftn(a, s=[3, 6]), lambda: _complex(4, 5)),
    ("irfftn", "c", lambda lib, a: lib.fft.irfftn(a, s=[5, 6], norm="ortho"),
     lambda: _complex(4, 3)),
    ("rfft", "r", lambda lib, a: lib.fft.rfft(a, n=6), lambda: RNG.standard_normal((2, 5))),
    ("ihfft", "r", lambda lib, a: lib.fft.ihfft(a, norm="forward"),
     lambda: RNG.standard_normal(7)),
    ("rfftn", "r", lambda lib, a: lib.fft.rfftn(a, s=[3, 7]), lambda: RNG.standard_normal((4, 5))),
]  # fmt: skip


@pytest.mark.torch
@pytest.mark.parametrize(
    ("name", "kind", "call", "make"), TORCH_CASES, ids=[c[0] for c in TORCH_CASES]
)
def test_gradients_match_torch(name: str, kind: str, call: Any, make: Any) -> None:
    torch = pytest.importorskip("torch", reason="PyTorch not installed: differential check")
    a = make()
    ours = tt.from_numpy(a.copy()).requires_grad_()
    theirs = torch.from_numpy(a.copy()).requires_grad_()
    our_out, their_out = call(tt, ours), call(torch, theirs)
    our_outs = our_out if isinstance(our_out, tuple) else (our_out,)
    their_outs = their_out if isinstance(their_out, tuple) else (their_out,)
    seeds = []
    for o in their_outs:
        g = np.asarray(RNG.standard_normal(tuple(o.shape)))
        if o.dtype.is_complex:
            g = np.asarray(g + 1j * RNG.standard_normal(tuple(o.shape)))
        seeds.append(g)
    ours_g = tt.autograd.grad(list(our_outs), [ours], [tt.from_numpy(g) for g in seeds])[0]
    theirs_g = torch.autograd.grad(
        list(their_outs), [theirs], [torch.from_numpy(g) for g in seeds]
    )[0]
    np.testing.assert_allclose(
        ours_g.numpy(), theirs_g.resolve_conj().numpy(), rtol=1e-7, atol=1e-9, err_msg=name
    )

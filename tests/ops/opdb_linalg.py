"""Op-database entries of the decompositions, solvers and FFTs (``linalg_*``, ``fft_*``).

Imports: NumPy and this package's entry and sample helpers.  References are NumPy's
``linalg`` and ``fft`` in the dtype under test (float32 stays float32, as ours and
PyTorch's do).  Outputs defined only up to a sign or phase per column (eigenvectors, Q
and R, singular vectors) are compared by absolute value; the matrices are random, so
their eigenvalues and singular values are distinct.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .opentry import OpEntry, _fn
from .samples import Sample, up, values

__all__ = ["entries"]


def _well_conditioned(dtype: str, rng: np.random.Generator, *shape: int) -> np.ndarray:
    a = values(dtype, shape, rng, -1, 1)
    if a.dtype.kind in "fc" and a.dtype.itemsize > 2:
        a = a + np.asarray(3 * np.eye(shape[-1]), dtype=a.dtype)  # keep it invertible
    return a


def _hermitian_pd(dtype: str, rng: np.random.Generator, *shape: int) -> np.ndarray:
    a = values(dtype, shape, rng, -1, 1)
    if a.dtype.kind not in "fc" or a.dtype.itemsize <= 2:
        return a
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(a.dtype)


def _hermitian_part(a: Any) -> Any:
    """``(A + A^H) / 2`` of a tensor of either library, in its own dtype (integers and bool
    stay what they are: the operators' dtype errors are under test there too)."""
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        return a
    return (a + a.mT.conj()) * 0.5


def _square_samples(
    make: Callable[..., np.ndarray],
) -> Callable[[str, np.random.Generator], list[Sample]]:
    def samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
        return [
            Sample((make(dtype, rng, 4, 4),), name="4x4", plain=True),
            Sample((make(dtype, rng, 2, 3, 3),), name="batch"),
        ]

    return samples


def _rect_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((values(dtype, (5, 3), rng, -1, 1),), name="5x3", plain=True),
        Sample((values(dtype, (2, 3, 4), rng, -1, 1),), name="batch 3x4"),
    ]


def _solve_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    a = _well_conditioned(dtype, rng, 3, 3)
    return [
        Sample((a, values(dtype, (3, 2), rng)), name="matrix", plain=True),
        Sample((a, values(dtype, (3,), rng)), name="vector"),
        Sample((_well_conditioned(dtype, rng, 2, 3, 3), values(dtype, (3, 4), rng)), name="batch"),
    ]


def _fft_samples(nd: bool, half_in: bool) -> Callable[[str, np.random.Generator], list[Sample]]:
    def samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
        x = values(dtype, (4, 6), rng)
        if nd:
            return [
                Sample((x,), name="all dims", plain=True),
                Sample((x,), {"s": [3, 4], "dim": [0, 1], "norm": "ortho"}, name="s"),
                Sample((x,), {"dim": [1]}, name="dim"),
            ]
        return [
            Sample((x,), name="default", plain=True),
            Sample((x,), {"n": 8 if not half_in else 5, "dim": 0, "norm": "forward"}, name="n"),
            Sample((values(dtype, (7,), rng),), {"norm": "ortho"}, name="odd"),
        ]

    return samples


def _abs(*outs: Any) -> Any:
    return tuple(abs(o) for o in outs)


def _ref_fft(name: str) -> Callable[..., Any]:
    fn = getattr(np.fft, name)
    nd = name.endswith("n")

    def ref(x: np.ndarray, n: Any = None, dim: Any = None, norm: Any = None, **kw: Any) -> Any:
        if x.dtype.kind in "biu":
            x = x.astype(np.float32)
        if nd:
            s, axes = kw.get("s"), kw.get("dim")
            s = n if s is None else s
            axes = dim if axes is None else axes
            out = fn(
                x,
                s=s,
                axes=axes if axes is not None or s is None else range(x.ndim - len(s), x.ndim),
                norm=norm,
            )
        else:
            out = fn(x, n=n, axis=-1 if dim is None else dim, norm=norm)
        real = x.real.dtype if x.dtype.kind == "c" else x.dtype
        return out.astype(np.result_type(real, np.complex64) if out.dtype.kind == "c" else real)

    return ref


def _vecdot_ref(x: np.ndarray, y: np.ndarray, dim: int = -1) -> np.ndarray:
    a, b = np.broadcast_arrays(up(x), up(y))
    prod = np.conj(a) * b
    return prod.sum(axis=dim) if prod.ndim else prod


def _vecdot_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = values(dtype, (3, 4), rng)
    other = "float64" if dtype != "float64" else "float32"
    return [
        Sample((x, values(dtype, (3, 4), rng)), name="same shape", plain=True),
        Sample((x, values(dtype, (4,), rng)), name="broadcast"),
        Sample((values(dtype, (2, 1, 4), rng), x), {"dim": 0}, name="dim 0 of the broadcast"),
        Sample((x.T, values(dtype, (4, 3), rng)), {"dim": -2}, name="non-contiguous"),
        Sample((values(dtype, (), rng), values(dtype, (), rng)), name="0-d"),
        Sample((x[:, :0], values(dtype, (3, 0), rng)), name="empty"),
        Sample((x, values(other, (3, 4), rng)), name="mixed dtypes"),
        Sample((x, values(dtype, (2, 4), rng)), name="shapes do not broadcast"),
        Sample((x, x), {"dim": 2}, name="dim out of range"),
    ]


def entries() -> list[OpEntry]:
    la = np.linalg
    linalg: dict[str, tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]] = {
        # name: (our call, reference, samples)
        "inv": (_fn("linalg.inv"), la.inv, _square_samples(_well_conditioned)),
        "det": (_fn("linalg.det"), la.det, _square_samples(_well_conditioned)),
        "slogdet": (
            _fn("linalg.slogdet"),
            lambda a: tuple(la.slogdet(a)),
            _square_samples(_well_conditioned),
        ),
        # Through the Hermitian part, as PyTorch's own gradchecks call them: the operators
        # read one triangle, their gradients are for Hermitian perturbations (Note
        # [Decomposition derivatives] in tensor.optable._linalg_grad).
        "cholesky": (
            lambda lib, a: lib.linalg.cholesky(_hermitian_part(a)),
            la.cholesky,
            _square_samples(_hermitian_pd),
        ),
        "eigvalsh": (
            lambda lib, a: lib.linalg.eigvalsh(_hermitian_part(a)),
            la.eigvalsh,
            _square_samples(_hermitian_pd),
        ),
        "eigh": (
            lambda lib, a: (lambda r: (r[0], abs(r[1])))(lib.linalg.eigh(_hermitian_part(a))),
            lambda a: (lambda r: (r[0], abs(r[1])))(la.eigh(a)),
            _square_samples(_hermitian_pd),
        ),
        "eigvals": (
            lambda lib, a: abs(lib.linalg.eigvals(a)),
            lambda a: abs(la.eigvals(a)),
            _square_samples(_well_conditioned),
        ),
        "eig": (
            lambda lib, a: abs(lib.linalg.eig(a)[0]),
            lambda a: abs(la.eig(a)[0]),
            _square_samples(_well_conditioned),
        ),
        "qr": (
            lambda lib, a: _abs(*lib.linalg.qr(a)),
            lambda a: _abs(*la.qr(a)),
            _rect_samples,
        ),
        "svd": (
            lambda lib, a: _abs(*lib.linalg.svd(a, full_matrices=False)),
            lambda a: _abs(*la.svd(a, full_matrices=False)),
            _rect_samples,
        ),
        "svdvals": (_fn("linalg.svdvals"), lambda a: la.svd(a, compute_uv=False), _rect_samples),
        "solve": (
            _fn("linalg.solve"),
            lambda a, b: la.solve(a, b[..., None])[..., 0] if b.ndim == 1 else la.solve(a, b),
            _solve_samples,
        ),
    }
    db = [
        OpEntry(f"linalg.{name}", f"linalg_{name}", call, ref, samples, tol=50.0)
        for name, (call, ref, samples) in linalg.items()
    ]
    db.append(
        OpEntry("linalg.vecdot", "linalg_vecdot", _fn("linalg.vecdot"), _vecdot_ref,
                _vecdot_samples, tol=4.0)
    )  # fmt: skip
    for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
        half_in = name in ("irfft", "hfft")
        db.append(
            OpEntry(
                f"fft.{name}", f"fft_{name}", _fn(f"fft.{name}"), _ref_fft(name),
                _fft_samples(False, half_in), tol=20.0,
            )
        )  # fmt: skip
    for name in ("fftn", "ifftn", "rfftn", "irfftn"):
        db.append(
            OpEntry(
                f"fft.{name}", f"fft_{name}", _fn(f"fft.{name}"), _ref_fft(name),
                _fft_samples(True, name == "irfftn"), tol=20.0,
            )
        )  # fmt: skip
    return db

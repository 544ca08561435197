"""Complex gradients follow PyTorch's convention (the conjugate Wirtinger derivative).

For every differentiable operator of the op database whose samples include complex
dtypes, the input gradients of a real loss ``sum(real(out) * c1 + imag(out) * c2)``
(random ``c1``, ``c2``) equal PyTorch's: for a holomorphic ``f`` that is
``grad * conj(f'(z))`` (``derivatives.yaml``'s ``.conj()``), not ``grad * f'(z)``.
Also: our ``gradcheck`` checks complex inputs in that convention.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensor as tt
from tensor.autograd import GradcheckError, gradcheck
from tests.ops.opdb import OPDB, OpEntry
from tests.ops.runner import seed_of, to_torch, to_tt
from tests.ops.samples import Sample

from .test_autograd_formulas import _family, _row_has_formula

pytestmark = [
    pytest.mark.filterwarnings("ignore::RuntimeWarning:(tests|backends|tensor)"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]

COMPLEX = ("complex64", "complex128")
# (rtol, atol) of the gradients per dtype.
TOL = {"complex64": (2e-4, 2e-4), "complex128": (1e-7, 1e-9)}


def _torch() -> Any:
    return pytest.importorskip("torch", reason="PyTorch not installed: differential check skipped")


def _entries() -> list[OpEntry]:
    return [
        e
        for e in OPDB
        if any(d in e.dtypes for d in COMPLEX)
        and not e.random
        and e.op != "_to_copy"
        and (_row_has_formula(e.op) or _family(e.op) == "composite")
    ]


CASES = [pytest.param(e, d, id=f"{e.id}-{d}") for e in _entries() for d in COMPLEX if d in e.dtypes]


def _is_complex(v: Any) -> bool:
    return isinstance(v, np.ndarray) and v.dtype.kind == "c" and v.size > 0


def _leaf(v: Any, lib: Any) -> Any:
    """A complex array as a leaf that requires grad (in lists too); the rest converted."""
    if _is_complex(v):
        return lib.from_numpy(v.copy(order="K")).requires_grad_()
    if isinstance(v, list) and any(_is_complex(a) for a in v):
        return [_leaf(a, lib) for a in v]
    return to_tt(v, "cpu") if lib is tt else to_torch(v)


def _leaves(sample: Sample, lib: Any) -> tuple[list[Any], dict[str, Any], list[Any]]:
    args = [_leaf(v, lib) for v in sample.args]
    kwargs = to_tt(sample.kwargs, "cpu") if lib is tt else to_torch(sample.kwargs)
    leaves: list[Any] = []
    for v in args:
        for a in v if isinstance(v, list) else [v]:
            if getattr(a, "requires_grad", False):
                leaves.append(a)
    return args, kwargs, leaves


def _loss(lib: Any, out: Any, rng: np.random.Generator) -> Any:
    """``sum(real(o) * c1 + imag(o) * c2)`` over the inexact outputs (None if there are none)."""
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    total = None
    for o in outs:
        if not (o.dtype.is_floating_point or o.dtype.is_complex) or not o.requires_grad:
            continue
        c1 = lib.from_numpy(rng.standard_normal(tuple(o.shape)))
        c2 = lib.from_numpy(rng.standard_normal(tuple(o.shape)))
        term = (lib.real(o) * c1).sum()
        if o.dtype.is_complex:
            term = term + (lib.imag(o) * c2).sum()
        total = term if total is None else total + term
    return total


def _grads(lib: Any, entry: OpEntry, sample: Sample, seed: int) -> list[Any] | None:
    args, kwargs, leaves = _leaves(sample, lib)
    call = entry.call if lib is tt or entry.torch_call is None else entry.torch_call
    out = call(lib, *args, **kwargs)
    loss = _loss(lib, out, np.random.default_rng(seed))
    if loss is None or not leaves:
        return None
    grads = lib.autograd.grad(loss, leaves, allow_unused=True)
    return [
        np.zeros(tuple(x.shape), x.detach().numpy().dtype)
        if g is None
        else np.asarray(g.detach().numpy())
        for g, x in zip(grads, leaves, strict=True)
    ]


def _usable(entry: OpEntry, sample: Sample) -> bool:
    arrays = [a for v in sample.args for a in (v if isinstance(v, list) else [v])]
    return (
        not sample.degenerate
        and sample.name != "special"
        and sample.torch_values
        and any(_is_complex(a) for a in arrays)
    )


@pytest.mark.torch
@pytest.mark.parametrize(("entry", "dtype"), CASES)
def test_complex_gradients_match_torch(entry: OpEntry, dtype: str) -> None:
    torch = _torch()
    if dtype not in entry.torch_values_for:
        pytest.skip("PyTorch's values differ by design for this entry")
    rng = np.random.default_rng(seed_of(entry.id, dtype, "complex-grad"))
    checked = 0
    for sample in entry.samples(dtype, rng):
        if not _usable(entry, sample):
            continue
        seed = seed_of(entry.id, dtype, sample.name)
        try:
            theirs = _grads(torch, entry, sample, seed)
        except Exception:
            continue  # PyTorch refuses the call or has no formula: the op database compares errors
        if theirs is None or not all(np.isfinite(g).all() for g in theirs):
            continue
        ours = _grads(tt, entry, sample, seed)
        assert ours is not None, f"{entry.id}[{sample.name}]: no gradient where PyTorch has one"
        rtol, atol = TOL[dtype]
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            assert a.dtype == b.dtype, f"{entry.id}[{sample.name}] gradient {i}: dtype"
            np.testing.assert_allclose(
                a,
                b,
                rtol=rtol * entry.tol,
                atol=atol * entry.tol,
                err_msg=f"{entry.id}[{sample.name}] gradient {i}",
            )
        checked += 1
    if not checked:
        pytest.skip("no complex sample PyTorch differentiates")


def test_mixes_with_real_and_imag_match_torch() -> None:
    """The report's example: sin, mul, div and real/imag mixed in one graph."""
    torch = _torch()
    rng = np.random.default_rng(0)
    z0 = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    w0 = rng.standard_normal(4) + 1j * rng.standard_normal(4)

    def run(lib: Any) -> list[np.ndarray]:
        z, w = (lib.from_numpy(v.copy()).requires_grad_() for v in (z0, w0))
        y = lib.sin(z) * w / (z + 2) + z * z
        loss = (lib.real(y) * 0.3 + lib.imag(y) * -1.7 + lib.abs(y)).sum()
        return [g.detach().numpy() for g in lib.autograd.grad(loss, [z, w])]

    for a, b in zip(run(tt), run(torch), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_gradcheck_checks_complex_inputs_in_pytorchs_convention() -> None:
    z = tt.tensor([0.3 + 0.4j, -1.1 + 0.2j], dtype=tt.complex128, requires_grad=True)
    assert gradcheck(tt.sin, (z,))
    assert gradcheck(lambda v: tt.abs(v * v), (z,))

    class Conjugated(tt.autograd.Function):
        """sin with the other convention's gradient: grad * cos(z) instead of its conj."""

        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return tt.sin(x)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return g * tt.cos(x)

    with pytest.raises(GradcheckError):
        gradcheck(Conjugated.apply, (z,))


GRADCHECK_CASES = [pytest.param(e, id=e.id) for e in _entries() if "complex128" in e.dtypes]


@pytest.mark.parametrize("entry", GRADCHECK_CASES)
def test_complex_gradcheck(entry: OpEntry) -> None:
    """Finite differences agree with the formulas on small complex128 samples (no torch)."""
    rng = np.random.default_rng(seed_of(entry.id, "complex128", "gradcheck"))
    checked = 0
    for sample in entry.samples("complex128", rng):
        arrays = [a for v in sample.args for a in (v if isinstance(v, list) else [v])]
        if not _usable(entry, sample) or any(_is_complex(a) and a.size > 16 for a in arrays):
            continue
        args, kwargs, leaves = _leaves(sample, tt)
        try:
            out = entry.call(tt, *args, **kwargs)
        except Exception:
            continue  # error samples: the op database's tests cover them
        outs = [o for o in (out if isinstance(out, tuple) else (out,)) if o.requires_grad]
        if not outs or not all(np.isfinite(o.detach().numpy()).all() for o in outs):
            continue
        if any(o.grad_fn is not None and o.grad_fn.name() == "NotImplemented" for o in outs):
            continue  # no formula (PyTorch has none either)

        def fn(*xs: Any, args: list[Any] = args, kwargs: dict[str, Any] = kwargs) -> Any:
            it = iter(xs)
            full = [
                [next(it) if getattr(a, "requires_grad", False) else a for a in v]
                if isinstance(v, list)
                else (next(it) if getattr(v, "requires_grad", False) else v)
                for v in args
            ]
            return entry.call(tt, *full, **kwargs)

        gradcheck(fn, leaves, atol=1e-5 * entry.tol, rtol=1e-3)
        checked += 1
        if checked == 2:
            break
    if not checked:
        pytest.skip("no small, finite complex128 sample with a formula")

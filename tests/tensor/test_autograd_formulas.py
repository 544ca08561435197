"""Autograd formulas (issue 6): every differentiable operator of the op database.

Driven by ``tests/ops/opdb.py`` (float64 samples) plus hand-written cases for the
paths its samples miss (ties, zeros, norms of other orders, broadcasting):
- gradcheck on every sample, gradgradcheck on the first of each entry;
- where PyTorch is installed, the same gradients (and second derivatives) for the
  same inputs and grad_outputs;
- integer and bool inputs never require grad; non-differentiable ops' outputs don't;
- every overload of the operator table has a formula, is not differentiable, or is
  listed with the reason it has none;
- version counters: saved tensors modified in place, and in-place ops on leaves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensor as tt
from dispatch import parse_schema
from tensor.autograd import FORMULAS, NOT_DIFFERENTIABLE, gradcheck
from tensor.optable import WITHOUT_FORMULA
from tests.ops.opdb import OPDB, OpEntry
from tests.ops.runner import seed_of, to_torch, to_tt
from tests.ops.samples import Sample

pytestmark = [
    pytest.mark.filterwarnings("ignore::RuntimeWarning:(tests|backends|tensor)"),
    pytest.mark.filterwarnings("ignore:Using a target size:UserWarning"),
    pytest.mark.filterwarnings("ignore:Tensor.m?T is deprecated on 0-D:UserWarning"),
    pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning"),
]

# Operators whose formula cannot work yet, with the reason (empty when all is done).
PENDING: dict[str, str] = {}

MAX_NUMEL = 64  # per input: keeps the finite-difference Jacobians cheap

# Samples whose function is not differentiable where PyTorch's formula makes a choice
# (compared with PyTorch only): embedding's padding row gets no gradient.
NOT_SMOOTH = {("embedding", "padding_idx")}


# -- the operator table ------------------------------------------------------------------------------
def _overload_keys() -> dict[str, str]:
    """Every overload of the operator table as ``name.overload`` (FORMULAS' keys) -> family."""
    keys: dict[str, str] = {}
    for row in tt.OP_TABLE:
        for text in row.schemas:
            s = parse_schema(text)
            keys[s.name + (f".{s.overload_name}" if s.overload_name else "")] = row.family
    return keys


OVERLOADS = _overload_keys()


def _row_has_formula(row: str) -> bool:
    return any(k == row or k.startswith(row + ".") for k in FORMULAS)


# -- running samples -------------------------------------------------------------------------------
def _leaf(v: Any, lib: Any) -> Any:
    """A float64 array as a leaf that requires grad (lists of them too); else converted."""
    if isinstance(v, np.ndarray) and v.dtype == np.float64:
        v = v.copy(order="K")  # keeps a transposed sample's strides
        return (tt if lib is tt else lib).from_numpy(v).requires_grad_()
    if isinstance(v, list) and any(isinstance(a, np.ndarray) for a in v):
        return [_leaf(a, lib) for a in v]
    return to_tt(v, "cpu") if lib is tt else to_torch(v)


def _leaves(sample: Sample, lib: Any) -> tuple[list[Any], dict[str, Any], list[tuple[int, int]]]:
    """The sample's arguments with every float64 array made a leaf that requires grad, and
    where the leaves are: (argument, position in a list argument or -1)."""
    args = [_leaf(v, lib) for v in sample.args]
    kwargs = to_tt(sample.kwargs, "cpu") if lib is tt else to_torch(sample.kwargs)
    diff: list[tuple[int, int]] = []
    for i, v in enumerate(args):
        if isinstance(v, list):
            diff += [(i, j) for j, a in enumerate(v) if getattr(a, "requires_grad", False)]
        elif getattr(v, "requires_grad", False):
            diff.append((i, -1))
    return args, kwargs, diff


def _pick(args: list[Any], diff: list[tuple[int, int]]) -> list[Any]:
    return [args[i] if j < 0 else args[i][j] for i, j in diff]


def _as_list(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _differentiable_outputs(out: Any, lib: Any = tt) -> list[Any]:
    """The floating-point outputs (by dtype: under no_grad nothing requires grad); a complex
    output as its real and imaginary parts (gradcheck compares real Jacobians; the FFTs)."""
    outs = []
    for o in _as_list(out):
        if o.dtype.is_floating_point:
            outs.append(o)
        elif o.dtype.is_complex:
            outs += [lib.real(o), lib.imag(o)]
    return outs


def _fn_of(
    call: Callable[..., Any],
    lib: Any,
    args: list[Any],
    kwargs: dict[str, Any],
    diff: list[tuple[int, int]],
) -> Callable[..., Any]:
    def fn(*xs: Any) -> Any:
        full = [list(a) if isinstance(a, list) else a for a in args]
        for (i, j), x in zip(diff, xs, strict=True):
            if j < 0:
                full[i] = x
            else:
                full[i][j] = x
        return tuple(_differentiable_outputs(call(lib, *full, **kwargs), lib))

    return fn


def _arrays(sample: Sample) -> list[np.ndarray]:
    arrays = [v for v in sample.args if isinstance(v, np.ndarray)]
    return arrays + [
        a for v in sample.args if isinstance(v, list) for a in v if isinstance(a, np.ndarray)
    ]


def _small(sample: Sample) -> bool:
    return all(a.size <= MAX_NUMEL for a in _arrays(sample))


def _usable(entry: OpEntry, sample: Sample) -> bool:
    arrays = _arrays(sample)
    if (
        sample.degenerate
        or sample.name == "special"
        or not any(a.dtype == np.float64 for a in arrays)
        or any(a.size == 0 and a.dtype == np.float64 for a in arrays)
    ):
        return False
    try:  # samples that check errors: the op database's tests cover them
        entry.call(tt, *to_tt(sample.args, "cpu"), **to_tt(sample.kwargs, "cpu"))
    except Exception:
        return False
    return True


def _float64_samples(entry: OpEntry) -> list[Sample]:
    rng = np.random.default_rng(seed_of(entry.id, "float64", "autograd"))
    return [s for s in entry.samples("float64", rng) if _usable(entry, s)]


def _gradgradcheck(fn: Callable[..., Any], inputs: list[Any]) -> None:
    """gradgradcheck over the first derivatives that depend on the inputs (see the
    note in the report: tt.autograd.gradgradcheck miscounts outputs that don't)."""

    def first(*xs: Any) -> tuple[Any, ...]:
        with tt.enable_grad():
            xs = tuple(x if x.requires_grad else x.detach().requires_grad_() for x in xs)
            outs = fn(*xs)
            seeds = [tt.ones_like(o) for o in outs]
            grads = tt.autograd.grad(
                list(outs), list(xs), grad_outputs=seeds, create_graph=True, allow_unused=True
            )
        return tuple(g for g in grads if g is not None and g.requires_grad)

    gradcheck(first, inputs)


def _without_formula(outs: list[Any]) -> bool:
    """Whether the call went to an overload of WITHOUT_FORMULA (the autograd fallback)."""
    return any(o.grad_fn is not None and o.grad_fn.name() == "NotImplemented" for o in outs)


def _finite(outs: list[Any]) -> bool:
    return all(np.isfinite(o.detach().numpy()).all() for o in outs)


# -- (a) gradcheck over the op database --------------------------------------------------------------
def _differentiable_entries() -> list[OpEntry]:
    return [
        e
        for e in OPDB
        if "float64" in e.dtypes
        and not e.random
        and e.op != "_to_copy"
        # composites are differentiated through their decomposition
        and (_row_has_formula(e.op) or _family(e.op) == "composite")
    ]


def _family(row: str) -> str:
    return next((r.family for r in tt.OP_TABLE if r.name == row), "")


ENTRIES = [pytest.param(e, id=e.id) for e in _differentiable_entries()]


@pytest.mark.parametrize("entry", ENTRIES)
def test_gradcheck(entry: OpEntry) -> None:
    checked = fallback = 0
    samples = [s for s in _float64_samples(entry) if _small(s)]
    if not samples:
        pytest.skip("inputs too large for finite differences (EXTRA has small cases)")
    for n, sample in enumerate(samples):
        if (entry.id, sample.name) in NOT_SMOOTH:
            continue
        args, kwargs, diff = _leaves(sample, tt)
        out = entry.call(tt, *args, **kwargs)
        outs = _differentiable_outputs(out)
        if _without_formula(outs):
            fallback += 1
            continue
        assert outs and all(o.requires_grad for o in outs), (
            f"{entry.id}[{sample.name}]: a floating-point output does not require grad"
        )
        if not _finite(outs):
            continue  # nan/inf outputs (var of one element): nothing to compare
        fn = _fn_of(entry.call, tt, args, kwargs, diff)
        inputs = _pick(args, diff)
        gradcheck(fn, inputs)
        if n == 0:
            _gradgradcheck(fn, inputs)
        checked += 1
    if fallback and not checked:
        pytest.skip("only overloads of WITHOUT_FORMULA (PyTorch has no formula either)")
    assert checked, f"{entry.id}: no float64 sample was checked"


# -- hand-written cases ------------------------------------------------------------------------------
def _r(*shape: int, lo: float = -2.0, hi: float = 2.0, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed + 7 * len(shape)).uniform(lo, hi, shape)


TIES = np.array([[1.0, 3.0, 3.0, -1.0], [2.0, 2.0, 0.5, 2.0], [0.0, 0.0, 0.0, 0.0]])
ZEROS = np.array([[0.0, 2.0, 3.0], [1.5, 0.0, 0.0], [0.5, -1.0, 2.0]])


def F(lib: Any) -> Any:  # noqa: N802 (PyTorch's usual spelling)
    return lib.nn.functional


def W(lib: Any, *values: float) -> Any:  # noqa: N802
    """A constant float64 weight (class weights never require grad: PyTorch refuses)."""
    return lib.tensor(values, dtype=lib.float64)


# (id, call(lib, *tensors), arrays, smooth): every array becomes a float64 leaf.  Cases at
# ties are not smooth (finite differences see one side), and some formulas are PyTorch's
# choice rather than the derivative (embedding's padding row and scale_grad_by_freq):
# those are compared with PyTorch only.
EXTRA: list[tuple[str, Callable[..., Any], list[np.ndarray], bool]] = [
    ("amax-ties", lambda lib, x: lib.amax(x, dim=1), [TIES], False),
    ("amax-ties-all", lambda lib, x: lib.amax(x), [TIES], False),
    ("amin-ties-keepdim", lambda lib, x: lib.amin(x, dim=(0, 1), keepdim=True), [TIES], False),
    ("max-ties", lambda lib, x: lib.max(x), [TIES], False),
    ("min-ties", lambda lib, x: x.min(), [TIES], False),
    ("norm-inf-ties", lambda lib, x: lib.norm(x, p=float("inf"), dim=1), [TIES], False),
    ("max-dim-keepdim", lambda lib, x: lib.max(x, 0, keepdim=True)[0], [_r(3, 4)], True),
    ("min-dim", lambda lib, x: lib.min(x, dim=-1).values, [_r(3, 4)], True),
    ("prod-zeros", lambda lib, x: lib.prod(x), [ZEROS], True),
    ("prod-zeros-dim", lambda lib, x: lib.prod(x, 1), [ZEROS], True),
    ("prod-one-zero", lambda lib, x: lib.prod(x, 0, keepdim=True), [ZEROS[:2]], True),
    ("cumprod-zeros", lambda lib, x: lib.cumprod(x, 1), [ZEROS], True),
    ("cumprod-zeros-dim0", lambda lib, x: lib.cumprod(x, 0), [ZEROS], True),
    ("norm-p3", lambda lib, x: lib.norm(x, p=3, dim=1), [_r(3, 4)], True),
    ("norm-p1.5", lambda lib, x: lib.norm(x, p=1.5), [_r(3, 4)], True),
    ("norm-p0.5", lambda lib, x: lib.norm(x, p=0.5, dim=0), [_r(3, 4, lo=0.5)], True),
    ("vector-norm-ord-inf", lambda lib, x: lib.linalg.vector_norm(x, ord=float("-inf")), [_r(5)], True),
    ("vector-norm-ord3-keepdim", lambda lib, x: lib.linalg.vector_norm(x, 3, 0, True), [_r(3, 2)], True),
    ("var-correction2", lambda lib, x: lib.var(x, dim=1, correction=2), [_r(3, 4)], True),
    ("std-all", lambda lib, x: lib.std(x), [_r(3, 4)], True),
    ("std-keepdim", lambda lib, x: lib.std(x, dim=0, keepdim=True, correction=0), [_r(3, 4)], True),
    ("logsumexp-keepdim", lambda lib, x: lib.logsumexp(x, (0, 1), keepdim=True), [_r(3, 4)], True),
    ("mean-dims", lambda lib, x: lib.mean(x, (0, 2)), [_r(2, 3, 2)], True),
    ("sum-keepdim-neg", lambda lib, x: lib.sum(x, -1, keepdim=True), [_r(2, 3)], True),
    ("matmul-batch-bcast", lambda lib, x, y: lib.matmul(x, y), [_r(2, 1, 3, 4), _r(5, 4, 2)], True),
    ("matmul-1d-3d", lambda lib, x, y: lib.matmul(x, y), [_r(4), _r(2, 4, 3)], True),
    ("matmul-3d-1d", lambda lib, x, y: lib.matmul(x, y), [_r(2, 3, 4), _r(4)], True),
    ("addmm-scalar-self", lambda lib, s, a, b: lib.addmm(s, a, b, alpha=0.5), [_r(1), _r(2, 3), _r(3, 2)], True),
    ("einsum-trace", lambda lib, x: lib.einsum("ii->", x), [_r(3, 3)], True),
    ("einsum-outer", lambda lib, x, y: lib.einsum("i,j->ij", x, y), [_r(3), _r(2)], True),
    ("einsum-bcast", lambda lib, x, y: lib.einsum("...ij,...jk->...ik", x, y), [_r(1, 2, 3), _r(4, 3, 2)], True),
    ("einsum-three", lambda lib, x, y, z: lib.einsum("ij,jk,k->i", x, y, z), [_r(2, 3), _r(3, 4), _r(4)], True),
    ("einsum-repeat-keep", lambda lib, x, y: lib.einsum("iij,j->ij", x, y), [_r(2, 2, 3), _r(3)], True),
    ("tensordot-neg-dims", lambda lib, x, y: lib.tensordot(x, y, ([-1, 0], [0, 1])), [_r(3, 2, 4), _r(4, 3)], True),
    ("pow-tensor-tensor", lambda lib, x, y: lib.pow(x, y), [_r(3, lo=0.5), _r(3)], True),
    ("where-both", lambda lib, x, y: lib.where(x > 0, x, y), [_r(3, 4), _r(4)], True),
    ("clamp-tensors", lambda lib, x, lo, hi: lib.clamp(x, lo, hi), [_r(3, 4, lo=-3, hi=3), _r(4, lo=-2, hi=-1), _r(3, 1, lo=1, hi=2)], True),
    ("max-other", lambda lib, x, y: lib.max(x, y), [_r(3, 4), _r(4)], True),
    ("lerp-tensor", lambda lib, x, y, w: lib.lerp(x, y, w), [_r(3, 4), _r(4), _r(3, 1)], True),
    ("addcmul-bcast", lambda lib, x, a, b: lib.addcmul(x, a, b, value=0.5), [_r(3, 1), _r(4), _r(2, 1, 1)], True),
    ("addcdiv-bcast", lambda lib, x, a, b: lib.addcdiv(x, a, b, value=-2), [_r(4), _r(3, 1), _r(3, 4, lo=0.5, hi=2)], True),
    # neural-network functions (small inputs: finite differences over every element)
    ("softmax", lambda lib, x: lib.softmax(x, 1), [_r(3, 4)], True),
    ("softmax-dim0", lambda lib, x: F(lib).softmax(x, dim=0), [_r(3, 4)], True),
    ("log_softmax", lambda lib, x: F(lib).log_softmax(x, dim=-1), [_r(2, 3, 4)], True),
    ("layer_norm", lambda lib, x, w, b: F(lib).layer_norm(x, [4], w, b), [_r(3, 4), _r(4), _r(4)], True),
    ("layer_norm-2d-noaffine", lambda lib, x: F(lib).layer_norm(x, [2, 3], eps=1e-3), [_r(2, 2, 3)], True),
    ("linear", lambda lib, x, w, b: F(lib).linear(x, w, b), [_r(2, 3), _r(4, 3), _r(4)], True),
    ("mse_loss", lambda lib, x, y: F(lib).mse_loss(x, y), [_r(3, 4), _r(3, 4)], True),
    ("mse_loss-none", lambda lib, x, y: F(lib).mse_loss(x, y, reduction="none"), [_r(3, 4), _r(4)], True),
    ("bce_logits", lambda lib, x, y: F(lib).binary_cross_entropy_with_logits(x, y), [_r(3, 4), _r(3, 4, lo=0, hi=1)], True),
    ("bce_logits-weights", lambda lib, x, y: F(lib).binary_cross_entropy_with_logits(x, y, W(lib, 0.5, 1.0, 2.0, 1.5), pos_weight=W(lib, 2.0, 1.0, 0.5, 3.0), reduction="sum"), [_r(3, 4), _r(3, 4, lo=0, hi=1)], True),
    ("cross_entropy", lambda lib, x: F(lib).cross_entropy(x, lib.tensor([0, 2, 1])), [_r(3, 4)], True),
    ("cross_entropy-weight-ignore", lambda lib, x: F(lib).cross_entropy(x, lib.tensor([0, 2, -100, 3]), W(lib, 0.5, 1.0, 2.0, 1.5)), [_r(4, 4)], True),
    ("cross_entropy-smooth-sum", lambda lib, x: F(lib).cross_entropy(x, lib.tensor([1, 0, 1]), W(lib, 0.5, 2.0), reduction="sum", label_smoothing=0.2), [_r(3, 2)], True),
    ("cross_entropy-smooth-weight-mean", lambda lib, x: F(lib).cross_entropy(x, lib.tensor([1, 0, 2, 1]), W(lib, 0.5, 2.0, 1.0), ignore_index=0, label_smoothing=0.3), [_r(4, 3)], True),
    ("cross_entropy-spatial-none", lambda lib, x: F(lib).cross_entropy(x, lib.tensor([[0, 2], [1, 1]]), reduction="none", label_smoothing=0.1), [_r(2, 3, 2)], True),
    ("cross_entropy-1d", lambda lib, x: F(lib).cross_entropy(x, lib.tensor(2)), [_r(4)], True),
    ("cross_entropy-probs", lambda lib, x, t: F(lib).cross_entropy(x, t, label_smoothing=0.1), [_r(3, 4), _r(3, 4, lo=0, hi=1)], True),
    ("cross_entropy-probs-weight-none", lambda lib, x, t: F(lib).cross_entropy(x, t, W(lib, 0.5, 1.0, 2.0, 1.5), reduction="none"), [_r(3, 4), _r(3, 4, lo=0, hi=1)], True),
    ("embedding", lambda lib, w: F(lib).embedding(lib.tensor([[0, 2], [2, 3]]), w), [_r(4, 3)], True),
    ("embedding-freq", lambda lib, w: F(lib).embedding(lib.tensor([0, 2, 2, 3, 2]), w, scale_grad_by_freq=True), [_r(4, 3)], False),
    ("embedding-padding", lambda lib, w: F(lib).embedding(lib.tensor([0, 2, 1]), w, padding_idx=2), [_r(4, 3)], False),
    ("conv2d", lambda lib, x, w, b: F(lib).conv2d(x, w, b), [_r(1, 2, 4, 4), _r(3, 2, 2, 2), _r(3)], True),
    ("conv2d-stride-pad", lambda lib, x, w: F(lib).conv2d(x, w, stride=2, padding=1), [_r(2, 1, 5, 4), _r(2, 1, 3, 2)], True),
    ("conv2d-dilation-stride", lambda lib, x, w: F(lib).conv2d(x, w, stride=(2, 1), dilation=(1, 2), padding=(0, 1)), [_r(1, 2, 5, 5), _r(2, 2, 2, 2)], True),
    ("conv2d-groups", lambda lib, x, w, b: F(lib).conv2d(x, w, b, groups=2), [_r(1, 4, 3, 3), _r(4, 2, 2, 2), _r(4)], True),
    ("conv2d-same", lambda lib, x, w: F(lib).conv2d(x, w, padding="same"), [_r(1, 1, 4, 3), _r(2, 1, 2, 3)], True),
    ("conv2d-unbatched", lambda lib, x, w: F(lib).conv2d(x, w, padding=1), [_r(2, 3, 3), _r(1, 2, 2, 2)], True),
    ("max_pool2d", lambda lib, x: F(lib).max_pool2d(x, 2), [_r(1, 2, 4, 4)], True),
    ("max_pool2d-pad-ceil", lambda lib, x: F(lib).max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True), [_r(1, 1, 5, 6)], True),
    ("max_pool2d-dilation", lambda lib, x: F(lib).max_pool2d(x, 2, stride=1, dilation=2), [_r(2, 5, 5)], True),
    ("avg_pool2d", lambda lib, x: F(lib).avg_pool2d(x, 2), [_r(1, 2, 4, 4)], True),
    ("avg_pool2d-pad", lambda lib, x: F(lib).avg_pool2d(x, 3, stride=2, padding=1), [_r(1, 1, 5, 6)], True),
    ("avg_pool2d-exclude-ceil", lambda lib, x: F(lib).avg_pool2d(x, (3, 2), stride=2, padding=1, ceil_mode=True, count_include_pad=False), [_r(1, 1, 5, 6)], True),
    ("avg_pool2d-divisor", lambda lib, x: F(lib).avg_pool2d(x, 2, stride=1, divisor_override=3), [_r(2, 3, 3)], True),
    ("dropout-eval", lambda lib, x: F(lib).dropout(x, 0.5, training=False), [_r(3, 4)], True),
]  # fmt: skip
EXTRA_PARAMS = [pytest.param(*c, id=c[0]) for c in EXTRA]


@pytest.mark.parametrize(("name", "call", "arrays", "smooth"), EXTRA_PARAMS)
def test_gradcheck_extra(
    name: str, call: Callable[..., Any], arrays: list[np.ndarray], smooth: bool
) -> None:
    if not smooth:
        pytest.skip("not the finite-difference derivative: compared with PyTorch only")
    inputs = [tt.from_numpy(a.copy()).requires_grad_() for a in arrays]

    def fn(*xs: Any) -> Any:
        return call(tt, *xs)

    gradcheck(fn, inputs)
    _gradgradcheck(lambda *xs: tuple(_as_list(fn(*xs))), inputs)


# -- (b) the same gradients as PyTorch ----------------------------------------------------------------
def _torch() -> Any:
    return pytest.importorskip("torch", reason="PyTorch not installed: differential check skipped")


def _numpy(g: Any) -> np.ndarray | None:
    if g is None:
        return None
    return g.detach().numpy(force=True) if hasattr(g, "detach") else np.asarray(g)


def _assert_same_grads(ours: list[Any], theirs: list[Any], like: list[Any], where: str) -> None:
    for i, (a, b, x) in enumerate(zip(ours, theirs, like, strict=True)):
        a, b = _numpy(a), _numpy(b)
        shape = tuple(x.shape)
        a = np.zeros(shape) if a is None else a  # an unused input: None or zeros alike
        b = np.zeros(shape) if b is None else b
        assert a.shape == shape, f"{where}: gradient {i} has shape {a.shape}, input {shape}"
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9, err_msg=f"{where}: gradient {i}")


def _grads(lib: Any, fn: Callable[..., Any], leaves: list[Any], rng_seed: int) -> tuple[Any, ...]:
    """First gradients for random grad_outputs, and second ones (of their sum against
    random weights) where the first depend on the inputs."""
    rng = np.random.default_rng(rng_seed)
    outs = list(fn(*leaves))
    make = tt.from_numpy if lib is tt else lib.from_numpy
    seeds = [make(rng.standard_normal(tuple(o.shape))) for o in outs]
    # One scalar root: sum(out * seed) has the seeds as grad_outputs of the outputs.
    root = sum((o * s).sum() for o, s in zip(outs, seeds, strict=True))
    first = lib.autograd.grad(root, leaves, create_graph=True, allow_unused=True)
    weights = [make(rng.standard_normal(tuple(x.shape))) for x in leaves]
    total = None
    for g, w in zip(first, weights, strict=True):
        if g is not None and g.requires_grad:
            term = (g * w).sum()
            total = term if total is None else total + term
    second: tuple[Any, ...] = (None,) * len(leaves)
    if total is not None:
        second = lib.autograd.grad(total, leaves, allow_unused=True)
    return tuple(first), second


def _compare(
    our_fn: Callable[..., Any], their_fn: Callable[..., Any], arrays: list[np.ndarray], where: str
) -> None:
    torch = _torch()
    ours = [tt.from_numpy(a.copy()).requires_grad_() for a in arrays]
    theirs = [torch.from_numpy(a.copy()).requires_grad_() for a in arrays]
    seed = seed_of(where)
    our_first, our_second = _grads(tt, our_fn, ours, seed)
    try:
        their_first, their_second = _grads(torch, their_fn, theirs, seed)
    except RuntimeError as e:
        if "not implemented" in str(e):
            return  # PyTorch has no formula (remainder's Scalar self): ours is the extra
        raise
    _assert_same_grads(list(our_first), list(their_first), arrays, f"{where} first")
    _assert_same_grads(list(our_second), list(their_second), arrays, f"{where} second")


@pytest.mark.torch
@pytest.mark.parametrize("entry", ENTRIES)
def test_matches_torch(entry: OpEntry) -> None:
    if "float64" not in entry.torch_values_for:
        pytest.skip("PyTorch's float64 values differ by design for this entry")
    for sample in _float64_samples(entry):
        if not sample.torch_values:
            continue
        args, kwargs, diff = _leaves(sample, tt)
        outs = _differentiable_outputs(entry.call(tt, *args, **kwargs))
        if not _finite(outs) or _without_formula(outs):
            continue  # nan/inf outputs: their derivatives are nan in one library or another
        targs, tkwargs, tdiff = _leaves(sample, _torch())
        assert diff == tdiff
        try:
            (entry.torch_call or entry.call)(_torch(), *targs, **tkwargs)
        except Exception:
            continue  # PyTorch spells this call differently: the op database compares errors
        arrays = [sample.args[i] if j < 0 else sample.args[i][j] for i, j in diff]
        _compare(
            _fn_of(entry.call, tt, args, kwargs, diff),
            _fn_of(entry.torch_call or entry.call, _torch(), targs, tkwargs, diff),
            arrays,
            f"{entry.id}[{sample.name}]",
        )


@pytest.mark.torch
@pytest.mark.parametrize(("name", "call", "arrays", "smooth"), EXTRA_PARAMS)
def test_extra_matches_torch(
    name: str, call: Callable[..., Any], arrays: list[np.ndarray], smooth: bool
) -> None:
    torch = _torch()
    _compare(
        lambda *xs: tuple(_as_list(call(tt, *xs))),
        lambda *xs: tuple(_as_list(call(torch, *xs))),
        arrays,
        name,
    )


# -- (d) every differentiable overload has a formula --------------------------------------------------
def test_every_overload_has_a_formula_or_a_reason() -> None:
    covered = set(FORMULAS) | set(NOT_DIFFERENTIABLE) | set(WITHOUT_FORMULA) | set(PENDING)
    missing = sorted(
        key
        for key, family in OVERLOADS.items()
        # composites are differentiated through their decomposition; out= variants refuse
        # inputs that require grad (as in PyTorch)
        if family not in ("composite", "out") and key not in covered
    )
    assert not missing, f"overloads with no formula and no reason: {missing}"


def test_formula_tables_name_real_overloads_once() -> None:
    for table in (FORMULAS, NOT_DIFFERENTIABLE, WITHOUT_FORMULA, PENDING):
        unknown = sorted(set(table) - set(OVERLOADS))
        assert not unknown, f"not operators of the table: {unknown}"
    assert not set(FORMULAS) & set(NOT_DIFFERENTIABLE)
    assert not set(FORMULAS) & set(WITHOUT_FORMULA)
    composites = sorted(k for k in FORMULAS if OVERLOADS[k] == "composite")
    assert not composites, f"composites need no formula (their decomposition has): {composites}"


def test_every_formula_is_exercised() -> None:
    """Each row with a formula has an op-database entry, or a test of its own here."""
    own_tests = {"native_dropout", "_to_copy", "normal"}  # random or dtype-changing
    rows = {e.op for e in OPDB} | own_tests
    untested = sorted(k for k in FORMULAS if k.partition(".")[0] not in rows)
    assert not untested, f"formulas no test reaches: {untested}"


# -- formulas of their own ----------------------------------------------------------------------------
def test_to_copy_and_dtype_arguments_give_gradients_in_the_input_dtype() -> None:
    x = tt.tensor([1.0, 2.0, 3.0], dtype=tt.float32, requires_grad=True)
    y = x.to(tt.float64)
    assert y.grad_fn.name() == "ToCopyBackward0"
    (y * y).sum().backward()
    assert x.grad.dtype is tt.float32 and np.allclose(x.grad.numpy(), [2.0, 4.0, 6.0])
    x.grad = None
    tt.sum(x, dtype=tt.float64).backward()
    tt.cumsum(x, 0, dtype=tt.float64).sum().backward()
    assert x.grad.dtype is tt.float32 and np.allclose(x.grad.numpy(), [4.0, 3.0, 2.0])
    # a 0-d float64 tensor mixed with float32: each input gets its own dtype back
    s = tt.tensor(2.0, dtype=tt.float64, requires_grad=True)
    x.grad = None
    (x * s).sum().backward()
    assert x.grad.dtype is tt.float32 and s.grad.dtype is tt.float64
    assert float(s.grad) == pytest.approx(6.0)


def test_normal_gives_zero_gradients_to_its_parameters() -> None:
    mean = tt.zeros(3, dtype=tt.float64, requires_grad=True)
    std = tt.ones(3, dtype=tt.float64, requires_grad=True)
    tt.normal(mean, std).sum().backward()
    assert mean.grad.tolist() == [0.0] * 3 and std.grad.tolist() == [0.0] * 3


def test_dropout_gradient_is_the_kept_mask_scaled() -> None:
    x = tt.from_numpy(_r(50, 4, lo=0.5, hi=1.5)).requires_grad_()
    y = tt.nn.functional.dropout(x, 0.25, training=True)
    y.backward(tt.ones_like(y))
    kept = y.detach().numpy() != 0
    assert 0 < kept.sum() < kept.size
    np.testing.assert_allclose(x.grad.numpy(), kept / 0.75)
    x.grad = None
    tt.nn.functional.dropout(x, 1.0).sum().backward()
    assert not x.grad.numpy().any()


def test_formulas_run_on_meta_tensors() -> None:
    """Formulas call operators, so backward works without data (shapes and dtypes)."""
    skipped = []
    for name, call, arrays, _ in EXTRA:
        leaves = [
            tt.empty(*a.shape, dtype=tt.float64, device="meta").requires_grad_() for a in arrays
        ]
        try:
            outs = _as_list(call(tt, *leaves))
            root = sum((o * tt.ones_like(o)).sum() for o in outs if o.requires_grad)
            grads = tt.autograd.grad(root, leaves, allow_unused=True)
        except RuntimeError as e:
            assert "devices" in str(e), f"{name}: {e}"
            skipped.append(name)  # the case makes CPU index tensors: not for meta
            continue
        for x, g in zip(leaves, grads, strict=True):
            assert g is not None and g.device.type == "meta", name
            assert tuple(g.shape) == tuple(x.shape) and g.dtype is x.dtype, name
    assert len(skipped) < len(EXTRA) // 4, skipped


# -- (c) integer and bool inputs never require grad ------------------------------------------------------
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64"])
def test_integer_and_bool_tensors_cannot_require_grad(dtype: str) -> None:
    dt = getattr(tt, dtype)
    message = "only Tensors of floating point and complex dtype can require gradients"
    with pytest.raises(RuntimeError, match=message):
        tt.zeros(2, dtype=dt).requires_grad_()
    with pytest.raises(RuntimeError, match=message):
        tt.tensor([1, 0], dtype=dt, requires_grad=True)
    t = tt.zeros(2, dtype=dt)
    with pytest.raises(RuntimeError, match=message):
        t.requires_grad = True
    assert not t.requires_grad


BINARY_ENTRIES = [
    pytest.param(e, id=e.id)
    for e in _differentiable_entries()
    if any(s.name == "same" for s in e.samples("float64", np.random.default_rng(0)))
]


@pytest.mark.parametrize("entry", BINARY_ENTRIES)
def test_integer_operands_get_no_gradient(entry: OpEntry) -> None:
    """A float64 leaf combined with an int64 tensor: only the float one gets a gradient."""
    rng = np.random.default_rng(seed_of(entry.id, "mixed"))
    sample = next(s for s in entry.samples("float64", rng) if s.name == "same")
    if sample.args[0].dtype != np.float64:
        pytest.skip("the first operand is not the float one")
    x = tt.from_numpy(sample.args[0].copy()).requires_grad_()
    other = tt.from_numpy(np.round(np.abs(sample.args[1])).astype(np.int64) + 1)
    try:
        out = entry.call(tt, x, other, *map(lambda v: to_tt(v, "cpu"), sample.args[2:]))
    except (RuntimeError, TypeError, NotImplementedError):
        pytest.skip("this operator takes no integer operand here")
    outs = [o for o in _as_list(out) if o.requires_grad]
    assert outs
    sum(o.sum() for o in outs).backward()
    assert not other.requires_grad and other.grad is None and other.grad_fn is None
    assert x.grad is not None and x.grad.dtype is tt.float64 and x.grad.shape == x.shape


def _not_differentiable_rows() -> set[str]:
    rows = set()
    for row in tt.OP_TABLE:
        keys = [k for text in row.schemas for k in _keys_of(text)]
        if row.family not in ("out", "inplace") and keys and set(keys) <= NOT_DIFFERENTIABLE:
            rows.add(row.name)
    return rows


def _keys_of(text: str) -> list[str]:
    s = parse_schema(text)
    return [s.name + (f".{s.overload_name}" if s.overload_name else "")]


NOT_DIFF_ROWS = _not_differentiable_rows()
NOT_DIFF_ENTRIES = [
    pytest.param(e, id=e.id)
    for e in OPDB
    if "float64" in e.dtypes and not e.random and e.op in NOT_DIFF_ROWS
]


@pytest.mark.parametrize("entry", NOT_DIFF_ENTRIES)
def test_not_differentiable_outputs_never_require_grad(entry: OpEntry) -> None:
    rng = np.random.default_rng(seed_of(entry.id, "float64", "nondiff"))
    ran = 0
    for sample in entry.samples("float64", rng):
        args, kwargs, diff = _leaves(sample, tt)
        if not diff:
            continue
        try:
            out = entry.call(tt, *args, **kwargs)
        except Exception:
            continue  # error samples: the op database checks them
        for o in _as_list(out):
            assert not o.requires_grad and o.grad_fn is None, f"{entry.id}[{sample.name}]"
        ran += 1
    if not ran:
        pytest.skip("no sample with a float64 tensor input")


# -- (3) version counters and in-place operators ----------------------------------------------------
MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace"


def _pair_of_leaves(values: Any) -> tuple[tt.Tensor, Any]:
    """The same float64 leaf in both libraries (PyTorch's is None when not installed)."""
    ours = tt.tensor(values, dtype=tt.float64, requires_grad=True)
    try:
        import torch
    except ImportError:
        return ours, None
    return ours, torch.tensor(values, dtype=torch.float64, requires_grad=True)


@pytest.mark.parametrize(
    "case",
    [
        "input-of-sin",  # sin saves its input
        "result-of-exp",  # exp saves its result
        "mul-operand",  # mul saves the other operand of an input that requires grad
        "view-of-saved",  # a write through a view bumps the base's version
        "matmul-operand",
        "own-operand",  # a.mul_(a): the saved other operand is self, written by the op
    ],
)
def test_saved_tensor_modified_in_place_raises(case: str) -> None:
    def run(lib: Any, x: Any) -> Any:
        a = x * 1
        if case == "input-of-sin":
            out = a.sin()
            a.add_(1)
        elif case == "result-of-exp":
            out = a.exp()
            out.mul_(2)
        elif case == "mul-operand":
            out = x * a
            a.sub_(1)
        elif case == "view-of-saved":
            out = a.cos()
            a[0].fill_(0.0)
        elif case == "own-operand":
            a.mul_(a)
            out = a
        else:
            out = lib.matmul(a, x)
            a.div_(2)
        return out.sum()

    x, tx = _pair_of_leaves([0.5, 1.0, 2.0])
    loss = run(tt, x)
    with pytest.raises(RuntimeError, match=MODIFIED) as info:
        loss.backward()
    assert "is at version" in str(info.value) and "expected version" in str(info.value)
    if tx is not None:
        import torch

        with pytest.raises(RuntimeError, match=MODIFIED):
            run(torch, tx).backward()


@pytest.mark.parametrize("case", ["add-scalar", "mul-by-number", "exp-input", "relu-input"])
def test_unsaved_tensor_modified_in_place_is_fine(case: str) -> None:
    """Only what a formula reads is checked: PyTorch accepts these, so do we."""

    def run(lib: Any, x: Any) -> Any:
        a = x * 1
        out = {
            "add-scalar": lambda: a + 1,
            "mul-by-number": lambda: a * 3,
            "exp-input": lambda: a.exp(),
            "relu-input": lambda: lib.relu(a),
        }[case]()
        a.mul_(5)
        return (out * out).sum()

    x, tx = _pair_of_leaves([0.5, -1.0, 2.0])
    run(tt, x).backward()
    if tx is not None:
        import torch

        run(torch, tx).backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_in_place_on_a_leaf_that_requires_grad_raises() -> None:
    w = tt.tensor([1.0, 2.0], dtype=tt.float64, requires_grad=True)
    for write in (
        lambda: w.add_(1),
        lambda: w.mul_(w),
        lambda: w.exp_(),
        lambda: w.copy_(tt.ones(2)),
        lambda: w.zero_(),
        lambda: w.__iadd__(1),
    ):
        with pytest.raises(
            RuntimeError,
            match=r"^a leaf Variable that requires grad is being used in an in-place operation\.",
        ):
            write()
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        w[0].mul_(2)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        w[1] = 5.0
    assert w._version == 0 and w.tolist() == [1.0, 2.0]  # refused before writing
    with tt.no_grad():  # what an optimizer does
        w.sub_(0.5)
        w[0] = 3.0
    assert w.tolist() == [3.0, 1.5] and w.is_leaf and w.grad_fn is None


def test_versions_count_writes_through_views() -> None:
    a = tt.zeros(3, 4, dtype=tt.float64)
    v = a[1:]
    assert a._version == v._version == 0
    v.add_(1)
    a[0, 0] = 2.0
    a.mul_(2)
    assert a._version == v._version == 3


def test_in_place_on_a_non_leaf_rebases_its_history() -> None:
    x = tt.tensor([0.5, 1.0, 2.0], dtype=tt.float64, requires_grad=True)
    a = x * 2
    before = a.grad_fn
    a.sin_()
    assert a.grad_fn.name() == "SinBackward0" and a.grad_fn.next_functions[0][0] is before
    a.mul_(x)
    assert a.grad_fn.name() == "MulBackward0"
    a.sum().backward()
    xs = np.array([0.5, 1.0, 2.0])
    expected = 2 * np.cos(2 * xs) * xs + np.sin(2 * xs)
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_a_write_through_a_view_rebases_the_base() -> None:
    x = tt.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=tt.float64, requires_grad=True)
    a = x * 1
    row = a[0]
    row.mul_(3)
    assert a.grad_fn.name() == "CopySlices" and row.grad_fn.name() == "AsStridedBackward0"
    a.sum().backward()
    assert x.grad.tolist() == [[3.0, 3.0], [1.0, 1.0]]


def test_out_variants_refuse_inputs_that_require_grad() -> None:
    x = tt.tensor([1.0, 2.0], dtype=tt.float64, requires_grad=True)
    out = tt.empty(2, dtype=tt.float64)
    message = (
        r"add\(\): functions with out=\.\.\. arguments don't support automatic differentiation"
    )
    with pytest.raises(RuntimeError, match=message):
        tt.add(x, 1, out=out)
    with pytest.raises(RuntimeError, match=message):
        tt.add(tt.ones(2, dtype=tt.float64), 1, out=x)
    with pytest.raises(RuntimeError, match="sum"):
        tt.sum(x, 0, out=tt.empty((), dtype=tt.float64))
    mask = tt.empty(2, dtype=tt.bool)
    tt.eq(x, x, out=mask)  # not differentiable: fine, as in PyTorch
    assert mask.tolist() == [True, True] and not mask.requires_grad
    with tt.no_grad():
        tt.add(x, 1, out=out)
    assert out.tolist() == [2.0, 3.0]


# Graphs with in-place writes, run in both libraries: the same gradients for x and w.
def _inplace_graphs() -> dict[str, Callable[..., Any]]:
    def nonleaf_chain(lib: Any, x: Any, w: Any) -> Any:
        a = x * w
        a.sin_()
        a.add_(w, alpha=2)
        a.mul_(a.detach() + w)
        a.div_(w + 3)
        return a.sum()

    def write_row(lib: Any, x: Any, w: Any) -> Any:
        a = x.clone()
        a[0] = w.sin()
        a[1:, 1] *= 3
        return (a * a).sum()

    def into_buffer(lib: Any, x: Any, w: Any) -> Any:
        out = lib.zeros(3, 3, dtype=x.dtype)
        out[1] = w
        out[:, 2] += x[:, 0]
        out.diagonal().mul_(2)
        return (out * out.sum(0)).sum()

    def view_then_read(lib: Any, x: Any, w: Any) -> Any:
        a = x + 0
        v = a[1:, :2]
        v.sub_(w[:2])
        v.relu_()
        return (v.sum() + a.sum() * 2) * a[0, 0]

    def transposed_view(lib: Any, x: Any, w: Any) -> Any:
        a = (x * 2).t()
        col = a[:, 1]
        col.copy_(w * w)
        b = a.contiguous().view(-1)
        b[:4].mul_(b[5:].detach() + 1)
        return (a.sum(1) * lib.arange(3, dtype=x.dtype)).sum() + b.sum()

    def two_passes(lib: Any, x: Any, w: Any) -> Any:
        a = x * 1
        a.masked_fill_(x > 0.5, 0.0)
        a.index_put_((lib.tensor([0, 2]),), w[:2].unsqueeze(1), accumulate=True)
        return (a**2).sum()

    return {f.__name__: f for f in (nonleaf_chain, write_row, into_buffer, view_then_read,
                                    transposed_view, two_passes)}  # fmt: skip


@pytest.mark.torch
@pytest.mark.parametrize("name", list(_inplace_graphs()))
def test_in_place_graphs_match_torch(name: str) -> None:
    torch = _torch()
    fn = _inplace_graphs()[name]
    xs, ws = _r(3, 3, lo=-1, hi=1), _r(3, lo=-1, hi=1)
    x, w = tt.from_numpy(xs.copy()).requires_grad_(), tt.from_numpy(ws.copy()).requires_grad_()
    tx, tw = (
        torch.from_numpy(xs.copy()).requires_grad_(),
        torch.from_numpy(ws.copy()).requires_grad_(),
    )
    loss, tloss = fn(tt, x, w), fn(torch, tx, tw)
    np.testing.assert_allclose(float(loss.detach()), float(tloss.detach()), rtol=1e-12)
    loss.backward()
    tloss.backward()
    for ours, theirs, what in ((x.grad, tx.grad, "x"), (w.grad, tw.grad, "w")):
        np.testing.assert_allclose(
            _numpy(ours), _numpy(theirs), rtol=1e-10, atol=1e-12, err_msg=f"{name}: {what}"
        )


# -- whole graphs against PyTorch ---------------------------------------------------------------------
def _mlp(lib: Any, x: Any, w1: Any, b1: Any, w2: Any) -> Any:
    f = lib.nn.functional
    h = f.gelu(f.linear(x, w1, b1))
    return f.cross_entropy(f.linear(h, w2), lib.tensor([0, 2, 1, 2]))


def _cnn(lib: Any, x: Any, k1: Any, k2: Any, w: Any) -> Any:
    f = lib.nn.functional
    h = f.max_pool2d(f.relu(f.conv2d(x, k1, padding=1)), 2)
    h = f.avg_pool2d(f.conv2d(h, k2, stride=1, groups=2), 1)
    return f.cross_entropy(f.linear(h.flatten(1), w), lib.tensor([1, 0]), label_smoothing=0.1)


def _attention(lib: Any, x: Any, wq: Any, wk: Any, wv: Any) -> Any:
    f = lib.nn.functional
    h = f.layer_norm(x, [4])
    q, k, v = h @ wq, h @ wk, h @ wv
    scores = (q @ k.transpose(-2, -1)) / 2.0
    mask = lib.ones(3, 3, dtype=lib.bool).tril()
    att = f.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return ((att @ v).sum(-1) ** 2).mean()


def _used_twice(lib: Any, x: Any, w: Any, b: Any, c: Any) -> Any:
    y = x * w  # y feeds two branches
    return (lib.tanh(y).sum(0) * y.exp().mean(0)).sum() + (y @ b.unsqueeze(1) * c).sum()


GRAPHS = {
    "mlp": (_mlp, [(4, 5), (6, 5), (6,), (3, 6)]),
    "cnn": (_cnn, [(2, 2, 6, 6), (4, 2, 3, 3), (4, 2, 2, 2), (2, 16)]),
    "attention": (_attention, [(2, 3, 4), (4, 4), (4, 4), (4, 4)]),
    "used-twice": (_used_twice, [(3, 4), (4,), (4,), (3, 1)]),
}


@pytest.mark.torch
@pytest.mark.parametrize("name", list(GRAPHS))
def test_graphs_match_torch(name: str) -> None:
    torch = _torch()
    fn, shapes = GRAPHS[name]
    arrays = [_r(*s, seed=i) * 0.7 for i, s in enumerate(shapes)]
    _compare(lambda *xs: (fn(tt, *xs),), lambda *xs: (fn(torch, *xs),), arrays, f"graph {name}")


def _names(node: Any) -> Any:
    """A graph as nested (name, children) tuples; ``None`` for an edge with no node."""
    if node is None:
        return None
    name = node.name().rsplit("::", 1)[-1]  # torch's "torch::autograd::AccumulateGrad"
    return (name, tuple(_names(n) for n, _ in node.next_functions))


@pytest.mark.torch
def test_linear_and_t_record_pytorchs_nodes() -> None:
    # t is an operator of its own (TBackward0), and F.linear records addmm over it.
    torch = _torch()

    def graphs(lib: Any) -> Any:
        x = lib.ones(4, 3)
        w, b = lib.ones(2, 3, requires_grad=True), lib.ones(2, requires_grad=True)
        v = lib.ones(3, requires_grad=True)
        return [
            _names(lib.nn.functional.linear(x, w, b).grad_fn),
            _names(lib.nn.functional.linear(x, w).grad_fn),
            _names(w.t().grad_fn),
            _names(v.t().grad_fn),
        ]

    assert graphs(tt) == graphs(torch)


@pytest.mark.torch
def test_accumulation_retain_graph_and_grad_outputs_match_torch() -> None:
    torch = _torch()
    xs, gs = _r(3, 4), _r(3, 4, seed=5)

    def run(lib: Any) -> tuple[Any, ...]:
        x = lib.from_numpy(xs.copy()).requires_grad_()
        y = lib.sin(x) * x
        y.backward(lib.from_numpy(gs.copy()), retain_graph=True)
        y.sum().backward(retain_graph=True)  # accumulates into x.grad
        first = x.grad.clone()
        (g,) = lib.autograd.grad(y, x, grad_outputs=lib.from_numpy(gs.copy()), create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), x)
        return first, g, h

    for ours, theirs in zip(run(tt), run(torch), strict=True):
        np.testing.assert_allclose(_numpy(ours), _numpy(theirs), rtol=1e-12, atol=1e-14)


# -- (g) what a recorded call keeps (Note [Recording cost]) --------------------------------------------
def _op_nodes(outs: list[Any]) -> list[Any]:
    """Every OpNode of the graphs behind ``outs``."""
    from tensor.autograd._layer import OpNode

    seen: dict[int, Any] = {}
    stack = [o.grad_fn for o in outs if o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen[id(node)] = node
        stack.extend(n for n, _ in node.next_functions)
    return [n for n in seen.values() if isinstance(n, OpNode)]


@pytest.mark.parametrize("entry", ENTRIES)
def test_calls_recorded_without_binding_save_what_binding_saves(entry: OpEntry) -> None:
    """A call recorded with positional arguments only is bound when its formula runs, and
    the tensors whose versions it checks are read from ``args`` by position
    (``_positional_saver``); they must be those the bound call names, in order."""
    from tensor.autograd._layer import _saved_spec, _saved_tensors

    checked = 0
    for sample in _float64_samples(entry):
        args, kwargs, _ = _leaves(sample, tt)
        outs = _differentiable_outputs(entry.call(tt, *args, **kwargs))
        for node in _op_nodes(outs):
            if node._args is None:  # bound when recorded (keywords, or no saved spec)
                continue
            spec = _saved_spec(node.formula)
            expected = _saved_tensors((spec[0], False), node.bound, None)
            kept = [t for t, _ in node.versions]
            assert len(kept) >= len(expected), (node.op, kept, expected)
            assert all(k is e for k, e in zip(kept, expected, strict=False)), node.op
            assert len(kept) - len(expected) == (len(_as_list(node.out)) if spec[1] else 0)
            checked += 1
    if not checked:
        pytest.skip("no call of this entry is recorded without binding")


@pytest.mark.parametrize("entry", ENTRIES)
def test_generated_recording_records_what_record_does(entry: OpEntry) -> None:
    """Note [Generated recording]: each node a generated kernel made, recorded again by
    the kernel's general ``record`` from the same arguments and an alias of the same
    output, is the same: operator and formula, arguments, edges (the same nodes), the
    saved versions (the same tensors; the result as a detached alias), result kept or
    not, view version."""
    from tensor.autograd._layer import GENERATED

    checked = 0
    for sample in _float64_samples(entry):
        args, kwargs, _ = _leaves(sample, tt)
        outs = _differentiable_outputs(entry.call(tt, *args, **kwargs))
        for node in _op_nodes(outs):
            kernel = GENERATED.get(node.op)
            # Several results (a tuple: the generated kernel hands those to ``record``).
            if kernel is None or node._args is None or node._num_outputs != 1:
                continue
            out = node.out
            # A result not kept: any tensor of a float dtype stands in for it.
            alias = tt.zeros(1, dtype=tt.float64) if out is None else out.detach()
            again = kernel.record(alias, node._args, {}).grad_fn
            assert type(again) is type(node) and again.op is node.op, node.op
            assert again.formula is node.formula and again._args is node._args, node.op
            assert again.next_functions == node.next_functions, node.op
            assert (again.out is None) == (node.out is None), node.op
            assert len(again.versions) == len(node.versions), node.op
            for (t, v), (u, w) in zip(again.versions, node.versions, strict=True):
                assert v == w, node.op
                if t is not u:  # the saved result: a detached alias of the same array
                    assert t._array is u._array and t.grad_fn is None, node.op
            checked += 1
    if not checked:
        pytest.skip("no call of this entry is recorded by a generated kernel")


def test_generated_recording_of_a_call_without_its_trailing_optional_tensors() -> None:
    """``F.cross_entropy(x, y)`` reaches the operator through its two-tensor entry, the
    optional weight left out: the generated kernel records it (the weight None, no edge
    from it) as ``record`` and the full call do, with the same gradient."""
    from dispatch import ops
    from tensor.autograd._layer import GENERATED

    op = ops.core.cross_entropy_loss.default
    rng = np.random.default_rng(0)
    x = tt.tensor(rng.standard_normal((5, 4)), requires_grad=True)
    y = tt.tensor(rng.integers(0, 4, 5))
    kernel = GENERATED[op]
    general = kernel.__globals__["_record"]

    def refused(*args: Any) -> Any:
        raise AssertionError("the generated kernel handed the call to record")

    kernel.__globals__["_record"] = refused
    try:
        short = op.call2(x, y)
    finally:
        kernel.__globals__["_record"] = general
    full = op(x, y, None, 1, -100, 0.0)
    node = short.grad_fn
    assert node._args == (x, y)
    again = GENERATED[op].record(short.detach(), node._args, {}).grad_fn
    assert again.next_functions == node.next_functions == full.grad_fn.next_functions
    assert [(t, v) for t, v in again.versions] == [(t, v) for t, v in node.versions]
    assert short.item() == full.item()
    (g_short,) = tt.autograd.grad(short, x)
    (g_full,) = tt.autograd.grad(full, x)
    np.testing.assert_array_equal(g_short.numpy(), g_full.numpy())
    assert tt.nn.functional.cross_entropy(x, y).grad_fn._args == (x, y)


def test_formulas_that_do_not_save_the_result_never_read_it() -> None:
    """The result is kept only for formulas that name it (``saves("result")``); the
    others get None, so their source must not read it (its shape is the gradient's)."""
    import ast
    import inspect

    from tensor.optable import creation, elementwise, linalg, nn, reduction, shape

    offenders = []
    for module in (creation, elementwise, linalg, nn, reduction, shape):
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            if not isinstance(node, ast.FunctionDef) or len(node.args.args) < 3:
                continue
            saves = [
                [getattr(a, "value", None) for a in d.args]
                for d in node.decorator_list
                if isinstance(d, ast.Call)
                and (getattr(d.func, "id", "") == "saves" or getattr(d.func, "attr", "") == "saves")
            ]
            if not saves or "result" in saves[0]:
                continue
            result = node.args.args[2].arg
            if any(isinstance(n, ast.Name) and n.id == result for n in ast.walk(node)):
                offenders.append(f"{module.__name__}.{node.name}")
    assert not offenders, f"formulas reading a result they do not save: {offenders}"

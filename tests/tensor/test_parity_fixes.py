"""The differences from PyTorch that the parity sweep (``test_torch_parity.py``) found, each
checked beyond the sweep's samples: autograd, version counters, autocast, errors.

Every test runs the same code with ``tensor`` and ``torch`` (skipped without torch).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensor as tt

torch = pytest.importorskip("torch", reason="PyTorch is not installed: these tests compare with it")

pytestmark = pytest.mark.torch

_rng = np.random.default_rng(7)
DATA = _rng.uniform(0.5, 1.5, (3, 3)).astype(np.float32)
OTHER = _rng.uniform(0.5, 1.5, (3, 3)).astype(np.float32)


def _both(fn: Callable[[Any], Any]) -> tuple[Any, Any]:
    return fn(tt), fn(torch)


def _close(ours: Any, theirs: Any) -> None:
    if isinstance(theirs, (tuple, list)):
        for a, b in zip(ours, theirs, strict=True):
            _close(a, b)
        return
    if theirs is None:
        assert ours is None
        return
    a, b = np.asarray(ours), theirs.detach().numpy() if hasattr(theirs, "detach") else theirs
    assert a.dtype == np.asarray(b).dtype and a.shape == np.shape(b)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _grads_through(call: Callable[[Any, Any, Any], Any]) -> Callable[[Any], Any]:
    """``call(lib, y, m)`` on ``y = 2 * x`` (not a leaf), then backward of a weighted sum:
    (result, x.grad, m.grad, y's version)."""

    def run(lib: Any) -> Any:
        x = lib.tensor(DATA, requires_grad=True)
        m = lib.tensor(OTHER, requires_grad=True)
        y = x * 2
        out = call(lib, y, m)
        assert out is y, "the in-place form returns self"
        (out * lib.tensor(OTHER)).sum().backward()
        return out.detach().numpy(), x.grad, m.grad, y._version

    return run


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("tt.sin_", lambda lib, y, m: lib.sin_(y)),
        ("tt.exp_", lambda lib, y, m: lib.exp_(y)),
        ("tt.sqrt_", lambda lib, y, m: lib.sqrt_(y)),
        ("tt.relu_", lambda lib, y, m: lib.relu_(y - 2.5)),
        ("F.relu_", lambda lib, y, m: lib.nn.functional.relu_(y)),
        ("tt.clamp_", lambda lib, y, m: lib.clamp_(y, 1.2, 2.0)),
        ("tt.clamp_ tensor bounds", lambda lib, y, m: lib.clamp_(y, m, None)),
        ("tt.nan_to_num_", lambda lib, y, m: lib.nan_to_num_(y)),
        ("tt.zero_", lambda lib, y, m: lib.zero_(y)),
        ("tt.fill_", lambda lib, y, m: lib.fill_(y, 3.0)),
        ("tt.index_put_", lambda lib, y, m: lib.index_put_(y, (lib.tensor([0, 2]),), m[0, :1])),
        ("Tensor.cumsum_", lambda lib, y, m: y.cumsum_(1)),
        ("Tensor.cumprod_", lambda lib, y, m: y.cumprod_(0)),
        ("Tensor.addmm_", lambda lib, y, m: y.addmm_(m, m, beta=0.5, alpha=2.0)),
        ("Tensor.tril_", lambda lib, y, m: y.tril_()),
        ("Tensor.triu_", lambda lib, y, m: y.triu_(1)),
    ],
)
def test_in_place_forms_write_self_and_differentiate_like_torch(name: str, call: Any) -> None:
    if name == "tt.relu_":  # y - 2.5 is a new tensor: check it, not y
        call = lambda lib, y, m: lib.relu_(y.sub_(2.5))  # noqa: E731
    ours, theirs = _both(_grads_through(call))
    _close(ours[:3], theirs[:3])
    assert ours[3] == theirs[3], f"{name}: version {ours[3]}, torch {theirs[3]}"


def test_fill_is_fill_on_a_copy_with_pytorchs_gradients() -> None:
    def run(lib: Any) -> Any:
        x = lib.tensor(DATA, requires_grad=True)
        v = lib.tensor(2.0, requires_grad=True)
        out = lib.fill(x * 1, v)
        (out * lib.tensor(OTHER)).sum().backward()
        scalar = lib.fill(x.detach(), 3)
        return out.detach().numpy(), x.grad, v.grad, scalar.detach().numpy(), x._version

    ours, theirs = _both(run)
    _close(ours[:4], theirs[:4])
    assert ours[4] == theirs[4] == 0  # the input is not written


def test_dropout_in_place_keeps_or_scales_like_torch() -> None:
    def run(lib: Any) -> Any:
        lib.manual_seed(0)
        x = lib.ones(2000, requires_grad=True)
        y = x * 1
        out = lib.dropout_(y, 0.25, True)
        out.sum().backward()
        kept = out.detach() != 0
        assert set(np.unique(out.detach().numpy()).tolist()) <= {0.0, np.float32(1 / 0.75)}
        assert np.array_equal(x.grad.numpy(), np.where(kept.numpy(), np.float32(1 / 0.75), 0))
        same = lib.ones(3)
        assert lib.dropout_(same, 0.5, False) is same and same._version == 0
        return out is y, y._version, float(kept.float().mean())

    (ours_self, ours_version, ours_kept), (theirs_self, theirs_version, theirs_kept) = _both(run)
    assert ours_self and theirs_self and ours_version == theirs_version
    assert abs(ours_kept - 0.75) < 0.05 and abs(theirs_kept - 0.75) < 0.05


def test_normal_in_place_samples_into_self_like_torch() -> None:
    def run(lib: Any) -> Any:
        lib.manual_seed(0)
        x = lib.zeros(20000, dtype=lib.float64)
        assert x.normal_(1.0, 0.5) is x
        y = lib.ones(3, requires_grad=True) * 1
        y.normal_()
        y.sum().backward()
        errors = []
        for bad in (lambda: lib.zeros(2, dtype=lib.int64).normal_(), lambda: x.normal_(0, -1)):
            with pytest.raises((RuntimeError, NotImplementedError)) as info:
                bad()
            errors.append(info.type)
        return x.dtype, float(x.mean()), float(x.std()), x._version, errors

    ours, theirs = _both(run)
    assert str(ours[0]).split(".")[-1] == str(theirs[0]).split(".")[-1] == "float64"
    for a, b in ((ours[1], 1.0), (ours[2], 0.5), (theirs[1], 1.0), (theirs[2], 0.5)):
        assert abs(a - b) < 0.02
    assert ours[3] == theirs[3] == 1 and ours[4] == theirs[4]


def test_from_dlpack_of_a_tensor_is_a_new_tensor_on_its_memory() -> None:
    def run(lib: Any) -> Any:
        x = lib.ones(3)
        y = lib.from_dlpack(x)
        y[0] = 5
        with pytest.raises(BufferError, match="require gradient"):
            lib.from_dlpack(lib.ones(2, requires_grad=True))
        return y is x, y._base is None, x.tolist(), x._version, y._version

    ours, theirs = _both(run)
    assert ours == theirs == (False, True, [5.0, 1.0, 1.0], 0, 1)


OUT_CALLS = {
    "cat": lambda lib, x, out: lib.cat([x, x], 1, out=out),
    "stack": lambda lib, x, out: lib.stack([x, x], out=out),
    "where": lambda lib, x, out: lib.where(x > 1, x, -x, out=out),
    "tril": lambda lib, x, out: lib.tril(x, out=out),
    "index_select": lambda lib, x, out: lib.index_select(x, 0, lib.tensor([2, 0]), out=out),
    "softmax": lambda lib, x, out: lib.softmax(x, 1, out=out),
    "max(dim)": lambda lib, x, out: lib.max(x, 1, out=out),
    "max(other)": lambda lib, x, out: lib.max(x, x.flip(0), out=out),
    "sort": lambda lib, x, out: lib.sort(x, 1, out=out),
    "topk": lambda lib, x, out: lib.topk(x, 2, out=out),
    "tensordot": lambda lib, x, out: lib.tensordot(x, x, 1, out=out),
    "norm": lambda lib, x, out: lib.norm(x, 2, 1, out=out),
}


# PyTorch's softmax and tensordot out= forms are composites that differentiate through a
# copy into out; ours refuse inputs that require grad, as PyTorch's other out= forms do.
OUT_WITH_AUTOGRAD_IN_TORCH = {"softmax", "tensordot"}


@pytest.mark.parametrize("name", list(OUT_CALLS))
def test_out_forms_resize_write_and_return_out_like_torch(name: str) -> None:
    call = OUT_CALLS[name]

    def run(lib: Any) -> Any:
        x = lib.tensor(DATA)
        pair = name in ("max(dim)", "sort", "topk")
        out = (lib.empty(0), lib.empty(0, dtype=lib.int64)) if pair else lib.empty(0)
        result = call(lib, x, out)
        outs = out if pair else (out,)
        assert all(r is o for r, o in zip(result if pair else (result,), outs, strict=True))
        if name not in OUT_WITH_AUTOGRAD_IN_TORCH:
            with pytest.raises(RuntimeError, match="out=... arguments don't support automatic"):
                call(lib, lib.tensor(DATA, requires_grad=True), out)
        fields = getattr(type(result), "_fields", None) or getattr(
            type(result), "__match_args__", None
        )
        return [o.numpy() for o in outs], [o._version for o in outs], fields

    ours, theirs = _both(run)
    _close(ours[0], theirs[0])
    assert ours[1] == theirs[1] and ours[2] == theirs[2]


def test_factories_write_into_out_with_its_dtype_like_torch() -> None:
    def run(lib: Any) -> Any:
        results = [
            lib.zeros(2, 3, out=lib.empty(0, dtype=lib.int64)),
            lib.full((2,), 1.5, out=lib.empty(0, dtype=lib.int64)),
            lib.arange(0.5, 3, out=lib.empty(0, dtype=lib.int64)),
            lib.arange(5, out=lib.empty(0)),
            lib.linspace(0, 1, 5, out=lib.empty(0, dtype=lib.float64)),
            lib.eye(2, 3, out=lib.empty(0, dtype=lib.bool)),
        ]
        shapes = [
            tuple(f(out=lib.empty(0, dtype=lib.float64)).shape) + (f(out=lib.empty(0)).dtype,)
            for f in (
                lambda out: lib.rand(2, 3, out=out),
                lambda out: lib.randn(4, out=out),
                lambda out: lib.normal(0.0, 1.0, (2, 3), out=out),
            )
        ]
        with pytest.raises(RuntimeError, match="does not match dtype of out"):
            lib.zeros(2, dtype=lib.float64, out=lib.empty(0))
        return [r.numpy() for r in results], [str(s[-1]).split(".")[-1] for s in shapes]

    ours, theirs = _both(run)
    _close(ours[0], theirs[0])
    assert ours[1] == theirs[1]


# Note [einsum and tensordot under autocast]: the result dtype shows which of PyTorch's
# decomposition steps ran (bmm/mm: bfloat16; mul, sum, dot: float32).
EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("i,i->", [(3,)] * 2),
    ("i,j->ij", [(2,), (3,)]),
    ("ij->ji", [(2, 3)]),
    ("ii->i", [(3, 3)]),
    ("ij,jk->ik", [(2, 1), (1, 4)]),
    ("ij,k->", [(2, 3), (4,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,jk,k->ik", [(2, 3), (3, 4), (4,)]),
    ("ij,ij,ij->", [(2, 3)] * 3),
    ("...ij,...jk", [(5, 2, 3), (5, 3, 4)]),
    ("iij,jk->ik", [(3, 3, 2), (2, 4)]),
    ("...i,...i->...", [(2, 1, 3), (4, 3)]),
    ("Ab,bA->A", [(3, 2), (2, 3)]),
]
TENSORDOT_CASES = [
    (0, (3,), (3,)),
    (1, (3,), (3,)),
    (1, (2, 3), (3, 4)),
    (2, (2, 3), (2, 3)),
    (1, (2, 1), (1, 3)),
    (([1, 0], [0, 1]), (2, 3), (3, 2)),
    (([-1], [0]), (2, 3), (3, 4)),
]


def _under_autocast(call: Callable[[Any, list[Any]], Any], shapes: list[Any]) -> Any:
    arrays = [_rng.standard_normal(s).astype(np.float32) for s in shapes]

    def run(lib: Any) -> Any:
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        with lib.autocast("cpu"):
            out = call(lib, xs)
        out.float().sum().backward()
        return str(out.dtype).split(".")[-1], out.float(), [x.grad for x in xs]

    return _both(run)


@pytest.mark.parametrize(("equation", "shapes"), EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
def test_einsum_under_cpu_autocast_matches_torch(equation: str, shapes: list[Any]) -> None:
    ours, theirs = _under_autocast(lambda lib, xs: lib.einsum(equation, *xs), shapes)
    assert ours[0] == theirs[0]
    for a, b in zip([ours[1], *ours[2]], [theirs[1], *theirs[2]], strict=True):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize(("dims", "sa", "sb"), TENSORDOT_CASES, ids=str)
def test_tensordot_under_cpu_autocast_matches_torch(dims: Any, sa: Any, sb: Any) -> None:
    ours, theirs = _under_autocast(lambda lib, xs: lib.tensordot(*xs, dims), [sa, sb])
    assert ours[0] == theirs[0]
    for a, b in zip([ours[1], *ours[2]], [theirs[1], *theirs[2]], strict=True):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=2e-2, atol=2e-2)


def test_einsum_under_autocast_leaves_ineligible_and_malformed_calls_alone() -> None:
    def run(lib: Any) -> Any:
        d = lib.ones(2, 2, dtype=lib.float64)
        i = lib.ones(2, 2, dtype=lib.int64)
        with lib.autocast("cpu"):
            dtypes = [str(lib.einsum("ij,jk", x, x).dtype).split(".")[-1] for x in (d, i)]
            with pytest.raises(RuntimeError):
                lib.einsum("ij,jk->ik", lib.ones(2, 3), lib.ones(2, 3))
            with pytest.raises(RuntimeError):
                lib.einsum("ij->k", lib.ones(2, 3))
        return dtypes

    assert _both(run) == (["float64", "int64"], ["float64", "int64"])


def test_cond_and_map_are_functions_over_higher_order_operators_as_in_torch() -> None:
    from dispatch import HigherOrderOperator

    hop = torch._ops.HigherOrderOperator
    # PyTorch 2.13: torch.cond is a function; the operator is torch.ops.higher_order.cond.
    assert isinstance(tt.cond, HigherOrderOperator) is isinstance(torch.cond, hop)
    for ours, theirs in (
        (tt.higher_order.cond_op, torch.ops.higher_order.cond),
        (tt.higher_order.map_op, torch.ops.higher_order.map_impl),
    ):
        assert isinstance(ours, HigherOrderOperator) and isinstance(theirs, hop)
        assert ours.name == theirs.name()
    from torch._higher_order_ops.map import map as torch_map

    def run(lib: Any, cond: Any, map_fn: Any) -> Any:
        x = lib.tensor(DATA)
        return [
            cond(lib.tensor(True), lambda a: a + 1, lambda a: a - 1, (x,)),
            *cond(False, lambda a: (a + 1, a), lambda a: (a - 1, a * 2), [x]),
            map_fn(lambda row, k: row * k, x, 3.0),
        ]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns that map is experimental
        _close(run(tt, tt.cond, tt.higher_order.map), run(torch, torch.cond, torch_map))
    with pytest.raises(RuntimeError):
        tt.cond(tt.tensor([True, False]), lambda a: a, lambda a: a, (tt.ones(1),))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(8,), (2, 4)])  # the backward lane (matrices) and formula
@pytest.mark.parametrize("create_graph", [False, True])  # the lane, or the formula alone
def test_relu_passes_the_gradient_of_a_nan_output_like_torch(
    dtype: str, shape: tuple[int, ...], create_graph: bool
) -> None:
    """PyTorch's threshold_backward is ``out <= 0 ? 0 : grad``: a NaN output (either
    sign) passes its gradient, zeros and negatives do not, even a NaN or inf gradient."""
    values = np.array([np.nan, -np.nan, 1.5, -1.0, 0.0, -0.0, np.inf, -np.inf], dtype)
    grad = np.array([7.0, -3.0, np.inf, np.nan, np.nan, 2.0, -0.0, 5.0], dtype)

    def run(lib: Any) -> Any:
        x = lib.tensor(values.reshape(shape), requires_grad=True)
        (gx,) = lib.autograd.grad(
            lib.relu(x), x, lib.tensor(grad.reshape(shape)), create_graph=create_graph
        )
        return gx.detach()

    ours, theirs = _both(run)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert np.signbit(ours.numpy()).tolist() == np.signbit(theirs.numpy()).tolist()


def test_real_and_imag_are_attributes_like_torch() -> None:
    """``x.real``/``x.imag`` are attributes in PyTorch (``x.real * 2``), not methods; ours
    are new tensors rather than views (a write does not reach ``x``)."""
    values = np.array([1 + 2j, -3j, 0.5], np.complex64)
    for lib in (tt, torch):
        x = lib.tensor(values)
        np.testing.assert_array_equal(np.asarray((x.real * 2).numpy()), values.real * 2)
        np.testing.assert_array_equal(np.asarray(x.imag.numpy()), values.imag)
        real = lib.tensor(values.real.copy())
        np.testing.assert_array_equal(np.asarray(real.real.numpy()), values.real)


def test_dtype_errors_suggest_a_dtype_the_operator_takes() -> None:
    """The conversion hint names a dtype the operator supports, not the tensor's own; imag
    of a real tensor says PyTorch's words."""
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex"):
        _ = tt.tensor([1.0]).imag
    with pytest.raises(RuntimeError, match=r"x\.to\(tt\.complex64\)"):
        tt.imag(tt.tensor([1.0]))
    with pytest.raises(RuntimeError, match=r"x\.to\(tt\.int64\)"):
        tt.bitwise_and(tt.tensor([1.0]), tt.tensor([2.0]))
    with pytest.raises(RuntimeError, match=r"x\.to\(tt\.float32\)"):
        tt.floor(tt.tensor([1j]))
    with pytest.raises(RuntimeError, match="imag is not implemented"):
        _ = torch.tensor([1.0]).imag

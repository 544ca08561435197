"""Autocast's fast paths against the general path (Note [Fast-path switch]) and PyTorch:
Note [Autocast casts] (a cast of a tensor that does not require grad runs the kernel
its call would, unvalidated), Note [Autocast exclusion] (the kernel's own key excluded
by a direct write, the operator redispatched below it), with the copy and product fast
paths they reach.  Results, gradients, what a Python mode sees and the thread's key sets
after the call are the same both ways.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dispatch
import tensor as tt
import tensor.nn.functional as F
from backends.common import fastpaths
from dispatch import DispatchKey, DispatchMode
from tensor import _autocast
from tests.backends.fastpath_support import assert_same, torch

_DTYPES = (tt.float32, tt.bfloat16, tt.float16, tt.float64, tt.int64)


def _lib(x: Any) -> Any:
    return tt if isinstance(x, tt.Tensor) else torch


# name -> (call, shapes of its tensor arguments); every policy kind, and one without.
_CASES: dict[str, tuple[Any, tuple[tuple[int, ...], ...]]] = {
    "matmul": (lambda a, b: _lib(a).matmul(a, b), ((3, 4), (4, 2))),
    "mm": (lambda a, b: _lib(a).mm(a, b), ((3, 4), (4, 2))),
    "bmm": (lambda a, b: _lib(a).bmm(a, b), ((2, 3, 4), (2, 4, 2))),
    "addmm": (lambda c, a, b: _lib(a).addmm(c, a, b), ((3, 2), (3, 4), (4, 2))),
    "linear": (
        lambda a, w, b: (F if isinstance(a, tt.Tensor) else torch.nn.functional).linear(a, w, b),
        ((3, 4), (2, 4), (2,)),
    ),
    "conv2d": (
        lambda x, k: (F if isinstance(x, tt.Tensor) else torch.nn.functional).conv2d(x, k),
        ((1, 2, 5, 5), (3, 2, 3, 3)),
    ),
    "cat (promote)": (lambda a, b: _lib(a).cat([a, b]), ((2, 3), (1, 3))),
    "prod (fp32)": (lambda a: _lib(a).prod(a), ((2, 3),)),
    "mse_loss (fp32)": (
        lambda a, b: (F if isinstance(a, tt.Tensor) else torch.nn.functional).mse_loss(a, b),
        ((2, 3), (2, 3)),
    ),
    "sin (no policy)": (lambda a: _lib(a).sin(a), ((2, 3),)),
}


@st.composite
def autocast_calls(draw: st.DrawFn) -> tuple[str, list[Any], Any]:
    name = draw(st.sampled_from(sorted(_CASES)))
    _, shapes = _CASES[name]
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    inputs = []
    for shape in shapes:
        dt = draw(st.sampled_from(_DTYPES))
        x = tt.tensor(rng.uniform(-2, 2, shape).astype(np.float32)).to(dt)
        if len(shape) == 2 and draw(st.booleans()):
            x = x.t().contiguous().t()  # a view with other strides
        if dt.is_floating_point and draw(st.booleans()):
            x = x.detach().requires_grad_()
        inputs.append(x)
    region = draw(st.sampled_from([tt.bfloat16, tt.float16]))
    return name, inputs, region


def _run(name: str, inputs: list[Any], region: Any) -> Any:
    """The call under autocast, its gradients, and the ops a Python mode saw."""
    call = _CASES[name][0]
    xs = [x.detach().clone().requires_grad_(x.requires_grad) for x in inputs]
    seen: list[tuple[str, bool]] = []

    class Log(DispatchMode):
        def __dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            seen.append((func.name, tt.is_autocast_enabled("cpu")))
            return func(*args, **(kwargs or {}))

    before = (dispatch.tls_local_include_set(), dispatch.tls_local_exclude_set())
    try:
        with tt.autocast("cpu", dtype=region):
            out = call(*xs)
            with Log():
                call(*[x.detach() for x in xs])
            assert tt.is_autocast_enabled("cpu")
    except RuntimeError as e:
        assert (dispatch.tls_local_include_set(), dispatch.tls_local_exclude_set()) == before
        return type(e)
    assert (dispatch.tls_local_include_set(), dispatch.tls_local_exclude_set()) == before
    grads: list[Any] = []
    if out.requires_grad:
        out.float().sum().backward()
        grads = [x.grad for x in xs]
    return out, grads, seen


@settings(max_examples=250, deadline=None)
@given(case=autocast_calls())
def test_autocast_calls_both_ways(case: tuple[str, list[Any], Any]) -> None:
    name, inputs, region = case
    fast = _run(name, inputs, region)
    with fastpaths.disabled():
        general = _run(name, inputs, region)
    if isinstance(general, type):
        assert fast is general, (fast, general)
        return
    assert not isinstance(fast, type), fast
    (out_f, grads_f, seen_f), (out_g, grads_g, seen_g) = fast, general
    assert_same(out_f, out_g)
    assert len(grads_f) == len(grads_g)
    for gf, gg in zip(grads_f, grads_g, strict=True):
        assert (gf is None) == (gg is None)
        if gg is not None:
            assert_same(gf, gg, what="grad")
    # A mode below autocast sees the same casts and operator, with autocast off inside
    # the autocast kernel (as under PyTorch's ExcludeDispatchKeyGuard).
    assert seen_f == seen_g
    if torch is not None:
        _against_torch(name, inputs, region, out_f)


def _against_torch(name: str, inputs: list[Any], region: Any, ours: Any) -> None:
    call = _CASES[name][0]
    xs = [torch.tensor(x.detach().float().numpy()).to(getattr(torch, x.dtype.name)) for x in inputs]
    try:
        with torch.autocast("cpu", dtype=getattr(torch, region.name)):
            expected = call(*xs)
    except RuntimeError:
        pytest.fail(f"PyTorch raises where we return {ours!r}")
    assert ours.dtype.name == str(expected.dtype).rpartition(".")[2], (ours.dtype, expected)
    np.testing.assert_allclose(
        ours.detach().float().numpy(), expected.detach().float().numpy(), rtol=3e-2, atol=3e-2
    )


@pytest.mark.parametrize("fast", [True, False])
def test_the_autocast_kernel_restores_the_sets_when_the_operator_raises(fast: bool) -> None:
    a, b = tt.ones(2, 3), tt.ones(2, 3)
    with tt.autocast("cpu"):
        before = dispatch.tls_local_exclude_set()
        fastpaths.ENABLED = fast
        try:
            with pytest.raises(RuntimeError):
                tt.mm(a, b)
        finally:
            fastpaths.ENABLED = True
        assert dispatch.tls_local_exclude_set() == before
        assert tt.is_autocast_enabled("cpu")


def test_casts_of_tensors_without_grad_go_to_the_kernel_their_call_would() -> None:
    """Note [Autocast casts]: a kernel registered for _to_copy at CPU (a user's override)
    is the one the shortcut runs, as the call would."""
    calls: list[Any] = []
    lib = dispatch.Library("core", "IMPL")
    original = dispatch.ops.core._to_copy.default

    def spy(self: Any, *, dtype: Any = None, device: Any = None, non_blocking: bool = False) -> Any:
        calls.append(dtype)
        return tt.from_numpy(self.numpy().astype(dtype.numpy_dtype))

    try:
        lib.impl("_to_copy", spy, "CPU", allow_override=True)
        with tt.autocast("cpu"):
            out = tt.mm(tt.ones(2, 2), tt.ones(2, 2))
        assert out.dtype is tt.bfloat16 and calls == [tt.bfloat16, tt.bfloat16]
    finally:
        lib.destroy()
    assert dispatch.ops.core._to_copy.default is original


def test_operators_inside_an_autocast_kernel_see_autocast_off() -> None:
    """Note [Autocast exclusion]: the kernel below, and what it calls, run with the
    autocast key excluded (PyTorch's ExcludeDispatchKeyGuard): an ``mm`` inside is not
    cast again, and the region is on again after the call."""
    seen: list[bool] = []

    @dispatch.custom_op("test_autocast_fastpaths::gram", mutates_args=())
    def gram(x: tt.Tensor) -> tt.Tensor:
        seen.append(tt.is_autocast_enabled("cpu"))
        return tt.mm(x.float(), x.float().t())

    lib = dispatch.Library("test_autocast_fastpaths", "IMPL")
    try:
        op = gram._opoverload
        kernel = _autocast._kernel(op, DispatchKey.AutocastCPU, "cpu", "lower_precision_fp")
        lib.impl(op.name, kernel, "AutocastCPU", with_keyset=True)
        x = tt.full((2, 3), 1.01)  # 1.0078125 in bfloat16: the kernel saw the cast input
        with tt.autocast("cpu"):
            out = gram(x)
            assert tt.is_autocast_enabled("cpu")
            assert tt.mm(x, x.t()).dtype is tt.bfloat16  # outside the kernel: cast
        assert seen == [False] and out.dtype is tt.float32
        assert out.tolist() == [[3 * 1.0078125**2] * 2] * 2
    finally:
        lib.destroy()
        gram._destroy()


class _Unwrap(tt.Tensor):
    """A subclass whose operators return plain tensors (no Python key on the casts)."""

    @classmethod
    def __dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        plain = [a.as_subclass(tt.Tensor) if isinstance(a, tt.Tensor) else a for a in args]
        return func(*plain, **(kwargs or {}))


class _ToMeta(DispatchMode):
    """A mode that moves every CPU argument to the meta device (a fake-tensor mode)."""

    def __dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        moved = [
            a.to("meta") if isinstance(a, tt.Tensor) and a.device.type == "cpu" else a for a in args
        ]
        return func(*moved, **(kwargs or {}))


@pytest.mark.parametrize("case", ["subclass", "mode"])
def test_casts_that_change_the_keys_call_the_operator_from_the_top(case: str) -> None:
    """Note [Autocast exclusion]: with a Python-layer key in the key set the operator is
    called from the top, so the keys of what the casts returned choose its kernel."""

    def run() -> Any:
        x, w, wt = tt.ones(2, 3), tt.full((3, 2), 0.5), tt.full((2, 3), 0.5)
        with tt.autocast("cpu"):
            if case == "subclass":
                return tt.mm(x.as_subclass(_Unwrap), w), F.linear(x.as_subclass(_Unwrap), wt)
            with _ToMeta():
                return tt.mm(x, w), F.linear(x, wt)

    fast = run()
    with fastpaths.disabled():
        general = run()
    for f, g in zip(fast, general, strict=True):
        assert type(f) is type(g) is tt.Tensor
        assert (f.device.type, f.dtype, tuple(f.shape)) == (g.device.type, g.dtype, tuple(g.shape))
        assert f.dtype is tt.bfloat16 and f.device.type == ("meta" if case == "mode" else "cpu")
        if case == "subclass":
            assert f.tolist() == g.tolist() == [[1.5, 1.5], [1.5, 1.5]]


# -- Note [Autocast product fast path] -----------------------------------------------------------
@settings(max_examples=120, deadline=None)
@given(
    name=st.sampled_from(["matmul", "mm", "bmm", "linear", "linear, no bias", "matmul 1-D"]),
    region=st.sampled_from([tt.bfloat16, tt.float16]),
    transposed=st.tuples(st.booleans(), st.booleans()),
    dims=st.tuples(st.integers(1, 5), st.integers(1, 5), st.integers(1, 5)),
    mismatch=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_fused_products_match_the_casts_and_the_product(
    name: str,
    region: Any,
    transposed: tuple[bool, bool],
    dims: tuple[int, int, int],
    mismatch: bool,
    seed: int,
) -> None:
    """Float32 operands that do not require grad: the fused product against the two casts
    and the product (values bit for bit, dtype, strides), shape errors alike; and the
    fused path runs for the cases it serves."""
    m, k, n = dims
    rng = np.random.default_rng(seed)

    def make(*shape: int, t: bool = False) -> Any:
        x = tt.tensor(rng.uniform(-3, 3, shape).astype(np.float32))
        return x.t().contiguous().t() if t and x.ndim == 2 else x

    k2 = k + 1 if mismatch else k
    if name in ("matmul", "mm"):
        args = [make(m, k, t=transposed[0]), make(k2, n, t=transposed[1])]
        call = tt.matmul if name == "matmul" else tt.mm
    elif name == "matmul 1-D":
        args, call = [make(k), make(k2, n, t=transposed[1])], tt.matmul
    elif name == "bmm":
        args, call = [make(2, m, k), make(2, k2, n)], tt.bmm
    else:
        args = [make(m, k, t=transposed[0]), make(n, k2, t=transposed[1])]
        if name == "linear":
            args.append(make(n))
        call = F.linear

    def run() -> Any:
        try:
            with tt.autocast("cpu", dtype=region):
                return call(*args)
        except RuntimeError as e:
            return str(e)

    fast = run()
    with fastpaths.disabled():
        general = run()
    if isinstance(general, str):
        assert fast == general
        return
    assert_same(fast, general)
    assert fast.numpy().tobytes() == general.numpy().tobytes()


def test_fused_products_run_and_step_aside(monkeypatch: pytest.MonkeyPatch) -> None:
    from backends.composite import nn as composite_nn

    taken: list[bool] = []
    original = composite_nn.linear.lower_precision

    def spy(*args: Any) -> Any:
        out = original(*args)
        taken.append(out is not None)
        return out

    monkeypatch.setattr(composite_nn.linear, "lower_precision", spy)
    x, w, b = tt.ones(3, 4), tt.ones(2, 4), tt.ones(2)
    with tt.autocast("cpu"):
        F.linear(x, w, b)  # fused
        F.linear(x, w.detach().requires_grad_(), b)  # requires grad: the casts, recorded
        F.linear(x, w)  # no bias: matmul inside, the composite's general way
    assert taken == [True, False]


def test_fused_products_memo_follows_what_it_depends_on() -> None:
    """Note [Autocast product fast path]: the kernel remembers its last answer, and a
    change of anything it depends on is seen on the next call: a copy kernel registered
    (and removed) between calls, a tensor that requires grad (first or second), a mode
    entered, keys excluded, another thread."""
    import threading

    x, w = tt.full((2, 3), 1.01), tt.full((3, 2), 0.5)
    calls: list[Any] = []
    seen: list[str] = []

    def spy(self: Any, *, dtype: Any = None, device: Any = None, non_blocking: bool = False) -> Any:
        calls.append(dtype)
        return tt.from_numpy(self.numpy().astype(dtype.numpy_dtype))

    class Log(DispatchMode):
        def __dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            seen.append(func.name)
            return func(*args, **(kwargs or {}))

    with tt.autocast("cpu"):
        first = tt.mm(x, w)  # fills the memo
        assert tt.mm(x, w).tolist() == first.tolist()
        lib = dispatch.Library("core", "IMPL")
        try:
            lib.impl("_to_copy", spy, "CPU", allow_override=True)
            assert tt.mm(x, w).tolist() == first.tolist()
            assert calls == [tt.bfloat16, tt.bfloat16]  # the override ran: no fused step
        finally:
            lib.destroy()
        tt.mm(x, w)
        assert calls == [tt.bfloat16, tt.bfloat16]  # fused again
        pairs = [(x, w.detach().requires_grad_()), (x.detach().requires_grad_(), w)]
        pairs.append((x.detach().requires_grad_(), w.detach().requires_grad_()))
        for a, b in pairs:
            tt.mm(x, w)  # the memo filled for tensors that do not require grad
            out = tt.mm(a, b)
            assert out.requires_grad and out.grad_fn is not None
            out.float().sum().backward()
            with fastpaths.disabled():
                expect = tt.mm(a.detach(), b.detach())
            assert out.tolist() == expect.tolist() == first.tolist()
            for leaf in (a, b):
                assert (leaf.grad is not None) == leaf.requires_grad
                assert leaf.grad is None or leaf.grad.dtype is tt.float32
        with Log():
            assert tt.mm(x, w).tolist() == first.tolist()
        assert seen.count("core::_to_copy") == 2 and "core::mm" in seen
        with dispatch.exclude_keys(dispatch.DispatchKeySet(DispatchKey.AutocastCPU)):
            assert tt.mm(x, w).dtype is tt.float32
        assert tt.mm(x, w).tolist() == first.tolist()

    results: list[Any] = []

    def other_thread() -> None:  # autocast is off in a new thread
        results.append(tt.mm(x, w).dtype)
        with tt.autocast("cpu"):
            results.append(tt.mm(x, w).dtype)

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join()
    assert results == [tt.float32, tt.bfloat16]

"""Autograd graphs hold no reference cycles (Note [Saved outputs]): with the cycle
collector off, a graph's memory comes back as soon as the last reference to it goes."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

import dispatch
import tensor as tt
import tensor.nn.functional as F
from tensor.autograd import Function, FunctionCtx, Node

GRAPH_TYPES = (tt.Tensor, Node, FunctionCtx)


@contextmanager
def cycle_collector_off() -> Iterator[Callable[[], list[Any]]]:
    """Turn the cycle collector off for the block; the callable it yields runs it once and
    returns the graph objects (tensors, nodes, contexts) that only it could free."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()

    def leaked() -> list[Any]:
        gc.set_debug(gc.DEBUG_SAVEALL)  # keep what is collected, to say what it was
        try:
            gc.collect()
            found = [o for o in gc.garbage if isinstance(o, GRAPH_TYPES)]
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
        return found

    try:
        yield leaked
    finally:
        if was_enabled:
            gc.enable()


class Exp(Function):
    """Saves its output, as PyTorch's own exp does."""

    @staticmethod
    def forward(ctx: Any, x: tt.Tensor) -> tt.Tensor:
        out = x.exp()
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, grad: tt.Tensor) -> tt.Tensor:
        (out,) = ctx.saved_tensors
        return grad * out


class Tanh(Function):
    """Saves its output through setup_context."""

    @staticmethod
    def forward(x: tt.Tensor) -> tt.Tensor:
        return x.tanh()

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: tt.Tensor) -> None:
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx: Any, grad: tt.Tensor) -> tt.Tensor:
        (out,) = ctx.saved_tensors
        return grad * (1 - out * out)


class ScaleInPlace(Function):
    """Writes its input in place and saves it: the saved tensor is its output (dirty)."""

    @staticmethod
    def forward(ctx: Any, x: tt.Tensor) -> tt.Tensor:
        x.mul_(2.0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx: Any, grad: tt.Tensor) -> tt.Tensor:
        ctx.saved_tensors  # noqa: B018 - unpacked: checks the version
        return grad * 2.0


class SplitWithIndex(Function):
    """Two outputs, one not differentiable, both saved."""

    @staticmethod
    def forward(ctx: Any, x: tt.Tensor) -> tuple[tt.Tensor, tt.Tensor]:
        y, idx = x * 3.0, x.argmax()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(y, idx)
        return y, idx

    @staticmethod
    def backward(ctx: Any, grad: tt.Tensor, _: Any) -> tt.Tensor:
        y, idx = ctx.saved_tensors
        assert not idx.requires_grad
        return grad * 3.0


def leaf(*shape: int) -> tt.Tensor:
    gen = tt.Generator().manual_seed(sum(shape))
    return tt.randn(*shape, generator=gen, dtype=tt.float64).requires_grad_()


def test_a_function_that_saves_its_output_dies_with_its_last_reference() -> None:
    x = leaf(3)
    with cycle_collector_off() as leaked:
        for fn in (Exp.apply, Tanh.apply, lambda v: ScaleInPlace.apply(v * 1.0)):
            y = fn(x)
            out, node = weakref.ref(y), weakref.ref(y.grad_fn)
            del y
            assert out() is None and node() is None, fn
        assert leaked() == []


@pytest.mark.parametrize("backward", ["none", "retain_graph", "create_graph", "free"])
def test_training_steps_leave_nothing_for_the_cycle_collector(backward: str) -> None:
    """A small MLP from custom Functions that save their outputs, built-in operators that
    save theirs (exp, tanh, sigmoid, sqrt, softmax...), in-place operators on intermediate
    results, and a register_autograd operator; graphs run backward in every way, or are
    dropped unused."""
    with dispatch.Library("test_cycles", "DEF") as lib:
        lib.define("square(Tensor x) -> Tensor")
        dispatch.impl("test_cycles::square", "cpu", lambda v: v * v, lib=lib)

        def setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
            ctx.save_for_backward(inputs[0], output)

        def square_backward(ctx: Any, grad: tt.Tensor) -> tt.Tensor:
            x, _ = ctx.saved_tensors
            return grad * 2 * x

        dispatch.register_autograd(
            "test_cycles::square", square_backward, setup_context=setup, lib=lib
        )
        square = dispatch.ops.test_cycles.square

        x, labels = leaf(8, 4).detach(), tt.tensor([0, 1, 2, 0, 1, 2, 0, 1])
        w1, w2 = leaf(4, 6), leaf(6, 3)
        with cycle_collector_off() as leaked:
            for _ in range(3):
                h = Tanh.apply(x @ w1)
                h = h * tt.sigmoid(h) + Exp.apply(-h * h) + tt.exp(-h).sqrt()
                h = tt.tanh(h) * 1.0
                # In place on intermediates (self becomes the output); sin_ keeps a recorded
                # copy of h's old value.
                h.sin_().mul_(0.5).relu_()
                h = h + square(h)
                y, idx = SplitWithIndex.apply(h @ w2)
                logits = y.softmax(1).log() + F.log_softmax(y, 1)
                loss = F.cross_entropy(logits, labels) + idx * 0.0
                if backward == "retain_graph":
                    loss.backward(retain_graph=True)
                elif backward == "create_graph":
                    grads = tt.autograd.grad(loss, [w1, w2], create_graph=True)
                    sum(g.sum() for g in grads).backward()
                elif backward == "free":
                    loss.backward()
                with tt.no_grad():
                    for w in (w1, w2):
                        if w.grad is not None:
                            w -= 0.01 * w.grad
                            w.grad = None
                node = weakref.ref(loss.grad_fn)
                del h, y, idx, logits, loss
                if backward == "create_graph":
                    del grads
                assert node() is None  # the graph went with the last reference to it
            assert leaked() == []


def test_saved_outputs_unpack_as_outputs_of_their_node() -> None:
    """Unpacking a saved output gives a new tensor whose grad_fn is the node (PyTorch's
    SavedVariable), so double backward through it works, and in-place changes to the
    output are still caught."""
    seen: list[tt.Tensor] = []

    class Recorded(Exp):
        @staticmethod
        def backward(ctx: Any, grad: tt.Tensor) -> tt.Tensor:
            (out,) = ctx.saved_tensors
            seen.append(out)
            return grad * out

    x = leaf(3)
    y = Recorded.apply(x)
    (g,) = tt.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = tt.autograd.grad(g.sum(), x)
    expected = np.exp(x.detach().numpy())
    np.testing.assert_allclose(g.detach().numpy(), expected)
    np.testing.assert_allclose(gg.numpy(), expected)  # d2/dx2 exp = exp: through the node
    out = seen[0]
    assert out is not y and out.grad_fn is y.grad_fn and out.requires_grad
    assert np.shares_memory(out.numpy(), y.detach().numpy())

    z = Exp.apply(x)
    with tt.no_grad():
        z.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_functions_still_match_torch_with_saved_outputs() -> None:
    torch = pytest.importorskip("torch", reason="PyTorch not installed: differential check skipped")
    values = [[0.5, -1.0, 2.0], [0.1, 0.2, -0.3]]
    x = tt.tensor(values, dtype=tt.float64, requires_grad=True)
    y, _ = SplitWithIndex.apply(ScaleInPlace.apply(Tanh.apply(Exp.apply(x)) * 1.0))
    y.sum().backward()
    tx = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    (tx.exp().tanh() * 1.0 * 2.0 * 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())

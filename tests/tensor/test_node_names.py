"""Node names as PyTorch 2.13 gives them (``node_class`` in tensor/autograd/_layer.py):
each word of the operator's name title-cased (``log1p`` -> Log1PBackward0, ``avg_pool2d``
-> AvgPool2DBackward0), numbered by the overload's place among PyTorch's derivatives
(``1 - x`` -> RsubBackward1, ``x.squeeze(0)`` -> SqueezeBackward1), the same for the
same call; ``x.T`` is a permute (Note in tensor/_wrappers_shape.py's ``_T``); ``norm``,
``conv2d`` and ``layer_norm`` under the native function PyTorch's call reaches
(LinalgVectorNormBackward0, ConvolutionBackward0, NativeLayerNormBackward0); ``matmul``
and ``reshape`` after the node on top of PyTorch's composite (MmBackward0, ViewBackward0).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensor as tt
from dispatch import ops
from tensor.modes import LoggingMode

try:
    import torch
except ImportError:  # the names below are checked without it; the comparison needs it
    torch = None

# (call, PyTorch's node name for it), written once for both libraries.
CALLS: list[tuple[str, Callable[[Any, Any], Any], str]] = [
    ("log1p", lambda L, x: x.abs().log1p(), "Log1PBackward0"),
    (
        "avg_pool2d",
        lambda L, x: L.nn.functional.avg_pool2d(x.reshape(1, 1, 3, 4), 1),
        "AvgPool2DBackward0",
    ),
    (
        "max_pool2d",
        lambda L, x: L.nn.functional.max_pool2d(x.reshape(1, 1, 3, 4), 1),
        "MaxPool2DWithIndicesBackward0",
    ),
    ("1 - x", lambda L, x: 1 - x, "RsubBackward1"),
    ("clamp", lambda L, x: x.clamp(0, 1), "ClampBackward1"),
    ("clamp with tensors", lambda L, x: x.clamp(L.zeros(4), L.ones(4)), "ClampBackward0"),
    ("max", lambda L, x: x.max(), "MaxBackward1"),
    ("max dim", lambda L, x: x.max(0)[0], "MaxBackward0"),
    ("min", lambda L, x: x.min(), "MinBackward1"),
    ("squeeze dim", lambda L, x: x.unsqueeze(0).squeeze(0), "SqueezeBackward1"),
    ("squeeze", lambda L, x: x.unsqueeze(0).squeeze(), "SqueezeBackward0"),
    ("x ** y", lambda L, x: x.abs() ** x, "PowBackward1"),
    ("2 ** x", lambda L, x: 2**x, "PowBackward2"),
    ("x ** 2", lambda L, x: x**2, "PowBackward0"),
    ("fmod", lambda L, x: L.fmod(x, x + 5), "FmodBackward1"),
    ("remainder", lambda L, x: L.remainder(x, x + 5), "RemainderBackward1"),
    (
        "lerp with a tensor weight",
        lambda L, x: x.lerp(x * 2, L.full((3, 4), 0.5, dtype=x.dtype)),
        "LerpBackward1",
    ),
    ("lerp", lambda L, x: x.lerp(x * 2, 0.5), "LerpBackward0"),
    ("masked_fill", lambda L, x: x.masked_fill(x > 0, L.tensor(0.0)), "MaskedFillBackward1"),
    ("sort stable", lambda L, x: x.sort(stable=True)[0], "SortBackward1"),
    ("x.T", lambda L, x: x.T, "PermuteBackward0"),
    ("x.mT", lambda L, x: x.mT, "TransposeBackward0"),
    ("x.t()", lambda L, x: x.t(), "TBackward0"),
    ("sum", lambda L, x: x.sum(), "SumBackward0"),
    ("sum dim", lambda L, x: x.sum(0), "SumBackward1"),
    ("sum dims", lambda L, x: L.sum(x, (0, 1)), "SumBackward1"),
    ("sum dtype", lambda L, x: x.sum(dtype=L.float32), "SumBackward0"),
    ("mean", lambda L, x: x.mean(), "MeanBackward0"),
    ("mean dim keepdim", lambda L, x: x.mean(1, keepdim=True), "MeanBackward1"),
    ("prod", lambda L, x: x.prod(), "ProdBackward0"),
    ("prod dim", lambda L, x: x.prod(dim=0), "ProdBackward1"),
    ("round", lambda L, x: x.round(), "RoundBackward0"),
    ("round decimals", lambda L, x: x.round(decimals=2), "RoundBackward1"),
    ("clone", lambda L, x: x.clone(), "CloneBackward0"),
    ("contiguous", lambda L, x: x.t().contiguous(), "CloneBackward0"),
    ("to(dtype)", lambda L, x: x.to(L.float16), "ToCopyBackward0"),
    ("expm1", lambda L, x: x.expm1(), "Expm1Backward0"),
    ("atan2", lambda L, x: L.atan2(x, x + 1), "Atan2Backward0"),
    # Recorded under the native function PyTorch's call reaches (_NODE_BASES).
    ("norm", lambda L, x: x.norm(), "LinalgVectorNormBackward0"),
    ("norm p dim", lambda L, x: x.norm(p=1, dim=1), "LinalgVectorNormBackward0"),
    ("norm fro", lambda L, x: x.norm(p="fro"), "LinalgVectorNormBackward0"),
    (
        "norm inf keepdim",
        lambda L, x: L.norm(x, float("inf"), 0, True),
        "LinalgVectorNormBackward0",
    ),
    (
        "conv2d",
        lambda L, x: L.nn.functional.conv2d(x.reshape(1, 1, 3, 4), x[:2, :2].reshape(1, 1, 2, 2)),
        "ConvolutionBackward0",
    ),
    ("layer_norm", lambda L, x: L.nn.functional.layer_norm(x, (4,)), "NativeLayerNormBackward0"),
    ("square", lambda L, x: x.square(), "PowBackward0"),
    ("outer", lambda L, x: L.outer(x[0], x[1]), "MulBackward0"),
    ("mse_loss", lambda L, x: L.nn.functional.mse_loss(x, x * 2), "MseLossBackward0"),
    # Composites there, one node here named after the top of PyTorch's graph (_NAMED_BY).
    ("x @ y", lambda L, x: x @ x.t(), "MmBackward0"),
    ("matmul, keyword", lambda L, x: L.matmul(x, other=x.t()), "MmBackward0"),
    ("vector @ vector", lambda L, x: x[0] @ x[1], "DotBackward0"),
    ("matrix @ vector", lambda L, x: x @ x[0], "MvBackward0"),
    ("vector @ matrix", lambda L, x: x[:, 0] @ x, "SqueezeBackward4"),
    ("batched", lambda L, x: x.unsqueeze(0) @ x.t().unsqueeze(0), "UnsafeViewBackward0"),
    ("matrix @ batch", lambda L, x: x @ x.t().unsqueeze(0), "CloneBackward0"),
    (
        "cross_entropy",
        lambda L, x: L.nn.functional.cross_entropy(x, L.tensor([0, 3, 1])),
        "NllLossBackward0",
    ),
    (
        "cross_entropy, weight, none",
        lambda L, x: L.nn.functional.cross_entropy(
            x, L.tensor([0, 3, 1]), weight=L.ones(4, dtype=x.dtype), reduction="none"
        ),
        "NllLossBackward0",
    ),
    (
        "cross_entropy, smoothing",
        lambda L, x: L.nn.functional.cross_entropy(x, L.tensor([0, 3, 1]), label_smoothing=0.1),
        "AddBackward0",
    ),
    (
        "cross_entropy, probabilities",
        lambda L, x: L.nn.functional.cross_entropy(x, x.detach().softmax(1)),
        "DivBackward1",
    ),
    (
        "cross_entropy, probabilities, sum",
        lambda L, x: L.nn.functional.cross_entropy(x, x.detach().softmax(1), reduction="sum"),
        "NegBackward0",
    ),
    ("reshape, a view", lambda L, x: x.reshape(12), "ViewBackward0"),
    ("reshape, a copy", lambda L, x: x.t().reshape(12), "UnsafeViewBackward0"),
    ("flatten", lambda L, x: x.flatten(), "ViewBackward0"),
    ("flatten, a copy", lambda L, x: x.t().flatten(), "UnsafeViewBackward0"),
    (
        "binary_cross_entropy_with_logits",
        lambda L, x: L.nn.functional.binary_cross_entropy_with_logits(x, x.detach().sigmoid()),
        "BinaryCrossEntropyWithLogitsBackward0",
    ),
]


def _name(lib: Any, call: Callable[[Any, Any], Any]) -> str:
    a = np.random.default_rng(0).standard_normal((3, 4))
    x = (tt.tensor(a) if lib is tt else torch.tensor(a)).requires_grad_()
    return call(lib, x).grad_fn.name()  # type: ignore[no-any-return]


@pytest.mark.parametrize(("spelling", "call", "name"), CALLS, ids=[c[0] for c in CALLS])
def test_node_names(spelling: str, call: Callable[[Any, Any], Any], name: str) -> None:
    assert _name(tt, call) == name, spelling
    node = call(tt, tt.ones(3, 4, requires_grad=True)).grad_fn
    assert repr(node) == f"<{name} object>"
    # The class is named so too, but for the nodes numbered by the call (Note [Nodes
    # numbered by the call]: one class for both of PyTorch's).
    assert type(node).__name__ == name or node._numbered is not None


@pytest.mark.parametrize(("spelling", "call", "name"), CALLS, ids=[c[0] for c in CALLS])
def test_node_names_are_pytorchs(spelling: str, call: Callable[[Any, Any], Any], name: str) -> None:
    if torch is None:
        pytest.skip("PyTorch is not installed: the expected names above are checked alone")
    assert _name(torch, call) == name, spelling


def test_a_node_numbered_by_its_call_keeps_its_name() -> None:
    """Note [Nodes numbered by the call]: the name is read from the call, and kept when
    the call is bound (the formula reads it) and when backward releases the node."""
    x = tt.ones(3, 4, requires_grad=True)
    y = x.sum(0)
    node = y.grad_fn
    y.sum().backward()
    assert node.name() == "SumBackward1" and repr(node) == "<SumBackward1 object>"
    z = x.mean(1)
    _ = z.grad_fn.bound  # binds the call: the positional arguments are gone
    assert z.grad_fn.name() == "MeanBackward1"
    assert x.sum().grad_fn.name() == "SumBackward0"


def test_a_node_named_by_its_call_keeps_its_name() -> None:
    """The same for the nodes named after PyTorch's composite (``_NAMED_BY``): decided
    before backward releases the call's arguments, and from the bound call."""
    x = tt.ones(3, 4, requires_grad=True)
    y = x @ x.t()
    node = y.grad_fn
    y.sum().backward()
    assert node.name() == "MmBackward0"
    z = x[0] @ x[1]
    _ = z.grad_fn.bound
    assert z.grad_fn.name() == "DotBackward0"
    r = x.t().reshape(12)
    node = r.grad_fn
    r.sum().backward()
    assert node.name() == "UnsafeViewBackward0"
    # Recorded with keywords (the general recording binds the call): decided from it.
    k = ops.core.matmul.default(x[0], other=x[1])
    node = k.grad_fn
    k.backward()
    assert node.name() == "DotBackward0"
    loss = ops.core.cross_entropy_loss.default(x, target=tt.tensor([0, 1, 2]), label_smoothing=0.1)
    assert loss.grad_fn.name() == "AddBackward0"


def _graph(node: Any, depth: int = 0) -> list[str]:
    """The node names under ``node``, depth-first, indented by depth."""
    if node is None:
        return []
    name = node.name().removeprefix("torch::autograd::")
    out = ["  " * depth + name]
    for child, _ in node.next_functions:
        out += _graph(child, depth + 1)
    return out


def test_linear_of_a_batch_of_rows_is_pytorchs_graph() -> None:
    """PyTorch's _flatten_nd_linear: a contiguous N-D input with a 1-D bias is one addmm
    of its rows, viewed back (a transformer's [B, T, C] @ W.T + b: one gemm with the bias
    in its pass, 1.38x -> 1.02x PyTorch's forward at [8, 64, 256])."""
    a = np.random.default_rng(1).standard_normal((2, 3, 4))
    w_np, b_np = np.arange(20.0).reshape(5, 4) / 10, np.arange(5.0)
    x = tt.tensor(a, requires_grad=True)
    w, b = tt.tensor(w_np, requires_grad=True), tt.tensor(b_np, requires_grad=True)
    out = tt.nn.functional.linear(x, w, b)
    expected = [
        "ViewBackward0",
        "  AddmmBackward0",
        "    AccumulateGrad",
        "    ViewBackward0",
        "      AccumulateGrad",
        "    TBackward0",
        "      AccumulateGrad",
    ]
    assert _graph(out.grad_fn) == expected
    np.testing.assert_allclose(out.detach().numpy(), a @ w_np.T + b_np, rtol=1e-12)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to(w_np.sum(0), (2, 3, 4)))
    np.testing.assert_allclose(w.grad.numpy(), np.broadcast_to(a.reshape(6, 4).sum(0), (5, 4)))
    with LoggingMode() as log:  # the calls a dispatch mode sees, as PyTorch's
        tt.nn.functional.linear(x, w, b)
    assert [line.split("(")[0] for line in log.lines] == [
        "core::view",
        "core::t",
        "core::addmm",
        "core::view",
    ]
    # A strided input or a bias of more dims: matmul and add, as PyTorch.
    t = tt.nn.functional.linear(x.transpose(0, 1), w, b)
    assert t.grad_fn.name() == "AddBackward0"
    if torch is not None:
        tx = torch.tensor(a, requires_grad=True)
        tw, tb = torch.tensor(w_np, requires_grad=True), torch.tensor(b_np, requires_grad=True)
        assert _graph(torch.nn.functional.linear(tx, tw, tb).grad_fn) == expected

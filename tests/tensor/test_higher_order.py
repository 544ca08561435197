"""cond (and map) as higher-order operators: eager, autograd, autocast and the shipped modes."""

from __future__ import annotations

import pytest

import tensor as tt
from tensor.higher_order import cond, cond_op
from tensor.modes import FakeMode, LoggingMode


def test_cond_runs_the_branch_pred_picks() -> None:
    x = tt.tensor([1.0, 2.0])
    assert cond(x.sum() > 2, lambda v: v * 10, lambda v: v - 1, (x,)).tolist() == [10.0, 20.0]
    assert cond(False, lambda v: v * 10, lambda v: v - 1, [x]).tolist() == [0.0, 1.0]


def test_cond_records_autograd_through_the_taken_branch() -> None:
    x = tt.tensor([1.0, 2.0], requires_grad=True)
    y = cond(tt.tensor(True), lambda v: tt.sin(v) * 3, lambda v: v, (x,))
    y.backward(tt.ones(2))
    assert y.grad_fn.name() == "MulBackward0"
    assert [round(g, 5) for g in x.grad.tolist()] == [
        round(3 * c, 5) for c in tt.cos(x.detach()).tolist()
    ]


def test_cond_checks_its_arguments_like_pytorch() -> None:
    x = tt.ones(2)
    with pytest.raises(RuntimeError, match="pred must be a Python bool or a tensor with a single"):
        cond(tt.ones(2), lambda v: v, lambda v: v, (x,))
    with pytest.raises(RuntimeError, match="operands must be a list or tuple of tensors"):
        cond(True, lambda v: v, lambda v: v, (1.0,))
    with pytest.raises(RuntimeError, match="true_fn and false_fn must be callables"):
        cond(True, None, lambda v: v, (x,))


def test_cond_under_fake_mode_checks_both_branches() -> None:
    with FakeMode():
        out = cond(tt.randn(1).sum() > 0, lambda v: v * 2, lambda v: v + 1, (tt.randn(3, 4),))
        assert out.shape == (3, 4) and out.device.type == "meta"
        with pytest.raises(RuntimeError, match="must return the same structure"):
            cond(tt.randn(1).sum() > 0, lambda v: v.sum(0), lambda v: v, (tt.randn(3, 4),))


def test_cond_under_logging_mode_and_autocast() -> None:
    x = tt.ones(2, 2)
    with LoggingMode() as log:
        cond(True, lambda v: tt.sin(v), lambda v: v, (x,))
    assert log.lines == [
        "cond(True, (float32[2x2]@cpu))",
        "core::sin(float32[2x2]@cpu) -> float32[2x2]@cpu",
    ]
    with tt.autocast("cpu"):
        assert cond(True, lambda a: a @ a, lambda a: a, (x,)).dtype is tt.bfloat16


def test_cond_is_a_higher_order_operator_with_pytorch_fallthroughs() -> None:
    keys = cond_op.non_fallthrough_keys()
    assert "AutocastCPU" not in keys and "AutogradCPU" in keys and "Python" in keys


def test_map_stacks_fn_over_the_leading_dimension() -> None:
    from tensor.higher_order import map as hmap

    x = tt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    out = hmap(lambda row, k: row * k, x, 3.0)
    assert out.tolist() == [[3.0, 6.0], [9.0, 12.0]]
    out.sum().backward()
    assert x.grad.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    a, b = hmap(lambda pair: (pair[0] + pair[1], pair[0]), [x.detach(), x.detach()])
    assert a.tolist() == [[2.0, 4.0], [6.0, 8.0]] and b.shape == (2, 2)
    with pytest.raises(RuntimeError, match="same leading dimension"):
        hmap(lambda p: p, [tt.ones(2), tt.ones(3)])
    with FakeMode():
        fake = hmap(lambda row: row.sum(), tt.randn(5, 3))
    assert fake.shape == (5,) and fake.device.type == "meta"
    assert tt.cond is cond

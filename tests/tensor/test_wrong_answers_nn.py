"""Regression tests for wrong answers of the nn and reduction operators, each checked
against PyTorch's values (written out, so they run without PyTorch installed)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensor as tt
import tensor.nn.functional as F

_X = [[1.0, 2.0, 0.5, -1.0], [0.0, 0.3, 2.0, 1.0], [-1.0, 0.0, 1.0, 4.0]]


def _log_softmax_rows() -> np.ndarray:
    x = np.array(_X)
    return x - np.log(np.exp(x).sum(1, keepdims=True))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_ignore_index_other_than_minus_100(reduction: str) -> None:
    """Note [Cross-entropy fast path] took every row for ``ignore_index=3``: the mean
    was over all three rows, the ignored one's loss included."""
    t = [3, 1, 3]
    x = tt.tensor(_X, requires_grad=True)
    out = F.cross_entropy(x, tt.tensor(t), ignore_index=3, reduction=reduction)
    lp = _log_softmax_rows()
    rows = np.array([0.0, -lp[1, 1], 0.0])
    expected = {"none": rows, "sum": rows.sum(), "mean": rows.sum() / 1}[reduction]
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-6)
    out.sum().backward()
    g = x.grad.numpy()
    assert not g[0].any() and not g[2].any()  # ignored rows get no gradient
    p1 = np.exp(lp[1])
    p1[1] -= 1
    np.testing.assert_allclose(g[1], p1, rtol=1e-5)


def test_cross_entropy_ignore_index_with_weight_and_smoothing() -> None:
    # torch.nn.functional.cross_entropy(x, [3, 1, 3], w, ignore_index=3,
    # label_smoothing=0.2): the weighted mean over the one kept row.
    w = np.array([1.0, 2.0, 3.0, 4.0])
    x = tt.tensor(_X)
    out = F.cross_entropy(
        x, tt.tensor([3, 1, 3]), tt.tensor(w, dtype=tt.float32), ignore_index=3,
        label_smoothing=0.2,
    )  # fmt: skip
    lp = _log_softmax_rows()
    nll = -lp[1, 1] * w[1] / w[1]
    smooth = -(lp[1] * w).sum() / w[1]
    np.testing.assert_allclose(out.item(), 0.8 * nll + 0.2 / 4 * smooth, rtol=1e-5)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_every_row_ignored(reduction: str) -> None:
    x = tt.tensor(_X, requires_grad=True)
    out = F.cross_entropy(x, tt.tensor([0, 0, 0]), ignore_index=0, reduction=reduction)
    if reduction == "mean":
        assert math.isnan(out.item())  # PyTorch: 0 / 0
    else:
        assert not out.detach().numpy().any()
    out.sum().backward()
    assert not x.grad.numpy().any()


def test_cross_entropy_ignored_row_with_inf_logit_adds_zero() -> None:
    # PyTorch: 0 for the ignored row, whose logits would make NaN.
    out = F.cross_entropy(tt.tensor([[math.inf, 1.0]]), tt.tensor([0]), ignore_index=0,
                          reduction="sum")  # fmt: skip
    assert out.item() == 0.0


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_softmax_of_0d_nonfinite_is_nan(value: float) -> None:
    x = tt.tensor(value)
    assert math.isnan(F.softmax(x, 0).item())
    assert math.isnan(F.log_softmax(x, 0).item())
    assert F.softmax(tt.tensor(2.0), 0).item() == 1.0
    assert F.log_softmax(tt.tensor(2.0), 0).item() == 0.0


def test_sum_to_half_dtype_rounds_the_elements_first() -> None:
    # torch.tensor([0, -1, -65519], dtype=torch.int32).sum(dtype=torch.float16) == -65504:
    # the elements become float16 (-65519 -> -65504), then add in float32.
    x = tt.tensor([0, -1, -65519], dtype=tt.int32)
    assert x.sum(dtype=tt.float16).item() == -65504.0


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("shape", [(2, 3), (3,)])
def test_cross_entropy_weighted_every_row_ignored_gradient_is_zero(
    shape: tuple[int, ...], smoothing: float
) -> None:
    # PyTorch: the loss is nan (0 / 0) but the gradient is zeros, not nan.
    x = tt.zeros(*shape, requires_grad=True)
    t = tt.tensor([-100] * shape[0]) if len(shape) == 2 else tt.tensor(-100)
    loss = F.cross_entropy(x, t, tt.tensor([1.0, 2.0, 3.0]), label_smoothing=smoothing)
    assert math.isnan(loss.item())
    loss.backward()
    assert not x.grad.numpy().any() and not np.isnan(x.grad.numpy()).any()


def test_backward_of_a_complex_scalar_needs_a_gradient() -> None:
    # PyTorch: "grad can be implicitly created only for real scalar outputs".
    x = tt.tensor(1 + 2j, requires_grad=True)
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        (x * 2).backward()
    (x * 2).backward(tt.tensor(1 + 0j))
    assert x.grad.item() == 2


def test_float32_scans_accumulate_in_float64() -> None:
    # torch.cumprod(torch.tensor([7e4, 1e38, 0.0]), 0) == [7e4, inf, 0]: PyTorch's CPU
    # scans of float32 run in double, so the overflowed product times 0 is 0, not NaN.
    out = tt.cumprod(tt.tensor([7e4, 1e38, 0.0]), 0)
    assert out.dtype is tt.float32
    assert out.tolist() == [7e4, math.inf, 0.0]
    assert tt.cumsum(tt.tensor([3e38, 3e38, -3e38]), 0).tolist()[2] == pytest.approx(3e38)


def test_float32_var_and_std_accumulate_in_double() -> None:
    """PyTorch's CPU var/std accumulate float32 in double: a deviation of 1e38 squares
    without overflowing, and std takes the root before rounding (found by the
    forwarding property test)."""
    x = [[0.0, 0.0, 0.0], [0.0, 0.0, 1e38]]
    std = tt.tensor(x).std(correction=1)
    assert std.dtype is tt.float32 and math.isfinite(std.item())
    assert std.item() == pytest.approx(4.0825e37, rel=1e-4)
    var = tt.tensor(x).var(1)
    assert var.dtype is tt.float32 and var[0].item() == 0.0 and math.isinf(var[1].item())
    c = tt.tensor([1 + 2j, 3 - 1j, 0j], dtype=tt.complex64)
    assert c.var().dtype is tt.float32 and c.var().item() == pytest.approx(14 / 3, rel=1e-6)

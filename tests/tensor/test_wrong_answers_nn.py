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


# -- Note [Explicit composites]: the losses' own nodes and PyTorch's closed-form gradients --
def test_bce_with_logits_gradient_of_confident_logits_in_float32() -> None:
    """The logits' gradient is ``sigmoid(x) - t`` (over numel for the mean), as PyTorch's
    formula: differentiated through the loss's decomposition it was ``1 + sigmoid(x) -
    1`` in effect, 0 at a logit of -30 (PyTorch 9.4e-14) and 5e-4 off at -10."""
    x64 = np.array([-30.0, -10.0, -5.0, 0.0, 5.0, 30.0, -80.0])
    t64 = np.array([0.0, 0.0, 0.0, 0.5, 1.0, 0.0, 0.0])
    x = tt.tensor(x64, dtype=tt.float32, requires_grad=True)
    out = F.binary_cross_entropy_with_logits(x, tt.tensor(t64, dtype=tt.float32))
    assert out.grad_fn.name() == "BinaryCrossEntropyWithLogitsBackward0"
    out.backward()
    # sigmoid rounded to float32 first, as PyTorch's float32 formula computes it (near 1
    # the difference with the target keeps only float32's digits, in both).
    sig32 = (1 / (1 + np.exp(-x64))).astype(np.float32)
    expected = (sig32 - t64.astype(np.float32)) / np.float32(x64.size)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


def test_bce_with_logits_target_gradient_and_pos_weight() -> None:
    """PyTorch's target gradient: ``-x``, and with ``pos_weight``
    ``log_sigmoid(-x) - pos_weight * log_sigmoid(x)``, each times the weight."""
    x64, t64 = np.array([-2.0, 0.5, 3.0]), np.array([0.25, 1.0, 0.0])
    pw64, w64 = np.array([2.0, 0.5, 1.5]), np.array([1.0, 3.0, 0.5])
    x = tt.tensor(x64, requires_grad=True, dtype=tt.float64)
    t = tt.tensor(t64, requires_grad=True, dtype=tt.float64)
    out = F.binary_cross_entropy_with_logits(
        x, t, tt.tensor(w64), reduction="sum", pos_weight=tt.tensor(pw64)
    )
    gx, gt = tt.autograd.grad(out, [x, t])

    def log_sigmoid(v: np.ndarray) -> np.ndarray:
        return -np.log1p(np.exp(-v))

    sig = 1 / (1 + np.exp(-x64))
    np.testing.assert_allclose(gx.numpy(), ((pw64 * t64 + 1 - t64) * sig - pw64 * t64) * w64)
    np.testing.assert_allclose(gt.numpy(), (log_sigmoid(-x64) - log_sigmoid(x64) * pw64) * w64)


@pytest.mark.parametrize("name", ["weight", "pos_weight"])
def test_bce_with_logits_weights_may_not_require_grad(name: str) -> None:
    """PyTorch has no formula for them: its check_no_requires_grad refuses the call in
    grad mode (the decomposition used to differentiate them)."""
    x, t = tt.zeros(3, requires_grad=True), tt.ones(3)
    w = tt.ones(3, requires_grad=True)
    message = f"not differentiable with respect to argument '{name}'"
    with pytest.raises(RuntimeError, match=message):
        F.binary_cross_entropy_with_logits(x, t, **{name: w})
    with tt.no_grad():
        F.binary_cross_entropy_with_logits(x, t, **{name: w})


def test_mse_loss_node_and_the_targets_zero() -> None:
    """MseLossBackward0 with PyTorch's ``mse_loss_backward(grad, target, self)`` for the
    target: ``2 * (t - x) * grad``, so equal values under a negative gradient give -0.0
    (the negated input gradient gave +0.0); a broadcast target is expanded first, as
    PyTorch's F.mse_loss does."""
    x = tt.tensor([1.0, 2.0], requires_grad=True)
    t = tt.tensor([1.0, 2.0], requires_grad=True)
    out = F.mse_loss(x, t, reduction="none")
    assert out.grad_fn.name() == "MseLossBackward0"
    gx, gt = tt.autograd.grad(out, [x, t], tt.tensor([-0.7, 1.3]))
    assert np.signbit(gt.numpy()).tolist() == [True, False]
    assert np.signbit(gx.numpy()).tolist() == [True, False]
    t1 = tt.tensor([0.5, -1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="different to the input size"):
        out = F.mse_loss(tt.ones(3, 2, requires_grad=True), t1)
    assert out.grad_fn.next_functions[1][0].name() == "ExpandBackward0"
    out.backward()
    np.testing.assert_allclose(t1.grad.numpy(), [2 * 3 * (0.5 - 1) / 6, 2 * 3 * (-1 - 1) / 6])


@pytest.mark.parametrize(
    ("window", "index"),
    [
        ([[math.nan, 1.0], [math.nan, 0.5]], 2),
        ([[1.0, math.nan], [math.nan, 0.5]], 2),
        ([[math.nan, 1.0], [0.5, 2.0]], 0),
        ([[1.0, 3.0], [math.nan, math.nan]], 3),
    ],
)
def test_max_pool2d_keeps_the_last_nan_of_a_window(window: list[list[float]], index: int) -> None:
    """PyTorch's max_pool2d (``val > max || isnan(val)``, CPU and CUDA) keeps a window's
    last NaN; ours (argmax) kept the first, so the gradient went to another element.
    PyTorch 2.13's indices, written out."""
    from dispatch import ops

    x = tt.tensor([[window]], requires_grad=True)
    values, indices = ops.core.max_pool2d_with_indices.default(x, [2, 2])
    assert math.isnan(values.item()) and indices.item() == index
    F.max_pool2d(x, 2).sum().backward()
    assert x.grad.reshape(-1).tolist() == [float(i == index) for i in range(4)]

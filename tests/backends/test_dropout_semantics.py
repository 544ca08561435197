"""``native_dropout`` computes PyTorch's ``input.mul(mask).mul_(scale)``: a dropped
element is ``x * 0`` (NaN for NaN and infinities, -0.0 for negative values), a kept one
``x * scale``; with ``p = 1`` every element is ``x * 0``.  The random draws are ours, so the
bits are checked against that rule applied with the mask the call returns."""

from __future__ import annotations

import numpy as np
import pytest

import tensor as tt
from dispatch import ops

_SPECIAL = [float("nan"), float("inf"), -float("inf"), -1.5, 1.5, -0.0, 0.0, 3e38]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p", [0.3, 0.5, 1.0])
def test_dropped_elements_are_x_times_zero(dtype: str, p: float) -> None:
    x_np = np.array(_SPECIAL * 25, dtype=dtype)
    out, mask = ops.core.native_dropout.default(tt.tensor(x_np), p, True)
    keep = mask.numpy()
    assert keep.dtype == np.bool_
    if p == 1.0:
        assert not keep.any()
    else:
        assert keep.any() and not keep.all()  # 200 draws: both kinds
    scale = 0.0 if p >= 1 else 1.0 / (1.0 - p)
    want = x_np * keep
    want *= scale
    assert out.numpy().tobytes() == want.tobytes()
    dropped = out.numpy()[~keep]
    assert np.isnan(dropped[~np.isfinite(x_np[~keep])]).all()
    assert np.signbit(dropped[x_np[~keep] < 0]).all()


def test_pytorch_drops_nan_and_infinities_to_nan() -> None:
    torch = pytest.importorskip("torch", reason="PyTorch not installed: its rule is checked above")
    x = torch.tensor(_SPECIAL * 25)
    out, mask = torch.native_dropout(x, 0.5, True)
    want = x * mask
    want *= 2.0
    assert out.numpy().tobytes() == want.numpy().tobytes()  # the rule the test above checks


def test_dropout_backward_is_grad_times_mask_times_scale() -> None:
    x = tt.tensor(np.linspace(-2, 2, 64, dtype=np.float32), requires_grad=True)
    out, mask = ops.core.native_dropout.default(x, 0.25, True)
    out.backward(tt.ones_like(out))
    want = np.ones(64, np.float32) * mask.numpy()
    want *= 1.0 / 0.75
    assert x.grad.numpy().tobytes() == want.tobytes()

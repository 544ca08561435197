"""A two-layer MLP with cross_entropy trains on a fixed toy task (issue 6)."""

from __future__ import annotations

import tensor as tt
import tensor.nn.functional as F


def test_mlp_with_cross_entropy_learns_a_toy_task() -> None:
    gen = tt.Generator().manual_seed(0)
    x = tt.randn(64, 8, generator=gen)
    labels = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()  # three classes
    w1 = (tt.randn(8, 32, generator=gen) * 0.3).requires_grad_()
    b1 = tt.zeros(32, requires_grad=True)
    w2 = (tt.randn(32, 3, generator=gen) * 0.3).requires_grad_()
    b2 = tt.zeros(3, requires_grad=True)
    params = [w1, b1, w2, b2]
    losses = []
    for _ in range(200):
        loss = F.cross_entropy(tt.relu(x @ w1 + b1) @ w2 + b2, labels)
        losses.append(loss.item())
        loss.backward()
        with tt.no_grad():
            for p in params:
                p -= 0.5 * p.grad  # in place on a leaf: allowed under no_grad
                p.grad = None
    assert losses[-1] < losses[0] / 10, (losses[0], losses[-1])
    accuracy = ((tt.relu(x @ w1 + b1) @ w2 + b2).argmax(1) == labels).float().mean().item()
    assert accuracy > 0.95

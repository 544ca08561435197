"""Autograd costs, measured side by side in one process with one compute thread.

    python ci/bench/autograd.py [--quick]

- forward with inputs that require grad, as a ratio to the same forward without;
- one training step (forward, cross_entropy, backward, SGD update) of an MLP with relu,
  batch 64, 256->256->10, and of a small one, batch 32, 64->64->10, each as a ratio to
  PyTorch eager on the same data and weights where PyTorch is installed
  (target: ratio <= 1.0).
"""

from __future__ import annotations

import argparse
import os
import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

import tensor as tt  # noqa: E402
import tensor.nn.functional as F  # noqa: E402


def best(fn: Callable[[], Any], number: int, repeat: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def mlp_data(batch: int, width_in: int, hidden: int, classes: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "x": rng.standard_normal((batch, width_in), dtype=np.float32),
        "y": rng.integers(0, classes, batch),
        "w1": (rng.standard_normal((width_in, hidden)) * 0.05).astype(np.float32),
        "b1": np.zeros(hidden, np.float32),
        "w2": (rng.standard_normal((hidden, classes)) * 0.05).astype(np.float32),
        "b2": np.zeros(classes, np.float32),
    }


def ours_step(d: dict[str, np.ndarray]) -> Callable[[], None]:
    x, y = tt.tensor(d["x"]), tt.tensor(d["y"])
    params = [tt.tensor(d[k]).requires_grad_() for k in ("w1", "b1", "w2", "b2")]

    def step() -> None:
        w1, b1, w2, b2 = params
        loss = F.cross_entropy(tt.relu(x @ w1 + b1) @ w2 + b2, y)
        loss.backward()
        with tt.no_grad():
            for p in params:
                p -= 0.01 * p.grad
                p.grad = None

    return step


def numpy_step(d: dict[str, np.ndarray]) -> Callable[[], None]:
    """The same step written by hand in NumPy (forward, the analytic backward, SGD): the
    floor a dispatcher over NumPy adds its costs to."""
    x, y = d["x"], d["y"]
    params = [d[k].copy() for k in ("w1", "b1", "w2", "b2")]
    rows = np.arange(x.shape[0])

    def step() -> None:
        w1, b1, w2, b2 = params
        h = x @ w1 + b1
        r = np.maximum(h, 0)
        z = r @ w2 + b2
        e = np.exp(z - z.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
        p[rows, y] -= 1
        gz = p / x.shape[0]
        gr = gz @ w2.T
        gh = np.where(h > 0, gr, 0)
        grads = (x.T @ gh, gh.sum(0), r.T @ gz, gz.sum(0))
        for param, grad in zip(params, grads, strict=True):
            param -= 0.01 * grad

    return step


def torch_step(torch: Any, d: dict[str, np.ndarray]) -> Callable[[], None]:
    x, y = torch.from_numpy(d["x"]), torch.from_numpy(d["y"])
    params = [torch.from_numpy(d[k].copy()).requires_grad_() for k in ("w1", "b1", "w2", "b2")]

    def step() -> None:
        w1, b1, w2, b2 = params
        loss = torch.nn.functional.cross_entropy(torch.relu(x @ w1 + b1) @ w2 + b2, y)
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= 0.01 * p.grad
                p.grad = None

    return step


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (CI smoke run)")
    quick = parser.parse_args().quick
    number, repeat = (20, 3) if quick else (200, 5)
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        torch = None

    a, b = tt.ones(16), tt.ones(16)
    ag, bg = tt.ones(16, requires_grad=True), tt.ones(16, requires_grad=True)
    plain = best(lambda: tt.sin(a) * b + a, number * 50, repeat)
    graph = best(lambda: tt.sin(ag) * bg + ag, number * 50, repeat)
    print(f"{'case':<52}{'ours':>11}{'torch':>11}{'ratio':>8}{'numpy':>11}{'ours/np':>9}")
    line = f"{'forward sin(a)*b+a, requires_grad / without':<52}{graph / plain:>10.2f}x"
    if torch is not None:
        ta, tb = torch.ones(16), torch.ones(16)
        tag, tbg = torch.ones(16, requires_grad=True), torch.ones(16, requires_grad=True)
        tplain = best(lambda: torch.sin(ta) * tb + ta, number * 50, repeat)
        tgraph = best(lambda: torch.sin(tag) * tbg + tag, number * 50, repeat)
        line += f"{tgraph / tplain:>10.2f}x"
    print(line)
    for name, shape in (
        ("MLP 64x256->256->10", (64, 256, 256, 10)),
        ("MLP 32x64->64->10", (32, 64, 64, 10)),
    ):
        d = mlp_data(*shape)
        ours = best(ours_step(d), number, repeat)
        floor = best(numpy_step(d), number, repeat)
        row = f"{'train step ' + name:<52}{ours * 1e6:>9.0f}us"
        if torch is not None:
            theirs = best(torch_step(torch, d), number, repeat)
            row += f"{theirs * 1e6:>9.0f}us{ours / theirs:>8.2f}"
        else:
            row += f"{'-':>11}{'-':>8}"
        row += f"{floor * 1e6:>9.0f}us{ours / floor:>9.2f}"
        print(row)
    print(
        "\ntarget: training steps <= 1.00x PyTorch eager"
        "\n(numpy: the same step hand-written in NumPy, the floor of any dispatcher over it)"
    )


if __name__ == "__main__":
    main()

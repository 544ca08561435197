"""Everyday small-tensor calls, ours over PyTorch eager, side by side in one process.

    python ci/bench/calls.py [--quick] [--only SUBSTRING]

The calls model code writes between its big operators: views and reshapes, indexing,
factories, clamps, small reductions, joins, conversions, each on a [4, 8] float32 tensor
(the size where a dispatcher's own cost is all there is).  Each row is written once for
both libraries (our API is PyTorch's); the two are timed in alternating rounds and each
figure is the best round, so a noisy host slows both alike: quote ratios, not times.
No issue sets a target per row; the table is sorted worst first, and its summary says
how many rows are at or under PyTorch.  Without PyTorch installed only our times print.
"""

from __future__ import annotations

import argparse
import os
import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import tensor as tt  # noqa: E402

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # the project never needs it: our column alone
    torch = None


def calls(lib: Any) -> dict[str, Callable[[], Any]]:
    """name -> the call, on ``lib``'s tensors (tt or torch)."""
    x, y, v = lib.ones(4, 8), lib.ones(4, 8), lib.ones(32)
    xr = lib.ones(4, 8, requires_grad=True)
    f = lib.nn.functional
    return {
        "x.view(4, -1)": lambda: x.view(4, -1),
        "x.reshape(-1)": lambda: x.reshape(-1),
        "x.flatten()": lambda: x.flatten(),
        "x.unsqueeze(0)": lambda: x.unsqueeze(0),
        "x.squeeze()": lambda: x.squeeze(),
        "x.permute(1, 0)": lambda: x.permute(1, 0),
        "x.transpose(0, 1)": lambda: x.transpose(0, 1),
        "x.t()": lambda: x.t(),
        "x.T": lambda: x.T,
        "x.expand(2, 4, 8)": lambda: x.expand(2, 4, 8),
        "x.contiguous()": lambda: x.contiguous(),
        "x[0]": lambda: x[0],
        "x[-1]": lambda: x[-1],
        "x[1:3]": lambda: x[1:3],
        "x[:, 0]": lambda: x[:, 0],
        "x.chunk(2)": lambda: x.chunk(2),
        "x.split(2)": lambda: x.split(2),
        "cat([x, y])": lambda: lib.cat([x, y]),
        "stack([x, y])": lambda: lib.stack([x, y]),
        "zeros(4, 8)": lambda: lib.zeros(4, 8),
        "zeros_like(x)": lambda: lib.zeros_like(x),
        "x.clone()": lambda: x.clone(),
        "x.float()": lambda: x.float(),
        "x.to(float64)": lambda: x.to(lib.float64),
        "x.clamp(0, 1)": lambda: x.clamp(0, 1),
        "x * y + 1": lambda: x * y + 1,
        "where(x > 0, x, y)": lambda: lib.where(x > 0, x, y),
        "x.masked_fill(x > 1, 0)": lambda: x.masked_fill(x > 1, 0.0),
        "x.sum(1)": lambda: x.sum(1),
        "x.mean()": lambda: x.mean(),
        "x.max(1)": lambda: x.max(1),
        "x.argmax(1)": lambda: x.argmax(1),
        "x.softmax(-1)": lambda: x.softmax(-1),
        "F.relu(x)": lambda: f.relu(x),
        "v[0].item()": lambda: v[0].item(),
        "x.size(0)": lambda: x.size(0),
        "x.shape": lambda: x.shape,
        "x.numel()": lambda: x.numel(),
        "x.sin(), x requires grad": lambda: xr.sin(),
        "x.view(4, -1), x requires grad": lambda: xr.view(4, -1),
    }


def best(fns: list[Callable[[], Any]], number: int, rounds: int) -> list[float]:
    """Seconds per call of each function, the best of ``rounds`` alternating rounds."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            times[i].append(timeit.timeit(fn, number=number) / number)
    return [min(t) for t in times]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (CI smoke run)")
    parser.add_argument("--only", default="", help="run the rows whose name contains this")
    args = parser.parse_args()
    number, rounds = (200, 3) if args.quick else (3000, 25)
    ours = calls(tt)
    theirs = calls(torch) if torch is not None else {}
    rows = []
    for name, fn in ours.items():
        if args.only not in name:
            continue
        other = theirs.get(name)
        t = best([fn, other] if other else [fn], number, rounds)
        rows.append((name, t[0], t[1] if other else None))
    rows.sort(key=lambda r: -(r[1] / r[2]) if r[2] else 0.0)
    print(f"{'call on a [4, 8] float32 tensor':34s} {'ours':>8s} {'torch':>8s} {'ratio':>6s}")
    for name, a, b in rows:
        tail = f"{b * 1e6:7.2f}us {a / b:6.2f}" if b else f"{'-':>9s} {'-':>6s}"
        print(f"{name:34s} {a * 1e6:7.2f}us {tail}")
    timed = [r for r in rows if r[2]]
    if timed:
        under = sum(a <= b for _, a, b in timed)
        print(f"\n{under} of {len(timed)} calls at or under PyTorch eager's time")


if __name__ == "__main__":
    main()

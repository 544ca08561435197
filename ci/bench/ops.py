"""Operator speed, side by side in one process with one compute thread.

    python ci/bench/ops.py [--quick]

Tiny operators (``a + b``, ``tt.sin(a)``, ``a.sum()`` on 1 and 100 elements) as
ratios to the raw NumPy call on the same arrays and, where PyTorch is installed,
to PyTorch eager on the same data; large arrays (4M-element add and sum,
1024x1024 matmul) as ratios to raw NumPy.  Each figure is the best of several
rounds, and the rounds of a row alternate between the contenders, so a noisy
machine slows both alike; quote ratios, not times.

Targets (issue 4): tiny ops no slower than PyTorch eager (ratio <= 1.0); large
arrays within 5% of raw NumPy (ratio <= 1.05: the dispatcher adds no copies).
"""

from __future__ import annotations

import argparse
import os
import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

# One compute thread for every library, set before any of them loads its BLAS/OpenMP.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

import tensor as tt  # noqa: E402

try:
    import torch
except ImportError:  # the PyTorch columns are left out
    torch = None


def best(fns: list[Callable[[], Any]], number: int, rounds: int) -> list[float]:
    """Best per-call time of each function, measured in alternating rounds."""
    times = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            times[i] = min(times[i], timeit.timeit(fn, number=number) / number)
    return times


def tiny_rows(n: int, number: int, rounds: int, failures: list[str]) -> None:
    """a + b, tt.sin(a), a.sum() on ``n`` float32 elements, vs NumPy and PyTorch."""
    x = np.random.default_rng(0).random(n, dtype=np.float32) + 0.5
    y = np.random.default_rng(1).random(n, dtype=np.float32) + 0.5
    a, b = tt.from_numpy(x), tt.from_numpy(y)
    ta = tb = None
    if torch is not None:
        ta, tb = torch.from_numpy(x.copy()), torch.from_numpy(y.copy())
    cases = [
        ("a + b", lambda: a + b, lambda: x + y, lambda: ta + tb),
        ("tt.sin(a)", lambda: tt.sin(a), lambda: np.sin(x), lambda: torch.sin(ta)),
        ("a.sum()", lambda: a.sum(), lambda: x.sum(), lambda: ta.sum()),
    ]
    for name, ours, raw, theirs in cases:
        fns = [ours, raw] + ([theirs] if torch is not None else [])
        t = best(fns, number, rounds)
        label = f"{name} ({n} elem)"
        line = f"{label:<34}{t[0] * 1e6:>9.3f}us{t[1] * 1e6:>9.3f}us{t[0] / t[1]:>8.2f}"
        if torch is not None:
            line += f"{t[2] * 1e6:>9.3f}us{t[0] / t[2]:>8.2f}"
            if t[0] / t[2] > 1.0:
                failures.append(f"{label} is {t[0] / t[2]:.2f}x PyTorch eager")
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (CI smoke run)")
    args = parser.parse_args()
    tiny_number, rounds = (2_000, 3) if args.quick else (50_000, 9)
    big_rounds = 2 if args.quick else 7
    if torch is not None:
        torch.set_num_threads(1)

    print(f"{'case':<34}{'ours':>11}{'numpy':>11}{'ratio':>8}{'torch':>11}{'ratio':>8}")
    failures: list[str] = []
    for n in (1, 100):
        tiny_rows(n, tiny_number, rounds, failures)

    big = np.random.default_rng(2).random(4_000_000, dtype=np.float32)
    big2 = np.random.default_rng(3).random(4_000_000, dtype=np.float32)
    m1 = np.random.default_rng(4).random((1024, 1024), dtype=np.float32)
    m2 = np.random.default_rng(5).random((1024, 1024), dtype=np.float32)
    A, B = tt.from_numpy(big), tt.from_numpy(big2)
    M1, M2 = tt.from_numpy(m1), tt.from_numpy(m2)
    large = [
        ("a + b (4M elem)", lambda: A + B, lambda: big + big2, 20),
        ("a.sum() (4M elem)", lambda: A.sum(), lambda: big.sum(), 20),
        ("a @ b (1024x1024)", lambda: M1 @ M2, lambda: m1 @ m2, 3),
    ]
    for name, ours, raw, number in large:
        t = best([ours, raw], max(1, number // (4 if args.quick else 1)), big_rounds)
        ratio = t[0] / t[1]
        print(f"{name:<34}{t[0] * 1e3:>9.3f}ms{t[1] * 1e3:>9.3f}ms{ratio:>8.2f}")
        if ratio > 1.05:
            failures.append(f"{name} is {ratio:.2f}x raw NumPy")

    if torch is None:
        print("\nPyTorch is not installed: the torch columns are left out.")
    print("\ntargets: tiny ops <= 1.00x PyTorch eager; large arrays <= 1.05x raw NumPy")
    if failures:
        print("missed (quote full runs; quick runs are noisy): " + "; ".join(failures))
    else:
        print("all targets met")


if __name__ == "__main__":
    main()

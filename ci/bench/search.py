"""searchsorted and isin on the CPU: the fast path, the general path, PyTorch, and the
pairwise comparison they replaced, in one process with one compute thread.

    python ci/bench/search.py [--quick]

Rows: 1-D boundaries (``np.searchsorted``, the fast path of Note [Searching operators]
in ``backends.common.searching``) and the same call with the fast paths off (PyTorch's
search, vectorised); batched boundaries (always the vectorised search); ``isin``.  The
``pairwise`` column is the composition the operators replaced (a broadcast compare and
a sum: O(n m) memory).  Figures are the best of several rounds, in ms; quote ratios.
"""

from __future__ import annotations

import argparse
import os
import sys
import timeit
from pathlib import Path
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

import tensor as tt  # noqa: E402
from backends.common import fastpaths  # noqa: E402

try:
    import torch
except ImportError:  # the PyTorch column is left out
    torch = None


def best_ms(fn: Any, number: int, rounds: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=rounds)) / number * 1e3


def pairwise(bd: Any, v: Any) -> Any:
    return tt.sum(bd.unsqueeze(-2) < v.unsqueeze(-1), -1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    quick = parser.parse_args().quick
    number, rounds = (2, 2) if quick else (5, 5)
    rng = np.random.default_rng(0)
    n, m = 4096, 100_000
    bd1 = np.sort(rng.standard_normal(n)).astype(np.float32)
    v1 = rng.standard_normal(m).astype(np.float32)
    bd2 = np.sort(rng.standard_normal((64, 64)), axis=1).astype(np.float32)
    v2 = rng.standard_normal((64, 1500)).astype(np.float32)
    t = rng.integers(0, 10_000, 2000)
    x = rng.integers(0, 10_000, m)
    cases = [
        ("searchsorted 1-D 4096 x 100k", bd1, v1, "ss"),
        ("searchsorted batched 64x64 x 64x1500", bd2, v2, "ss"),
        ("isin 100k in 2000", x, t, "isin"),
    ]
    print(f"{'case':42} {'fast':>9} {'general':>9} {'torch':>9} {'pairwise':>9}  (ms)")
    for name, a, b, kind in cases:
        ta, tb = tt.from_numpy(a), tt.from_numpy(b)
        op = tt.searchsorted if kind == "ss" else tt.isin
        fast = best_ms(lambda: op(ta, tb), number, rounds)  # noqa: B023
        with fastpaths.disabled():
            general = best_ms(lambda: op(ta, tb), number, rounds)  # noqa: B023
        theirs = float("nan")
        if torch is not None:
            torch.set_num_threads(1)
            pa, pb = torch.from_numpy(a), torch.from_numpy(b)
            top = torch.searchsorted if kind == "ss" else torch.isin
            theirs = best_ms(lambda: top(pa, pb), number, rounds)  # noqa: B023
        old = float("nan")
        if kind == "ss" and a.ndim == 2:
            old = best_ms(lambda: pairwise(ta, tb), 1, 2)  # noqa: B023
        print(f"{name:42} {fast:9.2f} {general:9.2f} {theirs:9.2f} {old:9.2f}")


if __name__ == "__main__":
    main()

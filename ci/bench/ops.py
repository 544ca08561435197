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
Issue 5 adds boolean-mask indexing, ``cat`` of ten small tensors and
``cross_entropy`` (64 x 10), each with a target of 1.0x PyTorch eager, and a
conv2d (batch 8, 3 -> 16 channels, 32x32, 3x3) with a target of 2.0x.  The
optimizers' in-place updates (``p.add_(g, alpha=-lr)``, ``m.lerp_(g, 0.1)``) are
shown beside NumPy's two-step spellings and PyTorch's, without a target, and so is
``F.linear`` at batches of 2 to 64 (an ``nn.Linear``-style [out, in] weight).
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


def issue5_rows(number: int, rounds: int, failures: list[str]) -> None:
    """Indexing, joining and nn rows (issue 5), vs the raw NumPy call and PyTorch eager."""
    rng = np.random.default_rng(6)
    x = rng.random(100, dtype=np.float32)
    mask = x > 0.5
    small = [rng.random((4, 8), dtype=np.float32) for _ in range(10)]
    images = rng.random((8, 3, 32, 32), dtype=np.float32)
    weight = rng.random((16, 3, 3, 3), dtype=np.float32)
    bias = rng.random(16, dtype=np.float32)
    logits = rng.standard_normal((64, 10)).astype(np.float32)
    target = rng.integers(0, 10, 64)

    def ce_numpy() -> Any:
        shifted = logits - logits.max(axis=1, keepdims=True)
        lse = np.log(np.exp(shifted).sum(axis=1))
        return (lse - shifted[np.arange(64), target]).mean()

    a, m = tt.from_numpy(x), tt.from_numpy(mask)
    ts = [tt.from_numpy(v) for v in small]
    ti, tw, tb = tt.from_numpy(images), tt.from_numpy(weight), tt.from_numpy(bias)
    tl, tg = tt.from_numpy(logits), tt.from_numpy(target)
    F = tt.nn.functional
    cases: list[tuple[str, Any, Any, Any, float, int]] = [
        ("x[mask] (100 elem)", lambda: a[m], lambda: x[mask], None, 1.0, number),
        ("tt.cat(10 x [4, 8])", lambda: tt.cat(ts), lambda: np.concatenate(small), None, 1.0,
         number),
        ("cross_entropy [64, 10]", lambda: F.cross_entropy(tl, tg), ce_numpy, None, 1.0, number),
        ("conv2d [8,3,32,32]*[16,3,3,3] p=1", lambda: F.conv2d(ti, tw, tb, padding=1), None, None,
         2.0, max(1, number // 200)),
    ]  # fmt: skip
    if torch is not None:
        px, pm = torch.from_numpy(x.copy()), torch.from_numpy(mask.copy())
        ps = [torch.from_numpy(v.copy()) for v in small]
        pi, pw, pb = (torch.from_numpy(v.copy()) for v in (images, weight, bias))
        pl, pg = torch.from_numpy(logits.copy()), torch.from_numpy(target.copy())
        tf = torch.nn.functional
        theirs = [
            lambda: px[pm],
            lambda: torch.cat(ps),
            lambda: tf.cross_entropy(pl, pg),
            lambda: tf.conv2d(pi, pw, pb, padding=1),
        ]
        cases = [(*c[:3], t, *c[4:]) for c, t in zip(cases, theirs, strict=True)]
    for name, ours, raw, theirs_fn, target_ratio, n in cases:
        fns = [ours] + ([raw] if raw is not None else []) + ([theirs_fn] if theirs_fn else [])
        t = best(fns, n, rounds)
        line = f"{name:<34}{t[0] * 1e6:>9.3f}us"
        line += f"{t[1] * 1e6:>9.3f}us{t[0] / t[1]:>8.2f}" if raw is not None else " " * 19
        if theirs_fn is not None:
            ratio = t[0] / t[-1]
            line += f"{t[-1] * 1e6:>9.3f}us{ratio:>8.2f}"
            if ratio > target_ratio:
                failures.append(f"{name} is {ratio:.2f}x PyTorch eager (target {target_ratio})")
        print(line)


def update_rows(number: int, rounds: int) -> None:
    """The optimizers' in-place updates on a float32 parameter (no target of their own:
    the training steps of ci/bench/autograd.py carry the targets): ``p.add_(g,
    alpha=-lr)`` (SGD) and ``m.lerp_(g, 0.1)`` (Adam), which Note [Fused add with alpha]
    and Note [Fused lerp] compute by BLAS axpy, rounding once as PyTorch does, against
    NumPy's two-step spellings (which round twice) and PyTorch's fused kernels."""
    for shape in ((64, 64), (256, 256)):
        rng = np.random.default_rng(7)
        p0, g0 = rng.standard_normal((2, *shape), dtype=np.float32)
        size = "x".join(map(str, shape))
        for kind in ("add", "lerp"):
            p, g, raw = tt.from_numpy(p0.copy()), tt.from_numpy(g0.copy()), p0.copy()
            if kind == "add":
                name = f"p.add_(g, alpha=-lr) [{size}]"
                fns = [
                    lambda p=p, g=g: p.add_(g, alpha=-1e-3),
                    lambda raw=raw, g0=g0: raw.__iadd__(g0 * np.float32(-1e-3)),
                ]
            else:
                name = f"m.lerp_(g, 0.1) [{size}]"
                fns = [
                    lambda p=p, g=g: p.lerp_(g, 0.1),
                    lambda raw=raw, g0=g0: raw.__iadd__((g0 - raw) * np.float32(0.1)),
                ]
            if torch is not None:
                tp, tg = torch.from_numpy(p0.copy()), torch.from_numpy(g0.copy())
                if kind == "add":
                    fns.append(lambda tp=tp, tg=tg: tp.add_(tg, alpha=-1e-3))
                else:
                    fns.append(lambda tp=tp, tg=tg: tp.lerp_(tg, 0.1))
            with tt.no_grad():
                t = best(fns, number, rounds)
            line = f"{name:<34}{t[0] * 1e6:>9.3f}us{t[1] * 1e6:>9.3f}us{t[0] / t[1]:>8.2f}"
            if torch is not None:
                line += f"{t[2] * 1e6:>9.3f}us{t[0] / t[2]:>8.2f}"
            print(line)


def linear_rows(number: int, rounds: int) -> None:
    """``F.linear`` on float32 with an ``nn.Linear``-style [out, in] weight, no grad, at
    small batches (no target of its own): ours, NumPy's ``x @ w.T + b``, PyTorch's.
    Note [Small batches against a row-major weight] turns batches of 2-64 around, where
    its measured table says so; the others take gemm with the bias in its pass (Note
    [Linear by gemm])."""
    for batch, features in ((2, 1024), (8, 256), (8, 1024), (32, 256), (64, 256)):
        rng = np.random.default_rng(9)
        x0 = rng.standard_normal((batch, features), dtype=np.float32)
        w0 = rng.standard_normal((features, features), dtype=np.float32)
        b0 = rng.standard_normal(features, dtype=np.float32)
        x, w, b = tt.from_numpy(x0), tt.from_numpy(w0), tt.from_numpy(b0)
        fns = [
            lambda x=x, w=w, b=b: tt.nn.functional.linear(x, w, b),
            lambda x0=x0, w0=w0, b0=b0: x0 @ w0.T + b0,
        ]
        if torch is not None:
            tx, tw, tb = (torch.from_numpy(a) for a in (x0, w0, b0))
            fns.append(lambda tx=tx, tw=tw, tb=tb: torch.nn.functional.linear(tx, tw, tb))
        calls = max(1, number * 64 // (batch * features))
        t = best(fns, calls, rounds)
        name = f"F.linear batch {batch}, {features}->{features}"
        line = f"{name:<34}{t[0] * 1e6:>9.3f}us{t[1] * 1e6:>9.3f}us{t[0] / t[1]:>8.2f}"
        if torch is not None:
            line += f"{t[2] * 1e6:>9.3f}us{t[0] / t[2]:>8.2f}"
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
    issue5_rows(tiny_number // 5, rounds, failures)
    update_rows(tiny_number // 10, rounds)
    linear_rows(tiny_number // 10, rounds)

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
    print(
        "\ntargets: tiny ops (and mask indexing, cat, cross_entropy) <= 1.00x PyTorch eager; "
        "conv2d <= 2.00x; large arrays <= 1.05x raw NumPy"
    )
    if failures:
        print("missed (quote full runs; quick runs are noisy): " + "; ".join(failures))
    else:
        print("all targets met")


if __name__ == "__main__":
    main()

"""The CUDA backend against CuPy (and PyTorch's CUDA build, where installed), in one run.

    python ci/bench/cuda.py [--quick]

- host overhead of tiny ops (1 element): ``a + b``, ``tt.sin(a)``, ``a.sum()``, ``a @ a``
  as a ratio to the same CuPy call (target <= 1.2);
- elementwise add and exp on 256M float32 elements as a fraction of the
  device-to-device copy bandwidth measured in the same run (target >= 0.85);
- a full sum over 256M float32 as a fraction of that bandwidth, counting the bytes
  read (target >= 0.8);
- matmul 8192x8192 in float16 and float32 as a ratio to CuPy (target <= 1.05).

Device times come from CUDA events around repeated calls (best of several
repeats); host times from timeit with a synchronisation per repeat.  Without a
GPU the script says so and exits 0 (ci/cpu.sh runs every benchmark).
"""

from __future__ import annotations

import argparse
import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

# This file is named cuda.py: its folder must leave sys.path, or CuPy's own dependency
# `cuda` (cuda-pathfinder, cuda-bindings) would be found here.  The repository root instead.
_HERE = str(Path(__file__).resolve().parent)
sys.path[:] = [p for p in sys.path if str(Path(p or ".").resolve()) != _HERE]
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import backends.cuda  # noqa: E402
import tensor as tt  # noqa: E402


def host_times(
    fns: list[Callable[[], Any]], sync: Callable[[], None], number: int, repeat: int
) -> list[float]:
    """Seconds per call on the host of each of ``fns``, measured side by side: the
    repeats alternate between them (so drift in clocks and load falls on all alike),
    the queue drained after each; the best repeat of each."""
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            sync()
            t = timeit.timeit(fn, number=number)
            sync()
            best[i] = min(best[i], t / number)
    return best


def device_time(cp: Any, fn: Callable[[], Any], number: int, repeat: int) -> float:
    """Seconds per call on the GPU (CUDA events around ``number`` calls, best repeat)."""
    fn()  # compile and warm up
    cp.cuda.Device().synchronize()
    best = float("inf")
    for _ in range(repeat):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        for _ in range(number):
            fn()
        end.record()
        end.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(start, end) / 1e3 / number)
    return best


def bandwidth_rows(
    cp: Any, big: int, reps: int, repeat: int
) -> list[tuple[str, str, float, float | None, str]]:
    """add/exp/sum on ``big`` float32 elements against the device-to-device copy bandwidth."""
    x = tt.ones(big, device="cuda")
    y = tt.ones(big, device="cuda")
    dst = cp.empty_like(x.array)
    nbytes = big * 4
    t_copy = device_time(cp, lambda: cp.copyto(dst, x.array), reps, repeat)
    copy_bw = 2 * nbytes / t_copy  # read + write
    print(f"device-to-device copy: {copy_bw / 1e9:.0f} GB/s (the reference below)")
    rows = []
    for name, fn, moved, target in (
        (f"add {big >> 20}M float32", lambda: x + y, 3 * nbytes, ">= 0.85"),
        (f"exp {big >> 20}M float32", lambda: tt.exp(x), 2 * nbytes, ">= 0.85"),
        (f"sum {big >> 20}M float32", lambda: x.sum(), nbytes, ">= 0.8"),
    ):
        t = device_time(cp, fn, reps, repeat)
        rows.append((name, f"{moved / t / 1e9:.0f} GB/s", moved / t / copy_bw, None, target))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller sizes (smoke run)")
    quick = parser.parse_args().quick
    if not backends.cuda.is_available():
        print(f"ci/bench/cuda.py: skipped: no CUDA device ({backends.cuda.unavailable_reason()})")
        return
    import cupy as cp

    try:
        import torch

        torch_cuda = torch.cuda.is_available()
    except ImportError:
        torch, torch_cuda = None, False

    big = (1 << 24) if quick else (1 << 28)  # 256M float32 elements = 1 GiB per array
    n_mm = 2048 if quick else 8192
    number, repeat = (200, 3) if quick else (2000, 7)
    sync = cp.cuda.Device().synchronize
    rows: list[tuple[str, str, float, float | None, str]] = []

    # -- host overhead on tiny tensors -----------------------------------------------------
    a = tt.ones(1, device="cuda")
    m = tt.ones(1, 1, device="cuda")
    ca, cm = a.array, m.array
    tiny = [
        ("a + b (1 elem)", lambda: a + a, lambda: ca + ca),
        ("tt.sin(a) (1 elem)", lambda: tt.sin(a), lambda: cp.sin(ca)),
        ("a.sum() (1 elem)", lambda: a.sum(), lambda: ca.sum()),
        ("a @ a (1x1)", lambda: m @ m, lambda: cm @ cm),
    ]
    if torch_cuda:
        ta, tm = torch.ones(1, device="cuda"), torch.ones(1, 1, device="cuda")
        torch_tiny = [lambda: ta + ta, lambda: torch.sin(ta), lambda: ta.sum(), lambda: tm @ tm]
    for i, (name, ours, theirs) in enumerate(tiny):
        fns = [ours, theirs, *([torch_tiny[i]] if torch_cuda else [])]
        for fn in fns:
            for _ in range(number):  # compile, then warm the allocators and caches
                fn()
        t_ours, t_cupy, *t_rest = host_times(fns, sync, number, repeat)
        t_torch = t_rest[0] if t_rest else None
        rows.append(
            (
                name,
                f"{t_ours * 1e6:.2f}us vs CuPy {t_cupy * 1e6:.2f}us",
                t_ours / t_cupy,
                None if t_torch is None else t_ours / t_torch,
                "<= 1.2",
            )
        )

    rows.extend(bandwidth_rows(cp, big, 3 if quick else 10, repeat))
    cp.get_default_memory_pool().free_all_blocks()

    # -- matmul ----------------------------------------------------------------------------
    for dt in (tt.float16, tt.float32):
        p = tt.randn(n_mm, n_mm, device="cuda").to(dt)
        q = tt.randn(n_mm, n_mm, device="cuda").to(dt)
        cpq = (p.array, q.array)
        t_ours = device_time(cp, lambda p=p, q=q: p @ q, 3 if quick else 10, repeat)
        t_cupy = device_time(cp, lambda cpq=cpq: cpq[0] @ cpq[1], 3 if quick else 10, repeat)
        t_torch = None
        if torch_cuda:
            tp = torch.from_dlpack(p.array)
            tq = torch.from_dlpack(q.array)
            t_torch = device_time(cp, lambda tp=tp, tq=tq: tp @ tq, 3 if quick else 10, repeat)
        tflops = 2 * n_mm**3 / t_ours / 1e12
        rows.append(
            (
                f"matmul {n_mm}^2 {dt.name}",
                f"{tflops:.0f} TFLOP/s",
                t_ours / t_cupy,
                None if t_torch is None else t_ours / t_torch,
                "<= 1.05",
            )
        )

    print(f"{'case':34s} {'measured':32s} {'ratio':>7s} {'vs torch':>9s}  target")
    for name, measured, ratio, vs_torch, target in rows:
        vt = "" if vs_torch is None else f"{vs_torch:9.2f}"
        print(f"{name:34s} {measured:32s} {ratio:7.2f} {vt:>9s}  {target}")
    print(
        "ratio: tiny ops and matmul = our time / CuPy's; add/exp/sum = achieved bandwidth / "
        "copy bandwidth"
    )


if __name__ == "__main__":
    main()

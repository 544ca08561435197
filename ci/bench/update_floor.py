"""The floor of a Python dispatcher for Adam's update, side by side in one process.

    python ci/bench/update_floor.py [--quick] [--rounds N]

Adam's single-tensor update (``lerp_``, ``mul_``, ``addcmul_``, ``sqrt``, ``/``, ``add_``,
``addcdiv_``) on the four parameters of ``ci/bench/autograd.py``'s batch-64 step
([256, 256], [256], [10, 256], [10] float32), four ways, interleaved, 10th percentiles:

- NumPy by hand, in the fewest passes (what our kernels compute);
- the same calls through a minimal Python wrapper a call: a tensor class holding the array
  and a version counter, a type check, the kernel, the version bump; what any dispatcher
  written in Python adds at the least;
- ours (``tensor``), under ``no_grad``;
- PyTorch's, under ``no_grad`` (one thread).

The wrapper's row against PyTorch's says whether the update can reach PyTorch in pure
Python over NumPy; ours against the wrapper's is what our dispatch costs on it.  BLAS
runs one thread (SciPy's saxpy is lerp_'s fused product and sum).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

import tensor as tt  # noqa: E402
from backends.cpu._blas import axpy_checked  # noqa: E402

SHAPES = [(256, 256), (256,), (10, 256), (10,)]
LR, BETA1, BETA2, EPS, STEP = 0.01, 0.9, 0.999, 1e-8, 3
BIAS2_SQRT = (1 - BETA2**STEP) ** 0.5
STEP_SIZE = LR / (1 - BETA1**STEP)
_mul, _add, _sub, _div, _sqrt = np.multiply, np.add, np.subtract, np.divide, np.sqrt


class Wrapped:
    """The least a tensor of a Python dispatcher holds: the array and a version counter."""

    __slots__ = ("array", "version")

    def __init__(self, array: np.ndarray) -> None:
        self.array, self.version = array, [0]


def lerp_(m: Any, g: Any, w: float) -> Any:
    if type(m) is Wrapped and type(g) is Wrapped:
        axpy_checked(m.array, _sub(g.array, m.array), w)
        m.version[0] += 1
        return m
    raise TypeError


def mul_(v: Any, s: float) -> Any:
    if type(v) is Wrapped:
        _mul(v.array, s, v.array)
        v.version[0] += 1
        return v
    raise TypeError


def addcmul_(v: Any, a: Any, b: Any, value: float) -> Any:
    if type(v) is Wrapped and type(a) is Wrapped and type(b) is Wrapped:
        t = _mul(a.array, value)
        _mul(t, b.array, t)
        _add(v.array, t, v.array)
        v.version[0] += 1
        return v
    raise TypeError


def sqrt(v: Any) -> Any:
    if type(v) is Wrapped:
        return Wrapped(_sqrt(v.array))
    raise TypeError


def div(v: Any, s: float) -> Any:
    if type(v) is Wrapped:
        return Wrapped(_div(v.array, s))
    raise TypeError


def add_(v: Any, s: float) -> Any:
    if type(v) is Wrapped:
        _add(v.array, s, v.array)
        v.version[0] += 1
        return v
    raise TypeError


def addcdiv_(p: Any, a: Any, b: Any, value: float) -> Any:
    if type(p) is Wrapped and type(a) is Wrapped and type(b) is Wrapped:
        t = _mul(a.array, value)
        _div(t, b.array, t)
        _add(p.array, t, p.array)
        p.version[0] += 1
        return p
    raise TypeError


def updates(torch: Any) -> dict[str, Callable[[], None]]:
    rng = np.random.default_rng(0)
    arrays = [
        [np.abs(rng.standard_normal(s)).astype(np.float32) + 0.1 for _ in range(4)] for s in SHAPES
    ]
    by_hand = [[a.copy() for a in q] for q in arrays]
    wrapped = [[Wrapped(a.copy()) for a in q] for q in arrays]
    ours = [[tt.tensor(a.copy()) for a in q] for q in arrays]

    def numpy_update() -> None:
        for p, g, m, v in by_hand:
            axpy_checked(m, _sub(g, m), 1 - BETA1)
            _mul(v, BETA2, v)
            t = _mul(g, 1 - BETA2)
            _mul(t, g, t)
            _add(v, t, v)
            d = _sqrt(v)
            _div(d, BIAS2_SQRT, d)
            _add(d, EPS, d)
            t = _mul(m, -STEP_SIZE)
            _div(t, d, t)
            _add(p, t, p)

    def wrapper_update() -> None:
        for p, g, m, v in wrapped:
            lerp_(m, g, 1 - BETA1)
            addcmul_(mul_(v, BETA2), g, g, 1 - BETA2)
            addcdiv_(p, m, add_(div(sqrt(v), BIAS2_SQRT), EPS), -STEP_SIZE)

    def library_update(params: list[list[Any]], lib: Any) -> Callable[[], None]:
        def update() -> None:
            with lib.no_grad():
                for p, g, m, v in params:  # torch.optim.Adam's single-tensor path
                    m.lerp_(g, 1 - BETA1)
                    v.mul_(BETA2).addcmul_(g, g, value=1 - BETA2)
                    denom = (v.sqrt() / BIAS2_SQRT).add_(EPS)
                    p.addcdiv_(m, denom, value=-STEP_SIZE)

        return update

    rows = {
        "NumPy by hand": numpy_update,
        "minimal Python wrapper": wrapper_update,
        "ours": library_update(ours, tt),
    }
    if torch is not None:
        theirs = [[torch.from_numpy(a.copy()) for a in q] for q in arrays]
        rows["PyTorch"] = library_update(theirs, torch)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="20 rounds (CI smoke run)")
    args = parser.parse_args()
    if args.quick:
        args.rounds = 20
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        torch = None
    rows = updates(torch)
    times: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(args.rounds):
        for name, fn in rows.items():
            for _ in range(5):
                start = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)
    tenth = {name: sorted(t)[len(t) // 10] for name, t in times.items()}
    base = tenth.get("PyTorch")
    print(f"{'Adam update, batch-64 step parameters':40s} {'us':>8s}  {'/ PyTorch':>9s}")
    for name, seconds in tenth.items():
        ratio = f"{seconds / base:9.2f}" if base else f"{'-':>9s}"
        print(f"{name:40s} {seconds * 1e6:8.1f}  {ratio}")


if __name__ == "__main__":
    main()

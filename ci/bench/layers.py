"""The cost of the layers above the backend, measured side by side in one process.

    python ci/bench/layers.py [--quick]

Every row times ours and PyTorch's in interleaved rounds (one compute thread); figures
are medians.

- autocast: an op under ``autocast("cpu")`` as a ratio to the same op outside it, next
  to PyTorch's same ratio (target: ours no larger): ``sin`` (no policy: falls
  through), 8x8 ``matmul``, ``F.linear`` and ``F.conv2d`` (lower-precision ops: two
  casts and the op in bfloat16), and a small model's forward (conv2d, relu, flatten,
  linear, relu, linear); under the matmul row, its floor: our plain matmul plus
  the work of NumPy's casts alone, over our plain matmul (``autocast_floor``);
- a pass-through Python mode over the plain call, next to PyTorch's;
- ``custom_op``: ours whose kernel returns its input, and ours whose kernel is
  ``x.clone()``, as ratios to ``torch.library.custom_op`` with the clone body minus
  the clone (the op machinery alone; target <= 0.1); and ``x.clone()`` itself over
  PyTorch's (target <= 1.0).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import dispatch  # noqa: E402
import tensor as tt  # noqa: E402


def interleaved(
    fns: list[Callable[[], Any]],
    number: int,
    rounds: int,
    regions: list[Callable[[], Any] | None] | None = None,
) -> list[float]:
    """Median seconds per call of each function, timed in alternating rounds; a function
    with a region (a factory of context managers) is timed inside it."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            make_region = regions[i] if regions is not None else None
            with make_region() if make_region is not None else contextlib.nullcontext():
                times[i].append(timeit.timeit(fn, number=number) / number)
    return [statistics.median(t) for t in times]


class Passthrough(dispatch.DispatchMode):
    def __dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        return func(*args, **(kwargs or {}))


def autocast_cases(lib: Any) -> dict[str, Callable[[], Any]]:
    """name -> a call, written once for ``tt`` and ``torch``."""
    functional = lib.nn.functional
    one = lib.ones(1)
    a, w, b = lib.ones(8, 8), lib.ones(8, 8) * 0.5, lib.ones(8)
    image, kernel = lib.ones(1, 3, 8, 8), lib.ones(4, 3, 3, 3) * 0.1
    # A small model: conv2d, relu, flatten, linear, relu, linear (weights [out, in]).
    k1, c1 = lib.ones(4, 3, 3, 3) * 0.1, lib.zeros(4)
    w1, b1 = lib.ones(16, 144) * 0.01, lib.zeros(16)
    w2, b2 = lib.ones(10, 16) * 0.1, lib.zeros(10)
    relu, linear, conv2d = lib.relu, functional.linear, functional.conv2d

    def model() -> Any:
        h = relu(conv2d(image, k1, c1)).reshape(1, -1)
        return linear(relu(linear(h, w1, b1)), w2, b2)

    return {
        "sin(1 elem) (no policy)": lambda: lib.sin(one),
        "matmul 8x8": lambda: lib.matmul(a, w),
        "F.linear 8x8": lambda: linear(a, w, b),
        "F.conv2d 1x3x8x8, 3x3": lambda: conv2d(image, kernel),
        "small model forward": model,
    }


def autocast_floor(
    ours: Callable[[], Any],
    theirs: Callable[[], Any] | None,
    region: Callable[[], Any],
    number: int,
    rounds: int,
) -> None:
    """The floor of the 8x8 autocast matmul row: our matmul outside the region plus the
    work NumPy needs for the region's casts (each operand rounded to bfloat16 and
    widened back for OpenBLAS, the product rounded to bfloat16: our kernels' arithmetic,
    whose bits the general path's bfloat16 matmul gives; or ml_dtypes' own bfloat16
    ``dot``, the same bits at this size and slower from 16x16), over our matmul outside:
    the ratio a dispatcher would reach whose region added nothing but NumPy's casts.
    Measured in the same rounds as PyTorch's ratio, which it is to be compared with."""
    import ml_dtypes
    import numpy as np

    bf16, f32 = ml_dtypes.bfloat16, np.float32
    a, w = np.ones((8, 8), f32), np.full((8, 8), 0.5, f32)
    fns = [
        ours,
        lambda: np.dot(a, w),
        lambda: np.dot(a.astype(bf16).astype(f32), w.astype(bf16).astype(f32)).astype(bf16),
        lambda: np.dot(a.astype(bf16), w.astype(bf16)),
    ]
    regions: list[Callable[[], Any] | None] = [None] * len(fns)
    if theirs is not None:
        fns += [theirs, theirs]
        regions += [None, region]
    t = interleaved(fns, number, rounds, regions=regions)
    ratio = f"{t[5] / t[4]:>8.2f}" if theirs is not None else f"{'-':>8}"
    for label, cast in (("widened for BLAS", t[2]), ("ml_dtypes' dot", t[3])):
        floor = (t[0] + cast - t[1]) / t[0]
        print(f"{'  floor: ours outside + NumPy casts (' + label + ')':<58}{floor:>8.2f}{ratio}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (CI smoke run)")
    number, rounds = (300, 3) if parser.parse_args().quick else (2_000, 15)
    try:
        import torch
        from torch.utils._python_dispatch import TorchDispatchMode
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)

    print(f"{'case':<58}{'ours':>8}{'torch':>8}")
    ours_cases = autocast_cases(tt)
    theirs_cases = autocast_cases(torch) if torch is not None else {}

    def region() -> Any:
        stack = contextlib.ExitStack()
        stack.enter_context(tt.autocast("cpu"))
        if torch is not None:
            stack.enter_context(torch.autocast("cpu"))
        return stack

    for name, fn in ours_cases.items():
        fns: list[Callable[[], Any]] = [fn]
        if torch is not None:
            fns.append(theirs_cases[name])
        # Outside and inside the region in the same rounds: a host whose speed drifts
        # between two separate measurements would skew the ratio.
        times = interleaved(
            fns * 2, number, rounds, regions=[None] * len(fns) + [region] * len(fns)
        )
        plain, inside = times[: len(fns)], times[len(fns) :]
        row = f"{name + ' under autocast / outside':<58}{inside[0] / plain[0]:>8.2f}"
        row += f"{inside[1] / plain[1]:>8.2f}" if torch is not None else f"{'-':>8}"
        print(row)
        if name == "matmul 8x8":
            autocast_floor(fn, theirs_cases.get(name), region, number, rounds)

    x = tt.ones(1)
    (plain_sin,) = interleaved([lambda: tt.sin(x)], number * 10, rounds)
    with Passthrough():
        (moded,) = interleaved([lambda: tt.sin(x)], number * 10, rounds)
    row = f"{'sin(1 elem) under a pass-through mode / plain':<58}{moded / plain_sin:>8.2f}"
    if torch is not None:
        t = torch.ones(1)
        (tplain,) = interleaved([lambda: torch.sin(t)], number * 10, rounds)

        class TorchPassthrough(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
                return func(*args, **(kwargs or {}))

        with TorchPassthrough():
            (tmoded,) = interleaved([lambda: torch.sin(t)], number * 2, rounds)
        row += f"{tmoded / tplain:>8.2f}"
    print(row)

    @dispatch.custom_op("bench_layers::ident", mutates_args=())
    def ident(x: tt.Tensor) -> tt.Tensor:
        return x

    @dispatch.custom_op("bench_layers::cloned", mutates_args=())
    def cloned(x: tt.Tensor) -> tt.Tensor:
        return x.clone()

    fns = [lambda: ident(x), lambda: cloned(x), lambda: x.clone()]
    if torch is not None:

        def body(x):  # type: ignore[no-untyped-def]
            return x.clone()

        tcustom = torch.library.custom_op(
            "bench_layers_t::cloned", body, mutates_args=(), schema="(Tensor x) -> Tensor"
        )
        fns += [lambda: tcustom(t), lambda: t.clone()]
    times = interleaved(fns, number * 10, rounds)
    print(f"\n{'custom_op call':<58}{'us':>8}{'ratio':>8}")
    if torch is not None:
        # torch's custom_op refuses a kernel that returns its input (an alias), so its
        # body clones; subtract the clone to compare the op machinery alone.
        machinery = times[3] - times[4]
        print(
            f"{'ours, kernel returns its input':<58}{times[0] * 1e6:>8.2f}{times[0] / machinery:>8.3f}"
        )
        print(
            f"{'ours, kernel x.clone(), less the clone':<58}{(times[1] - times[2]) * 1e6:>8.2f}"
            f"{(times[1] - times[2]) / machinery:>8.3f}"
        )
        print(
            f"{'torch.library.custom_op, body x.clone(), less the clone':<58}"
            f"{machinery * 1e6:>8.2f}{1.0:>8.3f}"
        )
        print(
            f"{'x.clone() (1 element), ours over torch':<58}{times[2] * 1e6:>8.2f}"
            f"{times[2] / times[4]:>8.2f}"
        )
        print("\ntargets: custom_op <= 0.1x torch's; x.clone() <= 1.0x; autocast ratios <= torch's")
    else:
        print(f"{'ours, kernel returns its input':<58}{times[0] * 1e6:>8.2f}{'-':>8}")
        print("(PyTorch not installed: no ratios)")


if __name__ == "__main__":
    main()

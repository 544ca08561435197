"""The cost of the layers above the backend, measured side by side in one process.

    python ci/bench/layers.py [--quick]

- a tiny op (``sin`` on 1 element) under ``autocast("cpu")`` and under a pass-through
  Python mode, each as a ratio to the plain call, next to PyTorch's same ratios
  (target: ours no larger);
- calling a ``custom_op`` whose kernel returns its input, as a ratio to PyTorch's
  ``torch.library.custom_op`` doing the same (target: <= 0.1).
"""

from __future__ import annotations

import argparse
import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import dispatch  # noqa: E402
import tensor as tt  # noqa: E402


def best(fn: Callable[[], Any], number: int, repeat: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


class Passthrough(dispatch.DispatchMode):
    def __dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        return func(*args, **(kwargs or {}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (CI smoke run)")
    number, repeat = (5_000, 3) if parser.parse_args().quick else (50_000, 7)

    a = tt.ones(1)
    plain = best(lambda: tt.sin(a), number, repeat)
    with tt.autocast("cpu"):
        autocast = best(lambda: tt.sin(a), number, repeat)
        autocast_mm = best(lambda: tt.mm(a.reshape(1, 1), a.reshape(1, 1)), number, repeat)
    plain_mm = best(lambda: tt.mm(a.reshape(1, 1), a.reshape(1, 1)), number, repeat)
    with Passthrough():
        moded = best(lambda: tt.sin(a), number, repeat)

    @dispatch.custom_op("bench_layers::ident", mutates_args=())
    def ident(x: tt.Tensor) -> tt.Tensor:
        return x

    ours_custom = best(lambda: ident(a), number, repeat)

    rows = [
        ("sin(1 elem) under autocast('cpu') / plain", autocast / plain, None),
        ("mm(1x1) under autocast('cpu') / plain (casts)", autocast_mm / plain_mm, None),
        ("sin(1 elem) under a pass-through mode / plain", moded / plain, None),
    ]
    custom_ratio = None
    try:
        import torch
        from torch.utils._python_dispatch import TorchDispatchMode
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
        t = torch.ones(1)
        tplain = best(lambda: torch.sin(t), number, repeat)
        with torch.autocast("cpu"):
            tauto = best(lambda: torch.sin(t), number, repeat)
            tauto_mm = best(lambda: torch.mm(t.reshape(1, 1), t.reshape(1, 1)), number, repeat)
        tplain_mm = best(lambda: torch.mm(t.reshape(1, 1), t.reshape(1, 1)), number, repeat)

        class TorchPassthrough(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
                return func(*args, **(kwargs or {}))

        with TorchPassthrough():
            tmoded = best(lambda: torch.sin(t), number // 5, repeat)
        rows = [
            (rows[0][0], rows[0][1], tauto / tplain),
            (rows[1][0], rows[1][1], tauto_mm / tplain_mm),
            (rows[2][0], rows[2][1], tmoded / tplain),
        ]

        def body(x):  # type: ignore[no-untyped-def]
            return x.clone()

        tcustom = torch.library.custom_op(
            "bench_layers_t::ident", body, mutates_args=(), schema="(Tensor x) -> Tensor"
        )
        # torch's custom_op refuses a kernel that returns its input (an alias), so its
        # kernel clones; subtract the clone to compare the op machinery alone.
        tclone = best(lambda: t.clone(), number, repeat)
        theirs_custom = best(lambda: tcustom(t), number // 5, repeat) - tclone
        custom_ratio = ours_custom / theirs_custom

    print(f"{'case':<52}{'ours':>8}{'torch':>8}")
    for name, ours, theirs in rows:
        shown = f"{theirs:>8.2f}" if theirs is not None else f"{'-':>8}"
        print(f"{name:<52}{ours:>8.2f}{shown}")
    print(f"\ncustom_op call (kernel returns its input): {ours_custom * 1e6:.2f} us", end="")
    if custom_ratio is not None:
        print(f", {custom_ratio:.3f}x torch.library.custom_op (target <= 0.1)")
    else:
        print(" (PyTorch not installed: no ratio)")


if __name__ == "__main__":
    main()

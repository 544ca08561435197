"""Dispatcher overhead, measured side by side in one process.

    python ci/bench/dispatch_overhead.py [--quick]

For an operator with one Tensor-like argument whose CPU kernel returns it:
calling the kernel directly vs through the overload and the packet; the same
with an AutogradCPU fallthrough; a CompositeImplicitAutograd operator that calls
one other operator vs two plain calls; and, where PyTorch is installed,
``torch.library`` define/impl and ``custom_op`` on the same kind of operator.
The validation table times each operator's schema checker alone beside the whole call
(Note [Validating every call]): what validating every call costs.
Figures are best-of-N per-call times; ratios are what to quote (machines are noisy).
Targets (issue 3): at most 1 us added per plain call; composite <= two plain calls.
"""

from __future__ import annotations

import argparse
import sys
import timeit
from collections.abc import Callable
from typing import Any

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))

from dispatch import DispatchKey, DispatchKeySet, Library, fallthrough_kernel, ops  # noqa: E402

CPU_BITS = DispatchKeySet(
    [DispatchKey.CPU, DispatchKey.ADInplaceOrView, DispatchKey.AutogradCPU, DispatchKey.AutocastCPU]
).bits


class FakeTensor:
    __slots__ = ("_dispatch_bits",)

    def __init__(self) -> None:
        self._dispatch_bits = CPU_BITS


def kernel(x: Any) -> Any:
    return x


def best_per_call(fn: Callable[[], Any], number: int, repeat: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (CI smoke run)")
    args = parser.parse_args()
    number, repeat = (20_000, 3) if args.quick else (200_000, 7)

    lib = Library("bench", "DEF")
    lib.define("plain(Tensor x) -> Tensor")
    lib.impl("plain", kernel, "CPU")
    lib.define("ft(Tensor x) -> Tensor")
    lib.impl("ft", kernel, "CPU")
    lib.impl("ft", fallthrough_kernel, "AutogradCPU")
    lib.define("composite(Tensor x) -> Tensor")
    plain_op = ops.bench.plain.default

    def composite(x: Any) -> Any:
        return plain_op(x)

    lib.impl("composite", composite, "CompositeImplicitAutograd")

    x = FakeTensor()
    rows: list[tuple[str, float, float]] = []
    direct = best_per_call(lambda: kernel(x), number, repeat)

    def row(name: str, fn: Callable[[], Any], base: float = direct) -> float:
        t = best_per_call(fn, number, repeat)
        rows.append((name, t, base))
        return t

    rows.append(("kernel called directly", direct, direct))
    plain = row("plain op, overload  ops.bench.plain.default(x)", lambda: plain_op(x))
    entry = plain_op.call1
    row("plain op, one-tensor entry  .call1(x) (a + b, tt.sin)", lambda: entry(x))
    packet = ops.bench.plain
    row("plain op, packet    ops.bench.plain(x)", lambda: packet(x))
    ft = ops.bench.ft.default
    row("AutogradCPU fallthrough, overload", lambda: ft(x))
    row("AutogradCPU fallthrough, packet", lambda: ops.bench.ft(x))
    comp = ops.bench.composite.default
    row("CIA op calling plain op (vs 2 plain calls)", lambda: comp(x), 2 * plain)

    # Note [Validating every call]: what the schema checker adds to a call, timed alone
    # (the call path's try block costs nothing on Python >= 3.11), beside the whole call.
    lib.define("k(Tensor x, int n=1, *, Scalar alpha=1) -> Tensor")
    lib.impl("k", lambda x, n=1, *, alpha=1: x, "CPU")
    lib.define(
        "r(Tensor x, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"
    )
    lib.impl("r", lambda x, dim=None, keepdim=False, *, dtype=None: x, "CPU")
    k_op, r_op = ops.bench.k.default, ops.bench.r.default
    k_op(x), r_op(x)  # an operator makes its checker on its first call
    k_check, r_check, p_check = k_op._check, r_op._check, plain_op._check
    checks = [
        ("f(x)", lambda: plain_op(x), lambda: p_check(x)),
        ("f(x, 2, alpha=0.5)", lambda: k_op(x, 2, alpha=0.5), lambda: k_check(x, 2, alpha=0.5)),
        ("f(x, [0, 1], True)", lambda: r_op(x, [0, 1], True), lambda: r_check(x, [0, 1], True)),
    ]
    validation = [
        (name, best_per_call(call, number, repeat), best_per_call(check, number, repeat))
        for name, call, check in checks
    ]

    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
        tlib = torch.library.Library("bench_t", "DEF")
        tlib.define("plain(Tensor x) -> Tensor")
        tlib.impl("plain", kernel, "CPU")
        t = torch.ones(1)
        top = torch.ops.bench_t.plain.default

        def body(x):  # type: ignore[no-untyped-def]
            return x.clone()

        custom = torch.library.custom_op(
            "bench_t::custom", body, mutates_args=(), schema="(Tensor x) -> Tensor"
        )

        tdirect = best_per_call(lambda: kernel(t), number, repeat)
        row("torch.library define/impl, overload (vs its kernel)", lambda: top(t), tdirect)
        tclone = best_per_call(lambda: t.clone(), number // 4, repeat)
        row("torch.library custom_op (vs its body)", lambda: custom(t), tclone)
        row("torch.add on 1 element (C++ dispatcher + kernel)", lambda: torch.add(t, t), direct)

    print(f"{'case':<54}{'per call':>12}{'added':>12}{'ratio':>9}")
    for name, t, base in rows:
        print(f"{name:<54}{t * 1e6:>10.3f}us{(t - base) * 1e6:>10.3f}us{t / base:>9.2f}")
    print(
        f"\n{'validation (checker alone, in the whole call)':<54}{'call':>12}{'checker':>12}{'share':>9}"
    )
    for name, t, c in validation:
        print(f"{'  ' + name:<54}{t * 1e6:>10.3f}us{c * 1e6:>10.3f}us{c / t:>9.2f}")
    print("  .call1(x) / .call2(x, 0.5): no checker call (a flag / one set lookup)")
    added = plain - direct
    print(f"\nadded per plain call: {added * 1e6:.3f} us (target <= 1 us)")


if __name__ == "__main__":
    main()

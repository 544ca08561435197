"""Registration lifecycles leave nothing behind (issue 9): memory measured with tracemalloc."""

from __future__ import annotations

import gc
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

from dispatch import Library, ops

from ..dispatch.test_tables import CPU_BITS, FakeTensor

CYCLES = 2000
# Bound on growth over 2,000 cycles: what a handful of interned strings and dict
# resizes cost, far below one leaked operator per cycle (~2 KB each, ~4 MB in all).
BOUND_BYTES = 64 * 1024


def cycle(ns: str, x: Any) -> None:
    lib = Library(ns, "DEF")
    lib.define("f(Tensor x, *, int n=1) -> Tensor")
    lib.impl("f", lambda x, n=1: x, "CPU")
    lib.impl("f", lambda ks, x, n=1: x, "AutogradCPU", with_keyset=True)
    fb = Library("_", "IMPL")
    fb.fallback(lambda op, *a, **k: None, "CPU")
    assert getattr(ops, ns).f(x) is x
    fb.destroy()
    lib.destroy()


def measure(names: list[str]) -> int:
    x = FakeTensor(CPU_BITS)
    for name in names[:50]:  # warm caches and interned strings first
        cycle(name, x)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for name in names[50:]:
            cycle(name, x)
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    return sum(stat.size_diff for stat in after.compare_to(before, "filename"))


def measure_in_subprocess(fresh_names: bool) -> int:
    """Measure in a new interpreter with only ``dispatch`` loaded.

    In a test worker that also imported ``tensor``, every fallback change rebuilds
    the core operators' tables, which were allocated before tracemalloc started:
    their replacements would count as growth although nothing leaks.
    """
    names = (
        f"[f'lifecycle_{{i}}' for i in range({CYCLES + 50})]"
        if fresh_names
        else f"['lifecycle_same'] * {CYCLES + 50}"
    )
    code = f"from tests.stress.test_lifecycle import measure; print(measure({names}))"
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=300
    )
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip())


def test_define_impl_destroy_cycles_same_namespace() -> None:
    growth = measure_in_subprocess(fresh_names=False)
    assert growth < BOUND_BYTES, f"grew {growth} bytes over {CYCLES} cycles"


def test_define_impl_destroy_cycles_fresh_namespaces() -> None:
    growth = measure_in_subprocess(fresh_names=True)
    assert growth < BOUND_BYTES, f"grew {growth} bytes over {CYCLES} cycles"

"""2,000 training steps free their graphs: memory growth stays under a stated bound (issue 9)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

STEPS = 2000
# Bound over 2,000 steps after warm-up: a leak of one graph node per step (~1 KB with its
# saved tensors) would be ~2 MB; interned strings and allocator noise stay far below this.
BOUND_BYTES = 64 * 1024


def train(steps: int) -> int:
    """Growth in bytes (tracemalloc) over ``steps`` steps, after 100 warm-up steps."""
    import gc
    import tracemalloc

    import tensor as tt

    gen = tt.Generator().manual_seed(0)
    x, target = tt.randn(64, generator=gen), tt.randn(64, generator=gen)
    w = tt.randn(64, generator=gen).requires_grad_()
    b = tt.zeros(64, requires_grad=True)

    def step() -> None:
        nonlocal w, b
        loss = ((tt.sin(x * w + b) - target) ** 2).mean()
        loss.backward()
        with tt.no_grad():
            w = (w - 0.1 * w.grad).requires_grad_()
            b = (b - 0.1 * b.grad).requires_grad_()

    for _ in range(100):
        step()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for _ in range(steps):
        step()
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    return sum(s.size_diff for s in after.compare_to(before, "filename"))


def test_training_steps_do_not_leak() -> None:
    # A fresh interpreter: other tests' registrations must not count as growth here.
    code = f"from tests.stress.test_training_memory import train; print(train({STEPS}))"
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=300
    )
    assert out.returncode == 0, out.stderr
    growth = int(out.stdout.strip().splitlines()[-1])
    assert growth < BOUND_BYTES, f"grew {growth} bytes over {STEPS} training steps"


def test_a_dropped_graph_is_freed_by_reference_counting_alone() -> None:
    import gc
    import weakref

    import tensor as tt

    gc.disable()
    try:
        x = tt.ones(3, requires_grad=True)
        y = tt.exp(tt.sin(x) * 2)
        node, out = weakref.ref(y.grad_fn), weakref.ref(y)
        del y  # never backpropagated: no cycle may keep the graph alive
        assert node() is None and out() is None
        z = (tt.exp(x) * 3).sum()
        node = weakref.ref(z.grad_fn)
        z.backward()
        del z
        assert node() is None
    finally:
        gc.enable()

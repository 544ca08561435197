"""Eight threads with different per-thread states give the same results as a serial run."""

from __future__ import annotations

import random
import threading
from contextlib import ExitStack
from typing import Any

import dispatch
import tensor as tt
from tensor.modes import LoggingMode

THREADS = 8
STEPS = 2000  # mixed operations per thread (x 8 threads)


def workload(seed: int) -> list[Any]:
    """A deterministic mix of operations under a per-thread state picked by ``seed``."""
    rng = random.Random(seed)
    out: list[Any] = []
    with ExitStack() as stack:
        if seed % 4 == 1:
            stack.enter_context(tt.no_grad())
        if seed % 4 == 2:
            stack.enter_context(tt.autocast("cpu"))
        if seed % 4 == 3:
            log = stack.enter_context(LoggingMode())
        gen = tt.Generator().manual_seed(seed) if hasattr(tt, "Generator") else None
        w = tt.randn(4, 4, generator=gen).requires_grad_()
        x = tt.randn(4, 4, generator=gen)
        for _ in range(STEPS):
            choice = rng.randrange(6)
            if choice == 0:
                x = tt.sin(x) + 0.5
            elif choice == 1:
                x = x * 0.9 - 0.1
            elif choice == 2:
                out.append(round(float(x.sum()), 4))
            elif choice == 3:
                x = (x @ w).detach().float() / 4
            elif choice == 4:
                y = (tt.tanh(x) * w).sum()
                out.append((y.requires_grad, str(y.dtype)))
            else:
                out.append(
                    (
                        tt.is_grad_enabled(),
                        tt.is_autocast_enabled("cpu"),
                        len(dispatch.current_modes()),
                    )
                )
        if seed % 4 == 3:
            out.append(len(log.lines))
    return out


def test_threads_match_a_serial_run() -> None:
    serial = [workload(seed) for seed in range(THREADS)]
    results: list[Any] = [None] * THREADS
    errors: list[BaseException] = []
    barrier = threading.Barrier(THREADS)

    def run(seed: int) -> None:
        try:
            barrier.wait()
            results[seed] = workload(seed)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(s,)) for s in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:1]
    for seed in range(THREADS):
        assert results[seed] == serial[seed], f"thread {seed} differs from the serial run"
    # Each thread's state stayed its own: the main thread is back at the defaults.
    assert tt.is_grad_enabled() and not tt.is_autocast_enabled("cpu")
    assert dispatch.current_modes() == ()

"""Concurrent backward passes into shared leaves (Note [Concurrent accumulation]).

Every check uses integer-valued float64 gradients, so the serial sum is exact and any lost
or doubled update shows.  The switch interval is lowered so that threads interleave inside
the accumulation; the threads start together at a barrier, and each test runs for a few
rounds (a parameter): without the locks, updates are lost in nearly every round.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import tensor as tt

THREADS = 8
STEPS = 150
ROUNDS = range(4)


@pytest.fixture(autouse=True)
def fast_switching() -> Iterator[None]:
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def run_threads(work: Callable[[int], None], n: int = THREADS) -> None:
    """Run ``work(k)`` for k < n on n threads that start together; re-raise any error."""
    start = threading.Barrier(n)
    errors: list[BaseException] = []

    def body(k: int) -> None:
        try:
            start.wait()
            work(k)
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def leaf(values: Any) -> tt.Tensor:
    return tt.tensor(values, dtype=tt.float64, requires_grad=True)


def rows(k: int) -> np.ndarray:
    """Thread k's input: a [1, 4] row of small integers."""
    return np.array([[k + 1.0, 2.0, -1.0, float(k % 3)]])


@pytest.mark.parametrize("round_", ROUNDS)
def test_concurrent_backward_into_a_shared_leaf_gives_the_serial_sum(round_: int) -> None:
    # x_k @ w: w's gradient is mm's own fresh result, so the first one is stolen and the
    # rest are added into it in place, all while other threads do the same.
    w = leaf(np.zeros((4, 3)))
    inputs = [tt.tensor(rows(k)) for k in range(THREADS)]

    def work(k: int) -> None:
        for _ in range(STEPS):
            (inputs[k] @ w).sum().backward()

    run_threads(work)
    expected = STEPS * sum(rows(k).T @ np.ones((1, 3)) for k in range(THREADS))
    assert w.grad is not None
    np.testing.assert_array_equal(w.grad.numpy(), expected)


class YieldingGrad(tt.Tensor):
    """A leaf whose ``.grad`` lets other threads run on every read and write, so that they
    run between AccumulateGrad's read of ``.grad`` and its store: exactly the window the
    lock closes (an in-place ``add_`` alone is atomic, the first store is not)."""

    @property  # type: ignore[override]
    def grad(self) -> tt.Tensor | None:
        time.sleep(0)
        return self.__dict__.get("_grad")

    @grad.setter
    def grad(self, value: tt.Tensor | None) -> None:
        time.sleep(0)
        self.__dict__["_grad"] = value


@pytest.mark.parametrize("round_", ROUNDS)
def test_no_update_is_lost_when_threads_switch_inside_the_accumulation(round_: int) -> None:
    w = tt.zeros(4, 3, dtype=tt.float64).as_subclass(YieldingGrad).requires_grad_()
    inputs = [tt.tensor(rows(k)) for k in range(THREADS)]

    def work(k: int) -> None:
        for _ in range(STEPS // 10):
            (inputs[k] @ w).sum().backward()

    run_threads(work)
    expected = STEPS // 10 * sum(rows(k).T @ np.ones((1, 3)) for k in range(THREADS))
    np.testing.assert_array_equal(w.grad.numpy(), expected)


@pytest.mark.parametrize("round_", ROUNDS)
def test_leaf_hooks_see_every_gradient_under_threads(round_: int) -> None:
    w = leaf(np.zeros(3))
    calls: list[int] = []
    w.register_hook(lambda g: calls.append(1) or g * 2)  # replaces each gradient

    def work(k: int) -> None:
        for _ in range(STEPS):
            (w * float(k + 1)).sum().backward()

    run_threads(work)
    assert len(calls) == THREADS * STEPS
    total = 2 * STEPS * sum(range(1, THREADS + 1))
    np.testing.assert_array_equal(w.grad.numpy(), np.full(3, float(total)))


@pytest.mark.parametrize("round_", range(12))  # a narrower window: more rounds
def test_retain_grad_on_a_shared_intermediate_under_threads(round_: int) -> None:
    w = leaf(np.zeros(3))
    h = w * 1.0
    h.retain_grad()

    def work(k: int) -> None:
        for _ in range(STEPS // 2):
            (h * float(k + 1)).sum().backward(retain_graph=True)

    run_threads(work)
    total = float(STEPS // 2 * sum(range(1, THREADS + 1)))
    np.testing.assert_array_equal(h.grad.numpy(), np.full(3, total))
    np.testing.assert_array_equal(w.grad.numpy(), np.full(3, total))


@pytest.mark.parametrize("round_", ROUNDS)
def test_stolen_gradients_stay_private_under_threads(round_: int) -> None:
    """Note [Stealing gradients] under concurrency: a gradient a hook kept is never made
    ``.grad`` (it would then be added into in place), whichever thread it came from."""
    w = leaf(np.zeros((4, 3)))
    inputs = [tt.tensor(rows(k)) for k in range(THREADS)]
    kept: list[tuple[int, tt.Tensor]] = []
    turn = threading.local()

    def hook(g: tt.Tensor) -> None:
        if turn.step % 3 == 0:  # keep some: those must be copied, the rest stolen
            kept.append((turn.k, g))

    w.register_hook(hook)

    def work(k: int) -> None:
        turn.k = k
        for step in range(STEPS):
            turn.step = step
            (inputs[k] @ w).sum().backward()

    run_threads(work)
    expected = STEPS * sum(rows(k).T @ np.ones((1, 3)) for k in range(THREADS))
    np.testing.assert_array_equal(w.grad.numpy(), expected)
    assert len(kept) == THREADS * len(range(0, STEPS, 3))
    for k, g in kept:
        assert g is not w.grad
        np.testing.assert_array_equal(g.numpy(), rows(k).T @ np.ones((1, 3)))


@pytest.mark.parametrize("round_", range(20))
def test_threads_building_graphs_over_one_leaf_share_its_accumulator(round_: int) -> None:
    """A leaf has one live AccumulateGrad (its lock is what serializes the threads), also
    when several threads make the first graph over it at the same moment."""
    w = leaf([1.0, 2.0])
    made = threading.Barrier(THREADS)
    nodes: list[Any] = [None] * THREADS

    def work(k: int) -> None:
        y = w * 1.0
        nodes[k] = y.grad_fn.next_functions[0][0]
        made.wait()  # keep y, and with it the accumulator, alive until all have one

    run_threads(work)
    assert all(n is nodes[0] for n in nodes)
    assert nodes[0].variable is w

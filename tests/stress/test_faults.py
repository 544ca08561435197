"""Injected kernel failures leave every piece of thread state as it was (issue 9)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest

import dispatch
import tensor as tt
from dispatch import DispatchKey, DispatchKeySet, DispatchMode, Library, ops
from tensor.modes import LoggingMode

FAULTS = 1000


class Injected(Exception):
    """The failure a kernel raises on purpose."""


class Passthrough(DispatchMode):
    def __dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        return func(*args, **(kwargs or {}))


def snapshot() -> tuple[Any, ...]:
    return (
        dispatch.tls_local_include_set(),
        dispatch.tls_local_exclude_set(),
        dispatch.current_modes(),
        tt.is_grad_enabled(),
        tt.is_inference_mode_enabled(),
        tt.is_autocast_enabled("cpu"),
        tt.get_autocast_dtype("cpu"),
    )


@pytest.fixture
def flaky() -> Iterator[tuple[Any, dict[str, str]]]:
    """faulty::f with a layer at every key a call passes; ``fail['at']`` picks the one
    that raises."""
    fail = {"at": ""}
    with Library("faulty", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        op = ops.faulty.f.default

        def maybe(where: str) -> None:
            if fail["at"] == where:
                raise Injected(where)

        def autocast(x: Any) -> Any:
            maybe("autocast")
            with dispatch.exclude_keys(DispatchKey.AutocastCPU):
                return op(x)

        def autograd(ks: DispatchKeySet, x: Any) -> Any:
            maybe("autograd")
            return op.redispatch(ks & DispatchKeySet.full_after("AutogradOther"), x)

        def cpu(x: Any) -> Any:
            maybe("cpu")
            return tt.sin(x)

        lib.impl("f", autocast, "AutocastCPU")
        lib.impl("f", autograd, "AutogradCPU", with_keyset=True)
        lib.impl("f", cpu, "CPU")
        yield op, fail


def test_thousand_injected_failures_restore_all_thread_state(
    flaky: tuple[Any, dict[str, str]],
) -> None:
    op, fail = flaky
    rng = random.Random(1234)
    baseline = snapshot()
    guards = [
        lambda: tt.no_grad(),
        lambda: tt.enable_grad(),
        lambda: tt.inference_mode(),
        lambda: tt.autocast("cpu"),
        lambda: tt.autocast("cpu", dtype=tt.float16),
        lambda: dispatch.exclude_keys(DispatchKey.AutogradCPU),
        lambda: dispatch.include_keys(DispatchKey.ADInplaceOrView),
        lambda: dispatch.exclude_keys(DispatchKey.Meta),
        lambda: Passthrough(),
        lambda: LoggingMode(),
    ]
    sites = ["autocast", "autograd", "cpu", "mode"]
    raised = 0
    for _ in range(FAULTS):
        fail["at"] = rng.choice(sites)
        chosen = rng.sample(guards, rng.randint(0, 4))
        x = tt.ones(3, requires_grad=rng.random() < 0.5)
        try:
            with ExitStack() as stack:
                for make in chosen:
                    stack.enter_context(make())
                if fail["at"] == "mode":
                    stack.enter_context(_FailingMode())
                op(x)
        except Injected as e:
            raised += 1
            # The kernel's own exception, traceback kept, with the operator named in a note.
            assert e.__traceback__ is not None
            assert any("faulty::f" in note for note in getattr(e, "__notes__", [])) or (
                fail["at"] == "mode"
            )
        assert snapshot() == baseline
    # Layers excluded by a guard do not run, so not every draw can fail; most do.
    assert raised > FAULTS // 2


class _FailingMode(DispatchMode):
    def __dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        raise Injected("mode")


def test_failure_inside_nested_generators_closed_early_restores_grad_mode() -> None:
    @tt.no_grad()
    def gen() -> Iterator[bool]:
        yield tt.is_grad_enabled()
        raise Injected("late")

    g = gen()
    assert next(g) is False  # inside the body: no grad
    assert tt.is_grad_enabled()  # suspended: the caller's mode
    g.close()
    assert tt.is_grad_enabled()
    g2 = gen()
    next(g2)
    with pytest.raises(Injected, match="late"):
        next(g2)
    assert tt.is_grad_enabled()

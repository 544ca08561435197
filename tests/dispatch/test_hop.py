"""HigherOrderOperator: key resolution, default fallthroughs, layering and modes."""

from __future__ import annotations

from typing import Any

import pytest

from dispatch import DispatchKey, DispatchMode, HigherOrderOperator, exclude_keys

from .test_modes import PY_BITS, SubA
from .test_tables import CPU_BITS, META_BITS, FakeTensor


def make() -> tuple[HigherOrderOperator, list[str]]:
    log: list[str] = []
    hop = HigherOrderOperator("apply_fn")

    @hop.py_impl(DispatchKey.AutogradCPU)
    def autograd(fn: Any, xs: Any) -> Any:
        log.append("AutogradCPU")
        with exclude_keys(DispatchKey.AutogradCPU):
            return hop(fn, xs)

    @hop.py_impl("CompositeExplicitAutograd")
    def dense(fn: Any, xs: Any) -> Any:
        log.append("CEA")
        return [fn(x) for x in xs]

    return hop, log


def test_keys_come_from_tensors_nested_in_arguments() -> None:
    hop, log = make()
    # Tensors inside a list: AutogradCPU then (below it) the CEA kernel for CPU.
    assert hop(lambda x: 1, [FakeTensor(CPU_BITS), FakeTensor(CPU_BITS)]) == [1, 1]
    assert log == ["AutogradCPU", "CEA"]


def test_default_fallthrough_keys_and_missing_kernel_error() -> None:
    hop, log = make()
    # ADInplaceOrView/BackendSelect (TLS-included) fall through by default.
    assert DispatchKey.ADInplaceOrView not in hop.non_fallthrough_keys()
    # Meta tensors: no AutogradMeta kernel, no CIA/Autograd alias -> a clear error.
    with pytest.raises(NotImplementedError, match="apply_fn at dispatch key AutogradMeta"):
        hop(lambda x: x, [FakeTensor(META_BITS)])
    hop.fallthrough("AutogradMeta")
    assert hop(lambda x: 2, [FakeTensor(META_BITS)]) == [2]
    assert log == ["CEA"]


def test_autograd_alias_and_cia() -> None:
    hop = HigherOrderOperator("cia_op")
    hop.py_impl("CompositeImplicitAutograd")(lambda x: "cia")
    assert hop(FakeTensor(META_BITS)) == "cia"  # CIA covers AutogradMeta
    hop2 = HigherOrderOperator("alias_op")
    hop2.py_impl("Autograd")(lambda x: "autograd")
    assert hop2(FakeTensor(CPU_BITS)) == "autograd"
    with pytest.raises(RuntimeError, match="already registered for Autograd"):
        hop2.py_impl("Autograd")(lambda x: x)


def test_modes_need_a_rule_or_opt_in() -> None:
    hop, log = make()

    class Plain(DispatchMode):
        def __dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            return func(*args, **(kwargs or {}))

    with Plain(), pytest.raises(NotImplementedError, match="no rule registered for"):
        hop(lambda x: x, [FakeTensor(CPU_BITS)])

    class OptIn(Plain):
        supports_higher_order_operators = True

        def __dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            log.append(f"mode saw {func.name}")
            return "handled"

    with OptIn():
        assert hop(lambda x: x, [FakeTensor(CPU_BITS)]) == "handled"

    @hop.py_impl(Plain)
    def under_plain(mode: Plain, fn: Any, xs: Any) -> Any:
        log.append("rule for Plain")
        return hop(fn, xs)  # the mode is popped: this goes below it

    with Plain():
        assert hop(lambda x: 3, [FakeTensor(CPU_BITS)]) == [3]
    assert log == [
        "AutogradCPU",  # the call that found no rule for Plain
        "AutogradCPU",
        "mode saw apply_fn",
        "AutogradCPU",
        "rule for Plain",
        "CEA",
    ]


def test_subclass_handler() -> None:
    hop, log = make()
    hop.py_impl(SubA)(lambda fn, xs: "subclass rule")
    assert hop(lambda x: x, [SubA(CPU_BITS | PY_BITS)]) == "subclass rule"
    assert log == ["AutogradCPU"]

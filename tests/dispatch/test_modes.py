"""The Python-mode layer: orderings recorded from PyTorch 2.13 (SEMANTICS.md §7)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from dispatch import (
    DispatchKey,
    DispatchKeySet,
    DispatchMode,
    Library,
    current_modes,
    ops,
    tls_local_exclude_set,
    tls_local_include_set,
    tls_set_dispatch_key_excluded,
)

from .test_tables import CPU_BITS, FakeTensor

PY_BITS = DispatchKey.Python.bit | DispatchKey.PythonTLSSnapshot.bit
log: list[str] = []


class SubA(FakeTensor):
    @classmethod
    def __dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        log.append(f"SubA{[t.__name__ for t in types]}")
        return func(*[FakeTensor(CPU_BITS) for _ in args], **(kwargs or {}))


class ChildA(SubA):
    @classmethod
    def __dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        log.append(f"ChildA{[t.__name__ for t in types]}")
        return NotImplemented


def sub(cls: type = SubA) -> Any:
    return cls(CPU_BITS | PY_BITS)


class Logging(DispatchMode):
    def __init__(self, name: str) -> None:
        self.name = name

    def __dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        log.append(self.name)
        return func(*args, **(kwargs or {}))


@pytest.fixture
def op() -> Iterator[Any]:
    """f with AutocastCPU and AutogradCPU layers (redispatching below) and a CPU kernel."""
    log.clear()
    with Library("modes", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.define("g(Tensor a, Tensor b) -> Tensor")
        f = ops.modes.f.default

        def layer(name: str, key: str) -> Any:
            def kernel(ks: DispatchKeySet, x: Any) -> Any:
                log.append(name)
                return f.redispatch(ks & DispatchKeySet.full_after(key), x)

            return kernel

        lib.impl("f", layer("AutocastCPU", "AutocastCPU"), "AutocastCPU", with_keyset=True)
        lib.impl("f", layer("AutogradCPU", "AutogradCPU"), "AutogradCPU", with_keyset=True)
        lib.impl("f", lambda x: log.append("CPU") or "cpu", "CPU")
        lib.impl("g", lambda a, b: log.append("CPU") or "cpu", "CPU")
        yield f


def test_mode_runs_after_autocast_and_autograd(op: Any) -> None:
    tls_set_dispatch_key_excluded("AutocastCPU", False)  # what autocast("cpu") does
    try:
        with Logging("mode"):
            assert op(FakeTensor(CPU_BITS)) == "cpu"
    finally:
        tls_set_dispatch_key_excluded("AutocastCPU", True)
    assert log == ["AutocastCPU", "AutogradCPU", "mode", "CPU"]


def test_nested_modes_run_innermost_first(op: Any) -> None:
    with Logging("outer"), Logging("inner"):
        op(FakeTensor(CPU_BITS))
    assert log == ["AutogradCPU", "inner", "outer", "CPU"]


def test_mode_then_subclass_then_backend(op: Any) -> None:
    with Logging("mode"):
        op(sub())
    assert log == ["AutogradCPU", "mode", "SubA['SubA']", "CPU"]


def test_subclass_before_parent_and_types_in_that_order(op: Any) -> None:
    ops.modes.g(sub(SubA), sub(ChildA))
    assert log == ["ChildA['ChildA', 'SubA']", "SubA['ChildA', 'SubA']", "CPU"]


def test_mode_returning_notimplemented_defers_to_subclass(op: Any) -> None:
    class Decline(DispatchMode):
        """Declines calls with subclass arguments, runs the rest."""

        def __dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            if types:
                log.append("decline")
                return NotImplemented
            log.append("plain")
            return func(*args, **(kwargs or {}))

    with Decline() as mode:
        op(sub())
        assert current_modes() == (mode,)  # re-pushed after declining
    # Re-pushed, the mode also sees the calls the subclass handler makes (as in PyTorch).
    assert log == ["AutogradCPU", "decline", "SubA['SubA']", "plain", "CPU"]


def test_all_handlers_notimplemented_raises_type_error(op: Any) -> None:
    with pytest.raises(TypeError, match="Multiple dispatch failed for 'modes::g'"):
        ops.modes.g(sub(ChildA), sub(ChildA))


def test_handler_sees_snapshot_with_layers_above_python_excluded(op: Any) -> None:
    seen = {}

    class Look(DispatchMode):
        def __dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            seen["excluded"] = tls_local_exclude_set()
            seen["included"] = tls_local_include_set()
            seen["modes"] = current_modes()
            return func(*args)

    with Look():
        op(FakeTensor(CPU_BITS))
    for key in ("AutogradCPU", "ADInplaceOrView", "AutocastCPU", "PythonTLSSnapshot"):
        assert key in seen["excluded"]
    # The only mode is popped while it runs, so Python is no longer included.
    assert seen["modes"] == ()
    assert DispatchKey.Python not in seen["included"]
    assert DispatchKey.Python not in tls_local_include_set()


def test_modes_toggle_python_keys_and_restore_on_error(op: Any) -> None:
    before = (tls_local_include_set(), tls_local_exclude_set())

    class Boom(DispatchMode):
        def __dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            raise ValueError("boom")

    with Boom() as mode:
        assert {DispatchKey.Python, DispatchKey.PythonTLSSnapshot} <= set(tls_local_include_set())
        with pytest.raises(ValueError, match="boom"):
            op(FakeTensor(CPU_BITS))
        assert current_modes() == (mode,)
    assert (tls_local_include_set(), tls_local_exclude_set()) == before
    assert current_modes() == ()


def test_exiting_modes_out_of_order_raises() -> None:
    a, b = Logging("a"), Logging("b")
    a.__enter__()
    b.__enter__()
    try:
        with pytest.raises(RuntimeError, match="not the innermost active mode"):
            a.__exit__(None, None, None)
    finally:
        b.__exit__(None, None, None)
        a.__exit__(None, None, None)


def test_py_impl_for_a_mode_class_replaces_its_dispatch_for_that_op(op: Any) -> None:
    class Special(Logging):
        pass

    @op.py_impl(Special)
    def f_under_special(mode: Special, x: Any) -> str:
        log.append(f"py_impl under {mode.name}")
        return "special"

    with Special("s"):
        assert op(FakeTensor(CPU_BITS)) == "special"
        assert ops.modes.g(FakeTensor(CPU_BITS), FakeTensor(CPU_BITS)) == "cpu"
    assert log == ["AutogradCPU", "py_impl under s", "s", "CPU"]


def test_py_impl_for_a_key_beats_registrations() -> None:
    with Library("modes2", "DEF") as lib:
        lib.define("h(Tensor x) -> Tensor")
        lib.impl("h", lambda x: "registered", "CPU")
        h = ops.modes2.h.default
        h.py_impl(DispatchKey.CPU)(lambda x: "py_impl")
        assert h(FakeTensor(CPU_BITS)) == "py_impl"
        assert "py_impl" in [line.split()[-1] for line in h._dump().splitlines()]


def test_mode_stack_is_per_thread(op: Any) -> None:
    other: dict[str, Any] = {}

    def worker() -> None:
        other["modes"] = current_modes()
        other["python"] = DispatchKey.Python in tls_local_include_set()

    with Logging("main"):
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert other == {"modes": (), "python": False}


# -- calls with no layer between PythonTLSSnapshot and Python ----------------------------------------
# Note [Snapshot straight to Python] (dispatch/_modes.py): such calls skip the snapshot
# bookkeeping and the redispatch; the orderings and the state handlers see are the same.
@pytest.fixture
def plain() -> Iterator[Any]:
    """h(x) with a CPU kernel only: a moded call goes from the snapshot straight to Python."""
    log.clear()
    with Library("modes_plain", "DEF") as lib:
        lib.define("h(Tensor x) -> Tensor")
        lib.impl("h", lambda x: log.append("CPU") or "cpu", "CPU")
        yield ops.modes_plain.h.default


def test_plain_call_orderings_match_the_layered_ones(plain: Any) -> None:
    with Logging("outer"), Logging("inner"):
        assert plain(FakeTensor(CPU_BITS)) == "cpu"
    assert log == ["inner", "outer", "CPU"]
    log.clear()
    with Logging("mode"):
        plain(sub())
    assert log == ["mode", "SubA['SubA']", "CPU"]


def test_plain_call_handler_state_and_restore(plain: Any) -> None:
    seen = {}

    class Look(DispatchMode):
        def __dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            seen["excluded"] = tls_local_exclude_set()
            seen["included"] = tls_local_include_set()
            seen["modes"] = current_modes()
            # A change the handler does not undo is undone when the call returns.
            tls_set_dispatch_key_excluded("Meta", True)
            return func(*args)

    before = (tls_local_include_set(), tls_local_exclude_set())
    with Look() as mode:
        inside = (tls_local_include_set(), tls_local_exclude_set())
        assert plain(FakeTensor(CPU_BITS)) == "cpu"
        assert (tls_local_include_set(), tls_local_exclude_set()) == inside
        assert current_modes() == (mode,)
    assert (tls_local_include_set(), tls_local_exclude_set()) == before
    for key in ("AutogradCPU", "ADInplaceOrView", "AutocastCPU", "PythonTLSSnapshot"):
        assert key in seen["excluded"]
    assert "Meta" not in seen["excluded"]
    assert seen["modes"] == ()
    assert DispatchKey.Python not in seen["included"]


def test_plain_call_declined_by_the_mode_goes_to_the_subclass(plain: Any) -> None:
    class Decline(DispatchMode):
        """Declines calls with subclass arguments, runs the rest."""

        def __dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            if types:
                log.append(f"decline{[t.__name__ for t in types]}")
                return NotImplemented
            log.append("plain")
            return func(*args, **(kwargs or {}))

    class DeclineAll(DispatchMode):
        def __dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            return NotImplemented

    before = (tls_local_include_set(), tls_local_exclude_set())
    with Decline() as mode:
        assert plain(sub()) == "cpu"
        assert current_modes() == (mode,)
    # The subclass handler's own call goes to the re-pushed mode.
    assert log == ["decline['SubA']", "SubA['SubA']", "plain", "CPU"]
    with DeclineAll() as mode:
        with pytest.raises(TypeError, match="Multiple dispatch failed for 'modes_plain::h'"):
            plain(FakeTensor(CPU_BITS))
        assert current_modes() == (mode,)
        assert DispatchKey.Python in tls_local_include_set()
    assert (tls_local_include_set(), tls_local_exclude_set()) == before


def test_a_kernel_registered_at_python_replaces_the_fallback(plain: Any) -> None:
    with Library("modes_plain", "IMPL") as lib:
        lib.impl("h", lambda x: log.append("Python kernel") or "python", "Python")
        with Logging("mode"):
            assert plain(FakeTensor(CPU_BITS)) == "python"
    assert log == ["Python kernel"]


def test_dispatch_trace_logs_the_hop_from_snapshot_to_python() -> None:
    program = """
        from dispatch import DispatchKey, DispatchKeySet, DispatchMode, Library, ops
        class T:
            _dispatch_bits = DispatchKeySet(DispatchKey.CPU).bits
        class Mode(DispatchMode):
            def __dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args)
        lib = Library("traced_mode", "DEF")
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: 42, "CPU")
        with Mode():
            print(ops.traced_mode.f(T()))
    """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(program)],
        capture_output=True,
        text=True,
        env={**os.environ, "DISPATCH_TRACE": "1"},
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "42"
    hops = [line.split("->")[1].split(":")[0].strip() for line in result.stderr.splitlines()]
    assert hops == ["PythonTLSSnapshot", "Python", "CPU"], result.stderr

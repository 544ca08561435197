"""``dispatch._registry``: ``bulk_registration`` leaves exactly the tables immediate rebuilds do.

Note [Bulk registration]: inside the block registrations only mark operators; each is
rebuilt once when the block ends.  These tests run the same registrations with and
without the block and compare every table, and pin down when the tables change.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from dispatch import (
    Library,
    bulk_registration,
    dump_table,
    fallthrough_kernel,
)
from dispatch._operator import FALLBACKS, OPERATORS, lookup

from .conftest import FakeTensor, table_row, unique_namespace


def cpu_kernel(x: Any) -> str:
    return "cpu"


def cpu_override(x: Any) -> str:
    return "cpu override"


def meta_kernel(x: Any) -> str:
    return "meta"


def explicit_kernel(x: Any) -> str:
    return "explicit"


def implicit_kernel(x: Any) -> str:
    return "implicit"


def autograd_kernel(keyset: Any, x: Any) -> str:
    return "autograd"


def fallback_kernel(op: Any, *args: Any, **kwargs: Any) -> str:
    return "fallback"


def _register(ns: str, libs: list[Library]) -> None:
    """Definitions, kernels at runtime and alias keys, a fallthrough, an override undone,
    an operator defined and destroyed again, and a backend fallback."""
    lib = Library(ns, "DEF")
    libs.append(lib)
    lib.define("f(Tensor x) -> Tensor")
    lib.define("g.Tensor(Tensor self, Tensor other) -> Tensor")
    lib.define("g.Scalar(Tensor self, Scalar other) -> Tensor")
    lib.define("h(Tensor[] xs, *, int n=0) -> Tensor")
    lib.impl("f", cpu_kernel, "CPU")
    lib.impl("f", meta_kernel, "Meta")
    lib.impl("f", fallthrough_kernel, "AutogradCPU")
    lib.impl("g.Tensor", explicit_kernel, "CompositeExplicitAutograd")
    lib.impl("g.Scalar", implicit_kernel, "CompositeImplicitAutograd")
    lib.impl("g.Scalar", autograd_kernel, "Autograd", with_keyset=True)
    lib.impl("h", implicit_kernel)
    override = Library(ns, "IMPL")
    override.impl("f", cpu_override, "CPU", allow_override=True)
    override.destroy()
    fragment = Library(ns, "FRAGMENT")
    fragment.define("gone(Tensor x) -> Tensor")
    fragment.impl("gone", cpu_kernel, "CPU")
    fragment.destroy()
    fallback = Library("_", "IMPL")
    libs.append(fallback)
    fallback.fallback(fallback_kernel, "PrivateUse1")


def _tables(ns: str) -> dict[str, str]:
    """Every operator's dump_table in ``ns``, with the namespace spelled ``NS``."""
    return {
        name.replace(ns, "NS"): dump_table(name).replace(ns, "NS")
        for name, op in sorted(OPERATORS.items())
        if name.startswith(f"{ns}::") and op.is_defined
    }


@contextlib.contextmanager
def _registered(bulk: bool) -> Iterator[str]:
    ns = unique_namespace("adbulk")
    libs: list[Library] = []
    try:
        with bulk_registration() if bulk else contextlib.nullcontext():
            _register(ns, libs)
        yield ns
    finally:
        for lib in reversed(libs):
            lib.destroy()


def test_bulk_registration_leaves_the_tables_immediate_rebuilds_leave() -> None:
    with _registered(bulk=False) as ns:
        immediate = _tables(ns)
    with _registered(bulk=True) as ns:
        bulk = _tables(ns)
    assert set(immediate) == {"NS::f", "NS::g.Tensor", "NS::g.Scalar", "NS::h"}
    assert bulk == immediate


def test_bulk_registration_leaves_every_table_as_a_fresh_rebuild() -> None:
    with _registered(bulk=True) as ns:
        for name in _tables(ns):
            op = lookup(name.replace("NS", ns))
            state = op._state
            before = (op._dump(), state.mask, state.with_keyset, state.grad_mask)
            op._rebuild(FALLBACKS)
            state = op._state
            assert (op._dump(), state.mask, state.with_keyset, state.grad_mask) == before


def test_tables_change_when_the_outermost_block_ends(ns: str, cpu: FakeTensor) -> None:
    with Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        op = lookup(f"{ns}::f")
        with bulk_registration():
            lib.impl("f", cpu_kernel, "CPU")
            with bulk_registration():
                lib.impl("f", meta_kernel, "Meta")
            # Registered (dump_table lists it), but the inner block's end rebuilt nothing.
            assert "cpu_kernel (" in dump_table(op)
            assert table_row(op, "CPU")[1] == "missing"
            with pytest.raises(NotImplementedError):
                op(cpu)
        assert table_row(op, "CPU") == (f"{__name__}.cpu_kernel", "direct")
        assert table_row(op, "Meta") == (f"{__name__}.meta_kernel", "direct")
        assert op(cpu) == "cpu"


def test_tables_are_rebuilt_when_the_block_raises(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        with pytest.raises(ValueError, match="boom"), bulk_registration():
            lib.impl("f", cpu_kernel, "CPU")
            raise ValueError("boom")
        assert table_row(lookup(f"{ns}::f"), "CPU")[1] == "direct"


def test_a_fallback_in_the_block_reaches_operators_it_did_not_touch(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        fallback = Library("_", "IMPL")
        try:
            with bulk_registration():
                fallback.fallback(fallback_kernel, "PrivateUse1")
            assert table_row(lookup(f"{ns}::f"), "PrivateUse1")[1] == "backend fallback"
        finally:
            fallback.destroy()
        assert table_row(lookup(f"{ns}::f"), "PrivateUse1")[1] == "missing"


def test_other_threads_registrations_take_effect_at_once(ns: str, cpu: FakeTensor) -> None:
    """The deferral is the block's thread's own (and the block holds no lock meanwhile)."""
    with Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.define("g(Tensor x) -> Tensor")
        f, g = lookup(f"{ns}::f"), lookup(f"{ns}::g")
        seen: list[str] = []

        def register_and_call_g() -> None:
            lib.impl("g", cpu_kernel, "CPU")
            seen.append(g(cpu))

        with bulk_registration():
            lib.impl("f", cpu_kernel, "CPU")
            thread = threading.Thread(target=register_and_call_g)
            thread.start()
            thread.join(10)
            assert seen == ["cpu"]
            assert table_row(f, "CPU")[1] == "missing"  # this thread's: at the block's end
        assert f(cpu) == "cpu"


def test_destroy_inside_the_block_restores_the_table(ns: str, cpu: FakeTensor) -> None:
    with Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        with bulk_registration():
            extra = Library(ns, "IMPL")
            extra.impl("f", cpu_kernel, "CPU")
            extra.destroy()
        assert table_row(lookup(f"{ns}::f"), "CPU")[1] == "missing"
        with pytest.raises(NotImplementedError):
            lookup(f"{ns}::f")(cpu)

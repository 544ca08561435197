"""``dispatch._library``: Library kinds, define/impl/fallback, lifetimes and the free functions.

Messages follow SEMANTICS.md §9 (PyTorch 2.13), except where API.md asks for
arraydispatch's own behaviour (a duplicate kernel raises by default and names the
first registration's file:line).
"""

from __future__ import annotations

import gc
import sys
import weakref
from typing import Any

import pytest

import dispatch
from dispatch import (
    DispatchKey,
    DispatchKeySet,
    Library,
    OpOverload,
    define,
    fallthrough_kernel,
    impl,
    ops,
    scoped_library,
)
from dispatch._operator import lookup

from .conftest import FakeTensor, Registration, table_row, unique_namespace

K = DispatchKey


def _next_line() -> str:
    """``file:line`` of the line after the caller's, spelled as registrations record it."""
    frame = sys._getframe(1)
    return f"{frame.f_code.co_filename}:{frame.f_lineno + 1}"


def _op(ns: str, name: str = "f", overload: str = "default") -> OpOverload:
    """The defined operator, looked up without touching (and caching in) ``ops``."""
    return lookup(f"{ns}::{name}.{overload}")


def _const(value: Any) -> Any:
    def kernel(*args: Any, **kwargs: Any) -> Any:
        return value

    return kernel


# -- kinds and namespaces ----------------------------------------------------------------------------
def test_unsupported_kind(ns: str) -> None:
    with pytest.raises(ValueError, match="Unsupported kind: XYZ"):
        Library(ns, "XYZ")


@pytest.mark.parametrize("kind", ["DEF", "FRAGMENT"])
def test_prim_is_reserved_for_definitions(kind: str) -> None:
    with pytest.raises(ValueError, match="prim is a reserved namespace"):
        Library("prim", kind)


def test_prim_impl_library_is_allowed() -> None:
    lib = Library("prim", "IMPL")
    try:
        assert lib.is_alive and lib.kind == "IMPL" and lib.ns == "prim"
    finally:
        lib.destroy()
    assert not lib.is_alive


def test_second_def_library_names_both_locations(ns: str) -> None:
    first_at = _next_line()
    first = Library(ns, "DEF")
    try:
        with pytest.raises(RuntimeError, match="Only a single") as info:
            second_at = _next_line()
            Library(ns, "DEF")
        message = str(info.value)
        assert ns in message
        assert f"registered at {first_at}" in message
        assert f"latest registration was registered at {second_at}" in message
    finally:
        first.destroy()
    again = Library(ns, "DEF")  # allowed once the first is gone
    again.destroy()


def test_second_def_library_allowed_after_the_first_is_destroyed(ns: str) -> None:
    with Library(ns, "DEF") as first:
        first.define("f(Tensor x) -> Tensor")
    with Library(ns, "DEF") as second:
        # The first library's definition is gone, so the name is free again.
        assert second.define("f(Tensor x) -> Tensor") == "f"


def test_fragment_can_add_definitions(reg: Registration, cpu: FakeTensor) -> None:
    reg.lib.define("f(Tensor x) -> Tensor")
    frag = reg.extra("FRAGMENT")
    assert frag.define("g(Tensor x) -> Tensor") == "g"
    frag2 = reg.extra("FRAGMENT")  # any number of fragments may live at once
    frag2.impl("g", _const("g-cpu"), "CPU")
    assert _op(reg.ns, "g")(cpu) == "g-cpu"
    frag.destroy()
    with pytest.raises(AttributeError):
        _ = getattr(ops, reg.ns).g


def test_fragment_without_a_def_library(ns: str) -> None:
    with scoped_library(ns, "FRAGMENT") as frag:
        assert frag.define("f(Tensor x) -> Tensor") == "f"
        assert _op(ns).name == f"{ns}::f"


def test_define_twice_names_the_original_registration(reg: Registration) -> None:
    first_at = _next_line()
    reg.lib.define("f(Tensor x) -> Tensor")
    frag = reg.extra("FRAGMENT")
    with pytest.raises(RuntimeError, match="same name and overload name multiple times") as info:
        frag.define("f(Tensor y) -> Tensor")
    message = str(info.value)
    assert f"Original registration: registered at {first_at}" in message
    assert f"{reg.ns}::f(Tensor y) -> Tensor" in message
    with pytest.raises(RuntimeError, match="Original registration"):
        reg.lib.define("f(Tensor x) -> Tensor")


def test_define_returns_the_name(lib: Library) -> None:
    assert lib.define("f(Tensor x) -> Tensor") == "f"
    assert lib.define("g.Tensor(Tensor self, Tensor other) -> Tensor") == "g.Tensor"
    assert lib.define(f"{lib.ns}::h(Tensor x) -> Tensor") == "h"


def test_define_with_another_namespace_prefix_raises(lib: Library, ns: str) -> None:
    with pytest.raises(ValueError, match=ns):
        lib.define(f"{ns}::f(Tensor x) -> Tensor")
    assert not hasattr(getattr(ops, ns), "f")
    assert not hasattr(getattr(ops, lib.ns), "f")


def test_impl_library_cannot_define(reg: Registration) -> None:
    impl_lib = reg.extra("IMPL")
    with pytest.raises(RuntimeError, match="IMPL"):
        impl_lib.define("f(Tensor x) -> Tensor")


def test_define_tags(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor", tags=("pointwise", "core"))
    lib.define("g(Tensor x) -> Tensor", tags="pointwise")
    assert _op(lib.ns).tags == ("pointwise", "core")
    assert _op(lib.ns, "g").tags == ("pointwise",)


# -- kernels ------------------------------------------------------------------------------------------
def test_duplicate_kernel_names_the_first_registration(reg: Registration, cpu: FakeTensor) -> None:
    reg.lib.define("f(Tensor x) -> Tensor")
    first_at = _next_line()
    reg.lib.impl("f", _const("first"), "CPU")
    with pytest.raises(RuntimeError) as info:
        reg.lib.impl("f", _const("second"), "CPU")
    assert first_at in str(info.value)
    assert f"{reg.ns}::f" in str(info.value)
    other = reg.extra("IMPL")
    with pytest.raises(RuntimeError) as info:
        other.impl("f", _const("third"), "CPU")
    assert first_at in str(info.value)
    assert _op(reg.ns)(cpu) == "first"


def test_allow_override_replaces_and_destroy_restores(reg: Registration, cpu: FakeTensor) -> None:
    reg.lib.define("f(Tensor x) -> Tensor")
    reg.lib.impl("f", _const("old"), "CPU")
    op = _op(reg.ns)
    assert op(cpu) == "old"
    overriding = reg.extra("IMPL")
    overriding.impl("f", _const("new"), "CPU", allow_override=True)
    assert op(cpu) == "new"
    overriding.destroy()
    assert op(cpu) == "old"


def test_override_stack_pops_in_any_order(reg: Registration, cpu: FakeTensor) -> None:
    reg.lib.define("f(Tensor x) -> Tensor")
    reg.lib.impl("f", _const("a"), "CPU")
    b = reg.extra("IMPL")
    b.impl("f", _const("b"), "CPU", allow_override=True)
    c = reg.extra("IMPL")
    c.impl("f", _const("c"), "CPU", allow_override=True)
    op = _op(reg.ns)
    assert op(cpu) == "c"
    b.destroy()  # a shadowed registration goes; the active one stays
    assert op(cpu) == "c"
    c.destroy()
    assert op(cpu) == "a"


def test_non_callable_kernel(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    with pytest.raises(TypeError, match="Input function is required to be a callable"):
        lib.impl("f", 3, "CPU")  # type: ignore[arg-type]


def test_bad_key_string(lib: Library, ns: str) -> None:
    lib.define("f(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match="could not parse dispatch key"):
        lib.impl("f", _const(1), "NotAKey")
    with pytest.raises(RuntimeError, match="could not parse dispatch key"):
        Library(ns, "IMPL", "NotAKey")


def test_impl_with_no_key_registers_at_composite_implicit_autograd(
    lib: Library, cpu: FakeTensor, meta: FakeTensor
) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", _const("cia"))
    op = _op(lib.ns)
    assert table_row(op, "CPU")[1] == "CompositeImplicitAutograd"
    assert table_row(op, "AutogradCPU")[1] == "CompositeImplicitAutograd"
    assert op(cpu) == "cia"
    assert op(meta) == "cia"
    assert op.redispatch(DispatchKeySet(), cpu) == "cia"


def test_library_dispatch_key_is_the_default_key(
    reg: Registration, cpu: FakeTensor, meta: FakeTensor
) -> None:
    reg.lib.define("f(Tensor x) -> Tensor")
    cpu_lib = reg.extra("IMPL", "CPU")
    cpu_lib.impl("f", _const("cpu"))
    op = _op(reg.ns)
    assert table_row(op, "CPU")[1] == "direct"
    assert op(cpu) == "cpu"
    with pytest.raises(NotImplementedError, match="Meta"):
        op(meta)
    # An explicit key still wins over the library's.
    cpu_lib.impl("f", _const("meta"), "Meta")
    assert op(meta) == "meta"


def test_impl_for_another_namespace_raises(reg: Registration, ns: str) -> None:
    reg.lib.define("f(Tensor x) -> Tensor")
    with pytest.raises(ValueError, match=reg.ns):
        Library(ns, "IMPL").impl(f"{reg.ns}::f", _const(1), "CPU")
    with pytest.raises(ValueError, match="namespace"):
        reg.lib.impl(f"{ns}::f", _const(1), "CPU")


def test_impl_accepts_an_op_handle_and_qualified_name(reg: Registration, cpu: FakeTensor) -> None:
    reg.lib.define("f(Tensor x) -> Tensor")
    reg.lib.define("g.out(Tensor x) -> Tensor")
    reg.lib.impl(_op(reg.ns), _const("f"), "CPU")
    reg.lib.impl(f"{reg.ns}::g.out", _const("g"), "CPU")
    assert _op(reg.ns)(cpu) == "f"
    assert _op(reg.ns, "g", "out")(cpu) == "g"


def test_dangling_impl_works_once_defined(reg: Registration, cpu: FakeTensor) -> None:
    impl_lib = reg.extra("IMPL")
    impl_lib.impl("later", _const("later-cpu"), "CPU")  # accepted silently
    assert not hasattr(getattr(ops, reg.ns), "later")
    reg.lib.define("later(Tensor x) -> Tensor")
    assert _op(reg.ns, "later")(cpu) == "later-cpu"


def test_impl_on_a_destroyed_library_raises(reg: Registration) -> None:
    reg.lib.define("f(Tensor x) -> Tensor")
    impl_lib = reg.extra("IMPL")
    impl_lib.destroy()
    with pytest.raises(RuntimeError, match="destroyed"):
        impl_lib.impl("f", _const(1), "CPU")


# -- lifetimes ------------------------------------------------------------------------------------
def test_destroy_removes_definitions(ns: str, cpu: FakeTensor) -> None:
    lib = Library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", _const(1), "CPU")
    handle = _op(ns)
    lib.destroy()
    assert not lib.is_alive
    with pytest.raises(AttributeError):
        _ = getattr(ops, ns).f
    with pytest.raises(RuntimeError, match="not defined"):
        handle(cpu)
    lib.destroy()  # a second destroy is harmless


def test_destroy_removes_a_packet_already_looked_up(ns: str, cpu: FakeTensor) -> None:
    lib = Library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", _const(1), "CPU")
    assert getattr(ops, ns).f(cpu) == 1  # caches ops.<ns>.f
    lib.destroy()
    with pytest.raises(AttributeError):
        _ = getattr(ops, ns).f


def test_redefine_after_destroy_uses_the_new_schema(ns: str, cpu: FakeTensor) -> None:
    with Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", _const("old"), "CPU")
        assert getattr(ops, ns).f(cpu) == "old"
    with Library(ns, "DEF") as lib:
        lib.define("f(Tensor x, int n) -> Tensor")
        lib.impl("f", lambda x, n: ("new", n), "CPU")
        assert getattr(ops, ns).f(cpu, 2) == ("new", 2)
        assert str(_op(ns).schema) == f"{ns}::f(Tensor x, int n) -> Tensor"


def test_dropped_def_library_is_destroyed_by_gc(ns: str) -> None:
    lib = Library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    ref = weakref.ref(lib)
    del lib
    gc.collect()
    assert ref() is None
    assert not hasattr(getattr(ops, ns), "f")
    Library(ns, "DEF").destroy()  # the namespace is free again


def test_dropped_library_kernel_is_removed_by_gc(reg: Registration, cpu: FakeTensor) -> None:
    reg.lib.define("f(Tensor x) -> Tensor")
    op = _op(reg.ns)
    dropped = Library(reg.ns, "IMPL")
    dropped.impl("f", _const("dropped"), "CPU")
    assert op(cpu) == "dropped"
    ref = weakref.ref(dropped)
    del dropped
    gc.collect()
    try:
        assert ref() is None
        with pytest.raises(NotImplementedError):
            op(cpu)
    finally:
        leaked = ref()
        if leaked is not None:
            leaked.destroy()


def test_library_as_context_manager(ns: str, cpu: FakeTensor) -> None:
    with Library(ns, "DEF") as lib:
        assert isinstance(lib, Library)
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", _const(7), "CPU")
        handle = _op(ns)
        assert handle(cpu) == 7
    assert not lib.is_alive
    with pytest.raises(RuntimeError, match="not defined"):
        handle(cpu)


def test_scoped_library_destroys_even_on_error(ns: str) -> None:
    class Boom(Exception):
        pass

    with pytest.raises(Boom), scoped_library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        assert lib.is_alive
        raise Boom
    assert not lib.is_alive
    assert not hasattr(getattr(ops, ns), "f")
    Library(ns, "DEF").destroy()  # the DEF slot was released


def test_destroy_undoes_only_its_own_registrations(reg: Registration, cpu: FakeTensor) -> None:
    reg.lib.define("f(Tensor x) -> Tensor")
    reg.lib.impl("f", _const("cpu"), "CPU")
    meta_lib = reg.extra("IMPL")
    meta_lib.impl("f", _const("meta"), "Meta")
    meta_lib.destroy()
    assert _op(reg.ns)(cpu) == "cpu"
    assert table_row(_op(reg.ns), "Meta")[1] == "backend fallback"


# -- backend fallbacks ------------------------------------------------------------------------------
def test_fallback_needs_the_wildcard_impl_library(reg: Registration) -> None:
    with pytest.raises(RuntimeError, match='global namespace "_"'):
        reg.lib.fallback(_const(1), "CPU")
    with pytest.raises(RuntimeError, match='global namespace "_"'):
        reg.extra("IMPL").fallback(_const(1), "CPU")


@pytest.mark.parametrize("kind", ["DEF", "FRAGMENT"])
def test_wildcard_namespace_is_impl_only(kind: str) -> None:
    with pytest.raises((ValueError, RuntimeError), match="wildcard namespace _"):
        Library("_", kind)


def test_wildcard_library_cannot_impl(fallback_lib: Library) -> None:
    with pytest.raises(RuntimeError, match="fallback"):
        fallback_lib.impl("f", _const(1), "CPU")


@pytest.mark.parametrize(
    "key",
    ["Meta", "AutogradCPU", "AutogradOther", "ADInplaceOrView", "BackendSelect", "AutocastCPU"],
)
def test_duplicate_fallback_at_a_key_with_a_default_one(fallback_lib: Library, key: str) -> None:
    with pytest.raises(RuntimeError, match="multiple backend fallbacks") as info:
        fallback_lib.fallback(_const(1), key)
    assert key in str(info.value)
    assert __file__ in str(info.value)  # the new registration's location


def test_fallback_at_an_alias_covering_a_default_one(fallback_lib: Library) -> None:
    with pytest.raises(RuntimeError, match="multiple backend fallbacks"):
        fallback_lib.fallback(_const(1), "Autograd")


def test_cpu_fallback_fills_missing_cpu_slots_and_goes_on_destroy(
    reg: Registration, cpu: FakeTensor
) -> None:
    reg.lib.define("f(Tensor x) -> Tensor")
    reg.lib.define("g(Tensor x) -> Tensor")
    reg.lib.impl("g", _const("g-cpu"), "CPU")
    f, g = _op(reg.ns), _op(reg.ns, "g")
    with pytest.raises(NotImplementedError, match="'CPU'"):
        f(cpu)
    fb = Library("_", "IMPL")
    try:
        fb.fallback(lambda op, *args, **kwargs: ("fallback", op.name), "CPU")
        assert f(cpu) == ("fallback", f"{reg.ns}::f")
        assert g(cpu) == "g-cpu"  # a direct kernel beats the fallback
        assert table_row(f, "CPU")[1] == "backend fallback"
        # Operators defined while the fallback lives get it too.
        reg.lib.define("h(Tensor x) -> Tensor")
        assert _op(reg.ns, "h")(cpu) == ("fallback", f"{reg.ns}::h")
    finally:
        fb.destroy()
    with pytest.raises(NotImplementedError, match="'CPU'"):
        f(cpu)
    assert table_row(f, "CPU")[1] == "missing"


def test_fallback_calling_convention(
    reg: Registration, fallback_lib: Library, cpu: FakeTensor
) -> None:
    reg.lib.define("f(Tensor x, *, int n=0) -> Tensor")
    calls: list[tuple[Any, ...]] = []
    fallback_lib.fallback(lambda *args, **kwargs: calls.append((args, kwargs)) or "plain", "CPU")
    op = _op(reg.ns)
    assert op(cpu, n=2) == "plain"
    assert calls == [((op, cpu), {"n": 2})]
    assert calls[0][0][0] is op


def test_fallback_with_keyset_calling_convention(
    reg: Registration, fallback_lib: Library, cpu: FakeTensor
) -> None:
    reg.lib.define("f(Tensor x) -> Tensor")
    calls: list[tuple[Any, ...]] = []
    fallback_lib.fallback(
        lambda *args, **kwargs: calls.append(args) or "keyset", "CPU", with_keyset=True
    )
    op = _op(reg.ns)
    assert op(cpu) == "keyset"
    ((keyset, got_op, x),) = calls
    assert keyset == DispatchKeySet(K.CPU)
    assert got_op is op
    assert x is cpu


def test_fallback_override_and_restore(reg: Registration, meta: FakeTensor) -> None:
    reg.lib.define("f(Tensor x) -> Tensor")
    op = _op(reg.ns)
    fb = Library("_", "IMPL")
    try:
        fb.fallback(lambda op, x: "my meta", "Meta", allow_override=True)
        assert op(meta) == "my meta"
    finally:
        fb.destroy()
    with pytest.raises(NotImplementedError, match="attempted to run this operator with Meta"):
        op(meta)


# -- free functions -----------------------------------------------------------------------------------
def test_free_define_returns_an_op_overload(reg: Registration, cpu: FakeTensor) -> None:
    op = define(f"{reg.ns}::f", "(Tensor x) -> Tensor", lib=reg.lib, tags=("pointwise",))
    assert isinstance(op, OpOverload)
    assert op is _op(reg.ns)
    assert str(op.schema) == f"{reg.ns}::f(Tensor x) -> Tensor"
    assert op.tags == ("pointwise",)
    reg.lib.destroy()
    assert not op.is_defined


def test_free_define_without_a_library(cpu: FakeTensor) -> None:
    ns = unique_namespace()
    try:
        op = define(f"{ns}::f", "(Tensor x) -> Tensor")
        assert isinstance(op, OpOverload)
        assert op is _op(ns)
        impl(f"{ns}::f", "cpu", _const("kept"))
        assert op(cpu) == "kept"
    finally:
        keeper = dispatch._library._KEEP_ALIVE.pop(ns, None)
        if keeper is not None:
            keeper.destroy()


def test_free_define_rejects_a_named_schema(reg: Registration) -> None:
    with pytest.raises(ValueError, match="must start with"):
        define(f"{reg.ns}::f", "f(Tensor x) -> Tensor", lib=reg.lib)
    with pytest.raises(ValueError, match="qualified operator name"):
        define("f", "(Tensor x) -> Tensor", lib=reg.lib)


def test_free_impl_as_a_decorator_returns_the_function(reg: Registration, cpu: FakeTensor) -> None:
    op = define(f"{reg.ns}::f", "(Tensor x) -> Tensor", lib=reg.lib)

    @impl(f"{reg.ns}::f", "cpu", lib=reg.lib)
    def f_cpu(x: Any) -> str:
        return "decorated"

    assert f_cpu(None) == "decorated"  # still the plain function
    assert op(cpu) == "decorated"


def test_free_impl_with_a_function_returns_it(reg: Registration, cpu: FakeTensor) -> None:
    op = define(f"{reg.ns}::f", "(Tensor x) -> Tensor", lib=reg.lib)
    fn = _const("direct")
    assert impl(op, "cpu", fn, lib=reg.lib) is fn
    assert op(cpu) == "direct"


@pytest.mark.parametrize(
    ("types", "expected"),
    [
        ("cpu", {"CPU"}),
        ("cuda", {"CUDA"}),
        ("meta", {"Meta"}),
        ("default", {"CompositeExplicitAutograd"}),
        ("AutogradCPU", {"AutogradCPU"}),
        ("CompositeImplicitAutograd", {"CompositeImplicitAutograd"}),
        (["cpu", "meta"], {"CPU", "Meta"}),
        (("cuda", "Autograd"), {"CUDA", "Autograd"}),
    ],
)
def test_free_impl_types_map_to_keys(reg: Registration, types: Any, expected: set[str]) -> None:
    op = define(f"{reg.ns}::f", "(Tensor x) -> Tensor", lib=reg.lib)
    impl(op, types, _const(1), lib=reg.lib)
    registered = {
        line.split()[2].rstrip(":")
        for line in dispatch.dump_table(op).splitlines()
        if line.lstrip().startswith("registered at ")
    }
    assert registered == expected


def test_free_impl_types_dispatch(
    reg: Registration, cpu: FakeTensor, meta: FakeTensor, cuda: FakeTensor
) -> None:
    op = define(f"{reg.ns}::f", "(Tensor x) -> Tensor", lib=reg.lib)
    impl(op, ["cpu", "meta"], _const("cpu/meta"), lib=reg.lib)
    impl(op, "cuda", _const("cuda"), lib=reg.lib)
    impl(op, "default", _const("default"), lib=reg.lib)
    assert op(cpu) == "cpu/meta"
    assert op(meta) == "cpu/meta"
    assert op(cuda) == "cuda"
    assert op.redispatch(DispatchKeySet(), cpu) == "default"  # Undefined slot: CEA
    assert table_row(op, "Undefined")[1] == "CompositeExplicitAutograd"
    assert table_row(op, "PrivateUse1")[1] == "CompositeExplicitAutograd"


def test_free_impl_with_an_unknown_type(reg: Registration) -> None:
    define(f"{reg.ns}::f", "(Tensor x) -> Tensor", lib=reg.lib)
    with pytest.raises(RuntimeError, match="could not parse dispatch key"):
        impl(f"{reg.ns}::f", "gpu", _const(1), lib=reg.lib)


def test_fallthrough_registration_skips_the_key(reg: Registration, cpu: FakeTensor) -> None:
    reg.lib.define("f(Tensor x) -> Tensor")
    reg.lib.impl("f", _const("cpu"), "CPU")
    reg.lib.impl("f", _const("autograd"), "AutogradCPU")
    op = _op(reg.ns)
    assert op(cpu) == "autograd"
    override = reg.extra("IMPL")
    override.impl("f", fallthrough_kernel, "AutogradCPU", allow_override=True)
    assert op(cpu) == "cpu"
    assert table_row(op, "AutogradCPU") == ("fallthrough", "direct")
    override.destroy()
    assert op(cpu) == "autograd"


def test_scoped_library_records_the_callers_location(ns: str) -> None:
    first_at = _next_line()
    with scoped_library(ns, "DEF"), pytest.raises(RuntimeError, match="Only a single") as info:
        Library(ns, "DEF")
    assert f"Previous registration of the DEF library was registered at {first_at}" in str(
        info.value
    )


def test_free_impl_records_the_callers_location(reg: Registration) -> None:
    op = define(f"{reg.ns}::f", "(Tensor x) -> Tensor", lib=reg.lib)
    first_at = _next_line()
    impl(op, "cpu", _const(1), lib=reg.lib)
    with pytest.raises(RuntimeError) as info:
        impl(op, "cpu", _const(2), lib=reg.lib)
    assert first_at in str(info.value)


def test_fallback_cannot_go_to_undefined(fallback_lib: Library) -> None:
    with pytest.raises(RuntimeError, match="Undefined"):
        fallback_lib.fallback(_const(1), "Undefined")


def test_kernel_cannot_go_to_undefined(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    try:
        with pytest.raises(RuntimeError, match="Undefined"):
            lib.impl("f", _const(1), "Undefined")
    finally:
        assert "registered at CompositeImplicitAutograd" not in dispatch.dump_table(_op(lib.ns))


def test_impl_accepts_the_default_overload_suffix(lib: Library, cpu: FakeTensor) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f.default", _const("cpu"), "CPU")
    assert _op(lib.ns)(cpu) == "cpu"


def test_dropped_fallback_library_is_removed_by_gc(reg: Registration, cpu: FakeTensor) -> None:
    reg.lib.define("f(Tensor x) -> Tensor")
    op = _op(reg.ns)
    dropped = Library("_", "IMPL")
    dropped.fallback(lambda op, x: "dropped", "CPU")
    assert op(cpu) == "dropped"
    ref = weakref.ref(dropped)
    del dropped
    gc.collect()
    try:
        assert ref() is None
        with pytest.raises(NotImplementedError):
            op(cpu)
    finally:
        leaked = ref()
        if leaked is not None:
            leaked.destroy()


def test_malformed_schema_registers_nothing(lib: Library) -> None:
    with pytest.raises(RuntimeError, match="expected"):
        lib.define("f(Tensor x -> Tensor")
    assert not hasattr(getattr(ops, lib.ns), "f")
    assert lib.define("f(Tensor x) -> Tensor") == "f"


def test_invalid_alias_analysis(lib: Library) -> None:
    with pytest.raises(RuntimeError, match="Invalid alias_analysis"):
        lib.define("f(Tensor x) -> Tensor", alias_analysis="BAD")
    assert lib.define("f(Tensor x) -> Tensor", alias_analysis="FROM_SCHEMA") == "f"

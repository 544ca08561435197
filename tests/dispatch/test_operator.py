"""``dispatch._operator``: OpOverload / OpOverloadPacket, the call path, redispatch, errors.

Expected outcomes are PyTorch 2.13's (SEMANTICS.md §3, §5, §6, §9), written in.
"""

from __future__ import annotations

import pickle
import threading
from typing import Any

import pytest

from dispatch import (
    REQUIRES_GRAD_BIT,
    DispatchKey,
    DispatchKeySet,
    FunctionSchema,
    Library,
    OpOverload,
    OpOverloadPacket,
    SchemaBindError,
    _tls,
    dump_table,
    exclude_keys,
    explain,
    fallthrough_kernel,
    include_keys,
    ops,
    tls_local_exclude_set,
    tls_local_include_set,
)

from .conftest import CPU_BITS, FakeTensor, Registration

K = DispatchKey


def _ns(lib: Library) -> Any:
    return getattr(ops, lib.ns)


def _const(value: Any) -> Any:
    def kernel(*args: Any, **kwargs: Any) -> Any:
        return value

    return kernel


def _recorder(log: list[Any], tag: str) -> Any:
    def kernel(*args: Any, **kwargs: Any) -> Any:
        log.append((tag, args, kwargs))
        return tag

    return kernel


@pytest.fixture
def overloaded(lib: Library) -> Library:
    """``g.Tensor`` and ``g.Scalar``, each with a CPU kernel returning its overload name."""
    lib.define("g.Tensor(Tensor self, Tensor other) -> Tensor", tags=("pointwise",))
    lib.define("g.Scalar(Tensor self, Scalar other) -> Tensor")
    lib.impl("g.Tensor", _const("Tensor"), "CPU")
    lib.impl("g.Scalar", _const("Scalar"), "CPU")
    return lib


# -- packets and overloads -------------------------------------------------------------------------
def test_packet_and_overload_types(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.define("f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)")
    packet = _ns(lib).f
    assert isinstance(packet, OpOverloadPacket)
    assert isinstance(packet.default, OpOverload)
    assert isinstance(packet.out, OpOverload)
    assert packet.default is not packet.out
    assert _ns(lib).f is packet  # the same packet every time
    assert packet.default is _ns(lib).f.default


def test_overload_attributes(overloaded: Library) -> None:
    ns = overloaded.ns
    packet = _ns(overloaded).g
    op = packet.Tensor
    assert isinstance(op.schema, FunctionSchema)
    assert str(op.schema) == f"{ns}::g.Tensor(Tensor self, Tensor other) -> Tensor"
    assert op.name == f"{ns}::g.Tensor"
    assert op.namespace == ns
    assert op.overload_name == "Tensor"
    assert op.tags == ("pointwise",)
    assert packet.Scalar.tags == ()
    assert op.overloadpacket is packet
    assert packet.name == f"{ns}::g"
    assert packet.overloads() == ["Tensor", "Scalar"]
    assert repr(op) == f"ops.{ns}.g.Tensor"
    assert repr(packet) == f"ops.{ns}.g"


def test_every_overload_shares_the_packet(overloaded: Library) -> None:
    packet = _ns(overloaded).g
    assert packet.Scalar.overloadpacket is packet


def test_default_overload_attributes(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    op = _ns(lib).f.default
    assert op.name == f"{lib.ns}::f"
    assert op.overload_name == "default"
    assert _ns(lib).f.overloads() == ["default"]
    assert repr(op) == f"ops.{lib.ns}.f.default"


def test_unknown_overload_and_operator(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    with pytest.raises(AttributeError, match="nope"):
        _ = _ns(lib).f.nope
    with pytest.raises(AttributeError, match="missing"):
        _ = _ns(lib).missing


def test_packet_selects_overload_by_schema(overloaded: Library, cpu: FakeTensor) -> None:
    g = _ns(overloaded).g
    assert g(cpu, cpu) == "Tensor"
    assert g(cpu, 2.5) == "Scalar"
    assert g(cpu, 2) == "Scalar"
    assert g(cpu, cpu) == "Tensor"  # after caching the other choice


def test_packet_with_no_matching_overload_names_the_op(
    overloaded: Library, cpu: FakeTensor
) -> None:
    g = _ns(overloaded).g
    with pytest.raises(TypeError) as info:
        g(cpu, "text")
    assert f"{overloaded.ns}::g" in str(info.value)
    assert "other" in str(info.value)


def test_packet_selects_overload_by_keyword_argument_type(
    overloaded: Library, cpu: FakeTensor
) -> None:
    g = _ns(overloaded).g
    assert g(cpu, other=cpu) == "Tensor"
    assert g(cpu, other=2.5) == "Scalar"


def test_packet_selects_by_keyword_argument_type_without_cache(
    overloaded: Library, cpu: FakeTensor
) -> None:
    g = _ns(overloaded).g
    assert g(cpu, other=2.5) == "Scalar"


def test_single_overload_packet_passes_through(lib: Library, cpu: FakeTensor) -> None:
    log: list[Any] = []
    lib.define("f(Tensor x, int n=1) -> Tensor")
    lib.impl("f", _recorder(log, "cpu"), "CPU")
    assert _ns(lib).f(cpu, n=3) == "cpu"
    assert log == [("cpu", (cpu,), {"n": 3})]


def test_packet_with_one_keyword_free_overload_takes_it_for_calls_without_keywords(
    lib: Library, cpu: FakeTensor
) -> None:
    """``mm`` beside ``mm.out``: a call without keywords fits only the overload with no
    required keyword-only argument, so the packet calls it without choosing; with keywords
    it chooses as before; a second such overload turns the shortcut off."""
    lib.define("k(Tensor self, Tensor other) -> Tensor")
    lib.define("k.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)")
    lib.impl("k", _const("functional"), "CPU")
    lib.impl("k.out", _const("out"), "CPU")
    k = _ns(lib).k
    assert k._only_positional is k.default
    assert k(cpu, cpu) == "functional"
    assert k(cpu, cpu, out=cpu) == "out"
    assert k(cpu, other=cpu) == "functional"
    with pytest.raises(SchemaBindError, match="no overload accepts") as info:
        k(cpu, "text")  # as when choosing: every overload, and what each refused
    assert "other" in str(info.value) and "k.out" in str(info.value)
    lib.define("k.Scalar(Tensor self, Scalar other) -> Tensor")
    lib.impl("k.Scalar", _const("Scalar"), "CPU")
    assert k._only_positional is None
    assert k(cpu, 2.5) == "Scalar" and k(cpu, cpu) == "functional"


# -- keys from the arguments --------------------------------------------------------------------------
@pytest.fixture
def optional_op(lib: Library) -> OpOverload:
    lib.define("h(Tensor x, Tensor? y=None, Tensor[] zs=[]) -> Tensor")
    lib.impl("h", _const("cpu"), "CPU")
    lib.impl("h", _const("meta"), "Meta")
    return _ns(lib).h.default


def test_optional_tensor_none_is_fine(optional_op: OpOverload, cpu: FakeTensor) -> None:
    assert optional_op(cpu) == "cpu"
    assert optional_op(cpu, None) == "cpu"
    assert optional_op(cpu, y=None, zs=[]) == "cpu"


def test_optional_tensor_keys_are_used(
    optional_op: OpOverload, cpu: FakeTensor, meta: FakeTensor
) -> None:
    assert optional_op(cpu, meta) == "meta"
    assert optional_op(cpu, y=meta) == "meta"


def test_tensor_list_keys_are_used(
    optional_op: OpOverload, cpu: FakeTensor, meta: FakeTensor
) -> None:
    assert optional_op(cpu, None, [cpu, meta]) == "meta"
    assert optional_op(cpu, zs=[meta]) == "meta"
    assert optional_op(cpu, zs=(cpu, cpu)) == "cpu"


@pytest.fixture
def list_op(lib: Library) -> OpOverload:
    """``c(Tensor[] xs, int dim=0)``: a lone leading Tensor[], the call path of ``cat``."""
    lib.define("c(Tensor[] xs, int dim=0) -> Tensor")
    lib.impl("c", _const("cpu"), "CPU")
    lib.impl("c", _const("meta"), "Meta")
    return _ns(lib).c.default


def test_leading_tensor_list_keys_are_the_union(
    list_op: OpOverload, cpu: FakeTensor, meta: FakeTensor
) -> None:
    assert list_op([cpu, cpu]) == "cpu"
    assert list_op([cpu, meta, cpu]) == "meta"  # a later element's keys count
    assert list_op([meta, cpu]) == "meta"
    equal = FakeTensor(int(str(cpu._dispatch_bits)))  # equal bits in another int object
    assert list_op((cpu, equal)) == "cpu"
    assert list_op((equal, cpu, meta)) == "meta"
    assert list_op(xs=[cpu, meta]) == "meta"
    assert list_op([cpu], 1) == "cpu"


def test_leading_tensor_list_odd_arguments(list_op: OpOverload, cpu: FakeTensor) -> None:
    class Listy(list):  # type: ignore[type-arg]
        pass

    assert list_op(Listy([cpu])) == "cpu"
    with pytest.raises(SchemaBindError):
        list_op(cpu)  # a tensor where the list belongs
    # Note [Validating every call]: a None is no element of a Tensor[] (only of Tensor?[]),
    # refused before the kernel runs, as any value that is not a tensor.
    for bad in ([cpu, None], [cpu, 3], (cpu, "x")):
        with pytest.raises(SchemaBindError, match="element 1"):
            list_op(bad)
    with pytest.raises(NotImplementedError, match="no tensor arguments"):
        list_op([])


def test_leading_optional_tensor_list_skips_none(
    lib: Library, cpu: FakeTensor, meta: FakeTensor
) -> None:
    lib.define("d(Tensor?[] xs) -> Tensor")
    lib.impl("d", _const("cpu"), "CPU")
    lib.impl("d", _const("meta"), "Meta")
    op = _ns(lib).d.default
    assert op([None, cpu]) == "cpu"
    assert op([cpu, None, meta]) == "meta"
    with pytest.raises(NotImplementedError, match="no tensor arguments"):
        op([None])


def test_leading_tensor_list_requires_grad_anywhere(lib: Library) -> None:
    """Note [Grad-only kernels] on the list path: any element's REQUIRES_GRAD_BIT counts."""
    ran: list[str] = []
    lib.define("gl(Tensor[] xs) -> Tensor")
    op = _ns(lib).gl.default

    def autograd(ks: DispatchKeySet, xs: Any) -> Any:
        ran.append("autograd")
        return op.redispatch(ks & DispatchKeySet.full_after("AutogradOther"), xs)

    lib.impl("gl", autograd, "Autograd", with_keyset=True, grad_only=True)
    lib.impl("gl", lambda xs: ran.append("cpu") or "cpu", "CPU")
    plain, needs_grad = FakeTensor(CPU_BITS), FakeTensor(CPU_BITS | REQUIRES_GRAD_BIT)
    assert op([plain, plain]) == "cpu"
    assert ran == ["cpu"]
    ran.clear()
    assert op([plain, plain, needs_grad]) == "cpu"
    assert ran == ["autograd", "cpu"]


def test_keyword_tensor_keys_are_used(
    optional_op: OpOverload, cpu: FakeTensor, meta: FakeTensor
) -> None:
    assert optional_op(x=meta) == "meta"
    assert optional_op(x=cpu) == "cpu"


def test_with_keyset_cpu_kernel_receives_only_cpu(lib: Library, cpu: FakeTensor) -> None:
    seen: list[DispatchKeySet] = []
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda ks, x: seen.append(ks) or "cpu", "CPU", with_keyset=True)
    assert _ns(lib).f.default(cpu) == "cpu"
    # BackendSelect/ADInplaceOrView fall through, AutocastCPU is TLS-excluded and the
    # autograd fallback is transparent: all masked away.
    assert seen == [DispatchKeySet(K.CPU)]


def test_with_keyset_autograd_kernel_receives_autograd_and_backend(
    lib: Library, cpu: FakeTensor
) -> None:
    seen: list[tuple[str, DispatchKeySet]] = []
    lib.define("f(Tensor x) -> Tensor")
    op_holder: list[OpOverload] = []

    def autograd(ks: DispatchKeySet, x: Any) -> Any:
        seen.append(("AutogradCPU", ks))
        return op_holder[0].redispatch(ks & DispatchKeySet.full_after(K.AutogradCPU), x)

    lib.impl("f", autograd, "AutogradCPU", with_keyset=True)
    lib.impl("f", lambda ks, x: seen.append(("CPU", ks)) or "cpu", "CPU", with_keyset=True)
    op_holder.append(_ns(lib).f.default)
    assert op_holder[0](cpu) == "cpu"
    assert seen == [
        ("AutogradCPU", DispatchKeySet([K.AutogradCPU, K.CPU])),
        ("CPU", DispatchKeySet(K.CPU)),
    ]


def test_with_keyset_meta_and_cuda_kernels(
    lib: Library, meta: FakeTensor, cuda: FakeTensor
) -> None:
    seen: list[DispatchKeySet] = []
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda ks, x: seen.append(ks), "Meta", with_keyset=True)
    lib.impl("f", lambda ks, x: seen.append(ks), "CUDA", with_keyset=True)
    op = _ns(lib).f.default
    op(meta)
    op(cuda)
    assert seen == [DispatchKeySet(K.Meta), DispatchKeySet(K.CUDA)]


# -- redispatch --------------------------------------------------------------------------------------
def test_redispatch_uses_exactly_the_given_keyset(lib: Library, cpu: FakeTensor) -> None:
    seen: list[tuple[str, DispatchKeySet]] = []
    lib.define("f(Tensor x) -> Tensor")
    for key in ("CPU", "Meta", "AutogradCPU"):
        lib.impl("f", lambda ks, x, key=key: seen.append((key, ks)) or key, key, with_keyset=True)
    op = _ns(lib).f.default
    # TLS would add AutogradCPU and remove CPU/Meta for a call; redispatch ignores it.
    with include_keys(K.AutogradCPU, K.Python), exclude_keys(K.CPU, K.Meta):
        assert op.redispatch(DispatchKeySet(K.CPU), cpu) == "CPU"
        assert op.redispatch(DispatchKeySet([K.CPU, K.Meta]), cpu) == "Meta"
    assert seen == [
        ("CPU", DispatchKeySet(K.CPU)),
        ("Meta", DispatchKeySet([K.Meta, K.CPU])),
    ]


def test_redispatch_with_empty_set_runs_the_undefined_slot(lib: Library, cpu: FakeTensor) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", _const("cpu"), "CPU")
    lib.impl("f", _const("cea"), "CompositeExplicitAutograd")
    op = _ns(lib).f.default
    assert op(cpu) == "cpu"
    assert op.redispatch(DispatchKeySet(), cpu) == "cea"


def test_redispatch_onto_the_autograd_fallback_runs_it(lib: Library, cpu: FakeTensor) -> None:
    # SEMANTICS §5: the autograd fallback is a real kernel; it redispatches with
    # ks & after_autograd, here the empty set, so the Undefined slot (CEA) runs.
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", _const("cpu"), "CPU")
    lib.impl("f", _const("cea"), "CompositeExplicitAutograd")
    op = _ns(lib).f.default
    assert op.redispatch(DispatchKeySet(K.AutogradCPU), cpu) == "cea"
    assert op.redispatch(DispatchKeySet([K.AutogradCPU, K.CPU]), cpu) == "cpu"


@pytest.mark.parametrize("key", ["BackendSelect", "ADInplaceOrView", "AutocastCPU"])
def test_redispatch_onto_a_fallthrough_key_raises(lib: Library, cpu: FakeTensor, key: str) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", _const("cpu"), "CPU")
    op = _ns(lib).f.default
    with pytest.raises(RuntimeError, match="fallthrough_kernel was executed") as info:
        op.redispatch(DispatchKeySet([K.parse(key), K.CPU]), cpu)
    assert op.name in str(info.value)


def test_redispatch_onto_a_per_op_fallthrough_raises(lib: Library, cpu: FakeTensor) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", _const("cpu"), "CPU")
    lib.impl("f", fallthrough_kernel, "AutogradCPU")
    op = _ns(lib).f.default
    assert op(cpu) == "cpu"
    with pytest.raises(RuntimeError, match="fallthrough_kernel was executed"):
        op.redispatch(DispatchKeySet(K.AutogradCPU), cpu)


# -- errors --------------------------------------------------------------------------------------------
def test_missing_kernel_error(lib: Library, cpu: FakeTensor) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", _const("meta"), "Meta")
    op = _ns(lib).f.default
    with pytest.raises(NotImplementedError) as info:
        op(cpu)
    message = str(info.value)
    assert f"'{lib.ns}::f'" in message
    assert "'CPU'" in message
    assert repr(DispatchKeySet(K.CPU)) in message
    assert "[Meta]" in message
    assert dump_table(op) in message


def test_no_tensor_arguments_error(lib: Library) -> None:
    lib.define("make(int n) -> Tensor")
    lib.impl("make", _const("cpu"), "CPU")
    op = _ns(lib).make.default
    with pytest.raises(NotImplementedError, match="There were no tensor arguments") as info:
        op(3)
    assert f"{lib.ns}::make(int n) -> Tensor" in str(info.value)
    assert "[CPU]" in str(info.value)


def test_no_tensor_arguments_with_a_composite_kernel(lib: Library) -> None:
    lib.define("make(int n) -> Tensor")
    lib.impl("make", lambda n: ("cea", n), "CompositeExplicitAutograd")
    assert _ns(lib).make(4) == ("cea", 4)


def test_meta_call_without_a_meta_kernel(lib: Library, meta: FakeTensor) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", _const("cpu"), "CPU")
    with pytest.raises(
        NotImplementedError, match="attempted to run this operator with Meta tensors"
    ) as info:
        _ns(lib).f(meta)
    assert f"{lib.ns}::f" in str(info.value)


def test_kernel_exception_keeps_its_type_and_gains_a_note(lib: Library, cpu: FakeTensor) -> None:
    class KernelError(ValueError):
        pass

    def kernel(x: Any) -> Any:
        raise KernelError("from the kernel")

    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", kernel, "CPU")
    with pytest.raises(KernelError, match="from the kernel") as info:
        _ns(lib).f(cpu)
    notes = getattr(info.value, "__notes__", [])
    assert any(f"{lib.ns}::f" in note for note in notes), notes


def test_nested_operator_errors_are_noted_once_per_operator(lib: Library, cpu: FakeTensor) -> None:
    lib.define("inner(Tensor x) -> Tensor")
    lib.define("outer(Tensor x) -> Tensor")
    lib.impl("inner", lambda x: 1 / 0, "CPU")
    lib.impl("outer", lambda x: _ns(lib).inner(x), "CPU")
    with pytest.raises(ZeroDivisionError) as info:
        _ns(lib).outer(cpu)
    notes = info.value.__notes__
    assert sum(f"{lib.ns}::inner" in n for n in notes) == 1
    assert sum(f"{lib.ns}::outer" in n for n in notes) == 1


def test_bad_arguments_raise_schema_bind_error_with_the_kernel_error_as_cause(
    lib: Library, cpu: FakeTensor
) -> None:
    """Note [Validating every call]: a call that does not fit is refused before any
    kernel runs, with an error that is both a TypeError and a RuntimeError."""
    ran: list[object] = []
    lib.define("k(Tensor x, int n) -> Tensor")
    lib.impl("k", lambda x, n: ran.append(n) or n + 1, "CPU")
    op = _ns(lib).k.default
    assert op(cpu, 1) == 2
    with pytest.raises(SchemaBindError) as info:
        op(cpu, "a")
    assert isinstance(info.value, TypeError) and isinstance(info.value, RuntimeError)
    assert "'n'" in str(info.value) and "must be int, not str" in str(info.value)
    assert f"{lib.ns}::k" in str(info.value)
    assert ran == [1]  # the kernel never saw "a"


def test_non_tensor_for_a_tensor_argument(lib: Library) -> None:
    lib.define("k(Tensor x, int n) -> Tensor")
    lib.impl("k", _const("cpu"), "CPU")
    op = _ns(lib).k.default
    with pytest.raises(SchemaBindError, match="'x'"):
        op(3, 1)
    with pytest.raises(SchemaBindError, match="missing required argument 'x'"):
        op()


def test_kernel_raising_leaves_tls_unchanged(lib: Library, cpu: FakeTensor) -> None:
    before = (tls_local_include_set(), tls_local_exclude_set())

    def kernel(x: Any) -> Any:
        with exclude_keys("Autograd"), include_keys("Python"):
            raise RuntimeError("inside guards")

    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", kernel, "CPU")
    with exclude_keys(K.Meta):
        inner = (tls_local_include_set(), tls_local_exclude_set())
        with pytest.raises(RuntimeError, match="inside guards"):
            _ns(lib).f(cpu)
        assert (tls_local_include_set(), tls_local_exclude_set()) == inner
    assert (tls_local_include_set(), tls_local_exclude_set()) == before


def test_kernels_receive_arguments_exactly_as_passed(lib: Library, cpu: FakeTensor) -> None:
    log: list[Any] = []
    lib.define("f(Tensor x, int n=3, *, bool flag=False, Scalar alpha=1) -> Tensor")
    lib.impl("f", _recorder(log, "cpu"), "CPU")
    op = _ns(lib).f.default
    op(cpu)
    op(cpu, 5)
    op(cpu, n=5, flag=True)
    op(x=cpu, alpha=2.5)
    assert log == [
        ("cpu", (cpu,), {}),
        ("cpu", (cpu, 5), {}),
        ("cpu", (cpu,), {"n": 5, "flag": True}),
        ("cpu", (), {"x": cpu, "alpha": 2.5}),
    ]


def test_pickle_round_trips_to_the_same_object(lib: Library) -> None:
    lib.define("f(Tensor x) -> Tensor")
    lib.define("f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)")
    for op in (_ns(lib).f.default, _ns(lib).f.out):
        assert pickle.loads(pickle.dumps(op)) is op


def test_calling_fallthrough_kernel_directly_raises() -> None:
    with pytest.raises(NotImplementedError):
        fallthrough_kernel()
    with pytest.raises(NotImplementedError):
        fallthrough_kernel(1, x=2)


def test_undefined_operator_handle(reg: Registration, cpu: FakeTensor) -> None:
    reg.lib.define("f(Tensor x) -> Tensor")
    op = _ns(reg.lib).f.default
    reg.lib.destroy()
    assert not op.is_defined
    with pytest.raises(RuntimeError, match="not defined"):
        _ = op.schema
    with pytest.raises(RuntimeError, match="not defined"):
        op(cpu)
    with pytest.raises(RuntimeError, match="not defined"):
        op.redispatch(DispatchKeySet(K.CPU), cpu)


# -- live comparison -----------------------------------------------------------------------------
@pytest.mark.torch
def test_with_keyset_keysets_match_live_torch() -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed; results recorded above")
    from torch.library import Library as TorchLibrary

    from .conftest import unique_namespace

    ns = unique_namespace("adtorch")
    lib = TorchLibrary(ns, "DEF")
    try:
        seen: list[str] = []
        lib.define("f(Tensor x) -> Tensor")
        op = getattr(torch.ops, ns).f.default
        after = torch._C._after_autograd_keyset

        def autograd(ks: Any, x: Any) -> Any:
            seen.append(repr(ks))
            return op.redispatch(ks & after, x)

        def cpu_kernel(ks: Any, x: Any) -> Any:
            seen.append(repr(ks))
            return x

        lib.impl("f", autograd, "AutogradCPU", with_keyset=True)
        lib.impl("f", cpu_kernel, "CPU", with_keyset=True)
        op(torch.zeros(1))
        assert seen == ["DispatchKeySet(CPU, AutogradCPU)", "DispatchKeySet(CPU)"]
    finally:
        lib._destroy()


def test_grad_only_kernel_runs_only_when_an_argument_requires_grad(lib: Any) -> None:
    """Note [Grad-only kernels]: skipped without REQUIRES_GRAD_BIT, run with it and on
    redispatch; kernels below see the same key set either way."""
    ran: list[Any] = []
    ns = lib.ns
    lib.define("gr(Tensor x) -> Tensor")
    op = getattr(ops, ns).gr.default

    def autograd(ks: DispatchKeySet, x: Any) -> Any:
        ran.append("autograd")
        return op.redispatch(ks & DispatchKeySet.full_after("AutogradOther"), x)

    lib.impl("gr", autograd, "Autograd", with_keyset=True, grad_only=True)
    lib.impl("gr", lambda ks, x: ran.append(ks) or "cpu", "CPU", with_keyset=True)
    plain = FakeTensor(CPU_BITS)
    needs_grad = FakeTensor(CPU_BITS | REQUIRES_GRAD_BIT)
    assert op(plain) == "cpu"
    assert ran == [DispatchKeySet("CPU")]
    ran.clear()
    assert op(needs_grad) == "cpu"
    assert ran == ["autograd", DispatchKeySet("CPU")]
    ran.clear()
    op.redispatch(DispatchKeySet(["AutogradCPU", "CPU"]), plain)
    assert ran == ["autograd", DispatchKeySet("CPU")]
    assert "grad-only" in explain(op, plain) and "1. CPU" in explain(op, plain)
    text = explain(op, needs_grad)
    assert "(an argument requires grad)" in text and "1. AutogradCPU" in text
    assert "backend fallback, grad-only" not in dump_table_row(op, "AutogradCPU")
    assert dump_table_row(op, "AutogradCPU").endswith("Autograd, grad-only")
    # Grad mode off (the dispatcher's thread-local flag): skipped again, but still run
    # on an explicit redispatch; another thread keeps its own mode.
    ran.clear()
    _tls.set_grad_mode(False)
    try:
        assert op(needs_grad) == "cpu"
        assert ran == [DispatchKeySet("CPU")]
        assert "1. CPU" in explain(op, needs_grad)
        assert "grad mode is off" in explain(op, needs_grad)
        ran.clear()
        op.redispatch(DispatchKeySet(["AutogradCPU", "CPU"]), needs_grad)
        assert ran == ["autograd", DispatchKeySet("CPU")]
        ran.clear()
        worker = threading.Thread(target=op, args=(needs_grad,))
        worker.start()
        worker.join()
        assert ran == ["autograd", DispatchKeySet("CPU")]
    finally:
        _tls.set_grad_mode(True)


def dump_table_row(op: Any, key: str) -> str:
    return next(line for line in op._dump().splitlines() if line.split()[:1] == [key])


def test_one_and_two_tensor_entries_match_the_call(lib: Any) -> None:
    """``call1``/``call2`` (the Python operators' entries) choose the same kernel, with the
    same key set, as a call; anything that is not a tensor takes the full path's error;
    kernel errors get the same note; grad mode and grad-only kernels behave the same."""
    ns = lib.ns
    lib.define("u(Tensor x) -> Tensor")
    lib.define("b(Tensor x, Tensor y) -> Tensor")
    u, b = getattr(ops, ns).u.default, getattr(ops, ns).b.default
    seen: list[Any] = []
    lib.impl("u", lambda ks, x: seen.append(ks) or "cpu", "CPU", with_keyset=True)
    lib.impl("b", lambda x, y: seen.append((x, y)) or "cpu", "CPU")
    lib.impl(
        "u", lambda ks, x: seen.append("grad") or "grad", "AutogradCPU",
        with_keyset=True, grad_only=True,
    )  # fmt: skip
    x, y = FakeTensor(CPU_BITS), FakeTensor(CPU_BITS)
    needs_grad = FakeTensor(CPU_BITS | REQUIRES_GRAD_BIT)
    lib.define("s(Tensor x, Scalar k) -> Tensor")
    s_op = getattr(ops, ns).s.default
    lib.impl("s", lambda x, k: ("cpu", k), "CPU")
    assert s_op.call2(x, 2.5) == s_op(x, 2.5) == ("cpu", 2.5)
    with pytest.raises(SchemaBindError, match="must be Tensor"):
        s_op.call2(1.0, 2.5)
    assert u.call1(x) == u(x) == "cpu" and seen[0] == seen[1] == DispatchKeySet("CPU")
    assert b.call2(x, y) == b(x, y) == "cpu" and seen[2] == seen[3] == (x, y)
    assert u.call1(needs_grad) == "grad"
    with exclude_keys("AutogradCPU"):
        assert u.call1(needs_grad) == "cpu"  # the thread's sets apply
    for bad in (lambda: u.call1(3.0), lambda: b.call2(x, "y")):
        with pytest.raises(SchemaBindError, match="must be Tensor"):
            bad()

    def boom(x: Any, y: Any) -> Any:
        raise ValueError("kernel failed")

    lib.impl("b", boom, "CPU", allow_override=True)
    with pytest.raises(ValueError, match="kernel failed") as info:
        b.call2(x, y)
    assert any(f"while dispatching {ns}::b" in n for n in info.value.__notes__)

"""Every call is validated before any kernel runs (Note [Validating every call]).

Kernels here are ``def k(*args, **kwargs)`` recorders, the kind (fallbacks, wrappers)
that would run on anything: a call that does not fit the schema must raise a
``SchemaBindError`` (a TypeError and a RuntimeError) naming the operator and the
argument, and the recorder must never have run.  The generated checker is a fast path
for ``Binder.bind``; a hypothesis test drives random schemas and calls through both and
asks that they accept and refuse the same calls.  The fixed-arity entries (``call1``,
``call2``, Note [Specialised call paths]) are compared with the general ``__call__``.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dispatch
from dispatch import (
    DispatchKey,
    DispatchKeySet,
    Library,
    SchemaBindError,
    custom_op,
    exclude_keys,
    include_keys,
    ops,
    parse_schema,
)
from dispatch._schema import SchemaParseError
from dispatch._validate import make_checker

from .conftest import CPU_BITS, META_BITS, FakeTensor, unique_namespace

_RG = dispatch.REQUIRES_GRAD_BIT


class Recorder:
    """A kernel that takes anything and records what it was given."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> str:
        self.calls.append((args, kwargs))
        return "ran"


def _define(
    lib: Library, schema: str, key: str = "CompositeExplicitAutograd"
) -> tuple[Any, Recorder]:
    lib.define(schema)
    name = schema.split("(", 1)[0]
    base, _, overload = name.partition(".")
    rec = Recorder()
    lib.impl(name, rec, key)
    packet = getattr(getattr(ops, lib.ns), base)
    return getattr(packet, overload or "default"), rec


def _refuses(call: Callable[[], Any], rec: Recorder, op_name: str, *fragments: str) -> None:
    before = len(rec.calls)
    with pytest.raises(SchemaBindError) as info:
        call()
    assert isinstance(info.value, TypeError) and isinstance(info.value, RuntimeError)
    text = str(info.value)
    assert op_name in text, text
    for fragment in fragments:
        assert fragment in text, (fragment, text)
    assert len(rec.calls) == before, "the kernel ran on a call that does not fit"


@pytest.fixture
def lib() -> Any:
    library = Library(unique_namespace("val"), "DEF")
    yield library
    library.destroy()


_T = FakeTensor(CPU_BITS, "t")

# (schema, bad call, what the message must say)
BAD_CALLS: list[tuple[str, tuple[Any, ...], dict[str, Any], tuple[str, ...]]] = [
    ("f(Tensor x, int n) -> Tensor", (_T, 1, 2), {}, ("at most 2 positional",)),
    ("f(Tensor x, int n=1) -> Tensor", (_T,), {"m": 2}, ("unexpected keyword argument 'm'",)),
    ("f(Tensor x, int n=1) -> Tensor", (_T, 1), {"n": 2}, ("multiple values for argument 'n'",)),
    ("f(Tensor x, *, int n=1) -> Tensor", (_T, 1), {}, ("at most 1 positional",)),
    ("f(Tensor x, int n) -> Tensor", (_T, "three"), {}, ("'n'", "must be int, not str")),
    ("f(Tensor x, int n) -> Tensor", (_T, None), {}, ("'n'", "must be int, not None")),
    ("f(Tensor x, int n) -> Tensor", (_T, True), {}, ("'n'", "must be int, not bool")),
    ("f(Tensor x, int n) -> Tensor", (_T, 1.0), {}, ("'n'", "must be int, not float")),
    ("f(Tensor x, int n) -> Tensor", (_T, _T), {}, ("'n'", "must be int")),
    ("f(Tensor x, float p) -> Tensor", (_T, "0.5"), {}, ("'p'", "must be float, not str")),
    ("f(Tensor x, float p) -> Tensor", (_T, True), {}, ("'p'", "must be float, not bool")),
    ("f(Tensor x, bool b) -> Tensor", (_T, 1), {}, ("'b'", "must be bool, not int")),
    ("f(Tensor x, str s) -> Tensor", (_T, 1), {}, ("'s'", "must be str, not int")),
    ("f(Tensor x, Scalar s) -> Tensor", (_T, "1"), {}, ("'s'", "must be Scalar, not str")),
    ("f(Tensor x, Scalar s) -> Tensor", (_T, None), {}, ("'s'", "must be Scalar, not None")),
    ("f(Tensor x, int[] d) -> Tensor", (_T, [1, 1.5]), {}, ("'d'", "element 1 is float")),
    ("f(Tensor x, int[] d) -> Tensor", (_T, "12"), {}, ("'d'", "must be int[]")),
    ("f(Tensor x, int[2] d) -> Tensor", (_T, None), {}, ("'d'", "must be int[2]")),
    ("f(Tensor x, int? n=None) -> Tensor", (_T, "a"), {}, ("'n'", "must be int?")),
    ("f(Tensor x, float? p=None) -> Tensor", (_T,), {"p": [1.0]}, ("'p'", "must be float?")),
    ("f(Tensor x, Tensor y) -> Tensor", (_T, 2), {}, ("'y'", "must be Tensor, not int")),
    ("f(Tensor x, Tensor y) -> Tensor", (_T, None), {}, ("'y'", "must be Tensor, not None")),
    ("f(Tensor x, Tensor y) -> Tensor", (_T,), {"y": "a"}, ("'y'", "must be Tensor")),
    ("f(Tensor x, Tensor y) -> Tensor", (_T,), {}, ("missing required argument 'y'",)),
    ("f(Tensor x, Tensor? y) -> Tensor", (_T, 1.0), {}, ("'y'", "must be Tensor?")),
    ("f(Tensor[] xs) -> Tensor", (_T,), {}, ("'xs'", "must be Tensor[]")),
    ("f(Tensor[] xs) -> Tensor", ([_T, None],), {}, ("'xs'", "element 1 is None")),
    ("f(Tensor[] xs, Tensor? y=None) -> Tensor", (None,), {}, ("'xs'", "not None")),
    ("f(Tensor x, Tensor[] xs) -> Tensor", (_T,), {"xs": None}, ("'xs'", "not None")),
    ("f(Tensor[] xs) -> Tensor", ([_T, 3],), {}, ("'xs'", "element 1 is int")),
    ("f(Tensor x, Tensor[] xs) -> Tensor", (_T, [_T, "a"]), {}, ("'xs'", "element 1")),
    ("f(Tensor?[] xs) -> Tensor", ([_T, 3],), {}, ("'xs'", "element 1 is int")),
    ("f(Tensor x, *, Scalar alpha=1) -> Tensor", (_T,), {"alpah": 2}, ("'alpah'",)),
    ("f(Tensor x, *, Scalar alpha=1) -> Tensor", (_T,), {"alpha": "a"}, ("'alpha'",)),
    ("f(Tensor x, *, int n) -> Tensor", (_T,), {}, ("missing required keyword-only",)),
]


@pytest.mark.parametrize(("schema", "args", "kwargs", "fragments"), BAD_CALLS)
def test_bad_calls_are_refused_before_the_kernel_on_every_entry(
    lib: Library,
    schema: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    fragments: tuple[str, ...],
) -> None:
    op, rec = _define(lib, schema)
    name = f"{lib.ns}::f"
    _refuses(lambda: op(*args, **kwargs), rec, name, *fragments)  # the overload
    _refuses(lambda: op.overloadpacket(*args, **kwargs), rec, name)  # the packet
    ks = DispatchKeySet(DispatchKey.CPU)
    _refuses(lambda: op.redispatch(ks, *args, **kwargs), rec, name, *fragments)
    if not kwargs and len(args) == 1 and hasattr(op, "call1"):
        _refuses(lambda: op.call1(args[0]), rec, name)
    if not kwargs and len(args) == 2 and hasattr(op, "call2"):
        _refuses(lambda: op.call2(*args), rec, name)
    if not kwargs and len(args) == 3:
        _refuses(lambda: op.call3(*args), rec, name)


def test_the_good_calls_of_the_same_schemas_reach_the_kernel_as_given(lib: Library) -> None:
    op, rec = _define(lib, "f(Tensor x, int n=1, *, Scalar alpha=1) -> Tensor")
    assert op(_T) == op(_T, 2) == op(_T, n=2, alpha=0.5) == op(x=_T) == "ran"
    assert rec.calls == [
        ((_T,), {}),
        ((_T, 2), {}),
        ((_T,), {"n": 2, "alpha": 0.5}),
        ((), {"x": _T}),
    ]


def test_custom_op_objects_validate(ns: str) -> None:
    ran: list[int] = []

    @custom_op(f"{ns}::scale", mutates_args=(), schema="(Tensor x, int k) -> Tensor")
    def scale(x: Any, k: int) -> Any:
        ran.append(k)
        return x

    scale.register_kernel("cpu")(lambda x, k: ran.append(k) or x)
    try:
        assert scale(_T, 2) is _T
        for args, kwargs in [((_T, "2"), {}), ((_T, 2, 3), {}), ((_T,), {"k": 2, "j": 1})]:
            with pytest.raises(SchemaBindError, match=f"{ns}::scale"):
                scale(*args, **kwargs)
        assert ran == [2]
    finally:
        scale._lib.destroy()


def test_the_fixed_arity_entries_check_their_arity(lib: Library) -> None:
    """The fixed-arity entries do not call the checker: they know from the schema whether
    one or two positional values fit, and the second value's type by one set lookup."""
    two, rec2 = _define(lib, "f(Tensor x, Tensor y) -> Tensor")
    _refuses(lambda: two.call1(_T) if hasattr(two, "call1") else two(_T), rec2, "f", "missing")
    one, rec1 = _define(lib, "g(Tensor x, *, int n) -> Tensor")
    _refuses(lambda: one.call1(_T), rec1, "g", "missing required keyword-only")
    three, rec3 = _define(lib, "h(Tensor x, Tensor y, Tensor z) -> Tensor")
    _refuses(lambda: three(_T, _T), rec3, "h", "missing required argument 'z'")
    assert three.call3(_T, _T, _T) == "ran"
    _refuses(lambda: three.call3(_T, _T, 2), rec3, "h", "must be Tensor, not int")
    _refuses(lambda: two.call3(_T, _T, _T), rec2, "f", "at most 2 positional")
    keyword, reck = _define(lib, "m(Tensor x, Tensor y, Tensor z, *, int n) -> Tensor")
    _refuses(lambda: keyword.call3(_T, _T, _T), reck, "m", "missing required keyword-only")
    scalar3, recs3 = _define(lib, "p(Tensor x, Tensor y, Scalar w) -> Tensor")
    assert scalar3.call3(_T, _T, 0.5) == "ran"  # not three tensors: the general entry
    _refuses(lambda: scalar3.call3(_T, _T, "w"), recs3, "p", "must be Scalar, not str")
    scalar, recs = _define(lib, "k(Tensor x, Scalar s) -> Tensor")
    assert scalar.call2(_T, 2) == scalar.call2(_T, 0.5) == "ran"
    _refuses(lambda: scalar.call2(_T, "2"), recs, "k", "must be Scalar, not str")
    _refuses(lambda: scalar.call2(_T, [2]), recs, "k", "must be Scalar, not list")
    alpha, reca = _define(lib, "q(Tensor x, Tensor y, *, Scalar alpha=1) -> Tensor")
    assert alpha.call2k(_T, _T, {"alpha": 0.5}) == alpha.call2k(_T, _T, {}) == "ran"
    _refuses(lambda: alpha.call2k(_T, _T, {"alpha": "a"}), reca, "q", "must be Scalar, not str")
    _refuses(lambda: alpha.call2k(_T, _T, {"alpah": 2}), reca, "q", "'alpah'")
    _refuses(lambda: alpha.call2k(_T, 2, {"alpha": 2}), reca, "q", "must be Tensor, not int")
    _refuses(lambda: two.call2k(_T, _T, {"alpha": 2}), rec2, "f", "'alpha'")
    value, recv = _define(lib, "r(Tensor x, Tensor y, Tensor z, *, Scalar value=1) -> Tensor")
    assert value.call3k(_T, _T, _T, {"value": 2}) == "ran"
    _refuses(lambda: value.call3k(_T, _T, _T, {"value": None}), recv, "r", "must be Scalar")
    _refuses(lambda: value.call3k(_T, _T, None, {"value": 2}), recv, "r", "must be Tensor")
    _refuses(lambda: keyword.call3k(_T, _T, _T, {}), reck, "m", "missing required keyword-only")
    assert keyword.call3k(_T, _T, _T, {"n": 2}) == "ran"  # a required keyword: the full path
    assert reca.calls[-1] == ((_T, _T), {}) and recv.calls[-1] == ((_T, _T, _T), {"value": 2})


def test_defaults_are_checked_when_the_schema_is_defined() -> None:
    for bad in (
        "f(Tensor x, int n=abc) -> Tensor",
        "f(Tensor x, int n=Sum) -> Tensor",
        "f(Tensor x, ScalarType d=abc) -> Tensor",
        "f(Tensor x, MemoryFormat m=xyz) -> Tensor",
        "f(Tensor x, Device d=cpu) -> Tensor",
        "f(Tensor x, int n=1.5) -> Tensor",
        "f(Tensor x, bool b=1) -> Tensor",
        "f(Tensor x, str s=1) -> Tensor",
        "f(Tensor x, Tensor y=1) -> Tensor",
    ):
        with pytest.raises(SchemaParseError, match="invalid default"):
            parse_schema(bad)
    # The names PyTorch's parser takes (ATen's own schemas use them).
    for good in (
        "f(Tensor x, int reduction=Mean) -> Tensor",
        "f(Tensor x, ScalarType dtype=long) -> Tensor",
        "f(Tensor x, MemoryFormat m=contiguous_format) -> Tensor",
        "f(Tensor x, Layout l=strided) -> Tensor",
        "f(Tensor x, Device d='cpu') -> Tensor",
    ):
        parse_schema(good)


def test_library_types_use_the_registered_check(lib: Library) -> None:
    from dispatch import _schema_types

    op, rec = _define(lib, "f(Tensor x, Stream? s=None) -> Tensor")
    assert "Stream" not in _schema_types._LIBRARY_CHECKS
    assert op(_T, "anything") == "ran"  # no check registered: any value but None
    try:
        dispatch.register_type_check("Stream", lambda v: v == "s0")
        assert op(_T, "s0") == op(_T, None) == "ran"
        _refuses(lambda: op(_T, "s1"), rec, "f", "'s'", "must be Stream?, not str")
    finally:
        _schema_types._LIBRARY_CHECKS.pop("Stream", None)
    with pytest.raises(ValueError, match="not a library-defined schema type"):
        dispatch.register_type_check("int", lambda v: True)


def test_checker_source_is_the_schema_signature() -> None:
    schema = parse_schema(
        "f(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"
    )
    source = make_checker(schema, "ns::f").source  # type: ignore[attr-defined]
    assert source.startswith("def check(self, dim=_D, keepdim=_D, *, dtype=_D):")
    assert "self" not in source.split(":", 1)[1]  # tensors are checked by key extraction


def test_the_checker_is_made_on_the_first_call(lib: Library) -> None:
    """Defining compiles nothing; the first call makes the checker, keeps it and gets its
    answer, a bad first call included."""
    op, rec = _define(lib, "f(Tensor self, int n, *, float scale=1.0) -> Tensor")
    pending = op._check
    assert type(pending).__name__ == "_CheckOnFirstCall"
    _refuses(lambda: op(_T, "two"), rec, "f", "'n'", "must be int, not str")
    check = op._check
    assert check is not pending and check.__qualname__ == "check_f"
    assert op(_T, 2, scale=0.5) == "ran"
    assert op._check is check
    _refuses(lambda: op(_T, 2, scale="big"), rec, "f", "'scale'")
    # Taken before the first call, the stand-in runs the checker it made: no second one.
    pending(_T, 3)
    assert pending.check is check and op._check is check


def test_the_checker_source_is_readable_before_the_first_call(lib: Library) -> None:
    op, _ = _define(lib, "g(Tensor self, int n) -> Tensor")
    assert op._check.source.startswith("def check(self, n):")
    assert op._check.__qualname__ == "check_g"  # reading the source made it


def test_a_first_call_made_for_an_old_schema_keeps_the_new_checker() -> None:
    ns = unique_namespace("val")
    kernels = Library(ns, "IMPL")  # keeps the operator object alive across redefinition
    try:
        first = Library(ns, "DEF")
        first.define("h(Tensor self, int n) -> Tensor")
        kernels.impl("h", Recorder(), "CPU")
        op = dispatch._operator.lookup(f"{ns}::h")
        old = op._check
        first.destroy()
        with Library(ns, "DEF") as again:
            again.define("h(Tensor self, str n) -> Tensor")
            assert dispatch._operator.lookup(f"{ns}::h") is op
            new = op._check
            old(_T, 1)  # the old schema's stand-in checks with the old schema...
            with pytest.raises(SchemaBindError):
                old(_T, "s")
            assert op._check is new  # ...and leaves the new one in place
            assert op(_T, "s") == "ran"
    finally:
        kernels.destroy()


# -- the generated checker against the Binder (hypothesis) ---------------------------------

_TYPES = [
    "Tensor", "Tensor?", "Tensor[]", "Tensor?[]", "int", "int?", "SymInt", "float", "float?",
    "bool", "str", "Scalar", "Scalar?", "complex", "int[]", "int[2]", "int[1]?", "float[]",
    "bool[3]", "Any", "Stream?",
]  # fmt: skip
_DEFAULTS = {
    "Tensor?": "None", "int": "1", "int?": "None", "SymInt": "0",
    "float": "0.5", "float?": "None", "bool": "False", "str": "'a'", "Scalar": "1",
    "Scalar?": "None", "complex": "1j", "int[]": "[1, 2]", "int[2]": "1", "int[1]?": "None",
    "float[]": "[]", "bool[3]": "True", "Stream?": "None",
}  # fmt: skip
_T2 = FakeTensor(META_BITS, "m")
_VALUES = [_T, _T2, None, 0, 1, -3, True, False, 1.5, 2j, "a", "", [], [1, 2], (1, 2),
           [1.5], [True], [_T], [_T, _T2], (_T,), [_T, None], [None], [1, _T], object()]  # fmt: skip


@st.composite
def schemas(draw: st.DrawFn) -> str:
    n = draw(st.integers(0, 5))
    names = draw(
        st.lists(st.sampled_from(string.ascii_lowercase), min_size=n, max_size=n, unique=True)
    )
    parts, defaulted, star = [], False, False
    for name in names:
        t = draw(st.sampled_from(_TYPES))
        kw = draw(st.booleans()) if not star else True
        if kw and not star:
            parts.append("*")
            star = True
        default = _DEFAULTS.get(t) if draw(st.booleans()) or (defaulted and not kw) else None
        if default is None and defaulted and not kw:
            t, default = "int?", "None"  # positional after a default needs one
        defaulted = defaulted or (default is not None and not kw)
        parts.append(f"{t} {name}" + (f"={default}" if default is not None else ""))
    return f"f({', '.join(parts)}) -> Tensor"


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema_text=schemas(), data=st.data())
def test_checker_accepts_exactly_what_the_binder_accepts(
    schema_text: str, data: st.DataObject
) -> None:
    schema = parse_schema(schema_text)
    names = [a.name for a in schema.arguments] + ["zz"]  # one unknown keyword too
    nargs = data.draw(st.integers(0, len(schema.positional) + 1))
    args = tuple(data.draw(st.sampled_from(_VALUES)) for _ in range(nargs))
    keys = data.draw(st.lists(st.sampled_from(names), max_size=3, unique=True))
    kwargs = {k: data.draw(st.sampled_from(_VALUES)) for k in keys}
    try:
        schema.bind(args, kwargs)
        expected = None
    except SchemaBindError as e:
        expected = e
    library = Library(unique_namespace("valh"), "DEF")
    try:
        library.define(schema_text)
        rec = Recorder()
        library.impl("f", rec, "CompositeExplicitAutograd")
        op = getattr(ops, library.ns).f.default
        try:
            op(*args, **kwargs)
            got = None
        except SchemaBindError as e:
            got = e
        except NotImplementedError:  # accepted, and no kernel for the tensors' keys
            got = None
        assert (got is None) == (expected is None), (schema_text, args, kwargs, expected, got)
        if got is not None:
            assert rec.calls == []
            assert str(got).startswith(f"{library.ns}::f("), str(got)
        else:
            assert rec.calls == [(args, kwargs)]
    finally:
        library.destroy()


# -- the fixed-arity entries against the general call (Note [Specialised call paths]) -----

_BITS = [CPU_BITS, META_BITS, CPU_BITS | _RG, META_BITS | _RG]


@settings(max_examples=200, deadline=None)
@given(
    bits=st.lists(st.sampled_from(_BITS), min_size=3, max_size=3),
    second=st.sampled_from([None, 2, 2.5, True, "s", [1], 1j, "tensor"]),
    tls=st.sampled_from(["none", "exclude_autograd", "include_meta", "no_grad"]),
)
def test_the_fixed_arity_entries_pick_what_the_general_call_picks(
    bits: list[int], second: Any, tls: str
) -> None:
    library = Library(unique_namespace("valc"), "DEF")
    try:
        seen: list[str] = []
        for schema in (
            "u(Tensor x) -> Tensor",
            "b(Tensor x, Tensor y) -> Tensor",
            "s(Tensor x, Scalar y) -> Tensor",
            "t(Tensor x, Tensor y, Tensor z) -> Tensor",
            "o(Tensor x, Tensor y, Tensor? z) -> Tensor",
            "w(Tensor x, Tensor y, Scalar z) -> Tensor",
            "k(Tensor x, Tensor y, *, Scalar alpha=1) -> Tensor",
            "v(Tensor x, Tensor y, Tensor z, *, Scalar value=1) -> Tensor",
            "g(Tensor x, Tensor y, *, Tensor? w=None) -> Tensor",
        ):
            library.define(schema)
            name = schema[0]
            for key in ("CPU", "Meta"):
                library.impl(name, lambda *a, _k=key, **k: seen.append(_k) or _k, key)
            # Grad-only, as autograd kernels are (Note [Grad-only kernels]): run only when
            # an argument requires grad and grad mode is on.
            library.impl(
                name,
                lambda *a, **k: seen.append("Autograd") or "Autograd",
                "Autograd",
                grad_only=True,
            )
        ns = getattr(ops, library.ns)
        a, b, c = FakeTensor(bits[0]), FakeTensor(bits[1]), FakeTensor(bits[2])
        if second == "tensor":
            second = c

        def outcome(fn: Callable[[], Any]) -> Any:
            seen.clear()
            try:
                return ("ok", fn(), tuple(seen))
            except Exception as e:  # noqa: BLE001 - the comparison is the point
                return (
                    "error",
                    type(e),
                    re.sub(r"0x[0-9a-f]+", "", str(e).split("\n")[0]),
                    tuple(seen),
                )

        cases = [
            (lambda: ns.u.default.call1(a), lambda: ns.u.default(a)),
            (lambda: ns.b.default.call2(a, b), lambda: ns.b.default(a, b)),
            (lambda: ns.s.default.call2(a, second), lambda: ns.s.default(a, second)),
            (lambda: ns.t.default.call3(a, b, c), lambda: ns.t.default(a, b, c)),
            (lambda: ns.t.default.call3(a, b, second), lambda: ns.t.default(a, b, second)),
            (lambda: ns.o.default.call3(a, b, second), lambda: ns.o.default(a, b, second)),
            (lambda: ns.w.default.call3(a, b, second), lambda: ns.w.default(a, b, second)),
            (lambda: ns.w.default.call3(a, second, 1), lambda: ns.w.default(a, second, 1)),
            (
                lambda: ns.k.default.call2k(a, b, {"alpha": second}),
                lambda: ns.k.default(a, b, alpha=second),
            ),
            (
                lambda: ns.k.default.call2k(a, second, {"alpha": 2}),
                lambda: ns.k.default(a, second, alpha=2),
            ),
            (
                lambda: ns.v.default.call3k(a, b, c, {"value": second}),
                lambda: ns.v.default(a, b, c, value=second),
            ),
            (
                lambda: ns.v.default.call3k(a, b, second, {"value": 0.5}),
                lambda: ns.v.default(a, b, second, value=0.5),
            ),
            # A tensor by keyword: its bits count (the full path).
            (
                lambda: ns.g.default.call2k(a, b, {"w": second}),
                lambda: ns.g.default(a, b, w=second),
            ),
        ]
        guards = {
            "none": _Null,
            "exclude_autograd": lambda: exclude_keys(
                DispatchKey.AutogradCPU, DispatchKey.AutogradMeta
            ),
            "include_meta": lambda: include_keys(DispatchKey.Meta),
            "no_grad": _NoGrad,
        }
        for fast, general in cases:
            with guards[tls]():
                assert outcome(fast) == outcome(general)
    finally:
        library.destroy()


class _Null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


class _NoGrad:
    """Grad mode off, as the autograd engine sets it (dispatch._tls.state.grad_enabled)."""

    def __enter__(self) -> None:
        from dispatch import _tls

        self._prev = _tls.state.grad_enabled
        _tls.set_grad_mode(False)

    def __exit__(self, *exc: object) -> None:
        from dispatch import _tls

        _tls.set_grad_mode(self._prev)

"""Tests for dispatch._schema: parsing, printing, the data model, and binding calls."""

from __future__ import annotations

import ast
import doctest
import fractions
import math
import pickle
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatch import _schema, _schema_bind, _schema_parse, _schema_types
from dispatch._schema import (
    NO_DEFAULT,
    VARARGS_KEY,
    AliasInfo,
    Argument,
    BaseType,
    EnumDefault,
    FunctionSchema,
    ListType,
    OptionalType,
    Return,
    SchemaBindError,
    SchemaParseError,
    is_tensor_like,
    parse_schema,
)

T = BaseType("Tensor")
INT = BaseType("int")


class FakeTensor:
    _dispatch_bits = 1


class Index:
    """Not an int, but usable as one (like a NumPy integer)."""

    def __index__(self) -> int:
        return 3


EXAMPLES = [
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "ns::name(Tensor x) -> Tensor",
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)"
    " -> Tensor",
    "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
    "unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]",
    "cat(Tensor[] tensors, int dim=0) -> Tensor",
    "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    "conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, "
    "SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor",
    "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
    "Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
    "div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
    "gelu(Tensor self, *, str approximate='none') -> Tensor",
    'gelu(Tensor self, *, str approximate="none") -> Tensor',
    r"""f(str a='it\'s', str b="say \"hi\"", str c='back\\slash\n\ttab', str d="") -> ()""",
    "norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor",
    "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
    "nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor",
    "zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
    "bool? pin_memory=None) -> Tensor",
    "contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
    "linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None) -> Tensor",
    "foo(float x=inf, float y=-inf, float z=nan, float w=-1.5e-3, int r=Mean, complex c=1j) -> ()",
    "foo(int[] dims=[], int[2] kernel=[1, 2], float[] w=[0.5, -1.], bool[3] m=[True, False, True])"
    " -> ()",
    "foo(Tensor?[] i, int[]? x=None, *, Tensor(a!)[] outs, Tensor(b!)? maybe) -> ()",
    "r0(Tensor x) -> ()",
    "r1(Tensor x) -> (Tensor, Tensor)",
    "r2(Tensor(b!) x) -> (Tensor a, Tensor(b!) b)",
    "r3(Tensor x) -> Tensor[]",
    "r4(Tensor x) -> int",
    "r5(Tensor x) -> float",
    "r6(Tensor x) -> bool",
    "r7(Tensor x) -> Scalar",
    "r8(Tensor x) -> ScalarType",
    "r9(Tensor(a!)[] x) -> Tensor(a!)[]",
    "format(str self, ...) -> str",
    "unpack(Any tup) -> ...",
    "mixed(Tensor x, ...) -> (Tensor, ...)",
    "__and__.Tensor(Tensor self, Tensor other) -> Tensor",
    "types(Generator? g, Dimname d, complex c, Stream s, Storage st, Any a, Device dev) -> ()",
    "nested(Tensor[][] xs, int[]?[] ys, Tensor[](b!) zs) -> ()",
    "aliases(Tensor(b|a) x, Tensor(*) y, Tensor(a! -> a|*) z) -> Tensor(b|a)",
    "  spaced :: op . ov ( Tensor ( a ! ) [ ] x , int [ 2 ] ? y = [ 1 , 2 ] ) -> ( Tensor ( a ! ) ) ",
    "lines(\n    Tensor self,\n    *,\n    Scalar alpha=1\n) -> Tensor",
]


@pytest.mark.parametrize("text", EXAMPLES)
def test_examples_round_trip(text: str) -> None:
    schema = parse_schema(text)
    again = parse_schema(str(schema))
    assert again == schema
    assert hash(again) == hash(schema)
    assert str(again) == str(schema)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        (
            "add.Tensor( Tensor self,Tensor other ,*,Scalar alpha = 1 )->Tensor",
            "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
        ),
        (
            'gelu(Tensor self, *, str approximate="none") -> Tensor',
            "gelu(Tensor self, *, str approximate='none') -> Tensor",
        ),
        (
            r'f(str s="a\'b\"c\\d\n") -> ()',
            r"f(str s='a\'b\"c\\d\n') -> ()".replace('\\"', '"'),
        ),
        (
            "f(float x=1, float y=-1.5e-3, float z=-inf) -> ()",
            "f(float x=1.0, float y=-0.0015, float z=-inf) -> ()",
        ),  # fmt: skip
        ("f(Tensor x) -> (Tensor)", "f(Tensor x) -> Tensor"),
        ("f(Tensor x) -> (Tensor y)", "f(Tensor x) -> (Tensor y)"),
        ("f(Tensor[](a!) x) -> ()", "f(Tensor(a!)[] x) -> ()"),
        ("f(Tensor(a -> a) x) -> ()", "f(Tensor(a) x) -> ()"),
        (
            "f(complex a=1j, complex b=-2.5j, complex c=1-2j) -> ()",
            "f(complex a=1.0j, complex b=-2.5j, complex c=1.0-2.0j) -> ()",
        ),  # fmt: skip
        ("f(...) -> ...", "f(...) -> ..."),
        (
            "f(int[2] k=[1,2], Any a=[None, 'x', [1.5]]) -> ()",
            "f(int[2] k=[1, 2], Any a=[None, 'x', [1.5]]) -> ()",
        ),  # fmt: skip
    ],
)
def test_canonical_text(text: str, canonical: str) -> None:
    assert str(parse_schema(text)) == canonical


def test_add_tensor_model() -> None:
    s = parse_schema("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    assert s.name == "add" and s.overload_name == "Tensor" and s.qualified_name == "add.Tensor"
    assert s.namespace == "" and s.base_name == "add"
    assert s.arguments == (
        Argument("self", T),
        Argument("other", T),
        Argument("alpha", BaseType("Scalar"), 1, kwarg_only=True),
    )
    assert s.returns == (Return(None, T),)
    assert [a.name for a in s.positional] == ["self", "other"]
    assert [a.name for a in s.kwarg_only] == ["alpha"]
    assert s.num_positional == 2 and s.min_positional == 2
    assert s.tensor_arg_indices == ((0, "self", "tensor"), (1, "other", "tensor"))
    assert not s.is_mutable and s.mutated_args == ()
    assert not s.is_vararg and not s.is_varret
    alpha = s.arguments[2]
    assert alpha.has_default and type(alpha.default) is int
    assert not s.arguments[0].has_default and s.arguments[0].default is NO_DEFAULT


def test_namespace_and_with_name() -> None:
    s = parse_schema("ns::name(Tensor x) -> Tensor")
    assert s.name == "ns::name" and s.namespace == "ns" and s.base_name == "name"
    assert s.qualified_name == "ns::name"
    t = parse_schema("relu(Tensor x) -> Tensor").with_name("lib::relu", "default")
    assert str(t) == "lib::relu.default(Tensor x) -> Tensor"
    assert t.with_name("lib::relu2").overload_name == "default"
    with pytest.raises(ValueError, match="operator name"):
        t.with_name("a::b::c")


def test_inplace_and_out_alias_info() -> None:
    s = parse_schema("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)")
    write = AliasInfo(("a",), ("a",), True)
    assert s.arguments[0].alias_info == write and s.arguments[0].is_write
    assert s.returns[0].alias_info == write
    assert s.is_mutable and s.mutated_args == ("self",)
    out = parse_schema(EXAMPLES[3])
    assert out.mutated_args == ("out",) and out.arguments[3].kwarg_only
    assert str(write) == "a!" and str(AliasInfo(("a",))) == "a"
    assert str(AliasInfo(("a",), ("*",))) == "a -> *"
    assert AliasInfo(("a",)) == AliasInfo(("a",), ("a",), False)


def test_types_and_tensor_kinds() -> None:
    s = parse_schema(
        "f(Tensor a, Tensor? b, Tensor[] c, Tensor?[] d, int[1]? e, Tensor[]? f, "
        "SymInt[2] g, int h) -> ()"
    )
    types = [a.type for a in s.arguments]
    assert types[:5] == [
        T,
        OptionalType(T),
        ListType(T),
        ListType(OptionalType(T)),
        OptionalType(ListType(INT, 1)),
    ]
    assert [str(t) for t in types] == [
        "Tensor", "Tensor?", "Tensor[]", "Tensor?[]", "int[1]?", "Tensor[]?", "SymInt[2]", "int",
    ]  # fmt: skip
    kinds = [t.tensor_kind for t in types]
    assert kinds == [
        "tensor", "optional_tensor", "tensor_list", "tensor_list", None, "tensor_list", None, None,
    ]  # fmt: skip
    assert [t.is_tensor_like for t in types] == [k is not None for k in kinds]
    assert s.tensor_arg_indices == (
        (0, "a", "tensor"),
        (1, "b", "optional_tensor"),
        (2, "c", "tensor_list"),
        (3, "d", "tensor_list"),
        (5, "f", "tensor_list"),
    )


def test_defaults_model() -> None:
    s = parse_schema(EXAMPLES[22])  # foo(float x=inf, ... complex c=1j)
    d = {a.name: a.default for a in s.arguments}
    assert d["x"] == math.inf and d["y"] == -math.inf and math.isnan(d["z"])  # type: ignore
    assert d["w"] == -1.5e-3 and d["c"] == 1j
    assert d["r"] == EnumDefault("Mean") and str(d["r"]) == "Mean"
    s = parse_schema(EXAMPLES[23])
    d = {a.name: a.default for a in s.arguments}
    assert d == {"dims": (), "kernel": (1, 2), "w": (0.5, -1.0), "m": (True, False, True)}
    conv = parse_schema(EXAMPLES[10])
    assert conv.arguments[3].default == 1 and conv.arguments[2].default is None
    assert str(conv.arguments[3]) == "SymInt[2] stride=1"
    ln = parse_schema(EXAMPLES[11])
    assert ln.arguments[4].default == 1e-05 and ln.arguments[5].default is True
    assert parse_schema(EXAMPLES[20]).arguments[1].default == EnumDefault("contiguous_format")
    gelu = parse_schema(EXAMPLES[15])
    assert [a.default for a in gelu.arguments] == ["it's", 'say "hi"', "back\\slash\n\ttab", ""]
    assert str(Argument("dim", OptionalType(ListType(INT, 1)), None)) == "int[1]? dim=None"
    # float defaults are floats; defaults compare by type and exact value
    assert type(parse_schema("f(float x=1) -> ()").arguments[0].default) is float
    assert parse_schema("f(Scalar x=1) -> ()") != parse_schema("f(Scalar x=1.0) -> ()")
    assert parse_schema("f(Scalar x=1) -> ()") != parse_schema("f(Scalar x=True) -> ()")
    assert parse_schema("f(float x=0.0) -> ()") != parse_schema("f(float x=-0.0) -> ()")
    assert parse_schema("f(float x=nan) -> ()") == parse_schema("f(float x=nan) -> ()")


def test_returns_model() -> None:
    s = parse_schema(EXAMPLES[4])
    assert s.returns == (Return("values", T), Return("indices", T))
    assert parse_schema("f(Tensor x) -> ()").returns == ()
    assert parse_schema(EXAMPLES[7]).returns == (Return(None, ListType(T), AliasInfo(("a",))),)
    assert parse_schema(EXAMPLES[7]).arguments[0].alias_info == AliasInfo(("a",), ("*",))
    r = parse_schema("f(Tensor(b!) x) -> (Tensor a, Tensor(b!) b)").returns
    assert r[1] == Return("b", T, AliasInfo(("b",), is_write=True))
    assert parse_schema("f(Tensor x) -> ScalarType").returns[0].type == BaseType("ScalarType")
    v = parse_schema("format(str self, ...) -> str")
    assert v.is_vararg and not v.is_varret and len(v.arguments) == 1
    assert parse_schema("unpack(Any tup) -> ...").is_varret


def test_kwarg_only_and_min_positional() -> None:
    s = parse_schema(EXAMPLES[5])  # sum.dim_IntList
    assert [a.kwarg_only for a in s.arguments] == [False, False, False, True]
    assert s.num_positional == 3 and s.min_positional == 2
    assert s.arguments[1].type == OptionalType(ListType(INT, 1))
    assert not s.arguments[1].has_default
    div = parse_schema(EXAMPLES[12])
    assert div.arguments[2].kwarg_only and not div.arguments[2].has_default


@pytest.mark.parametrize(
    ("text", "column", "message"),
    [
        ("foo(Tensor x, int -> Tensor", 18, "expected an argument name but found '->'"),
        ("foo(Tensor x", 12, "expected ',' or ')' but found end of input"),
        ("foo(Tensor x) Tensor", 14, "expected '->' but found 'Tensor'"),
        ("foo(Tensor x)", 13, "expected '->'"),
        ("foo(Foo x) -> Tensor", 4, "unknown type specifier 'Foo'. Common valid schema types"),
        ("foo(Tensor x) -> Bar", 17, "unknown type specifier 'Bar'"),
        ("foo(int x=1.5) -> ()", 10, "int cannot default to float 1.5"),
        ("foo(bool b=3) -> ()", 11, "bool cannot default to int 3"),
        ("foo(Tensor t=1) -> ()", 13, "Tensor can only default to None"),
        ("foo(Tensor t=None) -> ()", 13, "Tensor can only default to None"),
        ("foo(Tensor? t=1) -> ()", 14, "Tensor can only default to None"),
        ("foo(str s=1) -> ()", 10, "str cannot default to int 1"),
        ("foo(int[] s=1) -> ()", 12, "int[] cannot default to int 1"),
        ("foo(int[2] s=[1, 'a']) -> ()", 13, "int cannot default to str 'a'"),
        ("foo(int x, int x) -> ()", 15, "duplicate argument name 'x'"),
        ("foo(int a=1, int b) -> ()", 17, "non-default argument 'b' follows default argument"),
        ("foo(*, int a, *, int b) -> ()", 14, "'*' appears twice"),
        ("foo(int a, *) -> ()", 12, "keyword-only arguments after '*'"),
        ("foo(int a, *, ...) -> ()", 11, "expected keyword-only arguments after '*'"),
        ("foo(Tensor x) -> Tensor garbage more", 32, "expected end of schema but found 'more'"),
        ("foo(Tensor x) -> (Tensor, Tensor) x", 34, "expected end of schema"),
        ("foo(Tensor x) -> (Tensor a, Tensor a)", 28, "duplicate return name 'a'"),
        ("foo(str s='abc) -> ()", 10, "unterminated string"),
        ("foo(str s='abc\\", 10, "unterminated string"),
        (r"foo(str s='a\qb') -> ()", 12, "unknown escape '\\q'"),
        ("foo(int x) -> () $", 17, "unexpected character '$'"),
        ("foo(int[0] x) -> ()", 8, "list size must be a positive integer"),
        ("foo(int[1.5] x) -> ()", 8, "list size must be a positive integer"),
        ("foo(int?? x) -> ()", 8, "cannot be optional twice"),
        ("foo(Tensor(a)[](b) x) -> ()", 15, "only one alias annotation"),
        ("foo(Tensor(a x) -> ()", 13, "expected ')' to close the alias annotation"),
        ("foo(Tensor(!) x) -> ()", 11, "expected an alias set"),
        ("foo(..., int x) -> ()", 7, "expected ')' after '...'"),
        ("foo.(int x) -> ()", 4, "expected an overload name"),
        ("::foo(int x) -> ()", 0, "expected an operator name"),
        ("", 0, "expected an operator name but found end of input"),
        ("foo(complex c=1+2) -> ()", 16, "expected an imaginary part"),
        ("foo(int x=-Mean) -> ()", 11, "expected a default value"),
        ("foo(int[] x=[1 2]) -> ()", 15, "expected ',' or ']'"),
    ],
)
def test_parse_errors(text: str, column: int, message: str) -> None:
    with pytest.raises(SchemaParseError) as info:
        parse_schema(text)
    err = info.value
    assert message in str(err)
    assert err.column == column and err.schema == text
    assert f"at column {column}:" in str(err)
    lines = str(err).splitlines()
    if "\n" not in text:
        assert lines[-1] == "  " + " " * column + "^"
        assert lines[-2] == "  " + text
    assert isinstance(err, RuntimeError)
    assert pickle.loads(pickle.dumps(err)).column == column


def test_parse_error_caret_on_multiline_and_long_input() -> None:
    with pytest.raises(SchemaParseError) as info:
        parse_schema("foo(\n  Tensor x,\n  Bad y) -> ()")
    assert info.value.column == 19
    assert str(info.value).endswith("\n    Bad y) -> ()\n    ^")
    long = "foo(" + ", ".join(f"int a{i}" for i in range(100)) + ", Bad y) -> ()"
    with pytest.raises(SchemaParseError) as info:
        parse_schema(long)
    excerpt, caret = str(info.value).splitlines()[-2:]
    assert excerpt[caret.index("^") :].startswith("Bad y")
    assert len(excerpt) <= 102


def test_parse_schema_wants_str() -> None:
    with pytest.raises(TypeError, match="as a str"):
        parse_schema(b"f() -> ()")  # type: ignore[arg-type]


def test_constructor_validation() -> None:
    with pytest.raises(ValueError, match="unknown type"):
        BaseType("Foo")
    with pytest.raises(ValueError, match="optional"):
        OptionalType(OptionalType(INT))
    with pytest.raises(ValueError, match="positive"):
        ListType(INT, 0)
    with pytest.raises(ValueError, match="cannot default"):
        Argument("x", INT, 1.5)
    with pytest.raises(ValueError, match="identifier"):
        Argument("1x", INT)
    with pytest.raises(ValueError, match="follows keyword-only"):
        FunctionSchema("f", "", (Argument("a", INT, kwarg_only=True), Argument("b", INT)), ())
    with pytest.raises(ValueError, match="identifier"):
        EnumDefault("None")
    with pytest.raises(ValueError, match="alias set"):
        AliasInfo(("a b",))
    # lists become tuples, so schemas stay hashable
    s = FunctionSchema("f", "", [Argument("x", ListType(INT), [1, 2])], [])  # type: ignore
    assert s.arguments[0].default == (1, 2) and hash(s) == hash(parse_schema(str(s)))


def test_pickle_and_hash() -> None:
    schemas = [parse_schema(t) for t in EXAMPLES]
    s = schemas[0]
    s.bind((FakeTensor(), FakeTensor()))  # fills the caches
    assert pickle.loads(pickle.dumps(s)) == s
    assert len(set(schemas + [parse_schema(t) for t in EXAMPLES])) == len(set(EXAMPLES)) - 1


# ---------------------------------------------------------------------------------------
# Binding

ADD = parse_schema("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
HEADER = "core::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"


def test_bind_success() -> None:
    a, b = FakeTensor(), FakeTensor()
    assert ADD.bind((a, b), {}) == {"self": a, "other": b, "alpha": 1}
    assert ADD.bind((a,), {"other": b, "alpha": 2.5}) == {"self": a, "other": b, "alpha": 2.5}
    assert list(ADD.bind((), {"alpha": 3, "other": b, "self": a})) == ["self", "other", "alpha"]
    assert ADD.bind((a, b)) == ADD.bind((a, b), None)
    ADD.check((a, b), {"alpha": a})  # a tensor is a Scalar
    conv = parse_schema(EXAMPLES[10])
    bound = conv.bind((a, b), {"padding": (1, 1)})
    assert bound == {
        "input": a, "weight": b, "bias": None, "stride": 1, "padding": (1, 1),
        "dilation": 1, "groups": 1,
    }  # fmt: skip
    s = parse_schema(EXAMPLES[5])  # sum.dim_IntList
    assert s.bind((a, None), {}) == {"self": a, "dim": None, "keepdim": False, "dtype": None}
    # A ScalarType is the tensor library's object; without one loaded, any non-None value.
    dtype = __import__("tensor").float32 if "tensor" in sys.modules else "float32"
    assert s.bind((a, [0, 1], True), {"dtype": dtype})["dtype"] is dtype
    assert parse_schema("f(Tensor[] xs) -> ()").bind(((a, b),)) == {"xs": (a, b)}
    assert parse_schema("f() -> ()").bind(()) == {}


def test_bind_varargs() -> None:
    s = parse_schema("format(str self, ...) -> str")
    assert s.bind(("{} {}", 1, 2)) == {"self": "{} {}", VARARGS_KEY: (1, 2)}
    assert s.bind(("x",)) == {"self": "x", VARARGS_KEY: ()}


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (
            (FakeTensor(), "x"),
            {},
            f"{HEADER}: argument 'other' (position 2) must be Tensor, not str",
        ),
        (
            (FakeTensor(),),
            {"other": 1},
            f"{HEADER}: argument 'other' (position 2) must be Tensor, not int",
        ),
        (
            (FakeTensor(), FakeTensor()),
            {"alpha": "x"},
            f"{HEADER}: argument 'alpha' (position 3) must be Scalar, not str",
        ),
        (
            (FakeTensor(), FakeTensor(), 1),
            {},
            f"{HEADER}: expected at most 2 positional arguments but got 3",
        ),
        ((FakeTensor(),), {}, f"{HEADER}: missing required argument 'other' (position 2)"),
        ((), {"other": FakeTensor()}, "missing required argument 'self' (position 1)"),
        (
            (FakeTensor(), FakeTensor()),
            {"beta": 1},
            f"{HEADER}: got an unexpected keyword argument 'beta'; "
            "valid keywords are self, other, alpha",
        ),
        (
            (FakeTensor(), FakeTensor()),
            {"other": FakeTensor()},
            f"{HEADER}: got multiple values for argument 'other' (position 2)",
        ),
    ],
)
def test_bind_errors(args: tuple[object, ...], kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(SchemaBindError) as info:
        ADD.bind(args, kwargs, op_name="core::add.Tensor")
    assert message in str(info.value)
    assert isinstance(info.value, TypeError)
    with pytest.raises(SchemaBindError):
        ADD.check(args, kwargs, op_name="core::add.Tensor")


def test_bind_error_defaults_to_qualified_name_and_kwarg_only() -> None:
    out = parse_schema(EXAMPLES[3])
    with pytest.raises(SchemaBindError) as info:
        out.bind((FakeTensor(), FakeTensor()), {})
    assert str(info.value) == (
        f"{EXAMPLES[3]}: missing required keyword-only argument 'out' (position 4)"
    )
    with pytest.raises(SchemaBindError, match="at most 1 positional argument but got 2"):
        parse_schema("f(int x) -> ()").bind((1, 2))


def test_bind_list_errors_say_which_element() -> None:
    s = parse_schema("f(int[2] k, Tensor?[] i=[]) -> ()")
    assert s.bind(([1, 2, 3],))["k"] == [1, 2, 3]  # N is a broadcast hint, as in PyTorch
    with pytest.raises(SchemaBindError, match=r"'k' \(position 1\) must be int\[2\], not str"):
        s.bind(("12",))
    with pytest.raises(
        SchemaBindError, match="must be int\\[2\\], not tuple whose element 1 is str"
    ):
        s.bind(((1, "2"),))
    with pytest.raises(
        SchemaBindError, match="must be Tensor\\?\\[\\], not list whose element 0 is int"
    ):
        s.bind((1, [3]))
    assert s.bind((1,)) == {"k": 1, "i": ()}  # int[N] takes one int, as PyTorch broadcasts
    t = FakeTensor()
    assert s.bind(((1, 2), [None, t]))["i"] == [None, t]


@pytest.mark.parametrize(
    ("type_text", "good", "bad"),
    [
        ("Tensor", [FakeTensor()], [None, 1, [FakeTensor()]]),
        ("Tensor?", [None, FakeTensor()], [1]),
        ("Tensor[]", [[], (FakeTensor(),), [FakeTensor(), FakeTensor()]], [FakeTensor(), [None]]),
        ("Tensor?[]", [[None, FakeTensor()]], [[1]]),
        ("int", [0, -5, 2**70, Index()], [True, 1.0, None, "1", FakeTensor()]),
        ("SymInt", [3, Index()], [False, 2.5]),
        ("float", [1.5, 2, fractions.Fraction(1, 3), math.inf], [True, 1j, "1.0", None]),
        ("complex", [1j, 1.5, 2], [True, "1j"]),
        ("bool", [True, False], [1, 0, None, "True"]),
        ("str", ["", "x"], [b"x", None, 1]),
        ("Scalar", [1, 1.5, True, 1j, FakeTensor(), fractions.Fraction(1, 2)], ["1", None, [1]]),
        # A library type no check was registered for (tensor registers ScalarType's).
        ("Stream", [object(), "s", 6], [None]),
        ("Any", [1, object()], [None]),
        ("int[]", [[], (1, 2), [Index()]], [1, [1.5], "12"]),
        ("int[2]", [[1, 2], (3, 4), 5, [1, 2, 3]], [[1.5], 1.5, None]),
        ("float[2]", [[1.5, 2], 0.5], [[1.5, "x"]]),
        ("bool[3]", [[True, False, True], True], [[1, 0, 1], 1]),
        ("Tensor[2]", [[FakeTensor(), FakeTensor()]], [FakeTensor(), [1]]),
        ("int[1]?", [None, 2, [2]], [[None]]),
        ("str[]", [["a"]], ["a"]),
    ],
)
def test_bind_type_rules(type_text: str, good: list[object], bad: list[object]) -> None:
    s = parse_schema(f"f({type_text} x) -> ()")
    for value in good:
        assert s.bind((value,)) == {"x": value}, value
    for value in bad:
        with pytest.raises(SchemaBindError, match=re.escape(f"must be {type_text}, not ")):
            s.bind((value,))


def test_is_tensor_like() -> None:
    assert is_tensor_like(FakeTensor())
    assert not is_tensor_like(1) and not is_tensor_like(None) and not is_tensor_like([FakeTensor()])


# ---------------------------------------------------------------------------------------
# Properties

SCHEMA_TOKENS = [
    "foo", "ns", "add_", "__and__", "::", ".", "(", ")", "[", "]", "?", "!", "|", "*", "...",
    "->", "-", "+", ",", "=", " ", "\n", "Tensor", "int", "SymInt", "float", "str", "Scalar",
    "Any", "Foo", "a", "b", "x", "self", "0", "1", "2", "1.5", "1e-5", ".5", "1j", "inf", "nan",
    "infj", "'s'", '"d"', "'", '"', "\\", "None", "True", "Mean", "[]", "[2]", "(a!)", "->()",
]  # fmt: skip


def _parse_or_error(text: str) -> None:
    try:
        schema = parse_schema(text)
    except SchemaParseError as e:
        assert 0 <= e.column <= len(text)
        assert e.schema == text
        return
    assert isinstance(schema, FunctionSchema)
    assert parse_schema(str(schema)) == schema


FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.text())
def test_arbitrary_text_parses_or_raises_schema_parse_error(text: str) -> None:
    _parse_or_error(text)


@FUZZ
@given(st.lists(st.sampled_from(SCHEMA_TOKENS), max_size=40).map("".join))
def test_token_soup_parses_or_raises_schema_parse_error(text: str) -> None:
    _parse_or_error(text)


@FUZZ
@given(st.sampled_from(EXAMPLES), st.data())
def test_mutated_examples_parse_or_raise_schema_parse_error(text: str, data: st.DataObject) -> None:
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(text)))
        if data.draw(st.booleans()) and i < len(text):
            text = text[:i] + text[i + 1 :]
        else:
            text = text[:i] + data.draw(st.sampled_from(SCHEMA_TOKENS)) + text[i:]
    _parse_or_error(text)


IDENTS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True)
ENUMS = IDENTS.filter(lambda s: s not in _schema_types.KEYWORD_VALUES).map(EnumDefault)
FLOATS = st.floats(allow_nan=True, allow_infinity=True)
COMPLEX = st.complex_numbers(allow_nan=True, allow_infinity=True)
LITERALS = st.recursive(
    st.none() | st.booleans() | st.integers() | FLOATS | COMPLEX | st.text(max_size=5) | ENUMS,
    lambda inner: st.lists(inner, max_size=3).map(tuple),
    max_leaves=6,
)


@st.composite
def schema_types(draw: st.DrawFn) -> _schema.SchemaType:
    t: _schema.SchemaType = BaseType(draw(st.sampled_from(sorted(_schema_types.BASE_TYPES))))
    for _ in range(draw(st.integers(0, 3))):
        if not isinstance(t, OptionalType) and draw(st.booleans()):
            t = OptionalType(t)
        else:
            t = ListType(t, draw(st.none() | st.integers(1, 5)))
    return t


def defaults_for(t: _schema.SchemaType) -> st.SearchStrategy[object]:
    if isinstance(t, OptionalType):
        return st.none() | defaults_for(t.elem)
    if isinstance(t, ListType):
        items = defaults_for(t.elem)
        lists = st.just(()) if items.is_empty else st.lists(items, max_size=3).map(tuple)
        elem = t.elem
        if t.size and isinstance(elem, BaseType) and elem.name in _schema_types.BROADCAST_ELEMENTS:
            return lists | defaults_for(elem)
        return lists
    # Bare names only where PyTorch's parser takes them (``int reduction=Mean``, ...).
    enums = st.sampled_from(sorted(_schema_types._ENUM_DEFAULTS.get(t.name, ()))).map(EnumDefault)
    by_name: dict[str, st.SearchStrategy[object]] = {
        "Tensor": st.nothing(),
        "int": st.integers() | enums,
        "SymInt": st.integers() | enums,
        "float": FLOATS | st.integers(-(2**60), 2**60),
        "complex": COMPLEX | FLOATS,
        "bool": st.booleans(),
        "str": st.text(),
        "Scalar": st.booleans() | st.integers() | FLOATS | COMPLEX,
        "Any": LITERALS,
    }
    if t.name in _schema_types._ENUM_DEFAULTS:
        return by_name.get(t.name, st.integers() | st.text(max_size=5) | enums)
    return by_name.get(t.name, st.integers() | st.text(max_size=5))


ALIAS_SETS = st.lists(st.sampled_from(["a", "b", "c", "*"]), min_size=1, max_size=2).map(tuple)
ALIASES = st.none() | st.builds(AliasInfo, ALIAS_SETS, st.just(()) | ALIAS_SETS, st.booleans())


@st.composite
def function_schemas(draw: st.DrawFn) -> FunctionSchema:
    names = draw(st.lists(IDENTS, unique=True, max_size=6))
    n_positional = draw(st.integers(0, len(names)))
    args = []
    for i, name in enumerate(names):
        t = draw(schema_types())
        default = draw(st.just(NO_DEFAULT) | defaults_for(t))
        args.append(Argument(name, t, default, i >= n_positional, draw(ALIASES)))
    # Positional arguments with defaults must come last among the positional ones.
    required = [i for i in range(n_positional) if not args[i].has_default]
    for i in range(required[-1] if required else 0):
        args[i] = Argument(args[i].name, args[i].type, NO_DEFAULT, False, args[i].alias_info)
    ret_names = draw(st.lists(st.none() | IDENTS, max_size=4).filter(
        lambda ns: len([n for n in ns if n]) == len({n for n in ns if n})
    ))  # fmt: skip
    returns = [Return(n, draw(schema_types()), draw(ALIASES)) for n in ret_names]
    name = draw(IDENTS | st.tuples(IDENTS, IDENTS).map("::".join))
    overload = draw(st.just("") | IDENTS)
    varargs = draw(st.booleans()), draw(st.booleans())
    return FunctionSchema(name, overload, tuple(args), tuple(returns), *varargs)


@settings(max_examples=300, deadline=None)
@given(function_schemas())
def test_generated_schemas_round_trip(schema: FunctionSchema) -> None:
    text = str(schema)
    parsed = parse_schema(text)
    assert parsed == schema, text
    assert str(parsed) == text
    assert hash(parsed) == hash(schema)


@settings(max_examples=100, deadline=None)
@given(function_schemas())
def test_generated_schemas_bind_their_defaults(schema: FunctionSchema) -> None:
    # Every defaulted argument may be left out; required ones get a value of the right kind.
    if any(a.has_default is False for a in schema.arguments):
        return
    bound = schema.bind(())
    assert list(bound) == [a.name for a in schema.arguments] + (
        [VARARGS_KEY] if schema.is_vararg else []
    )


# ---------------------------------------------------------------------------------------
# Module hygiene


def test_doctests() -> None:
    for module in (_schema, _schema_types, _schema_parse):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0 and result.attempted > 0, module.__name__


def test_imports_only_stdlib() -> None:
    allowed = set(sys.stdlib_module_names)
    for module in (_schema, _schema_types, _schema_bind, _schema_parse):
        tree = ast.parse(Path(module.__file__ or "").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                assert all(a.name.split(".")[0] in allowed for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: only the schema module's siblings
                    siblings = ("_schema", "_schema_types", "_schema_bind", "_schema_parse")
                    assert node.module in (None, *siblings)
                    assert node.module or all(a.name in siblings for a in node.names)
                else:
                    assert (node.module or "").split(".")[0] in allowed | {"__future__"}


# ---------------------------------------------------------------------------------------
# Differential check against PyTorch's own parser

ALLOWED_FAILURES = ("unknown type specifier", "expected a type but found '('")


def _torch_tensor_kind(torch_type: object) -> str | None:
    return {
        "Tensor": "tensor",
        "Optional[Tensor]": "optional_tensor",
        "List[Tensor]": "tensor_list",
        "List[Optional[Tensor]]": "tensor_list",
        "Optional[List[Tensor]]": "tensor_list",
        "Optional[List[Optional[Tensor]]]": "tensor_list",
    }.get(str(torch_type))


@pytest.mark.torch
def test_all_torch_schemas() -> None:
    torch = pytest.importorskip(
        "torch", reason="PyTorch not installed; differential schema check skipped"
    )
    schemas = torch._C._jit_get_all_schemas()
    parsed = 0
    unexpected = []
    for theirs in schemas:
        text = str(theirs)
        try:
            ours = parse_schema(text)
        except SchemaParseError as e:
            # Types outside our set (Dict, t, __torch__ classes, tuples) and one
            # static_runtime schema that really has a duplicate argument name.
            if not e.reason.startswith(ALLOWED_FAILURES) and "static_runtime::" not in text:
                unexpected.append(f"{text}\n{e}")
            continue
        parsed += 1
        assert parse_schema(str(ours)) == ours
        assert ours.name == theirs.name and ours.overload_name == theirs.overload_name
        assert [a.name for a in ours.arguments] == [a.name for a in theirs.arguments], text
        assert [a.kwarg_only for a in ours.arguments] == [a.kwarg_only for a in theirs.arguments], (
            text
        )
        assert [a.has_default for a in ours.arguments] == [
            a.has_default_value() for a in theirs.arguments
        ], text
        assert [a.is_write for a in ours.arguments] == [a.is_write for a in theirs.arguments]
        assert [a.type.tensor_kind for a in ours.arguments] == [
            _torch_tensor_kind(a.type) for a in theirs.arguments
        ], text
        assert len(ours.returns) == len(theirs.returns), text
        assert ours.is_mutable == theirs.is_mutable, text
    assert not unexpected, "\n\n".join(unexpected[:5])
    assert parsed / len(schemas) > 0.9, f"parsed {parsed} of {len(schemas)} torch schemas"


@pytest.mark.torch
@pytest.mark.parametrize(
    "name",
    ["add", "sub", "mul", "sum", "mean", "max", "conv2d", "layer_norm", "cat", "unbind",
     "index", "clamp", "div", "zeros", "arange", "softmax", "topk", "sort", "gelu", "to"],
)  # fmt: skip
def test_common_torch_schemas_parse(name: str) -> None:
    torch = pytest.importorskip(
        "torch", reason="PyTorch not installed; differential schema check skipped"
    )
    texts = [str(s) for s in torch._C._jit_get_all_schemas() if s.name == f"aten::{name}"]
    parsed = []
    for text in texts:
        try:
            parsed.append(parse_schema(text))
        except SchemaParseError as e:
            # only the generic TorchScript overloads (t[], Dict(...)) may fail
            assert e.reason.startswith(ALLOWED_FAILURES), text
    assert len(parsed) >= max(1, len(texts) // 2)
    assert all(s.name == f"aten::{name}" for s in parsed)


# -- Note [Tokenizing in one pass] -------------------------------------------------------------
_TOKEN_PIECES = st.sampled_from(
    [
        "ns", "::", "add", ".", "Tensor", "(", ")", "[", "]", ",", "*", "?", "!", "|", "=",
        "->", "...", "a", "-", "+", "1", "2.5", "1e-3", "3j", ".5", "x_1", " ", "  ", "\t",
        "\n", "\xa0", "\u2003", "\x1c", "$", "'s'", '"\\n"', "'", "é", "int[2]",
    ]
)  # fmt: skip


def _tokens_or_error(tokenize: object, text: str) -> object:
    try:
        return [(t.kind, t.text, t.col, t.value) for t in tokenize(text)]  # type: ignore[operator]
    except _schema_parse.SchemaParseError as e:
        return ("error", str(e), e.column)


@settings(max_examples=500, deadline=None)
@given(pieces=st.lists(_TOKEN_PIECES, max_size=14))
def test_the_one_pass_tokenizer_agrees_with_the_scanner(pieces: list[str]) -> None:
    """The same tokens, or the same error at the same column, for any text."""
    text = "".join(pieces)
    fast = _tokens_or_error(_schema_parse._tokenize, text)
    assert fast == _tokens_or_error(_schema_parse._tokenize_slow, text), text


def test_the_one_pass_tokenizer_agrees_on_the_builtin_schemas() -> None:
    import tensor  # noqa: F401 - defines the built-in operators
    from dispatch._operator import OPERATORS

    texts = [str(op._schema) for op in OPERATORS.values() if op._schema is not None]
    assert len(texts) > 400
    for text in texts:
        fast = _tokens_or_error(_schema_parse._tokenize, text)
        assert fast == _tokens_or_error(_schema_parse._tokenize_slow, text), text


# -- Note [Argument parse cache] ---------------------------------------------------------------
def _parse_outcome(text: str) -> object:
    try:
        return _schema_parse._Parser(text).schema()
    except _schema_parse.SchemaParseError as e:
        return ("error", str(e), e.column)


def _same_with_and_without_the_argument_cache(text: str) -> None:
    warm = _parse_outcome(text)  # the process's cache, warmed by whatever ran before
    saved = _schema_parse._ARGUMENTS
    try:
        _schema_parse._ARGUMENTS = _NoCache()
        fresh = _parse_outcome(text)  # every argument parsed afresh
        _schema_parse._ARGUMENTS = {}
        _parse_outcome(text)
        again = _parse_outcome(text)  # its own arguments cached by the parse before
    finally:
        _schema_parse._ARGUMENTS = saved
    assert warm == fresh == again, text


class _NoCache(dict):  # type: ignore[type-arg]
    def __setitem__(self, key: object, value: object) -> None:
        pass


@settings(max_examples=300, deadline=None)
@given(function_schemas())
def test_the_argument_cache_gives_fresh_parses_generated(schema: FunctionSchema) -> None:
    _same_with_and_without_the_argument_cache(str(schema))


@FUZZ
@given(st.sampled_from(EXAMPLES), st.data())
def test_the_argument_cache_gives_fresh_parses_mutated(text: str, data: st.DataObject) -> None:
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(text)))
        if data.draw(st.booleans()) and i < len(text):
            text = text[:i] + text[i + 1 :]
        else:
            text = text[:i] + data.draw(st.sampled_from(SCHEMA_TOKENS)) + text[i:]
    _same_with_and_without_the_argument_cache(text)


def test_the_argument_cache_keys_on_the_exact_text_and_keyword_only() -> None:
    a = parse_schema("cache_a(int x, str s=',)', *, int y=1) -> Tensor")
    b = parse_schema("cache_b(int y=1, *, int x) -> Tensor")  # same text, other kind
    assert [x.kwarg_only for x in a.arguments] == [False, False, True]
    assert [x.kwarg_only for x in b.arguments] == [False, True]
    assert a.arguments[1].default == ",)"
    with pytest.raises(SchemaParseError) as e:  # a cached text, then a bad token after it
        parse_schema("cache_c(int x y) -> Tensor")
    assert e.value.column == 14
    for text in ("cache_d(int x, int x) -> Tensor", "cache_e(int x,  int x) -> Tensor"):
        _same_with_and_without_the_argument_cache(text)  # the duplicate's column

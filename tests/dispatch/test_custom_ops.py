"""infer_schema (against PyTorch's where installed) and custom_op."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from dispatch import custom_op, dump_table, infer_schema, register_fake, register_kernel

from .test_tables import CPU_BITS, META_BITS, FakeTensor

P = inspect.Parameter


def sig_fn(params: list[tuple[str, Any, Any, Any]], ret: Any) -> Callable[..., Any]:
    """A function whose signature is (name, kind, annotation, default) with real types."""

    def fn(*args: Any, **kwargs: Any) -> Any:
        return None

    fn.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [P(n, k, annotation=a, default=d) for n, k, a, d in params], return_annotation=ret
    )
    return fn


PK, KW, E = P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY, P.empty


def cases(T: type) -> list[tuple[list[Any], Any, Any, str]]:
    """(params, return, mutates_args, our expected schema) with T as the tensor class."""
    return [
        ([("x", PK, T, E)], T, (), "(Tensor x) -> Tensor"),
        (
            [("x", PK, T, E), ("y", PK, T | None, E), ("n", PK, int, 2), ("alpha", KW, float, 1.0)],
            T,
            (),
            "(Tensor x, Tensor? y, SymInt n=2, *, float alpha=1.0) -> Tensor",
        ),
        (
            [("xs", PK, list[T], E), ("dims", PK, Sequence[int], E)],
            tuple[T, T],
            (),
            "(Tensor[] xs, SymInt[] dims) -> (Tensor, Tensor)",
        ),
        (
            [("x", PK, T, E), ("flag", PK, bool, False), ("mode", PK, str, "a")],
            None,
            (),
            '(Tensor x, bool flag=False, str mode="a") -> ()',
        ),
        ([("x", PK, T, E), ("out", PK, T, E)], None, ("out",), "(Tensor x, Tensor(a1!) out) -> ()"),
        (
            [("x", PK, Sequence[float], E), ("ys", PK, list[T | None], E)],
            list[T],
            (),
            "(float[] x, Tensor?[] ys) -> Tensor[]",
        ),
        (
            [("a", PK, T, E), ("b", PK, T, E)],
            None,
            "unknown",
            "(Tensor(a0!) a, Tensor(a1!) b) -> ()",
        ),
        ([("x", PK, T | None, None)], T, (), "(Tensor? x=None) -> Tensor"),
        # int | float | bool is a Scalar, in any order, optional and in lists (torch does so).
        (
            [("x", PK, T, E), ("s", PK, int | float | bool, E)],
            T,
            (),
            "(Tensor x, Scalar s) -> Tensor",
        ),
        ([("s", PK, float | bool | int | None, None)], T, (), "(Scalar? s=None) -> Tensor"),
        ([("s", PK, Sequence[int | float | bool], E)], T, (), "(Scalar[] s) -> Tensor"),
    ]


@pytest.mark.parametrize("index", range(len(cases(FakeTensor))))
def test_infer_schema(index: int) -> None:
    params, ret, mutates, expected = cases(FakeTensor)[index]
    assert infer_schema(sig_fn(params, ret), mutates_args=mutates) == expected


@pytest.mark.torch
@pytest.mark.parametrize("index", range(len(cases(FakeTensor))))
def test_infer_schema_matches_torch(index: int) -> None:
    torch = pytest.importorskip("torch", reason="PyTorch not installed: differential check skipped")
    params, ret, mutates, _ = cases(torch.Tensor)[index]
    ours = cases(FakeTensor)[index]
    theirs = torch.library.infer_schema(sig_fn(params, ret), mutates_args=mutates)
    assert infer_schema(sig_fn(ours[0], ours[1]), mutates_args=mutates) == theirs


def test_infer_schema_string_annotations_resolve_without_eval() -> None:
    def f(x: FakeTensor, dims: Sequence[int] | None = None) -> FakeTensor: ...

    assert infer_schema(f, mutates_args=()) == "(Tensor x, SymInt[]? dims=None) -> Tensor"
    assert isinstance(f.__annotations__["x"], str)  # postponed annotations in this file


@pytest.mark.parametrize(
    ("params", "ret", "mutates", "message"),
    [
        ([("x", PK, E, E)], FakeTensor, (), "parameter x must have a type annotation"),
        ([("x", PK, dict, E)], FakeTensor, (), "parameter x has unsupported type"),
        ([("x", PK, FakeTensor, E)], FakeTensor, ("y",), r"mutates_args contains \['y'\]"),
        ([("n", PK, int, E)], None, ("n",), "is in mutates_args but is not a Tensor"),
        ([("x", PK, FakeTensor, [1])], None, (), "unsupported default"),
        ([("x", PK, int | str, E)], None, (), "unsupported union type"),
        ([("x", PK, int | float, E)], None, (), "unsupported union type"),
        ([("x", P.POSITIONAL_ONLY, FakeTensor, E)], None, (), "positional-only parameters"),
        ([("x", PK, FakeTensor, E)], FakeTensor | None, (), "unsupported optional type"),
        ([("x", PK, FakeTensor, E)], tuple[FakeTensor, FakeTensor | None], (), "optional type"),
    ],
)
def test_infer_schema_errors_name_the_parameter(
    params: list[Any], ret: Any, mutates: Any, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        infer_schema(sig_fn(params, ret), mutates_args=mutates)
    torch = importlib.import_module("torch") if importlib.util.find_spec("torch") else None
    if torch is not None:  # torch refuses the same annotations
        swap = {FakeTensor: torch.Tensor, FakeTensor | None: torch.Tensor | None}
        theirs = [(n, k, swap.get(a, a), d) for n, k, a, d in params]
        if ret == tuple[FakeTensor, FakeTensor | None]:
            ret = tuple[torch.Tensor, torch.Tensor | None]
        with pytest.raises(ValueError):
            torch.library.infer_schema(sig_fn(theirs, swap.get(ret, ret)), mutates_args=mutates)


def test_custom_op_default_kernel_device_kernels_and_fake() -> None:
    @custom_op("test_custom::mul2", mutates_args=())
    def mul2(x: FakeTensor, k: int = 2) -> FakeTensor:
        return ("default", k)  # type: ignore[return-value]

    try:
        assert str(mul2.schema) == "test_custom::mul2(Tensor x, SymInt k=2) -> Tensor"
        cpu, meta = FakeTensor(CPU_BITS), FakeTensor(META_BITS)
        assert mul2(cpu) == ("default", 2)  # CompositeExplicitAutograd covers every backend
        assert mul2(meta, 3) == ("default", 3)

        @mul2.register_kernel("cpu")
        def mul2_cpu(x: FakeTensor, k: int = 2) -> Any:
            return ("cpu", k)

        @register_fake("test_custom::mul2")
        def mul2_fake(x: FakeTensor, k: int = 2) -> Any:
            return ("fake", k)

        assert mul2(cpu) == ("cpu", 2)
        assert mul2(meta) == ("fake", 2)
        assert "custom_op" in mul2._opoverload.tags
        table = dump_table("test_custom::mul2")
        assert "mul2_cpu" in table and "mul2_fake" in table
        register_kernel(mul2, "cpu", lambda x, k=2: ("again", k))
        assert mul2(cpu) == ("again", 2)
    finally:
        mul2._destroy()


def test_custom_op_with_device_types_only_serves_those_devices() -> None:
    op = custom_op(
        "test_custom::cpu_only", lambda x: "ran", mutates_args=(), schema="(Tensor x) -> Tensor"
    )
    op2 = custom_op(
        "test_custom::cpu_only2",
        lambda x: "ran",
        mutates_args=(),
        device_types="cpu",
        schema="(Tensor x) -> Tensor",
    )
    try:
        assert op(FakeTensor(META_BITS)) == "ran"
        assert op2(FakeTensor(CPU_BITS)) == "ran"
        with pytest.raises(NotImplementedError, match="attempted to run this operator with Meta"):
            op2(FakeTensor(META_BITS))
    finally:
        op._destroy()
        op2._destroy()


def test_custom_op_name_must_be_qualified() -> None:
    with pytest.raises(ValueError, match="expected a name 'namespace::name'"):
        custom_op("plain", mutates_args=())

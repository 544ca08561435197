"""The operator table and the Python surface generated from it."""

from __future__ import annotations

import inspect

import pytest

import tensor as tt
from dispatch import ops, parse_schema

# The first half of OPS.md (elementwise, reductions and scans, linear algebra,
# conversions and creation), as PyTorch exposes them.
FUNCTIONS = [
    "add",
    "sub",
    "mul",
    "div",
    "floor_divide",
    "remainder",
    "fmod",
    "pow",
    "maximum",
    "minimum",
    "atan2",
    "hypot",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "logical_and",
    "logical_or",
    "logical_xor",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "isclose",
    "where",
    "lerp",
    "clamp",
    "addcmul",
    "addcdiv",
    "neg",
    "abs",
    "sign",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sqrt",
    "rsqrt",
    "square",
    "reciprocal",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "sigmoid",
    "relu",
    "erf",
    "erfc",
    "floor",
    "ceil",
    "round",
    "trunc",
    "frac",
    "logical_not",
    "bitwise_not",
    "isnan",
    "isinf",
    "isfinite",
    "nan_to_num",
    "sum",
    "mean",
    "prod",
    "amax",
    "amin",
    "max",
    "min",
    "argmax",
    "argmin",
    "var",
    "std",
    "all",
    "any",
    "logsumexp",
    "cumsum",
    "cumprod",
    "norm",
    "count_nonzero",
    "matmul",
    "mm",
    "bmm",
    "addmm",
    "dot",
    "vdot",
    "outer",
    "einsum",
    "tensordot",
    "empty",
    "zeros",
    "ones",
    "full",
    "arange",
    "linspace",
    "eye",
    "rand",
    "randn",
    "randint",
    "normal",
    "empty_like",
    "zeros_like",
    "ones_like",
    "full_like",
    "rand_like",
    "randn_like",
    "from_dlpack",
    "tensor",
]
METHODS = [
    "to",
    "type_as",
    "sum",
    "mean",
    "max",
    "min",
    "add",
    "sin",
    "exp",
    "abs",
    "clamp",
    "matmul",
    "cumsum",
    "norm",
    "var",
    "argmax",
]
NN = ["gelu", "silu", "softplus"]  # torch.nn.functional: ops.core.<name> until tensor.nn lands


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_exists(name: str) -> None:
    assert callable(getattr(tt, name)), name
    assert name in tt.__all__


@pytest.mark.parametrize("name", METHODS)
def test_method_exists(name: str) -> None:
    assert callable(getattr(tt.Tensor, name))


@pytest.mark.parametrize("name", NN)
def test_nn_ops_are_defined(name: str) -> None:
    assert ops.core.__getattr__(name).default.schema is not None


def test_linalg_namespace() -> None:
    assert tt.linalg.vector_norm(tt.tensor([3.0, 4.0])).item() == 5.0


def test_generated_signatures_are_pytorchs() -> None:
    assert str(inspect.signature(tt.add)) == "(input, other, *, alpha=1, out=None)"
    assert str(inspect.signature(tt.Tensor.add)) == "(self, other, *, alpha=1)"
    assert str(inspect.signature(tt.sum)) == (
        "(input, dim=None, keepdim=False, *, dtype=None, out=None)"
    )
    assert str(inspect.signature(tt.isclose)) == (
        "(input, other, rtol=1e-05, atol=1e-08, equal_nan=False)"
    )
    assert (
        "core::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" in tt.add.__doc__
    )


def test_every_row_defines_its_schemas() -> None:
    for op in tt.OP_TABLE:
        for text in op.schemas:
            schema = parse_schema(text)
            packet = getattr(ops.core, schema.name)
            assert (schema.overload_name or "default") in packet.overloads(), text


def test_overload_selection_by_argument_types() -> None:
    seen = []
    x = tt.tensor([1.0, 2.0])
    from dispatch import DispatchMode

    class Log(DispatchMode):
        def __dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with Log():
        tt.add(x, x)
        tt.add(x, 2)
        tt.pow(x, x)
        tt.pow(x, 2)
        tt.pow(2, x)
        tt.clamp(x, 0, 1)
        tt.clamp(x, x, None)
        tt.max(x, 0)
    assert seen == [
        "ops.core.add.Tensor", "ops.core.add.Scalar", "ops.core.pow.Tensor_Tensor",
        "ops.core.pow.Tensor_Scalar", "ops.core.pow.Scalar", "ops.core.clamp.default",
        "ops.core.clamp.Tensor", "ops.core.max.dim",
    ]  # fmt: skip


def test_dtype_rules_follow_the_default_dtype() -> None:
    tt.set_default_dtype(tt.float64)
    try:
        assert tt.op_info("sin").result_dtypes[tt.int32] == (tt.float64, tt.float64)
        assert tt.sin(tt.tensor([1], dtype=tt.int32)).dtype is tt.float64
        assert tt.sin(tt.tensor([1], dtype=tt.int32, device="meta")).dtype is tt.float64
    finally:
        tt.set_default_dtype(tt.float32)
    assert tt.op_info("sin").result_dtypes[tt.int32] == (tt.float32, tt.float32)


# The second half of OPS.md (shape, views and indexing; nn functions; in-place and out=).
FUNCTIONS_2 = [
    "reshape", "transpose", "permute", "select", "diagonal", "unbind", "split",
    "split_with_sizes", "squeeze", "unsqueeze", "t", "narrow", "chunk", "flatten", "unflatten",
    "broadcast_to", "clone", "tile", "index_put", "index_select", "gather", "scatter",
    "scatter_add", "masked_fill", "masked_select", "nonzero", "take_along_dim", "cat", "stack",
    "flip", "roll", "tril", "triu", "diag", "sort", "argsort", "topk", "unique", "softmax",
    "log_softmax", "layer_norm", "dropout", "embedding", "conv2d", "max_pool2d",
    "binary_cross_entropy_with_logits",
]  # fmt: skip
METHODS_2 = [
    "view", "reshape", "expand", "expand_as", "view_as", "reshape_as", "contiguous", "repeat",
    "stride", "storage_offset", "data_ptr", "is_contiguous", "T", "mT", "__getitem__",
    "__setitem__", "add_", "sub_", "mul_", "div_", "clamp_", "zero_", "fill_", "copy_",
    "masked_fill_", "index_put_", "scatter_", "exp_", "relu_", "sigmoid_", "__iadd__",
    "__itruediv__", "__imul__", "softmax", "log_softmax",
]  # fmt: skip
NN_FUNCTIONAL = [
    "softmax", "log_softmax", "linear", "layer_norm", "dropout", "embedding", "cross_entropy",
    "mse_loss", "binary_cross_entropy_with_logits", "conv2d", "max_pool2d", "avg_pool2d",
    "gelu", "silu", "softplus", "relu", "sigmoid", "tanh",
]  # fmt: skip


@pytest.mark.parametrize("name", FUNCTIONS_2)
def test_second_half_functions_exist(name: str) -> None:
    assert callable(getattr(tt, name)), name
    assert name in tt.__all__


@pytest.mark.parametrize("name", METHODS_2)
def test_second_half_methods_exist(name: str) -> None:
    assert hasattr(tt.Tensor, name), name


@pytest.mark.parametrize("name", NN_FUNCTIONAL)
def test_nn_functional_exists(name: str) -> None:
    assert callable(getattr(tt.nn.functional, name)), name


def test_in_place_and_out_schemas_are_mutable() -> None:
    assert str(ops.core.add_.Tensor.schema) == (
        "core::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)"
    )
    assert str(ops.core.add.out.schema) == (
        "core::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"
    )
    assert (
        str(ops.core.view.default.schema)
        == "core::view(Tensor(a) self, SymInt[] size) -> Tensor(a)"
    )
    for row in tt.OP_TABLE:
        if row.family in ("inplace", "out", "mutation"):
            for text in row.schemas:
                assert parse_schema(text).is_mutable, text

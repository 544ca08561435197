"""Calls that do not fit the schema are refused before any kernel runs, from every
spelling users write (Note [Validating every call]): ``tt.*`` functions, methods,
``ops.core`` packets and overloads, ``custom_op`` objects, dtype and device arguments.

A recording mode sees every operator call below autograd, so "nothing ran" is checked
by its log being empty; the error names the operator, the argument and what was given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dispatch
import tensor as tt
import tensor.nn.functional as F
from dispatch import DispatchMode, SchemaBindError, ops


class Recording(DispatchMode):
    def __init__(self) -> None:
        self.calls: list[str] = []

    def __dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.calls.append(func.name)
        return func(*args, **(kwargs or {}))


x = tt.ones(2, 3)
w = tt.ones(4, 3)

# (spelling, call, the operator named, what the message says)
BAD: list[tuple[str, Callable[[], Any], str, str]] = [
    ("x.sum(dim='1')", lambda: x.sum(dim="1"), "core::sum", "'dim'"),
    ("x.sum(1, keepdim=1)", lambda: x.sum(1, keepdim=1), "core::sum", "'keepdim'"),
    ("tt.sum(x, dtype='three')", lambda: tt.sum(x, dtype="three"), "core::sum", "'dtype'"),
    ("tt.zeros(2, device='three')", lambda: tt.zeros(2, device="three"), "core::zeros", "'device'"),
    ("tt.zeros(2, dtype=5)", lambda: tt.zeros(2, dtype=5), "core::zeros", "'dtype'"),
    ("tt.sum(x, dtype='float64')", lambda: tt.sum(x, dtype="float64"), "core::sum", "'dtype'"),
    ("tt.sum(x, dtype=np.float64)", lambda: tt.sum(x, dtype=np.float64), "core::sum", "'dtype'"),
    ("tt.add(x, x, alpha='a')", lambda: tt.add(x, x, alpha="a"), "core::add", "'alpha'"),
    ("F.linear(x, w, 'b')", lambda: F.linear(x, w, "b"), "core::linear", "'bias'"),
    ("tt.cat([x, None])", lambda: tt.cat([x, None]), "core::cat", "element 1 is None"),
    ("tt.cat([x, 3])", lambda: tt.cat([x, 3]), "core::cat", "element 1 is int"),
    ("tt.cat([x, x], dim=0.5)", lambda: tt.cat([x, x], dim=0.5), "core::cat", "'dim'"),
    ("x.clamp(min='a')", lambda: x.clamp(min="a"), "core::clamp", "'min'"),
    ("x.softmax(dim=None)", lambda: x.softmax(dim=None), "core::softmax", "'dim'"),
    ("ops.core.sin(x, 1)", lambda: ops.core.sin(x, 1), "core::sin", "no overload accepts"),
    (
        "ops.core.add.Tensor(x, x, 2)",
        lambda: ops.core.add.Tensor(x, x, 2),
        "core::add",
        "at most 2",
    ),
    (
        "ops.core.add.Tensor(x, x, alpah=2)",
        lambda: ops.core.add.Tensor(x, x, alpah=2),
        "core::add",
        "'alpah'",
    ),
    (
        "ops.core.add.Tensor(x, x, self=x)",
        lambda: ops.core.add.Tensor(x, x, self=x),
        "core::add",
        "multiple values",
    ),
    ("ops.core.mul.Scalar(x, None)", lambda: ops.core.mul.Scalar(x, None), "core::mul", "'other'"),
    ("ops.core.mul.Scalar(x, '2')", lambda: ops.core.mul.Scalar(x, "2"), "core::mul", "'other'"),
    ("ops.core.sin.default(x, 1)", lambda: ops.core.sin.default(x, 1), "core::sin", "at most 1"),
    ("ops.core.sin.default(3)", lambda: ops.core.sin.default(3), "core::sin", "'self'"),
    ("ops.core.neg.default(x, x)", lambda: ops.core.neg.default(x, x), "core::neg", "at most 1"),
    # call2's int lists (``_validate.int_list``): only a list of ints skips the checker.
    (
        "ops.core.permute.default.call2(x, [1, 0.5])",
        lambda: ops.core.permute.default.call2(x, [1, 0.5]),
        "core::permute",
        "'dims'",
    ),
    (
        "ops.core.view.default.call2(x, [3, True])",
        lambda: ops.core.view.default.call2(x, [3, True]),
        "core::view",
        "'size'",
    ),
    (
        "ops.core.view.default.call2(x, [3, '2'])",
        lambda: ops.core.view.default.call2(x, [3, "2"]),
        "core::view",
        "'size'",
    ),
    # The one-tensor call3 (``x[0]``, ``x.softmax(-1)``): both values checked by type.
    (
        "ops.core.select.int.call3(x, 0, 1.5)",
        lambda: ops.core.select.int.call3(x, 0, 1.5),
        "core::select",
        "'index'",
    ),
    (
        "ops.core.select.int.call3(x, True, 0)",
        lambda: ops.core.select.int.call3(x, True, 0),
        "core::select",
        "'dim'",
    ),
    (
        "ops.core.select.int.call2(x, 0)",
        lambda: ops.core.select.int.call2(x, 0),
        "core::select",
        "'index'",
    ),
    (
        "ops.core.softmax.int.call3(x, -1, 'float64')",
        lambda: ops.core.softmax.int.call3(x, -1, "float64"),
        "core::softmax",
        "'dtype'",
    ),
    ("x.softmax(-1, dtype=3)", lambda: x.softmax(-1, dtype=3), "core::softmax", "'dtype'"),
]


@pytest.mark.parametrize(("spelling", "call", "op_name", "fragment"), BAD, ids=[b[0] for b in BAD])
def test_bad_calls_raise_before_any_kernel(
    spelling: str, call: Callable[[], Any], op_name: str, fragment: str
) -> None:
    with Recording() as mode, pytest.raises(SchemaBindError) as info:
        call()
    assert isinstance(info.value, TypeError) and isinstance(info.value, RuntimeError)
    assert op_name in str(info.value) and fragment in str(info.value), str(info.value)
    assert mode.calls == [], f"{spelling}: kernels ran: {mode.calls}"


def test_python_signatures_refuse_as_python_does() -> None:
    """Generated functions and methods have the schema's Python signature, so Python's own
    binding refuses (a TypeError naming the function), and no operator is reached."""
    for call in (
        lambda: x.add(x, 2),
        lambda: x.add(x, alpah=2),
        lambda: x.sin(1),
        lambda: x.sum(0, True, tt.float32),
        lambda: tt.sin(x, x),
    ):
        with Recording() as mode, pytest.raises(TypeError):
            call()
        assert mode.calls == []


@pytest.mark.parametrize("bad", ["a", None, [1], object()])
def test_python_operators_refuse_what_is_no_number(bad: Any) -> None:
    for op in ("__add__", "__sub__", "__mul__", "__truediv__", "__radd__", "__rmul__"):
        with Recording() as mode, pytest.raises(TypeError):
            _binary(op, bad)
        assert mode.calls == []


def _binary(op: str, other: Any) -> Any:
    result = getattr(x, op)(other)
    if result is NotImplemented:
        raise TypeError(f"{op} returned NotImplemented for {type(other).__name__}")
    return result


def test_good_spellings_still_work() -> None:
    assert tt.sum(x, dtype=tt.float64).dtype is tt.float64
    assert tt.zeros(2, device="cpu").device == tt.device("cpu")
    assert tt.zeros(2, device=tt.device("cpu")).device == tt.device("cpu")
    assert x.sum(np.int64(1)).shape == (2,)  # NumPy integers are ints
    assert x.contiguous(memory_format="contiguous_format") is x
    # An int list through call2 without the checker: the same result as the full path.
    p = ops.core.permute.default
    assert p.call2(x, [1, 0]).shape == p(x, [1, 0]).shape == (3, 2)
    assert ops.core.view.default.call2(x, [3, -1]).shape == (3, 2)
    # The one-tensor call3 and an Optional argument's None (``fast_types``) without the
    # checker: the full path's results.
    y = tt.arange(6.0).reshape(2, 3)
    for dim, index in ((0, 1), (1, -1), (-1, 2)):
        fast, full = ops.core.select.int.call3(y, dim, index), ops.core.select.int(y, dim, index)
        assert fast.tolist() == full.tolist() and fast._base is y._base  # the root
    assert y[1].tolist() == [3.0, 4.0, 5.0] and y[-2].tolist() == [0.0, 1.0, 2.0]
    soft = ops.core.softmax.int.call3(y, -1, None)
    np.testing.assert_array_equal(soft.numpy(), ops.core.softmax.int(y, -1).numpy())
    assert y.softmax(-1, dtype=tt.float64).dtype == tt.float64


def test_custom_op_objects_refuse_before_their_body() -> None:
    ran: list[int] = []

    @dispatch.custom_op("valtest::scale", mutates_args=())
    def scale(t: tt.Tensor, k: int) -> tt.Tensor:
        ran.append(k)
        return t * k

    try:
        assert scale(x, 2).sum().item() == 12.0
        for args in ((x, "2"), (x, 2.5), (x,), (x, 2, 3)):
            with pytest.raises(SchemaBindError, match="valtest::scale"):
                scale(*args)
        assert ran == [2]
    finally:
        scale._lib.destroy()


def test_slice_with_a_non_integer_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="slice indices must be integers"):
        x[::"a"]
    with pytest.raises(TypeError, match="slice indices must be integers"):
        x[0.5:]

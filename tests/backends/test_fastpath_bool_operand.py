"""Property tests of Note [Bool operand] (``_tensor_kernel`` in
backends/common/elementwise.py): a bool tensor with a tensor of another dtype, of any
dimensions, in either order, gives the general path's answer and PyTorch's (Note
[Fast-path switch]).  Both sides of the guard: ops the branch serves and ops that refuse
bool (sub), dtypes the op computes in directly and dtypes it casts (int / int is float)
or refuses (bitwise ops of floats), wrapped numbers (``2.0 * mask``), 0-d tensors of a
higher category, tensors that require grad, in-place and ``out=`` writes."""

from __future__ import annotations

import operator

from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from tests.backends.fastpath_support import (
    ALL_DTYPES,
    numbers,
    same_both_ways,
    tensors,
    torch,
    torch_quirk,
)

FEW = settings(deadline=None, max_examples=60)
SHAPES = [(), (1,), (3,), (2, 3), (1, 3), (2, 1, 3), (0,), (0, 3)]
OTHER = [d for d in ALL_DTYPES if d is not tt.bool]
OPS = [
    "add", "mul", "sub", "div", "maximum", "minimum", "eq", "lt", "ne", "remainder",
    "bitwise_and", "logical_and", "atan2", "pow", "floor_divide", "fmod",
]  # fmt: skip
OPERATORS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "==": operator.eq, "<": operator.lt, "&": operator.and_, "|": operator.or_,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow,
}  # fmt: skip


def _fn(module, op):
    """The operator or ``module``'s function; None for PyTorch when it is not installed
    (the comparison with the general path runs without it)."""
    if op in OPERATORS:
        return OPERATORS[op]
    return None if module is None else getattr(module, op)


@FEW
@given(
    mask=tensors(dtypes=(tt.bool,), shapes=SHAPES),
    x=tensors(dtypes=OTHER, shapes=SHAPES, requires_grad=None),
    op=st.sampled_from(OPS + list(OPERATORS)),
    mask_first=st.booleans(),
)
def test_bool_tensor_with_a_tensor(mask, x, op, mask_first):
    f, tf = _fn(tt, op), _fn(torch, op)
    if mask_first:
        call, tcall, args = (lambda m, a: f(m, a)), (lambda m, a: tf(m, a)), (mask, x)
    else:
        call, tcall, args = (lambda a, m: f(a, m)), (lambda a, m: tf(a, m)), (x, mask)
    quirk = torch_quirk(op, *args)
    same_both_ways(call, *args, torch_call=None if quirk else tcall)


@FEW
@given(
    a=tensors(dtypes=(tt.bool,), shapes=SHAPES),
    b=tensors(dtypes=(tt.bool,), shapes=SHAPES),
    op=st.sampled_from(OPS + list(OPERATORS)),
)
def test_two_bool_tensors(a, b, op):
    """Neither side of the branch fires (bool is not another dtype): the same-dtype path."""
    f, tf = _fn(tt, op), _fn(torch, op)
    same_both_ways(lambda x, y: f(x, y), a, b, torch_call=lambda x, y: tf(x, y))


@FEW
@given(
    mask=tensors(dtypes=(tt.bool,), shapes=SHAPES),
    y=numbers(),
    op=st.sampled_from(["+", "-", "*", "/", "==", "<", "**", "//", "%", "&"]),
    number_first=st.booleans(),
)
def test_bool_tensor_with_a_wrapped_number(mask, y, op, number_first):
    """``2.0 * mask``: the number promotes by its category, not as a tensor of its dtype."""
    f = OPERATORS[op]
    if number_first:
        call = tcall = lambda m: f(y, m)
    else:
        call = tcall = lambda m: f(m, y)
    if op in ("//", "%") and y == 0 and type(y) is not float:
        tcall = None  # PyTorch: ZeroDivisionError for bool // 0 too; checked both ways
    if torch_quirk(op, mask, y) or op == "**" and type(y) is bool and not number_first:
        tcall = None  # also mask ** False: all True in PyTorch (pow refuses bool; left alone)
    same_both_ways(call, mask, torch_call=tcall)


@FEW
@given(
    mask=tensors(dtypes=(tt.bool,), shapes=[(), (3,), (2, 3)]),
    x=tensors(dtypes=OTHER, shapes=[()], views=False),
    op=st.sampled_from(["add", "mul", "maximum", "lt", "div"]),
)
def test_dimensioned_bool_with_a_zero_dim_tensor(mask, x, op):
    """A 0-d tensor of a higher category sets the dtype, even against a bigger bool tensor."""
    f, tf = getattr(tt, op), _fn(torch, op)
    for args in ((mask, x), (x, mask)):
        quirk = torch_quirk(op, *args)
        same_both_ways(
            lambda a, b: f(a, b), *args, torch_call=None if quirk else lambda a, b: tf(a, b)
        )


@FEW
@given(
    x=tensors(dtypes=OTHER, shapes=[(3,), (2, 3)], views=False),
    mask=tensors(dtypes=(tt.bool,), shapes=[(), (3,), (2, 3), (1, 3)]),
    op=st.sampled_from(["add_", "mul_", "sub_", "div_", "maximum"]),
    how=st.sampled_from(["in_place", "out"]),
)
def test_bool_operand_written_in_place_or_out(x, mask, op, how):
    if how == "in_place":
        if op == "maximum":
            return
        call = lambda a, m: getattr(a, op)(m)  # noqa: E731
    else:
        name = op.rstrip("_")

        def call(a, m, module=tt):
            return getattr(module, name)(a, m, out=a)

    tcall = (lambda a, m: call(a, m, module=torch)) if how == "out" else call
    same_both_ways(call, x, mask, torch_call=tcall)


def test_subclass_operands_take_the_general_path():
    """Note [Bool operand] is for plain Tensors only: a subclass keeps its dispatch."""

    class Sub(tt.Tensor):
        pass

    x = tt.tensor([1.5, -0.0, 2.0])
    mask = tt.tensor([True, False, True])
    sub = x.as_subclass(Sub)
    same_both_ways(lambda: sub * mask)
    same_both_ways(lambda: mask * sub)
    same_both_ways(lambda: sub.mul(mask))

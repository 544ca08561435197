"""Property tests: each elementwise fast path gives the general path's answer, and
PyTorch's (Note [Fast-path switch]), on both sides of its guard."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from tests.backends.fastpath_support import (
    ALL_DTYPES,
    FLOAT_DTYPES,
    numbers,
    same_both_ways,
    tensors,
    torch,
    torch_quirk,
)

FEW = settings(deadline=None, max_examples=40)
SHAPES = [(), (0,), (3,), (2, 3), (3, 1), (1, 3), (300,)]
UNARY = ["neg", "abs", "sin", "exp", "sqrt", "sign", "floor", "logical_not", "isnan"]
BINARY = ["add", "sub", "mul", "div", "maximum", "eq", "lt", "remainder", "bitwise_and"]
OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv}


@FEW
@given(x=tensors(requires_grad=None), op=st.sampled_from(UNARY))
def test_unary(x, op):
    same_both_ways(
        lambda a: getattr(tt, op)(a), x, torch_call=lambda a: getattr(__import__("torch"), op)(a)
    )


@FEW
@given(
    x=tensors(shapes=SHAPES),
    y=tensors(shapes=SHAPES),
    op=st.sampled_from(BINARY),
)
def test_binary_tensor(x, y, op):
    same_both_ways(
        lambda a, b: getattr(tt, op)(a, b),
        x,
        y,
        torch_call=None
        if torch_quirk(op, x, y)
        else lambda a, b: getattr(__import__("torch"), op)(a, b),
    )


@FEW
@given(x=tensors(shapes=SHAPES), y=numbers(), op=st.sampled_from(BINARY))
def test_binary_scalar(x, y, op):
    if x.dtype is tt.float16 and type(y) is complex:
        return  # PyTorch makes complex32, which we do not have (left alone)
    same_both_ways(
        lambda a: getattr(tt, op)(a, y),
        x,
        torch_call=None
        if torch_quirk(op, x, y)
        else lambda a: getattr(__import__("torch"), op)(a, y),
    )


@FEW
@given(x=tensors(dtypes=FLOAT_DTYPES), y=numbers("bif"), op=st.sampled_from(list(OPS)))
def test_low_precision_opmath(x, y, op):
    f = OPS[op]
    same_both_ways(lambda a: f(a, y), x, torch_call=lambda a: f(a, y))
    same_both_ways(
        lambda a: getattr(a, op + "_")(y), x, torch_call=lambda a: getattr(a, op + "_")(y)
    )


@FEW
@given(
    x=tensors(shapes=[(3,), (2, 3)], views=False),
    y=tensors(shapes=[(3,), (2, 3), (1, 3)]),
    op=st.sampled_from(["add_", "sub_", "mul_"]),
    alpha=st.sampled_from([None, 1, 2, 1.0, True, 1 + 0j]),
)
def test_in_place(x, y, op, alpha):
    kw = {} if alpha is None or op == "mul_" else {"alpha": alpha}
    quirk = torch_quirk(op, x, y)
    same_both_ways(
        lambda a, b: getattr(a, op)(b, **kw),
        x,
        y,
        torch_call=None if quirk else lambda a, b: getattr(a, op)(b, **kw),
    )


@FEW
@given(
    x=tensors(dtypes=ALL_DTYPES[:-2], shapes=[(2, 2), (3,), (0,)], views=False),
    how=st.sampled_from(["same", "T", "shift", "shift_out"]),
)
def test_in_place_aliasing(x, how):
    def call(a):
        if how == "same":
            return a.add_(a)
        if how == "T":
            return a.add_(a.T) if a.ndim == 2 else a.add_(a)
        if how == "shift":
            return a[1:].add_(a[:-1])
        return tt.add(a[:-1], a[:-1], out=a[1:])

    def tcall(a):
        import torch

        if how == "shift_out":
            return torch.add(a[:-1], a[:-1], out=a[1:])
        return call.__wrapped__(a) if hasattr(call, "__wrapped__") else _torch_alias(a, how)

    same_both_ways(call, x, torch_call=tcall)


def _torch_alias(a, how):
    if how == "same":
        return a.add_(a)
    if how == "T":
        return a.add_(a.T) if a.ndim == 2 else a.add_(a)
    return a[1:].add_(a[:-1])


@FEW
@given(
    x=tensors(shapes=[(3,), (2, 3)]),
    other=numbers() | tensors(shapes=[(3,), ()]),
)
def test_where(x, other):
    mask = tt.tensor([True, False, True])
    same_both_ways(
        lambda a, o: tt.where(mask, a, o),
        x,
        other,
        torch_call=lambda a, o: __import__("torch").where(
            __import__("torch").tensor([True, False, True]), a, o
        ),
    )


@pytest.mark.parametrize("side", ["where(mask, x, 0)", "where(mask, 0, x)"])
@pytest.mark.parametrize("pattern", ["x > 0", "random", "broadcast", "transposed"])
@pytest.mark.parametrize("other", [0, 0.0, -0.0, 1, False, 0j, 1e-300])
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_where_zero_by_bits(dtype, other, pattern, side):
    """Note [Masking by bits]: where(mask, x, 0) and where(mask, 0, x) as bits ANDed
    with the mask, against NumPy's where on both sides of the guard (every dtype, the
    numbers 0, 0.0, -0.0 and others, masks of the same shape, broadcast or transposed;
    values with NaN, inf and -0.0), and against PyTorch."""
    rng = np.random.default_rng(7)
    values = rng.standard_normal((4, 5)) * 4
    values.flat[:4] = [np.nan, np.inf, -0.0, -np.inf]
    with np.errstate(invalid="ignore"):
        x = tt.tensor(values).to(dtype) if dtype is not tt.bool else tt.tensor(values > 0)
    bits = rng.random((4, 5)) > 0.5
    flip = pattern == "transposed"  # a mask that is a transposed view
    held = bits[0] if pattern == "broadcast" else np.ascontiguousarray(bits.T) if flip else bits

    swap = side == "where(mask, 0, x)"

    def where(lib, mask, a):
        return lib.where(mask, other, a) if swap else lib.where(mask, a, other)

    def call(a):
        if pattern == "x > 0":
            return where(tt, a > 0 if a.dtype is not tt.bool else a, a)
        return where(tt, tt.tensor(held).T if flip else tt.tensor(held), a)

    def torch_call(a):
        t = __import__("torch")
        if pattern == "x > 0":
            return where(t, a > 0 if a.dtype is not t.bool else a, a)
        return where(t, t.tensor(held).T if flip else t.tensor(held), a)

    same_both_ways(call, x, torch_call=None if torch_quirk("where", x) else torch_call)


@FEW
@given(
    n=st.sampled_from([0, 1, 5, 2**62, 2**63 - 1]),
    dtype=st.sampled_from([None, tt.float32, tt.int32]),
    which=st.sampled_from(["zeros", "ones", "empty_like_shape", "arange"]),
)
def test_factories(n, dtype, which):
    tdt = None if dtype is None or torch is None else getattr(torch, dtype.name)
    if which == "arange":
        same_both_ways(
            lambda: tt.arange(n, dtype=dtype), torch_call=lambda: torch.arange(n, dtype=tdt)
        )
    elif n < 100:
        fn = tt.ones if which == "ones" else tt.zeros
        tfn = None if torch is None else torch.ones if which == "ones" else torch.zeros
        same_both_ways(
            lambda: fn(n, dtype=dtype, device="cpu:0"),
            torch_call=lambda: tfn(n, dtype=tdt, device="cpu:0"),
        )


@FEW
@given(
    x=tensors(requires_grad=None),
    big=st.sampled_from([None, (1 << 14,), (130, 127), (2, 1 << 14)]),
    in_place=st.booleans(),
)
def test_relu_against_zeros(x, big, in_place):
    """Note [Maximum against zeros]: relu of a C-contiguous float32/float64 array against
    kept zeros (in chunks past ``_ZERO_CHUNK`` elements) gives the general path's bits:
    NaN where NaN, +0.0 for -0.0; every other dtype and layout goes the general way.
    ``big``: the drawn values repeated to a shape past one chunk."""
    if big is not None and x.dtype in (tt.float32, tt.float64) and x.numel():
        x = tt.tensor(np.resize(x.detach().numpy(), big))
    if in_place and not x.requires_grad:
        same_both_ways(lambda a: a.relu_(), x)
    else:
        same_both_ways(lambda a: tt.relu(a), x, torch_call=lambda a: a.relu())


def test_relu_against_zeros_on_the_edge_values():
    from backends.cpu.elementwise import _ZERO_CHUNK

    edge = [-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf, -1.0, 1.0, 5e-39, -5e-39, 1e-320]
    for dt in (np.float32, np.float64):
        for n in (len(edge), _ZERO_CHUNK, _ZERO_CHUNK + 3, 3 * _ZERO_CHUNK):
            a = np.resize(np.array(edge, dt), n)
            got = tt.relu(tt.tensor(a)).numpy()
            assert got.tobytes() == np.maximum(a, 0).tobytes(), (dt, n)
            assert not np.signbit(got[a == 0]).any()


def test_relu_keeps_the_zeros_of_the_shapes_it_sees():
    """The zeros of a shape are kept after its first relu, and dropped past
    ``_SHAPES_KEPT`` shapes: each call, first, repeated or after the drop, gives
    NumPy's maximum against zero, and a relu_ writes only into its own tensor."""
    from backends.cpu.elementwise import _SHAPED, _SHAPES_KEPT

    rng = np.random.default_rng(7)
    shapes = [(n % 7 + 1, n // 7 + 1) for n in range(_SHAPES_KEPT + 5)]
    for _round in range(2):
        for shape in shapes:
            a = rng.standard_normal(shape).astype(np.float32)
            for _ in range(2):
                got = tt.relu(tt.tensor(a)).numpy()
                assert got.tobytes() == np.maximum(a, np.float32(0)).tobytes(), shape
            t = tt.tensor(a)
            t.relu_()
            assert t.numpy().tobytes() == np.maximum(a, np.float32(0)).tobytes()
            assert len(_SHAPED[np.dtype(np.float32)]) <= _SHAPES_KEPT
    assert all(not z.any() for z in _SHAPED[np.dtype(np.float32)].values())

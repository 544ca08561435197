"""The CPU kernels' fast paths give the general path's results (Note [Tiny sums],
Note [Cross-entropy fast path], cat's fast path, Note [View fast path], Note [Softmax fast
path], Note [Bool operand]): same values within rounding, same signs of zero, same dtypes,
same views and errors, including the inputs that must leave the fast path."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

import tensor as tt
import tensor.nn.functional as F


def _ce_reference(x: np.ndarray, t: np.ndarray) -> float:
    x = x.astype(np.float64)
    m = x.max(axis=1, keepdims=True)
    lse = np.log(np.exp(x - m).sum(axis=1)) + m[:, 0]
    return float(np.mean(lse - x[np.arange(len(t)), t]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "rows",
    [
        [[0.0, -1e4], [1e4, 0.0], [1.0, 2.0]],  # extreme logits
        [[-200.0, -201.0], [50.0, 0.0]],  # a row far below the batch's largest logit
        [[-1e30, -1e30 + 1e24], [3.0, 1.0]],  # a row whose exp() underflows entirely
        [[0.1, 0.2, 0.3]] * 64,
    ],
)
def test_cross_entropy_matches_the_per_row_formula(dtype: type, rows: list[list[float]]) -> None:
    x = np.array(rows, dtype=dtype)
    t = np.arange(len(rows)) % x.shape[1]
    got = float(F.cross_entropy(tt.tensor(x), tt.tensor(t)).item())
    expected = _ce_reference(x, t)
    assert math.isfinite(got)
    assert got == pytest.approx(expected, rel=1e-5 if dtype is np.float32 else 1e-12)


def test_cross_entropy_special_values_and_bad_targets() -> None:
    assert math.isnan(F.cross_entropy(tt.tensor([[math.inf, 0.0]]), tt.tensor([0])).item())
    assert math.isnan(F.cross_entropy(tt.tensor([[math.nan, 0.0]]), tt.tensor([1])).item())
    x = tt.tensor([[0.0, 1.0], [2.0, 3.0]])
    for bad in ([-1, 0], [0, 2]):
        with pytest.raises(IndexError, match="out of bounds"):
            F.cross_entropy(x, tt.tensor(bad))


@pytest.mark.parametrize("dtype", [tt.float32, tt.float64])
@pytest.mark.parametrize("n", [0, 1, 7, 256, 257])
def test_small_sums_match_pairwise_summation(dtype: tt.dtype, n: int) -> None:
    data = np.random.default_rng(n).standard_normal(n).astype(dtype.numpy_dtype)
    got = tt.tensor(data).sum()
    assert got.shape == () and got.dtype is dtype
    expected = np.add.reduce(data.astype(np.float64))
    tol = 1e-5 if dtype is tt.float32 else 1e-12
    assert float(got.item()) == pytest.approx(float(expected), rel=tol, abs=tol)


def test_sum_of_negative_zero_is_positive_zero_as_in_pytorch() -> None:
    out = tt.tensor([-0.0]).sum()
    assert float(out.item()) == 0.0 and math.copysign(1.0, float(out.item())) == 1.0
    assert math.isnan(tt.tensor([math.inf, -math.inf]).sum().item())
    out.add_(1)  # the result is an ordinary writeable tensor, not a view of a cache
    assert float(tt.tensor([-0.0]).sum().item()) == 0.0


@pytest.mark.parametrize("dim", [0, 1, -1, -2])
def test_cat_fast_path_matches_numpy(dim: int) -> None:
    rng = np.random.default_rng(abs(dim))
    parts = [rng.random((3, 4), dtype=np.float32) for _ in range(5)]
    parts.append(rng.random((4, 3), dtype=np.float32).T)  # not C-contiguous
    got = tt.cat(tuple(tt.from_numpy(p) for p in parts), dim)
    np.testing.assert_array_equal(got.numpy(), np.concatenate(parts, axis=dim))
    assert got.dtype is tt.float32
    mixed = tt.cat([tt.ones(2, dtype=tt.int64), tt.ones(1, dtype=tt.float32)])
    assert mixed.dtype is tt.float32 and mixed.tolist() == [1.0, 1.0, 1.0]


def test_cat_errors_and_legacy_empties_leave_the_fast_path() -> None:
    a = tt.ones(2, 3)
    empty = tt.zeros(0)
    assert tt.cat([empty, a, empty]).shape == (2, 3)  # legacy 1-D empties are skipped
    assert tt.cat([empty, empty]).shape == (0,)
    assert tt.cat([a, a], -1).shape == (2, 6)
    for dim in (2, -3, 2**40, 2**70):
        with pytest.raises(IndexError, match="Dimension out of range"):
            tt.cat([a, a], dim)
    with pytest.raises(RuntimeError, match="zero-dimensional tensor"):
        tt.cat([tt.tensor(1.0), tt.tensor(2.0)])
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        tt.cat([a, tt.ones(2, 2)])
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        tt.cat([a, tt.ones(3)])


# -- the backward pass's kernels (Note [Product fast path], sum of one dim, where, .T) --------
def test_products_fast_path_keeps_pytorchs_errors_and_promotion() -> None:
    from dispatch import ops

    a, b = tt.randn(3, 4), tt.randn(4, 5)
    assert np.allclose((a @ b).numpy(), a.numpy() @ b.numpy())
    assert ops.core.mm(a, b).shape == (3, 5)
    with pytest.raises(RuntimeError, match="mm"):
        ops.core.mm(tt.randn(2, 3, 4), tt.randn(4, 5))  # mm takes matrices only
    with pytest.raises(RuntimeError, match="bmm"):
        ops.core.bmm(tt.randn(2, 3, 4), tt.randn(1, 4, 5))  # no batch broadcasting
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied|matmul"):
        tt.randn(3, 4) @ tt.randn(5, 2)
    with pytest.raises(RuntimeError, match="dot"):
        tt.dot(tt.randn(3), tt.randn(4))
    with pytest.raises(RuntimeError, match="same dtype"):
        ops.core.mm(a, b.double())
    assert (a.half() @ b.half()).dtype == tt.float16  # accumulates in float32, general path
    d = tt.dot(tt.ones(3), tt.ones(3))
    assert d.shape == () and d.item() == 3.0


def test_sum_of_one_dim_fast_path() -> None:
    x = tt.tensor(np.arange(12.0).reshape(3, 4))
    assert x.sum(0).tolist() == [12.0, 15.0, 18.0, 21.0]
    assert x.sum([-1], keepdim=True).shape == (3, 1)
    assert x.sum(1, dtype=tt.float32).dtype == tt.float32
    assert tt.tensor(5.0).sum(0).item() == 5.0  # 0-d: the general path
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.sum(2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.sum([-3])


def test_where_fast_path_keeps_dtypes_and_nan_masking() -> None:
    from dispatch import ops

    g = tt.tensor([float("nan"), 1.0, float("inf")])
    out = tt.tensor([0.0, 2.0, -1.0])
    assert ops.core.where.ScalarOther(out > 0, g, 0).tolist() == [0.0, 1.0, 0.0]
    assert ops.core.where.ScalarOther(out > 0, g.half(), 0.5).dtype == tt.float16
    assert ops.core.where.ScalarOther(out > 0, tt.tensor([1, 2, 3]), 0.5).dtype == tt.float32
    other = tt.tensor([7.0, 8.0, 9.0])
    assert tt.where(out > 0, g, other).tolist() == [7.0, 1.0, 9.0]
    assert tt.where(out > 0, g, other.double()).dtype == tt.float64  # promotes: general path
    with pytest.raises(RuntimeError, match="boolean"):
        tt.where(out, g, other)


def test_matrix_transpose_fast_path_is_a_view() -> None:
    from dispatch import ops

    x = tt.tensor(np.arange(6.0).reshape(2, 3))
    for d0, d1 in ((0, 1), (-2, -1), (1, -2), (0, -1)):
        t = ops.core.transpose.int(x, d0, d1)
        assert t.shape == (3, 2) and t._base is x
    assert ops.core.transpose.int(x, 0, -2).shape == (2, 3)  # the same dim twice
    t = x.T
    t[0, 1] = 100.0
    assert x[1, 0].item() == 100.0 and x._version == t._version
    with pytest.raises(IndexError, match="Dimension out of range"):
        ops.core.transpose.int(x, 0, 2)


def test_in_place_fast_path_matches_the_copying_path() -> None:
    """Note [In-place fast path]: same results, versions, errors and autograd."""
    x = tt.tensor(np.arange(4.0).reshape(2, 2))
    before = x._version
    with pytest.raises(RuntimeError, match="single memory location"):
        x -= x.T  # partly overlapping operands: PyTorch refuses (Note [Overlapping writes])
    x -= x  # the same memory and strides: allowed
    assert x.tolist() == [[0.0, 0.0], [0.0, 0.0]] and x._version == before + 1
    i = tt.tensor([100, 120], dtype=tt.int8)
    i += tt.tensor([100, 100], dtype=tt.int8)  # wraps, as PyTorch's int8 does
    assert i.tolist() == [-56, -36]
    row = tt.ones(3)
    row *= tt.tensor([[2.0, 3.0, 4.0]]).squeeze(0)
    assert row.tolist() == [2.0, 3.0, 4.0]
    with pytest.raises(RuntimeError, match="can't be cast"):
        i += tt.tensor([0.5, 0.5])
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        one = tt.ones(1)
        one += tt.ones(3)
    with pytest.raises(RuntimeError, match="more than one element"):
        z = tt.ones(2).expand(3, 2)
        z += tt.ones(3, 2)
    with pytest.raises(RuntimeError, match="two bool tensors"):
        b = tt.tensor([True, False])
        b -= b
    a = tt.tensor([1.0, 2.0], requires_grad=True)
    h = a * 1.0
    h -= tt.tensor([0.5, 0.5])
    h *= tt.tensor([2.0, 3.0])
    h.sum().backward()
    assert a.grad.tolist() == [2.0, 3.0] and h.tolist() == [1.0, 4.5]


# -- views (Note [View fast path], Note [Inline redispatch]) -----------------------------------
@pytest.mark.parametrize(
    "size", [[8, 3], (8, 3), [-1], [2, -1, 3], [24], [1, 24, 1], (np.int64(6), 4)]
)
def test_view_and_reshape_fast_path_make_views_of_the_base(size: Sequence[int]) -> None:
    from dispatch import ops

    base = tt.randn(5, 6)
    x = base[1:]  # a view of 24 elements: results are views of the root
    expected = x.numpy().reshape(tuple(int(s) for s in size))
    for out in (ops.core.view(x, size), ops.core.reshape(x, size)):
        np.testing.assert_array_equal(out.numpy(), expected)
        assert out._base is base and np.shares_memory(out.numpy(), base.numpy())
        before = base._version
        out.add_(0.0)
        assert base._version == x._version == before + 1
    assert x.view(tt.Size([24])).shape == (24,)


def test_view_fast_path_leaves_pytorchs_errors_to_the_general_path() -> None:
    from dispatch import ops

    x = tt.randn(4, 6)
    cases = [
        (lambda: x.view(-2, 12), RuntimeError, r"invalid shape dimension -2 in shape \[-2, 12\]"),
        (lambda: x.reshape(-3, 8), RuntimeError, "invalid shape dimension -3"),
        (lambda: x.view(-1, -1), RuntimeError, "only one dimension can be inferred"),
        (lambda: x.view(5, 7), RuntimeError, r"shape '\[5, 7\]' is invalid for input of size 24"),
        (lambda: x.view(0, -1), RuntimeError, "ambiguous with a 0-sized dim"),
        (lambda: ops.core.view(x, []), RuntimeError, "invalid for input of size 24"),
        (lambda: ops.core.view(x, [2**70, 1]), RuntimeError, "invalid for input of size 24"),
        (lambda: x.view(True, 24), TypeError, "must be a sequence of ints"),
        (lambda: x.t().view(-1), RuntimeError, "view size is not compatible"),
        (lambda: x.unsqueeze(3), IndexError, r"expected to be in range of \[-3, 2\]"),
        (lambda: x.unsqueeze(-4), IndexError, "Dimension out of range"),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call()
    assert tt.ones(1).view([]).shape == ()  # [] is a size: the general path's answer


def test_reshape_copies_only_when_it_must() -> None:
    x = tt.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    copied = x.t().reshape(-1)  # not a view of x's layout: a copy, not marked as a view
    assert copied._base is None and copied.tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    assert not np.shares_memory(copied.numpy(), x.numpy())
    viewed = x.t().reshape(3, 1, 2)  # unit dims only: still a view
    assert viewed._base is x
    empty = tt.zeros(0, 3).t().reshape(0)
    assert empty._base is not None  # reshape of an empty tensor never copies


@pytest.mark.parametrize("dim", [-3, -2, -1, 0, 1, 2])
def test_unsqueeze_fast_path_strides(dim: int) -> None:
    x = tt.randn(4, 6)
    out = x.unsqueeze(dim)
    expected = np.expand_dims(x.numpy(), dim)
    assert out.shape == expected.shape and out._base is x
    np.testing.assert_array_equal(out.numpy(), expected)
    # the stride the general path's reshape gives the new dim
    shape = expected.shape
    assert out.numpy().strides == x.numpy().reshape(shape).strides


# -- softmax (Note [Softmax fast path]) -----------------------------------------------------
@pytest.mark.parametrize("dtype", [tt.float32, tt.float64])
@pytest.mark.parametrize("shape,dim", [((5, 10), 1), ((5, 10), -1), ((5, 10), 0), ((2, 3, 4), 1),
                                       ((3, 300), 1), ((7,), 0)])  # fmt: skip
def test_softmax_fast_path_matches_the_general_path(
    dtype: tt.dtype, shape: tuple[int, ...], dim: int
) -> None:
    from dispatch import ops

    rng = np.random.default_rng(len(shape) + dim)
    data = (rng.standard_normal(shape) * 5).astype(dtype.numpy_dtype)
    data.flat[0] = -np.inf  # a masked-out logit
    x = tt.tensor(data)
    tol = 1e-6 if dtype is tt.float32 else 1e-13
    for log, op in ((False, ops.core.softmax.int), (True, ops.core.log_softmax.int)):
        fast = op(x, dim)
        general = op(x, dim, dtype)  # a dtype argument: the general path
        assert fast.dtype is dtype and fast.shape == shape
        np.testing.assert_allclose(fast.numpy(), general.numpy(), rtol=tol, atol=tol)
        ref = data.astype(np.float64)
        shifted = ref - ref.max(axis=dim, keepdims=True)
        lse = np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
        expected = shifted - lse if log else np.exp(shifted - lse)
        np.testing.assert_allclose(fast.numpy(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_softmax_special_rows_and_errors() -> None:
    from dispatch import ops

    inf, nan = float("inf"), float("nan")
    x = tt.tensor([[-inf, -inf], [inf, 0.0], [nan, 0.0], [0.0, 0.0]])
    got = ops.core.softmax.int(x, 1).numpy()
    general = ops.core.softmax.int(x, 1, tt.float32).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(general))
    np.testing.assert_array_equal(got[3], [0.5, 0.5])
    assert ops.core.softmax.int(tt.tensor(3.0), 0).item() == 1.0  # 0-d: the general path
    assert ops.core.softmax.int(tt.zeros(0, 3), 1).shape == (0, 3)
    assert ops.core.softmax.int(x.half(), 1).dtype == tt.float16
    with pytest.raises(IndexError, match="Dimension out of range"):
        ops.core.softmax.int(x, 2)
    with pytest.raises(RuntimeError, match="softmax"):
        ops.core.softmax.int(tt.tensor([[1, 2]]), 1)  # integers


# -- where with broadcasting, bool operands, arange ------------------------------------------
def test_where_fast_path_broadcasts_as_the_general_path() -> None:
    rng = np.random.default_rng(1)
    c, a, b = rng.random((3, 1)) > 0.5, rng.random((3, 4), np.float32), rng.random(4, np.float32)
    got = tt.where(tt.tensor(c), tt.tensor(a), tt.tensor(b))
    assert got.dtype is tt.float32
    np.testing.assert_array_equal(got.numpy(), np.where(c, a, b))
    scalar_self = tt.where(tt.tensor(c), tt.tensor(np.float32(2.0)), tt.tensor(b))
    np.testing.assert_array_equal(scalar_self.numpy(), np.where(c, np.float32(2.0), b))
    i8 = tt.tensor([1, 2], dtype=tt.int8)
    with pytest.raises(RuntimeError, match="without overflow"):  # as PyTorch
        tt.where(i8 > 1, i8, 1000)  # Note [Numbers that overflow]
    assert tt.where(i8 > 1, i8, True).dtype is tt.int8
    promoted = tt.where(i8 > 1, i8, 2.5)
    assert promoted.dtype is tt.float32 and promoted.tolist() == [2.5, 2.0]
    with pytest.raises(RuntimeError, match="must match|broadcast"):
        tt.where(tt.tensor(c), tt.tensor(a), tt.ones(5))


@pytest.mark.parametrize(
    "dtype", [tt.float32, tt.float64, tt.float16, tt.int8, tt.uint8, tt.int64, tt.complex64]
)
@pytest.mark.parametrize("op", ["mul", "eq", "maximum", "bitwise_and", "pow", "div", "lt"])
@pytest.mark.filterwarnings("ignore:.* encountered in:RuntimeWarning")  # x / False
def test_bool_operand_fast_path_matches_promotion(dtype: tt.dtype, op: str) -> None:
    """Note [Bool operand]: the result of ``x op mask`` is ``x op mask.to(x.dtype)``."""
    from dispatch import ops

    rng = np.random.default_rng(3)
    x = tt.tensor((rng.standard_normal((3, 4)) * 4).astype(dtype.numpy_dtype))
    mask = tt.tensor(rng.random((3, 4)) > 0.5)
    packet = getattr(ops.core, op)
    for a, b in ((x, mask), (mask, x), (x[0, 0], mask), (x, mask[0, 0]), (mask[0], x)):
        try:
            expected_dtype = tt.result_type(a, b)
            expected = packet(a.to(expected_dtype), b.to(expected_dtype))
        except RuntimeError as e:  # the op refuses the dtype: so must the mixed call
            with pytest.raises(type(e)):
                packet(a, b)
            continue
        got = packet(a, b)
        assert got.dtype is expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_bool_operand_keeps_wrapped_numbers_errors_and_shapes() -> None:
    mask = tt.tensor([True, False])
    assert (2.5 * mask).dtype is tt.float32  # a number promotes by its category
    assert (mask * tt.tensor(2.5, dtype=tt.float64)).dtype is tt.float64  # 0-d float wins
    with pytest.raises(RuntimeError, match="bool"):
        tt.ones(2) - mask
    with pytest.raises(RuntimeError, match="bool"):
        mask - tt.ones(2)
    with pytest.raises(RuntimeError, match="must match|broadcast"):
        tt.ones(3) * mask


def test_arange_fast_path() -> None:
    from dispatch import ops

    for n in (0, 1, 32):
        got = ops.core.arange(0, n)
        assert got.dtype is tt.int64 and got.tolist() == list(range(n))
        assert got.device == tt.device("cpu")
    assert tt.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert tt.arange(5, dtype=tt.float32).dtype is tt.float32
    assert tt.arange(0, 5.0).dtype is tt.float32
    assert tt.arange(2, 8, 3).tolist() == [2, 5]
    with pytest.raises(RuntimeError, match="upper bound and larger bound inconsistent"):
        ops.core.arange(0, -1)

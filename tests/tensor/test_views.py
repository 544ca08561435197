"""Views, layouts, version counters, in-place operators and ``out=`` on the Tensor.

Checked against PyTorch's documented behaviour: views share memory and a version
counter with their base; ``reshape`` copies only when it must; in-place ops
return ``self``, work through views and bump the shared counter; augmented
assignment is in place; ``out=`` resizes an empty tensor.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensor as tt


def test_layout_accessors() -> None:
    x = tt.arange(24).view(2, 3, 4)
    assert x.stride() == (12, 4, 1) and x.stride(-1) == 1
    assert x.is_contiguous() and not x.transpose(0, 2).is_contiguous()
    assert x.transpose(0, 2).stride() == (1, 4, 12)
    assert x[1].storage_offset() == 12 and x[:, 1:, 2:].storage_offset() == 6
    assert x[1].data_ptr() == x.data_ptr() + 12 * 8
    assert x.unsqueeze(1).stride() == (12, 12, 4, 1)  # PyTorch's stride for a new dim
    assert x.expand(5, 2, 3, 4).stride() == (0, 12, 4, 1)
    assert x.T.shape == (4, 3, 2) and x.mT.shape == (2, 4, 3)
    assert tt.zeros(0, 3).T.is_contiguous() and tt.zeros(3, 1).T.is_contiguous()


def test_meta_layouts_match_the_cpu() -> None:
    for dev in ("cpu", "meta"):
        x = tt.zeros(2, 3, 4, device=dev)
        y = x.permute(2, 0, 1)[1:, :, ::2]
        assert y.stride() == (1, 12, 8) and y.storage_offset() == 1, dev
        assert not y.is_contiguous(), dev
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            y.view(-1)
        assert y.reshape(-1)._base is None, dev  # a copy
        assert x.reshape(6, 4)._base is x, dev  # a view


def test_views_share_memory_and_version() -> None:
    x = tt.zeros(3, 4)
    v = x.view(12)
    row = x[1]
    d = x.diagonal()
    col = x.t()[2]
    assert v._base is x and row._base is x and col._base is x
    row.fill_(1.0)
    assert x[1].tolist() == [1.0] * 4 and v[4:8].tolist() == [1.0] * 4
    assert x._version == v._version == row._version == d._version == 1
    d += 5
    assert x[1, 1].item() == 6.0 and x._version == 2
    x.add_(1)
    assert col.tolist() == [1.0, 2.0, 6.0] and row._version == 3
    a, b = x.split(2)
    assert a._base is x and b._base is x
    a.zero_()
    assert x[:2].sum().item() == 0.0


def test_in_place_returns_self_and_augmented_assignment_is_in_place() -> None:
    x = tt.ones(2, 3)
    ident = id(x)
    assert x.mul_(3) is x
    x += tt.ones(3)
    x -= 1
    x *= 2
    x /= 2
    assert id(x) == ident and x._version == 5
    assert x.tolist() == [[3.0] * 3] * 2
    i = tt.tensor([5, 6])
    i //= 2
    i <<= 1
    i |= 1
    assert i.tolist() == [5, 7]
    b = tt.tensor([True, False])
    b &= tt.tensor([True, True])
    assert b.tolist() == [True, False]
    y = tt.tensor([-1.0, 4.0])
    assert y.abs_().sqrt_() is y and y.tolist() == [1.0, 2.0]
    assert y.clamp_(max=1.5).tolist() == [1.0, 1.5]
    assert y.zero_().tolist() == [0.0, 0.0]


def test_in_place_casts_like_pytorch() -> None:
    i = tt.tensor([1, 2])
    i += 2  # int + int stays int
    f = tt.tensor([1.5, 2.5], dtype=tt.float16)
    f += tt.tensor([1.0, 1.0], dtype=tt.float64)  # written back as float16
    assert f.dtype is tt.float16 and f.tolist() == [2.5, 3.5]
    with pytest.raises(
        RuntimeError, match="result type Float can't be cast to the desired output type Long"
    ):
        i += 0.5
    assert i.tolist() == [3, 4]  # unchanged by the refused op
    b = tt.tensor([1.0, 0.0])
    b.eq_(0)
    assert b.tolist() == [0.0, 1.0]


def test_copy_across_dtypes_and_devices() -> None:
    x = tt.zeros(2, 3, dtype=tt.int32)
    x.copy_(tt.tensor([1.7, -2.2, 3.9]))
    assert x.tolist() == [[1, -2, 3], [1, -2, 3]]
    m = tt.zeros(2, 3, device="meta")
    assert m.copy_(x) is m
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        x.copy_(m)


def test_setitem_writes_through() -> None:
    x = tt.zeros(3, 4)
    x[0] = 1.0
    x[1, 1:3] = tt.tensor([2.0, 3.0])
    x[x == 0] = -1.0
    x[[2, 2], [0, 1]] = tt.tensor([7.0, 8.0])
    x[..., 3] = tt.tensor([9.0])
    assert x.tolist() == [[1, 1, 1, 9], [-1, 2, 3, 9], [7, 8, -1, 9]]
    assert x._version == 5
    y = tt.zeros(2, 2, dtype=tt.int64)
    y[0] = tt.tensor([1.9, 2.9])  # cast on assignment, as PyTorch
    assert y.tolist() == [[1, 2], [0, 0]]


def test_index_put_accumulate_and_scatter_reduce() -> None:
    x = tt.zeros(3)
    x.index_put_([tt.tensor([0, 0, 2])], tt.tensor([1.0, 2.0, 3.0]), accumulate=True)
    assert x.tolist() == [3.0, 0.0, 3.0]
    s = tt.ones(2, 3).scatter(0, tt.tensor([[1, 0, 1]]), tt.full((1, 3), 4.0), reduce="multiply")
    assert s.tolist() == [[1.0, 4.0, 1.0], [4.0, 1.0, 4.0]]
    assert tt.zeros(3).scatter_add(0, tt.tensor([1, 1]), tt.ones(2)).tolist() == [0.0, 2.0, 0.0]


def test_named_tuples() -> None:
    x = tt.tensor([[3.0, 1.0, 2.0]])
    s = x.sort(descending=True)
    assert type(s).__name__ == "sort" and s.values.tolist() == [[3.0, 2.0, 1.0]]
    assert s.indices.tolist() == [[0, 2, 1]]
    k = tt.topk(x, 2, largest=False)
    assert type(k).__name__ == "topk" and k.indices.tolist() == [[1, 2]]
    assert tt.nonzero(tt.tensor([0, 3, 0, 4]), as_tuple=True)[0].tolist() == [1, 3]
    assert tt.where(tt.tensor([[True, False]]))[1].tolist() == [0]
    u, inv, counts = tt.unique(tt.tensor([2, 1, 2]), return_inverse=True, return_counts=True)
    assert (u.tolist(), inv.tolist(), counts.tolist()) == ([1, 2], [1, 0, 1], [1, 2])


def test_out_resizes_and_returns_out() -> None:
    a, b = tt.ones(2, 3), tt.ones(3, 4)
    out = tt.empty(0)
    assert tt.matmul(a, b, out=out) is out and out.shape == (2, 4) and out._version == 1
    assert out.tolist() == [[3.0] * 4] * 2
    s = tt.empty(0, dtype=tt.float64)
    tt.sum(a, 1, out=s)
    assert s.dtype is tt.float64 and s.tolist() == [3.0, 3.0]
    same = tt.zeros(2, 3)
    view = same.view(6)
    tt.add(a, a, out=same)
    assert view.tolist() == [2.0] * 6  # same shape: written in place, views see it
    wrong = tt.zeros(5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tt.exp(a, out=wrong)
    assert wrong.shape == (2, 3) and any("resized" in str(w.message) for w in caught)


def test_numpy_interop_shares_views() -> None:
    x = tt.arange(6).view(2, 3)
    arr = x.t().numpy()
    arr[0, 1] = 100
    assert x[1, 0].item() == 100
    assert np.shares_memory(x[:, 1].numpy(), x.numpy())

"""Tensor basics: attributes, conversions, Python protocols and operators, repr."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import tensor as tt
from dispatch import DispatchMode, ops


def test_attributes() -> None:
    x = tt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.shape == (2, 3) and isinstance(x.shape, tt.Size) and x.shape.numel() == 6
    assert x.size() == (2, 3) and x.size(1) == 3 and x.size(-1) == 3
    assert x.ndim == 2 and x.dim() == 2 and x.numel() == 6 and x.element_size() == 4
    assert x.dtype is tt.float32 and x.device == tt.device("cpu")
    assert x.requires_grad is False and x.grad is None and x.grad_fn is None and x.is_leaf
    assert isinstance(x.array, np.ndarray) and x.is_floating_point() and not x.is_complex()
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.size(2)


def test_requires_grad() -> None:
    x = tt.tensor([1.0], requires_grad=True)
    assert x.requires_grad
    assert x.detach().requires_grad is False
    with pytest.raises(RuntimeError, match="floating point and complex"):
        tt.tensor([1]).requires_grad_()
    assert tt.zeros(2, requires_grad=True).requires_grad


def test_numpy_shares_memory() -> None:
    x = tt.tensor([1.0, 2.0])
    x.numpy()[0] = 7.0
    assert x.tolist() == [7.0, 2.0]
    a = np.arange(4.0)
    t = tt.from_numpy(a)
    a[1] = 9
    assert t.tolist() == [0.0, 9.0, 2.0, 3.0]
    with pytest.raises(NotImplementedError, match="meta"):
        tt.zeros(2, device="meta").numpy()


def test_to_forms() -> None:
    x = tt.tensor([1.5, -2.5])
    assert x.to(tt.float32) is x  # nothing changes: the same tensor
    assert x.to(tt.int64).tolist() == [1, -2] and x.to(tt.int64).dtype is tt.int64
    assert x.to("cpu") is x and x.to(tt.device("cpu")) is x
    m = x.to("meta")
    assert m.device.type == "meta" and m.shape == (2,) and m.dtype is tt.float32
    assert x.to("meta", tt.float64).dtype is tt.float64
    assert x.to(device="meta", dtype=tt.float16).dtype is tt.float16
    assert x.to(tt.tensor([1], dtype=tt.int32)).dtype is tt.int32  # to(other)
    y = x.to(tt.float32, copy=True)
    assert y is not x and y.tolist() == x.tolist()
    y.numpy()[0] = 0
    assert x.tolist() == [1.5, -2.5]
    assert x.cpu() is x and x.double().dtype is tt.float64 and x.long().dtype is tt.int64
    assert x.type_as(tt.tensor([1], dtype=tt.int8)).dtype is tt.int8
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        m.cpu()
    with pytest.raises(TypeError):
        x.to(3.5)


def test_clone_and_detach() -> None:
    x = tt.tensor([1.0, 2.0], requires_grad=True)
    c = x.clone()
    c.numpy()[0] = 5
    assert x.tolist() == [1.0, 2.0]
    d = x.detach()
    d.numpy()[0] = 5
    assert x.tolist() == [5.0, 2.0]  # detach shares data


def test_item_tolist_and_scalars() -> None:
    assert tt.tensor([[2.5]]).item() == 2.5
    assert tt.tensor(3).item() == 3 and isinstance(tt.tensor(3).item(), int)
    assert tt.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert tt.tensor(1.5).tolist() == 1.5
    with pytest.raises(RuntimeError, match="item"):
        tt.tensor([1, 2]).item()
    assert float(tt.tensor([2.5])) == 2.5 and int(tt.tensor(7.9)) == 7
    assert bool(tt.tensor([1])) is True and bool(tt.tensor(0.0)) is False
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(tt.tensor([1, 2]))
    assert list(range(10))[tt.tensor(3)] == 3  # __index__
    with pytest.raises(TypeError, match="integer"):
        [1, 2][tt.tensor(1.0)]
    assert complex(tt.tensor(1 + 2j)) == 1 + 2j
    assert f"{tt.tensor(2.5):.2f}" == "2.50"


def test_len_and_iter() -> None:
    x = tt.tensor([[1, 2], [3, 4], [5, 6]])
    assert len(x) == 3
    rows = list(x)
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4], [5, 6]]
    assert all(r.dtype is tt.int64 for r in rows)
    with pytest.raises(TypeError, match="0-d"):
        len(tt.tensor(1))
    with pytest.raises(TypeError, match="0-d"):
        iter(tt.tensor(1))
    assert [r.shape for r in tt.zeros(2, 3, device="meta")] == [(3,), (3,)]


def test_operators() -> None:
    a = tt.tensor([1.0, 2.0, 3.0])
    b = tt.tensor([4.0, 5.0, 6.0])
    assert (a + b).tolist() == [5, 7, 9] and (a - b).tolist() == [-3, -3, -3]
    assert (a * b).tolist() == [4, 10, 18] and (b / a).tolist() == [4, 2.5, 2]
    assert (b // a).tolist() == [4, 2, 2] and (b % a).tolist() == [0, 1, 0]
    assert (a**2).tolist() == [1, 4, 9] and (a @ b).item() == 32
    assert (1 + a).tolist() == [2, 3, 4] and (1 - a).tolist() == [0, -1, -2]
    assert (2 * a).tolist() == [2, 4, 6] and (6 / a).tolist() == [6, 3, 2]
    assert (7 // a).tolist() == [7, 3, 2] and (7 % a).tolist() == [0, 1, 1]
    assert (2**a).tolist() == [2, 4, 8]
    assert (a < b).tolist() == [True] * 3 and (a == a).tolist() == [True] * 3
    assert (a != b).all().item() and (a >= 2).tolist() == [False, True, True]
    assert (a < 2).tolist() == [True, False, False]  # reflected comparison
    assert (-a).tolist() == [-1, -2, -3] and abs(-a).tolist() == [1, 2, 3]
    i = tt.tensor([6, 3])
    assert (i & 5).tolist() == [4, 1] and (i | 1).tolist() == [7, 3] and (i ^ i).tolist() == [0, 0]
    assert (
        (i << 1).tolist() == [12, 6] and (i >> 1).tolist() == [3, 1] and (~i).tolist() == [-7, -4]
    )
    assert (a == None) is False  # noqa: E711 - not a tensor: Python's identity fallback


def test_operators_with_numpy_and_unknown_types() -> None:
    a = tt.tensor([1.0])
    assert (a + np.float64(2.0)).tolist() == [3.0]
    with pytest.raises(TypeError):
        a + "x"  # type: ignore[operator]
    with pytest.raises(TypeError):
        a + [1.0]  # type: ignore[operator]


def test_operators_dispatch_through_core() -> None:
    seen = []

    class Log(DispatchMode):
        def __dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    a = tt.tensor([1.0, 2.0])
    with Log():
        _ = a + a, a * 2, -a, a @ a, tt.sin(a), a.sum(), 3 / a
    assert seen == [
        "ops.core.add.Tensor", "ops.core.mul.Scalar", "ops.core.neg.default",
        "ops.core.matmul.default", "ops.core.sin.default", "ops.core.sum.default",
        "ops.core.div.Tensor",
    ]  # fmt: skip


def test_functions_and_methods_share_the_operator() -> None:
    a = tt.tensor([[1.0, -2.0], [3.0, 4.0]])
    assert tt.sum(a, 1).tolist() == a.sum(1).tolist() == [-1.0, 7.0]
    assert tt.add(a, a, alpha=2).tolist() == a.add(a, alpha=2).tolist()
    r = a.max(dim=1)
    assert r.values.tolist() == [1.0, 4.0] and r.indices.tolist() == [0, 1]
    assert type(r).__name__ == "max" and tuple(r) == (r.values, r.indices)
    assert tt.max(a).item() == 4.0 and tt.max(a, tt.zeros(2, 2)).tolist() == [[1, 0], [3, 4]]
    assert tt.where(a > 0, a, 0.0).tolist() == [[1, 0], [3, 4]]
    assert a.where(a > 0, 0.0).tolist() == [[1, 0], [3, 4]]
    assert tt.linalg.vector_norm(tt.tensor([3.0, 4.0])).item() == 5.0
    assert tt.norm(tt.tensor([3.0, 4.0])).item() == 5.0
    assert tt.einsum("ij,jk->ik", a, a).tolist() == (a @ a).tolist()


def test_repr_like_pytorch() -> None:
    assert repr(tt.tensor([1.0, 2.5])) == "tensor([1.0000, 2.5000])"
    assert repr(tt.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(tt.tensor([1.0, 2.0], dtype=tt.float64)) == "tensor([1., 2.], dtype=tensor.float64)"
    assert repr(tt.tensor(3.0)) == "tensor(3.)"
    assert repr(tt.zeros(2, device="meta")) == "tensor(..., device='meta', size=(2,))"
    assert repr(tt.zeros(0, 3)) == "tensor([], size=(0, 3))"
    assert repr(tt.tensor([1.0], requires_grad=True)) == "tensor([1.], requires_grad=True)"
    assert repr(tt.tensor([True, False])) == "tensor([ True, False])"


@pytest.mark.torch
@pytest.mark.parametrize("data", [
    [[1.5, 2], [3, 4]], [1e10, 1.0], [1e-5, 1.0], [float("nan"), 1.0, float("inf")], [1 + 2j, -3.5j],
    list(range(2000)), [[0.1] * 30] * 3, 123456789, [-0.0, 0.0],
])  # fmt: skip
def test_repr_matches_torch(data: object) -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: no reference repr")
    assert repr(tt.tensor(data)) == repr(torch.tensor(data)).replace("torch.", "tensor.")


def test_array_protocols() -> None:
    x = tt.tensor([1.0, 2.0])
    assert np.asarray(x) is x.array
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    assert np.from_dlpack(x).tolist() == [1.0, 2.0]
    assert x.__dlpack_device__() == (1, 0)
    assert x.__array_namespace__() is tt.array_api  # the standard's namespace (issue #18)
    assert (np.array([1.0, 1.0]) + x).tolist() == [2.0, 3.0]  # NumPy defers to Tensor
    assert (np.array([5.0, 5.0]) - x).tolist() == [4.0, 3.0]
    assert (x * np.array([2.0, 2.0])).dtype is tt.float64  # a dimensioned float64 array
    with pytest.raises(TypeError, match="meta"):
        np.asarray(tt.zeros(1, device="meta"))


def test_pickle_and_hash() -> None:
    x = tt.tensor([[1, 2]], dtype=tt.int16)
    y = pickle.loads(pickle.dumps(x))
    assert y.tolist() == [[1, 2]] and y.dtype is tt.int16
    assert len({x, y}) == 2  # hashed by identity, as PyTorch


def test_public_constructor() -> None:
    t = tt.Tensor([1, 2], dtype=tt.float64)
    assert t.dtype is tt.float64 and t.tolist() == [1.0, 2.0]
    assert tt.Tensor().shape == (0,)


def test_private_constructor_is_used_by_kernels() -> None:
    out = ops.core.add.Tensor(tt.tensor([1.0]), tt.tensor([2.0]))
    assert type(out) is tt.Tensor and out.tolist() == [3.0]
    assert math.isclose(tt.tensor([0.5]).exp().item(), math.exp(0.5), rel_tol=1e-6)

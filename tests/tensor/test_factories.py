"""Tensors from data, the sized factories, and seeded random numbers."""

from __future__ import annotations

import numpy as np
import pytest

import tensor as tt
from dispatch import ops


def test_tensor_from_python_data() -> None:
    assert tt.tensor([[1, 2], [3, 4]]).dtype is tt.int64
    assert tt.tensor([1, 2.5]).dtype is tt.float32  # the default dtype, not float64
    assert tt.tensor([True, False]).dtype is tt.bool
    assert tt.tensor([1 + 2j]).dtype is tt.complex64
    s = tt.tensor(3.5)
    assert s.shape == () and s.item() == 3.5
    assert tt.tensor([]).shape == (0,) and tt.tensor([]).dtype is tt.float32
    assert tt.tensor([1, 2], dtype=tt.float16).dtype is tt.float16
    assert tt.tensor([300], dtype=tt.uint8).tolist() == [44]  # wraps, like a C cast


def test_tensor_ragged_data() -> None:
    with pytest.raises(ValueError, match="expected sequence of length 2 at dim 1 \\(got 3\\)"):
        tt.tensor([[1, 2], [3, 4, 5]])
    with pytest.raises(TypeError, match="could not make a tensor"):
        tt.tensor(object())


def test_tensor_from_numpy_copies_and_keeps_dtype() -> None:
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    t = tt.tensor(a)
    assert t.dtype is tt.float64
    a[0, 0] = 100
    assert t.tolist()[0][0] == 0  # a copy
    strided = a[:, ::2].T  # not contiguous
    ts = tt.tensor(strided)
    assert ts.shape == (2, 3) and ts.array.flags.c_contiguous
    assert ts.tolist() == strided.tolist()
    assert tt.tensor(np.float32(2.5)).dtype is tt.float32


def test_tensor_options() -> None:
    m = tt.tensor([1.0, 2.0], device="meta")
    assert m.device.type == "meta" and m.shape == (2,)
    r = tt.tensor([1.0], requires_grad=True)
    assert r.requires_grad
    t = tt.tensor(tt.tensor([1, 2]), dtype=tt.float32)  # from a tensor: a copy
    assert t.dtype is tt.float32


def test_as_tensor_and_from_numpy_share_memory() -> None:
    a = np.zeros(3, dtype=np.float32)
    t1, t2 = tt.as_tensor(a), tt.from_numpy(a)
    a[0] = 1
    assert t1.tolist()[0] == 1 and t2.tolist()[0] == 1
    assert tt.as_tensor(a, dtype=tt.float64).dtype is tt.float64
    with pytest.raises(TypeError, match="NumPy array"):
        tt.from_numpy([1, 2])  # type: ignore[arg-type]


def test_from_dlpack() -> None:
    a = np.arange(4, dtype=np.int32)
    t = tt.from_dlpack(a)
    a[0] = 9
    assert t.tolist() == [9, 1, 2, 3] and t.dtype is tt.int32
    same = tt.from_dlpack(t)  # as PyTorch: another tensor on the same memory, not a view
    assert same is not t and same._base is None and same.data_ptr() == t.data_ptr()
    assert np.from_dlpack(t).tolist() == [9, 1, 2, 3]  # and back
    with pytest.raises(TypeError, match="__dlpack__"):
        tt.from_dlpack([1, 2])


@pytest.mark.torch
def test_from_dlpack_torch() -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    x = torch.arange(3.0)
    t = tt.from_dlpack(x)
    x[0] = 5
    assert t.tolist() == [5.0, 1.0, 2.0]
    assert torch.from_dlpack(tt.tensor([1.0, 2.0])).tolist() == [1.0, 2.0]


def test_sized_factories() -> None:
    assert tt.zeros(2, 3).shape == (2, 3) and tt.zeros((2, 3)).shape == (2, 3)
    assert tt.zeros([4]).tolist() == [0.0] * 4 and tt.zeros(()).shape == ()
    assert tt.ones(2, dtype=tt.int32).tolist() == [1, 1]
    assert tt.empty(3, 0).shape == (3, 0)
    assert tt.full((2,), 7).dtype is tt.int64 and tt.full((2,), 7.0).dtype is tt.float32
    assert tt.full((1,), True).dtype is tt.bool
    assert tt.arange(5).tolist() == [0, 1, 2, 3, 4] and tt.arange(5).dtype is tt.int64
    assert tt.arange(1, 2, 0.25).tolist() == [1.0, 1.25, 1.5, 1.75]
    assert tt.arange(10, 0, -3).tolist() == [10, 7, 4, 1]
    assert tt.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert tt.eye(2, 3).tolist() == [[1, 0, 0], [0, 1, 0]]
    x = tt.tensor([[1, 2]], dtype=tt.int8)
    assert tt.zeros_like(x).dtype is tt.int8 and tt.ones_like(x).tolist() == [[1, 1]]
    assert tt.full_like(x, 3).tolist() == [[3, 3]] and tt.empty_like(x).shape == (1, 2)
    assert tt.zeros_like(x, dtype=tt.float64).dtype is tt.float64
    assert tt.rand_like(tt.zeros(3)).shape == (3,)
    assert tt.zeros(2, requires_grad=True).requires_grad


def test_factories_on_meta() -> None:
    for t in (tt.zeros(2, 3, device="meta"), tt.rand(2, 3, device="meta"),
              tt.arange(6, device="meta").reshape if False else tt.arange(6, device="meta")):  # fmt: skip
        assert t.device.type == "meta"
    assert tt.arange(0, 10, 3, device="meta").shape == (4,)
    assert tt.eye(3, device="meta").shape == (3, 3)
    assert tt.zeros_like(tt.zeros(2), device="meta").device.type == "meta"


def test_factory_errors() -> None:
    with pytest.raises(RuntimeError, match="negative dimension"):
        tt.zeros(-1)
    with pytest.raises(TypeError, match="size"):
        tt.zeros(2.5)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        tt.arange(0, 5, 0)
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):
        tt.arange(0, 5, -1)
    with pytest.raises(NotImplementedError, match="\"rand\" not implemented for 'int64'"):
        tt.rand(2, dtype=tt.int64)
    with pytest.raises(RuntimeError, match="from=5 >= to=5"):
        tt.randint(5, 5, (2,))


def test_factories_dispatch_through_backend_select() -> None:
    out = ops.core.zeros.default((2,), device="meta")
    assert out.device.type == "meta"
    assert ops.core.zeros.default((2,)).device.type == "cpu"


def test_manual_seed_reproduces() -> None:
    tt.manual_seed(0)
    a = (tt.rand(5), tt.randn(5), tt.randint(0, 10, (5,)), tt.normal(0.0, 1.0, (5,)))
    tt.manual_seed(0)
    b = (tt.rand(5), tt.randn(5), tt.randint(0, 10, (5,)), tt.normal(0.0, 1.0, (5,)))
    for x, y in zip(a, b, strict=True):
        assert x.tolist() == y.tolist()
    tt.manual_seed(1)
    assert tt.rand(5).tolist() != a[0].tolist()
    assert tt.initial_seed() == 1


def test_generators() -> None:
    g = tt.Generator().manual_seed(42)
    x = tt.rand(4, generator=g)
    g.manual_seed(42)
    assert tt.rand(4, generator=g).tolist() == x.tolist()
    state = g.get_state()
    y = tt.randn(3, generator=g)
    g.set_state(state)
    assert tt.randn(3, generator=g).tolist() == y.tolist()
    assert g.device == tt.device("cpu") and tt.default_generator("cpu") is tt.default_generator()
    with pytest.raises(TypeError, match="generator"):
        tt.rand(2, generator=object())


def test_random_values_and_dtypes() -> None:
    tt.manual_seed(3)
    r = tt.rand(1000)
    assert r.dtype is tt.float32 and r.amin().item() >= 0 and r.amax().item() < 1
    n = tt.randn(10000, dtype=tt.float64)
    assert abs(n.mean().item()) < 0.05 and abs(n.std().item() - 1) < 0.05
    assert tt.randn(4, dtype=tt.bfloat16).dtype is tt.bfloat16
    assert tt.randn(4, dtype=tt.complex64).dtype is tt.complex64
    i = tt.randint(3, 7, (1000,))
    assert i.dtype is tt.int64 and i.amin().item() >= 3 and i.amax().item() <= 6
    m = tt.normal(tt.tensor([0.0, 100.0]), tt.tensor([1.0, 1.0]))
    assert m.shape == (2,) and m.tolist()[1] > 90

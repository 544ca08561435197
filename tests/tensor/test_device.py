"""Devices: parsing, identity, the dispatch keys each device's tensors carry."""

from __future__ import annotations

import pickle

import pytest

import backends.cuda
import tensor as tt
from dispatch import REQUIRES_GRAD_BIT, DispatchKey, DispatchKeySet

K = DispatchKey


def test_parse() -> None:
    d = tt.device("cuda:1")
    assert (d.type, d.index) == ("cuda", 1)
    assert str(d) == "cuda:1" and repr(d) == "device(type='cuda', index=1)"
    assert tt.device("cpu").index is None and repr(tt.device("cpu")) == "device(type='cpu')"
    assert tt.device("cuda", 0) == tt.device("cuda:0") == "cuda:0"
    assert tt.device(tt.device("meta")) is tt.device("meta")
    assert tt.device(0) == tt.device("cuda:0")  # an int means a CUDA device, as in PyTorch


def test_interned_and_hashable() -> None:
    assert tt.device("cpu") is tt.device("cpu")
    assert {tt.device("cuda:1"): 1}[tt.device("cuda", 1)] == 1
    assert pickle.loads(pickle.dumps(tt.device("cuda:2"))) == tt.device("cuda:2")
    with pytest.raises(AttributeError):
        tt.device("cpu").index = 3  # type: ignore[misc]


# Digits str.isdigit() takes and int() refuses ("¹", found by tests/stress/test_fuzz.py),
# and other scripts' digits: PyTorch's error, not int()'s ValueError.
@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "cuda:-1", "cpu:1", "cuda:¹", ":¹", "cuda:٣"])
def test_bad_strings(bad: str) -> None:
    with pytest.raises(RuntimeError):
        tt.device(bad)


def test_bad_types() -> None:
    with pytest.raises(TypeError, match="device"):
        tt.device(1.5)  # type: ignore[arg-type]


def test_default_device_is_cpu() -> None:
    assert tt.tensor([1.0]).device == tt.device("cpu")
    assert tt.zeros(2).device.type == "cpu"


def test_keys_of_cpu_tensors() -> None:
    expected = DispatchKeySet([K.CPU, K.ADInplaceOrView, K.AutogradCPU, K.AutocastCPU])
    for t in (tt.tensor([1.0]), tt.tensor([1]), tt.tensor([1.0], requires_grad=True)):
        assert t.keys == expected  # requires_grad does not change keys (SEMANTICS.md §2)
    # ... it sets the dispatcher's REQUIRES_GRAD_BIT (not a key: Note [Grad-only kernels])
    assert tt.tensor([1.0])._dispatch_bits == expected.bits
    t = tt.tensor([1.0], requires_grad=True)
    assert t._dispatch_bits == expected.bits | REQUIRES_GRAD_BIT
    t.requires_grad = False
    assert t._dispatch_bits == expected.bits
    assert tt.tensor([1.0], requires_grad=True).detach()._dispatch_bits == expected.bits


def test_keys_of_meta_tensors() -> None:
    t = tt.zeros(2, 3, device="meta")
    assert t.keys == DispatchKeySet([K.Meta, K.ADInplaceOrView, K.AutogradMeta])
    assert t.is_meta and not t.is_cpu


def test_keys_of_dispatch_subclasses() -> None:
    class Plain(tt.Tensor):
        pass

    class Traced(tt.Tensor):
        @classmethod
        def __dispatch__(cls, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            return NotImplemented

    base = tt.tensor([1.0]).keys
    assert tt.tensor([1.0]).as_subclass(Plain).keys == base
    traced = tt.tensor([1.0]).as_subclass(Traced)
    assert traced.keys == base | DispatchKeySet([K.Python, K.PythonTLSSnapshot])
    assert Traced([2.0]).keys == traced.keys


@pytest.mark.skipif(backends.cuda.is_available(), reason="a CUDA device is present")
def test_cuda_without_a_gpu_says_so() -> None:
    assert tt.cuda.is_available() is False and tt.cuda.device_count() == 0
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        tt.tensor([1.0], device="cuda")
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        tt.tensor([1.0]).cuda()

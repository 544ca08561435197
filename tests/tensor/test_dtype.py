"""dtypes and PyTorch's type promotion (checked against torch.promote_types/result_type)."""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

import tensor as tt

DTYPES = [tt.bool, tt.uint8, tt.int8, tt.int16, tt.int32, tt.int64, tt.float16, tt.bfloat16,
          tt.float32, tt.float64, tt.complex64, tt.complex128]  # fmt: skip


@pytest.fixture
def default_float64():
    tt.set_default_dtype(tt.float64)
    yield
    tt.set_default_dtype(tt.float32)


def test_dtype_objects() -> None:
    assert tt.float32.is_floating_point and tt.float32.itemsize == 4
    assert not tt.int64.is_floating_point and tt.int64.itemsize == 8
    assert tt.complex64.is_complex and tt.complex64.itemsize == 8
    assert tt.bool.itemsize == 1 and not tt.bool.is_signed and tt.int8.is_signed
    assert tt.bfloat16.numpy_dtype == np.dtype(ml_dtypes.bfloat16)
    assert repr(tt.float16) == "tensor.float16" and tt.float16.name == "float16"
    assert tt.complex128.to_real() is tt.float64 and tt.float32.to_complex() is tt.complex64


@pytest.mark.parametrize("d", DTYPES, ids=lambda d: d.name)
def test_kind_is_numpys_letter(d: tt.dtype) -> None:
    # Note [dtype.kind is NumPy's letter]: the letter of the matching NumPy dtype (PyTorch's
    # dtypes have no .kind), float's for bfloat16, whose ml_dtypes dtype says "V".
    numpy_twin = np.dtype(np.float32) if d is tt.bfloat16 else np.dtype(d.name)
    assert d.kind == numpy_twin.kind
    assert tt.bfloat16.numpy_dtype.kind == "V"  # why bfloat16 cannot take its NumPy dtype's
    assert tt.asarray([1, 0], dtype=d).dtype.kind == d.kind  # what Array API consumers read


def test_category_orders_bool_int_float_complex() -> None:
    # The ordered int the kernels compare, renamed from ``kind`` (issue #18).
    order = [tt.bool, tt.int64, tt.float32, tt.complex64]
    assert [d.category for d in order] == sorted({d.category for d in DTYPES})
    assert tt.uint8.category == tt.int8.category and tt.bfloat16.category == tt.float16.category


def test_aliases() -> None:
    assert tt.float is tt.float32 and tt.double is tt.float64 and tt.half is tt.float16
    assert tt.long is tt.int64 and tt.int is tt.int32 and tt.short is tt.int16
    assert tt.cfloat is tt.complex64 and tt.cdouble is tt.complex128


def test_bfloat16_tensors_use_ml_dtypes() -> None:
    t = tt.tensor([1.5, 2.25], dtype=tt.bfloat16)
    assert t.array.dtype == ml_dtypes.bfloat16
    assert (t + t).dtype is tt.bfloat16
    assert (t + t).tolist() == [3.0, 4.5]


def test_default_dtype(default_float64: None) -> None:
    assert tt.get_default_dtype() is tt.float64
    assert tt.tensor([1.0]).dtype is tt.float64
    assert tt.zeros(2).dtype is tt.float64
    assert (tt.tensor([1]) / tt.tensor([2])).dtype is tt.float64  # int / int: default float
    assert tt.sin(tt.tensor([1])).dtype is tt.float64
    assert tt.tensor([1 + 1j]).dtype is tt.complex128


def test_set_default_dtype_rejects_non_floats() -> None:
    with pytest.raises(TypeError, match="floating-point"):
        tt.set_default_dtype(tt.int64)
    assert tt.get_default_dtype() is tt.float32


@pytest.mark.parametrize(("a", "b", "out"), [
    (tt.uint8, tt.int8, tt.int16),
    (tt.int64, tt.float16, tt.float16),
    (tt.float16, tt.bfloat16, tt.float32),
    (tt.bool, tt.uint8, tt.uint8),
    (tt.float64, tt.complex64, tt.complex128),
    (tt.int8, tt.complex64, tt.complex64),
])  # fmt: skip
def test_promote_types_examples(a: tt.dtype, b: tt.dtype, out: tt.dtype) -> None:
    assert tt.promote_types(a, b) is out
    assert tt.promote_types(b, a) is out


def test_python_scalars_and_zero_dim_do_not_upcast() -> None:
    x = tt.tensor([1, 2], dtype=tt.int8)
    assert (x + 1000).dtype is tt.int8  # wraps, as in PyTorch
    assert (x + 1000).tolist() == [-23, -22]
    assert (x + tt.tensor(1)).dtype is tt.int8  # 0-d int64 does not widen int8
    assert (x + 1.5).dtype is tt.float32  # a higher category does
    f16 = tt.tensor([1.0], dtype=tt.float16)
    assert (f16 + tt.tensor(1.5, dtype=tt.float64)).dtype is tt.float16
    assert (tt.tensor([True]) + tt.tensor(3)).dtype is tt.int64


def test_bool_arithmetic() -> None:
    b = tt.tensor([True, False])
    assert (b + b).dtype is tt.bool and (b + b).tolist() == [True, False]
    assert (b * b).dtype is tt.bool
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool tensors"):
        _ = b - b
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
        _ = -b
    assert (~b).tolist() == [False, True]


def test_can_cast() -> None:
    assert tt.can_cast(tt.int32, tt.float16)
    assert not tt.can_cast(tt.float64, tt.int32)


torch_cases = pytest.mark.torch


@torch_cases
def test_promote_types_matches_torch() -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: no reference table")
    for a, b in itertools.product(DTYPES, DTYPES):
        expected = torch.promote_types(getattr(torch, a.name), getattr(torch, b.name))
        assert tt.promote_types(a, b).name == str(expected).split(".")[-1], (a, b)


def _operands(torch, dtype: tt.dtype, zero_dim: bool):  # type: ignore[no-untyped-def]
    shape = () if zero_dim else (2,)
    ours = tt.zeros(shape, dtype=dtype)
    theirs = torch.zeros(shape, dtype=getattr(torch, dtype.name))
    return ours, theirs


@torch_cases
@pytest.mark.parametrize("scalar", [True, 2, 2.5, 1 + 2j], ids=["bool", "int", "float", "complex"])
def test_result_type_with_scalars_matches_torch(scalar: object) -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: no reference")
    for dtype in DTYPES:
        if dtype is tt.float16 and isinstance(scalar, complex):
            continue  # torch gives complex32, a dtype we do not have (we give complex64)
        for zero_dim in (False, True):
            ours, theirs = _operands(torch, dtype, zero_dim)
            expected = str(torch.result_type(theirs, scalar)).split(".")[-1]
            assert tt.result_type(ours, scalar).name == expected, (dtype, zero_dim, scalar)


@torch_cases
def test_result_type_of_tensors_matches_torch() -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: no reference")
    for a, b in itertools.product(DTYPES, DTYPES):
        for za, zb in ((False, False), (False, True), (True, False), (True, True)):
            oa, ta = _operands(torch, a, za)
            ob, tb = _operands(torch, b, zb)
            expected = str(torch.result_type(ta, tb)).split(".")[-1]
            if expected == "complex32":  # float16 with a 0-d complex: we have no complex32
                assert tt.result_type(oa, ob) is tt.complex64
                continue
            assert tt.result_type(oa, ob).name == expected, (a, za, b, zb)

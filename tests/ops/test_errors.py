"""Errors name the operator and the argument, with PyTorch's wording where it has one.

Bad shapes, bad dims, mixed devices and bad dtypes, on CPU and on Meta (the same
checks, shared by both backends).
"""

from __future__ import annotations

import re

import pytest

import tensor as tt

DEVICES = ["cpu", "meta"]


def _raises(exc: type[BaseException], *fragments: str):  # type: ignore[no-untyped-def]
    return pytest.raises(exc, match="(?s)" + "".join(f"(?=.*{re.escape(f)})" for f in fragments))


@pytest.mark.parametrize("device", DEVICES)
def test_bad_shapes(device: str) -> None:
    a, b = tt.zeros(2, 3, device=device), tt.zeros(4, device=device)
    with _raises(
        RuntimeError, "add()", "size of tensor a (3)", "size of tensor b (4)", "'self'", "'other'"
    ):
        _ = a + b
    with _raises(RuntimeError, "mm()", "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x4)"):
        tt.mm(a, tt.zeros(4, 4, device=device))
    with _raises(RuntimeError, "matmul()", "need to be at least 1D"):
        tt.matmul(tt.zeros((), device=device), a)
    with _raises(RuntimeError, "dot()", "1D tensors expected"):
        tt.dot(a, a)
    with _raises(RuntimeError, "where()", "'condition'", "'self'"):
        tt.where(tt.zeros(5, dtype=tt.bool, device=device), a, b)
    with _raises(RuntimeError, "einsum()", "operand 0"):
        tt.einsum("i,i->", a, a)


@pytest.mark.parametrize("device", DEVICES)
def test_bad_dims(device: str) -> None:
    x = tt.zeros(2, 3, device=device)
    with _raises(IndexError, "sum()", "Dimension out of range", "[-2, 1]", "got 3", "'dim'"):
        x.sum(3)
    with _raises(IndexError, "cumsum()", "got -3", "'dim'"):
        x.cumsum(-3)
    with _raises(RuntimeError, "amax()", "dim 0 appears multiple times"):
        x.amax((0, -2))
    with _raises(IndexError, "max()", "Expected reduction dim 0 to have non-zero size"):
        tt.zeros(0, 3, device=device).max(0)
    with _raises(TypeError, "core::sum", "'dim'", "must be int[1]?"):  # the schema's check
        x.sum("a")  # type: ignore[arg-type]


def test_mixed_devices() -> None:
    cpu, meta = tt.zeros(3), tt.zeros(3, device="meta")
    with _raises(RuntimeError, "add()", "same device", "meta", "cpu", "'self'", "'other'"):
        _ = meta + cpu
    with _raises(RuntimeError, "add()", "same device", "meta", "cpu"):
        cpu + meta  # Meta has the higher key, so its kernel checks
    with _raises(RuntimeError, "matmul()", "same device", "meta", "cpu"):
        tt.matmul(tt.zeros(2, 2, device="meta"), tt.zeros(2, 2))
    # 0-d CPU tensors (numbers) may join any device, as in PyTorch
    assert (meta + tt.tensor(2.0)).device.type == "meta"


@pytest.mark.parametrize("device", DEVICES)
def test_bad_dtypes(device: str) -> None:
    f = tt.zeros(2, device=device)
    i = tt.zeros(2, dtype=tt.int64, device=device)
    b = tt.zeros(2, dtype=tt.bool, device=device)
    with _raises(NotImplementedError, "\"bitwise_and\" not implemented for 'float32'", "'self'"):
        tt.bitwise_and(f, f)
    with _raises(RuntimeError, "mean()", "could not infer output dtype", "int64"):
        i.mean()
    with _raises(RuntimeError, "neg()", "Negation, the `-` operator, on a bool tensor"):
        _ = -b
    with _raises(RuntimeError, "sub()", "with a bool tensor", "'other'"):
        i - b
    with _raises(RuntimeError, "matmul()", "same dtype", "float32", "int64"):
        tt.matmul(f, i)
    with _raises(RuntimeError, "dot()", "same dtype", "float32", "float64"):
        tt.dot(f, f.double())
    with _raises(RuntimeError, "where()", "boolean", "'condition'"):
        tt.where(i, f, f)
    with _raises(RuntimeError, "add()", "alpha must not be a floating point"):
        tt.add(i, i, alpha=0.5)
    with _raises(RuntimeError, "var()", "floating point and complex"):
        i.var()


def test_data_dependent_errors_on_cpu() -> None:
    i = tt.tensor([4, 5])
    with _raises(ZeroDivisionError, "floor_divide()", "division by zero", "'other'"):
        i // tt.tensor([1, 0])
    with pytest.raises(RuntimeError):  # also a RuntimeError, as PyTorch raises
        i % 0
    with _raises(RuntimeError, "pow()", "negative integer powers"):
        i**-1
    # An unsigned tensor: PyTorch refuses the power before converting the number to the
    # dtype (uint8: -3 wrapped to 253 and gave [0, 1, 19, 213]).
    u = tt.tensor([0, 1, 3, 5], dtype=tt.uint8)
    for power in (-3, -1, -300):
        with _raises(RuntimeError, "pow()", "negative integer powers"):
            u**power
    with _raises(RuntimeError, "pow()", "negative integer powers"):
        u.pow_(-2)
    assert u.tolist() == [0, 1, 3, 5] and (u - 3).tolist() == [253, 254, 0, 2]
    assert (tt.tensor([1.0]) // 0).tolist() == [float("inf")]  # floats: inf, no error


def test_bad_arguments() -> None:
    x = tt.tensor([1.0])
    with _raises(RuntimeError, "div()", "rounding_mode", "'bad'"):
        tt.div(x, x, rounding_mode="bad")
    with _raises(RuntimeError, "gelu", "approximate"):
        from dispatch import ops

        ops.core.gelu(x, approximate="fast")
    with _raises(RuntimeError, "clamp()", "At least one of 'min' or 'max'"):
        tt.clamp(x)
    with _raises(TypeError, "add()", "'beta'"):
        tt.add(x, x, beta=3)  # type: ignore[call-arg]
    with _raises(TypeError, "core::add", "alpha"):  # the operator's schema checks calls
        tt.add(x, x, alpha="two")  # type: ignore[arg-type]


def test_kernel_errors_carry_the_dispatch_note() -> None:
    with pytest.raises(RuntimeError) as info:
        tt.zeros(2) + tt.zeros(3)
    notes = getattr(info.value, "__notes__", [])
    assert any("core::add.Tensor" in n for n in notes), notes

"""Shipped modes (LoggingMode, FakeMode) and Tensor subclasses with __dispatch__."""

from __future__ import annotations

import io
from typing import Any

import pytest

import tensor as tt
from tensor.modes import FakeMode, LoggingMode


def test_logging_mode_records_each_call_with_shapes_dtypes_devices() -> None:
    stream = io.StringIO()
    with LoggingMode(stream) as log:
        x = tt.ones(2, 3, dtype=tt.float64)
        tt.sin(x).sum(dim=0)
    assert log.lines == [
        "core::ones((2, 3), dtype=tensor.float64, device=None) -> float64[2x3]@cpu",
        "core::sin(float64[2x3]@cpu) -> float64[2x3]@cpu",
        "core::sum(float64[2x3]@cpu, 0, False) -> float64[3]@cpu",
    ]
    assert stream.getvalue().splitlines() == log.lines


def test_logging_mode_sees_calls_below_autograd() -> None:
    x = tt.ones(2, requires_grad=True)
    with LoggingMode() as log:
        y = tt.exp(x)
    assert y.requires_grad and y.grad_fn.name() == "ExpBackward0"
    assert log.lines == ["core::exp(float32[2]@cpu) -> float32[2]@cpu"]


def test_fake_mode_propagates_shapes_without_data() -> None:
    def program(batch: tt.Tensor, w: tt.Tensor) -> tt.Tensor:
        return (tt.relu(batch @ w) + 1).logsumexp(1)

    real = program(tt.randn(8, 5), tt.randn(5, 3))
    with FakeMode():
        fake = program(tt.randn(8, 5), tt.randn(5, 3))
        mixed = tt.ones(3) + tt.tensor([1.0, 2.0, 3.0])
    assert fake.device.type == "meta" and mixed.device.type == "meta"
    assert fake.shape == real.shape and fake.dtype is real.dtype
    with FakeMode(), pytest.raises(RuntimeError, match="cannot be multiplied"):
        tt.randn(8, 5) @ tt.randn(4, 3)


class Tagged(tt.Tensor):
    """A subclass that records the operators applied to it, then runs them on plain data."""

    seen: list[str] = []

    @classmethod
    def __dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        cls.seen.append(f"{func.name} {[t.__name__ for t in types]}")
        plain = [a.as_subclass(tt.Tensor) if isinstance(a, tt.Tensor) else a for a in args]
        return func(*plain, **(kwargs or {}))


def test_tensor_subclass_with_dispatch_is_called() -> None:
    Tagged.seen.clear()
    x = tt.ones(2).as_subclass(Tagged)
    assert "Python" in repr(x.keys)
    out = x + tt.ones(2)
    assert type(out) is tt.Tensor and out.tolist() == [2.0, 2.0]
    with LoggingMode() as log:
        tt.sin(x)
    assert Tagged.seen == ["core::add.Tensor ['Tagged']", "core::sin ['Tagged']"]
    assert log.lines[0].startswith("core::sin(")  # the mode first, then the subclass

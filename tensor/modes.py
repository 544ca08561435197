"""Shipped Python modes: ``LoggingMode`` and ``FakeMode``.

Imports: ``dispatch`` and ``tensor`` siblings.

Both are ``dispatch.DispatchMode`` subclasses, so they see every operator call
after autocast and autograd have run (the Python key sits below them), and the
calls they make go to the layers below them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

from dispatch import DispatchMode, OpOverload

from ._device import device

__all__ = ["FakeMode", "LoggingMode"]

_META = device("meta")


def _is_tensor(v: Any) -> bool:
    return getattr(v, "_dispatch_bits", None) is not None


def _describe(v: Any) -> str:
    if _is_tensor(v):
        shape = "x".join(str(n) for n in v.shape) or "scalar"
        return f"{v.dtype.name}[{shape}]@{v.device}"
    if isinstance(v, (list, tuple)):
        inner = ", ".join(_describe(x) for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner})"
    return repr(v)


class LoggingMode(DispatchMode):
    """Record each operator call with its argument shapes, dtypes and devices.

    >>> import tensor as tt
    >>> with LoggingMode() as log:
    ...     _ = tt.ones(2, 3) @ tt.ones(3, 1)
    >>> log.lines[-1]
    'core::matmul(float32[2x3]@cpu, float32[3x1]@cpu) -> float32[2x1]@cpu'
    """

    supports_higher_order_operators = True

    def __init__(self, stream: TextIO | None = None) -> None:
        self.lines: list[str] = []
        self.stream = stream

    def __dispatch__(
        self,
        func: OpOverload,
        types: tuple[type, ...],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        parts = [_describe(a) for a in args] + [f"{k}={_describe(v)}" for k, v in kwargs.items()]
        line = f"{func.name}({', '.join(parts)}) -> {_describe(out)}"
        self.lines.append(line)
        if self.stream is not None:
            print(line, file=self.stream)
        return out


class FakeMode(DispatchMode):
    """Run a program on ``meta`` tensors: shapes and dtypes propagate, no data is made.

    Tensor arguments are replaced by meta tensors of the same shape and dtype, and
    factories make meta tensors, so every result is a meta tensor.

    >>> import tensor as tt
    >>> with FakeMode():
    ...     y = tt.randn(64, 784) @ tt.randn(784, 10)
    >>> y.shape, y.device
    (tt.Size([64, 10]), device(type='meta'))
    """

    supports_higher_order_operators = True

    def __dispatch__(
        self,
        func: Any,
        types: tuple[type, ...],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = dict(kwargs or {})
        if isinstance(func, OpOverload):
            if any(a.name == "device" for a in func.schema.arguments):
                kwargs["device"] = _META
            args = tuple(_to_meta(a) for a in args)
            kwargs = {k: _to_meta(v) for k, v in kwargs.items()}
            return func(*args, **kwargs)
        # A higher-order operator: run it with this mode still handling its body.
        with self:
            return func(*args, **kwargs)


def _to_meta(v: Any) -> Any:
    if _is_tensor(v):
        return v if v.device.type == "meta" else v.to(_META)
    if isinstance(v, (list, tuple)):
        return type(v)(_to_meta(x) for x in v)
    return v


def print_calls(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``fn`` under a LoggingMode that prints each call to stderr."""
    with LoggingMode(sys.stderr):
        return fn(*args, **kwargs)

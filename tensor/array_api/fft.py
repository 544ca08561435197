"""The standard's ``fft`` extension over ``tt.fft``'s operators (``axis``/``axes``, ``norm``).

Imports: ``tensor``.
"""

from __future__ import annotations

from typing import Any

import tensor as tt
from tensor._tensor import Tensor

__all__ = [
    "fft",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfftn",
    "rfft",
    "rfftfreq",
    "rfftn",
]


def _one(op: Any, name: str) -> Any:
    def fn(x: Tensor, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Tensor:
        return op(x, n, axis, norm)

    fn.__name__ = fn.__qualname__ = name
    return fn


def _many(op: Any, name: str) -> Any:
    def fn(x: Tensor, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Tensor:
        return op(x, None if s is None else [*s], None if axes is None else [*axes], norm)

    fn.__name__ = fn.__qualname__ = name
    return fn


fft = _one(tt.fft.fft, "fft")
ifft = _one(tt.fft.ifft, "ifft")
rfft = _one(tt.fft.rfft, "rfft")
irfft = _one(tt.fft.irfft, "irfft")
hfft = _one(tt.fft.hfft, "hfft")
ihfft = _one(tt.fft.ihfft, "ihfft")
fftn = _many(tt.fft.fftn, "fftn")
ifftn = _many(tt.fft.ifftn, "ifftn")
rfftn = _many(tt.fft.rfftn, "rfftn")
irfftn = _many(tt.fft.irfftn, "irfftn")


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Tensor:
    return tt.fft.fftfreq(n, d, dtype=dtype, device=device)


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Tensor:
    return tt.fft.rfftfreq(n, d, dtype=dtype, device=device)


def fftshift(x: Tensor, /, *, axes: Any = None) -> Tensor:
    return tt.fft.fftshift(x, axes)


def ifftshift(x: Tensor, /, *, axes: Any = None) -> Tensor:
    return tt.fft.ifftshift(x, axes)

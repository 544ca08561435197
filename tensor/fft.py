"""``tt.fft``: discrete Fourier transforms (PyTorch's ``torch.fft`` names).

Imports: ``tensor._generated`` (the transforms are operators, generated from the table:
pocketfft on the CPU, cuFFT on CUDA) and the package's factories for the helpers.

>>> import tensor as tt
>>> tt.fft.rfft(tt.tensor([1.0, 2.0, 3.0, 4.0])).tolist()
[(10+0j), (-2+2j), (-2+0j)]
"""

from __future__ import annotations

from typing import Any

from ._generated import FUNCTIONS

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

fft = FUNCTIONS["fft.fft"]
ifft = FUNCTIONS["fft.ifft"]
rfft = FUNCTIONS["fft.rfft"]
irfft = FUNCTIONS["fft.irfft"]
hfft = FUNCTIONS["fft.hfft"]
ihfft = FUNCTIONS["fft.ihfft"]
fftn = FUNCTIONS["fft.fftn"]
ifftn = FUNCTIONS["fft.ifftn"]
rfftn = FUNCTIONS["fft.rfftn"]
irfftn = FUNCTIONS["fft.irfftn"]


def fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """``torch.fft.fftfreq``: the sample frequencies ``[0, 1, ..., -1] / (d * n)``."""
    import tensor as tt

    k = tt.arange(n, dtype=dtype, device=device)
    k = tt.where(k < (n + 1) // 2, k, k - n)
    return k / (d * n)


def rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """``torch.fft.rfftfreq``: the non-negative frequencies ``[0, ..., n // 2] / (d * n)``."""
    import tensor as tt

    return tt.arange(n // 2 + 1, dtype=dtype, device=device) / (d * n)


def _shift(x: Any, dim: Any, sign: int) -> Any:
    import tensor as tt

    dims = list(range(x.ndim)) if dim is None else ([dim] if isinstance(dim, int) else [*dim])
    if not dims:
        return x.clone()
    shifts = [sign * (x.shape[d] // 2) if sign > 0 else -(x.shape[d] // 2) for d in dims]
    return tt.roll(x, shifts, dims)


def fftshift(input: Any, dim: Any = None) -> Any:  # noqa: A002
    """``torch.fft.fftshift``: the zero frequency moved to the middle (a ``roll``)."""
    return _shift(input, dim, 1)


def ifftshift(input: Any, dim: Any = None) -> Any:  # noqa: A002
    """``torch.fft.ifftshift``: ``fftshift``'s inverse."""
    return _shift(input, dim, -1)

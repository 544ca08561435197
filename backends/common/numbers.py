"""Whether a Python number fits a dtype, as PyTorch checks before storing it.

Imports: NumPy (dtype limits).  A dtype here is one of the front end's: it has ``kind``
(0 bool, 1 integer, 2 floating, 3 complex), ``numpy_dtype``, ``is_complex``, ``to_real()``.

Note [Numbers that overflow]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
PyTorch converts a number that it stores into a tensor (``full``, ``fill_``,
``masked_fill``, ``clamp``'s bounds, ``where``'s number) with c10's ``checked_convert``
and raises "value cannot be converted to type int without overflow" where NumPy would
wrap or round to inf silently.  ``overflows`` copies ``c10::overflows``:
- bool numbers, and any number into bool, never overflow;
- into an integer dtype: outside [min, max] overflows, NaN and inf too; unsigned dtypes
  also take negative ints down to -max (they wrap, so ``a - b`` is ``a + 255 * b``), not
  negative floats (``full((), -1.0, dtype=uint8)`` is refused);
- into a floating dtype: inf and NaN fit, finite numbers must lie within the largest
  finite value;
- a complex number into a real dtype overflows when its imaginary part is not zero;
  into a complex dtype each part is checked as a float;
- a fill of a single float16/bfloat16 element (``fill_``, ``full``) converts the number
  to a double instead, so a finite number past the dtype's range fits (it is stored as
  inf) while a complex one with an imaginary part is still refused (``check_fill``).
Arithmetic (``int32 + 2**40``) does not check: PyTorch wraps there, as we do.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["NUMBER_KIND", "check_fill", "check_fits", "int_range", "limits", "overflows", "wrapped"]

# A Python number's kind, as ``dtype.category`` numbers it (bool < int < float < complex):
# a number keeps a tensor's dtype when its kind is not above the tensor's.
NUMBER_KIND = {bool: 0, int: 1, float: 2, complex: 3}

_LIMITS: dict[Any, tuple[float, float]] = {}
_INT_RANGES: dict[Any, tuple[int, int]] = {}


def int_range(dt: Any) -> tuple[int, int]:
    """The values an integer dtype holds (``limits`` also takes the negative ints an
    unsigned dtype wraps)."""
    lim = _INT_RANGES.get(dt)
    if lim is None:
        info = np.iinfo(dt.numpy_dtype)
        lim = _INT_RANGES[dt] = (int(info.min), int(info.max))
    return lim


def limits(dt: Any) -> tuple[float, float]:
    """The range ``overflows`` allows a finite number in ``dt`` (of its real part for a
    complex dtype): [min, max] for integers (from -max for unsigned), the largest finite
    value either side for floats."""
    lim = _LIMITS.get(dt)
    if lim is None:
        np_dt = dt.to_real().numpy_dtype if dt.is_complex else dt.numpy_dtype
        if dt.category == 1:
            info = np.iinfo(np_dt)
            lo = -int(info.max) if info.min == 0 else int(info.min)
            lim = (lo, int(info.max))
        else:
            big = float(np.finfo(np_dt).max) if np_dt.name != "bfloat16" else 3.3895313892515355e38
            lim = (-big, big)
        _LIMITS[dt] = lim
    return lim


def overflows(value: Any, dt: Any) -> bool:
    """Whether PyTorch refuses to store ``value`` (a Python number) in dtype ``dt``."""
    if type(value) is bool or dt.category == 0:  # bool
        return False
    if isinstance(value, complex):
        if not dt.is_complex:
            if value.imag:
                return True
            value = value.real
        else:
            return overflows(value.real, dt.to_real()) or overflows(value.imag, dt.to_real())
    lo, hi = limits(dt)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return dt.category == 1
        if dt.category == 1 and dt.numpy_dtype.kind == "u":
            lo = 0  # a float into an unsigned dtype: no wrapping (c10: f < lowest())
    return not lo <= value <= hi


def check_fits(op: str, value: Any, dt: Any, arg: str) -> None:
    """Raise PyTorch's RuntimeError when ``value`` overflows ``dt`` (Note [Numbers that
    overflow]); anything but a Python number is left alone."""
    if type(value) in (int, float, complex) and overflows(value, dt):
        raise RuntimeError(
            f"{op}(): value cannot be converted to type {dt.name} without overflow "
            f"(argument '{arg}' is {value!r}, outside the range of {dt.name})"
        )


def wrapped(value: Any, dt: Any) -> Any:
    """``value`` as PyTorch stores it in ``dt``: a negative int into an unsigned dtype
    wraps around (-1 is 255 in uint8), which NumPy refuses; a complex number (that fits)
    into a real dtype is its real part; anything else unchanged."""
    if type(value) is complex and not dt.is_complex:
        return value.real
    if type(value) is int and value < 0 and dt.category == 1 and dt.numpy_dtype.kind == "u":
        return value % (1 << (8 * dt.itemsize))
    return value


def check_fill(op: str, value: Any, dt: Any, arg: str, size: int) -> None:
    """``check_fits`` for a fill of ``size`` elements (``fill_``, ``full``): PyTorch
    fills a single float16/bfloat16 element through a double (Note [Numbers that
    overflow]), refusing only a complex number with an imaginary part there."""
    if size != 1 or dt.category != 2 or dt.itemsize != 2:
        check_fits(op, value, dt, arg)
    elif type(value) is complex and value.imag:
        raise RuntimeError(
            f"{op}(): value cannot be converted to type {dt.name} without overflow "
            f"(argument '{arg}' is {value!r}: a real dtype takes no imaginary part)"
        )

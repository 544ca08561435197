"""Elementwise math that is not one namespace function, written once against ``xp``.

Imports: the standard library, ml_dtypes (for bfloat16 limits) and
``backends.common.errors``.

``Formulas(xp)`` binds the functions to a namespace (NumPy or CuPy).  They take
arrays already cast to the compute dtype (and for the ``extra`` binary ops the
compute dtype itself), and reproduce PyTorch where NumPy differs: integer
division by zero raises, integer powers with negative exponents give 0/±1,
``sign`` of bool, ``round`` of integers, ``nan_to_num`` defaults per dtype.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import ml_dtypes

from . import errors

__all__ = ["ARGUMENT_CHECKS", "Formulas", "check_alpha", "check_gelu", "check_round"]

_SQRT_HALF = math.sqrt(0.5)  # M_SQRT1_2, PyTorch's gelu's kAlpha (1 / sqrt(2.0) is an ulp low)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


# -- argument checks: shared with the Meta kernels, which must reject the same calls ----------
def _copy(x: Any) -> Any:
    return x.copy()


def _retype(x: Any, dtype: Any) -> Any:
    return x if x.dtype == dtype else x.astype(dtype)


def _typed(x: Any, value: Any) -> Any:
    return x.dtype.type(value)


def _plain(x: Any, value: Any) -> Any:
    return value


def _fit(value: Any, info: Any) -> float:
    """``value`` as a float of the dtype ``info`` describes would hold it: beyond its
    range, an infinity (what a cast to it gives)."""
    value = float(value)
    return value if abs(value) <= float(info.max) else math.copysign(math.inf, value)


def check_alpha(op: str, cdt: Any, alpha: Any) -> None:
    """PyTorch's rules for ``alpha`` of add/sub/rsub, given the compute dtype."""
    if cdt.category <= 1 and isinstance(alpha, float):  # bool or integer result
        raise RuntimeError(
            f"{op}(): For integral input tensors, argument alpha must not be a floating point "
            f"number (got alpha={alpha!r})"
        )
    if isinstance(alpha, bool) and cdt.category != 0:
        raise RuntimeError(
            f"{op}(): Boolean alpha only supported for Boolean results (argument 'alpha' is "
            f"{alpha!r}, the result is {cdt.name})."
        )
    if cdt.category < 3 and isinstance(alpha, complex):
        raise RuntimeError(
            f"{op}(): For non-complex input tensors, argument alpha must not be a complex number."
        )


def check_round(cdt: Any, decimals: int = 0) -> None:
    if cdt.category <= 1 and decimals != 0:
        raise NotImplementedError(
            f"\"round\" with decimals={decimals} not implemented for '{cdt.name}' (argument "
            f"'self'); convert to a floating point dtype first"
        )


def check_gelu(cdt: Any, approximate: str = "none") -> None:
    if approximate not in ("none", "tanh"):
        raise RuntimeError(
            f"gelu(): approximate argument must be either none or tanh, got {approximate!r}"
        )


def check_rounding_mode(rounding_mode: Any) -> None:
    if rounding_mode not in (None, "trunc", "floor"):
        raise RuntimeError(
            f"div(): expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
            f"'{rounding_mode}'"
        )


# op name -> check(compute dtype, *args, **kwargs) of its extra arguments.
ARGUMENT_CHECKS: dict[str, Any] = {
    "add": lambda cdt, *a, alpha=1, **k: check_alpha("add", cdt, alpha),
    "sub": lambda cdt, *a, alpha=1, **k: check_alpha("sub", cdt, alpha),
    "rsub": lambda cdt, *a, alpha=1, **k: check_alpha("rsub", cdt, alpha),
    "round": lambda cdt, *a, decimals=0, **k: check_round(cdt, decimals),
    "gelu": lambda cdt, *a, approximate="none", **k: check_gelu(cdt, approximate),
    "div": lambda cdt, *a, rounding_mode=None, **k: check_rounding_mode(rounding_mode),
}


# PyTorch's pow of a real floating tensor by these number exponents is not ``pow``: its
# CPU and CUDA kernels (``pow_tensor_scalar_optimized_kernel``) compute ``x * x``,
# ``x * x * x``, ``sqrt(x)``, ``1 / sqrt(x)``, ``1 / x`` and ``1 / (x * x)``, whose values
# differ from C's ``pow`` in the last place and at the edges (``(-0.0) ** -0.5`` is
# -inf, not inf; ``(-inf) ** 0.5`` NaN, not inf; ``(-inf) ** -0.5`` NaN, not 0;
# ``1.7e154 ** -2`` 0, not a subnormal).  (NumPy's power already takes the square, the
# square root and the reciprocal for 2, 0.5 and -1; CuPy's does not.)  Float32 and
# float64 only: PyTorch's half precision computes float32's ``pow`` and rounds.
POWERS_AS_PRODUCTS: dict[float, Callable[[Any, Any], Any]] = {
    2: lambda xp, x: x * x,
    3: lambda xp, x: x * x * x,
    0.5: lambda xp, x: xp.sqrt(x),
    -0.5: lambda xp, x: 1 / xp.sqrt(x),
    -1: lambda xp, x: 1 / x,
    -2: lambda xp, x: 1 / (x * x),
}


class Formulas:
    """Array formulas for one namespace (``Formulas(numpy)``)."""

    def __init__(
        self,
        xp: Any,
        *,
        frompyfunc: Any = None,
        kind_of: Any = None,
        copy: Any = None,
        finfo: Any = None,
        retype: Any = None,
        standard: bool = False,
        erf: Any = None,
        keep_gelu_erf: Any = None,
    ) -> None:
        self.xp = xp
        # A plug-in device's Namespace gives the standard's spellings of ``x.dtype.kind``
        # and ``x.copy()`` (Note [Array dtypes of a namespace] in ``elementwise``).
        self._kind = kind_of or operator.attrgetter("kind")
        self._copy = copy or _copy
        self._retype = retype or _retype  # x as another array's dtype: ns.retype
        # A number in x's dtype: NumPy's scalar type (ml_dtypes' bfloat16 would promote a
        # Python float to float32), a Python number in the standard (it keeps x's dtype).
        self._scalar = _plain if standard else _typed
        self._standard = standard
        # NumPy's names where the library has them (CuPy has no ``pow``), else the
        # standard's; a library without fmod computes it from ``remainder`` (integers).
        self._pow = getattr(xp, "power", None) or xp.pow
        self._divide = getattr(xp, "true_divide", None) or xp.divide
        self._fmod = getattr(xp, "fmod", None)
        self._finfo = finfo or ml_dtypes.finfo  # ml_dtypes': NumPy's knows no bfloat16
        # erf/erfc: NumPy has none.  math.erf elementwise is exact (and slow); a backend
        # with a native erf (CuPy) passes its own to the kernel tables instead.  A plug-in
        # device may bring its own ``frompyfunc`` (dask's, safe on 0-d blocks).
        fpf = frompyfunc or getattr(xp, "frompyfunc", None)
        self._erf = fpf(math.erf, 1, 1) if fpf is not None else None
        self._erfc = fpf(math.erfc, 1, 1) if fpf is not None else None
        # A faster erf for the arrays it takes, None for the others (the CPU's float32
        # erf by SciPy: Note [Float32 erf by SciPy] in backends/cpu/elementwise.py).
        self._fast_erf = erf
        # ``keep_gelu_erf(x, e)``: told each exact gelu's input and its ``erf(x / sqrt 2)``
        # (the CPU's Note [Gelu's erf kept for the backward]); None: nothing told.
        self._keep_gelu_erf = keep_gelu_erf

    # -- unary --------------------------------------------------------------------------------
    def rsqrt(self, x: Any) -> Any:
        xp = self.xp
        return xp.reciprocal(xp.sqrt(x))

    def sigmoid(self, x: Any) -> Any:
        xp = self.xp
        return xp.reciprocal(xp.exp(xp.negative(x)) + 1)

    def relu(self, x: Any) -> Any:
        return self.xp.maximum(x, self._scalar(x, 0))

    def silu(self, x: Any) -> Any:
        return x * self.sigmoid(x)

    def frac(self, x: Any) -> Any:
        return x - self.xp.trunc(x)

    def sign(self, x: Any) -> Any:
        if self._kind(x.dtype) == "b":
            return self._copy(x)
        if self._kind(x.dtype) in "iu":
            return self.xp.sign(x)
        # PyTorch: (0 < x) - (x < 0), so sign(nan) = 0 and sign(-0.0) = 0.
        return self._retype(x > 0, x.dtype) - self._retype(x < 0, x.dtype)

    def erf(self, x: Any) -> Any:
        if self._fast_erf is not None:
            out = self._fast_erf(x)
            if out is not None:
                return out
        if self._erf is None:
            raise NotImplementedError(
                f"erf: {self.xp.__name__} has no erf, and no frompyfunc to make one from "
                f"math.erf (give one in the device's functions={{'frompyfunc': ...}})"
            )
        # frompyfunc gives an object array (a bare float for 0-d input): back to x's dtype.
        return self._retype(self.xp.asarray(self._erf(x)), x.dtype)

    def erfc(self, x: Any) -> Any:
        return self._retype(self.xp.asarray(self._erfc(x)), x.dtype)

    def exp2(self, x: Any) -> Any:
        return self.xp.exp2(x)

    def same_if_int(self, fn: Any) -> Any:
        """``fn`` for floats; a copy for integers (floor/ceil/trunc of an integer tensor)."""

        def apply(x: Any) -> Any:
            return self._copy(x) if self._kind(x.dtype) in "iub" else fn(x)

        return apply

    def round(self, x: Any, cdt: Any, *, decimals: int = 0) -> Any:
        check_round(cdt, decimals)
        if self._kind(x.dtype) in "iu":
            return self._copy(x)
        if decimals == 0:
            return self.xp.round(x)
        if self._standard:  # the standard's round has no decimals: NumPy's own formula
            scale = 10.0 ** abs(decimals)
            if decimals > 0:
                return self.xp.round(x * scale) / scale
            return self.xp.round(x / scale) * scale
        if self._finfo(x.dtype).bits == 16:  # x * 10**decimals must not round in half precision
            wide = self.xp.round(self._retype(x, self.xp.float32), decimals)
            return self._retype(wide, x.dtype)
        return self.xp.round(x, decimals)

    def gelu(self, x: Any, cdt: Any, *, approximate: str = "none") -> Any:
        check_gelu(cdt, approximate=approximate)
        xp = self.xp
        if approximate == "none":
            e = self.erf(x * self._scalar(x, _SQRT_HALF))
            keep = self._keep_gelu_erf
            if keep is not None:
                keep(x, e)
            return 0.5 * x * (1 + e)
        c = self._scalar
        inner = c(x, _SQRT_2_OVER_PI) * (x + c(x, 0.044715) * x * x * x)
        return 0.5 * x * (1 + xp.tanh(inner))

    def softplus(self, x: Any, cdt: Any, beta: Any = 1, threshold: Any = 20) -> Any:
        xp = self.xp
        bx = x * beta
        return xp.where(bx > threshold, x, xp.log1p(xp.exp(bx)) / beta)

    def nan_to_num(
        self, x: Any, cdt: Any, nan: Any = None, posinf: Any = None, neginf: Any = None
    ) -> Any:
        xp = self.xp
        if self._kind(x.dtype) in "iub":
            return self._copy(x)
        if self._kind(x.dtype) == "c":
            real = self.nan_to_num(xp.real(x), cdt, nan, posinf, neginf)
            imag = self.nan_to_num(xp.imag(x), cdt, nan, posinf, neginf)
            return self._retype(real, x.dtype) + self._retype(imag, x.dtype) * 1j
        info = self._finfo(x.dtype)
        # A finite value beyond x's range (posinf=1e300 for float32) is x's infinity, as a
        # cast to x's dtype makes it.
        c = self._scalar
        out = xp.where(xp.isnan(x), c(x, _fit(0.0 if nan is None else nan, info)), x)
        top = info.max if posinf is None else _fit(posinf, info)
        bottom = info.min if neginf is None else _fit(neginf, info)
        inf = xp.isinf(out)
        out = xp.where(inf & (out > 0), c(x, float(top)), out)
        return xp.where(inf & (out < 0), c(x, float(bottom)), out)

    # -- binary -----------------------------------------------------------------------------------
    def _check_divisor(self, op: str, x: Any, y: Any) -> None:
        # Integer division (the compute dtype is an integer type) by zero raises, as in
        # PyTorch only when a division is done: an empty operand makes an empty result.
        dt = x.dtype if hasattr(x, "dtype") else y.dtype  # 7 % t: the number comes first
        if (
            self._kind(dt) in "iub"
            and getattr(x, "size", 1)
            and getattr(y, "size", 1)
            and not bool(self.xp.all(self.xp.asarray(y) != 0))
        ):
            raise errors.zero_division(op)

    def logaddexp(self, x: Any, y: Any) -> Any:
        """NumPy's for real dtypes (it has no complex one); PyTorch's for complex: the
        operand with the larger real part plus log1p(exp(other - it))."""
        xp = self.xp
        if self._kind(x.dtype) != "c":
            return xp.logaddexp(x, y)
        first = xp.real(x) >= xp.real(y)
        hi, lo = xp.where(first, x, y), xp.where(first, y, x)
        return hi + xp.log1p(xp.exp(lo - hi))

    def real(self, x: Any) -> Any:
        """A new array (the library's ``real`` is a view, or the input itself): Note [real,
        imag and conj are copies] in ``tensor.optable.elementwise``."""
        return self._copy(self.xp.real(x))

    def imag(self, x: Any) -> Any:
        return self._copy(self.xp.imag(x))

    def conj(self, x: Any) -> Any:
        """The library's for complex dtypes; a copy otherwise (NumPy's makes bools int8)."""
        return self.xp.conj(x) if self._kind(x.dtype) == "c" else self._copy(x)

    def floor_divide(self, x: Any, y: Any) -> Any:
        self._check_divisor("floor_divide", x, y)
        return self.xp.floor_divide(x, y)

    def remainder(self, x: Any, y: Any) -> Any:
        self._check_divisor("remainder", x, y)
        xp = self.xp
        out = xp.remainder(x, y)
        # PyTorch's remainder is ``fmod(x, y)`` moved by ``y`` when the signs differ: a
        # zero result keeps the dividend's sign (remainder(0.0, -1.0) is 0.0, and
        # remainder(-3.0, 1.5) is -0.0), where NumPy's takes the divisor's.
        dt = getattr(out, "dtype", None)
        # (No test for any zero first: on a GPU that would wait for the device.)
        if dt is not None and self._kind(dt) in "fV":  # V: ml_dtypes bfloat16
            out = xp.where(out == 0, xp.copysign(out, x), out)
        return out

    def fmod(self, x: Any, y: Any) -> Any:
        self._check_divisor("fmod", x, y)
        if self._fmod is not None:
            return self._fmod(x, y)
        # The standard has no fmod: from remainder (the divisor's sign), exactly for
        # integers; a float remainder already rounded, so floats have no such identity.
        dt = x.dtype if hasattr(x, "dtype") else y.dtype
        if self._kind(dt) not in "iu":
            raise NotImplementedError(
                f"fmod of floating-point tensors: {self.xp.__name__} has no fmod (the "
                f"standard's remainder cannot give it exactly)"
            )
        r = self.xp.remainder(x, y)
        return self.xp.where((r != 0) & ((r < 0) != (self.xp.asarray(x) < 0)), r - y, r)

    def pow(self, x: Any, y: Any) -> Any:
        xp = self.xp
        if getattr(x, "dtype", None) is not None and self._kind(x.dtype) in "iu":
            if isinstance(y, (int, bool)) or getattr(y, "dtype", None) is None:
                if y < 0:
                    raise RuntimeError(
                        "pow(): Integers to negative integer powers are not allowed."
                    )
                return self._pow(x, y)
            y = xp.asarray(y)
            if self._kind(y.dtype) == "i" and y.size and bool(xp.any(y < 0)):
                # PyTorch: 1 ** -n = 1, (-1) ** -n = ±1, anything else ** -n = 0.
                neg = y < 0
                safe = self._pow(x, xp.where(neg, 0, y))
                odd = (y % 2) != 0
                special = xp.where(x == 1, 1, xp.where(x == -1, xp.where(odd, -1, 1), 0))
                return xp.where(neg, self._retype(special, x.dtype), safe)
        elif (
            (type(y) is int or type(y) is float)
            and y in POWERS_AS_PRODUCTS
            and getattr(x, "dtype", None) is not None
            and self._kind(x.dtype) == "f"
            and x.dtype.itemsize >= 4  # half precision: computed as float32's pow
        ):
            return POWERS_AS_PRODUCTS[y](xp, x)
        return self._pow(x, y)

    def add(self, x: Any, y: Any, cdt: Any, alpha: Any = 1) -> Any:
        return self.xp.add(x, self._scaled(y, cdt, alpha, "add"))

    def sub(self, x: Any, y: Any, cdt: Any, alpha: Any = 1) -> Any:
        return self.xp.subtract(x, self._scaled(y, cdt, alpha, "sub"))

    def rsub(self, x: Any, y: Any, cdt: Any, alpha: Any = 1) -> Any:
        return self.xp.subtract(y, self._scaled(x, cdt, alpha, "rsub"))

    def _scaled(self, y: Any, cdt: Any, alpha: Any, op: str) -> Any:
        check_alpha(op, cdt, alpha)
        if alpha is True or (alpha == 1 and not isinstance(alpha, float)):
            return y
        if cdt.category == 0:  # bool results: alpha is True/False (or 1/0)
            return y if alpha else self.xp.zeros_like(y)
        if self._standard and not hasattr(y, "dtype"):  # the standard's functions take
            return y * alpha  # one Python number at most
        return self.xp.multiply(y, alpha)

    def div(self, x: Any, y: Any, cdt: Any, rounding_mode: str | None = None) -> Any:
        xp = self.xp
        if rounding_mode is None:
            return self._divide(x, y)
        if rounding_mode == "floor":
            self._check_divisor("div", x, y)
            return xp.floor_divide(x, y)
        check_rounding_mode(rounding_mode)
        self._check_divisor("div", x, y)
        if cdt.category <= 1:
            q = xp.floor_divide(x, y)
            fix = (xp.remainder(x, y) != 0) & ((x < 0) != (xp.asarray(y) < 0))
            return q + self._retype(fix, q.dtype)
        return xp.trunc(self._divide(x, y))

    def isclose(
        self,
        x: Any,
        y: Any,
        cdt: Any,
        rtol: float = 1e-05,
        atol: float = 1e-08,
        equal_nan: bool = False,
    ) -> Any:
        xp = self.xp
        if cdt.category == 0:
            return xp.equal(x, y)
        if cdt.category == 1:
            x, y = self._retype(x, xp.float64), self._retype(xp.asarray(y), xp.float64)
        close = xp.equal(x, y) | (xp.abs(x - y) <= atol + rtol * xp.abs(y))
        if cdt.category >= 2:
            close = close & xp.isfinite(x - y) | xp.equal(x, y)
            if equal_nan:
                close = close | (xp.isnan(x) & xp.isnan(y))
        return close

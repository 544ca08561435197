"""CPU kernels of the elementwise operators: one row per operator, NumPy doing the math.

Imports: NumPy, ``dispatch`` (the schema parser) and ``backends.common``.

Every unary and binary row of the operator table gets its kernels here, made by the
factories of ``backends.common.elementwise``; the math is the row's NumPy / array-API
function (Note [Default math]) unless ``UNARY``, ``UNARY_ARGS`` or ``BINARY`` list an
override: PyTorch's semantics where NumPy's differ, or a faster spelling.
"""

from __future__ import annotations

import operator
from typing import Any

import ml_dtypes
import numpy as np

from dispatch import parse_schema

from ..common import elementwise as ew
from ..common import fastpaths, ternary
from ..common.formulas import Formulas
from ..common.frontend import FrontEnd
from . import _blas

__all__ = ["BINARY", "UNARY", "kernels"]

# Note [Float32 erf by SciPy]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# NumPy has no erf; ``Formulas.erf`` calls ``math.erf`` element by element through
# ``frompyfunc`` (~62 ns an element: 127 us on a [32, 64] float32 batch, so a gelu layer
# took 143 us against PyTorch's 10.6).  SciPy (a dependency, for BLAS) has erf as a
# ufunc, whose float32 loop computes in double and rounds, as ``math.erf`` then the cast
# do: the same float32 bits wherever the two doubles round alike, which is everywhere
# but within a few double ulps of a float32 tie (none in 450,000 random and edge values,
# tests/backends/test_erf_scipy.py), at 7.5 ns an element; SciPy drops a NaN's sign,
# which is put back.  Float64 keeps ``math.erf``: SciPy's double erf is up to 3 ulps
# from it (PyTorch's is within 1), and erfc of both dtypes keeps it too (SciPy's double
# erfc is far off in the tail).  ``scipy.special`` takes ~0.3 s to import, so on the
# first float32 erf, not at ``import tensor``.
_F32 = np.dtype(np.float32)
_SCIPY_ERF: Any = None  # scipy.special.erf once loaded; False: no SciPy


def _float32_erf(x: Any) -> Any:
    """erf of a float32 NumPy array by SciPy; None for anything else (``Formulas.erf``
    then computes it)."""
    global _SCIPY_ERF
    if type(x) is np.ndarray and x.dtype is _F32:
        fn = _SCIPY_ERF
        if fn is None:
            try:
                from scipy.special import erf as fn
            except ImportError:  # pragma: no cover - SciPy is a dependency
                fn = False
            _SCIPY_ERF = fn
        if fn:
            out = fn(x)
            if type(out) is not np.ndarray:  # 0-d: a scalar
                out = np.asarray(out)
            # erf is odd and keeps its input's sign, which SciPy's drops for NaN (-nan
            # in, nan out; math.erf and PyTorch keep it): x's sign on every element.
            return np.copysign(out, x, out=out)
    return None


# Note [Gelu's erf kept for the backward]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The exact gelu's forward computes ``erf(x / sqrt 2)`` and its backward computes it
# again from the saved input (``_gelu``'s formula, and its lane in
# tensor/autograd/_lanes.py): on a [64, 256] float32 batch each erf is ~120 us, most of
# a training step's gelu.  As Note [Cross-entropy softmax kept for the backward] keeps a
# softmax, the CPU forward keeps its last (input array, erf array) pair, for float32 and
# float64 inputs of up to ``_KEPT_GELU_SIZE`` elements, and the lane of a backward whose
# saved input is that same array object takes it (``take_gelu_erf``): the same function
# of the same values (both multiply by ``math.sqrt(0.5)`` rounded to the dtype), so the
# same bits.  The slot is emptied when taken (a second backward through a retained graph
# computes again) and overwritten by the next forward (another thread's, an interleaved
# graph's: the backward then finds another array and computes).  An input changed in
# place between forward and backward is refused before the backward runs (its saved
# version), as without the slot.  Half precision computes on a widened copy, which no
# backward sees: not kept.  tests/tensor/test_lanes.py.
_KEPT_GELU_SIZE = 1 << 18  # elements: 1 MiB of float32
_F64 = np.dtype(np.float64)
_kept_gelu_erf: list[Any] = [None]


def _keep_gelu_erf(x: Any, e: Any) -> None:
    if type(x) is np.ndarray and (x.dtype is _F32 or x.dtype is _F64) and x.ndim:
        _kept_gelu_erf[0] = (x, e) if x.size <= _KEPT_GELU_SIZE else None


def take_gelu_erf(x: Any) -> Any:
    """The kept ``erf(x / sqrt 2)`` of the last exact gelu forward when its input was the
    array ``x`` (Note [Gelu's erf kept for the backward]), emptying the slot; else None."""
    kept = _kept_gelu_erf[0]
    if kept is not None and kept[0] is x:
        _kept_gelu_erf[0] = None
        return kept[1]
    return None


F = Formulas(np, erf=_float32_erf, keep_gelu_erf=_keep_gelu_erf)

# Note [Maximum against zeros]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# NumPy's ``maximum`` of an array and a scalar (a stride-0 operand) runs its element
# loop without SIMD: ~4x slower than against a contiguous array of zeros (float32: 2.9
# vs 1.3 us on 2,048 elements, 58 vs 14 us on 65,536), where ``add``, ``multiply`` and
# the comparisons take their scalar operand at full speed.  So relu of a C-contiguous
# float32/float64 array takes the maximum against zeros kept for the purpose, at most
# ``_ZERO_CHUNK`` elements at a time: the same ufunc on the same values, so the same
# results (NaN where NaN, the zero it returns for -0.0); anything else, and every call
# with the fast paths off, takes ``F.relu`` (tests/backends/test_fastpath_elementwise.py
# compares the two on both sides of the guard).
# The zeros of a shape (a view of the kept zeros) are kept too, for the shapes last seen:
# slicing and reshaping them cost ~0.4 us a call, more than NumPy's maximum on a [32, 64]
# float32 array (a training step's relu).
_ZERO_CHUNK = 1 << 14
_ZEROS = {np.dtype(t): np.zeros(_ZERO_CHUNK, t) for t in (np.float32, np.float64)}
_SHAPED: dict[Any, dict[tuple[int, ...], np.ndarray]] = {dt: {} for dt in _ZEROS}
_SHAPES_KEPT = 64  # per dtype; past it, the kept shapes are dropped and kept anew


def _relu(x: Any) -> Any:
    dt = x.dtype if type(x) is np.ndarray else None
    shaped = _SHAPED.get(dt)
    if shaped is None or not x.flags.c_contiguous or not fastpaths.ENABLED:
        return F.relu(x)
    zeros = shaped.get(x.shape)
    if zeros is not None:
        return np.maximum(x, zeros)
    n = x.size
    if n <= _ZERO_CHUNK:
        if len(shaped) >= _SHAPES_KEPT:
            shaped.clear()
        zeros = shaped[x.shape] = _ZEROS[dt][:n].reshape(x.shape)
        return np.maximum(x, zeros)
    out = np.empty_like(x)
    flat, dest = x.reshape(-1), out.reshape(-1)
    for start in range(0, n, _ZERO_CHUNK):
        stop = min(start + _ZERO_CHUNK, n)
        np.maximum(flat[start:stop], _ZEROS[dt][: stop - start], out=dest[start:stop])
    return out


# Overrides of the default math (Note [Default math] in backends.common.elementwise: the
# row's name in NumPy, else in the array API): PyTorch's semantics where NumPy's differ.
UNARY: dict[str, Any] = {
    "sign": F.sign,  # complex sign is z / |z|
    "rsqrt": F.rsqrt,
    "sigmoid": F.sigmoid,
    "relu": _relu,  # Note [Maximum against zeros]
    "silu": F.silu,
    "erf": F.erf,  # Note [Float32 erf by SciPy]
    "erfc": F.erfc,
    "floor": F.same_if_int(np.floor),  # integers come back as they are
    "ceil": F.same_if_int(np.ceil),
    "trunc": F.same_if_int(np.trunc),
    "frac": F.frac,
    "real": F.real,  # copies, not views
    "imag": F.imag,
    "conj": F.conj,  # bool stays bool
}
# One-tensor operators with extra arguments: fn(x, compute_dtype, *args, **kwargs).
UNARY_ARGS: dict[str, Any] = {
    "round": F.round,
    "gelu": F.gelu,
    "softplus": F.softplus,
    "nan_to_num": F.nan_to_num,
}


_HALVES = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))
_NUMBER = (int, float)
_FLOATS = {
    dt: float(ml_dtypes.finfo(dt).max)
    for dt in (np.dtype(np.float32), np.dtype(np.float64), *_HALVES)
}


def _wrapped_number(v: Any, like: Any) -> Any:
    """A Python number as a 0-d array of ``like``'s floating dtype (if it fits: anything
    else is left to the formula and its checks); other values as they are."""
    if type(v) not in _NUMBER:
        return v
    dt = getattr(like, "dtype", None)
    if dt not in _FLOATS or not abs(v) <= _FLOATS[dt]:
        return v
    return np.asarray(v, dt)


def _fused(formula: Any, sign: int, swapped: bool = False) -> Any:
    """``formula`` (add, sub or rsub: ``fn(x, y, cdt, alpha)``) with an int or float
    ``alpha`` other than 1 computed by ``_blas.fused_add`` when it can: the product not
    rounded before the sum, as PyTorch's (Note [Fused add with alpha])."""

    def fn(x: Any, y: Any, cdt: Any, alpha: Any = 1) -> Any:
        if (type(alpha) is float or type(alpha) is int) and alpha != 1:
            a, b = (y, x) if swapped else (x, y)
            if type(a) in _NUMBER or type(b) in _NUMBER:
                # A Scalar overload (``t.add(2.5, alpha=0.3)``): PyTorch wraps the number
                # as a tensor of the other's dtype, then runs the same kernel.
                a, b = _wrapped_number(a, b), _wrapped_number(b, a)
            half = getattr(a, "dtype", None)
            if half in _HALVES and getattr(b, "dtype", None) == half:
                # float16/bfloat16: in float32, rounded to the dtype once at the end (the
                # dtype's own product would round twice), as PyTorch's opmath; alpha
                # first rounded to the dtype (PyTorch's alpha.to<scalar_t>()).
                out = _blas.fused_add(
                    a.astype(np.float32), b.astype(np.float32), sign * float(half.type(alpha))
                )
                if out is not None:
                    return out.astype(half)
            else:
                out = _blas.fused_add(a, b, sign * alpha)
                if out is not None:
                    return out
        return formula(x, y, cdt, alpha=alpha)

    fn.__name__ = fn.__qualname__ = formula.__name__
    return fn


# Two-operand overrides: (fn, extra).  extra: fn(x, y, compute_dtype, *args, **kwargs).
BINARY: dict[str, tuple[Any, bool]] = {
    "add": (_fused(F.add, 1), True),
    "sub": (_fused(F.sub, -1), True),
    "rsub": (_fused(F.rsub, -1, swapped=True), True),
    "mul": (operator.mul, False),  # ndarray.__mul__: the ufunc without its argument parsing
    "div": (F.div, True),
    "floor_divide": (F.floor_divide, False),  # integer division by zero raises
    "remainder": (F.remainder, False),
    "fmod": (F.fmod, False),
    "pow": (F.pow, False),
    "isclose": (F.isclose, True),
    "logaddexp": (F.logaddexp, False),  # complex: PyTorch's (NumPy has none)
}
# With alpha left at 1, add and sub are one ufunc call (see ew.binary_alpha).  The Python
# operators (ndarray.__add__ ...) run the same ufuncs, with the same NumPy 2 rules for
# Python numbers, but skip the ufunc's argument parsing: ~25 ns of a ~1 us `a + b`.
_PLAIN_WHEN_NO_ALPHA = {"add": operator.add, "sub": operator.sub}


def kernels(front: FrontEnd) -> dict[str, Any]:
    """Every elementwise CPU kernel, by qualified overload name (``"add.Tensor"``)."""
    ns = ew.Namespace(
        np.ndarray,
        __name__,
        front,
        asarray=np.asarray,
        fused_add=_blas.fused_add,
        axpy=_blas.axpy,
        axpy_checked=_blas.axpy_checked,
    )
    out: dict[str, Any] = {}
    for op in front.op_table:
        if op.family == "unary":
            if op.name in UNARY_ARGS:
                out[op.name] = ew.unary_args(op, UNARY_ARGS[op.name], ns)
            else:
                out[op.name] = ew.unary(op, UNARY.get(op.name) or ns.math(op.name), ns)
            continue
        if op.family == "ternary":
            out.update(ternary.kernels(op, ns))
            continue
        if op.family != "binary":
            continue
        fn, extra = BINARY.get(op.name) or (ns.math(op.name), False)
        for text in op.schemas:
            schema = parse_schema(text)
            overload = schema.overload_name or "default"
            qualname = op.name if overload == "default" else f"{op.name}.{overload}"
            first, second = schema.arguments[0], schema.arguments[1]
            if first.type.tensor_kind is None:  # pow.Scalar, remainder.Scalar_Tensor
                out[qualname] = ew.binary_reversed(op, fn, ns, overload)
                continue
            names = (first.name, second.name)
            scalar = second.type.tensor_kind is None
            if op.name == "div":
                floor = front.op_info("floor_divide")
                out[qualname] = ew.div(
                    op, floor, np.true_divide, F.div, ns, overload, scalar=scalar
                )
                continue
            kernel = ew.binary(op, fn, ns, overload, scalar=scalar, names=names, extra=extra)
            plain = _PLAIN_WHEN_NO_ALPHA.get(op.name)
            if plain is not None:
                kernel = ew.binary_alpha(
                    op, plain, kernel, ns, overload, scalar=scalar, names=names
                )
            if qualname in _IN_PLACE:
                kernel._in_place = _IN_PLACE[qualname]  # type: ignore[attr-defined]
            out[qualname] = kernel
    return out


# Note [In-place fast path]: ``x -= y`` (the SGD update) is ``sub_``, made by
# ``backends.common.variants`` as the functional kernel plus a copy into ``x``.  When
# both are tensors of one dtype that these operators keep (numbers other than bool),
# NumPy's in-place operator writes the result directly, handling overlap
# between ``x`` and ``y`` as the copy would; anything it refuses (broadcasting ``x``,
# a read-only expansion, a cast) takes the general path and its PyTorch error.  CPU
# only: CuPy's in-place operators do not guard against overlapping operands.  ``alpha``
# must be the int 1 exactly: 1.0, True and 1+0j go the general way, whose checks refuse
# them where PyTorch does.  Partly overlapping operands are refused first (Note
# [Overlapping writes]); the guard also tests ``fastpaths.ENABLED``.
_IN_PLACE = {
    # With an alpha: BLAS axpy into x (Note [Fused add with alpha]).
    "add.Tensor": (operator.iadd, 1, _blas.axpy),
    "sub.Tensor": (operator.isub, 1, lambda y, x, alpha: _blas.axpy(y, x, -alpha)),
    "mul.Tensor": (operator.imul, 1),
    # Note [Scalar in-place fast path] (backends/common/variants.py): a Python number.
    "add.Scalar": (operator.iadd, 1),
    "sub.Scalar": (operator.isub, 1),
    "mul.Scalar": (operator.imul, 1),
}

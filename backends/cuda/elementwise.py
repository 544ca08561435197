"""CUDA kernels of the elementwise operators: our templated kernels (``elementwise.cu``).

Imports: CuPy, NumPy, ``dispatch`` (the schema parser), ``backends.common`` and
``backends.cuda``'s ``_compile``/``_launch``/``_tables``.

The kernel factories are the CPU backend's (``backends.common.elementwise``: dtype
rules, promotion, errors); what they call here is a *launcher* per operator, built
from its row in ``_tables`` (functor name) by ``unary``/``binary``:
- contiguous operands of one shape: ``*_contig`` (a flat grid-stride loop);
- anything else (broadcasting, transposed or sliced views, a Python number as the
  second operand): ``*_strided``/``binary_scalar`` through ``_launch.geometry``;
- complex dtypes, and dtypes a row leaves to the shared formula: CuPy's ufuncs
  (``FALLBACK``), which the factories would call on any backend.
Operators with arguments that are more than a functor's parameters (``add``/``sub``
with ``alpha``, ``div`` with ``rounding_mode``, ``isclose``) run the shared formula
(``backends.common.formulas``) over CuPy's kernels; with their defaults, ``add``/``sub``
are the raw kernels.  Ternary operators (``where``, ``clamp``, ``lerp``, ...) use
CuPy's kernels through the shared ternary factory.
"""

from __future__ import annotations

import contextlib
from typing import Any

import cupy
import ml_dtypes
import numpy as np

from dispatch import parse_schema

from ..common import elementwise as ew
from ..common import ternary
from ..common.formulas import POWERS_AS_PRODUCTS, Formulas, check_gelu, check_round
from ..common.frontend import FrontEnd
from . import _compile, _launch, _tables

__all__ = ["kernels"]

F = Formulas(cupy)
_ndarray = cupy.ndarray
_function = _compile.function
_BLOCK = (_launch.BLOCK,)
_ONE_BLOCK = (1,)  # the grid of n <= BLOCK elements (what _launch.grid(n) returns)
# ``x._c_contiguous`` is CuPy's readonly flag itself (``x.flags`` builds an object per
# read: 0.5 us on the H200 machine's CPU, a tenth of a tiny op's launch).


# Note [Prebuilt kernel arguments]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CuPy's launch turns every argument that is not an array into a ``CPointer`` (the
# address of its value, which cuLaunchKernel copies at the launch): a NumPy scalar
# becomes a ``CScalar`` on every call, while a ``CPointer`` is taken as it is.  So the
# contiguous launches pass the element count as a ``CIntptr`` (an intptr_t: the
# kernels' ``long long``) and the unused functor parameters as one ``CScalar`` of
# float64 0.0 made at import: 4.57 us a raw launch of the add kernel instead of 5.42
# with NumPy scalars (H200 machine, CuPy 14.2), a tenth of ``a + a``'s overhead over
# ``cp.add``.  Both classes are CuPy's own (``CScalar`` in a private module); a CuPy
# without them gets the NumPy scalars, which mean the same to the kernel.  The cudasim
# stand-in has both, checked as int64 and float64 like the scalars they replace.
def _prebuilt() -> tuple[Any, Any]:
    try:
        from cupy._core._scalar import CScalar
        from cupy.cuda.function import CIntptr
    except ImportError:
        return np.int64, np.float64(0.0)
    return CIntptr, CScalar(np.float64(0.0))


_COUNT, _ZERO = _prebuilt()  # _COUNT(n): the element count argument
_NUMBERS = (bool, int, float)
# The array kinds a Python number keeps its value in (an int in a bool array would not).
_KINDS_TAKING = {bool: "biufcV", int: "iufcV", float: "fcV"}


def _truth(fn: Any) -> Any:
    """A CuPy logical function that also takes complex arrays (CuPy's refuse them):
    a complex value is true when it is not zero, as in NumPy and PyTorch."""

    def logical(*xs: Any) -> Any:
        return fn(*(x != 0 if getattr(x, "dtype", None) is not None and x.dtype.kind == "c"
                    else x for x in xs))  # fmt: skip

    logical.__name__ = fn.__name__
    return logical


# What runs where a raw kernel does not (complex dtypes, integer pow, rows without a raw
# kernel): the default math (Note [Default math]: CuPy's function of the row's name), but
# for these overrides.
FALLBACK: dict[str, Any] = {
    "sign": F.sign, "rsqrt": F.rsqrt, "sigmoid": F.sigmoid, "relu": F.relu, "silu": F.silu,
    "erf": None, "erfc": None, "floor": F.same_if_int(cupy.floor),
    "ceil": F.same_if_int(cupy.ceil), "trunc": F.same_if_int(cupy.trunc), "frac": F.frac,
    "logical_not": _truth(cupy.logical_not), "logical_and": _truth(cupy.logical_and),
    "logical_or": _truth(cupy.logical_or), "logical_xor": _truth(cupy.logical_xor),
    "floor_divide": F.floor_divide, "remainder": F.remainder,
    "fmod": F.fmod, "pow": F.pow, "logaddexp": F.logaddexp, "real": F.real, "imag": F.imag,
    "conj": F.conj,
}  # fmt: skip
# Operators with extra arguments (fn(x, y, compute_dtype, *args)): the shared formulas.
EXTRA: dict[str, Any] = {
    "add": F.add, "sub": F.sub, "rsub": F.rsub, "div": F.div, "isclose": F.isclose,
}  # fmt: skip


def _np_dtype(name: str) -> Any:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def _no_fallback(name: str) -> Any:
    def fail(*args: Any) -> Any:
        raise RuntimeError(f"{name}(): not implemented on CUDA for these dtypes")

    return fail


# -- launchers --------------------------------------------------------------------------------
def unary(op: Any, functor: str, fallback: Any) -> Any:
    """``fn(x, p0=0, p1=0, p2=0)``: the raw kernel of a one-tensor operator (``op``, its
    table row) on a CuPy array."""
    name = op.name
    table = {}
    for cdt, odt in _tables.raw_dtypes(op):
        exprs = _tables.unary_expressions(functor, cdt, odt)
        contig = _compile.Instance("elementwise.cu", exprs["contig"])
        table[_np_dtype(cdt)] = (contig, exprs["strided"], _np_dtype(odt))
    fallback = fallback or _no_fallback(name)

    def launch(x: Any, p0: Any = _ZERO, p1: Any = _ZERO, p2: Any = _ZERO) -> Any:
        entry = table.get(x.dtype)
        if entry is None:
            return fallback(x)
        contig, strided, odt = entry
        out = cupy.empty(x.shape, odt)
        n = out.size
        if n == 0:
            return out
        if x._c_contiguous:
            (contig.fn or contig.get())(
                _ONE_BLOCK if n <= _launch.BLOCK else _launch.grid(n),
                _BLOCK,
                (x, out, _COUNT(n), p0, p1, p2),
            )
            return out
        g = _launch.geometry(x.shape, [x])
        if g is None:  # more dimensions than the struct holds even after collapsing
            return launch(cupy.ascontiguousarray(x), p0, p1, p2)
        _function("elementwise.cu", strided)(_launch.grid(n), _BLOCK, (x, out, g, p0, p1, p2))
        return out

    return launch


def binary(op: Any, functor: str, fallback: Any, dtypes: Any = None) -> Any:
    """``fn(x, y, p0=0)``: the raw kernel of a two-operand operator (``op``, its table
    row; ``dtypes``, its (compute, result) dtype names, default the row's); ``y`` may be a
    Python number; ``p0`` the functor's parameter (``AddAlpha``'s alpha)."""
    table = {}
    for cdt, odt in _tables.raw_dtypes(op) if dtypes is None else dtypes:
        exprs = _tables.binary_expressions(functor, cdt, odt)
        compute = _np_dtype(_tables.binary_compute(functor, cdt)).type
        contig = _compile.Instance("elementwise.cu", exprs["contig"])
        table[_np_dtype(cdt)] = (exprs, _np_dtype(odt), compute, contig)

    def launch(x: Any, y: Any, p0: Any = _ZERO) -> Any:
        if type(x) is not _ndarray:  # a number first (pow.Scalar, 7 // t): CuPy's kernels
            if type(y) is _ndarray and y.dtype.kind in _KINDS_TAKING.get(type(x), ""):
                # As a NumPy scalar of the tensor's (compute) dtype: CuPy would otherwise
                # promote a 0-d array by value (7 // uint8 0-d -> int64).
                with contextlib.suppress(OverflowError):
                    x = y.dtype.type(x)
            return fallback(x, y)
        entry = table.get(x.dtype)
        if entry is None:
            return fallback(x, y)
        exprs, odt, compute, contig = entry
        if type(y) is _ndarray:
            if y.dtype != x.dtype:
                return fallback(x, y)
            if x.shape == y.shape and x._c_contiguous and y._c_contiguous:
                out = cupy.empty(x.shape, odt)
                n = out.size
                if n:
                    (contig.fn or contig.get())(
                        _ONE_BLOCK if n <= _launch.BLOCK else _launch.grid(n),
                        _BLOCK,
                        (x, y, out, _COUNT(n), p0, _ZERO, _ZERO),
                    )
                return out
            shape = np.broadcast_shapes(x.shape, y.shape)  # ValueError: the factory reports it
            out = cupy.empty(shape, odt)
            n = out.size
            if n == 0:
                return out
            g = _launch.geometry(shape, [x, y])
            if g is None:
                xs = cupy.ascontiguousarray(cupy.broadcast_to(x, shape))
                ys = cupy.ascontiguousarray(cupy.broadcast_to(y, shape))
                return launch(xs, ys, p0)
            _function("elementwise.cu", exprs["strided"])(
                _launch.grid(n), _BLOCK, (x, y, out, g, p0, _ZERO, _ZERO)
            )
            return out
        if type(y) not in _NUMBERS:
            return fallback(x, y)
        s = compute(y)  # OverflowError for int8 + 1000: the factory retries with an array
        out = cupy.empty(x.shape, odt)
        n = out.size
        if n == 0:
            return out
        if x._c_contiguous:
            _function("elementwise.cu", exprs["scalar_contig"])(
                _launch.grid(n), _BLOCK, (x, s, out, _COUNT(n), p0, _ZERO, _ZERO)
            )
            return out
        g = _launch.geometry(x.shape, [x])
        if g is None:
            return launch(cupy.ascontiguousarray(x), y, p0)
        _function("elementwise.cu", exprs["scalar"])(
            _launch.grid(n), _BLOCK, (x, s, out, g, p0, _ZERO, _ZERO)
        )
        return out

    return launch


# -- operators with parameters ----------------------------------------------------------------
_ALPHA_TYPES = {_np_dtype(n) for n in _tables.ALPHA_DTYPES}
_FINITE_MAX = {dt: float(ml_dtypes.finfo(dt).max) for dt in _ALPHA_TYPES}


def _alpha(formula: Any, launch: Any, negate: bool) -> Any:
    """add's or sub's formula (``fn(x, y, cdt, alpha)``) with an int or float ``alpha``
    other than 1 run by the raw ``AddAlpha`` kernel (``launch``) where it takes the
    operands: one kernel, ``x + alpha * y`` rounded once (Note [Fused add with alpha] in
    backends/cpu/_blas.py; PyTorch's CUDA kernel contracts its ``a + alpha * b`` the same
    way), instead of CuPy's product and sum.  A number ``y`` goes to the kernel as the
    compute type's value, as PyTorch's CUDA kernels take CPU scalars."""

    def fn(x: Any, y: Any, cdt: Any, alpha: Any = 1) -> Any:
        if (
            (type(alpha) is float or type(alpha) is int)
            and alpha != 1
            and type(x) is _ndarray
            and x.dtype in _ALPHA_TYPES
            and (
                (type(y) is _ndarray and y.dtype == x.dtype)
                or ((type(y) is float or type(y) is int) and abs(y) <= _FINITE_MAX[x.dtype])
            )
            and abs(alpha) <= _FINITE_MAX[x.dtype]
        ):
            return launch(x, y, np.float64(-alpha if negate else alpha))
        return formula(x, y, cdt, alpha=alpha)

    fn.__name__ = fn.__qualname__ = formula.__name__
    return fn


def _params(op: Any) -> Any:
    name = op.name
    launch = unary(op, _tables.UNARY_PARAMS[name], None)
    f64 = np.float64

    if name == "round":

        def round_(x: Any, cdt: Any, *, decimals: int = 0) -> Any:
            check_round(cdt, decimals)
            return launch(x, f64(decimals))

        return round_
    if name == "gelu":

        def gelu(x: Any, cdt: Any, *, approximate: str = "none") -> Any:
            check_gelu(cdt, approximate=approximate)
            return launch(x, f64(0.0 if approximate == "none" else 1.0))

        return gelu
    if name == "softplus":

        def softplus(x: Any, cdt: Any, beta: Any = 1, threshold: Any = 20) -> Any:
            return launch(x, f64(beta), f64(threshold))

        return softplus

    def nan_to_num(
        x: Any, cdt: Any, nan: Any = None, posinf: Any = None, neginf: Any = None
    ) -> Any:
        if x.dtype.kind == "c":
            return F.nan_to_num(x, cdt, nan, posinf, neginf)
        if x.dtype.kind in "iub":
            return x.copy()
        info = ml_dtypes.finfo(x.dtype)
        top = float(info.max) if posinf is None else posinf
        bottom = float(info.min) if neginf is None else neginf
        return launch(x, f64(0.0 if nan is None else nan), f64(top), f64(bottom))

    return nan_to_num


def _div(floor_divide: Any) -> Any:
    """The shared ``div`` formula, its floor mode through our floor_divide kernel (PyTorch's
    float algorithm: ``1 // -inf`` is -1; CuPy's floor_divide gives -0)."""

    def div(x: Any, y: Any, cdt: Any, rounding_mode: str | None = None) -> Any:
        if rounding_mode == "floor":
            F._check_divisor("div", x, y)
            return floor_divide(x, y)
        return F.div(x, y, cdt, rounding_mode)

    return div


def _pow(raw: Any) -> Any:
    """The raw pow kernel, but for a float32/float64 tensor to the number 2, 3, 0.5, -0.5,
    -1 or -2: the shared formula, which computes PyTorch's products and roots there
    (``x * x * x``, ``1 / sqrt(x)``..., as its CUDA kernel does; ``POWERS_AS_PRODUCTS``
    in backends/common/formulas.py).  A tensor exponent keeps ``pow`` per element, as
    PyTorch's."""

    def launch(x: Any, y: Any, p0: Any = _ZERO) -> Any:
        if (
            (type(y) is int or type(y) is float)
            and y in POWERS_AS_PRODUCTS
            and type(x) is _ndarray
            and x.dtype in _FLOAT_32_64
        ):
            return F.pow(x, y)
        return raw(x, y, p0)

    return launch


_FLOAT_32_64 = (np.dtype(np.float32), np.dtype(np.float64))


def kernels(front: FrontEnd) -> dict[str, Any]:
    """Every elementwise CUDA kernel, by qualified overload name (``"add.Tensor"``)."""
    ns = ew.Namespace(cupy.ndarray, __name__, front, asarray=cupy.asarray)
    out: dict[str, Any] = {}

    def fallback(name: str) -> Any:
        return FALLBACK[name] if name in FALLBACK else ns.math(name)

    alpha_raw = binary(
        front.op_info("add"), _tables.ALPHA_FUNCTOR, None, _tables.alpha_dtypes(front.op_info)
    )
    raw_binary = {
        name: binary(front.op_info(name), functor, fallback(name))
        for name, functor in _tables.BINARY.items()
    }
    raw_binary["pow"] = _pow(raw_binary["pow"])
    for op in front.op_table:
        if op.family == "unary":
            if op.name in _tables.UNARY:
                fn = unary(op, _tables.UNARY[op.name], fallback(op.name))
                out[op.name] = ew.unary(op, fn, ns)
            elif op.name in _tables.UNARY_PARAMS:
                out[op.name] = ew.unary_args(op, _params(op), ns)
            else:  # no raw kernel: CuPy's
                out[op.name] = ew.unary(op, fallback(op.name), ns)
            continue
        if op.family == "ternary":
            out.update(ternary.kernels(op, ns))
            continue
        if op.family != "binary":
            continue
        for text in op.schemas:
            schema = parse_schema(text)
            overload = schema.overload_name or "default"
            qualname = op.name if overload == "default" else f"{op.name}.{overload}"
            first, second = schema.arguments[0], schema.arguments[1]
            raw = raw_binary.get(op.name)
            if first.type.tensor_kind is None:  # pow.Scalar, remainder.Scalar_Tensor
                out[qualname] = ew.binary_reversed(
                    op, raw or EXTRA.get(op.name) or fallback(op.name), ns, overload
                )
                continue
            names = (first.name, second.name)
            scalar = second.type.tensor_kind is None
            if op.name == "div":
                floor = front.op_info("floor_divide")
                out[qualname] = ew.div(
                    op, floor, raw_binary["div"], _div(raw_binary["floor_divide"]), ns,
                    overload, scalar=scalar,
                )  # fmt: skip
                continue
            if op.name in EXTRA and op.name not in ("add", "sub"):  # rsub, isclose
                out[qualname] = ew.binary(
                    op, EXTRA[op.name], ns, overload, scalar=scalar, names=names, extra=True
                )
                continue
            if op.name in ("add", "sub"):  # raw with alpha left at 1, the formula otherwise
                general = ew.binary(
                    op, _alpha(EXTRA[op.name], alpha_raw, op.name == "sub"), ns, overload,
                    scalar=scalar, names=names, extra=True,
                )  # fmt: skip
                out[qualname] = ew.binary_alpha(
                    op, raw_binary[op.name], general, ns, overload, scalar=scalar, names=names
                )
                continue
            fn = raw_binary[op.name] if raw is not None else fallback(op.name)  # no raw kernel
            out[qualname] = ew.binary(op, fn, ns, overload, scalar=scalar, names=names)
    return out

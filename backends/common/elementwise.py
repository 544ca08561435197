"""Elementwise kernel factories, written once against an array namespace.

Imports: ``backends.common``; the front end's types come with the ``Namespace``
(``ns.front``, Note [One-way imports] in ``frontend``).

A backend calls a factory with an operator's table row (``front.op_table``), the
function that does the math on arrays (``np.sin``, ``cupy.sin``, a raw kernel)
and its ``Namespace``; the factory returns the kernel to register.  Every kernel
does the same three things, in the same order, on every backend:
1. the dtype: the row's ``result_dtypes`` map the (promoted) input dtype to the
   dtype to compute in and the dtype of the result, or the op rejects it;
2. the math, on arrays cast to the compute dtype;
3. the result, wrapped with ``front.make``; NumPy-only quirks (0-d results
   come back as NumPy scalars, ml_dtypes computes bfloat16 ops in float32) are
   undone by ``Namespace.finish``.

Note [Elementwise fast path]
The common call has tensors of one dtype that the op computes in directly.  The
kernels test exactly that with an identity check and a dict lookup (``_direct``),
call the function, and skip ``finish``'s dtype check: a NumPy function given
arrays of one dtype returns the dtype the table promises (the op database tests
check every result's array dtype).  Anything else (mixed dtypes, numbers that
promote, casts) goes through ``_promote`` and ``finish``.
"""

from __future__ import annotations

import importlib
import operator
import types
from collections.abc import Callable, Mapping
from typing import Any

from . import errors, fastpaths, shape_rules
from .frontend import FrontEnd
from .numbers import NUMBER_KIND as _NUMBER_KIND
from .numbers import int_range

__all__ = [
    "MetaNamespace",
    "Namespace",
    "namespace_of",
    "binary",
    "binary_alpha",
    "binary_reversed",
    "check_operands",
    "div",
    "rename",
    "rename_all",
    "unary",
    "unary_args",
]


_NAMESPACES: dict[type, Any] = {}

# Note [Default math]
# ~~~~~~~~~~~~~~~~~~~
# An elementwise row computes, unless its backend lists an override (PyTorch's
# semantics where the library's differ, a faster spelling), with the array API's
# function of its name: the raw library's when it has one under that name (NumPy 2 and
# CuPy carry the standard's names, and looking there keeps array_api_compat out of
# ``import tensor``: Note [Lazy array namespace]), else array_api_compat's.  A new
# elementwise operator with a standard function is therefore its row and its test row.
# Rows that PyTorch names otherwise than the standard are mapped here, once.
STANDARD_NAMES = {
    "neg": "negative", "mul": "multiply", "sub": "subtract", "div": "divide",
    "eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
    "ge": "greater_equal", "bitwise_not": "bitwise_invert",
}  # fmt: skip


def namespace_of(array_type: type) -> Any:
    """The array-API namespace of an array type (array_api_compat's), made once per type.

    It is imported on first use: Note [Lazy array namespace].

    >>> import numpy as np
    >>> namespace_of(np.ndarray).__name__
    'array_api_compat.numpy'
    """
    xp = _NAMESPACES.get(array_type)
    if xp is None:
        # By name, not by example: making a CuPy array needs a GPU, and kernels must be
        # buildable (and checkable) on a machine without one.
        library = array_type.__module__.partition(".")[0]  # numpy, cupy
        xp = _NAMESPACES[array_type] = _lazy_module(f"array_api_compat.{library}")
    return xp


# Note [Lazy array namespace]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Importing array_api_compat.numpy takes ~60 ms, most of ``import tensor``'s remaining
# time: it looks up every name NumPy lists, which imports numpy.f2py, numpy.testing,
# numpy.ma...  So a backend's ``xp`` is a stand-in module that imports the namespace on
# first attribute access and then holds every attribute of it, so a kernel's
# ``xp.argsort`` costs the same dict lookup as on the namespace itself.  Building
# kernels must therefore not read ``xp``: what they bind ahead (NumPy's ``where`` past
# its dispatcher, ``exp`` for softmax) they take from ``ns.lib``, the same objects
# (array_api_compat re-exports them unchanged; ``tests/tensor/test_imports.py`` checks
# both, and that ``import tensor`` leaves the namespace unloaded).


def _lazy_module(name: str) -> types.ModuleType:
    """A stand-in for module ``name``: imports it on first attribute access, then holds
    all of its attributes (Note [Lazy array namespace])."""
    lazy = types.ModuleType(name)

    def __getattr__(attr: str) -> Any:
        module = importlib.import_module(name)
        namespace = vars(lazy)
        namespace.update(vars(module))
        if namespace.get("__getattr__") is __getattr__:  # every attribute is here now
            del namespace["__getattr__"]
        return getattr(module, attr)

    lazy.__getattr__ = __getattr__  # type: ignore[method-assign]
    return lazy


class Namespace:
    """What the factories need to know about a backend's arrays, looked up once.

    ``xp`` is the array-API namespace of the backend's array type (array_api_compat's
    ``numpy`` or ``cupy``): code written against it serves both backends.  ``asarray``
    is the raw library's (array_api_compat's adds a Python frame), for the hot path;
    ``lib`` is the raw library itself (``numpy``, ``cupy``) for the same reason.
    ``front`` is the front end the backend is registered with: the Tensor type, its
    constructor, the dtypes and the operator table the kernels are built from.
    """

    def __init__(
        self,
        array_type: type,
        module: str,
        front: FrontEnd,
        *,
        asarray: Any = None,
        xp: Any = None,
        lib: Any = None,
        dtypes: Mapping[Any, Any] | None = None,
        fused_add: Any = None,
        axpy: Any = None,
        axpy_checked: Any = None,
    ) -> None:
        # A plug-in device gives its namespace and library (``backends.common.device``);
        # NumPy and CuPy are found by their array type's module.
        self.xp = xp if xp is not None else namespace_of(array_type)
        if lib is None:
            lib = importlib.import_module(array_type.__module__.partition(".")[0])
        self.lib = lib
        self.module = module  # kernels are named after it: backends.cpu.elementwise.add_tensor
        self.front = front
        self.ndarray = array_type
        self.asarray = asarray if asarray is not None else self.xp.asarray
        # ``fused_add(x, y, alpha)``: ``x + alpha * y`` rounded once, or None where it
        # cannot (the CPU's BLAS axpy, Note [Fused add with alpha]); None: no such thing.
        self.fused_add = fused_add
        self.axpy = axpy  # ``axpy(y, x, alpha)``: the same into ``y``, in place; False if not
        # ``axpy_checked(y, x, alpha)``: axpy for callers that checked its arguments.
        self.axpy_checked = axpy_checked if axpy_checked is not None else axpy
        self._cast = front.cast_array
        # Note [Array dtypes of a namespace]
        if dtypes is None:
            cast = front.cast_array
            self.dtype_of = _numpy_dtype
            self.kind_of = _kind_of
            self.astype = _astype
            self.retype = _retype
            self.cast = lambda x, dt: cast(x, dt.numpy_dtype)
            self.copy = _copy
            self.standard = False
        else:
            self.standard = True
            self._standard(dtypes)

    def _standard(self, dtypes: Mapping[Any, Any]) -> None:
        """The helpers of Note [Array dtypes of a namespace] in the standard's spelling."""
        xp = self.xp
        dtype_of = dtypes.__getitem__
        letters = {dtypes[dt]: dt.numpy_dtype.kind for dt in list(dtypes)}
        to_int64 = dtype_of(self.front.int64) if self.front.int64 in dtypes else None

        def kind_of(dtype: Any) -> str:
            letter = letters.get(dtype)
            if letter is None:
                raise NotImplementedError(f"{dtypes!r} has no dtype {dtype!r}")
            return letter

        def astype(x: Any, dt: Any, copy: bool = True) -> Any:
            return xp.astype(x, dtype_of(dt), copy=copy)

        def retype(x: Any, dtype: Any) -> Any:
            return x if x.dtype == dtype else xp.astype(x, dtype)

        def cast(x: Any, dt: Any) -> Any:
            # cast_array's float-to-unsigned rule (wrap through int64), in the standard;
            # ``dt`` is ours or already the namespace's (variants.assign: an array's).
            target = dt if dt in letters else dtype_of(dt)
            kind = letters.get(x.dtype, "")
            if kind and kind in "fc" and letters[target] == "u" and to_int64 is not None:
                if kind == "c":
                    x = xp.real(x)
                x = xp.astype(x, to_int64)
            return xp.astype(x, target)

        def copy(x: Any) -> Any:
            return xp.asarray(x, copy=True)

        def finish(out: Any, odt: Any) -> Any:
            if type(out) is not self.ndarray:
                out = self.asarray(out)
            if out.dtype != dtype_of(odt):
                out = cast(out, odt)
            return out

        self.dtype_of, self.kind_of, self.astype, self.cast = dtype_of, kind_of, astype, cast
        self.retype, self.copy = retype, copy
        self.finish = finish  # type: ignore[method-assign]

    def math(self, name: str) -> Any:
        """The default math of elementwise row ``name``: Note [Default math]."""
        std = STANDARD_NAMES.get(name, name)
        fn = getattr(self.lib, std, None)
        if fn is None:
            fn = getattr(self.xp, std, None)
        if fn is None:
            raise LookupError(
                f"elementwise operator {name!r}: neither {self.lib.__name__} nor the array-API "
                f"namespace has a function {std!r}; give the row an override in {self.module}"
            )
        return fn

    def finish(self, out: Any, odt: Any) -> Any:
        """``out`` as an array of the result dtype (slow path of the check kernels inline)."""
        if type(out) is not self.ndarray:
            out = self.asarray(out)
        if out.dtype is not odt.numpy_dtype:
            out = self._cast(out, odt.numpy_dtype)
        return out


class MetaNamespace(Namespace):
    """A namespace of ``MetaArray``s: factories given it compute shapes and dtypes only.

    Kernel factories whose functions only need ``x.shape``/``x.dtype`` (reductions,
    products) serve the Meta backend this way, with shape-rule functions in place
    of the math.
    """

    def __init__(self, module: str, front: FrontEnd) -> None:
        self.xp = self.lib = None
        self.module = module
        self.front = front
        self.ndarray = front.MetaArray
        self.asarray = _identity
        self.dtype_of, self.kind_of, self.astype, self.copy = _numpy_dtype, _kind_of, _astype, _copy
        self.retype = _retype
        self.cast = lambda x, dt: x.astype(dt.numpy_dtype)
        self.standard = False

    def finish(self, out: Any, odt: Any) -> Any:
        if out.dtype is odt.numpy_dtype:
            return out
        return self.ndarray(out.shape, odt.numpy_dtype)


def _identity(x: Any) -> Any:
    return x


# Note [Array dtypes of a namespace]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The shared kernels meet two kinds of dtype: ours (``tensor.dtype``: ``front.float32``)
# and their arrays' (``x.dtype``: NumPy's and CuPy's ``np.dtype``, or the namespace's own
# objects, array_api_strict's ``DType``).  NumPy spellings (``x.astype(dt.numpy_dtype)``,
# ``x.dtype.kind``, ``x.copy()``) are the fastest on NumPy and CuPy but are not the
# standard's, so a kernel asks the ``Namespace`` instead, whose helpers are chosen once,
# when it is made:
#   ``ns.dtype_of(dt)``   our dtype -> the namespace's dtype object (``dtype=`` arguments);
#   ``ns.astype(x, dt)``  ``x`` as our dtype ``dt`` (plain conversion; ``copy=False``
#                         keeps ``x`` when it has that dtype already);
#   ``ns.retype(x, d)``   ``x`` as array dtype ``d`` (another array's ``.dtype``), ``x``
#                         itself when it has it;
#   ``ns.cast(x, dt)``    the same with PyTorch's float-to-unsigned rule (``cast_array``);
#   ``ns.kind_of(d)``     NumPy's kind letter ("b", "i", "u", "f", "c") of an array dtype;
#   ``ns.copy(x)``        a copy of ``x``.
# NumPy and CuPy get the NumPy spellings (one Python call more than inline code, on
# slow paths only); ``ns.standard`` says which set a namespace has, for the few kernels
# that choose between a NumPy function (``copyto``, ``ufunc.at``) and the standard's
# spelling of the same thing when they are built.  Array methods (``idx.min()``,
# ``x.transpose(...)``, ``x.real``) and NumPy's function names (``power``, ``fmod``,
# ``true_divide``) are not the standard's either: the shared kernels write
# ``xp.min(idx)``, ``xp.permute_dims``, ``xp.real``, ``xp.pow`` (array_api_compat gives
# NumPy and CuPy all of them), and dtype attributes (``x.dtype.kind``, ``.itemsize``,
# ``.type``) go through ``ns.kind_of`` or Python scalars (NEP 50 keeps the array's dtype).  A plug-in device (``backends.common.device``) passes ``dtypes``,
# its map from our dtypes to its namespace's, and gets ``xp.astype``, ``xp.isdtype``'s
# letters and ``xp.asarray(copy=True)``; a dtype the map lacks (array_api_strict has no
# float16) raises the map's ``NotImplementedError``, which names the device.
_numpy_dtype = operator.attrgetter("numpy_dtype")
_kind_of = operator.attrgetter("kind")


def _astype(x: Any, dt: Any, copy: bool = True) -> Any:
    return x.astype(dt.numpy_dtype, copy=copy)


def _retype(x: Any, dtype: Any) -> Any:
    return x if x.dtype == dtype else x.astype(dtype)


def _copy(x: Any) -> Any:
    return x.copy()


def rename(kernel: Callable[..., Any], name: str, ns: Namespace) -> Callable[..., Any]:
    """Give a generated kernel its dump_table name: ``<module>.<op>_<overload>``."""
    kernel.__name__ = name
    kernel.__qualname__ = name
    kernel.__module__ = ns.module
    return kernel


def rename_all(kernels: dict[str, Any], module: str) -> dict[str, Any]:
    """Name kernels made by shared factories after the backend module registering them
    (``backends.cpu.shape.view``), so dump_table shows which backend a kernel serves."""
    for qualname, kernel in kernels.items():
        kernel.__name__ = kernel.__qualname__ = qualname.replace(".", "_")
        kernel.__module__ = module
    return kernels


def check_operands(front: FrontEnd, op: str, self: Any, other: Any) -> None:
    """Dtype rules about the operands themselves, not their promoted type (slow path only)."""
    if op in ("sub", "rsub"):  # PyTorch: no bool operand at all, even if the result is int
        bool_ = front.bool
        self_bool = getattr(self, "_dtype", None) is bool_
        other_bool = getattr(other, "_dtype", None) is bool_ or other is True or other is False
        if self_bool and other_bool:
            raise errors.unsupported_dtype(op, bool_, "self")
        if self_bool or other_bool:
            raise errors.bool_subtraction(op, "self" if self_bool else "other")


def _promote(
    ns: Namespace, op: str, table: dict[Any, Any], self: Any, other: Any, arg: str = "self"
) -> tuple[Any, Any, Any]:
    """Slow path: PyTorch's result type, the row's rule, casts.  Returns (x, y, result dtype)."""
    front, astype = ns.front, ns.astype
    check_operands(front, op, self, other)
    dt = front.result_type(self, other)
    entry = table.get(dt)
    if entry is None:
        raise errors.unsupported_dtype(op, dt, arg, table)
    cdt, odt = entry
    x = self._array if self._dtype is cdt else astype(self._array, cdt)
    if isinstance(other, front.Tensor):
        y = other._array if other._dtype is cdt else astype(other._array, cdt)
    elif type(other) is bool and ns.standard and cdt.category:
        y = int(other)  # the standard promotes Python bools with bool arrays only
    else:
        y = other
    return x, y, (cdt, odt)


def _number_as(value: Any, cdt: Any, ns: Namespace) -> Any:
    # NumPy 2 refuses Python ints out of an array's range (int8 + 1000); PyTorch wraps.
    return ns.astype(ns.xp.asarray(value), cdt)


# Note [Bool operand]
# A bool tensor never changes the other tensor's dtype (bool is the lowest category,
# whatever the two tensors' dimensions: ``x * mask``, autograd's masks).  When that dtype
# is one the op computes in directly, the kernel casts the bool array to it and calls
# the function, which is what ``_promote`` would do, without its result-type walk.
# Plain Tensors only: a wrapped number (``2.0 * mask``) promotes by its category, not
# by its dtype.  Not for sub/rsub, which refuse bool operands (``check_operands``): their
# kernels are ``binary_alpha``'s and ``_extra_kernel``s, and ``_tensor_kernel`` refuses
# to make them.
_NO_BOOL_OPERAND = frozenset({"sub", "rsub"})

# Note [Opmath for numbers]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# PyTorch computes mul, div and floor_divide of a float16 or bfloat16 tensor and a
# Python number in float32 ("opmath"): the number is converted to float32, not to the
# tensor's dtype, and only the result is rounded (``float16 0.01 * 70000`` is 700, not
# inf; ``float16 1e4 * 1e-8`` is 1e-4, not 0; ``float16 3 // 3.0001`` is 0, not 1).
# NumPy 2 converts a Python number to the array's dtype first (NEP 50), so the scalar
# kernels of these ops widen the array to float32 and let ``finish`` round the result
# back.  The other ops (add, sub, comparisons, remainder, pow) round the number to the
# tensor's dtype first in PyTorch too (float16 ``63 - 64.15625`` is -1.125).  NumPy does
# so for float16, but ml_dtypes computes a bfloat16 array and a Python number in float32
# (bfloat16 ``70144 - 70000.0`` would be 144, not 0; ``1.0 == 1.0039`` would be False),
# so the number is made a bfloat16 scalar first.  On both paths: the fast path chooses
# the dtype, the widening or rounding is part of the math.
_OPMATH_OPS = frozenset({"mul", "div", "floor_divide"})


def _check_shapes(front: FrontEnd, op: str, self: Any, other: Any, names: tuple[str, str]) -> None:
    if isinstance(other, front.Tensor):
        shape_rules.broadcast_shapes(op, tuple(self._array.shape), tuple(other._array.shape), names)


def _direct(op: Any) -> dict[Any, Any]:
    """dtype -> result dtype, for the dtypes the op computes in without a cast.

    These entries do not depend on the default dtype (only int-to-float rules do, and
    those cast), so the dict is built once, with the kernel.
    """
    out = {}
    for d in op.dtypes:
        cdt, odt = op.rule(d)
        if cdt is d:
            out[d] = odt
    return out


# -- unary ------------------------------------------------------------------------------------
def unary(op: Any, fn: Callable[[Any], Any], ns: Namespace) -> Callable[[Any], Any]:
    """A one-tensor kernel ``kernel(self)`` computing ``fn(array)``."""
    table = op.result_dtypes
    direct = _direct(op)
    name = op.name
    ndarray, asarray, finish = ns.ndarray, ns.asarray, ns.finish
    astype = ns.astype
    make = ns.front.make

    def kernel(self: Any) -> Any:
        dt = self._dtype
        odt = direct.get(dt)
        if odt is not None and fastpaths.ENABLED:  # Note [Elementwise fast path]
            out = fn(self._array)
            if type(out) is not ndarray:
                out = asarray(out)
            return make(out, odt, self._device)
        entry = table.get(dt)
        if entry is None:
            raise errors.unsupported_dtype(name, dt, supported=table)
        cdt, odt = entry
        out = fn(astype(self._array, cdt))
        return make(finish(out, odt), odt, self._device)

    return rename(kernel, name, ns)


def unary_args(op: Any, fn: Callable[..., Any], ns: Namespace) -> Callable[..., Any]:
    """A one-tensor kernel with extra arguments: ``fn(array, compute_dtype, *args, **kw)``."""
    table = op.result_dtypes
    name = op.name
    finish, make = ns.finish, ns.front.make

    def kernel(self: Any, *args: Any, **kwargs: Any) -> Any:
        dt = self._dtype
        entry = table.get(dt)
        if entry is None:
            raise errors.unsupported_dtype(name, dt, supported=table)
        cdt, odt = entry
        x = self._array
        if cdt is not dt:
            x = ns.astype(x, cdt)
        return make(finish(fn(x, cdt, *args, **kwargs), odt), odt, self._device)

    return rename(kernel, name, ns)


# -- binary -----------------------------------------------------------------------------------
def _tensor_kernel(
    op: Any, fn: Callable[[Any, Any], Any], ns: Namespace, names: tuple[str, str]
) -> Any:
    """``kernel(self, other)`` for two tensors; the hottest kernel shape (``a + b``)."""
    table = op.result_dtypes
    direct = _direct(op)
    name = op.name
    ndarray, asarray, finish = ns.ndarray, ns.asarray, ns.finish
    astype = ns.astype
    front = ns.front
    make, tensor_type, bool_ = front.make, front.Tensor, front.bool

    if name in _NO_BOOL_OPERAND:  # Note [Bool operand]: binary_alpha and extra=True make them
        raise ValueError(f"{name} refuses bool operands: make it with binary_alpha or extra=True")

    def kernel(self: Any, other: Any) -> Any:
        dt = self._dtype
        fast = fastpaths.ENABLED
        odt = direct.get(dt) if dt is other._dtype and fast else None
        try:
            if odt is not None:  # Note [Elementwise fast path]
                out = fn(self._array, other._array)
                if type(out) is not ndarray:
                    out = asarray(out)
                return make(out, odt, self._device)
            if fast and type(self) is tensor_type and type(other) is tensor_type:
                other_dt = other._dtype  # Note [Bool operand]
                x, y = self._array, other._array
                if other_dt is bool_ and dt in direct:
                    odt, y = direct[dt], astype(y, dt)
                elif dt is bool_ and other_dt in direct:
                    odt, x = direct[other_dt], astype(x, other_dt)
                if odt is not None:
                    out = fn(x, y)
                    if type(out) is not ndarray:
                        out = asarray(out)
                    return make(out, odt, self._device)
            x, y, (cdt, odt) = _promote(ns, name, table, self, other)
            out = fn(x, y)
        except ValueError:
            _check_shapes(front, name, self, other, names)
            raise
        return make(finish(out, odt), odt, self._device)

    return kernel


def _scalar_kernel(
    op: Any, fn: Callable[[Any, Any], Any], ns: Namespace, names: tuple[str, str]
) -> Any:
    """``kernel(self, other)`` for a tensor and a Python number (a Scalar overload)."""
    table = op.result_dtypes
    direct = _direct(op)
    name = op.name
    finish = ns.finish
    ndarray: Any = ns.ndarray
    front = ns.front
    make = front.make
    bool_operands = name not in _NO_BOOL_OPERAND
    opmath = name in _OPMATH_OPS
    # ``uint8_tensor ** -3``: PyTorch refuses a negative integer power before converting
    # the number (-3 would wrap to 253 in uint8): the formula raises its error.
    negative_power = name == "pow"
    half = frozenset({front.float16, front.bfloat16})  # Note [Opmath for numbers]
    bfloat16, bfloat16_np = front.bfloat16, front.bfloat16.numpy_dtype
    float32_np = front.float32.numpy_dtype

    def kernel(self: Any, other: Any) -> Any:
        dt = self._dtype
        kind = _NUMBER_KIND.get(type(other))
        odt = (
            direct.get(dt)
            if kind is not None
            and kind <= dt.category
            and (kind or bool_operands)
            and fastpaths.ENABLED
            else None
        )
        if odt is not None:  # Note [Elementwise fast path]: the number leaves the dtype alone
            x, y, cdt = self._array, other, dt
        else:
            x, y, (cdt, odt) = _promote(ns, name, table, self, other)
        if cdt in half and kind is not None:  # Note [Opmath for numbers]
            if opmath:
                x = x.astype(float32_np)
            elif cdt is bfloat16:
                y = bfloat16_np.type(y)
        elif kind == 1 and cdt.category == 1:
            # An int out of an integer dtype's range: PyTorch converts it to the dtype
            # first, wrapping around (uint8: -1 is 255, so ``x < -1`` is ``x < 255``);
            # NumPy 2 compares it as the number it is, and refuses it in arithmetic.
            lo, hi = int_range(cdt)
            if not lo <= y <= hi and -(2**63) <= y < 2**64 and not (negative_power and y < 0):
                y = _number_as(y, cdt, ns)
        try:
            out = fn(x, y)
        except OverflowError:  # NumPy 2 refuses int8 + 1000; PyTorch wraps around
            out = fn(x, _number_as(y, cdt, ns))
        except ValueError:
            _check_shapes(front, name, self, other, names)
            raise
        if type(out) is ndarray and out.dtype is odt.numpy_dtype:  # finish's test, inline
            return make(out, odt, self._device)
        return make(finish(out, odt), odt, self._device)

    return kernel


def _extra_kernel(
    op: Any, fn: Callable[..., Any], ns: Namespace, names: tuple[str, str], scalar: bool
) -> Any:
    """``kernel(self, other, *args, **kwargs)`` calling ``fn(x, y, compute_dtype, ...)``."""
    table = op.result_dtypes
    name = op.name
    finish = ns.finish
    front = ns.front
    make = front.make

    def kernel(self: Any, other: Any, *args: Any, **kwargs: Any) -> Any:
        x, y, (cdt, odt) = _promote(ns, name, table, self, other)
        try:
            out = fn(x, y, cdt, *args, **kwargs)
        except OverflowError:
            if not scalar:
                raise
            out = fn(x, _number_as(y, cdt, ns), cdt, *args, **kwargs)
        except ValueError:
            _check_shapes(front, name, self, other, names)
            raise
        return make(finish(out, odt), odt, self._device)

    return kernel


def binary(
    op: Any,
    fn: Callable[..., Any],
    ns: Namespace,
    overload: str,
    *,
    scalar: bool,
    names: tuple[str, str] = ("self", "other"),
    extra: bool = False,
) -> Callable[..., Any]:
    """A kernel ``kernel(self, other)`` computing ``fn(x, y)``.

    ``other`` is a tensor, or with ``scalar=True`` a Python number (a Scalar
    overload).  With ``extra=True`` the kernel takes further arguments and calls
    ``fn(x, y, compute_dtype, *args, **kwargs)`` (alpha, rounding_mode, rtol, ...).
    """
    if extra:
        kernel = _extra_kernel(op, fn, ns, names, scalar)
    elif scalar:
        kernel = _scalar_kernel(op, fn, ns, names)
    else:
        kernel = _tensor_kernel(op, fn, ns, names)
    return rename(kernel, f"{op.name}_{overload.lower()}", ns)


def binary_alpha(
    op: Any,
    plain: Callable[[Any, Any], Any],
    general: Callable[..., Any],
    ns: Namespace,
    overload: str,
    *,
    scalar: bool,
    names: tuple[str, str] = ("self", "other"),
) -> Callable[..., Any]:
    """``add``/``sub``: ``plain(x, y)`` when ``alpha`` is left at 1, else ``general``'s way.

    ``general`` is the ``extra=True`` kernel (``fn(x, y, compute_dtype, alpha)``).
    The Tensor overload repeats ``_tensor_kernel``'s fast path rather than calling a
    second kernel: ``a + b`` is the hottest call there is (ci/bench/ops.py).
    """
    one = 1
    if scalar:
        plain_kernel = _scalar_kernel(op, plain, ns, names)

        def kernel(self: Any, other: Any, *, alpha: Any = 1) -> Any:
            if alpha is not one:
                return general(self, other, alpha=alpha)
            return plain_kernel(self, other)

        return rename(kernel, f"{op.name}_{overload.lower()}", ns)

    table = op.result_dtypes
    direct = _direct(op)
    name = op.name
    ndarray, asarray, finish = ns.ndarray, ns.asarray, ns.finish
    front = ns.front
    make = front.make
    # Note [Add with alpha fast path]: ``g.add(p, alpha=wd)`` (torch.optim's weight
    # decay), ``x.sub(y, alpha=a)``: for two arrays of one shape and one float32/float64
    # dtype, a Python int or float alpha other than 0 and 1, the general path's own
    # steps (``fused_add``: a new row-major array holding ``x``, then BLAS axpy of
    # ``sign * alpha`` times ``y`` into it) without its dtype resolution and
    # broadcast_shapes (6.0 -> ~2 us on [10]).  Anything else (broadcasts, other dtypes
    # and alphas, a backend without axpy), and every call with the fast paths off, goes
    # the general way.  tests/backends/test_fastpath_add_alpha.py.
    axpy = ns.axpy
    sign = -1 if name == "sub" else 1
    blas_floats = frozenset(dt for dt in (front.float32, front.float64) if dt in direct)
    empty = getattr(ns.lib, "empty", None)

    def kernel(self: Any, other: Any, *, alpha: Any = 1) -> Any:  # type: ignore[no-redef]
        if alpha is not one:
            dt = self._dtype
            if (
                axpy is not None
                and dt in blas_floats
                and other._dtype is dt
                and (type(alpha) is float or type(alpha) is int)
                and alpha
                and alpha != 1
                and self._device is other._device
                and fastpaths.ENABLED
            ):
                x, y = self._array, other._array
                if type(x) is ndarray and type(y) is ndarray and x.shape == y.shape:
                    out = empty(x.shape, x.dtype)
                    out[...] = x
                    if axpy(out, y, sign * alpha):
                        return make(out, dt, self._device)
            return general(self, other, alpha=alpha)
        dt = self._dtype
        odt = direct.get(dt) if dt is other._dtype and fastpaths.ENABLED else None
        try:
            if odt is not None:  # Note [Elementwise fast path]
                out = plain(self._array, other._array)
                if type(out) is not ndarray:
                    out = asarray(out)
                return make(out, odt, self._device)
            x, y, (cdt, odt) = _promote(ns, name, table, self, other)
            out = plain(x, y)
        except ValueError:
            _check_shapes(front, name, self, other, names)
            raise
        return make(finish(out, odt), odt, self._device)

    return rename(kernel, f"{op.name}_{overload.lower()}", ns)


def div(
    op: Any,
    rounding_op: Any,
    true_divide: Callable[[Any, Any], Any],
    rounded: Callable[..., Any],
    ns: Namespace,
    overload: str,
    *,
    scalar: bool,
) -> Callable[..., Any]:
    """``div``: true division in a float dtype, or with ``rounding_mode`` in the input's dtype.

    The two modes have different dtype rules (``7 // 2`` stays an integer), so they
    are two kernels: the ``div`` row's, and one with ``rounding_op``'s rule
    (``floor_divide``'s row), picked per call.
    """
    plain = binary(op, true_divide, ns, overload, scalar=scalar)
    modes = binary(rounding_op, rounded, ns, overload, scalar=scalar, extra=True)

    def kernel(self: Any, other: Any, *, rounding_mode: str | None = None) -> Any:
        if rounding_mode is None:
            return plain(self, other)
        return modes(self, other, rounding_mode=rounding_mode)

    return rename(kernel, f"div_{overload.lower()}", ns)


def binary_reversed(
    op: Any, fn: Callable[..., Any], ns: Namespace, overload: str
) -> Callable[..., Any]:
    """The kernel of a Scalar-first overload (``pow.Scalar(Scalar self, Tensor exponent)``)."""
    inner = binary(op, lambda x, y: fn(y, x), ns, "Scalar", scalar=True, names=("other", "self"))

    def kernel(self: Any, other: Any) -> Any:
        return inner(other, self)

    return rename(kernel, f"{op.name}_{overload.lower()}", ns)

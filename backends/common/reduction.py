"""Reductions and scans: argument conventions and dtypes (``plan``), and kernel factories.

Imports: ``backends.common``.

``plan`` turns a call's ``dim``/``keepdim``/``dtype`` into the axes, result shape,
compute dtype and result dtype, raising PyTorch's errors; the Meta kernels stop
there.  ``reduction(op, fn, ns, convention)`` builds the data kernel of an
operator whose math is ``fn(x, axes, keepdim, *extra)``.  ``convention`` names the
argument list the operator's schema has (every kernel carries its schema's
Python defaults, since the dispatcher passes arguments exactly as given).
``kernels(front, ns, overrides)`` is the one loop every backend runs over the family,
with the default math of Note [Default reduction math] where it lists no override.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as _numpy

from . import errors, fastpaths, shape_rules
from .elementwise import MetaNamespace, Namespace, rename
from .frontend import FrontEnd

__all__ = [
    "ACCUMULATE",
    "CONVENTIONS",
    "NAMES",
    "Plan",
    "default_math",
    "kernels",
    "plan",
    "reduction",
]


def _accumulate(front: FrontEnd) -> dict[Any, Any]:
    """Half-precision floats accumulate in float32, as PyTorch's "opmath" does."""
    return {front.float16: front.float32, front.bfloat16: front.float32}


# Reductions with no identity element: reducing an empty dim is an error.
NO_IDENTITY = frozenset({"amax", "amin", "max", "min", "argmax", "argmin"})


class Plan(NamedTuple):
    axes: tuple[int, ...] | None  # None: every axis
    shape: tuple[int, ...]
    cdt: Any  # compute dtype
    odt: Any  # result dtype


def _to_dtype(front: FrontEnd, op: str, value: Any) -> Any:
    if isinstance(value, front.dtype):
        return value
    raise TypeError(
        f"{op}(): argument 'dtype' must be a tensor dtype such as tt.float32, got {value!r}"
    )


def plan(
    front: FrontEnd,
    op: Any,
    self: Any,
    dim: Any,
    keepdim: bool,
    dtype: Any = None,
    *,
    accumulate: bool = False,
) -> Plan:
    """Axes, shape and dtypes of a reduction call, or PyTorch's error for it."""
    name = op.name
    shape = tuple(self._array.shape)
    ndim = len(shape)
    axes = shape_rules.normalize_dims(name, dim, ndim)
    if ndim == 0:
        axes = None  # dim 0 of a 0-d tensor is the tensor itself (NumPy has no such axis)
    if dtype is not None:
        odt = _to_dtype(front, name, dtype)
        cdt = odt
    else:
        entry = op.result_dtypes.get(self._dtype)
        if entry is None:
            raise _dtype_error(name, self._dtype)
        cdt, odt = entry
    if accumulate and (cdt is front.float16 or cdt is front.bfloat16):
        cdt = front.float32  # half precision accumulates in float32 (PyTorch's opmath)
    if name in NO_IDENTITY and 0 in shape:
        if axes is None:
            raise (IndexError if name.startswith("arg") else RuntimeError)(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                f"Specify the reduction dim with the 'dim' argument."
            )
        for a in axes:
            if shape[a] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero size.")
    return Plan(axes, shape_rules.reduced_shape(shape, axes, keepdim), cdt, odt)


def _dtype_error(name: str, dt: Any) -> Exception:
    if name == "mean":
        return RuntimeError(
            f"mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {dt.name}. Pass dtype=tt.float32 or convert the input."
        )
    if name in ("var", "std"):
        return RuntimeError(
            f"{name}(): std and var only support floating point and complex dtypes (argument "
            f"'self' is {dt.name})"
        )
    if name in ("norm", "linalg_vector_norm"):
        return RuntimeError(
            f"{name}(): input dtype should be either floating point or complex. Got {dt.name} "
            f"instead (argument 'self')."
        )
    return errors.unsupported_dtype(name, dt)


# -- conventions: the argument list of each schema, mapped onto (dim, keepdim, dtype, extra) ---
def _run(op: Any, fn: Callable[..., Any], ns: Namespace, accumulate: bool) -> Callable[..., Any]:
    finish = ns.finish
    front = ns.front
    make = front.make
    half = _accumulate(front)

    def run(self: Any, dim: Any, keepdim: bool, dtype: Any, *extra: Any) -> Any:
        p = plan(front, op, self, dim, keepdim, dtype, accumulate=accumulate)
        x = self._array
        if dtype in half and self._dtype is not dtype:
            # PyTorch casts to a half dtype= first and then accumulates in float32: the
            # elements round to half precision before they are summed, not the total only.
            x = ns.astype(x, dtype)
        if self._dtype is not p.cdt:
            x = ns.astype(x, p.cdt)
        out = fn(x, p.axes, keepdim, *extra)
        return make(finish(out, p.odt), p.odt, self._device)

    return run


def _dims_dtype(
    op: Any, fn: Any, ns: Namespace, accumulate: bool, whole: Any = None, along: Any = None
) -> Callable[..., Any]:
    # sum, mean: (self, dim=None, keepdim=False, *, dtype=None)
    run = _run(op, fn, ns, accumulate)
    half = _accumulate(ns.front)
    direct = {d: o for d, (c, o) in op.result_dtypes.items() if c is d and d not in half}
    ndarray, asarray = ns.ndarray, ns.asarray
    make = ns.front.make
    if whole is None:
        whole = _whole_from(fn)
    if along is None:
        along = _along_from(fn)

    def kernel(self: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
        if dtype is None and fastpaths.ENABLED:  # Note [Tiny sums], Note [Fast-path switch]
            odt = direct.get(self._dtype)
            if odt is not None:
                if dim is None and not keepdim:
                    # `x.sum()`: whole-tensor reduction, no cast, one call
                    out = whole(self._array, None)
                    if type(out) is not ndarray:
                        out = asarray(out)
                    return make(out, odt, self._device)
                # One dim (`g.sum(0)`, autograd's broadcast sums): one library call.
                axis = dim[0] if type(dim) is list and len(dim) == 1 else dim
                x = self._array
                if type(axis) is int and -x.ndim <= axis < x.ndim:
                    out = along(x, axis % x.ndim, None, None, keepdim)
                    if type(out) is not ndarray:
                        out = asarray(out)
                    return make(out, odt, self._device)
        return run(self, dim, keepdim, dtype)

    return kernel


def _whole_from(fn: Any) -> Any:
    def whole(x: Any, axes: Any) -> Any:
        return fn(x, axes, False)

    return whole


def _along_from(fn: Any) -> Any:
    def along(x: Any, axis: int, dtype: Any, out: Any, keepdim: bool) -> Any:
        return fn(x, (axis,), keepdim)

    return along


def _dim_dtype(op: Any, fn: Any, ns: Namespace, accumulate: bool) -> Callable[..., Any]:
    # prod: (self, dim=None, keepdim=False, *, dtype=None)
    run = _run(op, fn, ns, accumulate)

    def kernel(self: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
        return run(self, dim, keepdim, dtype)

    return kernel


def _dims(op: Any, fn: Any, ns: Namespace, accumulate: bool) -> Callable[..., Any]:
    # amax, amin, all, any, argmax, argmin, logsumexp: (self, dim=..., keepdim=False)
    run = _run(op, fn, ns, accumulate)

    def kernel(self: Any, dim: Any = None, keepdim: bool = False) -> Any:
        return run(self, dim, keepdim, None)

    return kernel


def _count(op: Any, fn: Any, ns: Namespace, accumulate: bool) -> Callable[..., Any]:
    # count_nonzero: (self, dim=None)
    run = _run(op, fn, ns, accumulate)

    def kernel(self: Any, dim: Any = None) -> Any:
        return run(self, dim, False, None)

    return kernel


def _correction(op: Any, fn: Any, ns: Namespace, accumulate: bool) -> Callable[..., Any]:
    # var, std: (self, dim=None, *, correction=None, keepdim=False)
    run = _run(op, fn, ns, accumulate)

    def kernel(self: Any, dim: Any = None, *, correction: Any = None, keepdim: bool = False) -> Any:
        return run(self, dim, keepdim, None, 1 if correction is None else correction)

    return kernel


def _p_norm(op: Any, fn: Any, ns: Namespace, accumulate: bool) -> Callable[..., Any]:
    # norm, linalg_vector_norm: (self, p=2, dim=None, keepdim=False, *, dtype=None)
    finish = ns.finish
    front = ns.front
    make = front.make

    def kernel(
        self: Any, p: Any = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
    ) -> Any:
        pl = plan(front, op, self, dim, keepdim, accumulate=accumulate)
        cdt, odt = pl.cdt, pl.odt
        if dtype is not None:
            cdt = _to_dtype(front, op.name, dtype)
            if cdt.category < 2:
                raise RuntimeError(
                    f"{op.name}(): the dtype argument must be a floating point or complex dtype, "
                    f"got {cdt.name}"
                )
            odt = cdt.to_real()
        x = self._array
        if self._dtype is not cdt:
            x = ns.astype(x, cdt)
        out = fn(x, pl.axes, keepdim, 2 if p is None else p)
        return make(finish(out, odt), odt, self._device)

    return kernel


def _scan(op: Any, fn: Any, ns: Namespace, accumulate: bool) -> Callable[..., Any]:
    # cumsum, cumprod: (self, dim, *, dtype=None)
    finish = ns.finish
    front = ns.front
    make = front.make
    zero_start = op.name == "cumsum" and not isinstance(ns, MetaNamespace)

    def kernel(self: Any, dim: Any, *, dtype: Any = None) -> Any:
        p = plan(front, op, self, dim, True, dtype, accumulate=accumulate)
        x = self._array
        if self._dtype is not p.cdt:
            x = ns.astype(x, p.cdt)
        axis = p.axes[0] if p.axes else 0
        out = fn(x, axis) if x.ndim else ns.copy(x)
        if zero_start and p.cdt.category >= 2:
            # PyTorch's running sum starts from +0: a leading -0.0 (or a run of them)
            # sums to +0.0, where NumPy's first partial sum is the element itself.
            out = out + 0
        return make(finish(out, p.odt), p.odt, self._device)

    return kernel


CONVENTIONS: dict[str, Callable[..., Any]] = {
    "dims_dtype": _dims_dtype,
    "dim_dtype": _dim_dtype,
    "dims": _dims,
    "count": _count,
    "correction": _correction,
    "p": _p_norm,
    "scan": _scan,
}
# The argument list of each reduction's schema (see tensor's operator table).
CONVENTION_OF = {
    "sum": "dims_dtype",
    "mean": "dims_dtype",
    "prod": "dim_dtype",
    "amax": "dims",
    "amin": "dims",
    "argmax": "dims",
    "argmin": "dims",
    "all": "dims",
    "any": "dims",
    "logsumexp": "dims",
    "count_nonzero": "count",
    "var": "correction",
    "std": "correction",
    "norm": "p",
    "linalg_vector_norm": "p",
    "cumsum": "scan",
    "cumprod": "scan",
}


def reduction(
    op: Any,
    fn: Callable[..., Any],
    ns: Namespace,
    *,
    accumulate: bool = False,
    whole: Callable[[Any, Any], Any] | None = None,
    along: Callable[..., Any] | None = None,
) -> Callable[..., Any]:
    """The data kernel of reduction ``op`` computing ``fn(x, axes, keepdim, *extra)``.

    ``whole(x, None)``, when given, computes the whole-tensor reduction in one call
    (``np.add.reduce``): ``x.sum()`` on a tiny tensor is a hot call (ci/bench/ops.py).
    ``along``, when given, is a ufunc's ``reduce``, called as ``along(x, axis, None,
    None, keepdim)`` for a reduction over one axis (``g.sum(0)``, the bias gradient),
    without ``fn``'s Python frame.
    """
    convention = CONVENTION_OF[op.name]
    if convention == "dims_dtype":
        kernel = _dims_dtype(op, fn, ns, accumulate, whole, along)
    else:
        kernel = CONVENTIONS[convention](op, fn, ns, accumulate)
    return rename(kernel, op.name, ns)


def max_min_dim(op: Any, fn: Callable[..., Any], ns: Namespace) -> Callable[..., Any]:
    """``max.dim``/``min.dim``: (values, indices) with ``fn(x, axis) -> indices``."""
    xp, finish = ns.xp, ns.finish
    front = ns.front
    make, int64 = front.make, front.int64
    # NumPy's ndarray on NumPy's namespace, else a type no array is.
    numpy_ndarray = _numpy.ndarray if ns.ndarray is _numpy.ndarray else type(None)

    # Note [Max along a dim of a matrix]: ``logits.max(1)`` of a NumPy matrix takes the
    # values by indexing the matrix with the indices and an ``arange`` of the other dim:
    # ``take_along_axis`` at those indices, without the array API's Python wrappers
    # (~11 -> ~4 us for a [4, 8] tensor).  Other ranks, other arrays, and every call with
    # the fast paths off take the general way below.
    aranges: dict[int, Any] = {}

    def kernel(self: Any, dim: Any, keepdim: bool = False) -> Any:
        p = plan(front, op, self, dim, keepdim)
        x = self._array
        axis = p.axes[0] if p.axes else 0
        if x.ndim == 2 and type(x) is numpy_ndarray and x.size and fastpaths.ENABLED:
            idx = fn(x, axis)
            n = x.shape[1 - axis]
            ar = aranges.get(n)
            if ar is None:
                ar = aranges[n] = xp.arange(n)
            values = x[ar, idx] if axis == 1 else x[idx, ar]
            if keepdim:
                values, idx = (
                    (values[:, None], idx[:, None]) if axis == 1 else (values[None], idx[None])
                )
            dev = self._device
            return (
                make(finish(values, p.odt), p.odt, dev),
                make(finish(idx, int64), int64, dev),
            )
        if x.ndim == 0:
            values, indices = ns.copy(x), xp.zeros((), dtype=ns.dtype_of(front.int64))
        else:
            idx = fn(x, axis)
            values = xp.take_along_axis(x, xp.expand_dims(idx, axis=axis), axis=axis)
            indices = xp.expand_dims(idx, axis=axis) if keepdim else idx
            if not keepdim:
                values = xp.squeeze(values, axis=axis)
        dev = self._device
        return (
            make(finish(values, p.odt), p.odt, dev),
            make(finish(indices, int64), int64, dev),
        )

    return rename(kernel, f"{op.name}_dim", ns)


def max_min_all(op: Any, fn: Callable[..., Any], ns: Namespace) -> Callable[..., Any]:
    """``max(self)``/``min(self)``: the whole-tensor extreme (NaN if any)."""
    run = _run(op, fn, ns, False)

    def kernel(self: Any) -> Any:
        return run(self, None, False, None)

    return rename(kernel, op.name, ns)


# Note [Default reduction math]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# As for the elementwise family (Note [Default math] in elementwise.py), a reduction
# row computes with the array API's function of its name unless the backend lists an
# override, so a device whose namespace follows the standard gets every reduction from
# ``kernels(front, ns, {})``.  Two groups:
# - one library call: sum, prod, max (amax), min (amin), all, any, argmax, argmin,
#   count_nonzero, cumulative_sum (cumsum), cumulative_prod (cumprod), called through
#   the array-API namespace (``ns.xp``, looked up per call so that array_api_compat
#   loads on the first call: Note [Lazy array namespace]);
# - composed from the backend's own sum/amax/amin (whatever it overrides them with:
#   CUDA's row kernels): mean, var, std, logsumexp, norm, linalg_vector_norm.  The
#   standard has mean/var/std/vector_norm too, but PyTorch's semantics differ where the
#   standard leaves them open: var's divisor is max(n - correction, 0), a complex var is
#   real, norm(inf) of an empty slice is 0; written once here, every backend has them.
# Backends override for PyTorch's accumulation types (CPU: float64 var/std and scans of
# float32) and for faster spellings (CPU: ufunc reduce; CUDA: row kernels).
NAMES = tuple(CONVENTION_OF)
# Half-precision inputs accumulate in float32 (PyTorch's opmath) for these rows.
ACCUMULATE = frozenset(
    {"sum", "mean", "prod", "logsumexp", "var", "std", "norm", "linalg_vector_norm"}
    | {"cumsum", "cumprod"}
)
STANDARD_NAMES = {
    "amax": "max", "amin": "min", "cumsum": "cumulative_sum", "cumprod": "cumulative_prod",
}  # fmt: skip
_COMPOSED = ("mean", "var", "std", "logsumexp", "norm", "linalg_vector_norm")


def _one(axes: tuple[int, ...] | None) -> int | None:
    return None if axes is None else axes[0]


def _count(x: Any, axes: tuple[int, ...] | None) -> int:
    shape = x.shape
    n = 1
    for a in range(len(shape)) if axes is None else axes:
        n *= shape[a]
    return n


def default_math(name: str, ns: Namespace) -> Callable[..., Any]:
    """The array API's function for one-call reduction row ``name``, as ``fn(x, axes,
    keepdim)`` (``fn(x, axis)`` for scans): Note [Default reduction math]."""
    xp = ns.xp
    std = STANDARD_NAMES.get(name, name)
    if name in ("argmax", "argmin"):

        def fn(x: Any, axes: Any, keepdim: bool) -> Any:
            return getattr(xp, std)(x, axis=_one(axes), keepdims=keepdim)

    elif name == "count_nonzero":

        def fn(x: Any, axes: Any, keepdim: bool) -> Any:
            return xp.count_nonzero(x, axis=axes)

    elif name in ("cumsum", "cumprod"):

        def fn(x: Any, axis: int) -> Any:  # type: ignore[misc]
            return getattr(xp, std)(x, axis=axis)

    elif name in _COMPOSED:
        raise LookupError(f"reduction {name!r} is composed: see composed_math")
    else:

        def fn(x: Any, axes: Any, keepdim: bool) -> Any:
            return getattr(xp, std)(x, axis=axes, keepdims=keepdim)

    fn.__name__ = fn.__qualname__ = f"default_{name}"
    return fn


def composed_math(fns: dict[str, Any], ns: Namespace) -> dict[str, Callable[..., Any]]:
    """mean, var, std, logsumexp and the norms from the backend's sum/amax/amin
    (``fns``) and array-API elementwise functions: Note [Default reduction math]."""
    xp = ns.xp
    sum_, amax, amin = fns["sum"], fns["amax"], fns["amin"]

    def mean(x: Any, axes: Any, keepdim: bool) -> Any:
        return sum_(x, axes, keepdim) / _count(x, axes)

    def var(x: Any, axes: Any, keepdim: bool, correction: Any) -> Any:
        # Two passes (the mean, then squared deviations): as accurate as Welford here.
        n = _count(x, axes)
        d = x - sum_(x, axes, True) / n
        if xp.isdtype(d.dtype, "complex floating"):
            re, im = xp.real(d), xp.imag(d)
            sq = re * re + im * im
        else:
            sq = d * d
        # PyTorch clamps the divisor at 0: too few elements give inf or nan, never a sign flip.
        return sum_(sq, axes, keepdim) / max(n - correction, 0)

    def std(x: Any, axes: Any, keepdim: bool, correction: Any) -> Any:
        return xp.sqrt(var(x, axes, keepdim, correction))

    def logsumexp(x: Any, axes: Any, keepdim: bool) -> Any:
        if x.size == 0:
            return xp.log(sum_(xp.exp(x), axes, keepdim))
        m = amax(x, axes, True)
        m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
        out = xp.log(sum_(xp.exp(x - m), axes, True)) + m
        if keepdim:
            return out
        return xp.squeeze(out, axis=tuple(range(out.ndim)) if axes is None else axes)

    def norm(x: Any, axes: Any, keepdim: bool, p: Any) -> Any:
        a = xp.abs(x)
        if p == 2:
            return xp.sqrt(sum_(a * a, axes, keepdim))
        if p == 1:
            return sum_(a, axes, keepdim)
        if p == float("inf"):
            return amax(a, axes, keepdim) if a.size else sum_(a, axes, keepdim)  # empty: 0s
        if p == float("-inf"):
            return amin(a, axes, keepdim)
        if p == 0:
            return sum_(xp.astype(a != 0, a.dtype), axes, keepdim)
        return xp.pow(sum_(xp.pow(a, p), axes, keepdim), 1.0 / p)

    return {
        "mean": mean,
        "var": var,
        "std": std,
        "logsumexp": logsumexp,
        "norm": norm,
        "linalg_vector_norm": norm,
    }


def kernels(
    front: FrontEnd,
    ns: Namespace,
    overrides: dict[str, Callable[..., Any]],
    *,
    whole: dict[str, Callable[..., Any]] | None = None,
    along: dict[str, Callable[..., Any]] | None = None,
) -> dict[str, Any]:
    """Every reduction and scan kernel of one backend, by qualified overload name.

    ``overrides`` maps a row's name to its math (``fn(x, axes, keepdim, *extra)``;
    ``fn(x, axis)`` for scans) where the default (Note [Default reduction math]) is not
    wanted; ``whole``/``along`` are the fast paths of ``reduction``.  ``max``/``min``
    (whole tensor) use the amax/amin math and ``max.dim``/``min.dim`` the argmax/argmin
    math along one axis.
    """
    whole = whole or {}
    along = along or {}
    fns: dict[str, Callable[..., Any]] = {}
    for name in NAMES:
        fn = overrides.get(name)
        if fn is None and name not in _COMPOSED:
            fn = default_math(name, ns)
        if fn is not None:
            fns[name] = fn
    composed = composed_math(fns, ns)
    out: dict[str, Any] = {}
    for name in NAMES:
        out[name] = reduction(
            front.op_info(name),
            fns.get(name) or composed[name],
            ns,
            accumulate=name in ACCUMULATE,
            whole=whole.get(name),
            along=along.get(name),
        )
    for name, reduce_name, index_name in (("max", "amax", "argmax"), ("min", "amin", "argmin")):
        op = front.op_info(name)
        out[name] = max_min_all(op, fns[reduce_name], ns)
        index = fns[index_name]
        out[f"{name}.dim"] = max_min_dim(op, _index_along(index), ns)
    return out


def _index_along(index: Callable[..., Any]) -> Callable[[Any, int], Any]:
    """``max.dim``'s ``fn(x, axis) -> indices`` from an argmax row's ``fn(x, axes, keepdim)``."""

    def fn(x: Any, axis: int) -> Any:
        return index(x, (axis,), False)

    return fn

"""Plug-in devices: any array-API library as a device, its kernels made from the shared ones.

Imports: NumPy, ``dispatch`` and ``backends.common``; never the device's library (the
``DeviceSpec`` brings it).

``DeviceSpec`` says what a device is: its name, its array type, its array-API namespace
(and, optionally, the raw library behind it), how arrays move to and from the CPU, its
random engine, and any library functions that the shared kernels take as arguments
(``functions``: NumPy's ``add.at``, a strided view...).  ``register(front, spec, key)``
probes what the library can do, builds every shared kernel of ``backends.common`` it
can for the namespace, wraps them in the device guard and registers them at ``key`` (a
PrivateUse key, chosen by ``tensor.register_device``).  An operator it has no kernel
for reaches the dispatcher's own ``NotImplementedError``, which names the operator, the
key and the device (no backend fallback: a fallback would be every operator's, users'
too, and would hide a composite kernel's place in ``dump_table``).

Note [Plug-in devices]
~~~~~~~~~~~~~~~~~~~~~~
PyTorch adds a device in C++ (PrivateUse1, ``rename_privateuse1_backend``, a device
module).  Here a device is one Python call: the shared kernels are written against an
array namespace (Note [Default math] in ``elementwise``), so a library that follows the
standard runs most of them as they are.  What it cannot run must fail loudly, never
give a wrong answer:
- *Build-time probes.*  A library function the shared kernels take and the library
  lacks is made from the standard where it can be (``sliding_window_view`` from
  slices, ``diag`` from ``eye`` and ``linalg.diagonal``, ``dot``/``vdot`` from
  ``matmul``/``vecdot``, the ``linalg_*``/``fft_*`` kernels from the ``linalg`` and
  ``fft`` extensions), else replaced by a stand-in that raises (``as_strided`` for a
  writeable diagonal view, ``add.at`` for scatter-add), so only the operators that
  need it fail.  An elementwise row whose function neither the library nor the
  namespace has gets no kernel: the dispatcher's ``NotImplementedError`` names the
  operator and the device.  ``DeviceKernels.missing`` lists what was left out and why.
- *Call-time guard.*  A kernel that runs into something the library does not have
  (an ``AttributeError``; a ``TypeError``/``ValueError``/``NotImplementedError``
  raised inside the library itself, e.g. array_api_strict refusing a NumPy dtype) is
  reported as ``NotImplementedError`` naming the operator, the device and the
  library's own message: the shared kernel has a habit this library does not share.
  Errors the shared kernels raise themselves (bad arguments, PyTorch's dtype rules)
  pass through unchanged, so a plug-in device raises where the CPU raises.
- *Aliasing.*  A library whose views do not share memory with their base (dask:
  arrays are values, each op a new graph) would let an in-place write leave a view
  stale.  ``register`` probes this; on such a device an in-place or ``out=`` write
  into a view, or into a tensor that has live views (weak references: the views
  autograd made and dropped do not count), raises ``NotImplementedError``; a write
  into a tensor without views (``p -= lr * g``, gradient accumulation) is fine.
The guard also checks the devices of the tensor arguments (an error naming both) and
moves 0-d CPU tensors to the device, as PyTorch does for CUDA.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dispatch import Library, parse_schema

from . import (
    conv,
    creation,
    decompositions,
    device_guard,
    indexing,
    joining,
    linalg,
    nn,
    reduction,
    searching,
    sorting,
    ternary,
    variants,
    views,
)
from . import elementwise as ew
from .formulas import Formulas
from .frontend import FrontEnd

__all__ = ["DeviceKernels", "DeviceSpec", "register"]


@dataclass(frozen=True, kw_only=True)
class DeviceSpec:
    """What a plug-in device is (``tensor.register_device`` takes the same fields).

    ``name``: the device type (``"strict"``; tensors live on ``"strict"`` or
    ``"strict:N"``).  ``array_type``: the library's array type (a tuple for several).
    ``namespace``: its array-API namespace.  ``library``: the raw library, where it
    differs from the namespace (faster spellings, ``frompyfunc``...); defaults to the
    namespace.  ``to_cpu(array) -> numpy.ndarray``: defaults to ``numpy.from_dlpack``,
    else ``numpy.asarray``.  ``from_cpu(ndarray, index, **options) -> array``: defaults
    to ``namespace.asarray``; ``options`` are what the user passed to ``tt.tensor(...,
    device=name, **options)`` (dask's ``chunks=``).  ``engine(seed)``: a random engine
    with NumPy Generator's ``random``/``standard_normal``/``integers``, or None for
    none (random factories then raise).  ``functions``: library functions the shared
    kernels take, by the names the CPU backend gives them (``reshape``,
    ``broadcast_to``, ``diagonal`` or ``as_strided``, ``add_at``, ``multiply_at``,
    ``concat``, ``diag``, ``sliding_window_view``, ``matmul``, ``dot``, ``vdot``,
    ``einsum``, ``tensordot``, and ``frompyfunc`` for erf/erfc);
    those not given are found in the library or namespace, or the kernels that need them
    raise.  ``known_shape(array) -> array``: for a lazy library whose data-dependent
    results (``nonzero``, masks) have unknown sizes (NaN in dask's shapes), the same
    array with its sizes computed; a tensor's shape is always known.
    """

    name: str
    array_type: type | tuple[type, ...]
    namespace: Any
    library: Any = None
    to_cpu: Callable[[Any], np.ndarray] | None = None
    from_cpu: Callable[..., Any] | None = None
    engine: Callable[[int], Any] | None = None
    functions: Mapping[str, Any] = field(default_factory=dict)
    known_shape: Callable[[Any], Any] | None = None

    @property
    def lib(self) -> Any:
        return self.library if self.library is not None else self.namespace

    @property
    def array_types(self) -> tuple[type, ...]:
        t = self.array_type
        return t if isinstance(t, tuple) else (t,)

    def cpu(self, array: Any) -> np.ndarray:
        """``array`` as a NumPy array on the CPU."""
        if self.to_cpu is not None:
            return np.asarray(self.to_cpu(array))
        try:
            return np.from_dlpack(array)
        except (AttributeError, TypeError, BufferError, RuntimeError):
            return np.asarray(array)

    def device_array(self, array: np.ndarray, index: int | None = None, **options: Any) -> Any:
        """NumPy array ``array`` as an array of this device."""
        if self.from_cpu is not None:
            return self.from_cpu(array, index, **options)
        if options:
            raise TypeError(
                f"device {self.name!r} takes no options when making arrays (got "
                f"{', '.join(sorted(options))}); its spec has no from_cpu that would use them"
            )
        return self.namespace.asarray(array)


@dataclass
class DeviceKernels:
    """What ``register`` made of a spec: the libraries (keep them alive), which kernels
    it registered, what it left out and why, and the probed capabilities."""

    spec: DeviceSpec
    key: str
    libs: list[Library]
    registered: list[str]
    missing: dict[str, str]
    views_share_memory: bool

    def destroy(self) -> None:
        for lib in self.libs:
            lib.destroy()
        self.libs.clear()


# -- probes -----------------------------------------------------------------------------------
def _probe_views(spec: DeviceSpec, reshape: Callable[..., Any]) -> bool:
    """Whether a write into a view of an array of the library shows in its base."""
    try:
        base = spec.device_array(np.zeros((2, 2)))
        view = reshape(base, (4,), None)
        view[0] = 1.0
        return bool(spec.cpu(base)[0, 0] == 1.0)
    except Exception:  # noqa: BLE001 - any failure means "no shared views"
        return False


def _function(spec: DeviceSpec, name: str, *alternatives: str) -> Any:
    """A library function the shared kernels take: the spec's, the library's, the
    namespace's (under ``name`` or an alternative), or None."""
    found = spec.functions.get(name)
    if found is not None:
        return found
    for n in (name, *alternatives):
        for module in (spec.lib, spec.namespace):
            fn = getattr(module, n, None)
            if fn is not None:
                return fn
    return None


# -- kernels ----------------------------------------------------------------------------------
def _elementwise(
    front: FrontEnd, ns: ew.Namespace, spec: DeviceSpec, missing: dict[str, str]
) -> dict[str, Any]:
    """Every elementwise row the library has a function for (Note [Default math]), with
    the shared formulas where PyTorch's semantics differ from the standard's."""
    F = Formulas(
        ns.lib,
        frompyfunc=spec.functions.get("frompyfunc"),
        kind_of=ns.kind_of,
        copy=ns.copy,
        finfo=getattr(ns.xp, "finfo", None),
        retype=ns.retype,
        standard=True,
    )
    unary = {
        "sign": F.sign, "rsqrt": F.rsqrt, "sigmoid": F.sigmoid, "relu": F.relu,
        "silu": F.silu, "floor": F.same_if_int(getattr(ns.lib, "floor", None)),
        "ceil": F.same_if_int(getattr(ns.lib, "ceil", None)),
        "trunc": F.same_if_int(getattr(ns.lib, "trunc", None)), "frac": F.frac,
    }  # fmt: skip
    if F._erf is not None:
        unary.update(erf=F.erf, erfc=F.erfc)
    unary_args = {
        "round": F.round, "gelu": F.gelu, "softplus": F.softplus, "nan_to_num": F.nan_to_num,
    }  # fmt: skip
    binary: dict[str, tuple[Any, bool]] = {
        "add": (F.add, True), "sub": (F.sub, True), "rsub": (F.rsub, True),
        "div": (F.div, True), "floor_divide": (F.floor_divide, False),
        "remainder": (F.remainder, False), "fmod": (F.fmod, False), "pow": (F.pow, False),
        "isclose": (F.isclose, True), "logaddexp": (F.logaddexp, False),
    }  # fmt: skip
    # NumPy's logical functions take any dtype (nonzero is true); the standard's take bool
    # arrays only (and casts no complex to bool), so a plug-in device compares with 0.
    xp, bool_ = spec.namespace, ns.dtype_of(front.bool)

    def truth(x: Any) -> Any:
        return x if x.dtype == bool_ else x != 0

    def signbit(x: Any) -> Any:  # the standard's takes real floating dtypes only
        kind = ns.kind_of(x.dtype)
        if kind == "f":
            return xp.signbit(x)
        return x < 0 if kind == "i" else xp.zeros(x.shape, dtype=bool_)

    unary["signbit"] = signbit
    if getattr(ns.lib, "exp2", None) is None and getattr(xp, "exp2", None) is None:

        def exp2(x: Any) -> Any:  # the standard has no exp2: 2 ** x, for real dtypes
            if ns.kind_of(x.dtype) == "c":  # pow's complex specials are not exp2's
                raise NotImplementedError(f"exp2 of complex tensors: {xp.__name__} has no exp2")
            return xp.pow(2.0, x)

        unary["exp2"] = exp2

    unary["logical_not"] = lambda x: xp.logical_not(truth(x))
    for name in ("logical_and", "logical_or", "logical_xor"):
        fn = getattr(xp, name, None)
        if fn is not None:
            binary[name] = ((lambda f: lambda x, y: f(truth(x), truth(y)))(fn), False)
    plain = {"add": operator.add, "sub": operator.sub}
    out: dict[str, Any] = {}

    def math(name: str) -> Any:
        try:
            return ns.math(name)
        except LookupError as e:
            missing[name] = str(e)
            return None

    numbers = _bool_as_numbers(xp, bool_, ns.dtype_of(front.uint8))
    for op in front.op_table:
        if op.family == "unary":
            if op.name in unary_args:
                out[op.name] = ew.unary_args(op, unary_args[op.name], ns)
            else:
                fn = unary.get(op.name) or math(op.name)
                if fn is not None:
                    out[op.name] = ew.unary(op, numbers(fn, op.name), ns)
            continue
        if op.family == "ternary":
            out.update(ternary.kernels(op, ns))
            continue
        if op.family != "binary":
            continue
        fn, extra = binary.get(op.name) or (math(op.name), False)
        if fn is None:
            continue
        fn = numbers(fn, op.name)
        for text in op.schemas:
            schema = parse_schema(text)
            overload = schema.overload_name or "default"
            qualname = op.name if overload == "default" else f"{op.name}.{overload}"
            first, second = schema.arguments[0], schema.arguments[1]
            if first.type.tensor_kind is None:
                out[qualname] = ew.binary_reversed(op, fn, ns, overload)
                continue
            names = (first.name, second.name)
            scalar = second.type.tensor_kind is None
            if op.name == "div":
                floor = front.op_info("floor_divide")
                true_divide = ns.math("div")
                out[qualname] = ew.div(op, floor, true_divide, F.div, ns, overload, scalar=scalar)
                continue
            kernel = ew.binary(op, fn, ns, overload, scalar=scalar, names=names, extra=extra)
            if op.name in plain:
                kernel = ew.binary_alpha(
                    op,
                    numbers(plain[op.name], op.name),
                    kernel,
                    ns,
                    overload,
                    scalar=scalar,
                    names=names,
                )
            out[qualname] = kernel
    return out


def _bool_as_numbers(xp: Any, bool_: Any, uint8: Any) -> Callable[[Any], Any]:
    """``numbers(fn)``: ``fn`` computing on bool arrays as uint8 (and Python bools as
    ints) and giving a uint8 result back as bool.  NumPy's arithmetic, comparisons and
    ``isnan`` take bools (``a + b`` is ``a or b``); the standard's take numbers only, and
    PyTorch's results on bools are NumPy's (nonzero is true)."""

    def numbers(fn: Any, name: str = "") -> Any:
        if name.startswith("bitwise_"):  # the standard's take bools (~True is False)
            return fn

        def run(*args: Any, **kwargs: Any) -> Any:
            if not any(getattr(a, "dtype", None) == bool_ for a in args):
                return fn(*args, **kwargs)
            args = tuple(
                xp.astype(a, uint8) if getattr(a, "dtype", None) == bool_
                else int(a) if type(a) is bool else a
                for a in args
            )  # fmt: skip
            out = fn(*args, **kwargs)
            return xp.astype(out, bool_) if getattr(out, "dtype", None) == uint8 else out

        run.__name__ = getattr(fn, "__name__", "numbers")
        return run

    return numbers


def _reductions(front: FrontEnd, ns: ew.Namespace, spec: DeviceSpec) -> dict[str, Any]:
    """The reductions and scans: the family's one loop and default math (Note [Default
    reduction math] in ``backends.common.reduction``), with two overrides: amax/amin
    make an empty result directly, and a namespace without the standard's scans uses
    the library's ``cumprod`` or leaves the scan out (its operators then raise)."""
    xp = spec.namespace

    def extreme(fn: Any) -> Any:
        def run(x: Any, axes: Any, keepdim: bool) -> Any:
            # An empty result (a reduction over non-empty dims of an empty tensor) is
            # made directly: dask's chunked max has no identity for its empty chunks.
            if x.size == 0:
                reduced = range(x.ndim) if axes is None else [a % x.ndim for a in axes]
                shape = [
                    1 if d in reduced else n
                    for d, n in enumerate(x.shape)
                    if keepdim or d not in reduced
                ]
                if 0 in shape:
                    return xp.zeros(tuple(shape), dtype=x.dtype)
            return fn(x, axis=axes, keepdims=keepdim)

        return run

    # The standard's max/min/argmax/argmin take no bools: as uint8 (bools as numbers).
    numbers = _bool_as_numbers(xp, ns.dtype_of(front.bool), ns.dtype_of(front.uint8))
    overrides: dict[str, Any] = {
        "amax": numbers(extreme(xp.max)), "amin": numbers(extreme(xp.min)),
    }  # fmt: skip
    for name in ("argmax", "argmin"):
        index = reduction.default_math(name, ns)
        if index is not None:
            overrides[name] = numbers(index)
    cumprod = getattr(spec.lib, "cumprod", None)
    if getattr(xp, "cumulative_prod", None) is None and cumprod is not None:
        overrides["cumprod"] = lambda x, axis: cumprod(x, axis=axis)
    out = reduction.kernels(front, ns, overrides)
    for name, std in (("cumsum", "cumulative_sum"), ("cumprod", "cumulative_prod")):
        if name not in overrides and getattr(xp, std, None) is None:
            del out[name]
    return out


def _reshape_fn(xp: Any, shared: bool) -> Any:
    """``reshape(x, shape, copy)`` for the view kernels.  Where views share memory,
    ``copy=False`` must give a view or fail (``view`` of a transposed tensor raises, as
    in PyTorch); where they do not (dask), there is no view to insist on."""

    def reshape(x: Any, shape: Any, copy: bool | None) -> Any:
        # An empty array has no memory to share: any reshape of it is a view (NumPy's
        # strides allow it; array_api_strict's copy=False refuses some empty shapes).
        if copy is None or (copy is False and (not shared or x.size == 0)):
            return xp.reshape(x, shape)
        return xp.reshape(x, shape, copy=copy)

    return reshape


def _lacking(spec: DeviceSpec, what: str) -> Any:
    """A stand-in for a library function the device lacks: the kernels that need it raise
    (and the guard names the operator and the device)."""
    lib = getattr(spec.lib, "__name__", repr(spec.lib))

    def lacking(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"{lib} has no {what} (give one in the device's functions={{{what!r}: ...}})"
        )

    lacking.__name__ = f"no_{what}"
    return lacking


class _DtypeMap(dict[Any, Any]):
    """Our dtypes -> the device namespace's dtype objects (Note [Array dtypes of a
    namespace] in ``elementwise``); a dtype the namespace lacks raises, naming the device."""

    def __init__(self, device: str, pairs: Mapping[Any, Any]) -> None:
        super().__init__(pairs)
        self.device = device

    def __missing__(self, dt: Any) -> Any:
        raise NotImplementedError(
            f"device {self.device!r} has no {getattr(dt, 'name', dt)} dtype (its namespace "
            f"lacks it). Use a dtype its library has, or keep this tensor on the CPU."
        )

    def __repr__(self) -> str:
        return f"device {self.device!r}"


def _dtypes(front: FrontEnd, spec: DeviceSpec) -> _DtypeMap:
    """The namespace's dtype object for each of ours it has, found by the standard's
    name (``xp.float32``, ``xp.bool``...)."""
    names = (
        "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
        "float32", "float64", "complex64", "complex128",
    )  # fmt: skip
    pairs = {}
    for name in names:
        found = getattr(spec.namespace, name, None)
        if found is not None:  # NumPy-like namespaces name scalar types: their dtypes
            pairs[getattr(front, name)] = np.dtype(found) if isinstance(found, type) else found
    return _DtypeMap(spec.name, pairs)


def _kernels(
    front: FrontEnd, spec: DeviceSpec, module: str, missing: dict[str, str]
) -> tuple[dict[str, Any], bool]:
    """Every kernel the library can run, by qualified overload name; and whether its
    views share memory."""
    xp, lib = spec.namespace, spec.lib
    array_type = spec.array_types[0]
    asarray = getattr(lib, "asarray", None) or xp.asarray
    ns = ew.Namespace(
        array_type, module, front, asarray=asarray, xp=xp, lib=lib, dtypes=_dtypes(front, spec)
    )
    found: dict[str, Any] = {}

    def function(name: str, *alternatives: str) -> Any:
        fn = _function(spec, name, *alternatives)
        if fn is None:
            missing[name] = f"the library has no {name}: the operators that need it raise"
            return _lacking(spec, name)
        return fn

    def family(name: str, build: Callable[[], dict[str, Any]]) -> None:
        try:
            found.update(build())
        except (AttributeError, TypeError, LookupError) as e:  # a function missing at build
            missing[f"<{name}>"] = f"{type(e).__name__}: {e}"

    shared = _probe_views(spec, lambda x, shape, copy: xp.reshape(x, shape))
    family("elementwise", lambda: _elementwise(front, ns, spec, missing))
    family("reduction", lambda: _reductions(front, ns, spec))
    products = {
        "matmul": function("matmul"),
        # 1-D by 1-D: the standard's matmul is dot, vecdot (conjugating) is vdot.
        "dot": _function(spec, "dot") or xp.matmul,
        "vdot": _function(spec, "vdot") or (lambda a, b: xp.vecdot(a, b)),
        "einsum": function("einsum"),
        "tensordot": function("tensordot"),
    }
    family("linalg", lambda: linalg.kernels(ns, products))
    family("decompositions", lambda: _decompositions(ns, xp))
    diagonal = spec.functions.get("diagonal")
    as_strided = spec.functions.get("as_strided")
    if diagonal is None and as_strided is not None:
        diagonal = views.strided_diagonal(as_strided)
    view_fns = {
        "reshape": spec.functions.get("reshape") or _reshape_fn(xp, shared),
        "broadcast_to": function("broadcast_to"),
        # A writeable diagonal view needs strides; without them diagonal raises.
        "diagonal": diagonal or _lacking(spec, "as_strided"),
        "permute_dims": xp.permute_dims,
    }
    family("views", lambda: ew.rename_all(views.kernels(front, view_fns), module))
    family(
        "mutation",
        lambda: ew.rename_all(variants.mutation_kernels(front, meta=False, ns=ns), module),
    )
    index_fns = {"add_at": function("add_at"), "multiply_at": function("multiply_at")}
    family("indexing", lambda: ew.rename_all(indexing.kernels(ns, index_fns), module))
    diag = _function(spec, "diag") or joining.standard_diag(xp)
    join_fns = {"diag": diag, "concat": function("concat", "concatenate")}
    family("joining", lambda: ew.rename_all(joining.kernels(ns, join_fns), module))
    family("sorting", lambda: ew.rename_all(sorting.kernels(ns), module))
    family(
        "searching",
        lambda: ew.rename_all(searching.kernels(ns, searching.namespace_fns(ns)), module),
    )
    engine = _engine(spec)
    family("nn", lambda: ew.rename_all(nn.kernels(ns, {"engine": engine}), module))
    windows = _function(spec, "sliding_window_view") or conv.sliding_windows(xp)
    window = {"sliding_window_view": windows}
    family("conv", lambda: ew.rename_all(conv.kernels(ns, window), module))
    family("creation", lambda: creation.kernels(ns, engine))
    found.update(variants.kernels(front, found, f"{module}.variants", ns))
    return found, shared


def _decompositions(ns: ew.Namespace, xp: Any) -> dict[str, Any]:
    """``linalg_*`` from the namespace's ``linalg`` extension and ``fft_*`` from its
    ``fft`` (Note [Standard linalg for plug-in devices] in ``decompositions``); none
    where it has neither."""
    lin = getattr(xp, "linalg", None)
    fft = getattr(xp, "fft", None)
    if lin is None and fft is None:
        return {}
    # array_api_strict's linalg raises NumPy's LinAlgError (singular, not definite).
    std = decompositions.standard_linalg(xp, (np.linalg.LinAlgError,)) if lin else None
    return decompositions.kernels(ns, std, fft)


def _engine(spec: DeviceSpec) -> Any:
    factory = spec.engine

    def engine(front: FrontEnd, generator: Any, device: Any) -> Any:
        if factory is None:
            raise NotImplementedError(
                f"random numbers: device {spec.name!r} has no random engine (its spec gives "
                f"no engine); draw on the CPU and move the tensor with .to({spec.name!r})"
            )
        return creation.generator_engine(front, generator, device, spec.name, factory)

    return engine


def register(front: FrontEnd, spec: DeviceSpec, key: str) -> DeviceKernels:
    """Build and register the kernels of plug-in device ``spec`` at ``key`` (Note
    [Plug-in devices]); returns what was registered (``destroy()`` undoes it)."""
    module = f"backends.common.device.{spec.name}"
    missing: dict[str, str] = {}
    found, shared = _kernels(front, spec, module, missing)
    lib = Library("core", "IMPL")
    rows = {op.name: op for op in front.op_table}
    for qualname, kernel in found.items():
        row = rows.get(qualname.partition(".")[0])
        site = row.defined_at if row is not None else None
        lib.impl(
            qualname, device_guard.guard(front, spec, qualname, kernel, shared), key, location=site
        )
    return DeviceKernels(
        spec=spec,
        key=key,
        libs=[lib],
        registered=sorted(found),
        missing=missing,
        views_share_memory=shared,
    )

"""Factories and random numbers: shapes and dtypes (``plan_*``), and kernels written once.

Imports: NumPy (host-side arithmetic only) and ``backends.common``.

The ``plan_*`` functions validate a factory call and return ``(shape, dtype)``;
Meta kernels stop there.  ``kernels(ns, engine)`` builds the data kernels of a
namespace; ``engine(front, generator, device)`` gives the backend's random engine of
a front-end ``Generator`` (a NumPy ``Generator`` on the CPU).  Every kernel here
receives ``device`` already normalised by the BackendSelect kernel (or the
device of its tensor argument).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import errors, fastpaths, shape_rules
from .elementwise import Namespace, rename
from .frontend import FrontEnd
from .numbers import check_fill, int_range, wrapped

__all__ = [
    "arange_length",
    "check_randint",
    "factory_dtype",
    "kernels",
    "plan_normal",
    "size_of",
]


def size_of(op: str, size: Any) -> tuple[int, ...]:
    """A factory's ``size`` argument as a tuple of non-negative ints."""
    if type(size) is tuple:  # already one (the factories' wrappers pass it): as it is
        for s in size:
            if type(s) is not int or s < 0:
                break
        else:
            return size
    if isinstance(size, int) and not isinstance(size, bool):
        size = (size,)
    out = []
    for i, s in enumerate(size):
        if isinstance(s, bool) or not hasattr(s, "__index__"):
            raise TypeError(
                f"{op}(): argument 'size' must be a sequence of ints, but element {i} is "
                f"{type(s).__name__} ({s!r})"
            )
        n = s.__index__()
        if n < 0:
            raise RuntimeError(
                f"{op}(): Trying to create tensor with negative dimension {n}: {list(size)}"
            )
        out.append(n)
    return tuple(out)


def _number_dtype(front: FrontEnd, value: Any) -> Any:
    if isinstance(value, bool):
        return front.bool
    if isinstance(value, int):
        return front.int64
    if isinstance(value, float):
        return front.get_default_dtype()
    if isinstance(value, complex):
        default = front.get_default_dtype()
        return front.complex128 if default is front.float64 else front.complex64
    if isinstance(value, front.Tensor):
        return value._dtype
    raise TypeError(f"expected a number, got {type(value).__name__}")


def ones_by_fill(shape: Any, dtype: Any = None) -> Any:
    """``numpy.ones(shape, dtype)`` without its Python wrapper: an empty array filled with
    one (the same bytes for every dtype, ml_dtypes' included; ~0.45 us less on a [4, 8]
    float32 array)."""
    out = np.empty(shape, dtype)
    out.fill(1)
    return out


def factory_dtype(front: FrontEnd, op: Any, dtype: Any, values: Sequence[Any] = ()) -> Any:
    """The dtype a factory makes: ``dtype``, or inferred from ``values``, or the default."""
    if dtype is not None:
        if not isinstance(dtype, front.dtype):
            raise TypeError(f"{op.name}(): argument 'dtype' must be a tensor dtype, got {dtype!r}")
        dt = dtype
    elif op.name in ("full", "full_like") and values:
        dt = _number_dtype(front, values[0])
    elif op.name == "arange" and values:
        dt = front.int64
        for v in values:
            k = _number_dtype(front, v)
            if k.category >= 2:
                dt = front.get_default_dtype()
    elif op.name == "randint":
        dt = front.int64
    else:
        dt = front.get_default_dtype()
    if dt not in op.dtypes:
        raise errors.unsupported_dtype(op.name, dt, "dtype")
    return dt


def _float(op: str, arg: str, value: Any) -> float:
    try:
        return float(value)
    except TypeError:
        raise TypeError(
            f"{op}(): argument '{arg}' must be a number, got {type(value).__name__}"
        ) from None


def arange_length(front: FrontEnd, start: Any, end: Any, step: Any, dt: Any = None) -> int:
    """How many values ``arange`` makes in dtype ``dt``, with PyTorch's checks.

    PyTorch sizes the result in double, except for int64, where it truncates start, end
    and step to int64 first (``arange(2.5, dtype=int64)`` has 2 values, int32's has 3)
    and refuses a step that truncates to 0 (other integer dtypes repeat ``start``).
    """
    s, e, st = (
        _float("arange", "start", start),
        _float("arange", "end", end),
        _float("arange", "step", step),
    )
    if st == 0:
        raise RuntimeError("arange(): step must be nonzero")
    if not (math.isfinite(s) and math.isfinite(e)):
        raise RuntimeError(f"arange(): unsupported range: {start} -> {end}")
    if (st > 0 and e < s) or (st < 0 and e > s):
        raise RuntimeError(
            f"arange(): upper bound and larger bound inconsistent with step sign "
            f"(start={start}, end={end}, step={step})"
        )
    if dt is front.int64 and not all(isinstance(v, int) for v in (start, end, step)):
        start, end, step = int(s), int(e), int(st)
        if step == 0:
            raise ValueError(f"arange(): step must be nonzero (step={st} truncates to 0 for int64)")
    if all(isinstance(v, int) for v in (start, end, step)):
        return max(0, -((start - end) // step))  # exact for big ints
    return max(0, math.ceil((e - s) / st))


def check_randint(dt: Any, low: int, high: int) -> None:
    """PyTorch's checks of randint's bounds: non-empty, and representable in the dtype."""
    if high <= low:
        raise RuntimeError(
            f"randint(): random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    if dt.category <= 1:
        lo_lim, hi_lim = (0, 1) if dt.category == 0 else int_range(dt)  # bool: 0 and 1
        if low < lo_lim:
            raise RuntimeError(
                f"randint(): from is out of bounds for {dt.name} (argument 'low' is {low})"
            )
        if high - 1 > hi_lim:
            raise RuntimeError(
                f"randint(): to - 1 is out of bounds for {dt.name} (argument 'high' is {high})"
            )


def plan_normal(
    front: FrontEnd, op: Any, mean: Any, std: Any, size: Any = None
) -> tuple[tuple[int, ...], Any]:
    """Shape and dtype of ``normal`` (tensor means/stds broadcast; floats need a size)."""
    mt, st = isinstance(mean, front.Tensor), isinstance(std, front.Tensor)
    if (st and std._dtype.is_complex) or isinstance(std, complex):
        raise RuntimeError(
            "normal(): normal expects standard deviation to be non-complex (argument 'std')"
        )
    if isinstance(std, (int, float)) and std < 0:
        raise RuntimeError(f"normal(): expects std >= 0.0, but found std {std}")
    if mt and st:
        dt = front.result_type(mean, std)
        shape = shape_rules.broadcast_shapes(
            "normal", tuple(mean._array.shape), tuple(std._array.shape), ("mean", "std")
        )
    elif mt:
        dt, shape = mean._dtype, tuple(mean._array.shape)
    elif st:
        dt, shape = std._dtype, tuple(std._array.shape)
    else:
        return size_of("normal", size), None
    if dt.category < 2:
        raise errors.unsupported_dtype("normal", dt, "mean" if mt else "std")
    return shape, dt


def kernels(ns: Namespace, engine: Callable[[Any, Any], Any]) -> dict[str, Any]:
    """Data kernels of the factories for the namespace of ``ns``.

    ``engine(front, generator, device)`` returns the random engine: an object with
    NumPy's ``random``, ``standard_normal`` and ``integers`` methods.
    """
    xp, finish = ns.xp, ns.finish
    front = ns.front
    op = front.op_info
    make, tensor_type = front.make, front.Tensor
    out: dict[str, Any] = {}

    # The raw library's empty/zeros/ones (array_api_compat's add a device check: the
    # device was already chosen by BackendSelect).
    raw = ns.lib
    device_type = front.device
    dtype_of = ns.dtype_of  # Note [Array dtypes of a namespace]
    default_dtype = front.get_default_dtype

    def filled(name: str, fill: Callable[..., Any]) -> None:
        row = op(name)
        dtypes = row.dtypes

        def kernel(size: Any, *, dtype: Any = None, device: Any = None) -> Any:
            # Fast path: a dtype and a device object given (the BackendSelect kernel's
            # normalised ones) are used as they are, no dtype is the default one
            # (``factory_dtype``'s answer, without its frame); anything else is checked.
            fast = fastpaths.ENABLED
            if dtype is None and fast:
                dt = default_dtype()
                if dt not in dtypes:  # not for these factories' rows: its error
                    dt = factory_dtype(front, row, dtype)
            else:
                dt = dtype if dtype in dtypes and fast else factory_dtype(front, row, dtype)
            dev = device if type(device) is device_type and fast else _dev(front, device)
            return make(fill(size_of(name, size), dtype=dtype_of(dt)), dt, dev)

        out[name] = rename(kernel, name, ns)

    filled("empty", getattr(raw, "empty", None) or xp.empty)
    filled("zeros", getattr(raw, "zeros", None) or xp.zeros)
    filled("ones", ones_by_fill if raw is np else (getattr(raw, "ones", None) or xp.ones))

    def full(size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
        dt = factory_dtype(front, op("full"), dtype, (fill_value,))
        shape = size_of("full", size)
        check_fill("full", fill_value, dt, "fill_value", math.prod(shape))
        fill_value = wrapped(fill_value, dt)  # unsigned: -1 wraps to 255, as PyTorch
        arr = xp.full(shape, fill_value if dt.category else bool(fill_value), dtype=dtype_of(dt))
        return make(arr, dt, _dev(front, device))

    out["full"] = rename(full, "full", ns)

    raw_arange = getattr(raw, "arange", None) or xp.arange
    int64 = front.int64
    int64_array = dtype_of(int64)

    def arange(
        start: Any, end: Any, step: Any = 1, *, dtype: Any = None, device: Any = None
    ) -> Any:
        # Fast path: ``arange(n)`` (an index vector) is ints from 0 by 1, in int64.  The
        # library's arange gives the general path's values; the checks and every other
        # call (floats, steps, bounds out of order, a dtype) go the general way.
        if (
            type(start) is int
            and type(end) is int
            and type(step) is int
            and start == 0
            and step == 1
            and dtype is None
            and 0 <= end <= _INT64_MAX // 8  # the general path checks bigger sizes
            and fastpaths.ENABLED
        ):
            dev = device if type(device) is device_type else _dev(front, device)
            return make(raw_arange(end, dtype=int64_array), int64, dev)
        dt = factory_dtype(front, op("arange"), dtype, (start, end, step))
        n = arange_length(front, start, end, step, dt)
        if n * dt.itemsize > _INT64_MAX:  # NumPy would wrap the size around
            raise RuntimeError(
                f"arange(): Storage size calculation overflowed with sizes=[{n}] (from "
                f"start={start}, end={end}, step={step})"
            )
        if dt.category <= 1:
            # Integer results: PyTorch casts start and step to the dtype (truncating) after
            # sizing the result (arange_length), so a step that truncates to 0 repeats
            # ``start`` (int64 refuses it there).
            arr = int(start) + xp.arange(n, dtype=int64_array) * int(step)
        else:  # PyTorch computes start + i * step in double, then casts
            arr = float(start) + xp.arange(n, dtype=dtype_of(front.float64)) * float(step)
        return make(finish(arr, dt), dt, _dev(front, device))

    out["arange"] = rename(arange, "arange", ns)

    def linspace(start: Any, end: Any, steps: int, *, dtype: Any = None, device: Any = None) -> Any:
        dt = factory_dtype(front, op("linspace"), dtype)
        if steps < 0:
            raise RuntimeError(f"linspace(): number of steps must be non-negative, got {steps}")
        s, e = complex(start), complex(end)
        if s.imag == 0 and e.imag == 0:
            s, e = s.real, e.real  # type: ignore[assignment]
        idx = xp.arange(steps, dtype=dtype_of(front.float64))
        if steps == 1:
            arr = xp.full((1,), s)
        else:  # PyTorch's symmetric formula: exact at both ends
            step = (e - s) / (steps - 1)
            half = steps // 2
            arr = xp.where(idx < half, s + step * idx, e - step * (steps - 1 - idx))
        if dt.category <= 1:
            arr = xp.trunc(arr.real) if hasattr(arr, "real") else xp.trunc(arr)
        return make(finish(arr, dt), dt, _dev(front, device))

    out["linspace"] = rename(linspace, "linspace", ns)

    def eye(n: int, m: Any = None, *, dtype: Any = None, device: Any = None) -> Any:
        dt = factory_dtype(front, op("eye"), dtype)
        rows, cols = size_of("eye", (n, n if m is None else m))
        return make(xp.eye(rows, cols, dtype=dtype_of(dt)), dt, _dev(front, device))

    out["eye"] = rename(eye, "eye", ns)

    def sample(name: str, draw: Callable[..., Any]) -> None:
        row = op(name)

        def kernel(
            size: Any, *, generator: Any = None, dtype: Any = None, device: Any = None
        ) -> Any:
            dt = factory_dtype(front, row, dtype)
            dev = _dev(front, device)
            rng = engine(front, generator, dev)
            shape = size_of(name, size)
            real = dt.to_real()
            wide = front.float64 if real is front.float64 else front.float32
            arr = draw(rng, shape, wide.numpy_dtype)
            if dt.is_complex:  # PyTorch: real and imaginary parts, each with variance 1/2
                imag = draw(rng, shape, wide.numpy_dtype)
                arr = (arr + 1j * imag) * (math.sqrt(0.5) if name == "randn" else 1)
            return make(finish(arr, dt), dt, dev)

        out[name] = rename(kernel, name, ns)

    sample("rand", lambda rng, shape, d: rng.random(shape, dtype=d))
    sample("randn", lambda rng, shape, d: rng.standard_normal(shape, dtype=d))

    def randint(
        low: Any,
        high: Any,
        size: Any,
        *,
        generator: Any = None,
        dtype: Any = None,
        device: Any = None,
    ) -> Any:
        dt = factory_dtype(front, op("randint"), dtype)
        check_randint(dt, low, high)
        dev = _dev(front, device)
        arr = engine(front, generator, dev).integers(
            low, high, size_of("randint", size), dtype=np.int64
        )
        return make(finish(arr, dt), dt, dev)

    out["randint"] = rename(randint, "randint", ns)

    normal_op = op("normal")

    def normal(
        mean: Any,
        std: Any = 1.0,
        size: Any = None,
        *,
        generator: Any = None,
        dtype: Any = None,
        device: Any = None,
    ) -> Any:
        shape, dt = plan_normal(front, normal_op, mean, std, size)
        tensors = [t for t in (mean, std) if isinstance(t, tensor_type)]
        dev = tensors[0]._device if tensors else _dev(front, device)
        if dt is None:
            dt = factory_dtype(front, normal_op, dtype)
        wide = front.float64 if dt.to_real() is front.float64 else front.float32
        rng = engine(front, generator, dev)
        noise = rng.standard_normal(shape, dtype=wide.numpy_dtype)
        if dt.is_complex:  # real and imaginary parts each with variance 1/2, as PyTorch
            noise = (noise + 1j * rng.standard_normal(shape, dtype=wide.numpy_dtype)) * math.sqrt(
                0.5
            )
        m = mean._array if isinstance(mean, tensor_type) else mean
        s = std._array if isinstance(std, tensor_type) else std
        return make(finish(m + s * noise, dt), dt, dev)

    rename(normal, "normal", ns)
    for overload in ("Tensor_Tensor", "Tensor_float", "float_Tensor", "float_float"):
        out[f"normal.{overload}"] = normal
    return out


_INT64_MAX = 2**63 - 1


def _dev(front: FrontEnd, device: Any) -> Any:
    # Out of BackendSelect's reach (``zeros(2, device="cuda", out=t)`` dispatches on ``t``),
    # the device is made canonical here: "cuda" is the current CUDA device.
    return front.canonical_device(front.to_device(device))  # None: the CPU


def generator_engine(
    front: FrontEnd, generator: Any, device: Any, device_type: str, factory: Any
) -> Any:
    """The backend engine of ``generator`` (the device's default one when None), made by
    ``factory(seed)``; a generator of another device type is refused, as in PyTorch."""
    gen = generator if generator is not None else front.default_generator(device)
    if not isinstance(gen, front.Generator):
        raise TypeError(f"argument 'generator' must be a tt.Generator, got {type(gen).__name__}")
    if gen.device.type != device_type:
        raise RuntimeError(
            f"Expected a '{device_type}' device type for generator but found "
            f"'{gen.device.type}' (argument 'generator'); use a generator of the tensor's device"
        )
    return gen.engine(factory)

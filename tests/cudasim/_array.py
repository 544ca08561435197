"""The fake CuPy's device arrays: NumPy arrays of a subclass that says "on the GPU".

Imports: NumPy and the standard library; ``_device`` for the current device.

``ndarray`` subclasses ``numpy.ndarray`` (its ``__module__`` is ``"cupy"``), so
``type(x) is cupy.ndarray`` tells device arrays from host ones exactly as with CuPy,
and every NumPy routine works on its memory.  What keeps the two worlds apart as CuPy
does:
- a NumPy ufunc or function given a device array runs on device arrays only (CuPy's
  ``__array_ufunc__``/``__array_function__``) and returns device arrays; a host
  ``numpy.ndarray`` among its arguments is a ``TypeError``, as in CuPy;
- results that NumPy returns as scalars (``x.sum()``, ``x[0]``) are 0-d device arrays,
  views where NumPy's indexing gives a view (``x[0]`` is ``x[0, ...]``), as in CuPy;
- ``empty`` fills new memory with 0xff bytes (NaN, -1), so a kernel that leaves output
  elements unwritten is caught, where device memory would hold whatever was there.
``wrap(fn)`` turns a NumPy function into its fake-CuPy counterpart under those rules.

What it cannot do: ``numpy.asarray(device_array)`` gives a host view without
complaint (CuPy raises); a subclass cannot intercept it.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _device

__all__ = ["HOST_OK", "ndarray", "alloc", "device_view", "host_view", "to_device", "wrap"]

_np_ndarray = np.ndarray


class MemoryPointer:
    """``x.data``: the address of a device array's first element (CuPy's MemoryPointer)."""

    __slots__ = ("device", "ptr")

    def __init__(self, ptr: int, device_id: int) -> None:
        self.ptr = ptr
        self.device = _device.Device(device_id)

    def copy_from_device(self, src: MemoryPointer, size: int) -> None:
        import ctypes

        ctypes.memmove(self.ptr, src.ptr, size)

    def __int__(self) -> int:
        return self.ptr


class ndarray(np.ndarray):  # noqa: N801 - CuPy's name
    """A device array: a NumPy array whose memory stands for one device's."""

    __module__ = "cupy"
    _device_id: int

    def __array_finalize__(self, obj: Any) -> None:
        self._device_id = getattr(obj, "_device_id", None)
        if self._device_id is None:
            self._device_id = _device.current()

    # -- CuPy's attributes ----------------------------------------------------------------
    @property
    def device(self) -> _device.Device:
        return _device.Device(self._device_id)

    @property
    def _c_contiguous(self) -> bool:
        return bool(self.flags.c_contiguous)

    @property
    def _f_contiguous(self) -> bool:
        return bool(self.flags.f_contiguous)

    @property
    def data(self) -> MemoryPointer:  # type: ignore[override]
        return MemoryPointer(self.__array_interface__["data"][0], self._device_id)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        iface = dict(self.__array_interface__)
        iface["version"] = 3
        iface["stream"] = 1
        if self.flags.c_contiguous:
            iface["strides"] = None
        return iface

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, self._device_id)  # kDLCUDA

    def get(self, stream: Any = None, order: str = "C", out: Any = None,
            blocking: bool = True) -> np.ndarray:  # fmt: skip
        """A host copy (into ``out`` if given; ``blocking=False``: once the stream syncs)."""
        host = np.array(self.view(_np_ndarray), order=order, copy=True)
        if out is None:
            if not blocking:
                raise ValueError("get(blocking=False) needs out=, as in CuPy")
            return host
        if type(out) is not _np_ndarray:
            raise TypeError(f"get(out=): a numpy.ndarray is needed, not {type(out).__name__}")
        if blocking:
            np.copyto(out, host)
        else:
            _device.enqueue(stream, lambda: np.copyto(out, host))
        return out

    def set(self, arr: Any, stream: Any = None) -> None:
        if isinstance(arr, ndarray) or not isinstance(arr, _np_ndarray):
            raise TypeError(f"set(): a numpy.ndarray is needed, not {type(arr).__name__}")
        if arr.shape != self.shape:
            raise ValueError(f"set(): shape mismatch: {arr.shape} vs {self.shape}")
        np.copyto(self.view(_np_ndarray), arr)

    def toDlpack(self) -> Any:  # noqa: N802 - CuPy's name
        return self.__dlpack__()

    # -- NumPy's protocols, with CuPy's rules -----------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        name = f"{ufunc.__name__}.{method}" if method != "__call__" else ufunc.__name__
        check_no_host(name, inputs)
        out = kwargs.get("out")
        if out is not None:
            check_no_host(name, out)
            kwargs["out"] = tuple(host_view(o) for o in out)
        result = getattr(ufunc, method)(*(host_view(x) for x in inputs), **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return to_device(result)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        check_no_host(func.__name__, args, kwargs)
        return to_device(func(*host_views(args), **host_views(kwargs)))

    def __array_wrap__(self, arr: Any, context: Any = None, return_scalar: bool = False) -> Any:
        if not isinstance(arr, ndarray):
            arr = arr.view(type(self))
        return arr

    def __getitem__(self, key: Any) -> Any:
        key = host_key(key)
        r = super().__getitem__(key)
        if isinstance(r, np.generic):  # an element: a 0-d view, as CuPy gives
            return super().__getitem__((*key, Ellipsis) if type(key) is tuple else (key, ...))
        return r

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(host_key(key), host_view(value))

    def __iter__(self) -> Any:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        return repr(self.view(_np_ndarray))


# Fresh device memory: 256-byte aligned as cudaMalloc's, filled with 0xff (NaN, -1).
_ALIGN = 256
_live = {"bytes": 0}


def _release(nbytes: int) -> None:
    _live["bytes"] -= nbytes


def alloc(shape: Any, dtype: Any = float, order: str = "C", fill: int | None = 0xFF) -> ndarray:
    dt = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, int | np.integer) else tuple(int(s) for s in shape)
    n = 1
    for s in shape:
        n *= s
    nbytes = n * dt.itemsize
    raw = np.empty(nbytes + _ALIGN, np.uint8)
    start = (-raw.ctypes.data) % _ALIGN
    buf = raw[start : start + nbytes]
    if fill is not None:
        buf.fill(fill)
    flat = buf.view(dt) if nbytes else np.empty(0, dt)
    arr = flat.reshape(shape, order=order).view(ndarray)  # type: ignore[call-overload]
    arr._device_id = _device.current()
    _live["bytes"] += nbytes
    weakref.finalize(raw, _release, nbytes)
    return arr


def used_bytes() -> int:
    return _live["bytes"]


# -- host/device conversion of arguments and results ---------------------------------------
def host_view(x: Any) -> Any:
    """A device array as a plain NumPy view (lists and tuples element-wise); else ``x``."""
    if isinstance(x, ndarray):
        return x.view(_np_ndarray)
    if type(x) is tuple or type(x) is list:
        return type(x)(host_view(v) for v in x)
    return x


def host_views(args: Any) -> Any:
    if type(args) is dict:
        return {k: host_view(v) for k, v in args.items()}
    return tuple(host_view(a) for a in args)


def host_key(key: Any) -> Any:
    if isinstance(key, ndarray):
        return key.view(_np_ndarray)
    if type(key) is tuple:
        return tuple(k.view(_np_ndarray) if isinstance(k, ndarray) else k for k in key)
    return key


def device_view(x: np.ndarray, device_id: int | None = None) -> ndarray:
    out = x.view(ndarray)
    out._device_id = _device.current() if device_id is None else device_id
    return out


def to_device(result: Any) -> Any:
    """NumPy results as device arrays: arrays viewed, scalars as 0-d arrays, containers
    element-wise (namedtuples keep their type); anything else unchanged."""
    t = type(result)
    if t is _np_ndarray:
        return device_view(result)
    if t is ndarray:
        return result
    if isinstance(result, np.generic):
        return device_view(np.asarray(result))
    if t is tuple or t is list:
        return t(to_device(r) for r in result)
    if isinstance(result, tuple) and hasattr(result, "_fields"):
        return t(*(to_device(r) for r in result))
    return result


def _host_arrays(x: Any, depth: int = 0) -> bool:
    if type(x) is _np_ndarray:
        return True
    if depth < 3 and (type(x) is tuple or type(x) is list):
        return any(_host_arrays(v, depth + 1) for v in x)
    if depth < 3 and type(x) is dict:
        return any(_host_arrays(v, depth + 1) for v in x.values())
    return False


def check_no_host(name: str, *groups: Any) -> None:
    """CuPy's refusal of host arrays: a TypeError naming the function."""
    for g in groups:
        if _host_arrays(g):
            raise TypeError(
                f"Unsupported type <class 'numpy.ndarray'> in cupy.{name}() (cudasim: CuPy "
                f"refuses host arrays; move them with cupy.asarray first)"
            )


# Functions that take host data (CuPy copies it to the device).
HOST_OK = frozenset({"array", "asarray", "asanyarray"})


def wrap(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn`` (NumPy's) as the fake CuPy's: host arrays refused, results on the device."""
    host_ok = name in HOST_OK

    @functools.wraps(fn)
    def cupy_function(*args: Any, **kwargs: Any) -> Any:
        if not host_ok:
            check_no_host(name, args, kwargs)
        return to_device(fn(*host_views(args), **host_views(kwargs)))

    cupy_function.__module__ = "cupy"
    return cupy_function


class ufunc:  # noqa: N801 - CuPy's name
    """A NumPy ufunc as CuPy's: called on device arrays, results on the device."""

    __module__ = "cupy"

    def __init__(self, np_ufunc: np.ufunc) -> None:
        self._ufunc = np_ufunc
        self.__name__ = np_ufunc.__name__
        self.nin, self.nout, self.nargs = np_ufunc.nin, np_ufunc.nout, np_ufunc.nargs
        self.types = np_ufunc.types
        self.identity = np_ufunc.identity

    def _run(self, method: str, args: Any, kwargs: Any) -> Any:
        check_no_host(self.__name__, args, kwargs)
        out = kwargs.get("out")
        result = getattr(self._ufunc, method)(*host_views(args), **host_views(kwargs))
        if out is not None:
            return out
        return to_device(result)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._run("__call__", args, kwargs)

    def reduce(self, *args: Any, **kwargs: Any) -> Any:
        return self._run("reduce", args, kwargs)

    def accumulate(self, *args: Any, **kwargs: Any) -> Any:
        return self._run("accumulate", args, kwargs)

    def outer(self, *args: Any, **kwargs: Any) -> Any:
        return self._run("outer", args, kwargs)

    def at(self, *args: Any, **kwargs: Any) -> None:
        self._run("at", args, kwargs)

    def __repr__(self) -> str:
        return f"<cudasim ufunc '{self.__name__}'>"

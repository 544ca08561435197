"""A stand-in for CuPy, backed by NumPy, whose raw kernels run on the CPU (tests/cudasim).

Installed only inside a pytest session started with ``-p tests.cudasim.plugin``, which
puts this folder first on ``sys.path``; never importable by the ordinary suite.
Device arrays are ``cupy.ndarray`` (``tests/cudasim/_array.py``), NumPy's functions are
wrapped to take and return them, and ``RawModule`` builds our ``.cu`` files as host C++
(``tests/cudasim/_modules.py``).  What this cannot stand in for is listed in
``tests/cudasim/__init__.py``.
"""

from __future__ import annotations

import ctypes as _ctypes
import types as _types
from typing import Any as _Any

import numpy as _np

from tests.cudasim import _array, _modules

__version__ = "14.0.0"  # what the backend and array_api_compat are written against

ndarray = _array.ndarray
ufunc = _array.ufunc
RawModule = _modules.RawModule
RawKernel = _modules.RawKernel


def _export_numpy() -> None:
    space = globals()
    for name in dir(_np):
        if name.startswith("_") or name in space:
            continue
        obj = getattr(_np, name)
        if isinstance(obj, _types.ModuleType):
            continue
        if isinstance(obj, _np.ufunc):
            space[name] = _array.ufunc(obj)
        elif isinstance(obj, type) or not callable(obj):
            space[name] = obj  # dtypes, finfo/iinfo, constants
        else:
            space[name] = _array.wrap(obj, name)


# -- functions that are not NumPy's with device arrays in and out -----------------------------
def asarray(a: _Any, dtype: _Any = None, order: _Any = None, *, blocking: bool = False) -> _Any:
    """A device array of ``a``: itself when it is one (cast if asked), else a device copy."""
    if isinstance(a, ndarray):
        return a if dtype is None or a.dtype == _np.dtype(dtype) else a.astype(dtype)
    cai = getattr(a, "__cuda_array_interface__", None)
    if cai is not None:
        out = _from_interface(a, cai)
        return out if dtype is None or out.dtype == _np.dtype(dtype) else out.astype(dtype)
    host = _np.asarray(a, dtype=dtype)
    if host.dtype == object:
        raise ValueError("Unsupported dtype object")
    # CuPy's default order is "K": a copy keeps the source's layout (a transposed NumPy
    # array stays non-C-contiguous on the device).
    out = _np.empty_like(host, order=order or "K")
    _np.copyto(out, host)
    return _array.device_view(out)


asanyarray = asarray


def array(obj: _Any, dtype: _Any = None, copy: bool = True, order: str = "K",
          subok: bool = False, ndmin: int = 0, *, blocking: bool = False) -> _Any:  # fmt: skip
    if isinstance(obj, ndarray):
        out = obj.astype(dtype or obj.dtype, copy=copy)
    else:
        out = asarray(obj, dtype=dtype)
    while out.ndim < ndmin:
        out = out[None]
    return out


def _from_interface(owner: _Any, cai: dict[str, _Any]) -> _Any:
    class _Holder:
        __array_interface__ = {k: cai[k] for k in ("shape", "typestr", "data", "strides", "descr")
                               if k in cai}  # fmt: skip
        __array_interface__["version"] = 3
        keep = owner

    view = _np.asarray(_Holder())
    return _array.device_view(view, getattr(owner, "_device_id", None))


def empty(shape: _Any, dtype: _Any = float, order: str = "C") -> _Any:
    return _array.alloc(shape, dtype, order)


def empty_like(a: _Any, dtype: _Any = None, order: str = "K", subok: _Any = None,
               shape: _Any = None) -> _Any:  # fmt: skip
    _array.check_no_host("empty_like", (a,))
    out = _np.empty_like(_array.host_view(a), dtype=dtype, order=order, shape=shape)
    _ctypes.memset(out.ctypes.data, 0xFF, out.nbytes)
    return _array.device_view(out)


def asnumpy(a: _Any, stream: _Any = None, order: str = "C", out: _Any = None, *,
            blocking: bool = True) -> _Any:  # fmt: skip
    if isinstance(a, ndarray):
        return a.get(stream=stream, order=order, out=out, blocking=blocking)
    return _np.asarray(a, order=order)


def from_dlpack(x: _Any, *, device: _Any = None, copy: _Any = None) -> _Any:
    """A device array sharing memory with a CUDA DLPack producer (this fake's own arrays,
    or tensors wrapping them); host producers are refused, as by CuPy."""
    if isinstance(x, ndarray):
        return x
    kind = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else None
    if kind != 2:
        raise RuntimeError(f"from_dlpack: not a CUDA array (DLPack device type {kind})")
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        return _from_interface(x, cai)

    class _AsHost:  # our capsules hold host memory: let NumPy read them
        def __dlpack__(self, **kw: _Any) -> _Any:
            return x.__dlpack__(**kw)

        def __dlpack_device__(self) -> tuple[int, int]:
            return (1, 0)

    return _array.device_view(_np.from_dlpack(_AsHost()))


def get_array_module(*args: _Any) -> _Any:
    import sys

    return sys.modules[__name__] if any(isinstance(a, ndarray) for a in args) else _np


def is_available() -> bool:
    return True


class _MemoryPool:
    def used_bytes(self) -> int:
        return _array.used_bytes()

    def total_bytes(self) -> int:
        return _array.used_bytes()

    def free_bytes(self) -> int:
        return 0

    def free_all_blocks(self, stream: _Any = None) -> None:
        pass

    def n_free_blocks(self) -> int:
        return 0

    def set_limit(self, size: _Any = None, fraction: _Any = None) -> None:
        pass


_POOL = _MemoryPool()
_PINNED_POOL = _MemoryPool()


def get_default_memory_pool() -> _MemoryPool:
    return _POOL


def get_default_pinned_memory_pool() -> _MemoryPool:
    return _PINNED_POOL


_export_numpy()

from . import cuda, fft, lib, linalg, random  # noqa: E402, F401  (they import this module)

__all__ = sorted(n for n in globals() if not n.startswith("_"))

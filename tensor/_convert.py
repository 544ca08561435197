"""Arrays on devices: Python data and NumPy/DLPack objects in, the array a Tensor wraps out.

Imports: NumPy and ``tensor._dtype``/``_device``/``_meta_array`` (not the Tensor class).

A tensor wraps a NumPy array on the CPU, a ``MetaArray`` (shape and dtype, no
data) on "meta", a CuPy array on CUDA, and its library's array on a plug-in device.
CUDA support is plugged in by ``backends.cuda`` through ``set_cuda_hooks`` when a GPU
is present, so this module never imports CuPy itself; a plug-in device brings its
conversions in its ``DeviceSpec`` (``add_plugin``).
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _dtype
from ._device import CPU, META, device
from ._dtype import dtype
from ._meta_array import MetaArray

__all__ = [
    "MetaArray",
    "add_plugin",
    "remove_plugin",
    "array_from_data",
    "cast_array",
    "cuda_from_dlpack",
    "data_ptr",
    "move_array",
    "set_cuda_hooks",
    "shares_memory",
    "to_numpy",
]


class _CudaHooks:
    # Filled in by backends.cuda when CUDA initialises (CuPy and a GPU are present):
    # to_device(array, index, np_dtype, copy, non_blocking) -> CuPy array on device index;
    # to_numpy(array, non_blocking) -> a host copy of a CuPy array.
    to_device: Callable[..., Any] | None = None
    to_numpy: Callable[..., np.ndarray] | None = None
    from_dlpack: Callable[[Any], Any] | None = None
    array_type: type | None = None


def set_cuda_hooks(
    to_device: Callable[..., Any],
    to_numpy: Callable[..., np.ndarray],
    array_type: type,
    from_dlpack: Callable[[Any], Any],
) -> None:
    """Let ``backends.cuda`` teach tensors to move arrays to and from CUDA devices."""
    _CudaHooks.to_device = to_device
    _CudaHooks.to_numpy = to_numpy
    _CudaHooks.array_type = array_type
    _CudaHooks.from_dlpack = from_dlpack


class _Plugins:
    # Plug-in devices (tensor.register_device): device type -> its DeviceSpec, array
    # type -> the same, and the device types whose views share memory with their base.
    by_name: dict[str, Any] = {}
    by_type: dict[type, Any] = {}
    shared_views: set[str] = set()


def add_plugin(spec: Any, views_share_memory: bool) -> None:
    """Teach tensors to move arrays to and from plug-in device ``spec``."""
    _Plugins.by_name[spec.name] = spec
    for t in spec.array_types:
        if t is not np.ndarray:  # a NumPy-backed device: NumPy arrays stay the CPU's
            _Plugins.by_type[t] = spec
    if views_share_memory:
        _Plugins.shared_views.add(spec.name)


def remove_plugin(name: str) -> None:
    spec = _Plugins.by_name.pop(name, None)
    _Plugins.shared_views.discard(name)
    if spec is not None:
        for t in spec.array_types:
            _Plugins.by_type.pop(t, None)


def _to_plugin(
    spec: Any, array: Any, target: device, np_dtype: Any, copy: bool, options: Any
) -> Any:
    """``array`` (of any device) as an array of plug-in device ``spec``.  An array of the
    device itself stays there (cast with the namespace's ``astype`` where it takes a
    NumPy dtype); anything else goes through the CPU."""
    if _Plugins.by_type.get(type(array)) is spec and not options:
        xp = spec.namespace
        try:
            if np_dtype is not None and array.dtype != np_dtype:
                return xp.astype(array, np_dtype)
            return xp.asarray(array, copy=True) if copy else array
        except (TypeError, ValueError, AttributeError):
            pass  # the namespace wants its own dtype objects: through the CPU
    host = to_numpy(array, op="to()")
    if np_dtype is not None and host.dtype != np_dtype:
        host = cast_array(host, np_dtype)
    try:
        return spec.device_array(host, target.index, **(options or {}))
    except TypeError as e:  # array_api_strict: "does not support the dtype 'float16'"
        if host.dtype.name in str(e) or "dtype" in str(e):
            raise NotImplementedError(
                f"device {spec.name!r} cannot hold {host.dtype.name} data: {e}. Use a dtype "
                f"its library has, or keep this tensor on the CPU."
            ) from e
        raise


def cuda_from_dlpack(obj: Any) -> Any:
    """A CuPy array sharing memory with a CUDA DLPack object."""
    if _CudaHooks.from_dlpack is None:
        raise _cuda_unavailable("from_dlpack()")
    return _CudaHooks.from_dlpack(obj)


def _cuda_unavailable(op: str) -> RuntimeError:
    return RuntimeError(
        f"{op}: CUDA is not available (CuPy or a GPU is missing), so no tensor can be "
        f"placed on a 'cuda' device. Use device='cpu', or check tt.cuda.is_available() first."
    )


def to_numpy(array: Any, *, op: str = "numpy()") -> np.ndarray:
    """The data of a tensor's array as a NumPy array (no copy on the CPU)."""
    if type(array) is np.ndarray:
        return array
    if type(array) is MetaArray:
        raise NotImplementedError(
            f"{op}: cannot read the data of a meta tensor; meta tensors have a shape and a "
            f"dtype but no data. Compute on a 'cpu' tensor to get values."
        )
    if _CudaHooks.to_numpy is not None and isinstance(array, _CudaHooks.array_type or ()):
        return _CudaHooks.to_numpy(array, False)
    spec = _Plugins.by_type.get(type(array))
    if spec is not None:
        return spec.cpu(array)  # dask: computes here
    return np.asarray(array)


def cast_array(array: Any, np_dtype: Any) -> Any:
    """``array.astype(np_dtype)`` (NumPy or CuPy) with PyTorch's float-to-unsigned rule.

    C++ leaves a negative float converted to an unsigned type undefined: x86 CPUs wrap
    (-1.0 -> 255), CUDA and Arm saturate (-> 0).  PyTorch goes through int64 for uint8
    (c10's ``static_cast_with_inter_type``) so every device wraps; so do we, for every
    unsigned dtype, and a complex source gives its real part.
    """
    kind = array.dtype.kind
    if kind in "fcV" and np.dtype(np_dtype).kind == "u":
        if kind == "c":
            array = array.real
        with np.errstate(invalid="ignore", over="ignore"):
            return array.astype(np.int64).astype(np_dtype)
    return array.astype(np_dtype)


def move_array(
    array: Any,
    target: device,
    np_dtype: Any = None,
    *,
    copy: bool = False,
    non_blocking: bool = False,
    options: dict[str, Any] | None = None,
) -> Any:
    """``array`` converted to ``np_dtype`` (if given) and placed on ``target``.

    Device-to-device moves and casts of CUDA arrays stay on the GPU; ``non_blocking``
    makes host/device copies asynchronous (pinned staging memory, see backends.cuda).
    ``options`` go to a plug-in device's ``from_cpu`` (dask's ``chunks``).
    """
    kind = target.type
    spec = _Plugins.by_name.get(kind)
    if spec is not None:
        return _to_plugin(spec, array, target, np_dtype, copy, options)
    if kind == "meta":
        return MetaArray(tuple(array.shape), np.dtype(np_dtype or array.dtype))
    cuda_array = _CudaHooks.array_type is not None and type(array) is _CudaHooks.array_type
    if kind == "cpu":
        if cuda_array:
            out = _CudaHooks.to_numpy(array, non_blocking)  # type: ignore[misc]
        else:
            out = to_numpy(array, op="to()")
        if np_dtype is not None and out.dtype != np_dtype:
            return cast_array(out, np_dtype)
        return out.copy() if copy and out is array else out
    if kind == "cuda":
        if _CudaHooks.to_device is None:
            raise _cuda_unavailable("to()")
        if type(array) is MetaArray:
            to_numpy(array, op="to()")  # raises the meta error
        return _CudaHooks.to_device(array, target.index or 0, np_dtype, copy, non_blocking)
    raise RuntimeError(f"to(): unknown device {target}")


_KIND_TO_DTYPE = {"b": _dtype.bool, "i": _dtype.int64, "u": _dtype.int64}


def _python_data_dtype(arr: np.ndarray) -> dtype:
    # Python data: ints are int64, floats the default dtype, complex the default complex.
    kind = arr.dtype.kind
    if kind == "f":
        return _dtype.get_default_dtype()
    if kind == "c":
        return _dtype.get_default_complex_dtype()
    found = _KIND_TO_DTYPE.get(kind)
    if found is None:
        raise TypeError(
            f"tensor(): could not infer a dtype from the data (NumPy made {arr.dtype}); "
            f"pass numbers, booleans or (nested) lists of them"
        )
    return found


def _ragged_message(data: Any) -> str:
    def walk(x: Any, depth: int) -> str | None:
        if not isinstance(x, (list, tuple)) or not x:
            return None
        lengths = [len(e) if isinstance(e, (list, tuple)) else None for e in x]
        first = lengths[0]
        for n in lengths[1:]:
            if n != first:
                return f"expected sequence of length {first} at dim {depth + 1} (got {n})"
        for e in x:
            msg = walk(e, depth + 1)
            if msg:
                return msg
        return None

    return walk(data, 0) or "the nested lists are not rectangular"


def array_from_data(
    data: Any,
    dtype: dtype | None,
    target: device,
    *,
    copy: bool = True,
    options: dict[str, Any] | None = None,
) -> tuple[Any, dtype]:
    """An array on ``target`` holding ``data`` (Python numbers, lists, arrays, tensors).
    ``options`` go to a plug-in device's ``from_cpu``."""
    inner = getattr(data, "_array", None)
    if inner is not None and hasattr(data, "_dtype"):  # a Tensor
        src_dtype = data._dtype
        out_dtype = src_dtype if dtype is None else dtype
        np_dtype = None if out_dtype is src_dtype else out_dtype.numpy_dtype
        return move_array(inner, target, np_dtype, copy=copy, options=options), out_dtype
    if options and target.type not in _Plugins.by_name:
        raise TypeError(
            f"tensor(): unexpected keyword argument(s) {', '.join(sorted(options))} for device "
            f"{target} (only a plug-in device's from_cpu takes options, e.g. dask's chunks=)"
        )
    if type(data) in _Plugins.by_type:  # an array of a plug-in device
        spec = _Plugins.by_type[type(data)]
        if target.type == spec.name:
            if dtype is not None:
                out_dtype = dtype
            else:
                try:  # dask's dtypes are NumPy's: no compute to learn it
                    out_dtype = _dtype.from_numpy(np.dtype(data.dtype))
                except TypeError:  # array_api_strict's are its own
                    out_dtype = _dtype.from_numpy(spec.cpu(data).dtype)
            return (
                move_array(data, target, out_dtype.numpy_dtype, copy=copy, options=options),
                out_dtype,
            )
    if isinstance(data, (np.ndarray, np.generic)):
        arr = np.asarray(data)
        out_dtype = _dtype.from_numpy(arr.dtype) if dtype is None else dtype
    elif isinstance(data, (builtins.bool, int, float, complex, list, tuple)):
        try:
            arr = np.array(data)
        except ValueError as e:
            raise ValueError(f"tensor(): {_ragged_message(data)}") from e
        except OverflowError as e:
            raise RuntimeError(f"tensor(): {e} (values must fit in int64)") from e
        if arr.dtype == object:
            raise ValueError(f"tensor(): {_ragged_message(data)}")
        out_dtype = _python_data_dtype(arr) if dtype is None else dtype
    elif hasattr(data, "__dlpack__") or hasattr(data, "__array__"):
        if _CudaHooks.array_type is not None and isinstance(data, _CudaHooks.array_type):
            if target.type == "cuda":  # a CuPy array to a CUDA tensor: stays on the GPU
                out_dtype = _dtype.from_numpy(data.dtype) if dtype is None else dtype
                moved = _CudaHooks.to_device(  # type: ignore[misc]
                    data, target.index or 0, out_dtype.numpy_dtype, copy, False
                )
                return moved, out_dtype
            arr = _CudaHooks.to_numpy(data, False)  # type: ignore[misc]
        else:
            arr = np.asarray(data)
        out_dtype = _dtype.from_numpy(arr.dtype) if dtype is None else dtype
    else:
        raise TypeError(
            f"tensor(): could not make a tensor from an object of type {type(data).__name__}; "
            f"pass a number, a (nested) list, a NumPy array or a tensor"
        )
    np_dtype = out_dtype.numpy_dtype
    if target is CPU:
        if arr.dtype != np_dtype:
            return _cast(arr, np_dtype), out_dtype
        if copy:
            return np.array(arr, copy=True, order="C"), out_dtype
        return arr, out_dtype
    if target is META:
        return MetaArray(arr.shape, np_dtype), out_dtype
    return move_array(arr, target, np_dtype, options=options), out_dtype


def _cast(arr: np.ndarray, np_dtype: np.dtype[Any]) -> np.ndarray:
    # Python ints out of a small int type's range wrap, as they do in C (and PyTorch).
    with np.errstate(over="ignore", invalid="ignore"):
        return arr.astype(np_dtype, order="C")


def shares_memory(a: Any, b: Any) -> bool:
    """Whether two arrays of one device may share data (a view and its base do)."""
    if type(a) is MetaArray:
        return type(b) is MetaArray and a._storage is b._storage
    if type(a) is np.ndarray:
        return type(b) is np.ndarray and builtins.bool(np.may_share_memory(a, b))
    spec = _Plugins.by_type.get(type(a))
    if spec is not None:  # a plug-in device's: through NumPy views of its memory, if it shares
        if a is b:
            return True
        if spec.name not in _Plugins.shared_views or type(b) is not type(a):
            return False
        return builtins.bool(np.may_share_memory(spec.cpu(a), spec.cpu(b)))
    # CuPy, like NumPy, answers from the arrays' memory bounds.
    import_name = type(a).__module__.partition(".")[0]
    module = sys.modules.get(import_name)
    return module is not None and builtins.bool(module.may_share_memory(a, b))


def data_ptr(array: Any) -> int:
    """The address of an array's first element (0 for meta arrays, as in PyTorch)."""
    if type(array) is MetaArray:
        return 0
    if type(array) is np.ndarray:
        return int(array.__array_interface__["data"][0])
    if type(array) in _Plugins.by_type:  # a plug-in device's array: no address to give
        return 0
    return int(array.data.ptr)  # CuPy

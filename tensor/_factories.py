"""Tensors from data: ``tt.tensor``, ``tt.as_tensor``, ``tt.from_numpy``, ``tt.from_dlpack``.

Imports: NumPy and ``tensor``'s ``_convert``, ``_device``,
``_dtype``, ``_tensor``.

These are plain Python, not operators (as in PyTorch, where ``torch.tensor`` is
not an ATen op): they turn foreign data into an array and wrap it.  The sized
factories (``zeros``, ``rand``, ...) are operators; see ``tensor._wrappers``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _convert, _dtype
from ._device import CPU, to_device
from ._tensor import Tensor, _canonical_device, make

__all__ = ["as_tensor", "from_dlpack", "from_numpy", "tensor"]


def tensor(
    data: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    **options: Any,
) -> Tensor:
    """A new tensor holding a copy of ``data`` (numbers, nested lists, arrays, tensors).

    Python floats become the default dtype, ints int64, bools bool; NumPy arrays keep
    their dtype (strided ones are copied contiguous).  ``options`` go to a plug-in
    device's ``from_cpu`` (``tt.tensor(data, device="dask", chunks=(1000, 1000))``).

    >>> import tensor as tt
    >>> tt.tensor([[1, 2], [3, 4]]).dtype
    tensor.int64
    >>> tt.tensor(2.5, device="meta")
    tensor(..., device='meta', size=())
    """
    dt = None if dtype is None else _dtype.to_dtype(dtype, op="tensor")
    dev = _canonical_device(to_device(device))
    array, dt = _convert.array_from_data(data, dt, dev, options=options or None)
    t = make(array, dt, dev)
    if requires_grad:
        t.requires_grad = True
    return t


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Like ``tensor``, but shares memory with ``data`` when no copy is needed."""
    dt = None if dtype is None else _dtype.to_dtype(dtype, op="as_tensor")
    dev = _canonical_device(to_device(device))
    if isinstance(data, Tensor):
        return data.to(device=dev if device is not None else None, dtype=dt)
    if isinstance(data, np.ndarray) and dev is CPU and (dt is None or data.dtype == dt.numpy_dtype):
        return make(data, _dtype.from_numpy(data.dtype), CPU)
    array, dt = _convert.array_from_data(data, dt, dev, copy=False)
    return make(array, dt, dev)


def from_numpy(array: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with a NumPy array.

    >>> import numpy as np, tensor as tt
    >>> a = np.zeros(2, dtype=np.float32); t = tt.from_numpy(a); a[0] = 5
    >>> t.tolist()
    [5.0, 0.0]
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy(): expected a NumPy array, got {type(array).__name__}")
    return make(array, _dtype.from_numpy(array.dtype), CPU)


# DLPack device types (dlpack.h): kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3.
_DLPACK_CPU = (1, 3)


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A tensor sharing memory with any DLPack-capable object (NumPy, CuPy, PyTorch ...).

    >>> import numpy as np, tensor as tt
    >>> tt.from_dlpack(np.arange(3)).tolist()
    [0, 1, 2]
    """
    if isinstance(ext_tensor, Tensor):
        # As PyTorch: a new tensor on the same memory (not a view: its own version counter),
        # and a tensor that requires grad is refused (BufferError: DLPack's export error).
        if ext_tensor.requires_grad:
            raise BufferError(
                "from_dlpack(): Can't export tensors that require gradient, use tensor.detach()"
            )
        array = ext_tensor._check_data("from_dlpack")  # a meta tensor has no memory to share
        return make(array.view(), ext_tensor.dtype, ext_tensor.device)
    if not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(
            f"from_dlpack(): expected an object with __dlpack__ (a NumPy, CuPy or PyTorch "
            f"array), got {type(ext_tensor).__name__}"
        )
    kind, index = ext_tensor.__dlpack_device__()
    if int(kind) in _DLPACK_CPU:
        array = np.from_dlpack(ext_tensor)
        return make(array, _dtype.from_numpy(array.dtype), CPU)
    if int(kind) == 2:
        dev = _canonical_device(to_device(f"cuda:{int(index)}"))  # initialises CUDA first
        array = _convert.cuda_from_dlpack(ext_tensor)
        return make(array, _dtype.from_numpy(array.dtype), dev)
    raise RuntimeError(
        f"from_dlpack(): unsupported DLPack device type {int(kind)}; tensors live on the CPU "
        f"(1) or CUDA devices (2)"
    )

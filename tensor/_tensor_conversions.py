"""Tensor's conversions: to other dtypes and devices, to Python numbers and lists, to
NumPy, DLPack, CUDA array interface and pickle.

Imports: NumPy, ``dispatch`` and ``tensor``'s ``_dtype``, ``_device``, ``_convert``,
``_repr``.  ``TensorConversions`` is a base class of ``tensor.Tensor`` holding only
methods (no fields: ``__slots__ = ()``), so ``tensor/_tensor.py`` keeps what a tensor
*is* (fields, construction, autograd state, views) and this module how it turns into
something else.  Every method here reads the fields ``_array``, ``_dtype`` and
``_device`` that ``Tensor`` declares.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatch import ops

from . import _convert, _dtype, _repr
from ._convert import MetaArray
from ._device import CPU, canonical, device, to_device
from ._dtype import dtype

if TYPE_CHECKING:
    from ._tensor import Tensor

__all__ = ["TensorConversions"]

builtins_bool = bool
builtins_float = float
builtins_int = int
_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")


class TensorConversions:
    """The conversion methods of ``Tensor`` (its base class; see the module docstring)."""

    __slots__ = ()
    _array: Any
    _device: device
    _dtype: dtype

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The data as a NumPy array, sharing memory on the CPU.

        Raises for CUDA tensors unless ``force=True`` (which copies), as PyTorch.
        """
        if self._device.type == "cuda" and not force:
            raise TypeError(
                "can't convert cuda tensor to numpy. Use Tensor.cpu() to copy the tensor to "
                "host memory first (or numpy(force=True))."
            )
        return _convert.to_numpy(self._array)

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """A tensor with another dtype and/or device; ``self`` when nothing changes.

        PyTorch's forms: ``to(dtype)``, ``to(device, dtype=None)``, ``to(other)``, each with
        ``non_blocking=`` and ``copy=`` keywords.

        >>> import tensor as tt
        >>> tt.tensor([1, 2]).to(tt.float64)
        tensor([1., 2.], dtype=tensor.float64)
        """
        if not kwargs and len(args) == 1 and args[0] is self._dtype:  # x.to(its own dtype)
            return self
        target_device, target_dtype, non_blocking, copy = _parse_to(self, args, kwargs)
        same_dtype = target_dtype is None or target_dtype is self._dtype
        same_device = target_device is None or target_device == self._device
        if same_dtype and same_device and not copy:
            return self
        return ops.core._to_copy.default(
            self,
            dtype=None if same_dtype else target_dtype,
            device=None if same_device else str(target_device),
            non_blocking=non_blocking,
        )

    def cpu(self) -> Tensor:
        return self.to(CPU)

    def cuda(self, device: int | str | None = None) -> Tensor:
        if device is None:
            return self.to("cuda")
        if isinstance(device, int):
            return self.to(f"cuda:{device}")
        return self.to(device)

    def type_as(self, other: Tensor) -> Tensor:
        return self.to(other._dtype)

    def float(self) -> Tensor:
        return self.to(_dtype.float32)

    def double(self) -> Tensor:
        return self.to(_dtype.float64)

    def half(self) -> Tensor:
        return self.to(_dtype.float16)

    def bfloat16(self) -> Tensor:
        return self.to(_dtype.bfloat16)

    def int(self) -> Tensor:
        return self.to(_dtype.int32)

    def long(self) -> Tensor:
        return self.to(_dtype.int64)

    def short(self) -> Tensor:
        return self.to(_dtype.int16)

    def char(self) -> Tensor:
        return self.to(_dtype.int8)

    def byte(self) -> Tensor:
        return self.to(_dtype.uint8)

    def bool(self) -> Tensor:
        return self.to(_dtype.bool)

    def cfloat(self) -> Tensor:
        return self.to(_dtype.complex64)

    def cdouble(self) -> Tensor:
        return self.to(_dtype.complex128)

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number.

        >>> import tensor as tt
        >>> tt.tensor([[2.5]]).item()
        2.5
        """
        array = self._array
        if array.size != 1:
            raise RuntimeError(
                f"item(): a Tensor with {array.size} elements cannot be converted to a Python "
                f"scalar; only one-element tensors can (use tolist() for all values)"
            )
        if type(array) is np.ndarray and array.dtype.kind in "biufc":  # NumPy's own number
            return array.item()
        return _convert.to_numpy(array, op="item()").reshape(()).item()

    def tolist(self) -> Any:
        """The data as (nested) Python lists of numbers; a number for a 0-d tensor."""
        return _convert.to_numpy(self._array, op="tolist()").tolist()

    def _scalar(self, what: str) -> Any:
        array = self._array
        if array.size != 1:
            raise RuntimeError(
                f"{what}: only one-element tensors can be converted to Python scalars "
                f"(this one has shape {tuple(array.shape)})"
            )
        return _convert.to_numpy(array, op=what).reshape(()).item()

    def __bool__(self) -> bool:
        if self._array.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with more than one value is ambiguous "
                f"(shape {tuple(self._array.shape)}); use .any() or .all()"
            )
        return builtins_bool(self._scalar("bool()"))

    def __float__(self) -> float:
        return builtins_float(self._scalar("float()"))

    def __int__(self) -> int:
        return builtins_int(self._scalar("int()").real)

    def __complex__(self) -> complex:
        return complex(self._scalar("complex()"))

    def __index__(self) -> int:
        if self._dtype.category > _dtype.INT:
            raise TypeError(
                f"only integer tensors of a single element can be converted to an index "
                f"(this one is {self._dtype})"
            )
        return builtins_int(self._scalar("__index__()"))

    def __format__(self, spec: str) -> str:
        if self._array.ndim == 0 and self._device.type != "meta":
            return format(self.item(), spec)
        return format(repr(self), spec)

    def __repr__(self) -> str:
        return _repr.tensor_repr(self)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if self._device.type != "cpu":
            raise TypeError(
                f"__array__: can't convert a {self._device.type} tensor to a NumPy array; "
                f"use Tensor.cpu() first"
            )
        array = self._array
        if dtype is not None and array.dtype != dtype:
            return array.astype(dtype)
        return array.copy() if copy else array

    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        """The standard's signature; the array's own ``__dlpack__`` gets what was given."""
        given = {"stream": stream, "max_version": max_version, "dl_device": dl_device, "copy": copy}
        kwargs = {k: v for k, v in given.items() if v is not None}
        return self._check_data("__dlpack__").__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._check_data("__dlpack_device__").__dlpack_device__()  # type: ignore[no-any-return]

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """CUDA tensors share their memory with CuPy, Numba, PyTorch... without a copy."""
        if self._device.type != "cuda":
            raise AttributeError(
                f"Can't get __cuda_array_interface__ on a {self._device.type} tensor; "
                f"move it to a CUDA device first (tensor.cuda())"
            )
        return self._array.__cuda_array_interface__  # type: ignore[no-any-return]

    # -- the Array API standard's array object (the namespace is ``tensor.array_api``) --

    def __array_namespace__(self, *, api_version: str | None = None) -> Any:
        """``tensor.array_api``: the standard's namespace (2025.12) over our operators."""
        if api_version is not None and api_version not in _API_VERSIONS:
            raise ValueError(
                f"__array_namespace__: api_version {api_version!r} is not supported; "
                f"this namespace implements {', '.join(_API_VERSIONS)}"
            )
        namespace = sys.modules.get("tensor.array_api")
        if namespace is None:  # Note [Lazy submodules] in tensor/__init__.py
            namespace = importlib.import_module("tensor.array_api")
        return namespace

    def to_device(self, device: Any, /, *, stream: Any = None) -> Tensor:
        """The standard's spelling of ``.to(device)`` (``stream`` is accepted and unused:
        copies run on the current stream)."""
        return self.to(device)

    def _check_data(self, what: str) -> Any:
        array = self._array
        if type(array) is MetaArray:
            _convert.to_numpy(array, op=what)
        return array

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        data = _convert.to_numpy(self._array, op="pickle")
        return (
            _rebuild,
            (type(self), data, self._dtype.name, str(self._device), self.requires_grad),
        )


def _rebuild(cls: type, data: np.ndarray, dtype_name: str, dev: str, requires_grad: bool) -> Tensor:
    t = cls(data, dtype=dtype_name, device=dev)
    t.requires_grad = requires_grad
    return t  # type: ignore[no-any-return]


_TO_KWARGS = ("device", "dtype", "non_blocking", "copy", "memory_format")


def _parse_to(
    self: Tensor, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[device | None, dtype | None, bool, bool]:
    # PyTorch's overloads: to(dtype, non_blocking, copy), to(device, dtype, non_blocking,
    # copy), to(other, non_blocking, copy); keywords may stand for any positional.
    for k in kwargs:
        if k not in _TO_KWARGS:
            raise TypeError(f"to() got an unexpected keyword argument '{k}'")
    dev = kwargs.get("device")
    dt = kwargs.get("dtype")
    rest: list[Any] = list(args)
    if rest:
        first = rest.pop(0)
        if isinstance(first, TensorConversions):  # a Tensor
            dev, dt = first._device, first._dtype
        elif isinstance(first, _dtype.dtype):
            dt = first
        elif isinstance(first, (str, device, int)) and not isinstance(first, bool):
            dev = first
            if rest and (isinstance(rest[0], (_dtype.dtype, str)) or rest[0] is None):
                dt = rest.pop(0)
        else:
            raise TypeError(
                f"to() received an invalid combination of arguments: the first argument must "
                f"be a dtype, a device or a tensor, got {type(first).__name__}"
            )
    non_blocking = kwargs.get("non_blocking", rest.pop(0) if rest else False)
    copy = kwargs.get("copy", rest.pop(0) if rest else False)
    if rest:
        raise TypeError(f"to() takes at most 4 positional arguments, got {len(args)}")
    target_device = None if dev is None else canonical(to_device(dev))
    target_dtype = None if dt is None else _dtype.to_dtype(dt, op="to")
    return target_device, target_dtype, builtins_bool(non_blocking), builtins_bool(copy)

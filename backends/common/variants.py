"""Kernels of the in-place and ``out=`` forms, made from the functional kernels, once.

Imports: NumPy (its array type, for the in-place overlap shortcut), ``dispatch`` (the schema
parser) and ``backends.common``.

``kernels(front, found, module)`` takes a backend's functional kernels
(``{"add.Tensor": kernel}``) and returns the kernels of every in-place and out row of
the operator table (``add_.Tensor``, ``add.out`` ...).  Each computes the functional result, then
writes it into the mutated tensor with PyTorch's checks:
- the result's dtype must be castable to the written tensor's (``can_cast``: no
  float into an int tensor, no complex into a real one, nothing but bool into
  bool), else "result type Float can't be cast to the desired output type Long";
- in place, the result must have ``self``'s shape (``self`` never broadcasts);
- an ``out`` tensor of another shape is resized, with PyTorch's warning when it
  held elements.
The write is ``array[...] = result`` (a no-op on meta arrays), so it reaches the
base of a view; the ADInplaceOrView kernels bump the version counters.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from types import FunctionType
from typing import Any

import numpy as np

from dispatch import parse_schema

from . import errors, fastpaths, overlap, shape_rules
from .elementwise import rename_all
from .frontend import FrontEnd
from .numbers import check_fill, wrapped

__all__ = ["assign", "kernels", "mutation_kernels", "write_into", "write_out"]

_ndarray = np.ndarray

_ELEMENTWISE = frozenset({"unary", "binary", "ternary"})


def write_into(front: FrontEnd, op: str, self: Any, result: Any, ns: Any = None) -> Any:
    """Write ``result`` into ``self`` (same shape), returning ``self``."""
    if result._dtype is not self._dtype and not front.can_cast(result._dtype, self._dtype):
        raise errors.cannot_cast(op, result._dtype, self._dtype)
    shape = self._array.shape
    if result._array.shape != shape:
        raise RuntimeError(
            f"{op}(): output with shape {list(shape)} doesn't match the broadcast shape "
            f"{list(result._array.shape)} (argument 'self' cannot be broadcast in place)"
        )
    assign(front, op, self._array, result._array, ns)
    return self


def write_out(front: FrontEnd, op: str, out: Any, result: Any, ns: Any = None) -> Any:
    """Write ``result`` into ``out``, resizing it as PyTorch does; returns ``out``."""
    if not isinstance(out, front.Tensor):
        raise TypeError(f"{op}(): argument 'out' must be a Tensor, not {type(out).__name__}")
    if out._device != result._device:
        raise RuntimeError(
            f"{op}(): Expected out tensor to have device {result._device}, but got "
            f"{out._device} instead (argument 'out')"
        )
    if result._dtype is not out._dtype and not front.can_cast(result._dtype, out._dtype):
        raise errors.cannot_cast(op, result._dtype, out._dtype, "out")
    array = out._array
    shape = result._array.shape
    if array.shape != shape:
        if array.size:
            warnings.warn(
                f"{op}(): An output with one or more elements was resized since it had shape "
                f"{list(array.shape)}, which does not match the required output shape "
                f"{list(shape)}. This behavior is deprecated; pass an out tensor of the right "
                f"shape, or an empty one (tt.empty(0)).",
                UserWarning,
                stacklevel=4,
            )
        value = result._array
        if result._dtype is not out._dtype:
            value = (
                value.astype(out._dtype.numpy_dtype) if ns is None else ns.astype(value, out._dtype)
            )
        out._array = value
        return out
    value = result._array
    if ns is not None and result._dtype is not out._dtype:  # the standard casts no values
        value = ns.astype(value, out._dtype)
    array[...] = value
    return out


def _inplace(
    front: FrontEnd,
    name: str,
    functional: Callable[..., Any],
    elementwise: bool = False,
    ns: Any = None,
) -> Callable[..., Any]:
    refuses_complex = name == "abs_"  # PyTorch: |z| written into z is refused, not cast
    direct = getattr(functional, "_in_place", None)  # Note [In-place fast path] (CPU)
    if direct is not None:
        return _direct_inplace(front, name, functional, *direct)

    def kernel(self: Any, *args: Any, **kwargs: Any) -> Any:
        if refuses_complex and self._dtype.is_complex:
            raise RuntimeError(f"{name}(): In-place abs is not supported for complex tensors.")
        if elementwise:
            _check_overlap(front, name, self, args, kwargs)
        return write_into(front, name, self, functional(self, *args, **kwargs), ns)

    # Note [Ternary in-place fast path] (backends/common/ternary.py): lerp_, addcmul_,
    # addcdiv_ written straight into self's array when the functional's fast path would
    # run (refusing partial overlaps itself): the functional offers the whole kernel,
    # which calls the general one above when it does not apply (one frame less a call).
    make_kernel = getattr(functional, "_in_place_kernel", None)
    if make_kernel is not None:
        kernel = make_kernel(kernel)
    kernel.__name__ = kernel.__qualname__ = name.replace(".", "_")
    return kernel


def _direct_inplace(
    front: FrontEnd,
    name: str,
    functional: Callable[..., Any],
    fn: Callable[[Any, Any], Any],
    min_kind: int,
    scaled_into: Callable[[Any, Any, Any], bool] | None = None,
) -> Callable[..., Any]:
    """``self op= other`` in place when both are tensors of one dtype the operator keeps
    (Note [In-place fast path] in backends/cpu/elementwise.py); else the general way."""
    tensor_type = front.Tensor
    # Note [Scaled in-place fast path]: ``p.add_(g, alpha=-lr)`` (torch.optim.SGD's
    # update) when ``alpha`` is a Python int or float (not a bool) and both tensors are
    # float32 or float64: the dtypes whose functional ``add`` computes in the dtype itself
    # (float16/bfloat16 compute in float32 and round once).  With ``scaled_into`` (the
    # CPU's BLAS axpy, Note [Fused add with alpha]) the product is added into ``p`` with
    # one rounding, as the functional kernel computes it; where axpy cannot take the
    # arrays, the general path (the functional, then the copy).  Without it, ``p += g *
    # alpha``, which rounds as the functional's ``xp.add(x, xp.multiply(y, alpha))`` then
    # copy: the product is a new array, so ``g`` overlapping ``p`` reads the old values,
    # as the copy does.  ~7 us less per call on a [64, 64] parameter than the general
    # path (ci/bench/autograd.py, SGD rows); axpy another ~5 us on [64, 64] float32.
    scaled = name in ("add_", "sub_")
    exact = (front.float32, front.float64)

    def kernel(self: Any, other: Any, **kwargs: Any) -> Any:
        if type(other) is tensor_type:  # Note [Overlapping writes], on both paths
            a, b = self._array, other._array
            # Two NumPy arrays that each own their memory share none: no call needed.
            if (
                type(a) is not _ndarray
                or type(b) is not _ndarray
                or a.base is not None
                or (b.base is not None)
            ):
                overlap.check_in_place(name, a, b)
        dt = self._dtype
        if type(other) is tensor_type and other._dtype is dt and fastpaths.ENABLED:
            if not kwargs or (
                type(kwargs.get("alpha")) is int and kwargs["alpha"] == 1 and len(kwargs) == 1
            ):
                if dt.category >= min_kind:
                    a = self._array
                    try:
                        result = fn(a, other._array)
                    except (ValueError, TypeError):
                        result = None  # the general path raises PyTorch's error
                    if result is a:
                        return self
            elif scaled and len(kwargs) == 1 and dt in exact:
                alpha = kwargs.get("alpha")
                if type(alpha) is float or type(alpha) is int:
                    a = self._array
                    if scaled_into is not None:
                        if scaled_into(a, other._array, alpha):
                            return self
                    else:
                        try:
                            result = fn(a, other._array * alpha)
                        except (ValueError, TypeError):
                            result = None  # the general path raises PyTorch's error
                        if result is a:
                            return self
        elif (
            (type(other) is float or type(other) is int)
            and not kwargs
            and self._dtype in exact
            and fastpaths.ENABLED
        ):
            # Note [Scalar in-place fast path]: ``v.mul_(beta2)``, ``denom.add_(eps)``
            # (Adam, SGD momentum): a float32/float64 tensor and a Python int or float,
            # which the Scalar kernel computes as ``fn(x, number)`` in the tensor's dtype
            # (NumPy's weak Python scalars: Note [Elementwise fast path]) before the copy
            # into ``self``; NumPy's in-place operator rounds the same and writes once.
            a = self._array
            try:
                result = fn(a, other)
            except (ValueError, TypeError):  # read-only (an expansion): PyTorch's error
                result = None
            if result is a:
                return self
        return write_into(front, name, self, functional(self, other, **kwargs))

    kernel.__name__ = kernel.__qualname__ = name.replace(".", "_")
    return kernel


def _check_overlap(
    front: FrontEnd, name: str, written: Any, args: Any, kwargs: dict[str, Any]
) -> None:
    # Note [Overlapping writes] (backends/common/overlap.py): elementwise operators only,
    # as PyTorch's TensorIterator.
    tensor_type = front.Tensor
    if not isinstance(written, tensor_type):
        return
    a = written._array
    for v in (*args, *kwargs.values()):
        if isinstance(v, tensor_type):
            overlap.check_in_place(name, a, v._array)


def _takes_device(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` has a ``device`` parameter: read off a plain function's code (what
    ``inspect.signature`` reads, ~25 us less a call, ~300 calls at import), else asked of
    ``inspect.signature``."""
    if type(fn) is not FunctionType or hasattr(fn, "__wrapped__") or hasattr(fn, "__signature__"):
        return "device" in inspect.signature(fn).parameters
    code = fn.__code__
    stars = bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return "device" in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount + stars]


def _out(
    front: FrontEnd,
    name: str,
    functional: Callable[..., Any],
    elementwise: bool = False,
    ns: Any = None,
) -> Callable[..., Any]:
    # A factory's out form makes its result on out's device unless told otherwise
    # (``zeros(2, 3, out=t)`` with ``t`` on CUDA), as in PyTorch.
    factory = _takes_device(functional)
    tensor_type = front.Tensor

    def kernel(*args: Any, out: Any, **kwargs: Any) -> Any:
        if not elementwise:
            if factory and kwargs.get("device") is None and isinstance(out, tensor_type):
                kwargs["device"] = out._device
            return write_out(front, name, out, functional(*args, **kwargs), ns)
        _check_overlap(front, name, out, args, kwargs)
        result = functional(*args, **kwargs)
        if (
            isinstance(out, tensor_type)
            and out._array.shape != result._array.shape
            and any(v is out for v in (*args, *kwargs.values()))
        ):
            # PyTorch's TensorIterator resizes an ``out`` of the wrong shape, unless it
            # is also an input (``add(x, y, out=x)`` where x broadcasts): then it refuses.
            raise RuntimeError(
                f"{name}(): output with shape {list(out._array.shape)} doesn't match the "
                f"broadcast shape {list(result._array.shape)}"
            )
        return write_out(front, name, out, result, ns)

    kernel.__name__ = kernel.__qualname__ = name.replace(".", "_")
    return kernel


def _named_outs(
    front: FrontEnd, name: str, functional: Callable[..., Any], names: list[str], ns: Any = None
) -> Callable[..., Any]:
    """The out form of an operator with several results (``sort.out(..., *, values,
    indices)``): each result written into its out tensor, which are returned."""

    def kernel(*args: Any, **kwargs: Any) -> Any:
        outs = [kwargs.pop(n) for n in names]
        results = functional(*args, **kwargs)
        return tuple(write_out(front, name, o, r, ns) for o, r in zip(outs, results, strict=True))

    kernel.__name__ = kernel.__qualname__ = name.replace(".", "_")
    return kernel


def _functional_name(variant: str, base: str, overloads: list[str]) -> str:
    """``add_.Scalar`` -> ``add.Scalar``; ``add.Scalar_out`` -> ``add.Scalar``; ``sum.out`` -> ``sum``."""
    name, _, overload = variant.partition(".")
    if name.endswith("_") and name[:-1] == base:
        return base if not overload else f"{base}.{overload}"
    if overload == "out":
        plain = [o for o in overloads if o in ("", "Tensor")]
        return base if not plain or plain[0] == "" else f"{base}.Tensor"
    return f"{base}.{overload.removesuffix('_out')}"


def kernels(front: FrontEnd, found: dict[str, Any], module: str, ns: Any = None) -> dict[str, Any]:
    """The in-place and out kernels of the table, from the functional ``found`` kernels
    (``ns``: a plug-in device's Namespace, for its arrays' dtypes).

    Variants whose functional kernel is not in ``found`` (a composite, or an op the
    backend lacks) are left out.
    """
    out: dict[str, Any] = {}
    for row in front.op_table:
        if row.family not in ("inplace", "out"):
            continue
        base = row.tags[0]
        overloads = [parse_schema(t).overload_name for t in front.op_info(base).schemas]
        for text in row.schemas:
            qualname = parse_schema(text).qualified_name
            if qualname in found:
                continue  # the backend has a direct kernel (index_put_, masked_fill_, ...)
            functional = found.get(_functional_name(qualname, base, overloads))
            if functional is None:
                continue
            maker = _inplace if row.family == "inplace" else _out
            writes = [a.name for a in parse_schema(text).arguments if a.is_write]
            if row.family == "out" and writes != ["out"]:
                out[qualname] = _named_outs(front, qualname.split(".")[0], functional, writes, ns)
                continue
            elementwise = front.op_info(base).family in _ELEMENTWISE
            out[qualname] = maker(front, qualname.split(".")[0], functional, elementwise, ns)
    return rename_all(out, module)


# -- the mutating primitives: zero_, fill_, copy_ ----------------------------------------------
_READ_ONLY = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


def assign(front: FrontEnd, op: str, x: Any, value: Any, ns: Any = None) -> None:
    """``x[...] = value`` with PyTorch's errors (expanded tensors are read-only arrays).

    ``ns``: a plug-in device's Namespace (Note [Array dtypes of a namespace] in
    ``elementwise``); NumPy and CuPy arrays are written with NumPy's spellings."""
    if not x.size:  # PyTorch writes into an empty tensor, even an expanded one
        return
    if ns is not None:
        if getattr(value, "dtype", None) is not None and value.dtype != x.dtype:
            value = ns.cast(value, x.dtype)  # the standard casts no values when writing
        elif type(value) in (int, float) and ns.kind_of(x.dtype) == "b":
            value = bool(value)  # the standard writes Python bools only into bool arrays
    elif (
        x.dtype.kind == "u"
        and getattr(value, "dtype", None) is not None
        and value.dtype.kind in "fcV"
    ):
        value = front.cast_array(value, x.dtype)  # floats into unsigned ints wrap everywhere
    try:
        x[...] = value
    except ValueError as e:
        if "read-only" in str(e):
            raise RuntimeError(f"{op}(): {_READ_ONLY}") from None
        raise
    except OverflowError as e:
        raise RuntimeError(
            f"{op}(): value cannot be converted to {x.dtype} without overflow ({e})"
        ) from None


def mutation_kernels(front: FrontEnd, meta: bool, ns: Any = None) -> dict[str, Any]:
    """``zero_``, ``fill_`` and ``copy_`` for a backend (``meta``: shapes and devices only;
    ``ns``: a plug-in device's Namespace)."""
    tensor_type = front.Tensor

    def zero_(self: Any) -> Any:
        if not meta:
            assign(front, "zero_", self._array, 0, ns)
        return self

    def fill_(self: Any, value: Any) -> Any:
        if isinstance(value, tensor_type):
            if value._array.ndim:
                raise RuntimeError(
                    f"fill_(): fill_ only supports 0-dimension value tensor but got tensor with "
                    f"{value._array.ndim} dimensions."
                )
            if meta:
                return self
            value = value.item()
        check_fill("fill_", value, self._dtype, "value", self._array.size)
        if not meta:
            assign(front, "fill_", self._array, wrapped(value, self._dtype), ns)
        return self

    def copy_(self: Any, src: Any, non_blocking: bool = False) -> Any:
        if not isinstance(src, tensor_type):
            raise TypeError(f"copy_(): argument 'src' must be a Tensor, not {type(src).__name__}")
        shape = tuple(self._array.shape)
        got = shape_rules.broadcast_shapes("copy_", shape, tuple(src._array.shape), ("self", "src"))
        if got != shape:
            raise RuntimeError(
                f"copy_(): output with shape {list(shape)} doesn't match the broadcast shape "
                f"{list(got)} (argument 'src' must broadcast to self)"
            )
        if meta:
            if self._device.type != "meta":
                raise NotImplementedError(
                    "copy_(): Cannot copy out of meta tensor; no data! (argument 'src' is a "
                    "meta tensor, self is not)"
                )
            return self
        value = src._array if src._device == self._device else src.to(self._device)._array
        assign(front, "copy_", self._array, value, ns)
        return self

    return {"zero_": zero_, "fill_.Scalar": fill_, "fill_.Tensor": fill_, "copy_": copy_}

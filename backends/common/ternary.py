"""Kernels of the three-operand elementwise operators (where, lerp, clamp, addcmul,
addcdiv), written once.

Imports: ``tensor`` and ``backends.common``.  Each factory takes the operator's
table row and a ``Namespace`` and returns ``{qualified overload name: kernel}``;
``meta_*`` functions give the result's (shape, dtype) for the Meta backend, and the
data kernels use them too, so both raise the same errors.
"""

from __future__ import annotations

from typing import Any

import tensor
from tensor import Tensor

from . import errors, fastpaths, shapes
from .elementwise import Namespace, rename
from .numbers import check_fits, overflows

__all__ = ["kernels", "result"]

_make = Tensor._make
_BOOL = tensor.bool
# A Python number's kind (tensor._dtype's BOOL, INT, FLOAT, COMPLEX): it keeps a
# tensor's dtype when its kind is not above the tensor's.
_NUMBER_KIND = {bool: 0, int: 1, float: 2, complex: 3}
# Half precision: where() stores its number unchecked (PyTorch 2.13: float16 and 1e6 is
# inf); addcmul/addcdiv compute in float32 (PyTorch's opmath type).
_HALF = frozenset({tensor.float16, tensor.bfloat16})


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(x._array.shape) if isinstance(x, Tensor) else ()


def _array(x: Any, cdt: tensor.dtype, xp: Any) -> Any:
    if isinstance(x, Tensor):
        return x._array if x._dtype is cdt else x._array.astype(cdt.numpy_dtype)
    return xp.asarray(x).astype(cdt.numpy_dtype)


def result(
    op: Any, *args: Any, value: Any = 1
) -> tuple[tuple[int, ...], tensor.dtype, tensor.dtype]:
    """(shape, compute dtype, result dtype) of a where/lerp/clamp/addcmul/addcdiv call, or
    PyTorch's error (``value`` is addcmul's and addcdiv's)."""
    name = op.name
    if name in _ADDC:
        return _addc_result(op, *args, value=value)
    if name == "where":
        condition, x, y = args
        if condition._dtype is not tensor.bool:
            raise errors.bad_dtype(
                "where",
                f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                f"{condition._dtype.name} (argument 'condition')",
            )
        dt = tensor.result_type(x, y)
        if dt not in _HALF:  # Note [Numbers that overflow]; PyTorch: not half
            check_fits("where", x, dt, "self")
            check_fits("where", y, dt, "other")
        named = [("condition", _shape(condition)), ("self", _shape(x)), ("other", _shape(y))]
    elif name == "lerp":
        x, end, weight = args
        for arg, value in (("end", end), ("weight", weight)):
            if isinstance(value, Tensor) and value._dtype is not x._dtype and value._array.ndim:
                raise errors.bad_dtype(
                    "lerp",
                    f"expected dtype {x._dtype.name} for `{arg}` but got dtype {value._dtype.name}",
                )
        dt = x._dtype
        named = [("self", _shape(x)), ("end", _shape(end)), ("weight", _shape(weight))]
    else:  # clamp
        x, lo, hi = args
        if lo is None and hi is None:
            raise RuntimeError("clamp(): At least one of 'min' or 'max' must not be None")
        dt = tensor.result_type(x, *(v for v in (lo, hi) if v is not None))
        check_fits("clamp", lo, dt, "min")  # Note [Numbers that overflow]
        check_fits("clamp", hi, dt, "max")
        named = [("self", _shape(x))] + [
            (arg, _shape(v)) for arg, v in (("min", lo), ("max", hi)) if v is not None
        ]
    entry = op.result_dtypes.get(dt)
    if entry is None:
        raise errors.unsupported_dtype(name, dt)
    return shapes.broadcast_all(name, named), entry[0], entry[1]


_ADDC = frozenset({"addcmul", "addcdiv"})
# PyTorch: "Integer division with addcdiv is no longer supported, ..." (two spaces included).
_ADDCDIV_INTEGER = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can "
    "be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
    "for all dtypes."
)


def _addc_result(
    op: Any, x: Any, t1: Any, t2: Any, *, value: Any
) -> tuple[tuple[int, ...], tensor.dtype, tensor.dtype]:
    """addcmul/addcdiv (PyTorch 2.13): the three tensors promote together, ``value`` does
    not take part; addcdiv refuses two integral (or bool) divisor operands; ``value`` must
    fit the dtype it is computed in (float32 for float16/bfloat16: PyTorch's opmath type),
    where PyTorch checks it (Note [Numbers that overflow])."""
    name = op.name
    if (
        name == "addcdiv"
        and isinstance(t1, Tensor)
        and isinstance(t2, Tensor)
        and t1._dtype.kind <= 1
        and t2._dtype.kind <= 1
    ):
        raise RuntimeError(f"addcdiv(): {_ADDCDIV_INTEGER}")
    dt = tensor.result_type(x, t1, t2)
    entry = op.result_dtypes.get(dt)
    if entry is None:
        raise errors.unsupported_dtype(name, dt)
    cdt = tensor.float32 if dt in _HALF else entry[0]
    check_fits(name, value, cdt, "value")
    named = [("self", _shape(x)), ("tensor1", _shape(t1)), ("tensor2", _shape(t2))]
    return shapes.broadcast_all(name, named), cdt, entry[1]


def _device(*args: Any) -> Any:
    # The device of the first dimensioned tensor (a 0-d CPU tensor may join any device).
    for a in args:
        if isinstance(a, Tensor) and a._array.ndim:
            return a._device
    for a in args:
        if isinstance(a, Tensor):
            return a._device
    return tensor.device("cpu")


def kernels(op: Any, ns: Namespace) -> dict[str, Any]:
    """Data kernels of ``where``, ``lerp``, ``clamp``, ``addcmul`` or ``addcdiv`` for the
    namespace of ``ns``."""
    xp, finish = ns.xp, ns.finish

    if op.name == "where":
        direct = {d for d, (c, o) in op.result_dtypes.items() if c is d and o is d}
        ndarray = ns.ndarray
        # NumPy's where past its __array_function__ dispatcher (~0.1 us): the fast path
        # has checked that every array is the backend's own.
        where_fn = getattr(ns.lib.where, "_implementation", ns.lib.where)

        def where(condition: Any, self: Any, other: Any) -> Any:
            # Fast path (autograd's masks: relu's backward is ``where(out > 0, grad, 0)``):
            # a bool condition, ``self`` on its device, and ``other`` a number that leaves
            # ``self``'s dtype alone or a tensor of ``self``'s dtype and device.  Shapes
            # broadcast as in the general path; shapes that do not (the library's
            # ValueError) go the general way, which raises PyTorch's error.
            if (
                type(condition) is Tensor
                and type(self) is Tensor
                and condition._dtype is _BOOL
                and fastpaths.ENABLED
            ):
                dt, dev = self._dtype, self._device
                if dt in direct and condition._device is dev:
                    c, a = condition._array, self._array
                    out = None
                    try:
                        if type(other) is Tensor:
                            if other._dtype is dt and other._device is dev:
                                out = where_fn(c, a, other._array)
                        else:
                            kind = _NUMBER_KIND.get(type(other))
                            if (
                                kind is not None
                                and kind <= dt.kind
                                and (dt in _HALF or not overflows(other, dt))
                            ):
                                out = where_fn(c, a, other)
                    except (OverflowError, ValueError):  # int8 and 1000, shapes
                        out = None
                    if out is not None and type(out) is ndarray and out.dtype == a.dtype:
                        return _make(out, dt, dev)
            _, cdt, odt = result(op, condition, self, other)
            c = condition._array
            out = xp.where(c, _array(self, cdt, xp), _array(other, cdt, xp))
            return _make(finish(out, odt), odt, _device(condition, self, other))

        rename(where, "where", ns)
        return {f"where.{ov}": where for ov in ("self", "ScalarOther", "ScalarSelf", "Scalar")}

    if op.name == "lerp":

        def lerp(self: Any, end: Any, weight: Any) -> Any:
            _, cdt, odt = result(op, self, end, weight)
            x, e = _array(self, cdt, xp), _array(end, cdt, xp)
            w = _array(weight, cdt, xp)
            diff = e - x
            # PyTorch's formula: exact at both ends of [0, 1].
            out = xp.where(xp.abs(w) < 0.5, x + w * diff, e - diff * (1 - w))
            return _make(finish(out, odt), odt, _device(self, end, weight))

        rename(lerp, "lerp", ns)
        return {"lerp.Scalar": lerp, "lerp.Tensor": lerp}

    if op.name in _ADDC:
        divide = op.name == "addcdiv"

        def addc(self: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
            _, cdt, odt = result(op, self, tensor1, tensor2, value=value)
            x, a, b = _array(self, cdt, xp), _array(tensor1, cdt, xp), _array(tensor2, cdt, xp)
            # PyTorch's order: self + value * tensor1 * tensor2 (or / tensor2), with value
            # converted to the compute dtype first (2.5 is 2 for integers).
            v = _array(value, cdt, xp)
            out = x + (v * a / b if divide else v * a * b)
            return _make(finish(out, odt), odt, _device(self, tensor1, tensor2))

        rename(addc, op.name, ns)
        return {op.name: addc}

    def clamp(self: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A002
        _, cdt, odt = result(op, self, min, max)
        out = _array(self, cdt, xp)
        if min is not None:
            out = xp.maximum(out, _array(min, cdt, xp))
        if max is not None:
            out = xp.minimum(out, _array(max, cdt, xp))
        return _make(finish(out, odt), odt, _device(self, min, max))

    rename(clamp, "clamp", ns)
    return {"clamp": clamp, "clamp.Tensor": clamp}

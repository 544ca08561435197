"""Kernels of the three-operand elementwise operators (where, lerp, clamp, addcmul,
addcdiv), written once.

Imports: ``backends.common``.  ``kernels`` takes the operator's table row and a
``Namespace`` and returns ``{qualified overload name: kernel}``; ``result`` gives the
result's shape and dtypes for the Meta backend, and the data kernels use it too, so
both raise the same errors.
"""

from __future__ import annotations

from math import copysign
from typing import Any

import numpy as _numpy

from . import errors, fastpaths, overlap, shape_rules
from .elementwise import Namespace, rename
from .frontend import FrontEnd
from .numbers import NUMBER_KIND as _NUMBER_KIND
from .numbers import check_fits, limits, overflows

__all__ = ["kernels", "result"]


def _shape(front: FrontEnd, x: Any) -> tuple[int, ...]:
    return tuple(x._array.shape) if isinstance(x, front.Tensor) else ()


def _array(front: FrontEnd, x: Any, cdt: Any, ns: Any) -> Any:
    if isinstance(x, front.Tensor):
        return x._array if x._dtype is cdt else ns.astype(x._array, cdt)
    return ns.astype(ns.xp.asarray(x), cdt)


def result(
    front: FrontEnd, op: Any, *args: Any, value: Any = 1
) -> tuple[tuple[int, ...], Any, Any]:
    """(shape, compute dtype, result dtype) of a where/lerp/clamp/addcmul/addcdiv call, or
    PyTorch's error (``value`` is addcmul's and addcdiv's)."""
    name = op.name
    if name in _ADDC:
        return _addc_result(front, op, *args, value=value)
    if name == "where":
        condition, x, y = args
        if condition._dtype is not front.bool:
            raise errors.bad_dtype(
                "where",
                f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                f"{condition._dtype.name} (argument 'condition')",
            )
        dt = front.result_type(x, y)
        # Note [Numbers that overflow]; PyTorch 2.13 stores a number into half precision
        # unchecked (float16 and 1e6 is inf).
        if dt is not front.float16 and dt is not front.bfloat16:
            check_fits("where", x, dt, "self")
            check_fits("where", y, dt, "other")
        named = [
            ("condition", _shape(front, condition)),
            ("self", _shape(front, x)),
            ("other", _shape(front, y)),
        ]
    elif name == "lerp":
        x, end, weight = args
        for arg, value in (("end", end), ("weight", weight)):
            if (
                isinstance(value, front.Tensor)
                and value._dtype is not x._dtype
                and value._array.ndim
            ):
                raise errors.bad_dtype(
                    "lerp",
                    f"expected dtype {x._dtype.name} for `{arg}` but got dtype {value._dtype.name}",
                )
        dt = x._dtype
        named = [
            ("self", _shape(front, x)),
            ("end", _shape(front, end)),
            ("weight", _shape(front, weight)),
        ]
    else:  # clamp
        x, lo, hi = args
        if lo is None and hi is None:
            raise RuntimeError("clamp(): At least one of 'min' or 'max' must not be None")
        dt = front.result_type(x, *(v for v in (lo, hi) if v is not None))
        check_fits("clamp", lo, dt, "min")  # Note [Numbers that overflow]
        check_fits("clamp", hi, dt, "max")
        named = [("self", _shape(front, x))] + [
            (arg, _shape(front, v)) for arg, v in (("min", lo), ("max", hi)) if v is not None
        ]
    entry = op.result_dtypes.get(dt)
    if entry is None:
        raise errors.unsupported_dtype(name, dt)
    return shape_rules.broadcast_all(name, named), entry[0], entry[1]


_ADDC = frozenset({"addcmul", "addcdiv"})
_add, _subtract = _numpy.add, _numpy.subtract
_multiply, _divide = _numpy.multiply, _numpy.true_divide
# Note [Fused lerp]: weights past this keep the two-step formula (their rounding to the
# dtype may overflow; nobody interpolates that far).
_FUSED_LERP_BOUND = 1e30
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
    front: FrontEnd, op: Any, x: Any, t1: Any, t2: Any, *, value: Any
) -> tuple[tuple[int, ...], Any, Any]:
    """addcmul/addcdiv (PyTorch 2.13): the three tensors promote together, ``value`` does
    not take part; addcdiv refuses two integral (or bool) divisor operands; ``value`` must
    fit the dtype it is computed in (float32 for float16/bfloat16: PyTorch's opmath type),
    where PyTorch checks it (Note [Numbers that overflow])."""
    name = op.name
    if (
        name == "addcdiv"
        and isinstance(t1, front.Tensor)
        and isinstance(t2, front.Tensor)
        and t1._dtype.category <= 1
        and t2._dtype.category <= 1
    ):
        raise RuntimeError(f"addcdiv(): {_ADDCDIV_INTEGER}")
    dt = front.result_type(x, t1, t2)
    entry = op.result_dtypes.get(dt)
    if entry is None:
        raise errors.unsupported_dtype(name, dt)
    half = dt is front.float16 or dt is front.bfloat16  # computed in float32: PyTorch's opmath
    cdt = front.float32 if half else entry[0]
    check_fits(name, value, cdt, "value")
    named = [
        ("self", _shape(front, x)),
        ("tensor1", _shape(front, t1)),
        ("tensor2", _shape(front, t2)),
    ]
    return shape_rules.broadcast_all(name, named), cdt, entry[1]


def _device(front: FrontEnd, *args: Any) -> Any:
    # The device of the first dimensioned tensor (a 0-d CPU tensor may join any device).
    for a in args:
        if isinstance(a, front.Tensor) and a._array.ndim:
            return a._device
    for a in args:
        if isinstance(a, front.Tensor):
            return a._device
    return front.device("cpu")


# Note [Optimizer fast paths]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch.optim.Adam's single-tensor update calls lerp_, addcmul_ and addcdiv_ on every
# parameter every step.  When the tensors share one floating dtype that the operator
# computes in itself (float32, float64, complex: not half precision, whose products
# compute in float32) and one device object, and the weight or ``value`` is a Python
# int or float, the kernels run the general path's arithmetic directly: the number cast
# to the dtype as ``_array`` casts it, the same operations in the same order, without
# the promotion, shape and device checks (NumPy's broadcasting is PyTorch's; shapes it
# refuses, and 0-d results, go the general way).  tests/backends/test_fastpath_optim.py.
#
# Note [Ternary in-place fast path]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Their in-place forms (the optimizer's actual calls) are the functional result copied
# into ``self`` (``backends.common.variants``).  On NumPy arrays, when the fast path above
# would run and the operands have ``self``'s shape, ``self`` writable: the same
# operations in the same order, the temporaries reused, the last one written into
# ``self``'s array (``x += tmp``; lerp's second branch ``subtract(e, diff, out=x)``), every
# operand read before the write, so an operand that is ``self`` gives the general
# answer.  Partial overlaps are refused first, as on the general path: the in-place
# kernel tries this before its own overlap check, so each fast function checks its
# operands itself, through ``overlap.check_in_place`` only when one of the arrays does not
# own its memory (arrays that each own theirs cannot share any: Note [Overlapping
# writes]).  ``value``'s range check (Note [Numbers that overflow]) runs only for a number
# outside the dtype's finite range.  Adam's updates: 16-19 us -> 11-14 us on a [64, 64]
# parameter, then ~3 us less each for the checks; the same property tests, in place.
def _direct_dtypes(op: Any, half: frozenset[Any]) -> frozenset[Any]:
    """Floating dtypes the operator computes in and returns unchanged."""
    return frozenset(
        d
        for d, (c, o) in op.result_dtypes.items()
        if c is d and o is d and d not in half and d.category >= 2
    )


# Note [Masking by bits]
# ~~~~~~~~~~~~~~~~~~~~~~
# ``where(mask, x, 0)`` and ``where(mask, 0, x)`` are how relu's backward (PyTorch's
# threshold_backward, ``where(out <= 0, 0, g)``: a NaN output passes its gradient) and
# masks in user code keep some elements and zero the rest.  NumPy's where branches on every
# element, and on a mask of no pattern (relu's, on random data) the mispredictions make
# it 5-7x slower than arithmetic (94 us for 64x256 float32; ci/bench/autograd.py's
# larger step).  Multiplying by the mask is not the same (a NaN or inf times 0 is NaN),
# but ANDing each element's bits with the mask widened to all-ones or all-zeros is:
# kept elements keep their exact bits (NaN payloads, -0.0), the others become +0.0 (the
# number 0), as where gives (``where(mask, 0, x)``: the mask minus 1, all-ones where it
# is False).  Taken for ``other`` (or ``self``) the number 0, or 0.0 (not -0.0) with a
# floating array (0.0 promotes an integer one), dtypes of 2, 4 or 8 bytes on NumPy, and
# a C-contiguous mask and array of one shape (so the result is C-contiguous, as where's;
# broadcasting would also be right); everything else calls where.  Planted bugs in the
# sign, kind and number checks fail tests/backends/test_fastpath_elementwise.py.
def _mask_zero_dtypes(ns: Namespace) -> dict[Any, Any] | None:
    """{array dtype: unsigned dtype of its width} where the backend's arrays are NumPy's."""
    if ns.ndarray is not _numpy.ndarray:
        return None
    out: dict[Any, Any] = {}
    for name in ("float16", "float32", "float64", "int16", "int32", "int64"):
        dt = _numpy.dtype(name)
        out[dt] = _numpy.dtype(f"uint{dt.itemsize * 8}")
    try:
        import ml_dtypes

        out[_numpy.dtype(ml_dtypes.bfloat16)] = _numpy.dtype("uint16")
    except ImportError:  # pragma: no cover - ml_dtypes is a dependency
        pass
    return out


def _signbit(x: float) -> bool:
    return copysign(1.0, x) < 0


def mask_zero_fn(mask: Any, x: Any, unsigned: Any) -> Any:
    """``where(mask, x, 0)`` for NumPy arrays of one shape (Note [Masking by bits])."""
    bits = mask.view(_numpy.uint8).astype(unsigned)  # widened first, then negated in
    _numpy.negative(bits, out=bits)  # place: 1 -> all ones (~0.3-0.8 us less than dtype=)
    bits &= x.view(unsigned)
    return bits.view(x.dtype)


def zero_mask_fn(mask: Any, x: Any, unsigned: Any) -> Any:
    """``where(mask, 0, x)`` for NumPy arrays of one shape (Note [Masking by bits]): relu's
    backward, ``where(out <= 0, 0, g)``."""
    bits = mask.view(_numpy.uint8).astype(unsigned)  # widened, then 1 taken in place:
    bits -= 1  # 0 -> all ones, wrapping (~0.4-1 us less than subtract's dtype=)
    bits &= x.view(unsigned)
    return bits.view(x.dtype)


def _is_zero(number: Any, dt: Any) -> bool:
    """Whether ``number`` is the number 0 as where's fast paths take it: an int 0, or a
    float 0.0 (not -0.0) for a floating dtype ``dt``."""
    return number == 0 and (
        type(number) is int or (type(number) is float and dt.category >= 2 and not _signbit(number))
    )


def kernels(op: Any, ns: Namespace) -> dict[str, Any]:
    """Data kernels of ``where``, ``lerp``, ``clamp``, ``addcmul`` or ``addcdiv`` for the
    namespace of ``ns``."""
    xp, finish = ns.xp, ns.finish
    front = ns.front
    make, tensor_type, bool_ = front.make, front.Tensor, front.bool
    half = frozenset({front.float16, front.bfloat16})  # where() stores numbers unchecked
    ndarray = ns.ndarray

    if op.name == "where":
        direct = {d for d, (c, o) in op.result_dtypes.items() if c is d and o is d}
        # NumPy's where past its __array_function__ dispatcher (~0.1 us): the fast path
        # has checked that every array is the backend's own.
        where_fn = getattr(ns.lib.where, "_implementation", ns.lib.where)
        mask_zero = _mask_zero_dtypes(ns)

        def where(condition: Any, self: Any, other: Any) -> Any:
            # The mirror of the masking below: ``where(mask, 0, x)`` (relu's backward,
            # ``where(out <= 0, 0, grad)``), the same conditions with the two swapped.
            if (
                type(other) is tensor_type
                and type(condition) is tensor_type
                and (type(self) is int or type(self) is float)
                and condition._dtype is bool_
                and fastpaths.ENABLED
                and mask_zero is not None
            ):
                dt, dev = other._dtype, other._device
                c, a = condition._array, other._array
                if (
                    dt in direct
                    and condition._device is dev
                    and _is_zero(self, dt)
                    and (unsigned := mask_zero.get(a.dtype)) is not None
                    and c.shape == a.shape
                    and c.flags.c_contiguous
                    and a.flags.c_contiguous
                ):
                    return make(zero_mask_fn(c, a, unsigned), dt, dev)
            # Fast path (autograd's masks, ``where(mask, grad, 0)``):
            # a bool condition, ``self`` on its device, and ``other`` a number that leaves
            # ``self``'s dtype alone or a tensor of ``self``'s dtype and device.  Shapes
            # broadcast as in the general path; shapes that do not (the library's
            # ValueError) go the general way, which raises PyTorch's error.
            if (
                type(condition) is tensor_type
                and type(self) is tensor_type
                and condition._dtype is bool_
                and fastpaths.ENABLED
            ):
                dt, dev = self._dtype, self._device
                if dt in direct and condition._device is dev:
                    c, a = condition._array, self._array
                    out = None
                    try:
                        if type(other) is tensor_type:
                            if other._dtype is dt and other._device is dev:
                                out = where_fn(c, a, other._array)
                        elif (
                            _is_zero(other, dt)
                            and mask_zero is not None
                            and (unsigned := mask_zero.get(a.dtype)) is not None
                            and c.shape == a.shape
                            and c.flags.c_contiguous
                            and a.flags.c_contiguous
                        ):
                            out = mask_zero_fn(c, a, unsigned)
                        else:
                            kind = _NUMBER_KIND.get(type(other))
                            if (
                                kind is not None
                                and kind <= dt.category
                                and (dt in half or not overflows(other, dt))
                            ):
                                out = where_fn(c, a, other)
                    except (OverflowError, ValueError):  # int8 and 1000, shapes
                        out = None
                    if out is not None and type(out) is ndarray and out.dtype == a.dtype:
                        return make(out, dt, dev)
            _, cdt, odt = result(front, op, condition, self, other)
            c = condition._array
            out = xp.where(c, _array(front, self, cdt, ns), _array(front, other, cdt, ns))
            return make(finish(out, odt), odt, _device(front, condition, self, other))

        rename(where, "where", ns)
        return {f"where.{ov}": where for ov in ("self", "ScalarOther", "ScalarSelf", "Scalar")}

    if op.name == "lerp":
        lerp_direct = _direct_dtypes(op, half)
        fused_add, axpy, axpy_checked = ns.fused_add, ns.axpy, ns.axpy_checked

        def fused_lerp(x: Any, e: Any, w: Any) -> Any:
            """Note [Fused lerp]: PyTorch's lerp with a number weight ``w`` (rounded to
            the arrays' dtype) is ``fma(w, e - x, x)`` for ``|w| < 0.5`` and ``fma(w - 1,
            e - x, e)`` otherwise (ATen's vectorized ``lerp_vec``): the product is not
            rounded.  The backend's ``fused_add`` (callers check it has one) computes
            that; None: it cannot, and the caller keeps the two-step formula."""
            if not abs(w) < _FUSED_LERP_BOUND:
                return None
            try:
                diff = e - x
            except ValueError:  # shapes that do not broadcast: the general path says why
                return None
            if abs(w) < 0.5:
                return fused_add(x, diff, w)
            return fused_add(e, diff, w - 1)

        def lerp_fast(self: Any, end: Any, weight: Any) -> bool:
            """Note [Optimizer fast paths]' guard for lerp."""
            dt = self._dtype
            return (
                dt in lerp_direct
                and fastpaths.ENABLED
                and type(end) is tensor_type
                and end._dtype is dt
                and end._device is self._device
                and (type(weight) is float or type(weight) is int)
            )

        def lerp(self: Any, end: Any, weight: Any) -> Any:
            # Note [Optimizer fast paths]: Adam's ``m.lerp_(g, 1 - beta1)``.
            dt = self._dtype
            if lerp_fast(self, end, weight):
                x, e = self._array, end._array
                if fused_add is not None:
                    out = fused_lerp(x, e, dt.numpy_dtype.type(weight))
                    if out is not None:
                        return make(out, dt, self._device)
                w = ns.astype(xp.asarray(weight), dt)
                try:  # the general path's formula, its branch chosen once for one weight
                    diff = e - x
                    out = x + w * diff if abs(w) < 0.5 else e + (w - 1) * diff
                except ValueError:  # shapes: the general path says why
                    out = None
                if type(out) is ndarray:  # 0-d results are scalars: the general path
                    return make(out, dt, self._device)
            _, cdt, odt = result(front, op, self, end, weight)
            x, e = _array(front, self, cdt, ns), _array(front, end, cdt, ns)
            if fused_add is not None and (type(weight) is float or type(weight) is int):
                out = fused_lerp(x, e, cdt.numpy_dtype.type(weight))
                if out is not None:
                    return make(finish(out, odt), odt, _device(front, self, end, weight))
            w = _array(front, weight, cdt, ns)
            diff = e - x
            # PyTorch's formula: exact at both ends of [0, 1]; ``e + (w - 1) * diff``, its
            # ``fma(w - 1, diff, e)`` unfused (``e - diff * (1 - w)`` would give +0.0 for
            # end -0.0 at w = 1, where PyTorch keeps -0.0).
            out = xp.where(xp.abs(w) < 0.5, x + w * diff, e + (w - 1) * diff)
            return make(finish(out, odt), odt, _device(front, self, end, weight))

        def lerp_in_place(general: Any) -> Any:
            """Note [Ternary in-place fast path]: the kernel of ``lerp_``; ``m.lerp_(g, 1 -
            beta1)`` as the fast path above computes it, written into ``self``'s array;
            anything else ``general(self, end, weight)``, the in-place kernel's general way."""

            def kernel(self: Any, end: Any, weight: Any) -> Any:
                if (  # lerp_fast's guard, inline (Adam's step calls this per parameter)
                    type(self) is tensor_type
                    and type(end) is tensor_type
                    and (type(weight) is float or type(weight) is int)
                    and (dt := self._dtype) in lerp_direct
                    and end._dtype is dt
                    and end._device is self._device
                    and fastpaths.ENABLED
                ):
                    x, e = self._array, end._array
                    if type(x) is _numpy.ndarray and e.shape == x.shape and x.flags.writeable:
                        if x.base is not None or e.base is not None:
                            overlap.check_in_place("lerp_", x, e)
                        if (
                            fused_add is not None
                            and type(weight) is float
                            and (1e-30 < weight < 0.49 or -0.49 < weight < -1e-30)
                        ):
                            # Adam's weight (1 - beta1): inside +-0.49 it stays inside
                            # +-0.5 once rounded to the dtype, outside +-1e-30 it does not
                            # round to 0 (which BLAS would skip: inf * 0 gives no NaN),
                            # and BLAS rounds a Python float to float32 as NumPy does (C's
                            # double to float), so axpy takes it as it is, without a NumPy
                            # scalar (~0.15 us).
                            diff = _subtract(e, x)  # read first: ``end`` may be ``self``
                            # axpy's own checks are the guard's above: one dtype, one
                            # shape, x writeable, a nonzero Python float.
                            if axpy_checked(x, diff, weight):
                                return self  # fma(w, diff, x), into x: Note [Fused lerp]
                            return general(self, end, weight)
                        # The weight rounded to the dtype: a NumPy scalar of it, which
                        # promotes as the fast path's 0-d array does (~0.4 us less than
                        # asarray + astype).
                        w = dt.numpy_dtype.type(weight)
                        diff = e - x  # read before anything is written: ``end`` may be ``self``
                        if fused_add is not None:  # Note [Fused lerp], as the functional
                            if abs(w) < 0.5 and axpy(x, diff, w):
                                return self  # fma(w, diff, x), into x
                            return general(self, end, weight)
                        if abs(w) < 0.5:  # x + w * diff
                            diff *= w
                            x += diff
                        else:  # e + (w - 1) * diff
                            diff *= w - 1
                            _numpy.add(e, diff, out=x)
                        return self
                return general(self, end, weight)

            return kernel

        rename(lerp, "lerp", ns)
        if ns.ndarray is _numpy.ndarray:
            lerp._in_place_kernel = lerp_in_place  # type: ignore[attr-defined]
        return {"lerp.Scalar": lerp, "lerp.Tensor": lerp}

    if op.name in _ADDC:
        divide = op.name == "addcdiv"

        addc_direct = _direct_dtypes(op, half)
        bounds = {dt: limits(dt) for dt in addc_direct}  # Note [Numbers that overflow]
        weak_floats = {front.float32, front.float64}
        name = op.name
        in_place_name = f"{name}_"

        def addc_fast(self: Any, tensor1: Any, tensor2: Any, value: Any) -> bool:
            """Note [Optimizer fast paths]' guard for addcmul and addcdiv."""
            dt = self._dtype
            return (
                dt in addc_direct
                and fastpaths.ENABLED
                and type(tensor1) is tensor_type
                and type(tensor2) is tensor_type
                and tensor1._dtype is dt
                and tensor2._dtype is dt
                and tensor1._device is self._device
                and tensor2._device is self._device
                and (type(value) is float or type(value) is int)
            )

        def addc(self: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
            # Note [Optimizer fast paths]: Adam's ``v.addcmul_(g, g, value=1 - beta2)`` and
            # ``p.addcdiv_(m, denom, value=-step_size)``.
            dt = self._dtype
            if addc_fast(self, tensor1, tensor2, value):
                check_fits(name, value, dt, "value")  # Note [Numbers that overflow]
                v = ns.astype(xp.asarray(value), dt)
                x, a, b = self._array, tensor1._array, tensor2._array
                try:  # the general path's order: self + value * tensor1 * (or /) tensor2
                    out = x + (v * a / b if divide else v * a * b)
                except ValueError:  # shapes: the general path says why
                    out = None
                if type(out) is ndarray:  # 0-d results are scalars: the general path
                    return make(out, dt, self._device)
            _, cdt, odt = result(front, op, self, tensor1, tensor2, value=value)
            x, a, b = (
                _array(front, self, cdt, ns),
                _array(front, tensor1, cdt, ns),
                _array(front, tensor2, cdt, ns),
            )
            # PyTorch's order: self + value * tensor1 * tensor2 (or / tensor2), with value
            # converted to the compute dtype first (2.5 is 2 for integers).
            v = _array(front, value, cdt, ns)
            out = x + (v * a / b if divide else v * a * b)
            return make(finish(out, odt), odt, _device(front, self, tensor1, tensor2))

        def addc_in_place(general: Any) -> Any:
            """Note [Ternary in-place fast path]: the kernel of ``addcmul_``/``addcdiv_``;
            Adam's ``v.addcmul_(g, g, value=...)`` and ``p.addcdiv_(m, denom, value=...)``
            as the fast path above computes them, ``self + (value * tensor1 * tensor2)``
            (or ``/``) with the product's two steps in one temporary and the sum written
            into ``self``'s array, for operands of ``self``'s shape; anything else (and
            broadcasting, with its errors) ``general(...)``, the in-place kernel's general
            way."""

            def kernel(self: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
                dt = self._dtype
                if (  # addc_fast's guard, inline (each of Adam's steps calls this 8 times)
                    type(self) is tensor_type
                    and type(tensor1) is tensor_type
                    and type(tensor2) is tensor_type
                    and dt in addc_direct
                    and tensor1._dtype is dt is tensor2._dtype
                    and tensor1._device is self._device is tensor2._device
                    and (type(value) is float or type(value) is int)
                    and fastpaths.ENABLED
                ):
                    x, a, b = self._array, tensor1._array, tensor2._array
                    # 0-d arrays: NumPy's product of two is a scalar, which no ufunc takes as
                    # ``out`` (a scalar parameter's Adam step raised TypeError): general way.
                    if type(x) is _numpy.ndarray and x.ndim and a.shape == x.shape == b.shape:
                        if x.base is not None or a.base is not None or b.base is not None:
                            overlap.check_in_place(in_place_name, x, a, b)
                        lo, hi = bounds[dt]
                        if not lo <= value <= hi:  # NaN and inf fit a float dtype
                            check_fits(name, value, dt, "value")  # Note [Numbers that overflow]
                        # Read before the write (a scalar: as lerp's).  A Python float
                        # times a float32/float64 array is rounded to the array's dtype
                        # first (NumPy's weak scalars: Note [Elementwise fast path]), as
                        # the NumPy scalar of the dtype is, without making one (~0.2 us).
                        # The ufuncs called directly, ``out`` by position: what the
                        # operators call, ~50 ns less each.
                        if type(value) is float and dt in weak_floats:
                            tmp = _multiply(a, value)
                        else:
                            tmp = _multiply(dt.numpy_dtype.type(value), a)
                        if divide:
                            _divide(tmp, b, tmp)
                        else:
                            _multiply(tmp, b, tmp)
                        try:  # a read-only ``self``: refused before anything is written
                            _add(x, tmp, x)
                        except ValueError:  # the general way says what is wrong
                            return general(self, tensor1, tensor2, value=value)
                        return self
                return general(self, tensor1, tensor2, value=value)

            return kernel

        rename(addc, op.name, ns)
        if ns.ndarray is _numpy.ndarray:
            addc._in_place_kernel = addc_in_place  # type: ignore[attr-defined]
        return {op.name: addc}

    # Note [Clamp fast path]: ``x.clamp(0, 1)`` on a float32/float64 NumPy array with
    # Python numbers (or None) for bounds: the result is the tensor's dtype, and NumPy
    # rounds a Python number to it (weak scalars) as ``_array`` does, so ``maximum`` then
    # ``minimum`` with the numbers themselves compute the general path's values without its
    # dtype resolution, 0-d bound arrays and broadcast (9.8 -> ~2 us on a [4, 8] tensor).
    # A finite bound outside the dtype's range (``max=3.5e38`` on float32: PyTorch's
    # overflow error, where NumPy would round it to inf), 0-d tensors (NumPy gives a
    # scalar), both bounds None (an error) and a number NumPy cannot convert take the
    # general path.
    fast_clamp = ns.ndarray is _numpy.ndarray
    clamp_ranges = {dt: limits(dt) for dt in (front.float32, front.float64)}
    clamp_numbers = (int, float, type(None))
    maximum, minimum = _numpy.maximum, _numpy.minimum
    inf = float("inf")

    def clamp(self: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A002
        rng = clamp_ranges.get(self._dtype)
        if (
            rng is not None
            and fast_clamp
            and type(min) in clamp_numbers
            and type(max) in clamp_numbers
            and fastpaths.ENABLED
        ):
            x = self._array
            lo, hi = rng
            fits = True
            for b in (min, max):
                if b is not None and not lo <= b <= hi and b == b and b != inf and b != -inf:
                    fits = False  # out of range: the general path's overflow error
            if fits and type(x) is _numpy.ndarray and x.ndim:
                try:
                    out = x if min is None else maximum(x, min)
                    if max is not None:
                        out = minimum(out, max)
                except OverflowError:
                    pass
                else:
                    if out is not x:
                        return make(out, self._dtype, self._device)
        _, cdt, odt = result(front, op, self, min, max)
        out = _array(front, self, cdt, ns)
        if min is not None:
            out = xp.maximum(out, _array(front, min, cdt, ns))
        if max is not None:
            out = xp.minimum(out, _array(front, max, cdt, ns))
        return make(finish(out, odt), odt, _device(front, self, min, max))

    rename(clamp, "clamp", ns)
    return {"clamp": clamp, "clamp.Tensor": clamp}

"""Meta kernels of the elementwise operators: result shape and dtype, never data.

Imports: ``dispatch`` (the schema parser) and ``backends.common``.

One kernel per family, registered for every row of that family in the operator
table (a new unary operator needs no row here): dtypes come from the row's rule,
exactly as in the data kernels, shapes from ``backends.common.shape_rules``.  Devices:
every tensor must be on "meta", except 0-d CPU tensors (numbers), as in PyTorch.
"""

from __future__ import annotations

from typing import Any

from dispatch import parse_schema

from ..common import errors, shape_rules, ternary
from ..common.elementwise import check_operands
from ..common.formulas import ARGUMENT_CHECKS
from ..common.frontend import FrontEnd

__all__ = ["check_devices", "kernels"]


def check_devices(front: FrontEnd, op: str, named: list[tuple[str, Any]]) -> Any:
    """The meta device of a call, or PyTorch's mixed-device error naming both arguments."""
    tensor_type = front.Tensor
    found: tuple[str, Any] | None = None
    for name, value in named:
        if not isinstance(value, tensor_type):
            continue
        dev = value._device
        if dev.type == "meta":
            found = found or (name, dev)
        elif dev.type != "cpu" or value._array.ndim:
            first = found or next(
                (
                    (n, v._device)
                    for n, v in named
                    if isinstance(v, tensor_type) and v._device.type == "meta"
                ),
                ("self", "meta"),
            )
            raise errors.device_mismatch(op, first, (name, dev))
    return found[1] if found else front.device("meta")


def _shape(front: FrontEnd, value: Any) -> tuple[int, ...]:
    return tuple(value._array.shape) if isinstance(value, front.Tensor) else ()


def unary(front: FrontEnd, op: Any) -> Any:
    table = op.result_dtypes
    name = op.name
    check = ARGUMENT_CHECKS.get(name)
    make_meta = front.make_meta

    def kernel(self: Any, *args: Any, **kwargs: Any) -> Any:
        entry = table.get(self._dtype)
        if entry is None:
            raise errors.unsupported_dtype(name, self._dtype)
        if check is not None:
            check(entry[0], *args, **kwargs)
        return make_meta(self._array.shape, entry[1], self._device)

    kernel.__name__ = kernel.__qualname__ = name
    return kernel


def binary(
    front: FrontEnd, op: Any, names: tuple[str, str], *, reverse: bool, rounding_op: Any = None
) -> Any:
    name = op.name
    check = ARGUMENT_CHECKS.get(name)
    make_meta, result_type = front.make_meta, front.result_type

    def kernel(self: Any, other: Any, *args: Any, **kwargs: Any) -> Any:
        if reverse:  # pow.Scalar(Scalar self, Tensor exponent): the tensor is second
            self, other = other, self
        row = rounding_op if rounding_op is not None and kwargs.get("rounding_mode") else op
        check_operands(front, name, self, other)
        dt = result_type(self, other)
        entry = row.result_dtypes.get(dt)
        if entry is None:
            raise errors.unsupported_dtype(row.name, dt)
        if check is not None and (args or kwargs):
            check(entry[0], *args, **kwargs)
        dev = check_devices(front, name, [(names[0], self), (names[1], other)])
        shape = shape_rules.broadcast_shapes(name, _shape(front, self), _shape(front, other), names)
        return make_meta(shape, entry[1], dev)

    kernel.__name__ = kernel.__qualname__ = name
    return kernel


def ternary_kernel(front: FrontEnd, op: Any) -> Any:
    arg_names = {
        "where": ("condition", "self", "other"),
        "lerp": ("self", "end", "weight"),
        "addcmul": ("self", "tensor1", "tensor2"),
        "addcdiv": ("self", "tensor1", "tensor2"),
    }
    names = arg_names.get(op.name, ("self", "min", "max"))
    make_meta = front.make_meta

    def kernel(*args: Any, **kwargs: Any) -> Any:
        shape, _, odt = ternary.result(front, op, *args, **kwargs)
        dev = check_devices(front, op.name, list(zip(names, args, strict=False)))
        return make_meta(shape, odt, dev)

    kernel.__name__ = kernel.__qualname__ = op.name
    return kernel


def kernels(front: FrontEnd) -> dict[str, Any]:
    """Every elementwise Meta kernel, by qualified overload name."""
    out: dict[str, Any] = {}
    for op in front.op_table:
        qualnames = []
        for text in op.schemas:
            schema = parse_schema(text)
            overload = schema.overload_name
            qualnames.append((schema, op.name if not overload else f"{op.name}.{overload}"))
        if op.family == "unary":
            for _, q in qualnames:
                out[q] = unary(front, op)
        elif op.family == "ternary":
            for _, q in qualnames:
                out[q] = ternary_kernel(front, op)
        elif op.family == "binary":
            rounding = front.op_info("floor_divide") if op.name == "div" else None
            for schema, q in qualnames:
                first, second = schema.arguments[0], schema.arguments[1]
                reverse = first.type.tensor_kind is None
                names = (second.name, first.name) if reverse else (first.name, second.name)
                out[q] = binary(front, op, names, reverse=reverse, rounding_op=rounding)
    return out

"""CPU kernels of the elementwise operators: one row per operator, NumPy doing the math.

Imports: NumPy, ``dispatch`` (the schema parser) and ``backends.common``.

``UNARY`` maps a one-tensor operator to its array function, ``BINARY`` a
two-operand operator to its array function and whether it takes extra
arguments; the factories in ``backends.common.elementwise`` turn each row into
the kernels of every overload.  A new unary operator is one row here (and one
in the front end's operator table).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from dispatch import parse_schema

from ..common import elementwise as ew
from ..common import ternary
from ..common.formulas import Formulas
from ..common.frontend import FrontEnd

__all__ = ["BINARY", "UNARY", "kernels"]

F = Formulas(np)

UNARY: dict[str, Any] = {
    "neg": np.negative,
    "abs": np.absolute,
    "sign": F.sign,
    "exp": np.exp,
    "exp2": np.exp2,
    "expm1": np.expm1,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "sqrt": np.sqrt,
    "rsqrt": F.rsqrt,
    "square": np.square,
    "reciprocal": np.reciprocal,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "sigmoid": F.sigmoid,
    "relu": F.relu,
    "silu": F.silu,
    "erf": F.erf,
    "erfc": F.erfc,
    "floor": F.same_if_int(np.floor),
    "ceil": F.same_if_int(np.ceil),
    "trunc": F.same_if_int(np.trunc),
    "frac": F.frac,
    "logical_not": np.logical_not,
    "bitwise_not": np.invert,
    "isnan": np.isnan,
    "isinf": np.isinf,
    "isfinite": np.isfinite,
}
# One-tensor operators with extra arguments: fn(x, compute_dtype, *args, **kwargs).
UNARY_ARGS: dict[str, Any] = {
    "round": F.round,
    "gelu": F.gelu,
    "softplus": F.softplus,
    "nan_to_num": F.nan_to_num,
}
# Two-operand operators: (fn, extra).  extra: fn(x, y, compute_dtype, *args, **kwargs).
BINARY: dict[str, tuple[Any, bool]] = {
    "add": (F.add, True),
    "sub": (F.sub, True),
    "rsub": (F.rsub, True),
    "mul": (operator.mul, False),
    "div": (F.div, True),
    "floor_divide": (F.floor_divide, False),
    "remainder": (F.remainder, False),
    "fmod": (F.fmod, False),
    "pow": (F.pow, False),
    "maximum": (np.maximum, False),
    "minimum": (np.minimum, False),
    "atan2": (np.arctan2, False),
    "hypot": (np.hypot, False),
    "eq": (np.equal, False),
    "ne": (np.not_equal, False),
    "lt": (np.less, False),
    "le": (np.less_equal, False),
    "gt": (np.greater, False),
    "ge": (np.greater_equal, False),
    "logical_and": (np.logical_and, False),
    "logical_or": (np.logical_or, False),
    "logical_xor": (np.logical_xor, False),
    "bitwise_and": (np.bitwise_and, False),
    "bitwise_or": (np.bitwise_or, False),
    "bitwise_xor": (np.bitwise_xor, False),
    "bitwise_left_shift": (np.left_shift, False),
    "bitwise_right_shift": (np.right_shift, False),
    "isclose": (F.isclose, True),
}
# With alpha left at 1, add and sub are one ufunc call (see ew.binary_alpha).  The Python
# operators (ndarray.__add__ ...) run the same ufuncs, with the same NumPy 2 rules for
# Python numbers, but skip the ufunc's argument parsing: ~25 ns of a ~1 us `a + b`.
_PLAIN_WHEN_NO_ALPHA = {"add": operator.add, "sub": operator.sub}


def kernels(front: FrontEnd) -> dict[str, Any]:
    """Every elementwise CPU kernel, by qualified overload name (``"add.Tensor"``)."""
    ns = ew.Namespace(np.ndarray, __name__, front, asarray=np.asarray)
    out: dict[str, Any] = {}
    for op in front.op_table:
        if op.family == "unary":
            fn = UNARY.get(op.name)
            if fn is not None:
                out[op.name] = ew.unary(op, fn, ns)
            elif op.name in UNARY_ARGS:
                out[op.name] = ew.unary_args(op, UNARY_ARGS[op.name], ns)
            continue
        if op.family == "ternary":
            out.update(ternary.kernels(op, ns))
            continue
        if op.family != "binary" or op.name not in BINARY:
            continue
        fn, extra = BINARY[op.name]
        for text in op.schemas:
            schema = parse_schema(text)
            overload = schema.overload_name or "default"
            qualname = op.name if overload == "default" else f"{op.name}.{overload}"
            first, second = schema.arguments[0], schema.arguments[1]
            if first.type.tensor_kind is None:  # pow.Scalar, remainder.Scalar_Tensor
                out[qualname] = ew.binary_reversed(op, fn, ns, overload)
                continue
            names = (first.name, second.name)
            scalar = second.type.tensor_kind is None
            if op.name == "div":
                floor = front.op_info("floor_divide")
                out[qualname] = ew.div(
                    op, floor, np.true_divide, F.div, ns, overload, scalar=scalar
                )
                continue
            kernel = ew.binary(op, fn, ns, overload, scalar=scalar, names=names, extra=extra)
            plain = _PLAIN_WHEN_NO_ALPHA.get(op.name)
            if plain is not None:
                kernel = ew.binary_alpha(
                    op, plain, kernel, ns, overload, scalar=scalar, names=names
                )
            if qualname in _IN_PLACE:
                kernel._in_place = _IN_PLACE[qualname]  # type: ignore[attr-defined]
            out[qualname] = kernel
    return out


# Note [In-place fast path]: ``x -= y`` (the SGD update) is ``sub_``, made by
# ``backends.common.variants`` as the functional kernel plus a copy into ``x``.  When
# both are tensors of one dtype that these operators keep (numbers other than bool),
# NumPy's in-place operator writes the result directly, handling overlap
# between ``x`` and ``y`` as the copy would; anything it refuses (broadcasting ``x``,
# a read-only expansion, a cast) takes the general path and its PyTorch error.  CPU
# only: CuPy's in-place operators do not guard against overlapping operands.  ``alpha``
# must be the int 1 exactly: 1.0, True and 1+0j go the general way, whose checks refuse
# them where PyTorch does.  Partly overlapping operands are refused first (Note
# [Overlapping writes]); the guard also tests ``fastpaths.ENABLED``.
_IN_PLACE = {
    "add.Tensor": (operator.iadd, 1),
    "sub.Tensor": (operator.isub, 1),
    "mul.Tensor": (operator.imul, 1),
}

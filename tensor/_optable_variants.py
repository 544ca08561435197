"""In-place and ``out=`` rows, generated from the functional rows they belong to.

Imports: ``dispatch`` (the schema parser) and ``tensor._opinfo``.

``add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`` gives
- the in-place row ``add_``: ``add_.Tensor(Tensor(a!) self, Tensor other, *,
  Scalar alpha=1) -> Tensor(a!)`` (a Tensor method, and ``__iadd__``; also a function,
  ``tt.sin_(x)``, where PyTorch has ``torch.sin_``);
- the out row ``add.out``: ``add.out(Tensor self, Tensor other, *, Scalar alpha=1,
  Tensor(a!) out) -> Tensor(a!)`` (reached by ``tt.add(x, y, out=z)``).
Overload names follow ATen: ``out`` for the default (or lone ``Tensor``)
overload, ``<overload>_out`` otherwise.  Both kinds of rows keep the functional
row's dtype rule; their kernels (``backends.common.variants``) compute the
functional result and write it into the mutated tensor, refusing results whose
dtype cannot be cast to it, as PyTorch does.
"""

from __future__ import annotations

import dataclasses

from dispatch import parse_schema

from ._opinfo import OpInfo

__all__ = [
    "FUNCTION_FORMS",
    "INPLACE",
    "OUT_EXTRA",
    "OUT_FAMILIES",
    "base_of",
    "out_overload",
    "with_variants",
]

# Functional rows with an in-place method (PyTorch's Tensor.<name>_), and their
# augmented-assignment operators.
INPLACE: dict[str, tuple[str, ...]] = {
    "add": ("__iadd__",), "sub": ("__isub__",), "mul": ("__imul__",), "div": ("__itruediv__",),
    "floor_divide": ("__ifloordiv__",), "remainder": ("__imod__",), "pow": ("__ipow__",),
    "bitwise_and": ("__iand__",), "bitwise_or": ("__ior__",), "bitwise_xor": ("__ixor__",),
    "bitwise_left_shift": ("__ilshift__",), "bitwise_right_shift": ("__irshift__",),
    "fmod": (), "atan2": (), "hypot": (), "lerp": (), "clamp": (),
    "addcmul": (), "addcdiv": (),
    "logical_and": (), "logical_or": (), "logical_xor": (),
    "eq": (), "ne": (), "lt": (), "le": (), "gt": (), "ge": (),
    "neg": (), "abs": (), "sign": (), "exp": (), "exp2": (), "expm1": (), "log": (), "log2": (),
    "log10": (), "log1p": (), "sqrt": (), "rsqrt": (), "square": (), "reciprocal": (),
    "sin": (), "cos": (), "tan": (), "asin": (), "acos": (), "atan": (), "sinh": (), "cosh": (),
    "tanh": (), "asinh": (), "acosh": (), "atanh": (), "sigmoid": (), "relu": (), "erf": (),
    "erfc": (), "floor": (), "ceil": (), "trunc": (), "frac": (), "round": (),
    "logical_not": (), "bitwise_not": (), "nan_to_num": (),
    "masked_fill": (), "index_put": (), "scatter": (), "scatter_add": (),
    "cumsum": (), "cumprod": (), "addmm": (), "tril": (), "triu": (),
}  # fmt: skip
# In-place rows that are also functions, as in PyTorch (``torch.sin_(x)``, ``torch.clamp_``):
# the in-place rows whose ``torch.<name>_`` exists in PyTorch 2.13.
FUNCTION_FORMS = frozenset({
    "neg", "abs", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
    "square", "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
    "tanh", "asinh", "acosh", "atanh", "sigmoid", "relu", "erf", "erfc", "floor", "ceil",
    "trunc", "frac", "round", "nan_to_num", "clamp", "index_put",
})  # fmt: skip
# Families whose functional rows get out= forms (rows with a hand-written Python
# wrapper or without a tt.<name> function are left out).
OUT_FAMILIES = frozenset({"unary", "binary", "ternary", "reduction", "scan", "linalg"})
# PyTorch has no out= form of these.
NO_OUT = frozenset({"isclose", "isnan", "isinf", "isfinite", "relu", "count_nonzero"})
# Other rows whose torch.<name> takes out= (those with a Python wrapper pass it on): the
# joins, indexing and nn rows, and the factories, whose out= gives the result's dtype and
# device.  Operators with named results take one out tensor each (``out=(values, indices)``
# in Python).
OUT_EXTRA = frozenset({
    "cat", "stack", "tril", "triu", "diag", "index_select", "gather", "scatter", "scatter_add",
    "masked_select", "nonzero", "take_along_dim", "argsort", "softmax", "log_softmax", "where",
    "max", "min", "norm", "tensordot", "empty", "zeros", "ones", "full", "arange", "linspace",
    "eye", "rand", "randn", "randint", "normal", "sort", "topk",
})  # fmt: skip


def base_of(op: OpInfo) -> str:
    """The functional row an in-place or out row was made from."""
    return op.tags[0]


def out_overload(overload: str, overloads: set[str]) -> str:
    """The name of the out= overload made from ``overload`` (one of ``overloads``)."""
    if not overload or (overload == "Tensor" and "" not in overloads):
        return "out"
    return f"{overload}_out"


def _inplace(op: OpInfo, dunders: tuple[str, ...]) -> OpInfo | None:
    schemas = []
    for text in op.schemas:
        s = parse_schema(text)
        args = s.arguments
        if not args or args[0].name != "self" or args[0].type.tensor_kind != "tensor":
            continue  # pow.Scalar(Scalar self, ...) has no in-place form
        if len(s.returns) != 1:
            continue
        params = ", ".join(str(a) for a in args[1:] if not a.kwarg_only)
        kw = ", ".join(str(a) for a in args[1:] if a.kwarg_only)
        rest = (", " + params if params else "") + (", *, " + kw if kw else "")
        name = f"{s.name}_" + (f".{s.overload_name}" if s.overload_name else "")
        schemas.append(f"{name}(Tensor(a!) self{rest}) -> Tensor(a!)")
    if not schemas:
        return None
    return dataclasses.replace(
        op, name=op.name + "_", schemas=tuple(schemas), family="inplace",
        function=op.name + "_" if op.name in FUNCTION_FORMS else None,
        method=True, dunders=dunders, rdunders=(), py=op.py + "_" if op.py else "", tags=(op.name,),
        result_dtypes={},
    )  # fmt: skip


def _out(op: OpInfo) -> OpInfo | None:
    parsed = [parse_schema(t) for t in op.schemas]
    overloads = {s.overload_name for s in parsed}
    schemas = []
    for s in parsed:
        if any(r.type.tensor_kind != "tensor" for r in s.returns):
            continue
        if len(s.returns) == 1:
            outs, returns = ["Tensor(a!) out"], "Tensor(a!)"
        elif all(r.name for r in s.returns):
            # (values, indices): one out argument per named result, as ATen's sort.values.
            aliases = "abcdefgh"
            outs = [f"Tensor({aliases[i]}!) {r.name}" for i, r in enumerate(s.returns)]
            returns = f"({', '.join(outs)})"
        else:
            continue
        params = ", ".join(str(a) for a in s.arguments if not a.kwarg_only)
        kw = [str(a) for a in s.arguments if a.kwarg_only] + outs
        name = f"{s.name}.{out_overload(s.overload_name, overloads)}"
        schemas.append(f"{name}({params}{', ' if params else ''}*, {', '.join(kw)}) -> {returns}")
    if not schemas:
        return None
    return dataclasses.replace(
        op, name=op.name + ".out", schemas=tuple(schemas), family="out", function=None,
        method=False, dunders=(), rdunders=(), py="", tags=(op.name,), result_dtypes={},
    )  # fmt: skip


def _wants_out(op: OpInfo) -> bool:
    if op.function_name is None or "." in op.function_name or op.name in NO_OUT:
        return False  # nn.functional.gelu, linalg.vector_norm: no out= here
    return op.name in OUT_EXTRA or (op.family in OUT_FAMILIES and not op.py)


def with_variants(rows: tuple[OpInfo, ...]) -> tuple[OpInfo, ...]:
    """``rows`` followed by the in-place and out rows generated from them."""
    extra: list[OpInfo] = []
    for op in rows:
        if op.name in INPLACE:
            row = _inplace(op, INPLACE[op.name])
            if row is not None:
                extra.append(row)
        if _wants_out(op):
            row = _out(op)
            if row is not None:
                extra.append(row)
    return rows + tuple(extra)

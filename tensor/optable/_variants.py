"""In-place and ``out=`` rows, generated from the functional rows they belong to.

Imports: ``dispatch`` (the schema parser) and this package's ``_row``.

A row's ``inplace`` and ``out`` flags say which it has.
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
dtype cannot be cast to it, as PyTorch does.  An in-place row has the functional
row's derivative for each overload it keeps (or ``InPlace.grad``); an out row has
none (it refuses inputs that require grad, as in PyTorch) and no autocast policy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from dispatch import parse_schema

from ._row import InPlace, OpInfo

__all__ = ["out_overload", "with_variants"]

# Families whose functional rows get out= forms unless a row says otherwise (rows with a
# hand-written Python wrapper or without a plain tt.<name> function are left out).
OUT_FAMILIES = frozenset({"unary", "binary", "ternary", "reduction", "scan", "linalg"})


def out_overload(overload: str, overloads: set[str]) -> str:
    """The name of the out= overload made from ``overload`` (one of ``overloads``)."""
    if not overload or (overload == "Tensor" and "" not in overloads):
        return "out"
    return f"{overload}_out"


def _inplace(op: OpInfo, inplace: InPlace) -> OpInfo | None:
    schemas = []
    overloads = set()
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
        overloads.add(s.overload_name or "default")
    if not schemas:
        return None
    grad = inplace.grad if inplace.grad is not None else op.grad
    if isinstance(grad, Mapping):
        grad = {overload: d for overload, d in grad.items() if overload in overloads}
    return dataclasses.replace(
        op, name=op.name + "_", schemas=tuple(schemas), family="inplace",
        function=op.name + "_" if inplace.function else None,
        method=True, dunders=inplace.dunders, rdunders=(), py=op.py + "_" if op.py else "",
        tags=(op.name,), result_dtypes={}, grad=grad, autocast=None, inplace=None, out=False,
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
        grad=None, autocast=None, inplace=None, out=False,
    )  # fmt: skip


def _wants_out(op: OpInfo) -> bool:
    if op.function_name is None or "." in op.function_name:
        return False  # nn.functional.gelu, linalg.vector_norm: no out= here
    if op.out is not None:
        return op.out
    return op.family in OUT_FAMILIES and not op.py


def with_variants(rows: tuple[OpInfo, ...]) -> tuple[OpInfo, ...]:
    """``rows`` followed by the in-place and out rows their flags ask for."""
    extra: list[OpInfo] = []
    for op in rows:
        if op.inplace is not None:
            row = _inplace(op, op.inplace)
            if row is not None:
                extra.append(row)
        if _wants_out(op):
            row = _out(op)
            if row is not None:
                extra.append(row)
    return rows + tuple(extra)

"""Defines every operator of the table in the ``core`` namespace, once.

Imports: ``dispatch`` and ``tensor.optable``.

``LIB`` is the one DEF library of ``core``; it lives as long as the process (a
destroyed DEF library would undefine the built-in operators).  ``overloads(op)``
gives the ``OpOverload`` objects of a table row, in schema order.
"""

from __future__ import annotations

from dispatch import FunctionSchema, Library, OpOverload, ops, parse_schema

from .optable import OP_TABLE, OpInfo

__all__ = ["LIB", "overloads", "schemas"]

LIB = Library("core", "DEF")

_SCHEMAS: dict[str, tuple[FunctionSchema, ...]] = {}
_OVERLOADS: dict[str, tuple[OpOverload, ...]] = {}

for _op in OP_TABLE:
    _parsed = []
    for _text in _op.schemas:
        LIB.define(_text)
        _parsed.append(parse_schema(_text))
    _SCHEMAS[_op.name] = tuple(_parsed)
    # A row's schemas may name another packet: the row "add.out" holds core::add.out.
    _OVERLOADS[_op.name] = tuple(
        getattr(getattr(ops.core, s.name), s.overload_name or "default") for s in _parsed
    )


def schemas(op: OpInfo | str) -> tuple[FunctionSchema, ...]:
    """The parsed schemas of a table row, in the row's order."""
    return _SCHEMAS[op if isinstance(op, str) else op.name]


def overloads(op: OpInfo | str) -> tuple[OpOverload, ...]:
    """The ``OpOverload`` objects of a table row (``ops.core.add.Tensor``, ...), in order."""
    return _OVERLOADS[op if isinstance(op, str) else op.name]

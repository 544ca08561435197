"""The operator table: every built-in operator of this package, one row each.

Imports: ``dispatch`` (the schema parser and ``ops.core``, which formulas call),
``tensor._dtype``, and its own modules: the row type (``_row``), the formulas'
helpers (``_grad``), the generated variants (``_variants``) and the family modules
``elementwise``, ``reduction``, ``linalg``, ``creation``, ``shape`` and ``nn`` (the
backends' family names).  ``tensor._definitions`` reads ``OP_TABLE`` to define the schemas in
the ``core`` namespace and to generate ``tt.<name>`` functions and Tensor methods;
the backends read it for their dtype rules; ``tensor.autograd`` registers
``FORMULAS`` and ``NOT_DIFFERENTIABLE``, ``tensor._autocast`` registers ``AUTOCAST``;
the op database in ``tests/ops`` checks itself against the table.

Note [One row per operator]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
A row (``OpInfo``) says everything this package knows of an operator, in one place:
- ``schemas``: ATen-style schemas, one per overload; the first gives the Python
  signature (with ``self`` spelled ``input`` in the function form).
- ``dtypes``: the dtypes the op accepts, after type promotion of its inputs, and
  ``rule``: maps that dtype to (compute dtype, result dtype).  One table, so CPU,
  CUDA and Meta kernels agree by construction.
- how it appears in Python: ``function`` (``"linalg.vector_norm"``, or None),
  ``method``, Python operators (``dunders``; ``rdunders`` for reflected forms).
- ``grad``: its derivative formula (defined just above the row, or inline for a
  one-line unary formula), per overload where they differ; ``False`` where the
  outputs never require grad; ``NoFormula(why)`` where it is left to the autograd
  fallback.  Composites have none: their decomposition is differentiated.
- ``autocast``: PyTorch's autocast policy per device type (per overload where
  PyTorch's lists name overloads).
- ``inplace`` and ``out``: whether it has an in-place form (``add_``, with its
  ``__iadd__``, and a ``tt.add_`` function where PyTorch has one) and an out= form;
  ``_variants`` generates their rows, once, when the table is built.
The tables the layers register (``FORMULAS``, ``NOT_DIFFERENTIABLE``, ``AUTOCAST``)
are read off the rows below, when this package is imported, keyed by
``name.overload`` as in ``ops.core``.
"""

from __future__ import annotations

from collections.abc import Mapping

from .. import _dtype
from . import _variants, creation, elementwise, linalg, nn, reduction, shape
from ._grad import Formula, sum_to
from ._row import NoFormula, OpInfo
from ._variants import out_overload

__all__ = [
    "AUTOCAST",
    "FORMULAS",
    "NOT_DIFFERENTIABLE",
    "OP_TABLE",
    "WITHOUT_FORMULA",
    "OpInfo",
    "by_name",
    "out_overload",
    "sum_to",
]

OP_TABLE: tuple[OpInfo, ...] = _variants.with_variants(
    elementwise.ROWS + reduction.ROWS + linalg.ROWS + creation.ROWS + shape.ROWS + nn.ROWS
)

_BY_NAME = {op.name: op for op in OP_TABLE}


def by_name(name: str) -> OpInfo:
    """The table row of an operator (``KeyError`` if it is not built in)."""
    return _BY_NAME[name]


def refresh_all() -> None:
    for op in OP_TABLE:
        op.refresh()


refresh_all()
_dtype.on_default_dtype_change(refresh_all)


def _check(op: OpInfo) -> None:
    """Per-overload entries must name overloads the row has (a typo would drop one)."""
    overloads = {overload for _, overload in op.overloads()}
    entries = {"grad": op.grad}
    for device_type, policy in (op.autocast or {}).items():
        if device_type not in ("cpu", "cuda"):
            raise ValueError(
                f"row {op.name}: autocast device type {device_type!r} is not 'cpu' or 'cuda'"
            )
        entries[f"autocast[{device_type!r}]"] = policy
    for what, value in entries.items():
        if isinstance(value, Mapping) and not value.keys() <= overloads:
            raise ValueError(
                f"row {op.name}: {what} names overloads {sorted(value.keys() - overloads)}; "
                f"its overloads are {sorted(overloads)}"
            )


def _read_off(
    rows: tuple[OpInfo, ...],
) -> tuple[dict[str, Formula], frozenset[str], dict[str, str], dict[str, dict[str, str]]]:
    formulas: dict[str, Formula] = {}
    not_differentiable: set[str] = set()
    without_formula: dict[str, str] = {}
    autocast: dict[str, dict[str, str]] = {"cpu": {}, "cuda": {}}
    for op in rows:
        _check(op)
        for key, derivative in op.derivatives():
            if derivative is False:
                not_differentiable.add(key)
            elif isinstance(derivative, NoFormula):
                without_formula[key] = derivative.reason
            else:
                formulas[key] = derivative
        for device_type, policies in autocast.items():
            policies.update(op.policies(device_type))
    return formulas, frozenset(not_differentiable), without_formula, autocast


# The tables the layers register, by ``name.overload``:
# - FORMULAS: derivative formulas; the autograd layer gives each one kernel.
# - NOT_DIFFERENTIABLE: overloads whose outputs never carry gradients (PyTorch's "not
#   differentiable" entries): their Autograd slot is a fallthrough.
# - WITHOUT_FORMULA: differentiable overloads left to PyTorch's autograd fallback (their
#   outputs require grad; backward warns and passes no gradient on), with the reason.
# - AUTOCAST: autocast policies by device type, then overload.
FORMULAS, NOT_DIFFERENTIABLE, WITHOUT_FORMULA, AUTOCAST = _read_off(OP_TABLE)

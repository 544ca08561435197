"""Operator rows: the ``OpInfo`` record, the dtype sets and dtype rules rows use.

Imports: ``tensor._dtype`` only.  ``tensor._optable`` and its sibling row modules
(``_optable_shape``, ``_optable_nn``, ``_optable_variants``) build the operator table
from these.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from . import _dtype
from ._dtype import BOOL, COMPLEX, FLOAT, INT, dtype

__all__ = [
    "ALL",
    "BOOLS",
    "COMPLEXES",
    "FLOATS",
    "INEXACT",
    "INTS",
    "INT_BOOL",
    "NO_BOOL",
    "REAL",
    "REAL_NO_BOOL",
    "OpInfo",
    "Rule",
    "all_any",
    "bool_to_int64",
    "float_to_real",
    "int_to_int64",
    "same",
    "to_bool",
    "to_float",
    "to_int64",
    "to_real",
]

Rule = Callable[[dtype], tuple[dtype, dtype]]

# -- dtype sets ------------------------------------------------------------------------------
ALL = frozenset(_dtype.DTYPES)
BOOLS = frozenset({_dtype.bool})
INTS = frozenset(d for d in ALL if d.kind == INT)
FLOATS = frozenset(d for d in ALL if d.kind == FLOAT)
COMPLEXES = frozenset(d for d in ALL if d.kind == COMPLEX)
REAL = ALL - COMPLEXES
NO_BOOL = ALL - BOOLS
REAL_NO_BOOL = REAL - BOOLS
INEXACT = FLOATS | COMPLEXES
INT_BOOL = INTS | BOOLS


# -- dtype rules: promoted input dtype -> (compute dtype, result dtype) -----------------------
def same(d: dtype) -> tuple[dtype, dtype]:
    return d, d


def to_float(d: dtype) -> tuple[dtype, dtype]:
    """Integers and bool compute in the default float dtype (sin, div, ...)."""
    if d.kind <= INT:
        f = _dtype.get_default_dtype()
        return f, f
    return d, d


def to_bool(d: dtype) -> tuple[dtype, dtype]:
    return d, _dtype.bool


def to_real(d: dtype) -> tuple[dtype, dtype]:
    """Complex inputs give real results (abs, var, norm)."""
    return d, d.to_real()


def bool_to_int64(d: dtype) -> tuple[dtype, dtype]:
    return (_dtype.int64, _dtype.int64) if d.kind == BOOL else (d, d)


def int_to_int64(d: dtype) -> tuple[dtype, dtype]:
    """Sums and products of integers and bools accumulate in int64."""
    return (_dtype.int64, _dtype.int64) if d.kind <= INT else (d, d)


def to_int64(d: dtype) -> tuple[dtype, dtype]:
    return d, _dtype.int64


def all_any(d: dtype) -> tuple[dtype, dtype]:
    return d, _dtype.uint8 if d is _dtype.uint8 else _dtype.bool


def float_to_real(d: dtype) -> tuple[dtype, dtype]:
    return d, d.to_real()


@dataclass(frozen=True, eq=False)
class OpInfo:
    """One operator: its schemas, dtype rule and Python surface."""

    name: str
    schemas: tuple[str, ...]
    family: str
    dtypes: frozenset[dtype] = ALL
    rule: Rule = same
    function: str | None = ""  # "" means the op name; None means no tt.<name>
    method: bool = True
    dunders: tuple[str, ...] = ()
    rdunders: tuple[str, ...] = ()
    # Name of a hand-written Python wrapper in tensor._pyapi (irregular signatures).
    py: str = ""
    # Extra data the backends' tables key on (e.g. a unary op's NumPy name).
    tags: tuple[str, ...] = ()
    result_dtypes: dict[dtype, tuple[dtype, dtype]] = field(default_factory=dict)

    @property
    def function_name(self) -> str | None:
        return self.name if self.function == "" else self.function

    def refresh(self) -> None:
        """Recompute ``result_dtypes`` in place (kernels hold the dict itself)."""
        self.result_dtypes.clear()
        for d in self.dtypes:
            self.result_dtypes[d] = self.rule(d)

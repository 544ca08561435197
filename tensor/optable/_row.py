"""The row type: the ``OpInfo`` record and what its fields hold (dtype sets, dtype
rules, ``InPlace``, ``NoFormula``).

Imports: ``tensor._dtype``, and ``_grad`` for the formula type.  The family modules
of ``tensor.optable`` write their rows with these; ``_variants`` generates the
in-place and out= rows from the rows' flags.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Literal, NamedTuple

from .. import _dtype
from .._dtype import BOOL, COMPLEX, FLOAT, INT, dtype
from ._grad import Formula

__all__ = [
    "ALL",
    "BOOLS",
    "COMPLEXES",
    "FLOATS",
    "INEXACT",
    "INPLACE_FUNCTION",
    "INTS",
    "INT_BOOL",
    "NO_BOOL",
    "REAL",
    "REAL_NO_BOOL",
    "Derivative",
    "InPlace",
    "NoFormula",
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
INTS = frozenset(d for d in ALL if d.category == INT)
FLOATS = frozenset(d for d in ALL if d.category == FLOAT)
COMPLEXES = frozenset(d for d in ALL if d.category == COMPLEX)
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
    if d.category <= INT:
        f = _dtype.get_default_dtype()
        return f, f
    return d, d


def to_bool(d: dtype) -> tuple[dtype, dtype]:
    return d, _dtype.bool


def to_real(d: dtype) -> tuple[dtype, dtype]:
    """Complex inputs give real results (abs, var, norm)."""
    return d, d.to_real()


def bool_to_int64(d: dtype) -> tuple[dtype, dtype]:
    return (_dtype.int64, _dtype.int64) if d.category == BOOL else (d, d)


def int_to_int64(d: dtype) -> tuple[dtype, dtype]:
    """Sums and products of integers and bools accumulate in int64."""
    return (_dtype.int64, _dtype.int64) if d.category <= INT else (d, d)


def to_int64(d: dtype) -> tuple[dtype, dtype]:
    return d, _dtype.int64


def all_any(d: dtype) -> tuple[dtype, dtype]:
    return d, _dtype.uint8 if d is _dtype.uint8 else _dtype.bool


def float_to_real(d: dtype) -> tuple[dtype, dtype]:
    return d, d.to_real()


# -- rows ------------------------------------------------------------------------------------
class NoFormula(NamedTuple):
    """A differentiable overload without a formula: its outputs require grad, and the
    autograd fallback warns at backward and passes no gradient on (PyTorch's)."""

    reason: str


# What a row says of one overload's derivative: its formula, ``False`` (not
# differentiable: outputs never require grad), or ``NoFormula(why)``.
Derivative = Formula | Literal[False] | NoFormula


class InPlace(NamedTuple):
    """A functional row's in-place form ``<name>_``: a Tensor method, whose schemas are
    the row's with ``Tensor(a!) self`` (``_variants``)."""

    # Its augmented assignments (``__iadd__``).
    dunders: tuple[str, ...] = ()
    # Whether ``tt.<name>_`` is a function too: where PyTorch 2.13 has ``torch.<name>_``.
    function: bool = False
    # Its derivative where it is not the functional row's (in-place comparisons).
    grad: Derivative | None = None


# The in-place form of most unary operators: ``Tensor.sin_`` and ``tt.sin_``.
INPLACE_FUNCTION = InPlace(function=True)


def _row_site() -> str:
    """``file:line`` of the module-level statement making a row (the family module's)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_name != "<module>":
        frame = frame.f_back  # type: ignore[assignment]
    return "<unknown>" if frame is None else f"{frame.f_code.co_filename}:{frame.f_lineno}"


@dataclass(frozen=True, eq=False)
class OpInfo:
    """One operator: its schemas, dtype rule, Python surface, derivative, autocast policy
    and generated forms (Note [One row per operator] in ``tensor.optable``)."""

    name: str
    schemas: tuple[str, ...]
    family: str
    dtypes: frozenset[dtype] = ALL
    rule: Rule = same
    function: str | None = ""  # "" means the op name; None means no tt.<name>
    method: bool = True
    dunders: tuple[str, ...] = ()
    rdunders: tuple[str, ...] = ()
    # Name of a hand-written Python wrapper in tensor._wrappers (irregular signatures).
    py: str = ""
    # Extra data the backends' tables key on (e.g. a unary op's NumPy name).
    tags: tuple[str, ...] = ()
    result_dtypes: dict[dtype, tuple[dtype, dtype]] = field(default_factory=dict)
    _: KW_ONLY
    # The derivative of every overload, or per overload name ("default" for the unnamed
    # one); None: no autograd kernel (composites: their decomposition is differentiated).
    grad: Derivative | Mapping[str, Derivative] | None = None
    # PyTorch's autocast policy per device type ("cpu", "cuda"), for every overload or per
    # overload name, as ``tensor._autocast`` names them ("fp32", "promote", ...).
    autocast: Mapping[str, str | Mapping[str, str]] | None = None
    # The in-place form (``add_``), if the operator has one.
    inplace: InPlace | None = None
    # Whether it has an out= form (``add.out``); None: its family says (``_variants``).
    out: bool | None = None
    # ``file:line`` of the row (set when it is made; generated rows keep their base's): the
    # registration site ``dump_table`` shows for the kernels made from it.
    defined_at: str = ""

    def __post_init__(self) -> None:
        if not self.defined_at:
            object.__setattr__(self, "defined_at", _row_site())

    @property
    def function_name(self) -> str | None:
        return self.name if self.function == "" else self.function

    def overloads(self) -> Iterator[tuple[str, str]]:
        """(``name.overload`` as in ``ops.core``, overload name) of each schema; the
        unnamed overload is ``name`` and ``"default"``."""
        for text in self.schemas:
            key = text[: text.index("(")]
            yield key, key.partition(".")[2] or "default"

    def derivatives(self) -> Iterator[tuple[str, Derivative]]:
        """(``name.overload``, derivative) of each overload the row declares one for."""
        grad = self.grad
        if grad is None:
            return
        for key, overload in self.overloads():
            if not isinstance(grad, Mapping):
                yield key, grad
            elif overload in grad:
                yield key, grad[overload]

    def policies(self, device_type: str) -> Iterator[tuple[str, str]]:
        """(``name.overload``, autocast policy) of each overload with one on the device."""
        policy = (self.autocast or {}).get(device_type)
        if policy is None:
            return
        for key, overload in self.overloads():
            if isinstance(policy, str):
                yield key, policy
            elif overload in policy:
                yield key, policy[overload]

    def refresh(self) -> None:
        """Recompute ``result_dtypes`` in place (kernels hold the dict itself)."""
        self.result_dtypes.clear()
        for d in self.dtypes:
            self.result_dtypes[d] = self.rule(d)

"""Operator schemas: PyTorch's schema language, parsed into frozen data, and call binding.

Imports: the standard library, ``dispatch._schema_types`` (types and default values,
re-exported here), ``dispatch._schema_bind`` (call binding) and, at its end, ``dispatch._schema_parse`` (the
parser, ``parse_schema``, re-exported here too).

``parse_schema("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")``
gives a ``FunctionSchema``: hashable, compared by value, and printed back in
PyTorch's canonical spelling so that ``parse_schema(str(s)) == s``.  Schemas are
data: a small tokenizer reads them and nothing in them is ever evaluated.

Grammar (whitespace allowed between any two tokens)::

    schema    := name ['.' overload] '(' [arg (',' arg)*] ')' '->' returns
    name      := IDENT ['::' IDENT]
    arg       := '*' | '...' | type IDENT ['=' default]
    type      := BASE [alias] ('[' [INT] ']' [alias] | '?')*
    alias     := '(' set ('|' set)* ['!'] ['->' set ('|' set)*] ')'    set := IDENT | '*'
    returns   := '(' [ret (',' ret)*] ')' | ret | '...'                ret := type [IDENT] | '...'
    default   := None | True | False | STRING | NAME | number | '[' [default (',' default)*] ']'
    number    := ['-'] (NUMBER | inf | nan) [('+' | '-') IMAGINARY]
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from . import _schema_bind, _schema_types
from ._schema_types import (
    NO_DEFAULT,
    VARARGS_KEY,
    AliasInfo,
    BaseType,
    EnumDefault,
    ListType,
    OptionalType,
    SchemaBindError,
    SchemaType,
    is_tensor_like,
)

__all__ = [
    "NO_DEFAULT",
    "VARARGS_KEY",
    "AliasInfo",
    "Argument",
    "BaseType",
    "EnumDefault",
    "FunctionSchema",
    "ListType",
    "OptionalType",
    "Return",
    "SchemaBindError",
    "SchemaParseError",
    "SchemaType",
    "is_tensor_like",
    "parse_schema",
]

_OP_NAME_RE: Final = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_]*::)?[A-Za-z_][A-Za-z0-9_]*", re.ASCII)


# ---------------------------------------------------------------------------------------
# Arguments, returns, schemas


@dataclass(frozen=True, eq=False)
class Argument:
    """One argument: ``Tensor(a!) self``, ``int[1]? dim=None``, ``str approximate='none'``.

    List defaults are stored as tuples and ``float``/``complex`` defaults as float/complex
    (``float eps=1`` gives ``1.0``).  See Note [Alias annotations on lists].
    """

    name: str
    type: SchemaType
    default: object = NO_DEFAULT
    kwarg_only: bool = False
    alias_info: AliasInfo | None = None

    def __post_init__(self) -> None:
        if not _schema_types.is_ident(self.name):
            raise ValueError(f"an argument name must be an identifier, not {self.name!r}")
        if self.default is not NO_DEFAULT:
            object.__setattr__(
                self, "default", _schema_types.coerce_default(self.type, self.default)
            )

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    @property
    def is_write(self) -> bool:
        return self.alias_info is not None and self.alias_info.is_write

    def _key(self) -> tuple[object, ...]:
        default = (
            self.default if self.default is NO_DEFAULT else _schema_types.default_key(self.default)
        )
        return (self.name, self.type, default, self.kwarg_only, self.alias_info)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Argument):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        text = f"{_schema_types.type_text(self.type, self.alias_info)} {self.name}"
        return (
            text
            if self.default is NO_DEFAULT
            else f"{text}={_schema_types.default_text(self.default)}"
        )


# Note [Alias annotations on lists]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# PyTorch tells ``Tensor(a!)[]`` (the elements are written) from ``Tensor[](a!)`` (the
# list itself is).  Here an argument has one ``alias_info``, so both spellings parse to
# the same Argument, printed the ATen way, ``Tensor(a!)[]``; a type with two
# annotations is an error.  What the dispatcher needs, "is this argument written",
# is the same for both.


@dataclass(frozen=True)
class Return:
    """One return: ``Tensor``, ``Tensor(a!)``, ``Tensor values`` (named)."""

    name: str | None
    type: SchemaType
    alias_info: AliasInfo | None = None

    def __post_init__(self) -> None:
        if self.name is not None and not _schema_types.is_ident(self.name):
            raise ValueError(f"a return name must be an identifier, not {self.name!r}")

    def __str__(self) -> str:
        text = _schema_types.type_text(self.type, self.alias_info)
        return text if self.name is None else f"{text} {self.name}"


@dataclass(frozen=True)
class FunctionSchema:
    """A parsed operator schema; see ``parse_schema``.

    >>> s = parse_schema("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    >>> s.qualified_name, [a.name for a in s.kwarg_only], s.min_positional
    ('add.Tensor', ['alpha'], 2)
    """

    name: str
    overload_name: str
    arguments: tuple[Argument, ...]
    returns: tuple[Return, ...]
    is_vararg: bool = False
    is_varret: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "arguments", tuple(self.arguments))
        object.__setattr__(self, "returns", tuple(self.returns))
        if _OP_NAME_RE.fullmatch(self.name) is None:
            raise ValueError(f"an operator name must be 'name' or 'ns::name', not {self.name!r}")
        if self.overload_name and not _schema_types.is_ident(self.overload_name):
            raise ValueError(f"an overload name must be an identifier, not {self.overload_name!r}")
        problem = _argument_problem(self.arguments) or _return_problem(self.returns)
        if problem is not None:
            raise ValueError(f"{self.qualified_name}: {problem[1]}")

    def __str__(self) -> str:
        return self._text

    def __getstate__(self) -> dict[str, object]:
        # Pickle the fields only, not the cached text and binder (whose checks are closures).
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @functools.cached_property
    def _text(self) -> str:
        return self.qualified_name + self._signature

    @functools.cached_property
    def _signature(self) -> str:
        """Everything after the qualified name: ``(args) -> returns``."""
        parts: list[str] = []
        star = False
        for arg in self.arguments:
            if arg.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(str(arg))
        if self.is_vararg:
            parts.append("...")
        rets = [str(r) for r in self.returns] + (["..."] if self.is_varret else [])
        if len(rets) == 1 and (self.is_varret or self.returns[0].name is None):
            returns = rets[0]
        else:
            returns = "(" + ", ".join(rets) + ")"
        return f"({', '.join(parts)}) -> {returns}"

    @property
    def qualified_name(self) -> str:
        """``name.overload``, or ``name`` when there is no overload name."""
        return f"{self.name}.{self.overload_name}" if self.overload_name else self.name

    @property
    def namespace(self) -> str:
        return self.name.partition("::")[0] if "::" in self.name else ""

    @property
    def base_name(self) -> str:
        return self.name.rpartition("::")[2]

    @functools.cached_property
    def positional(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if not a.kwarg_only)

    @functools.cached_property
    def kwarg_only(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if a.kwarg_only)

    @property
    def num_positional(self) -> int:
        return len(self.positional)

    @functools.cached_property
    def min_positional(self) -> int:
        """How many positional arguments have no default (they all come first)."""
        return sum(1 for a in self.positional if not a.has_default)

    @functools.cached_property
    def tensor_arg_indices(self) -> tuple[tuple[int, str, str], ...]:
        """``(index, name, tensor_kind)`` of each tensor-like argument, in order."""
        return tuple(
            (i, a.name, a.type.tensor_kind)
            for i, a in enumerate(self.arguments)
            if a.type.tensor_kind is not None
        )

    @functools.cached_property
    def mutated_args(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.arguments if a.is_write)

    @property
    def is_mutable(self) -> bool:
        return bool(self.mutated_args)

    def with_name(self, name: str, overload_name: str | None = None) -> FunctionSchema:
        """A copy with another name (e.g. qualified with a namespace).

        >>> str(parse_schema("relu(Tensor x) -> Tensor").with_name("mylib::relu"))
        'mylib::relu(Tensor x) -> Tensor'
        """
        overload = self.overload_name if overload_name is None else overload_name
        return dataclasses.replace(self, name=name, overload_name=overload)

    @functools.cached_property
    def _binder(self) -> _schema_bind.Binder:
        args = self.arguments
        return _schema_bind.Binder(
            self.qualified_name,
            self._signature,
            tuple(a.name for a in args),
            tuple(a.kwarg_only for a in args),
            tuple(a.default for a in args),
            tuple(_schema_types.check_for(a.type) for a in args),
            self.is_vararg,
        )

    def bind(
        self,
        args: tuple[object, ...],
        kwargs: Mapping[str, object] | None = None,
        *,
        op_name: str | None = None,
    ) -> dict[str, object]:
        """Map a call onto the arguments like Python would; defaults filled, types checked.

        Returns ``{name: value}`` in declaration order (extra values of a ``...`` schema
        under ``VARARGS_KEY``).  Raises ``SchemaBindError`` naming ``op_name`` (default:
        the qualified name), the argument, what was expected and what was given.

        >>> s = parse_schema("sum(int[] xs, *, bool keep=False) -> int")
        >>> s.bind(([1, 2],), {})
        {'xs': [1, 2], 'keep': False}
        """
        return self._binder.bind(args, kwargs or {}, op_name)

    @functools.cached_property
    def bind_trusted(
        self,
    ) -> Callable[[tuple[object, ...], Mapping[str, object]], dict[str, object]]:
        """``bind(args, kwargs)`` without the type checks, for a call already known to fit
        (its operator ran): the autograd layer binds each call it records with it."""
        return self._binder.bind_trusted

    def check(
        self,
        args: tuple[object, ...],
        kwargs: Mapping[str, object] | None = None,
        *,
        op_name: str | None = None,
    ) -> None:
        """Like ``bind``, but only validates the call."""
        self._binder.bind(args, kwargs or {}, op_name)


def _argument_problem(arguments: tuple[Argument, ...]) -> tuple[int, str] | None:
    """(index, message) of the first argument that breaks the schema rules, or None."""
    seen: set[str] = set()
    defaulted: Argument | None = None
    kwarg_only = False
    for i, arg in enumerate(arguments):
        if arg.name in seen:
            return i, f"duplicate argument name '{arg.name}'"
        seen.add(arg.name)
        if arg.kwarg_only:
            kwarg_only = True
        elif kwarg_only:
            return i, f"positional argument '{arg.name}' follows keyword-only arguments"
        elif arg.has_default:
            defaulted = arg
        elif defaulted is not None:
            return i, (
                f"non-default argument '{arg.name}' follows default argument '{defaulted.name}' "
                f"(only keyword-only arguments may do that)"
            )
    return None


def _return_problem(returns: tuple[Return, ...]) -> tuple[int, str] | None:
    seen: set[str] = set()
    for i, ret in enumerate(returns):
        if ret.name is not None:
            if ret.name in seen:
                return i, f"duplicate return name '{ret.name}'"
            seen.add(ret.name)
    return None


# The parser builds the types above, so it imports this module; its names are
# re-exported here, below them (``from dispatch._schema import parse_schema`` works).
from ._schema_parse import SchemaParseError, parse_schema  # noqa: E402

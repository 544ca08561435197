"""Operator schemas: PyTorch's schema language, parsed into frozen data, and call binding.

Imports: the standard library and ``dispatch._schema_bind`` (types, default values and
call binding, re-exported here).

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
from typing import Final, NoReturn

from . import _schema_bind
from ._schema_bind import (
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
        if not _schema_bind.is_ident(self.name):
            raise ValueError(f"an argument name must be an identifier, not {self.name!r}")
        if self.default is not NO_DEFAULT:
            object.__setattr__(
                self, "default", _schema_bind.coerce_default(self.type, self.default)
            )

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    @property
    def is_write(self) -> bool:
        return self.alias_info is not None and self.alias_info.is_write

    def _key(self) -> tuple[object, ...]:
        default = (
            self.default if self.default is NO_DEFAULT else _schema_bind.default_key(self.default)
        )
        return (self.name, self.type, default, self.kwarg_only, self.alias_info)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Argument):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        text = f"{_schema_bind.type_text(self.type, self.alias_info)} {self.name}"
        return (
            text
            if self.default is NO_DEFAULT
            else f"{text}={_schema_bind.default_text(self.default)}"
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
        if self.name is not None and not _schema_bind.is_ident(self.name):
            raise ValueError(f"a return name must be an identifier, not {self.name!r}")

    def __str__(self) -> str:
        text = _schema_bind.type_text(self.type, self.alias_info)
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
        if self.overload_name and not _schema_bind.is_ident(self.overload_name):
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
            tuple(_schema_bind.check_for(a.type) for a in args),
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


# ---------------------------------------------------------------------------------------
# Parsing


class SchemaParseError(RuntimeError):
    """A schema string is malformed; ``column`` (0-based) is where, shown with a caret."""

    def __init__(self, schema: str, column: int, reason: str) -> None:
        self.schema = schema
        self.column = column
        self.reason = reason
        super().__init__(f"{reason} at column {column}:\n{_excerpt(schema, column)}")

    def __reduce__(self) -> tuple[type[SchemaParseError], tuple[str, int, str]]:
        return (type(self), (self.schema, self.column, self.reason))


def _excerpt(text: str, column: int, width: int = 100) -> str:
    """The line holding ``column`` (cut to ``width`` around it), and a caret under it."""
    start = text.rfind("\n", 0, column) + 1
    end = text.find("\n", column)
    line = text[start : len(text) if end < 0 else end]
    caret = column - start
    if len(line) > width:
        cut = max(0, min(caret - width // 2, len(line) - width))
        line = line[cut : cut + width]
        caret -= cut
    line = "".join(c if c.isprintable() else " " for c in line)  # keep the caret aligned
    return f"  {line}\n  {' ' * caret}^"


class _Token:
    __slots__ = ("col", "kind", "text", "value")

    def __init__(self, kind: str, text: str, col: int, value: object = None) -> None:
        self.kind = kind  # "ident", "number", "string", "eof", or the punctuation itself
        self.text = text
        self.col = col
        self.value = value  # a string literal's decoded text

    def describe(self) -> str:
        return "end of input" if self.kind == "eof" else f"'{self.text}'"


_TOKEN_RE: Final = re.compile(
    r"""
      (?P<space>\s+)
    | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?j?)
    | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<quote>['"])
    | (?P<punct>\.\.\.|->|::|[()\[\],*?!|=.+-])
    """,
    re.VERBOSE | re.ASCII,
)
_STRING_CHUNK_RE: Final = {q: re.compile(rf"[^{q}\\]+") for q in "'\""}
_CONSTANTS: Final = {"None": None, "True": True, "False": False}
_NUMBER_NAMES: Final = frozenset({"inf", "nan", "infj", "nanj"})
_MAX_LIST_DEPTH: Final = 32


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            raise SchemaParseError(text, pos, f"unexpected character {text[pos]!r}")
        kind = m.lastgroup
        if kind == "quote":
            value, end = _scan_string(text, pos)
            tokens.append(_Token("string", text[pos:end], pos, value))
            pos = end
            continue
        if kind == "number" or kind == "ident":
            tokens.append(_Token(kind, m.group(), pos))
        elif kind == "punct":
            tokens.append(_Token(m.group(), m.group(), pos))
        pos = m.end()
    tokens.append(_Token("eof", "", len(text)))
    return tokens


def _scan_string(text: str, start: int) -> tuple[str, int]:
    """Decode the string literal opening at ``start``; return it and the index past it."""
    quote = text[start]
    chunk = _STRING_CHUNK_RE[quote]
    parts: list[str] = []
    pos = start + 1
    while pos < len(text):
        m = chunk.match(text, pos)
        if m is not None:
            parts.append(m.group())
            pos = m.end()
            continue
        if text[pos] == quote:
            return "".join(parts), pos + 1
        escaped = text[pos + 1 : pos + 2]  # text[pos] is a backslash
        if not escaped:
            break
        if escaped not in _schema_bind.UNESCAPES:
            raise SchemaParseError(text, pos, f"unknown escape '\\{escaped}' in a string")
        parts.append(_schema_bind.UNESCAPES[escaped])
        pos += 2
    raise SchemaParseError(text, start, "unterminated string")


class _Parser:
    """Recursive descent over the token list; every failure is a SchemaParseError."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.pos = 0

    def peek(self) -> _Token:
        return self.tokens[self.pos]

    def next(self) -> _Token:
        tok = self.tokens[self.pos]
        if tok.kind != "eof":
            self.pos += 1
        return tok

    def accept(self, kind: str) -> bool:
        if self.tokens[self.pos].kind == kind:
            self.pos += 1
            return True
        return False

    def expect(self, kind: str, what: str) -> _Token:
        tok = self.next()
        if tok.kind != kind:
            self.fail_expected(what, tok)
        return tok

    def fail(self, reason: str, column: int) -> NoReturn:
        raise SchemaParseError(self.text, column, reason)

    def fail_expected(self, what: str, tok: _Token) -> NoReturn:
        self.fail(f"expected {what} but found {tok.describe()}", tok.col)

    def schema(self) -> FunctionSchema:
        name = self.expect("ident", "an operator name").text
        if self.accept("::"):
            name += "::" + self.expect("ident", "an operator name after '::'").text
        overload = self.expect("ident", "an overload name").text if self.accept(".") else ""
        self.expect("(", "'('")
        arguments, is_vararg = self.arguments()
        self.expect("->", "'->'")
        returns, is_varret = self.returns()
        tok = self.peek()
        if tok.kind != "eof":
            self.fail(f"expected end of schema but found {tok.describe()}", tok.col)
        try:
            return FunctionSchema(name, overload, arguments, returns, is_vararg, is_varret)
        except ValueError as e:  # not expected: the parts were checked as they were read
            self.fail(str(e), 0)

    def arguments(self) -> tuple[tuple[Argument, ...], bool]:
        args: list[Argument] = []
        name_cols: list[int] = []
        star: _Token | None = None
        is_vararg = False
        if self.accept(")"):
            return (), False
        while True:
            tok = self.peek()
            if tok.kind == "*":
                if star is not None:
                    self.fail("'*' appears twice", tok.col)
                star = self.next()
                if self.peek().kind != ",":
                    self.fail_expected("',' and keyword-only arguments after '*'", self.peek())
            elif tok.kind == "...":
                self.next()
                is_vararg = True
                if self.peek().kind != ")":
                    self.fail_expected("')' after '...' (varargs come last)", self.peek())
            else:
                arg, name_col = self.argument(kwarg_only=star is not None)
                args.append(arg)
                name_cols.append(name_col)
            sep = self.next()
            if sep.kind == ")":
                break
            if sep.kind != ",":
                self.fail_expected("',' or ')'", sep)
        if star is not None and not any(a.kwarg_only for a in args):
            self.fail("expected keyword-only arguments after '*'", star.col)
        arguments = tuple(args)
        problem = _argument_problem(arguments)
        if problem is not None:
            self.fail(problem[1], name_cols[problem[0]])
        return arguments, is_vararg

    def argument(self, kwarg_only: bool) -> tuple[Argument, int]:
        """The argument and the column of its name."""
        arg_type, alias = self.type()
        name_tok = self.expect("ident", "an argument name")
        name = name_tok.text
        default: object = NO_DEFAULT
        column = self.peek().col
        if self.accept("="):
            column = self.peek().col
            default = self.default(0)
        try:
            return Argument(name, arg_type, default, kwarg_only, alias), name_tok.col
        except ValueError as e:
            self.fail(f"invalid default for argument '{name}': {e}", column)

    def type(self) -> tuple[SchemaType, AliasInfo | None]:
        tok = self.expect("ident", "a type")
        if tok.text not in _schema_bind.BASE_TYPES:
            self.fail(
                f"unknown type specifier '{tok.text}'. Common valid schema types include "
                f"Tensor, SymInt, int, float, bool, Scalar; {_schema_bind.KNOWN_TYPES}",
                tok.col,
            )
        result: SchemaType = BaseType(tok.text)
        alias = self.alias() if self.peek().kind == "(" else None
        while True:
            tok = self.peek()
            if tok.kind == "?":
                if isinstance(result, OptionalType):
                    self.fail("a type cannot be optional twice", tok.col)
                self.next()
                result = OptionalType(result)
            elif tok.kind == "[":
                self.next()
                size = None
                if self.peek().kind == "number":
                    size_tok = self.next()
                    if not size_tok.text.isdigit() or len(size_tok.text) > 9:
                        self.fail("a list size must be a positive integer", size_tok.col)
                    size = int(size_tok.text)
                    if size < 1:
                        self.fail("a list size must be a positive integer", size_tok.col)
                self.expect("]", "']'")
                result = ListType(result, size)
                if self.peek().kind == "(":
                    if alias is not None:
                        self.fail("a type can have only one alias annotation", self.peek().col)
                    alias = self.alias()
            else:
                return result, alias

    def alias(self) -> AliasInfo:
        self.next()  # '('
        before = self.alias_sets()
        is_write = self.accept("!")
        after = self.alias_sets() if self.accept("->") else ()
        self.expect(")", "')' to close the alias annotation")
        return AliasInfo(before, after, is_write)

    def alias_sets(self) -> tuple[str, ...]:
        sets: list[str] = []
        while True:
            tok = self.next()
            if tok.kind not in ("ident", "*"):
                self.fail_expected("an alias set (a name or '*')", tok)
            sets.append(tok.text)
            if not self.accept("|"):
                return tuple(sets)

    def returns(self) -> tuple[tuple[Return, ...], bool]:
        if self.accept("..."):
            return (), True
        if not self.accept("("):
            ret_type, alias = self.type()
            name = self.next().text if self.peek().kind == "ident" else None
            return (Return(name, ret_type, alias),), False
        rets: list[Return] = []
        cols: list[int] = []
        is_varret = False
        if self.accept(")"):
            return (), False
        while True:
            if self.accept("..."):
                is_varret = True
                self.expect(")", "')' after '...' (varargs come last)")
                break
            cols.append(self.peek().col)
            ret_type, alias = self.type()
            name = self.next().text if self.peek().kind == "ident" else None
            rets.append(Return(name, ret_type, alias))
            sep = self.next()
            if sep.kind == ")":
                break
            if sep.kind != ",":
                self.fail_expected("',' or ')'", sep)
        returns = tuple(rets)
        problem = _return_problem(returns)
        if problem is not None:
            self.fail(problem[1], cols[problem[0]])
        return returns, is_varret

    def default(self, depth: int) -> object:
        tok = self.peek()
        if tok.kind == "string":
            self.next()
            return tok.value
        if tok.kind == "[":
            if depth >= _MAX_LIST_DEPTH:
                self.fail("list default nested too deeply", tok.col)
            self.next()
            items: list[object] = []
            if self.accept("]"):
                return ()
            while True:
                items.append(self.default(depth + 1))
                sep = self.next()
                if sep.kind == "]":
                    return tuple(items)
                if sep.kind != ",":
                    self.fail_expected("',' or ']'", sep)
        if tok.kind == "ident" and tok.text not in _NUMBER_NAMES:
            self.next()
            if tok.text in _CONSTANTS:
                return _CONSTANTS[tok.text]
            return EnumDefault(tok.text)
        return self.number()

    def number(self) -> int | float | complex:
        """``-2``, ``1.5e-3``, ``-inf``, ``2j``, ``1.0-2.5j``; see Note [Complex defaults]."""
        real = self.real_or_imaginary(negative=self.accept("-"))
        if isinstance(real, complex) or self.peek().kind not in ("+", "-"):
            return real
        negative = self.next().kind == "-"
        tok = self.peek()
        imag = self.real_or_imaginary(negative)
        if not isinstance(imag, complex):
            self.fail_expected("an imaginary part such as 2.5j", tok)
        try:
            return complex(float(real), imag.imag)
        except OverflowError:
            self.fail("number too large for a complex", tok.col)

    def real_or_imaginary(self, negative: bool) -> int | float | complex:
        tok = self.next()
        text = tok.text
        if tok.kind not in ("number", "ident") or (
            tok.kind == "ident" and text not in _NUMBER_NAMES
        ):
            self.fail_expected("a default value", tok)
        if text.endswith("j"):
            imag = float(text[:-1])
            return complex(0.0, -imag if negative else imag)
        if tok.kind == "ident" or any(c in text for c in ".eE"):
            value = float(text)
            return -value if negative else value
        if len(text) > 4000:  # int() refuses longer digit strings
            self.fail("integer default too long", tok.col)
        return -int(text) if negative else int(text)


# Note [Complex defaults]
# ~~~~~~~~~~~~~~~~~~~~~~~
# PyTorch prints complex defaults as ``real+imagj`` (``0.+1.j``).  We read the two parts
# as literals and build ``complex(real, imag)`` directly instead of doing arithmetic, so
# ``-1.0j`` is ``complex(0.0, -1.0)`` (Python's ``-1.0j`` has real part -0.0), and
# signed zeros, inf and nan survive printing and parsing back.


def parse_schema(text: str) -> FunctionSchema:
    """Parse an operator schema written in PyTorch's schema language.

    Raises ``SchemaParseError`` (with the column and a caret excerpt) on any malformed
    input; nothing in ``text`` is evaluated.

    >>> s = parse_schema("ns::add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)")
    >>> s.namespace, s.overload_name, s.mutated_args
    ('ns', 'Tensor', ('self',))
    >>> parse_schema("f(Tensor x, int -> Tensor")
    Traceback (most recent call last):
      ...
    dispatch._schema.SchemaParseError: expected an argument name but found '->' at column 16:
      f(Tensor x, int -> Tensor
                      ^
    """
    schema = _PARSED.get(text) if type(text) is str else None
    if schema is None:
        if not isinstance(text, str):
            raise TypeError(
                f"parse_schema() expects the schema as a str, not {type(text).__name__}"
            )
        schema = _Parser(text).schema()
        if type(text) is str and len(_PARSED) < _PARSED_MAX:
            _PARSED[text] = schema
    return schema


# Note [Schema parse cache]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# ``import tensor`` parses each built-in schema about nine times (the definition, the
# table's own lookups, each backend's variant kernels), ~2 ms per 100 parses: most of
# the import's parsing.  A ``FunctionSchema`` is frozen data compared by value and
# its cached properties are pure functions of it, so one parsed object per text serves
# every caller; nothing compares schemas by identity except a definition's undo, which
# runs once.  Only successful parses of exact ``str`` texts are kept, up to
# ``_PARSED_MAX`` (fuzzed or generated schemas must not grow it without bound).
_PARSED: dict[str, FunctionSchema] = {}
_PARSED_MAX: Final = 8192

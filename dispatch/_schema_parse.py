"""The schema parser: PyTorch's schema language read into ``dispatch._schema``'s data.

Imports: the standard library, ``dispatch._schema`` and ``dispatch._schema_types``.

A small tokenizer reads a schema string and a recursive-descent parser builds its
``FunctionSchema`` (the grammar is in ``dispatch._schema``'s docstring); nothing in a
schema is ever evaluated.  Parsed schemas are cached by their text.
"""

from __future__ import annotations

import re
from typing import Final, NoReturn

from . import _schema_types
from ._schema import (
    NO_DEFAULT,
    AliasInfo,
    Argument,
    BaseType,
    EnumDefault,
    FunctionSchema,
    ListType,
    OptionalType,
    Return,
    SchemaType,
    _argument_problem,
    _return_problem,
)

__all__ = ["SchemaParseError", "parse_schema"]


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


# The tokens of a schema without string literals, each with the whitespace before it:
# one match per token (Note [Tokenizing in one pass]).
_FAST_TOKEN_RE: Final = re.compile(
    r"""
    \s*(?:
      (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?j?)
    | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<punct>\.\.\.|->|::|[()\[\],*?!|=.+-])
    )
    """,
    re.VERBOSE | re.ASCII,
)
_TRAILING_SPACE_RE: Final = re.compile(r"\s*\Z", re.ASCII)


def _tokenize(text: str) -> list[_Token]:
    """The tokens of ``text``, then an ``eof`` token."""
    if "'" in text or '"' in text:
        return _tokenize_slow(text)
    tokens: list[_Token] = []
    append = tokens.append
    pos = 0
    for m in _FAST_TOKEN_RE.finditer(text):
        if m.start() != pos:  # a character no token starts with: the slow path says where
            return _tokenize_slow(text)
        kind = m.lastgroup
        tok = m.group(kind)  # type: ignore[arg-type]
        append(_Token(tok if kind == "punct" else kind, tok, m.start(kind), None))  # type: ignore[arg-type]
        pos = m.end()
    if pos != len(text) and _TRAILING_SPACE_RE.match(text, pos) is None:
        return _tokenize_slow(text)
    tokens.append(_Token("eof", "", len(text)))
    return tokens


# Note [Tokenizing in one pass]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``import tensor`` parses ~540 schemas; tokenizing was about half of it.  A schema
# without string literals is read by ``finditer`` over one pattern that takes each
# token with the whitespace before it, so whitespace makes no match of its own.  Any
# surprise (a character no token starts with, something other than ASCII whitespace
# at the end, a quote anywhere) sends the text to ``_tokenize_slow``, the
# one-token-at-a-time scanner that decodes string literals and raises the error with
# its column; both give the same tokens (tests/dispatch: the tokenizers agree).


def _tokenize_slow(text: str) -> list[_Token]:
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
        if escaped not in _schema_types.UNESCAPES:
            raise SchemaParseError(text, pos, f"unknown escape '\\{escaped}' in a string")
        parts.append(_schema_types.UNESCAPES[escaped])
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
        """The argument and the column of its name (Note [Argument parse cache])."""
        tokens, start = self.tokens, self.pos
        end, depth = start, 0
        while True:  # the token that ends the argument: ',' or ')' outside brackets
            kind = tokens[end].kind
            if kind == "(" or kind == "[":
                depth += 1
            elif kind == "]" or (kind == ")" and depth):
                depth -= 1
            elif (kind == "," and not depth) or kind == ")" or kind == "eof":
                break
            end += 1
        first = tokens[start].col
        key = (self.text[first : tokens[end].col], kwarg_only)
        hit = _ARGUMENTS.get(key)
        if hit is not None:
            self.pos = end
            return hit[0], first + hit[1]
        arg, name_col = self._argument(kwarg_only)
        if self.pos == end and len(_ARGUMENTS) < _PARSED_MAX:
            _ARGUMENTS[key] = (arg, name_col - first)
        return arg, name_col

    def _argument(self, kwarg_only: bool) -> tuple[Argument, int]:
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
        if tok.text not in _schema_types.BASE_TYPES:
            self.fail(
                f"unknown type specifier '{tok.text}'. Common valid schema types include "
                f"Tensor, SymInt, int, float, bool, Scalar; {_schema_types.KNOWN_TYPES}",
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
    dispatch._schema_parse.SchemaParseError: expected an argument name but found '->' at column 16:
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

# Note [Argument parse cache]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The built-in schemas spell few distinct arguments (``Tensor self``, ``Scalar alpha=1``,
# ``bool keepdim=False``...): ~1,500 arguments, ~400 texts.  An argument's tokens run
# from its first token to the ``,`` or ``)`` that ends it outside brackets (a string
# literal is one token, so a comma inside one does not end it), and what ``_argument``
# makes of them depends on nothing else but ``kwarg_only``.  So a parse that consumed
# exactly those tokens is kept by their text (exact, whitespace included) and reused,
# with its name's column relative to the argument's start: the same Argument (frozen,
# compared by value) and the same columns.  Failed parses are not kept: an error is
# always raised by a fresh parse, with its column.  Bounded as ``_PARSED`` is.
_ARGUMENTS: dict[tuple[str, bool], tuple[Argument, int]] = {}

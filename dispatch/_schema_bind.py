"""Schema types, the values that fit them, and binding a call onto a schema.

Imports: the standard library only.  This is the value half of ``dispatch._schema``
(which holds the parser, ``Argument`` and ``FunctionSchema``): the type classes and
alias annotations, which defaults a type takes and how they print, and the
``Binder`` that maps a Python call onto a schema's arguments.

A value is a tensor iff it has a ``_dispatch_bits`` attribute (the project's tensor
protocol), so this module needs no tensor class.  Checks are closures built once per
schema type and shared between schemas; the Binder and the generated checkers only run
them (Note [Bind fast path], Note [Validating every call]).
"""

from __future__ import annotations

import functools
import math
import numbers
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, NamedTuple, NoReturn, TypeAlias

__all__ = [
    "BASE_TYPES",
    "NO_DEFAULT",
    "VARARGS_KEY",
    "AliasInfo",
    "BaseType",
    "Binder",
    "Check",
    "EnumDefault",
    "ListType",
    "OptionalType",
    "SchemaBindError",
    "SchemaType",
    "check_for",
    "coerce_default",
    "default_key",
    "default_text",
    "is_ident",
    "is_tensor_like",
    "register_type_check",
    "type_text",
]

# ---------------------------------------------------------------------------------------
# Value checks


class _NoDefault:
    """The type of ``NO_DEFAULT``: marks an argument that has no default value."""

    __slots__ = ()
    _instance: _NoDefault | None = None

    def __new__(cls) -> _NoDefault:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __reduce__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Final = _NoDefault()

VARARGS_KEY: Final = "..."
"""Where ``bind`` puts the extra positional values of a ``...`` (vararg) schema."""


class SchemaBindError(TypeError, RuntimeError):
    """A call does not fit an operator's schema (wrong type, missing or extra argument).

    A ``TypeError``, as Python raises for a call that does not fit a signature, and a
    ``RuntimeError``, as PyTorch's ``torch.ops`` raises for one that does not fit a
    schema: code written for either habit catches it.
    """


def is_tensor_like(value: object) -> bool:
    """Whether ``value`` follows the tensor protocol (has ``_dispatch_bits``).

    >>> class FakeTensor:
    ...     _dispatch_bits = 1
    >>> is_tensor_like(FakeTensor()), is_tensor_like(1.0)
    (True, False)
    """
    return hasattr(value, "_dispatch_bits")


class Check(NamedTuple):
    """How to test a value against one schema type, and how to say why it failed."""

    ok: Callable[[object], bool]
    expected: str  # the schema type as written, e.g. "int[2]?"
    describe: Callable[[object], str]  # what was given, for the error message


def _type_name(value: object) -> str:
    return "None" if value is None else type(value).__name__


# Each base check tries the exact builtin types first: ``isinstance`` against the
# ``numbers`` ABCs is several times slower, and builtins are what calls pass.
def _is_int(value: object) -> bool:
    t = type(value)
    if t is int:
        return True
    if t is bool or value is None:
        return False
    if isinstance(value, numbers.Integral):
        return True
    return hasattr(t, "__index__") and not is_tensor_like(value)


def _is_float(value: object) -> bool:
    t = type(value)
    if t is float or t is int:
        return True
    return t is not bool and isinstance(value, numbers.Real)


def _is_complex(value: object) -> bool:
    t = type(value)
    if t is complex or t is float or t is int:
        return True
    return t is not bool and isinstance(value, numbers.Number)


def _is_bool(value: object) -> bool:
    return type(value) is bool  # bool cannot be subclassed


def _is_str(value: object) -> bool:
    return isinstance(value, str)


def _is_scalar(value: object) -> bool:
    t = type(value)
    if t is int or t is float or t is bool or t is complex:
        return True
    # PyTorch accepts 0-d tensors where a Scalar is expected; we accept any tensor.
    return isinstance(value, numbers.Number) or is_tensor_like(value)


def _is_not_none(value: object) -> bool:
    return value is not None


_BASE_CHECKS: Final[dict[str, Callable[[object], bool]]] = {
    "Tensor": is_tensor_like,
    "int": _is_int,
    "SymInt": _is_int,
    "float": _is_float,
    "complex": _is_complex,
    "bool": _is_bool,
    "str": _is_str,
    "Scalar": _is_scalar,
}

# List types whose fixed-size form also takes one scalar, as PyTorch broadcasts it
# (``SymInt[2] stride=1`` means ``[1, 1]``).
BROADCAST_ELEMENTS: Final = frozenset({"int", "SymInt", "float", "bool"})


# Checks for the types whose values belong to the tensor library (ScalarType, Device,
# Layout, MemoryFormat, Generator, ...), registered by it; see ``register_type_check``.
_LIBRARY_CHECKS: dict[str, Callable[[object], bool]] = {}


def register_type_check(type_name: str, ok: Callable[[object], bool]) -> None:
    """Say which values fit the schema type ``type_name`` (``"ScalarType"``, ``"Device"``...).

    ``dispatch`` knows no dtype or device classes, so the tensor library that defines them
    registers their checks; until it does, such a type takes any value but None.  Every
    operator's checker sees the change at once (the check is looked up per call).
    """
    if type_name not in _OPAQUE_TYPES and type_name != "Any":
        raise ValueError(
            f"register_type_check: {type_name!r} is not a library-defined schema type; "
            f"expected one of {', '.join(sorted(_OPAQUE_TYPES))}"
        )
    _LIBRARY_CHECKS[type_name] = ok


def _library_check(name: str) -> Callable[[object], bool]:
    get = _LIBRARY_CHECKS.get

    def ok(value: object) -> bool:
        fn = get(name)
        return value is not None if fn is None else value is not None and fn(value)

    return ok


def _base_check(name: str) -> Check:
    """The check for a base type; the library's types (ScalarType, Device, ...) use the check
    it registered (``register_type_check``), else take any non-None value, as ``Any`` does."""
    ok = _BASE_CHECKS.get(name)
    if ok is None:
        ok = _library_check(name) if name in _OPAQUE_TYPES else _is_not_none
    return Check(ok, name, _type_name)


def _optional_check(inner: Check) -> Check:
    """``T?``: None or a ``T``."""
    inner_ok = inner.ok

    def ok(value: object) -> bool:
        return value is None or inner_ok(value)

    return Check(ok, inner.expected + "?", inner.describe)


def _list_check(inner: Check, size: int | None, broadcast: bool) -> Check:
    """``T[]`` / ``T[N]``: a list or tuple of ``T``; ``broadcast`` also takes one ``T``.

    N is not checked against the length: like PyTorch's argument parser, we leave that
    to the kernel (``sum.dim_IntList`` takes ``int[1]? dim`` and ``dim=[0, 1]`` is fine).
    """
    inner_ok = inner.ok
    expected = f"{inner.expected}[{'' if size is None else size}]"
    # Elements of these exact types pass without a call (``[0, 1]`` for ``int[]``): lists
    # are checked on every call (Note [Validating every call]).
    exact = {"int": int, "SymInt": int, "bool": bool, "str": str}.get(inner.expected)

    def ok(value: object) -> bool:
        if isinstance(value, (list, tuple)):
            for item in value:  # noqa: SIM110 (a loop beats all() over a generator here)
                if type(item) is not exact and not inner_ok(item):
                    return False
            return True
        return broadcast and inner_ok(value)

    def describe(value: object) -> str:
        if isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                if not inner_ok(item):
                    return f"{type(value).__name__} whose element {i} is {inner.describe(item)}"
        return _type_name(value)

    return Check(ok, expected, describe)


# ---------------------------------------------------------------------------------------
# Types and alias annotations


BASE_TYPES: Final = frozenset(
    {
        "Tensor", "int", "SymInt", "float", "bool", "str", "Scalar", "ScalarType", "Layout",
        "Device", "MemoryFormat", "Generator", "Dimname", "complex", "Stream", "Storage", "Any",
    }
)  # fmt: skip
_IDENT_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
# Identifiers that mean a value, so they cannot name an EnumDefault.
KEYWORD_VALUES: Final = frozenset({"None", "True", "False", "inf", "nan", "infj", "nanj"})


def is_ident(text: object) -> bool:
    return isinstance(text, str) and _IDENT_RE.fullmatch(text) is not None


@dataclass(frozen=True)
class AliasInfo:
    """An alias annotation: ``a``, ``a!`` (written in place), ``a -> *``, ``b|a``.

    ``after`` defaults to ``before`` (no arrow), as in PyTorch; ``*`` is the wildcard set.
    """

    before: tuple[str, ...]
    after: tuple[str, ...] = ()
    is_write: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "before", tuple(self.before))
        object.__setattr__(self, "after", tuple(self.after) or self.before)
        for alias_set in self.before + self.after:
            if alias_set != "*" and not is_ident(alias_set):
                raise ValueError(f"alias set must be an identifier or '*', not {alias_set!r}")
        if not self.before:
            raise ValueError("an alias annotation needs at least one alias set")

    def __str__(self) -> str:
        text = "|".join(self.before) + ("!" if self.is_write else "")
        if self.after != self.before:
            text += " -> " + "|".join(self.after)
        return text


@dataclass(frozen=True)
class BaseType:
    """A named type: ``Tensor``, ``int``, ``SymInt``, ``Scalar``, ``ScalarType``, ..."""

    name: str

    def __post_init__(self) -> None:
        if self.name not in BASE_TYPES:
            raise ValueError(f"unknown type specifier {self.name!r}; {KNOWN_TYPES}")

    def __str__(self) -> str:
        return self.name

    @property
    def tensor_kind(self) -> str | None:
        """``"tensor"`` for Tensor, else None."""
        return "tensor" if self.name == "Tensor" else None

    @property
    def is_tensor_like(self) -> bool:
        return self.name == "Tensor"


@dataclass(frozen=True)
class OptionalType:
    """``T?``: a ``T`` or None."""

    elem: SchemaType

    def __post_init__(self) -> None:
        if isinstance(self.elem, OptionalType):
            raise ValueError(f"an optional type cannot be optional again: '{self.elem}?'")

    def __str__(self) -> str:
        return f"{self.elem}?"

    @property
    def tensor_kind(self) -> str | None:
        """``"optional_tensor"`` for ``Tensor?``; ``"tensor_list"`` for ``Tensor[]?`` too."""
        kind = self.elem.tensor_kind
        return "optional_tensor" if kind == "tensor" else kind

    @property
    def is_tensor_like(self) -> bool:
        return self.tensor_kind is not None


@dataclass(frozen=True)
class ListType:
    """``T[]`` or the fixed-size ``T[N]``."""

    elem: SchemaType
    size: int | None = None

    def __post_init__(self) -> None:
        if self.size is not None and (type(self.size) is not int or self.size < 1):
            raise ValueError(f"a list size must be a positive int, not {self.size!r}")

    def __str__(self) -> str:
        return f"{self.elem}[{'' if self.size is None else self.size}]"

    @property
    def tensor_kind(self) -> str | None:
        """``"tensor_list"`` for ``Tensor[]`` and ``Tensor?[]``, else None."""
        return "tensor_list" if self.elem.tensor_kind in ("tensor", "optional_tensor") else None

    @property
    def is_tensor_like(self) -> bool:
        return self.tensor_kind is not None


SchemaType: TypeAlias = "BaseType | OptionalType | ListType"
KNOWN_TYPES: Final = "types understood here: " + ", ".join(sorted(BASE_TYPES, key=str.lower))


def type_text(t: SchemaType, alias: AliasInfo | None) -> str:
    """The type as written, with the alias annotation right after the base name."""
    if isinstance(t, BaseType):
        return t.name if alias is None else f"{t.name}({alias})"
    if isinstance(t, OptionalType):
        return type_text(t.elem, alias) + "?"
    return f"{type_text(t.elem, alias)}[{'' if t.size is None else t.size}]"


@functools.cache
def check_for(t: SchemaType) -> Check:
    if isinstance(t, BaseType):
        return _base_check(t.name)
    if isinstance(t, OptionalType):
        return _optional_check(check_for(t.elem))
    broadcast = (
        t.size is not None and isinstance(t.elem, BaseType) and t.elem.name in BROADCAST_ELEMENTS
    )
    return _list_check(check_for(t.elem), t.size, broadcast)


# ---------------------------------------------------------------------------------------
# Default values


@dataclass(frozen=True)
class EnumDefault:
    """A bare name used as a default (``contiguous_format``, ``Mean``, ``long``), kept as is."""

    name: str

    def __post_init__(self) -> None:
        if not is_ident(self.name) or self.name in KEYWORD_VALUES:
            raise ValueError(f"an enum default must be a plain identifier, not {self.name!r}")

    def __str__(self) -> str:
        return self.name


_OPAQUE_TYPES: Final = frozenset(
    {"ScalarType", "Layout", "Device", "MemoryFormat", "Generator", "Dimname", "Stream", "Storage"}
)


# The bare names a default may use, per type, as PyTorch's schema parser takes them
# (``int reduction=Mean``, ``ScalarType dtype=long``, ``MemoryFormat m=contiguous_format``);
# any other name is refused when the schema is defined.
_ENUM_DEFAULTS: Final[dict[str, frozenset[str]]] = {
    "int": frozenset({"Mean"}),
    "SymInt": frozenset({"Mean"}),
    "MemoryFormat": frozenset({"contiguous_format"}),
    "Layout": frozenset({"strided"}),
    "ScalarType": frozenset(
        {
            "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
            "float32", "float64", "complex32", "complex64", "complex128", "byte", "char",
            "short", "int", "long", "half", "float", "double", "chalf", "cfloat", "cdouble",
        }
    ),
}  # fmt: skip


def coerce_default(t: SchemaType, value: object) -> object:
    """``value`` as the default of a ``t`` argument (lists become tuples, ints floats for
    ``float``), or ValueError saying why it does not fit."""
    if isinstance(t, OptionalType):
        return None if value is None else coerce_default(t.elem, value)
    if isinstance(t, ListType):
        if isinstance(value, (list, tuple)):
            # The length of a list default is not checked against N: ATen itself has
            # ``int[1] dim=[-2, -1]`` and ``int[2] stride=[]`` (empty: "like kernel_size").
            return tuple(coerce_default(t.elem, item) for item in value)
        elem = t.elem
        if t.size is not None and isinstance(elem, BaseType) and elem.name in BROADCAST_ELEMENTS:
            return coerce_default(elem, value)
        raise ValueError(f"{t} cannot default to {_literal_kind(value)}")
    name = t.name
    kind = type(value)
    if name == "Any" and _is_literal(value):
        return _freeze(value)
    if isinstance(value, EnumDefault):
        if value.name in _ENUM_DEFAULTS.get(name, ()):
            return value
        allowed = ", ".join(sorted(_ENUM_DEFAULTS.get(name, ()))) or "none"
        raise ValueError(
            f"{name} cannot default to the name {value.name!r} (names {name} takes: {allowed})"
        )
    if name in ("int", "SymInt") and kind is int:
        return value
    if name == "float" and isinstance(value, (int, float)) and kind is not bool:
        try:
            return float(value)
        except OverflowError:
            raise ValueError(f"{value} is too large for a float") from None
    if name == "complex" and isinstance(value, (int, float, complex)) and kind is not bool:
        try:
            return complex(value)
        except OverflowError:
            raise ValueError(f"{value} is too large for a complex") from None
    if name == "Scalar" and kind in (bool, int, float, complex):
        return value
    if (name == "bool" and kind is bool) or (name == "str" and kind is str):
        return value
    if name in _OPAQUE_TYPES and kind in (int, str):
        return value
    if name == "Tensor":
        raise ValueError("a Tensor can only default to None, and only when optional (Tensor?)")
    raise ValueError(f"{name} cannot default to {_literal_kind(value)}")


def _is_literal(value: object) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_is_literal(item) for item in value)
    return value is None or type(value) in (bool, int, float, complex, str, EnumDefault)


def _freeze(value: object) -> object:
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(item) for item in value)
    return value


def _literal_kind(value: object) -> str:
    if isinstance(value, EnumDefault):
        return f"the name {value.name!r}"
    return "None" if value is None else f"{type(value).__name__} {default_text(value)}"


ESCAPES: Final = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t", "\r": "\\r",
                   "\f": "\\f", "\v": "\\v", "\a": "\\a", "\b": "\\b"}  # fmt: skip
UNESCAPES: Final = {v[1]: k for k, v in ESCAPES.items()} | {'"': '"'}


def default_text(value: object) -> str:
    """A default value in schema syntax; parses back to an equal value."""
    if isinstance(value, float):
        return repr(value)  # repr round-trips exactly; also 'inf', 'nan'
    if isinstance(value, complex):
        # Printed as real+imagj and parsed back part by part, not as arithmetic,
        # so that signed zeros and non-finite parts survive the round trip.
        sign = "-" if math.copysign(1.0, value.imag) < 0 else "+"
        imag = repr(abs(value.imag)) + "j"
        if value.real == 0 and math.copysign(1.0, value.real) > 0:
            return imag if sign == "+" else "-" + imag
        return f"{value.real!r}{sign}{imag}"
    if isinstance(value, str):
        return "'" + "".join(ESCAPES.get(c, c) for c in value) + "'"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(default_text(item) for item in value) + "]"
    return str(value)  # None, bool, int, EnumDefault


def default_key(value: object) -> object:
    """Equality key for defaults: by type and exact value, so 1 != 1.0 != True, nan == nan."""
    if isinstance(value, (float, complex)):
        return (type(value), repr(value))
    if isinstance(value, tuple):
        return tuple(default_key(item) for item in value)
    return (type(value), value)


# ---------------------------------------------------------------------------------------
# Binding


# Note [Bind fast path]
# ~~~~~~~~~~~~~~~~~~~~~
# A call is validated by its operator's generated checker (Note [Validating every
# call], in ``_validate``), not by binding, unless no Python signature can spell its
# schema.  ``bind`` maps a call onto the schema's names where they are needed: the
# autograd layer, for a recorded call's formula (``bind_trusted``; most calls without
# keywords are bound only when the formula first reads them, Note [Recording cost] in
# tensor/autograd/_layer.py), in-place autograd, autocast decompositions,
# ``autograd.Function``, ``opcheck``, a refused call (bound again to say which argument
# is wrong), and every call of a schema that no Python signature can spell.  So the
# Binder precomputes what it can: the name -> index map, one ``ok`` callable per
# argument, and for each possible number of positional values the dict of defaults
# that fills the rest (``_tails``), or None when some argument after them is required.
# A call without keywords is then one loop over the positional values plus one
# ``dict.update``; ``bind_trusted`` skips the checks and fills in a copy of a dict of
# every name in order (``_templates``, made on first use).  Defaults are immutable
# (numbers, strings, tuples), so sharing the dicts' values between calls is safe.


class Binder:
    """Binds calls for one schema; built by ``FunctionSchema`` on first use."""

    __slots__ = (
        "_defaults",
        "_index",
        "_oks",
        "_tails",
        "_templates",
        "checks",
        "is_vararg",
        "names",
        "num_positional",
        "qualified_name",
        "signature",
    )

    def __init__(
        self,
        qualified_name: str,
        signature: str,
        names: tuple[str, ...],
        kwarg_only: tuple[bool, ...],
        defaults: tuple[object, ...],
        checks: tuple[Check, ...],
        is_vararg: bool,
    ) -> None:
        self.qualified_name = qualified_name
        self.signature = signature  # the schema text after the qualified name
        self.names = names
        self.num_positional = sum(1 for k in kwarg_only if not k)
        self.checks = checks
        self.is_vararg = is_vararg
        self._defaults = defaults
        self._index = {name: i for i, name in enumerate(names)}
        self._oks = tuple(c.ok for c in checks)
        tails: list[dict[str, object] | None] = []
        for start in range(self.num_positional + 1):
            rest = range(start, len(names))
            if any(defaults[i] is NO_DEFAULT for i in rest):
                tails.append(None)
            else:
                tails.append({names[i]: defaults[i] for i in rest})
        self._tails = tuple(tails)
        self._templates: tuple[dict[str, object] | None, ...] | None = None  # bind_trusted

    def bind(
        self, args: tuple[object, ...], kwargs: Mapping[str, object], op_name: str | None
    ) -> dict[str, object]:
        nargs = len(args)
        npos = self.num_positional
        extra: tuple[object, ...] = ()
        if nargs > npos:
            if not self.is_vararg:
                self._fail(
                    op_name,
                    f"expected at most {npos} positional argument{'s' * (npos != 1)} "
                    f"but got {nargs}",
                )
            extra = tuple(args[npos:])
            args = args[:npos]
            nargs = npos
        names = self.names
        oks = self._oks
        out: dict[str, object] = {}
        for i in range(nargs):
            value = args[i]
            if not oks[i](value):
                self._type_error(op_name, i, value)
            out[names[i]] = value
        if not kwargs:
            tail = self._tails[nargs]
            if tail is None:
                self._missing(op_name, nargs, kwargs)
            else:
                out.update(tail)
        else:
            index = self._index
            for key in kwargs:
                i = index.get(key, -1)
                if i < 0:
                    self._unexpected(op_name, key)
                if i < nargs:
                    self._fail(op_name, f"got multiple values for {self._argument(i)}")
            defaults = self._defaults
            for i in range(nargs, len(names)):
                name = names[i]
                if name in kwargs:
                    value = kwargs[name]
                    if not oks[i](value):
                        self._type_error(op_name, i, value)
                    out[name] = value
                else:
                    default = defaults[i]
                    if default is NO_DEFAULT:
                        self._missing(op_name, i, kwargs)
                    out[name] = default
        if self.is_vararg:
            out[VARARGS_KEY] = extra
        return out

    def bind_trusted(
        self, args: tuple[object, ...], kwargs: Mapping[str, object]
    ) -> dict[str, object]:
        """``bind`` for a call known to fit: positional values zipped with their names and
        the defaults' tail added, without the per-argument checks."""
        if not kwargs:
            templates = self._templates
            if templates is None:
                templates = self._templates = self._make_templates()
            if len(args) < len(templates):
                out = templates[len(args)]
                if out is not None:
                    out = out.copy()  # keys in schema order already; values filled in place
                    out.update(zip(self.names, args, strict=False))  # args may be fewer
                    return out
        return self.bind(args, kwargs, None)

    def _make_templates(self) -> tuple[dict[str, object] | None, ...]:
        """Per number of positional values: every name in order, defaults filled."""
        if self.is_vararg:
            return ()
        return tuple(
            None if tail is None else {**dict.fromkeys(self.names[:n]), **tail}
            for n, tail in enumerate(self._tails)
        )

    # Error path: everything below runs only when a call does not fit.

    def _argument(self, i: int) -> str:
        return f"argument '{self.names[i]}' (position {i + 1})"

    def _fail(self, op_name: str | None, detail: str) -> NoReturn:
        raise SchemaBindError(f"{op_name or self.qualified_name}{self.signature}: {detail}")

    def _type_error(self, op_name: str | None, i: int, value: object) -> NoReturn:
        check = self.checks[i]
        self._fail(
            op_name,
            f"{self._argument(i)} must be {check.expected}, not {check.describe(value)}",
        )

    def _missing(self, op_name: str | None, start: int, kwargs: Mapping[str, object]) -> NoReturn:
        for i in range(start, len(self.names)):
            if self._defaults[i] is NO_DEFAULT and self.names[i] not in kwargs:
                kind = "keyword-only argument" if i >= self.num_positional else "argument"
                self._fail(op_name, f"missing required {kind} '{self.names[i]}' (position {i + 1})")
        self._fail(op_name, "missing a required argument")  # unreachable: callers checked

    def _unexpected(self, op_name: str | None, key: str) -> NoReturn:
        valid = ", ".join(self.names) or "(none)"
        self._fail(
            op_name,
            f"got an unexpected keyword argument {key!r}; valid keywords are {valid}",
        )

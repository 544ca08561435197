"""Binding a Python call onto a schema's arguments: the ``Binder``.

Imports: ``dispatch._schema_types`` (the value checks and ``NO_DEFAULT``).
``FunctionSchema`` builds one ``Binder`` per schema on first use; the generated
checkers (``dispatch._validate``) are the fast path that accepts exactly what it
accepts (Note [Validating every call]).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NoReturn

from ._schema_types import NO_DEFAULT, VARARGS_KEY, Check, SchemaBindError

__all__ = ["Binder"]

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

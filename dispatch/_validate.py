"""Call validation: one generated checker per schema, run before any kernel.

Imports: the standard library and ``dispatch._schema_types``.

Note [Validating every call]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
PyTorch's argument parser refuses a call that does not fit the schema before any
kernel runs.  Kernels here are often written ``def k(*args, **kwargs)`` (fallbacks,
wrappers, modes), so a kernel failing is no proof of a bad call and a kernel running
is no proof of a good one: every entry validates first.  To keep that cheap, each
schema gets a checker generated as Python source with the schema's own signature:

    def check(self, other, *, alpha=_D):
        if alpha is not _D and not (type(alpha) in _T2 or _ok2(alpha)): _bad(2, alpha)

CPython binds the call onto that signature (arity, unknown and duplicate keywords,
keyword-only arguments) in C, and only the non-tensor arguments are type-tested,
exact builtin types first.  An omitted argument is the sentinel ``_D`` and costs one
``is``.  Tensor arguments are left out on purpose: the call path reads their
``_dispatch_bits`` to compute the key set anyway, and a value without them sends it
to the slow path, which checks the whole call (``_slow_bits`` and ``_optional_bits``
in ``_callpath.py``).  When CPython's binding fails, the ``Binder`` re-checks the call
to say which argument is wrong in the schema's terms.  Schemas a Python signature
cannot spell (a ``...`` vararg, an argument named with a Python keyword, or with a
leading underscore, the checker's own names) use the ``Binder`` on every call instead:
slower, and rare.  An operator makes its checker on its first call
(``_CheckOnFirstCall`` in ``_operator.py``), so defining one compiles nothing.

The fixed-arity entries (``call1``/``call2``, Note [Specialised call paths]) need no
checker call: whether one or two positional values fit is known per schema
(``arity_ok``), and the second value's type is one set lookup (``fast_types``).
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from types import CodeType
from typing import Any, NoReturn

from ._schema_types import (
    NO_DEFAULT,
    BaseType,
    ListType,
    OptionalType,
    SchemaType,
    check_for,
)

__all__ = ["arity_ok", "fast_types", "make_checker"]

_D = object()  # an omitted argument, in generated checkers

# Compiled checker code by source text.  Schemas that differ only in names and types
# the source does not spell share it (``import tensor``: 490 checkers, 179 sources), and
# compile() is most of a checker's cost (~50 us).  A code object is immutable; each
# checker is still its own function, over its own globals (the checks, the defaults).
# Bounded, as the parse cache is (Note [Schema parse cache]).
_CODE: dict[str, CodeType] = {}
_CODE_MAX = 4096

# The builtin types that pass each base check outright (the check itself runs otherwise).
_EXACT: dict[str, frozenset[type]] = {
    "int": frozenset({int}),
    "SymInt": frozenset({int}),
    "float": frozenset({float, int}),
    "complex": frozenset({complex, float, int}),
    "bool": frozenset({bool}),
    "str": frozenset({str}),
    "Scalar": frozenset({int, float, bool, complex}),
}


def fast_types(t: SchemaType) -> frozenset[type]:
    """Types whose every value fits ``t`` (empty when none can be told by type alone)."""
    if isinstance(t, OptionalType):  # None fits outright, whatever the element type
        return fast_types(t.elem) | {type(None)}
    if isinstance(t, BaseType):
        return _EXACT.get(t.name, frozenset())
    return frozenset()


def int_list(t: SchemaType) -> bool:
    """Whether ``t`` is ``int[]`` or ``SymInt[]`` of no fixed size (or one of them
    optional): a list whose elements are all ints fits it outright, which the call paths
    test without the checker (``x.permute([1, 0])``, ``x.view([2, -1])``; Note
    [Validating every call])."""
    if isinstance(t, OptionalType):
        t = t.elem
    return (
        isinstance(t, ListType)
        and t.size is None
        and isinstance(t.elem, BaseType)
        and t.elem.name in ("int", "SymInt")
    )


def arity_ok(schema: Any, n: int) -> bool:
    """Whether ``n`` positional values and no keywords fit ``schema``."""
    if schema.is_vararg:
        return n >= schema.min_positional
    return schema.min_positional <= n <= schema.num_positional and all(
        a.has_default for a in schema.kwarg_only
    )


def _checkable(t: SchemaType) -> bool:
    """Whether a value of ``t`` needs the checker (tensor kinds are checked by the call path)."""
    return t.tensor_kind is None


def make_checker(schema: Any, op_name: str) -> Callable[..., None]:
    """The checker for ``schema``: call it with the call's arguments; it returns None or
    raises ``SchemaBindError`` naming ``op_name``, the argument, what was expected and
    what was given."""
    names = [a.name for a in schema.arguments]
    if (
        schema.is_vararg
        or any(keyword.iskeyword(n) or n.startswith("_") for n in names)
        or len(set(names)) != len(names)
    ):
        binder = schema._binder

        def check(*args: Any, **kwargs: Any) -> None:
            binder.bind(args, kwargs, op_name)

        return check

    def bad(i: int, value: object) -> NoReturn:
        schema._binder._type_error(op_name, i, value)
        raise AssertionError("unreachable")  # _type_error raises

    env: dict[str, Any] = {"_D": _D, "_bad": bad}
    params: list[str] = []
    body: list[str] = []
    star = False
    for i, a in enumerate(schema.arguments):
        if a.kwarg_only and not star:
            params.append("*")
            star = True
        params.append(a.name if a.default is NO_DEFAULT else f"{a.name}=_D")
        if not _checkable(a.type):
            continue
        t, test, v = a.type, "", a.name
        if isinstance(t, OptionalType):  # inline, without the optional check's own call
            t, test = t.elem, f"{v} is None or "
        env[f"_ok{i}"] = check_for(t).ok
        guard = "" if a.default is NO_DEFAULT else f"{v} is not _D and "
        elem = fast_types(t.elem) if isinstance(t, ListType) else frozenset()
        if elem:
            # A list of ints (sizes, dims): the loop inline, exact element types first;
            # anything else (another element type, one value for ``int[2]``) takes the
            # list's own check.
            env[f"_E{i}"] = elem
            outer = f"{guard}{v} is not None" if test else guard.removesuffix(" and ")
            pad = "        " if outer else "    "
            if outer:
                body.append(f"    if {outer}:")
            body.append(f"{pad}if type({v}) is list or type({v}) is tuple:")
            body.append(f"{pad}    for _e in {v}:")
            body.append(
                f"{pad}        if type(_e) not in _E{i} and not _ok{i}({v}): _bad({i}, {v})"
            )
            body.append(f"{pad}elif not _ok{i}({v}): _bad({i}, {v})")
            continue
        exact = fast_types(t)
        if exact:
            env[f"_T{i}"] = exact
            test += f"type({v}) in _T{i} or "
        test = f"({test}_ok{i}({v}))"
        body.append(f"    if {guard}not {test}: _bad({i}, {v})")
    source = f"def check({', '.join(params)}):\n" + ("\n".join(body) or "    pass") + "\n"
    code = _CODE.get(source)
    if code is None:
        # One filename for every checker: compile() interns it, and operators come and go.
        code = compile(source, "<dispatch schema checker>", "exec")
        if len(_CODE) < _CODE_MAX:
            _CODE[source] = code
    exec(code, env)  # noqa: S102
    fn = env["check"]
    fn.__qualname__ = fn.__name__ = f"check_{schema.base_name}"
    fn.source = source  # for reading: what this operator's calls are checked with
    return fn

"""Schema inference from a Python function's annotations (``torch.library.infer_schema``).

Imports: the standard library and ``dispatch._schema``.

A parameter annotated with a tensor class (any class whose instances carry
``_dispatch_bits``) is a ``Tensor``.  String annotations (``from __future__ import
annotations``) are resolved by a small parser that looks names up in the
function's globals and builtins; nothing is ever evaluated.
"""

from __future__ import annotations

import builtins
import collections.abc
import inspect
import re
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any

from ._schema import parse_schema

__all__ = ["UNKNOWN_MUTATES", "infer_schema"]

UNKNOWN_MUTATES = "unknown"
_SEQUENCES = (list, tuple, collections.abc.Sequence, typing.Sequence, list, tuple)
_SCALARS = {int: "SymInt", float: "float", bool: "bool", str: "str", complex: "complex"}
_SCALAR_UNION = frozenset({int, float, bool})


class _Unsupported(Exception):
    pass


def _is_tensor_class(t: object) -> bool:
    return isinstance(t, type) and hasattr(t, "_dispatch_bits")


def _dtype_like(t: object) -> str | None:
    """``tensor.dtype`` / ``tensor.device`` classes map to ScalarType / Device by name."""
    name = getattr(t, "__name__", "")
    return {"dtype": "ScalarType", "device": "Device", "Number": "Scalar"}.get(name)


def _schema_type(t: object, where: str) -> str:
    origin = typing.get_origin(t)
    args = typing.get_args(t)
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        optional = "?" if len(rest) < len(args) else ""
        if len(rest) == 3 and set(rest) == _SCALAR_UNION:  # torch: a Scalar
            return "Scalar" + optional
        if len(rest) == 1 and optional:
            return _schema_type(rest[0], where) + "?"
        raise _Unsupported(
            f"{where} has unsupported union type {t}; only `X | None` and "
            "`int | float | bool` (a Scalar) are allowed"
        )
    if origin in _SEQUENCES:
        if origin in (tuple, tuple) and not (len(args) == 2 and args[1] is Ellipsis):
            raise _Unsupported(f"{where}: use Sequence[X] or list[X] for lists, not {t}")
        if not args:
            raise _Unsupported(f"{where}: a list annotation needs an element type, got {t}")
        elem = _schema_type(args[0], where)
        if elem not in ("Tensor", "Tensor?", "SymInt", "float", "bool", "Scalar"):
            raise _Unsupported(f"{where} has unsupported list element type {args[0]}")
        return elem + "[]"
    if _is_tensor_class(t):
        return "Tensor"
    if t in _SCALARS:
        return _SCALARS[t]
    special = _dtype_like(t)
    if special is not None:
        return special
    raise _Unsupported(f"{where} has unsupported type {t!r}")


def _return_type(t: object) -> str:
    if t is None or t is type(None):
        return "()"
    origin = typing.get_origin(t)
    if origin in (tuple, tuple):
        args = typing.get_args(t)
        if len(args) == 2 and args[1] is Ellipsis:
            raise _Unsupported(f"the return annotation {t} has no fixed length")
        return "(" + ", ".join(_one_return(a, "a returned value") for a in args) + ")"
    return _one_return(t, "the return value")


def _one_return(t: object, where: str) -> str:
    text = _schema_type(t, where)
    if text.endswith("?"):  # as torch: a kernel returns a tensor, never None
        raise _Unsupported(f"{where} has unsupported optional type {t}; return a Tensor")
    return text


# -- string annotations, without eval --------------------------------------------------------
_TOKEN = re.compile(r"\s*(?:([A-Za-z_][\w.]*)|(\.\.\.)|(.))")


def _resolve_string(text: str, namespace: dict[str, Any]) -> object:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]  # a quoted annotation under `from __future__ import annotations`
    tokens = [
        m.group(1) or m.group(2) or m.group(3) for m in _TOKEN.finditer(text) if m.group(0).strip()
    ]
    pos = 0

    def name(dotted: str) -> object:
        if dotted == "None":
            return None
        head, *rest = dotted.split(".")
        if head in namespace:
            obj = namespace[head]
        elif hasattr(builtins, head):
            obj = getattr(builtins, head)
        elif hasattr(typing, head):
            obj = getattr(typing, head)
        else:
            raise _Unsupported(f"cannot resolve the name {dotted!r} in annotation {text!r}")
        for attr in rest:
            obj = getattr(obj, attr)
        return obj

    def atom() -> object:
        nonlocal pos
        tok = tokens[pos] if pos < len(tokens) else ""
        pos += 1
        if tok == "...":
            return Ellipsis
        if not tok or not (tok[0].isalpha() or tok[0] == "_"):
            raise _Unsupported(f"cannot read annotation {text!r}")
        base = name(tok)
        if pos < len(tokens) and tokens[pos] == "[":
            pos += 1
            items = [union()]
            while tokens[pos] == ",":
                pos += 1
                items.append(union())
            if tokens[pos] != "]":
                raise _Unsupported(f"cannot read annotation {text!r}")
            pos += 1
            return base[items[0] if len(items) == 1 else tuple(items)]  # type: ignore[index]
        return base

    def union() -> object:
        nonlocal pos
        left = atom()
        while pos < len(tokens) and tokens[pos] == "|":
            pos += 1
            right = atom()
            left = typing.Union[left, right]  # noqa: UP007 - built from parts at run time
        return left

    result = union()
    if pos != len(tokens):
        raise _Unsupported(f"cannot read annotation {text!r}")
    return result


def _annotation(t: object, fn: Callable[..., Any]) -> object:
    if isinstance(t, str):
        return _resolve_string(t, getattr(fn, "__globals__", {}))
    return t


def _default_text(value: object, where: str) -> str:
    if value is None:
        return "None"
    if isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{escaped}"'  # torch spells string defaults with double quotes
    raise _Unsupported(
        f"{where} has an unsupported default {value!r} (None, bool, int, float, str)"
    )


def infer_schema(
    prototype_function: Callable[..., Any],
    /,
    *,
    mutates_args: Iterable[str] | str,
    op_name: str | None = None,
) -> str:
    """The schema ``custom_op`` would infer for ``prototype_function``.

    >>> def f(x: "list[float]", n: int = 2, *, scale: float = 1.0) -> None: ...
    >>> infer_schema(f, mutates_args=())
    '(float[] x, SymInt n=2, *, float scale=1.0) -> ()'
    """
    where = op_name or getattr(prototype_function, "__name__", "function")
    sig = inspect.signature(prototype_function)
    mutates: set[str] | None = None if mutates_args == UNKNOWN_MUTATES else set(mutates_args)
    if isinstance(mutates_args, str) and mutates_args != UNKNOWN_MUTATES:
        raise ValueError(
            f"infer_schema({where}): mutates_args must be a sequence of parameter names or "
            f"'unknown', got the string {mutates_args!r}"
        )
    parts: list[str] = []
    seen_kwonly = False
    for index, p in enumerate(sig.parameters.values()):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise ValueError(f"infer_schema({where}): *args and **kwargs are not supported")
        if p.kind is p.POSITIONAL_ONLY:  # as torch: every schema argument has a name
            raise ValueError(
                f"infer_schema({where}): positional-only parameters are not supported "
                f"({p.name} comes before '/'); remove the '/'"
            )
        if p.annotation is p.empty:
            raise ValueError(
                f"infer_schema({where}): parameter {p.name} must have a type annotation."
            )
        try:
            text = _schema_type(
                _annotation(p.annotation, prototype_function), f"parameter {p.name}"
            )
            default = (
                ""
                if p.default is p.empty
                else "=" + _default_text(p.default, f"parameter {p.name}")
            )
        except _Unsupported as e:
            raise ValueError(f"infer_schema({where}): {e}") from None
        if p.kind is p.KEYWORD_ONLY and not seen_kwonly:
            parts.append("*")
            seen_kwonly = True
        mutated = p.name in mutates if mutates is not None else text.startswith("Tensor")
        if mutated:
            if not text.startswith("Tensor"):
                raise ValueError(
                    f"infer_schema({where}): parameter {p.name} is in mutates_args but is not a "
                    f"Tensor (it is {text})"
                )
            # Alias sets are numbered by parameter position, as torch does.
            text = text.replace("Tensor", f"Tensor(a{index}!)", 1)
        parts.append(f"{text} {p.name}{default}")
    if mutates is not None:
        unknown = mutates - set(sig.parameters)
        if unknown:
            raise ValueError(
                f"infer_schema({where}): mutates_args contains {sorted(unknown)}, which are not "
                f"parameters of the function ({', '.join(sig.parameters)})"
            )
    if sig.return_annotation is sig.empty:
        raise ValueError(f"infer_schema({where}): the return value must have a type annotation")
    try:
        returns = _return_type(_annotation(sig.return_annotation, prototype_function))
    except _Unsupported as e:
        raise ValueError(f"infer_schema({where}): {e}") from None
    schema = f"({', '.join(parts)}) -> {returns}"
    parse_schema("f" + schema)  # what we print must parse
    return schema

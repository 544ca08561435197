"""The Python surface generated from the operator table: ``tt.<name>``, methods, operators.

Imports: ``dispatch``, ``tensor._optable``, ``_ops``, ``_pyapi``, ``_tensor``,
``_promotion`` and ``return_types``.

Each function is generated once from its row's first schema, as source text
compiled at import, so it has a real signature (``inspect.signature`` shows
PyTorch's parameters) and costs one plain Python call: no ``*args``/``**kwargs``
repacking, and keyword-only arguments are forwarded only when the caller gave
them (see Note [Forwarding defaults]).  Rows with several overloads choose one by
which arguments are tensors; rows with irregular signatures use a hand-written
wrapper from ``tensor._pyapi``.  The same code becomes the Tensor method, with the
receiver in place of ``input``.

Note [Forwarding defaults]
Kernels carry the schema's defaults as Python defaults, so a keyword-only argument
left at its default need not be passed.  The generated code tests it with ``is``
against the default object itself: true exactly when the caller omitted it (or
passed that very object), in which case forwarding it changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dispatch import FunctionSchema, ops

from . import _ops, _pyapi, return_types
from ._factories import from_numpy
from ._optable import OP_TABLE, OpInfo, by_name
from ._promotion import PYTHON_SCALARS
from ._tensor import Tensor, wrap_number

__all__ = ["FUNCTIONS", "METHODS", "install"]

FUNCTIONS: dict[str, Callable[..., Any]] = {}  # "sin", "linalg.vector_norm", ...
METHODS: dict[str, Callable[..., Any]] = {}


def _tensor_kind(schema: FunctionSchema, name: str) -> str:
    for a in schema.arguments:
        if a.name == name:
            return a.type.tensor_kind or "other"
    return "absent"


def _condition(kind: str, var: str) -> str:
    if kind == "tensor":
        return f"isinstance({var}, _Tensor)"
    if kind == "optional_tensor":
        return f"({var} is None or isinstance({var}, _Tensor))"
    return f"not isinstance({var}, _Tensor)"


def _generate(op: OpInfo, receiver: str) -> Callable[..., Any]:
    """Source for one function (``receiver="input"``) or method (``receiver="self"``)."""
    schemas = _ops.schemas(op)
    overloads = _ops.overloads(op)
    primary = schemas[0]
    env: dict[str, Any] = {"_Tensor": Tensor, "_packet": getattr(ops.core, op.name)}
    params: list[str] = []
    positional: list[str] = []
    keywords: list[tuple[str, str]] = []  # (name, default variable)
    star = False
    for a in primary.arguments:
        var = receiver if a.name == "self" else a.name
        text = var
        if a.has_default:
            env[f"_d_{var}"] = a.default
            text += f"=_d_{var}"
        if a.kwarg_only:
            if not star:
                params.append("*")
                star = True
            keywords.append((var, f"_d_{var}"))
        else:
            positional.append(var)
        params.append(text)
    names = [a.name for a in primary.arguments]
    # Arguments whose tensor-ness differs between overloads choose the overload.
    discriminants = (
        [n for n in names if len({_tensor_kind(s, n) for s in schemas}) > 1]
        if len(schemas) > 1
        else []
    )
    lines = [f"def {op.name}({', '.join(params)}):"]
    call_pos = ", ".join(positional)
    for i, (schema, ov) in enumerate(zip(schemas, overloads, strict=True)):
        env[f"_ov{i}"] = ov
        wrap = ""
        if len(schema.returns) > 1 and all(r.name for r in schema.returns):
            env[f"_rt{i}"] = return_types.get(op.name, tuple(r.name for r in schema.returns))  # type: ignore[misc]
            wrap = f"_rt{i}._make"
        indent = "    "
        if discriminants:
            conds = [
                _condition(_tensor_kind(schema, n), receiver if n == "self" else n)
                for n in discriminants
            ]
            lines.append(f"    if {' and '.join(conds)}:")
            indent = "        "
        if keywords:
            omitted = " and ".join(f"{k} is {d}" for k, d in keywords)
            given = ", ".join(f"{k}={k}" for k, _ in keywords)
            lines.append(f"{indent}if {omitted}:")
            lines.append(f"{indent}    return {wrap}(_ov{i}({call_pos}))")
            lines.append(
                f"{indent}return {wrap}(_ov{i}({call_pos}{', ' if call_pos else ''}{given}))"
            )
        else:
            lines.append(f"{indent}return {wrap}(_ov{i}({call_pos}))")
        if not discriminants:
            break
    if discriminants:  # no overload fits: the packet raises an error listing them all
        all_args = ", ".join(positional + [f"{k}={k}" for k, _ in keywords])
        lines.append(f"    return _packet({all_args})")
    source = "\n".join(lines) + "\n"
    exec(compile(source, f"<tensor generated: {op.name}>", "exec"), env)  # noqa: S102
    fn: Callable[..., Any] = env[op.name]
    fn.__doc__ = _doc(op, schemas)
    fn.__module__ = "tensor"
    return fn


def _doc(op: OpInfo, schemas: tuple[FunctionSchema, ...]) -> str:
    lines = [f"``{op.function_name or op.name}``: PyTorch's ``{op.name}``, dispatched through"]
    lines.append("``ops.core`` with schema" + ("s" if len(schemas) > 1 else "") + ":")
    lines.append("")
    lines += [f"    core::{s}" for s in schemas]
    return "\n".join(lines)


# -- Python operators ---------------------------------------------------------------------------
# How a reflected operator (``2 - x`` calls ``x.__rsub__(2)``) maps onto the operator's
# overloads: "commute" for symmetric ops, "rsub" for ATen's rsub, "swap" to call the
# Scalar-first overload, "wrap" to wrap the number as a 0-d tensor placed first.
_REFLECTED = {
    "__radd__": "commute",
    "__rmul__": "commute",
    "__rand__": "commute",
    "__ror__": "commute",
    "__rxor__": "commute",
    "__rsub__": "rsub",
    "__rtruediv__": "wrap",
    "__rfloordiv__": "wrap",
    "__rmod__": "swap",
    "__rpow__": "swap",
}


def _by_second_arg(op: OpInfo) -> tuple[Any, Any]:
    """(overload taking a Tensor second argument, overload taking a Scalar one)."""
    tensor_ov = scalar_ov = None
    for schema, ov in zip(_ops.schemas(op), _ops.overloads(op), strict=True):
        args = schema.arguments
        if len(args) < 2 or args[0].type.tensor_kind != "tensor":
            continue
        kind = args[1].type.tensor_kind
        if kind == "tensor" and tensor_ov is None:
            tensor_ov = ov
        elif kind is None and scalar_ov is None:
            scalar_ov = ov
    return tensor_ov, scalar_ov


def _scalar_first(op: OpInfo) -> Any:
    for schema, ov in zip(_ops.schemas(op), _ops.overloads(op), strict=True):
        if schema.arguments[0].type.tensor_kind is None:
            return ov
    raise LookupError(f"{op.name} has no overload taking a Scalar first")


def _dunder(op: OpInfo, name: str) -> Callable[..., Any]:
    env: dict[str, Any] = {
        "_Tensor": Tensor,
        "_SCALARS": PYTHON_SCALARS,
        "_wrap": wrap_number,
        "_ndarray": np.ndarray,
        "_from_numpy": from_numpy,
    }
    tensor_ov, scalar_ov = _by_second_arg(op)
    if op.family == "unary":
        env["_ov"] = _ops.overloads(op)[0]
        source = f"def {name}(self):\n    return _ov(self)\n"
    elif name in _REFLECTED:
        mode = _REFLECTED[name]
        env["_ovT"], env["_ovS"] = tensor_ov, scalar_ov
        # An ndarray on the left (``array - t``): the forward operator, arguments swapped.
        forward = by_name(_FORWARD.get(name, op.name))
        env["_ovA"] = _by_second_arg(forward)[0]
        call = {
            "commute": "_ovS(self, other)",
            "rsub": "_ovS(self, other)",
            "wrap": "_ovT(_wrap(other), self)",
            "swap": "_ovF(other, self)",
        }[mode]
        if mode == "swap":
            env["_ovF"] = _scalar_first(op)
        source = (
            f"def {name}(self, other):\n"
            f"    if isinstance(other, _SCALARS):\n"
            f"        return {call}\n"
            f"    if isinstance(other, _ndarray):\n"
            f"        return _ovA(_from_numpy(other), self)\n"
            f"    return NotImplemented\n"
        )
    else:
        env["_ovT"], env["_ovS"] = tensor_ov, scalar_ov
        source = (
            f"def {name}(self, other):\n"
            f"    if isinstance(other, _Tensor):\n"
            f"        return _ovT(self, other)\n"
        )
        if scalar_ov is not None:
            source += "    if isinstance(other, _SCALARS):\n        return _ovS(self, other)\n"
        # NumPy arrays join as CPU tensors (sharing memory), as in PyTorch.
        source += (
            "    if isinstance(other, _ndarray):\n        return _ovT(self, _from_numpy(other))\n"
        )
        source += "    return NotImplemented\n"
    exec(compile(source, f"<tensor generated: Tensor.{name}>", "exec"), env)  # noqa: S102
    fn: Callable[..., Any] = env[name]
    fn.__qualname__ = f"Tensor.{name}"
    return fn


# Reflected operators whose forward operator is another row (``a - b`` is sub, ``2 - b`` rsub).
_FORWARD = {"__rsub__": "sub"}


def install() -> None:
    """Generate every function, method and operator of the table; set them on Tensor."""
    for op in OP_TABLE:
        custom = _pyapi.WRAPPERS.get(op.py) if op.py else None
        fname = op.function_name
        if fname is not None:
            if custom is not None:
                fn = custom(op) if op.py == "like" else custom
            else:
                fn = _generate(op, "input")
            FUNCTIONS[fname] = fn
        if op.method:
            if custom is not None:
                method = _pyapi.METHOD_WRAPPERS.get(op.py, custom)
            else:
                method = _generate(op, "self")
                method.__qualname__ = f"Tensor.{op.name}"
            METHODS[op.name] = method
        for name in op.dunders + op.rdunders:
            METHODS[name] = _dunder(op, name)
    for name, method in METHODS.items():
        setattr(Tensor, name, method)


install()

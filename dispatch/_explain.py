"""Introspection: ``dump_table`` and ``explain``.

Imports: the standard library and sibling ``dispatch`` modules.

``explain`` computes a call's key set exactly as the call path does and walks
the layers without running a kernel.  It assumes what every layer kernel in
this design does: a kernel at a key above the backends (autocast, autograd,
Python, ADInplaceOrView, BackendSelect) redispatches to ``keyset &
full_after(its key)``; a backend or composite kernel ends the walk.
"""

from __future__ import annotations

from typing import Any

from . import _tls
from ._keys import BACKEND_KEYS, DispatchKey, DispatchKeySet
from ._operator import REQUIRES_GRAD_BIT, OpOverload, OpOverloadPacket, lookup

__all__ = ["dump_table", "explain", "resolve_op"]

_COMPOSITE_SOURCES = frozenset(
    {
        DispatchKey.CompositeImplicitAutograd.name,
        DispatchKey.CompositeExplicitAutograd.name,
        DispatchKey.CompositeExplicitAutogradNonFunctional.name,
    }
)


def resolve_op(op: str | OpOverload | OpOverloadPacket) -> OpOverload:
    if isinstance(op, OpOverload):
        return op
    if isinstance(op, OpOverloadPacket):
        names = op.overloads()
        if len(names) != 1:
            raise ValueError(
                f"{op.name} has several overloads ({', '.join(names)}); name one, "
                f"e.g. {op.name}.{names[0]}"
            )
        return getattr(op, names[0])
    if isinstance(op, str):
        try:
            return lookup(op)
        except KeyError:
            raise KeyError(
                f"no operator named {op!r} is defined; qualified names look like "
                f"'ns::name' or 'ns::name.overload'. Import the module that defines it first."
            ) from None
    raise TypeError(f"expected an operator or its qualified name, got {type(op).__name__}")


def dump_table(qualname: str | OpOverload | OpOverloadPacket) -> str:
    """The computed dispatch table of an operator, one line per runtime key.

    Each line gives the key, the kernel that runs there, and where it came from
    (a direct registration, an alias key, a backend fallback, or missing).

    >>> from dispatch import Library
    >>> with Library("doc_dump", "DEF") as lib:
    ...     lib.define("f(Tensor x) -> Tensor")
    ...     lib.impl("f", abs, "CPU")
    ...     print(dump_table("doc_dump::f").splitlines()[-1])
    'f'
      Undefined             <missing>                                       missing
    """
    return resolve_op(qualname)._dump()


def _tensor_bits(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    schema = op.schema
    schema.check(args, kwargs, op_name=op.name)
    bits = 0
    for index, name, _kind in schema.tensor_arg_indices:
        value = args[index] if index < len(args) else kwargs.get(name)
        values = value if isinstance(value, (list, tuple)) else (value,)
        for v in values:
            bits |= getattr(v, "_dispatch_bits", 0)
    return bits


def explain(op: str | OpOverload | OpOverloadPacket, *args: Any, **kwargs: Any) -> str:
    """Say how a call would dispatch, without running any kernel.

    Shows the key set computed for the call (tensor keys, thread-local include and
    exclude sets, the operator's fallthrough mask), then each layer visited and the
    kernel chosen there, with where it was registered.
    """
    if isinstance(op, OpOverloadPacket):
        overload = op._select(args, kwargs)
    else:
        overload = resolve_op(op)
    state = overload._state
    tensor_bits = _tensor_bits(overload, args, kwargs)
    if tensor_bits & REQUIRES_GRAD_BIT and _tls.state.grad_enabled:
        mask = state.grad_mask
    else:
        mask = state.mask
    included, excluded = _tls.state.included, _tls.state.excluded
    unmasked = tensor_bits | included
    ks = unmasked & ~excluded & mask
    grad = ""
    if tensor_bits & REQUIRES_GRAD_BIT:
        grad = " (an argument requires grad" + (
            ")" if _tls.state.grad_enabled else "; grad mode is off, so grad-only kernels skip)"
        )
    lines = [
        f"{overload.name}: {overload.schema}",
        f"  tensor keys:   {DispatchKeySet.from_bits(tensor_bits)!r}{grad}",
        f"  TLS included:  {DispatchKeySet.from_bits(included)!r}",
        f"  TLS excluded:  {DispatchKeySet.from_bits(excluded)!r}",
        f"  call key set:  {DispatchKeySet.from_bits(ks)!r}",
    ]
    skipped = []
    for key in DispatchKeySet.from_bits(unmasked):
        if key.bit & excluded:
            skipped.append(f"{key.name} (excluded by TLS)")
        elif not key.bit & mask:
            entry = overload._entries[int(key)]
            why = (
                "grad-only " + entry.kernel.name
                if entry.kernel and entry.kernel.grad_only
                else "fallthrough"
            )
            skipped.append(f"{key.name} ({why}, {entry.source})")
    if skipped:
        lines.append("  skipped:       " + ", ".join(skipped))
    lines.append("  layers:")
    step = 1
    while True:
        slot = ks.bit_length()
        key = DispatchKeySet.from_bits(ks).highest_priority_key()
        entry = overload._entries[slot]
        kernel = entry.kernel
        if kernel is None:
            lines.append(
                f"    {step}. {key.name:<20} <missing>: the call raises NotImplementedError"
            )
            break
        lines.append(
            f"    {step}. {key.name:<20} {kernel.name} [{entry.source}] ({kernel.location})"
        )
        is_layer = (
            key is not DispatchKey.Undefined
            and key not in BACKEND_KEYS
            and entry.source not in _COMPOSITE_SOURCES
        )
        if not is_layer:
            if entry.source in _COMPOSITE_SOURCES:
                lines.append("       (a composite kernel: the operators it calls dispatch anew)")
            break
        # c10's full_after keeps PythonDispatcher; drop the key itself so the walk ends.
        ks &= DispatchKeySet.full_after(key).bits & ~key.bit
        step += 1
    return "\n".join(lines)

"""Error messages of the dispatcher, built in one place.

Imports: the standard library and ``dispatch._keys``.

Every message names the operator (with its schema when there is one), the keys
involved, and the next step.  Messages are strings, never tuples.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._keys import DispatchKey, DispatchKeySet

__all__ = [
    "ambiguous_autograd_other",
    "fallthrough_reached",
    "meta_not_implemented",
    "missing_kernel",
    "no_tensor_arguments",
    "undefined_operator",
]

# Backend key -> the device type ``impl`` takes for it; a plug-in device's name replaces
# its PrivateUse key's (``_library.rename_privateuse_backend``).
_KEY_TO_TYPES = {
    DispatchKey.CPU: "cpu",
    DispatchKey.CUDA: "cuda",
    DispatchKey.Meta: "meta",
    DispatchKey.PrivateUse1: "PrivateUse1",
    DispatchKey.PrivateUse2: "PrivateUse2",
    DispatchKey.PrivateUse3: "PrivateUse3",
}


def _available(keys: Iterable[DispatchKey]) -> str:
    return "[" + ", ".join(k.name for k in keys) + "]"


def missing_kernel(
    qualname: str,
    schema: str,
    key: DispatchKey,
    keyset: DispatchKeySet,
    registered: Iterable[DispatchKey],
    table: str,
) -> str:
    kind = "backend" if key in _KEY_TO_TYPES else "dispatch key"
    types = _KEY_TO_TYPES.get(key, key.name)
    if types != key.name and types not in ("cpu", "cuda", "meta"):
        kind = f"backend (device {types!r})"  # a plug-in device's key
    return (
        f"Could not run '{qualname}' with arguments from the '{key.name}' {kind}: "
        f"no kernel is registered for {key.name}, no composite kernel covers it and there is "
        f"no backend fallback for it.\n"
        f"  schema:        {schema}\n"
        f"  call key set:  {keyset!r}\n"
        f"  registered at: {_available(registered)}\n"
        f"To fix it, register a kernel for this key, e.g. "
        f"`impl('{qualname}', '{types}')` or `lib.impl(name, fn, '{key.name}')`, "
        f"or one for every backend with `impl('{qualname}', 'default')`.\n\n{table}"
    )


def no_tensor_arguments(
    qualname: str, schema: str, registered: Iterable[DispatchKey], table: str
) -> str:
    return (
        f"There were no tensor arguments to this function (e.g., you passed an empty list of "
        f"Tensors), but no fallback function is registered for schema {schema}. The key set "
        f"of the call is empty, so only a CompositeExplicitAutogradNonFunctional, "
        f"CompositeExplicitAutograd or CompositeImplicitAutograd kernel can serve it "
        f"(register one with `impl('{qualname}', 'default')`), or give the operator a "
        f"BackendSelect kernel that picks the backend from its arguments. "
        f"Available functions are {_available(registered)}.\n\n{table}"
    )


def fallthrough_reached(qualname: str, key: DispatchKey, keyset: DispatchKeySet) -> str:
    return (
        f"fallthrough_kernel was executed for '{qualname}' at key {key.name} "
        f"(key set {keyset!r}), but it should have been short-circuited by the dispatcher. "
        f"This happens when `redispatch` is given a key set whose highest key falls "
        f"through, or when the Undefined slot holds a fallthrough; redispatch to a key "
        f"that has a real kernel instead."
    )


def meta_not_implemented(qualname: str) -> str:
    return (
        f"{qualname}: attempted to run this operator with Meta tensors, but there was no fake "
        f"impl or Meta kernel registered. Register one with `register_fake('{qualname}')` or "
        f"`impl('{qualname}', 'meta')`."
    )


def undefined_operator(qualname: str) -> str:
    return (
        f"operator '{qualname}' is not defined: it was never defined with `define`, or the "
        f"Library that defined it was destroyed. Define it again (lib.define(schema)) "
        f"before calling it."
    )


def ambiguous_autograd_other(qualname: str) -> str:
    return (
        f"{qualname} has kernels registered to both CompositeImplicitAutograd and a backend "
        f"mapped to AutogradOther. Register an Autograd kernel for it or drop one of them."
    )

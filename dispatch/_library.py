"""Registration handles: ``Library``, ``scoped_library`` and the free ``define``/``impl``.

Imports: the standard library and sibling ``dispatch`` modules.

A ``Library`` remembers an undo callable for everything it registered;
``destroy()`` (or garbage collection, via ``weakref.finalize``) runs them newest
first, which re-exposes whatever its registrations had shadowed.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar, overload

from . import _errors, _registry
from ._keys import PRIVATE_USE_KEYS, DispatchKey, parse_key
from ._operator import OpOverload
from ._schema import parse_schema

__all__ = [
    "Library",
    "define",
    "impl",
    "key_for_type",
    "privateuse_backend_name",
    "rename_privateuse_backend",
    "scoped_library",
]

F = TypeVar("F", bound=Callable[..., Any])

_KINDS = ("DEF", "IMPL", "FRAGMENT")
_RESERVED_NAMESPACES = frozenset({"prim"})
# Live DEF libraries by namespace: only one at a time, as TORCH_LIBRARY.
_DEF_LIBRARIES: dict[str, str] = {}
# Libraries made by the free functions when no ``lib`` is given; they live forever.
_KEEP_ALIVE: dict[str, Library] = {}

_DEVICE_TYPE_TO_KEY = {
    "cpu": DispatchKey.CPU,
    "cuda": DispatchKey.CUDA,
    "meta": DispatchKey.Meta,
    "privateuseone": DispatchKey.PrivateUse1,
    "default": DispatchKey.CompositeExplicitAutograd,
}


def rename_privateuse_backend(key: DispatchKey | str, name: str | None) -> None:
    """Name the device type of a PrivateUse backend key (PyTorch's
    ``torch.utils.rename_privateuse1_backend``, for each of the three keys), so that
    ``impl(qualname, name)`` registers at ``key`` and errors say ``name``.  ``None``
    takes the name back (a plug-in device being removed).

    >>> from dispatch import DispatchKey, key_for_type, rename_privateuse_backend
    >>> rename_privateuse_backend("PrivateUse3", "npu")
    >>> key_for_type("npu")
    <DispatchKey.PrivateUse3: 5>
    >>> rename_privateuse_backend("PrivateUse3", None)
    """
    key = parse_key(key)
    if key not in PRIVATE_USE_KEYS:
        raise ValueError(
            f"rename_privateuse_backend(): {key.name} is not a PrivateUse key; "
            f"expected one of {', '.join(k.name for k in PRIVATE_USE_KEYS)}"
        )
    old = _errors._KEY_TO_TYPES.get(key)
    if name is None:
        if old is not None and _DEVICE_TYPE_TO_KEY.get(old) is key and old != key.name:
            del _DEVICE_TYPE_TO_KEY[old]
        _errors._KEY_TO_TYPES[key] = key.name
        return
    taken = _DEVICE_TYPE_TO_KEY.get(name)
    if (taken is not None and taken is not key) or (
        name in {k.name for k in DispatchKey} and name != key.name
    ):
        raise ValueError(
            f"rename_privateuse_backend(): the device type {name!r} is taken "
            f"(it names {taken.name if taken is not None else 'a dispatch key'}); pick another"
        )
    if old is not None and old != key.name and old != name:
        raise RuntimeError(
            f"rename_privateuse_backend(): {key.name} is already named {old!r}; "
            f"take that name back first (rename_privateuse_backend({key.name!r}, None))"
        )
    _DEVICE_TYPE_TO_KEY[name] = key
    _errors._KEY_TO_TYPES[key] = name


def privateuse_backend_name(key: DispatchKey | str) -> str:
    """The device type a PrivateUse key is named for (its key name when unnamed)."""
    key = parse_key(key)
    return _errors._KEY_TO_TYPES.get(key, key.name)


def key_for_type(device_type: str | DispatchKey) -> DispatchKey:
    """Map a device type (``"cpu"``, ``"cuda"``, ``"meta"``, ``"default"``) or key name."""
    if isinstance(device_type, str) and device_type in _DEVICE_TYPE_TO_KEY:
        return _DEVICE_TYPE_TO_KEY[device_type]
    return parse_key(device_type)


class _LibraryState:
    """What a Library must undo; kept apart from the Library so finalize can run it."""

    __slots__ = ("def_namespace", "undos")

    def __init__(self) -> None:
        self.undos: list[Callable[[], None]] = []
        self.def_namespace: str | None = None

    def destroy(self) -> None:
        with _registry.LOCK:
            while self.undos:
                self.undos.pop()()
            if self.def_namespace is not None:
                _DEF_LIBRARIES.pop(self.def_namespace, None)
                self.def_namespace = None


class Library:
    """A handle that registers operators and kernels, and can undo it all.

    ``kind`` is ``"DEF"`` (defines the namespace; one live at a time), ``"FRAGMENT"``
    (adds definitions to it) or ``"IMPL"`` (kernels only).

    >>> with Library("doc_lib", "DEF") as lib:
    ...     lib.define("twice(Tensor x) -> Tensor")
    ...     lib.impl("twice", lambda x: x, "CPU")
    'twice'
    """

    def __init__(self, ns: str, kind: str, dispatch_key: str | DispatchKey = "") -> None:
        if kind not in _KINDS:
            raise ValueError(f"Unsupported kind: {kind}. Use one of {', '.join(_KINDS)}.")
        if not isinstance(ns, str) or not (ns == "_" or ns.isidentifier()):
            raise ValueError(f"Library namespace must be an identifier, got {ns!r}")
        if ns in _RESERVED_NAMESPACES and kind in ("DEF", "FRAGMENT"):
            raise ValueError(
                f"{ns} is a reserved namespace. Please try creating a library with another name."
            )
        if ns == "_" and kind != "IMPL":
            raise ValueError(
                f"cannot define a {kind} library with the wildcard namespace _; "
                f"use Library('_', 'IMPL') to register backend fallbacks"
            )
        self.ns = ns
        self.kind = kind
        self.dispatch_key = parse_key(dispatch_key) if dispatch_key not in ("", None) else None
        self._state = _LibraryState()
        self._location = _registry.caller_location()
        if kind == "DEF":
            with _registry.LOCK:
                previous = _DEF_LIBRARIES.get(ns)
                if previous is not None:
                    raise RuntimeError(
                        f"Only a single DEF library can be used to register the namespace "
                        f"{ns}; please put all of your definitions in a single DEF library. "
                        f"To add definitions elsewhere use Library({ns!r}, 'FRAGMENT'), and "
                        f"for kernels Library({ns!r}, 'IMPL'). Previous registration of the "
                        f"DEF library was registered at {previous}; latest registration was "
                        f"registered at {self._location}"
                    )
                _DEF_LIBRARIES[ns] = self._location
                self._state.def_namespace = ns
        self._finalizer = weakref.finalize(self, self._state.destroy)

    def __repr__(self) -> str:
        key = f", dispatch_key={self.dispatch_key.name}" if self.dispatch_key else ""
        return f"Library(kind={self.kind}, ns={self.ns}{key}) from {self._location}"

    # -- registration --------------------------------------------------------------------
    def define(
        self, schema: str, alias_analysis: str = "", *, tags: Sequence[str] | str = ()
    ) -> str:
        """Define an operator in this library's namespace; returns its name."""
        self._check_alive("define")
        if self.kind == "IMPL":
            raise RuntimeError(
                f"define() needs a DEF or FRAGMENT library, but {self!r} is an IMPL library"
            )
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis!r}")
        parsed = parse_schema(schema)
        name = parsed.name
        if "::" in name:
            ns, base = name.split("::", 1)
            if ns != self.ns:
                raise ValueError(
                    f"schema {schema!r} names namespace {ns!r} but this library is for {self.ns!r}"
                )
        else:
            base = name
            parsed = parsed.with_name(f"{self.ns}::{name}")
        tags_tuple = (tags,) if isinstance(tags, str) else tuple(tags)
        self._state.undos.append(
            _registry.define_op(parsed, tags_tuple, _registry.caller_location())
        )
        return f"{base}.{parsed.overload_name}" if parsed.overload_name else base

    def impl(
        self,
        op_name: str | OpOverload,
        fn: Callable[..., Any],
        dispatch_key: str | DispatchKey = "",
        *,
        with_keyset: bool = False,
        allow_override: bool = False,
        grad_only: bool = False,
        location: str | None = None,
    ) -> None:
        """Register ``fn`` for ``op_name`` at ``dispatch_key``.

        With no key it goes to the library's key, else to CompositeImplicitAutograd.
        With ``with_keyset=True`` it is called as ``fn(keyset, *args, **kwargs)``.
        ``grad_only=True`` declares an autograd-layer kernel that only redispatches
        below its key unless an argument requires grad and grad mode is on, so other
        calls skip it (Note [Grad-only kernels] in ``_operator.py``).  ``location``
        (``file:line``) is what ``dump_table`` shows as the registration site; by
        default the caller's line, but a loop that registers kernels made from table
        rows names each row's line instead.
        """
        self._check_alive("impl")
        if self.ns == "_":
            raise RuntimeError(
                "Library('_', 'IMPL') registers backend fallbacks only; use fallback()"
            )
        if not callable(fn):
            raise TypeError(
                f"Input function is required to be a callable but found type {type(fn)}"
            )
        key = self._key(dispatch_key)
        if key is None:
            key = DispatchKey.CompositeImplicitAutograd
        if key is DispatchKey.Undefined:
            raise RuntimeError("kernels cannot be registered at the Undefined key")
        qualname = self._qualify(op_name)
        self._state.undos.append(
            _registry.add_kernel(
                qualname,
                key,
                fn,
                with_keyset=with_keyset,
                allow_override=allow_override,
                location=location or _registry.caller_location(),
                grad_only=grad_only,
            )
        )

    def fallback(
        self,
        fn: Callable[..., Any],
        dispatch_key: str | DispatchKey = "",
        *,
        with_keyset: bool = False,
        allow_override: bool = False,
        grad_only: bool = False,
    ) -> None:
        """Register a backend fallback: ``fn(op, *args, **kwargs)`` for every operator
        whose table has nothing better at that key (``fn(keyset, op, ...)`` with keyset).
        """
        self._check_alive("fallback")
        if self.ns != "_":
            raise RuntimeError(
                f"Fallback can only be registered using library fragment on the global "
                f'namespace "_" but it is {self.ns}. Use Library("_", "IMPL").'
            )
        if not callable(fn):
            raise TypeError(
                f"Input function is required to be a callable but found type {type(fn)}"
            )
        key = self._key(dispatch_key)
        if key is None:
            raise RuntimeError("fallback() needs a dispatch key (argument or library default)")
        self._state.undos.append(
            _registry.add_fallback(
                key,
                fn,
                with_keyset=with_keyset,
                location=_registry.caller_location(),
                allow_override=allow_override,
                grad_only=grad_only,
            )
        )

    # -- lifecycle --------------------------------------------------------------------------
    def destroy(self) -> None:
        """Undo every registration of this library, newest first."""
        self._finalizer()

    @property
    def is_alive(self) -> bool:
        return self._finalizer.alive

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()

    # -- helpers -------------------------------------------------------------------------------
    def _check_alive(self, what: str) -> None:
        if not self._finalizer.alive:
            raise RuntimeError(f"{what}() called on {self!r}, which was already destroyed")

    def _key(self, dispatch_key: str | DispatchKey) -> DispatchKey | None:
        if dispatch_key in ("", None):
            return self.dispatch_key
        return parse_key(dispatch_key)

    def _qualify(self, op_name: str | OpOverload) -> str:
        if isinstance(op_name, OpOverload):
            op_name = op_name.name
        if not isinstance(op_name, str) or not op_name:
            raise TypeError(f"op_name must be a str or an OpOverload, got {op_name!r}")
        if "::" in op_name:
            ns, rest = op_name.split("::", 1)
            if ns != self.ns:
                raise ValueError(
                    f"Explicitly provided namespace ({ns}) in operator name {op_name!r} does "
                    f"not match the namespace of this library ({self.ns}); use "
                    f"Library({ns!r}, 'IMPL') to register kernels for it"
                )
        else:
            rest = op_name
        if rest.endswith(".default"):
            rest = rest[: -len(".default")]
        return f"{self.ns}::{rest}"


@contextmanager
def scoped_library(ns: str, kind: str, dispatch_key: str = "") -> Iterator[Library]:
    """A Library that is destroyed when the block ends, also on error.

    >>> with scoped_library("doc_scoped", "FRAGMENT") as lib:
    ...     lib.define("f(Tensor x) -> Tensor")
    'f'
    """
    lib = Library(ns, kind, dispatch_key)
    try:
        yield lib
    finally:
        lib.destroy()


def _split_qualname(qualname: str) -> tuple[str, str]:
    if not isinstance(qualname, str) or "::" not in qualname:
        raise ValueError(
            f"expected a qualified operator name 'namespace::name[.overload]', got {qualname!r}"
        )
    ns, name = qualname.split("::", 1)
    return ns, name


def _library_for(ns: str, lib: Library | None) -> Library:
    if lib is not None:
        return lib
    with _registry.LOCK:
        keeper = _KEEP_ALIVE.get(ns)
        if keeper is None or not keeper.is_alive:
            keeper = Library(ns, "FRAGMENT")
            _KEEP_ALIVE[ns] = keeper
    return keeper


def define(
    qualname: str, schema: str, *, lib: Library | None = None, tags: Sequence[str] = ()
) -> OpOverload:
    """Define ``ns::name`` with ``schema`` (argument list and returns only).

    >>> op = define("doc_define::square", "(Tensor x) -> Tensor")
    >>> str(op.schema)
    'doc_define::square(Tensor x) -> Tensor'
    """
    ns, name = _split_qualname(qualname)
    if not schema.lstrip().startswith("("):
        raise ValueError(
            f"define({qualname!r}, ...): schema must start with '(' (the name comes from the "
            f"qualname), got {schema!r}"
        )
    library = _library_for(ns, lib)
    library.define(name + schema, tags=tags)
    op: OpOverload = _registry.OPERATORS[f"{ns}::{name}"]
    return op


@overload
def impl(
    qualname: str | OpOverload,
    types: str | Sequence[str],
    func: None = None,
    *,
    lib: Library | None = None,
) -> Callable[[F], F]: ...
@overload
def impl(
    qualname: str | OpOverload, types: str | Sequence[str], func: F, *, lib: Library | None = None
) -> F: ...
def impl(
    qualname: str | OpOverload,
    types: str | Sequence[str],
    func: Callable[..., Any] | None = None,
    *,
    lib: Library | None = None,
) -> Any:
    """Register ``func`` for device types (``"cpu"``, ``"cuda"``, ``"meta"``,
    ``"default"``) or key names; works as a decorator and returns ``func``.
    """
    name = qualname.name if isinstance(qualname, OpOverload) else qualname
    ns, _ = _split_qualname(name)
    keys = [key_for_type(t) for t in ((types,) if isinstance(types, str) else types)]

    def register(fn: F) -> F:
        library = _library_for(ns, lib)
        for key in keys:
            library.impl(name, fn, key)
        return fn

    if func is None:
        return register
    return register(func)

"""Operator packets: ``ns::name`` with all its overloads, and the registry of them.

Imports: the standard library and sibling ``dispatch`` modules (``_errors``,
``_schema``); overloads are known only through the methods a packet calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _errors
from ._schema import SchemaBindError

if TYPE_CHECKING:
    from ._operator import OpOverload

__all__ = ["PACKETS", "PACKET_OBJECTS", "OpOverloadPacket", "overloads_of", "packet_of"]

# (ns, name) -> overloads in definition order, defined or not.  Written only by
# ``_registry`` under its lock.
PACKETS: dict[tuple[str, str], list[OpOverload]] = {}
# (ns, name) -> the one packet object of that name.
PACKET_OBJECTS: dict[tuple[str, str], OpOverloadPacket] = {}


def overloads_of(ns: str, name: str) -> list[OpOverload]:
    """The defined overloads of ``ns::name``, in definition order."""
    return [op for op in PACKETS.get((ns, name), ()) if op._schema is not None]


def packet_of(ns: str, name: str) -> OpOverloadPacket:
    """The packet of ``ns::name``, made on first use (one object per name)."""
    packet = PACKET_OBJECTS.get((ns, name))
    if packet is None:
        packet = PACKET_OBJECTS[(ns, name)] = OpOverloadPacket(ns, name)
    return packet


class OpOverloadPacket:
    """All overloads of ``ns::name``; calling it picks the overload that accepts the args.

    Overloads are bound lazily: ``packet.Tensor`` looks the overload up on first use.
    """

    __slots__ = ("__dict__", "_name", "_ns", "_only", "_only_positional", "_select_cache")

    def __init__(self, ns: str, name: str) -> None:
        self._ns = ns
        self._name = name
        self._select_cache: dict[tuple[Any, ...], OpOverload] = {}
        self._only: OpOverload | None = None
        self._only_positional: OpOverload | None = None
        self._clear_cache()

    @property
    def name(self) -> str:
        return f"{self._ns}::{self._name}"

    def __repr__(self) -> str:
        return f"ops.{self._ns}.{self._name}"

    def overloads(self) -> list[str]:
        """Names of the defined overloads (``"default"`` for the unnamed one)."""
        return [op.overload_name for op in self._defined()]

    def _defined(self) -> list[OpOverload]:
        return overloads_of(self._ns, self._name)

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__"):
            raise AttributeError(overload)
        for op in self._defined():
            if op.overload_name == overload:
                self.__dict__[overload] = op  # bind once; later lookups skip __getattr__
                return op
        raise AttributeError(
            f"The underlying op of '{self!r}' has no overload name '{overload}'; "
            f"its overloads are {self.overloads()}"
        )

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        only = self._only
        if only is not None:  # one overload: nothing to choose (most packets)
            return only(*args, **kwargs)
        if not kwargs:
            # A call without keywords fits only overloads with no required keyword-only
            # argument: when one overload is such (``mm`` beside ``mm.out``), it is the one.
            only = self._only_positional
            if only is not None:
                try:
                    return only(*args)
                except SchemaBindError:
                    self._select(args, kwargs)  # the error naming every overload, if none fits
                    raise  # the arguments fit: the error came from inside the call
        # Overload choice depends only on argument types (and list element types), so it
        # is cached per type signature: one dict lookup per call instead of binding.
        sig: tuple[Any, ...] = tuple(map(_type_sig, args))
        if kwargs:
            sig += tuple((k, _type_sig(v)) for k, v in kwargs.items())
        op = self._select_cache.get(sig)
        if op is None:
            op = self._select(args, kwargs)
            self._select_cache[sig] = op
        return op(*args, **kwargs)

    def _select(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> OpOverload:
        candidates = self._defined()
        errors = []
        for op in candidates:
            try:
                op.schema.check(args, kwargs, op_name=op.name)
            except SchemaBindError as e:
                errors.append(str(e))
                continue
            return op
        if not candidates:
            raise RuntimeError(_errors.undefined_operator(self.name))
        if len(candidates) == 1:
            candidates[0].schema.check(args, kwargs, op_name=candidates[0].name)
        raise SchemaBindError(
            f"{self.name}: no overload accepts these arguments. Tried:\n  " + "\n  ".join(errors)
        )

    def _clear_cache(self) -> None:
        self._select_cache.clear()
        defined = self._defined()
        self._only = defined[0] if len(defined) == 1 else None
        positional = [
            op
            for op in defined
            if not any(a.kwarg_only and not a.has_default for a in op.schema.arguments)
        ]
        self._only_positional = positional[0] if len(positional) == 1 else None
        for k in [k for k in self.__dict__ if not k.startswith("_")]:
            del self.__dict__[k]


def _type_sig(value: Any) -> Any:
    """What overload selection depends on: the type (and a list's element type)."""
    t = type(value)
    if t is list or t is tuple:
        return (t, type(value[0]) if value else None)
    return t

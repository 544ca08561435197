"""``ops.<ns>.<name>[.<overload>]``: attribute access to defined operators.

Imports: the standard library and ``dispatch._packet``.

Namespaces and packets are made on first access and cached as attributes, so a
second ``ops.core.add`` costs two plain attribute lookups.
"""

from __future__ import annotations

from ._packet import PACKETS, OpOverloadPacket, overloads_of

__all__ = ["forget", "ops"]


class _OpNamespace:
    """The operators of one namespace, as attributes."""

    def __init__(self, ns: str) -> None:
        self._ns = ns

    def __repr__(self) -> str:
        return f"ops.{self._ns}"

    def __getattr__(self, name: str) -> OpOverloadPacket:
        if name.startswith("__"):
            raise AttributeError(name)
        if not overloads_of(self._ns, name):
            raise AttributeError(
                f"'_OpNamespace' '{self._ns}' object has no attribute '{name}': no operator "
                f"{self._ns}::{name} is defined (define it with Library({self._ns!r}, 'DEF')"
                f".define(...) or dispatch.define('{self._ns}::{name}', ...))"
            )
        first = PACKETS[(self._ns, name)][0]
        packet = first.overloadpacket
        # Cache it: a packet resolves its overloads lazily, so it stays right when
        # overloads are defined or removed later.
        setattr(self, name, packet)
        return packet

    def __dir__(self) -> list[str]:
        return sorted(name for (ns, name) in PACKETS if ns == self._ns and overloads_of(ns, name))


class _Ops:
    """The root of ``ops``: one attribute per namespace."""

    def __getattr__(self, ns: str) -> _OpNamespace:
        if ns.startswith("__"):
            raise AttributeError(ns)
        namespace = _OpNamespace(ns)
        setattr(self, ns, namespace)
        return namespace


def forget(ns: str, name: str) -> None:
    """Drop a cached packet once ``ns::name`` has no defined overload left."""
    namespace = ops.__dict__.get(ns)
    if namespace is not None and not overloads_of(ns, name):
        namespace.__dict__.pop(name, None)
        if not any(key[0] == ns for key in PACKETS):
            del ops.__dict__[ns]  # a later ops.<ns> makes a fresh, empty namespace

    def __repr__(self) -> str:
        return "ops"


ops = _Ops()

"""Dispatch keys and immutable key sets.

Imports: the standard library only.

Runtime keys are numbered by priority, lowest first, starting at 1; key ``k``
owns bit ``1 << (k - 1)`` of a key set.  So the highest-priority key of a set
with bits ``b`` has value ``b.bit_length()`` and the empty set maps to
``Undefined`` (value 0): a computed dispatch table is a list indexed by
``bits.bit_length()``, and slot 0 is the Undefined slot.

Runtime key order, highest first (c10/core/DispatchKey.h, SEMANTICS.md §1.2):

    PythonDispatcher > PreDispatch > PythonTLSSnapshot >
    AutocastPrivateUse1 > AutocastCUDA > AutocastCPU >
    AutogradMeta > AutogradPrivateUse3 > AutogradPrivateUse2 > AutogradPrivateUse1 >
    AutogradCUDA > AutogradCPU > AutogradOther >
    ADInplaceOrView > Python > BackendSelect >
    Meta > PrivateUse3 > PrivateUse2 > PrivateUse1 > CUDA > CPU > (Undefined)

Alias keys (Autograd and the three Composite keys) are registration-only: they
never appear in a runtime key set and expand to runtime keys via ``ALIAS_TO_RUNTIME``.
c10's functionality x backend cross product is not emulated (one bit per runtime
key); results agree with PyTorch whenever a call's tensors share one backend.

Note [Plug-in device keys]
~~~~~~~~~~~~~~~~~~~~~~~~~~
Devices registered at run time (``tensor.register_device``) take the three
PrivateUse backend keys in turn, each with its Autograd counterpart, so three
plug-in devices can live in one process.  These are c10's keys in c10's order: c10
has no Autocast key for PrivateUse2/3 (and ``test_tls`` checks our default exclude
set against PyTorch's), so all three devices carry AutocastPrivateUse1, whose kernels
find the device from the arguments (Note [Autocast on plug-in devices] in
``tensor._autocast``).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator

__all__ = [
    "ALIAS_KEYS",
    "ALIAS_TO_RUNTIME",
    "AUTOCAST_KEYS",
    "AUTOGRAD_KEYS",
    "BACKEND_KEYS",
    "BACKEND_TO_AUTOCAST",
    "BACKEND_TO_AUTOGRAD",
    "DispatchKey",
    "DispatchKeySet",
    "NUM_RUNTIME_KEYS",
    "PRIVATE_USE_KEYS",
    "REQUIRES_GRAD_BIT",
    "RUNTIME_KEYS",
    "keyset_from_bits",
    "parse_key",
]


class DispatchKey(enum.IntEnum):
    """A dispatch key.  Runtime keys are ordered by priority (higher value wins).

    >>> DispatchKey.AutogradCPU > DispatchKey.CPU
    True
    >>> DispatchKey.parse("CUDA")
    <DispatchKey.CUDA: 2>
    """

    Undefined = 0
    # Dense backends (c10 backend components, low to high).
    CPU = 1
    CUDA = 2
    PrivateUse1 = 3
    PrivateUse2 = 4
    PrivateUse3 = 5
    Meta = 6
    # Functionality keys above the backends.
    BackendSelect = 7
    Python = 8
    ADInplaceOrView = 9
    AutogradOther = 10
    AutogradCPU = 11
    AutogradCUDA = 12
    AutogradPrivateUse1 = 13
    AutogradPrivateUse2 = 14
    AutogradPrivateUse3 = 15
    AutogradMeta = 16
    AutocastCPU = 17
    AutocastCUDA = 18
    AutocastPrivateUse1 = 19
    PythonTLSSnapshot = 20
    PreDispatch = 21
    PythonDispatcher = 22
    # Alias keys: registration only, never in a runtime key set.
    Autograd = 100
    CompositeImplicitAutograd = 101
    CompositeExplicitAutograd = 102
    CompositeExplicitAutogradNonFunctional = 103

    @property
    def is_alias(self) -> bool:
        return self >= 100

    @property
    def is_runtime(self) -> bool:
        return 0 < self < 100

    @property
    def bit(self) -> int:
        """The key-set bit of a runtime key (0 for Undefined and alias keys)."""
        return 1 << (self - 1) if 0 < self < 100 else 0

    @classmethod
    def parse(cls, name: str | DispatchKey) -> DispatchKey:
        return parse_key(name)

    def __repr__(self) -> str:
        return f"<DispatchKey.{self.name}: {int(self)}>"

    def __str__(self) -> str:
        return self.name


RUNTIME_KEYS: tuple[DispatchKey, ...] = tuple(k for k in DispatchKey if k.is_runtime)
NUM_RUNTIME_KEYS = len(RUNTIME_KEYS)
# Set in a tensor's _dispatch_bits, above every runtime key, while it requires grad:
# Note [Grad-only kernels] in _operator.py.
REQUIRES_GRAD_BIT = 1 << NUM_RUNTIME_KEYS
# Table slot i holds the kernel for the key whose value is i (0 = Undefined).
_BY_VALUE: tuple[DispatchKey, ...] = (DispatchKey.Undefined, *RUNTIME_KEYS)
_FULL_BITS = (1 << NUM_RUNTIME_KEYS) - 1

PRIVATE_USE_KEYS = (DispatchKey.PrivateUse1, DispatchKey.PrivateUse2, DispatchKey.PrivateUse3)
BACKEND_KEYS = frozenset({DispatchKey.CPU, DispatchKey.CUDA, *PRIVATE_USE_KEYS, DispatchKey.Meta})
AUTOGRAD_KEYS = frozenset(
    {
        DispatchKey.AutogradOther,
        DispatchKey.AutogradCPU,
        DispatchKey.AutogradCUDA,
        DispatchKey.AutogradPrivateUse1,
        DispatchKey.AutogradPrivateUse2,
        DispatchKey.AutogradPrivateUse3,
        DispatchKey.AutogradMeta,
    }
)
AUTOCAST_KEYS = frozenset(
    {
        DispatchKey.AutocastCPU,
        DispatchKey.AutocastCUDA,
        DispatchKey.AutocastPrivateUse1,
    }
)
BACKEND_TO_AUTOGRAD = {
    DispatchKey.CPU: DispatchKey.AutogradCPU,
    DispatchKey.CUDA: DispatchKey.AutogradCUDA,
    DispatchKey.PrivateUse1: DispatchKey.AutogradPrivateUse1,
    DispatchKey.PrivateUse2: DispatchKey.AutogradPrivateUse2,
    DispatchKey.PrivateUse3: DispatchKey.AutogradPrivateUse3,
    DispatchKey.Meta: DispatchKey.AutogradMeta,
}
# Meta has no autocast key in c10.
BACKEND_TO_AUTOCAST = {
    DispatchKey.CPU: DispatchKey.AutocastCPU,
    DispatchKey.CUDA: DispatchKey.AutocastCUDA,
    DispatchKey.PrivateUse1: DispatchKey.AutocastPrivateUse1,
}

# Alias key -> the runtime keys it stands for (c10/core/DispatchKeySet.cpp,
# getRuntimeDispatchKeySet).  Undefined is handled by the table rules, not here.
ALIAS_TO_RUNTIME: dict[DispatchKey, frozenset[DispatchKey]] = {
    DispatchKey.Autograd: AUTOGRAD_KEYS,
    DispatchKey.CompositeImplicitAutograd: BACKEND_KEYS | AUTOGRAD_KEYS,
    DispatchKey.CompositeExplicitAutograd: BACKEND_KEYS,
    DispatchKey.CompositeExplicitAutogradNonFunctional: BACKEND_KEYS,
}
ALIAS_KEYS = frozenset(ALIAS_TO_RUNTIME)

_NAMES = {k.name: k for k in DispatchKey}
# c10 spells the CUDA autocast key "Autocast" as well.
_NAMES["Autocast"] = DispatchKey.AutocastCUDA


def parse_key(name: str | DispatchKey) -> DispatchKey:
    """Turn a key name into a DispatchKey; ``RuntimeError`` like c10 for unknown names."""
    if isinstance(name, DispatchKey):
        return name
    if isinstance(name, str):
        key = _NAMES.get(name)
        if key is not None:
            return key
        raise RuntimeError(
            f"could not parse dispatch key: {name!r}. Valid keys are: "
            + ", ".join(k.name for k in DispatchKey)
        )
    raise TypeError(f"expected a DispatchKey or its name (str), got {type(name).__name__}")


class DispatchKeySet:
    """An immutable set of runtime dispatch keys, stored as an int bitmask.

    Iteration yields keys highest priority first.  Alias keys add nothing
    (as ``DispatchKeySet(<alias>)`` is empty in c10).

    >>> ks = DispatchKeySet([DispatchKey.CPU, DispatchKey.AutogradCPU])
    >>> ks.highest_priority_key()
    <DispatchKey.AutogradCPU: 11>
    >>> ks
    DispatchKeySet(AutogradCPU, CPU)
    >>> DispatchKey.CPU in ks - DispatchKeySet(DispatchKey.CPU)
    False
    """

    __slots__ = ("_bits",)
    _bits: int

    def __init__(self, key_or_keys: DispatchKey | str | Iterable[DispatchKey | str] = ()) -> None:
        if isinstance(key_or_keys, (DispatchKey, str)):
            key_or_keys = (key_or_keys,)
        bits = 0
        for k in key_or_keys:
            bits |= parse_key(k).bit
        object.__setattr__(self, "_bits", bits)

    @classmethod
    def from_bits(cls, bits: int) -> DispatchKeySet:
        """A key set from its bitmask (as carried by tensors in ``_dispatch_bits``)."""
        ks = object.__new__(cls)
        object.__setattr__(ks, "_bits", bits & _FULL_BITS)
        return ks

    @classmethod
    def full(cls) -> DispatchKeySet:
        return cls.from_bits(_FULL_BITS)

    @classmethod
    def full_after(cls, key: DispatchKey | str) -> DispatchKeySet:
        """Every runtime key of lower priority than ``key``, plus PythonDispatcher (as c10)."""
        key = parse_key(key)
        if not key.is_runtime:
            raise ValueError(f"full_after needs a runtime key, got alias/undefined key {key.name}")
        return cls.from_bits(((1 << (key - 1)) - 1) | DispatchKey.PythonDispatcher.bit)

    @property
    def bits(self) -> int:
        return self._bits

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("DispatchKeySet is immutable")

    def has(self, key: DispatchKey | str) -> bool:
        bit = parse_key(key).bit
        return bool(bit) and bool(self._bits & bit)

    __contains__ = has

    def add(self, key: DispatchKey | str) -> DispatchKeySet:
        return DispatchKeySet.from_bits(self._bits | parse_key(key).bit)

    def remove(self, key: DispatchKey | str) -> DispatchKeySet:
        return DispatchKeySet.from_bits(self._bits & ~parse_key(key).bit)

    def highest_priority_key(self) -> DispatchKey:
        return _BY_VALUE[self._bits.bit_length()]

    def __or__(self, other: DispatchKeySet) -> DispatchKeySet:
        if not isinstance(other, DispatchKeySet):
            return NotImplemented
        return _from_bits(self._bits | other._bits)

    def __and__(self, other: DispatchKeySet) -> DispatchKeySet:
        if not isinstance(other, DispatchKeySet):
            return NotImplemented
        return _from_bits(self._bits & other._bits)

    def __sub__(self, other: DispatchKeySet) -> DispatchKeySet:
        if not isinstance(other, DispatchKeySet):
            return NotImplemented
        return _from_bits(self._bits & ~other._bits)

    def __iter__(self) -> Iterator[DispatchKey]:
        bits = self._bits
        while bits:
            top = bits.bit_length()
            yield _BY_VALUE[top]
            bits &= ~(1 << (top - 1))

    def __len__(self) -> int:
        return bin(self._bits).count("1")

    def __bool__(self) -> bool:
        return self._bits != 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DispatchKeySet):
            return NotImplemented
        return self._bits == other._bits

    def __hash__(self) -> int:
        return hash((DispatchKeySet, self._bits))

    def __repr__(self) -> str:
        return "DispatchKeySet(" + ", ".join(k.name for k in self) + ")"

    def __reduce__(self) -> tuple[object, tuple[int]]:
        return (DispatchKeySet.from_bits, (self._bits,))


_new = object.__new__
_set_bits = DispatchKeySet._bits.__set__  # type: ignore[attr-defined,misc]


class _KeySets(dict[int, DispatchKeySet]):
    """bits -> the DispatchKeySet of those bits, made on first use.  Key sets are
    immutable, so calls share them: the call path needs one for every with_keyset
    kernel (every recorded call), and a dict hit costs ~30 ns where making one costs
    ~150.  A process meets a few hundred distinct sets; past ``_MAX`` new ones are
    made and not kept."""

    _MAX = 4096

    def __missing__(self, bits: int) -> DispatchKeySet:
        ks = _new(DispatchKeySet)
        _set_bits(ks, bits & _FULL_BITS)
        if len(self) < self._MAX:
            self[bits] = ks
        return ks


# keyset_from_bits(bits): ``DispatchKeySet.from_bits`` without the classmethod, the
# ``object.__setattr__`` call or a new object (a dict lookup, no Python frame).
keyset_from_bits = _KeySets().__getitem__


_from_bits = keyset_from_bits


def key_for_slot(slot: int) -> DispatchKey:
    """The key whose computed-table slot is ``slot`` (0 = Undefined)."""
    return _BY_VALUE[slot]

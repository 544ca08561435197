"""Operators: their kernels per key and their computed dispatch tables.

Imports: the standard library and sibling ``dispatch`` modules.

An ``OpOverload`` is one operator overload (``ns::name.overload``).  It keeps a
stack of registered kernels per key (runtime or alias; newest active) and a
computed table, one slot per runtime key plus the Undefined slot, rebuilt whole
by ``_rebuild`` whenever a registration that could affect it changes, and never
on a call.  A call reads the table through ``_state`` (a ``_CallState``): OR the
``_dispatch_bits`` of the tensor arguments (positions known from the schema), add
the thread's include set, remove its exclude set, mask out fallthrough keys, take
the highest key, call its kernel.  Those steps are generated, once for every entry
(``__call__``, ``call1``, ``call2``, ``redispatch``), by ``_callpath``: Note
[Specialised call paths].  Packets (``ns::name`` with all its overloads) are in
``_packet``.

Note [Grad-only kernels]
An autograd-layer kernel that, when no argument requires grad, would only
redispatch below its own key (the autograd fallback; every autograd formula
kernel) is registered ``grad_only``.  Tensors that require grad set
``REQUIRES_GRAD_BIT`` in their ``_dispatch_bits``, a bit above every runtime key.
A call whose tensors lack that bit, or made while grad mode is off (``no_grad``,
a backward pass without ``create_graph``: such a kernel would only redispatch then
too), uses ``mask``, where grad-only keys are masked out like fallthroughs, and
skips a Python frame per layer; a call with it in grad mode uses ``grad_mask``,
where they are present.  Grad mode is a thread-local flag kept with the key sets
(``_tls.state.grad_enabled``), read only by calls whose tensors require grad.
``redispatch`` onto such a key always runs the kernel, as in PyTorch.  Kernels below
receive the same key set either way: the skipped key is gone, as it would be after
``ks & full_after(key)``.  The one difference PyTorch could show: a with_keyset kernel
*above* autograd (autocast) sees no Autograd key in its key set when nothing requires
grad.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from . import _callpath, _errors, _packet, _tls
from ._kernel import Kernel
from ._keys import (
    ALIAS_TO_RUNTIME,
    AUTOGRAD_KEYS,
    NUM_RUNTIME_KEYS,
    REQUIRES_GRAD_BIT,
    DispatchKey,
    DispatchKeySet,
    key_for_slot,
    keyset_from_bits,
    parse_key,
)

# Packets were defined here: their names stay importable from this module.
from ._packet import PACKET_OBJECTS, PACKETS, OpOverloadPacket, overloads_of
from ._schema import FunctionSchema
from ._schema_types import ListType, OptionalType
from ._validate import arity_ok, fast_types, int_list, make_checker

_RUNTIME_BITS = REQUIRES_GRAD_BIT - 1  # bits above it: a tensor requires grad
_BELOW_INPLACE = DispatchKeySet.full_after(DispatchKey.ADInplaceOrView).bits
_DEFAULT_INCLUDED, _DEFAULT_KEEP = _tls.DEFAULT_INCLUDED, _tls.DEFAULT_KEEP

__all__ = [
    "FALLBACKS",
    "LOCK",
    "OPERATORS",
    "PACKETS",
    "PACKET_OBJECTS",
    "REQUIRES_GRAD_BIT",
    "OpOverload",
    "OpOverloadPacket",
    "TableEntry",
    "lookup",
    "overloads_of",
]

_CEANF = DispatchKey.CompositeExplicitAutogradNonFunctional
_CEA = DispatchKey.CompositeExplicitAutograd
_CIA = DispatchKey.CompositeImplicitAutograd
_AUTOGRAD = DispatchKey.Autograd
_UNDEFINED = DispatchKey.Undefined
_AUTOGRAD_TO_BACKEND = {
    DispatchKey.AutogradCPU: DispatchKey.CPU,
    DispatchKey.AutogradCUDA: DispatchKey.CUDA,
    DispatchKey.AutogradPrivateUse1: DispatchKey.PrivateUse1,
    DispatchKey.AutogradPrivateUse2: DispatchKey.PrivateUse2,
    DispatchKey.AutogradPrivateUse3: DispatchKey.PrivateUse3,
    DispatchKey.AutogradMeta: DispatchKey.Meta,
}
_NUM_SLOTS = NUM_RUNTIME_KEYS + 1
_from_bits = keyset_from_bits


def _no_check(*args: Any, **kwargs: Any) -> None:
    """The checker of an operator without a schema: calling it raises, at its kernel."""


class _CheckOnFirstCall:
    """An operator's checker until its first call, which makes the real one, puts it in
    the operator's place and runs it.

    ``make_checker`` costs ~25 us a schema, most of it compile(), and most operators
    defined at import are never called: ``import tensor`` compiled ~180 checker sources
    (~10 ms) before this.  Every call after the first runs the real checker itself, and
    the first call gets exactly its answer (Note [Validating every call]).  The stand-in
    is made for one schema: if the operator is redefined meanwhile, it checks with its
    own schema and leaves the new checker in place.  It keeps what it made, so a caller
    that took it before the first call pays a frame per call, not a new checker.
    """

    __slots__ = ("check", "op", "schema")

    def __init__(self, op: OpOverload, schema: FunctionSchema) -> None:
        self.op, self.schema = op, schema
        self.check: Callable[..., None] | None = None

    def _make(self) -> Callable[..., None]:
        check = self.check
        if check is None:
            check = self.check = make_checker(self.schema, self.op._qualname)
            if self.op._check is self:
                self.op._check = check
        return check

    def __call__(self, /, *args: Any, **kwargs: Any) -> None:
        return self._make()(*args, **kwargs)

    @property
    def source(self) -> str:
        """The checker's source (``make_checker``'s ``source``); makes the checker now."""
        return self._make().source  # type: ignore[attr-defined]


class _CallState:
    """What a call reads of its operator's computed table (Note [Specialised call paths]).

    ``_rebuild`` makes a new one and swaps it in with one store, so a concurrent call sees
    the old table or the new one, never a mix.  Slots, not a NamedTuple: reading three
    fields by name costs what unpacking a plain tuple does, unpacking a NamedTuple ~50 ns
    more a call.
    """

    __slots__ = (
        "mask",
        "kernels",
        "with_keyset",
        "grad_mask",
        "positional",
        "kernels1",
        "kernels2",
        "kernels3",
        "keywords",
        "kernels2k",
        "kernels3k",
        "bumps",
        "direct",
        "below",
    )

    def __init__(
        self,
        mask: int,
        kernels: tuple[Callable[..., Any], ...],
        with_keyset: int,
        grad_mask: int,
        positional: int = 0,
        by_arity: tuple[tuple[Any, ...], ...] = ((), (), ()),
        keywords: int = 0,
        by_arity_k: tuple[tuple[Any, ...], ...] = ((), ()),
        bumps: int = 0,
    ) -> None:
        self.mask = mask  # keys whose kernel runs: no fallthrough, no grad-only kernel
        self.kernels = kernels  # the kernel of each table slot
        self.with_keyset = with_keyset  # bit ``slot`` set: that kernel takes the key set
        self.grad_mask = grad_mask  # ``mask`` with the grad-only kernels (Note [Grad-only kernels])
        # Note [Positional entries]: bit ``slot`` set, that slot's with_keyset kernel has
        # entries for exactly 1, 2 and 3 positional arguments, taking the key bits.
        self.positional = positional
        self.kernels1, self.kernels2, self.kernels3 = by_arity
        # The same for two and three positional tensors and a dict of keyword-only values
        # (``fn.keywords``: ``entry(bits, a, b, kwargs)``, ``entry(bits, a, b, c, kwargs)``).
        self.keywords = keywords
        self.kernels2k, self.kernels3k = by_arity_k
        # Note [Direct in-place entry]: bit ``slot`` set, that slot's kernel is the
        # ADInplaceOrView bump of the first argument; ``direct`` memoises, per key bits of
        # a call's tensors, the kernel below it that such a call runs (None: the full path).
        self.bumps = bumps
        self.direct: dict[int, Callable[..., Any] | None] = {}
        # ``OpOverload.below``'s answers: key bits -> the kernel to call for them, filled
        # by calls (the layers that redispatch on every call read it first); a rebuild
        # makes a new state, and so an empty memo.
        self.below: dict[int, Callable[..., Any]] = {}


# An operator's state until its first _rebuild: no kernels, so a call fails.
_NO_STATE = _CallState(0, (), 0, 0)


# Note [Positional entries]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# The fixed-arity call paths (``call1(a)``, ``call2(a, b)``, ``call3(a, b, c)``: Note
# [Specialised call paths]) know how many arguments they pass and pass no keywords.  A
# grad-only kernel may offer an entry for each such count, as ``fn.positional``: a
# sequence of three functions, the one for ``n`` arguments called ``entry(bits, a1, ...,
# an)`` with the key set as its int bits.
# Such a call skips what the general with_keyset call pays: the ``KeySet`` object, the
# ``*args`` tuple and ``**kwargs`` dict, and the kernel's checks for keywords (and, for a
# grad-only kernel, grad mode: a call path reaches one only in grad mode, Note
# [Grad-only kernels]).  The autograd layer's generated kernels have them (Note
# [Generated recording] in tensor/autograd/_layer.py): ~0.3 us less a recorded
# ``a + b``; so do autocast's fused products (Note [Autocast product fast path]).
# The keyword paths (``call2k(a, b, kwargs)``, ``call3k``) likewise call ``fn.keywords``,
# a pair of entries ``entry(bits, a, b, kwargs)`` and ``entry(bits, a, b, c, kwargs)``
# that take the caller's dict as it is (read only from a kernel that has ``positional``).  The ADInplaceOrView kernels have both kinds
# (``_entries`` in tensor/_inplace_or_view.py): ~0.15-0.25 us less each in-place update
# outside grad mode (``p.add_(g, alpha=-lr)``, Adam's ``v.addcmul_(g, g, value=...)``)
# and each view (``w.t()``).  Every other entry (``__call__``, ``redispatch``) calls
# ``kernels``.


# Note [Direct in-place entry]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# An in-place method called with keywords outside grad mode (``p.add_(g, alpha=-lr)``,
# Adam's ``v.addcmul_(g, g, value=...)``) dispatches to ADInplaceOrView, whose kernel runs
# the backend kernel below it and bumps ``self``'s version.  The keyword entry spends
# ~0.9 us getting there on a tiny tensor: the keyword dict, its type loop, the key set
# and mask, the ADInplaceOrView frame and the ``**kwargs`` re-pack (2.89 us a tiny
# ``addcmul_``, its three ufuncs 1.18).  The generated in-place methods
# (tensor/_generated.py, ``_direct_inplace``) do those two steps themselves when the
# table says they are the whole call: ``direct_inplace(bits)`` works out, once per key
# bits of the call's tensors and table state (``_CallState.direct``), whether the key set
# those bits give with the default thread-local sets (``(bits | DEFAULT_INCLUDED) &
# DEFAULT_KEEP & mask``, the call path's) lands on ADInplaceOrView's bump of the first
# argument (``fn.bumps_first``, ``bumps``) with a kernel below that takes no key set, and
# memoises that kernel (or None).  The method takes it only while the thread's sets are
# the defaults for the operator (``NONDEFAULT & mask``, as the call path tests) and each
# keyword has a type its argument takes outright (the keyword entry's check); it calls
# the kernel with the caller's arguments, annotates an exception with ADInplaceOrView's
# key as the keyword entry would, and bumps after a kernel that returned.  A tensor that
# requires grad takes it only outside grad mode (an optimizer's ``p.add_(g, alpha=-lr)``
# under ``no_grad``), with its requires-grad bit cleared: there the call path masks the
# grad-only autograd kernels out (Note [Grad-only kernels]) and runs what those bits run
# (2.65 -> 1.73 us a tiny ``p.add_``, 3.32 -> 2.35 ``p.addcdiv_``).  In grad mode a tensor
# that requires grad, modes, autocast's sets, a subclass's Python key, another backend's
# kernel, a re-registered kernel (a rebuild: a new state, an empty memo) and DISPATCH_TRACE
# all take the full path or the new kernel.  2.89 -> 2.19 us a tiny ``addcmul_``, 2.05 -> 1.36 us a
# tiny ``add_(g, alpha=)``; tests/tensor/test_direct_inplace.py runs both sides.


def _place_entries(by_arity: list[list[Any]], slot: int, entries: Any) -> None:
    """Put a kernel's entries (Note [Positional entries]) at ``slot`` of the tables for
    their argument counts."""
    for table, entry in zip(by_arity, entries, strict=True):
        table.extend([None] * (slot - len(table)))
        table.append(entry)


class TableEntry:
    """What one slot of a computed table holds, and why (for dump_table/explain)."""

    __slots__ = ("kernel", "source")

    def __init__(self, kernel: Kernel | None, source: str) -> None:
        self.kernel = kernel  # None when missing
        self.source = source  # "direct", an alias key name, "backend fallback", "missing"


# Shared by every missing slot (entries are read, never changed).
_MISSING_ENTRY = TableEntry(None, "missing")
# (slot, key, key-set bit) of every table slot, for _rebuild.
_SLOTS = tuple((slot, key_for_slot(slot), key_for_slot(slot).bit) for slot in range(_NUM_SLOTS))


class _Raiser:
    """A with_keyset stand-in kernel for missing entries and reached fallthroughs."""

    __slots__ = ("key", "kind", "op")

    def __init__(self, op: OpOverload, key: DispatchKey, kind: str) -> None:
        self.op, self.key, self.kind = op, key, kind

    def __call__(self, keyset: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        op = self.op
        if self.kind == "undefined":
            raise RuntimeError(_errors.undefined_operator(op._qualname))
        if self.kind == "fallthrough":
            raise RuntimeError(_errors.fallthrough_reached(op._qualname, self.key, keyset))
        if self.kind == "ambiguous":
            raise RuntimeError(_errors.ambiguous_autograd_other(op._qualname))
        table = op._dump()
        if self.key is _UNDEFINED:
            raise NotImplementedError(
                _errors.no_tensor_arguments(
                    op._qualname, str(op._schema), op._keys_with_kernels(), table
                )
            )
        raise NotImplementedError(
            _errors.missing_kernel(
                op._qualname, str(op._schema), self.key, keyset, op._keys_with_kernels(), table
            )
        )


class _BoundFallback:
    """A backend fallback bound to one operator: fallbacks take the op as an argument."""

    __slots__ = ("fn", "op")

    def __init__(self, fn: Callable[..., Any], op: OpOverload) -> None:
        self.fn, self.op = fn, op

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(self.op, *args, **kwargs)


class _BoundFallbackWithKeyset(_BoundFallback):
    __slots__ = ()

    def __call__(self, keyset: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        return self.fn(keyset, self.op, *args, **kwargs)


class OpOverload:
    """One overload of an operator; calling it dispatches.

    Made by ``Library.define`` and reached as ``ops.<ns>.<name>.<overload>``.
    """

    __slots__ = (
        "__weakref__",
        "_arity1",
        "_arity2",
        "_arity2t",
        "_arity3",
        "_check",
        "_entries",
        "_extractors",
        "_kernels",
        "_optional_elements",
        "_packet",
        "_py_kernels",
        "_required_lists",
        "_qualname",
        "_schema",
        "_state",
        "_tags",
        "_tensor_pos",
        "_types1",
        "_ints1",
        "_types2",
        "_types1of3",
        "_kwtypes",
        "define_location",
    )

    def __init__(self, qualname: str) -> None:
        self._qualname = qualname  # "ns::name" or "ns::name.overload"
        self._schema: FunctionSchema | None = None
        self._tags: tuple[str, ...] = ()
        self._kernels: dict[DispatchKey, list[Kernel]] = {}
        # DispatchKey -> Kernel (py_impl of a key); mode class -> fn(mode, *args, **kwargs).
        self._py_kernels: dict[object, Any] = {}
        self._packet: OpOverloadPacket | None = None
        self.define_location = ""
        self._tensor_pos: tuple[int, ...] = ()
        self._extractors: tuple[tuple[int, str, str], ...] = ()
        self._entries: tuple[TableEntry, ...] = ()
        # Note [Validating every call]: the schema's checker, and what the fixed-arity
        # entries need to know without calling it.
        self._check: Callable[..., None] = _no_check
        self._arity1 = self._arity2 = self._arity2t = self._arity3 = False
        self._types1: frozenset[type] = frozenset()
        self._ints1 = False  # the second argument an int list (``_validate.int_list``)
        self._types2: frozenset[type] = frozenset()
        self._types1of3: frozenset[type] = frozenset()
        self._kwtypes: dict[str, frozenset[type]] = {}
        self._optional_elements: frozenset[int] = frozenset()
        self._required_lists: frozenset[int] = frozenset()
        self._state = _NO_STATE  # what a call reads of the table; made by _rebuild

    # -- public attributes ----------------------------------------------------------------
    @property
    def schema(self) -> FunctionSchema:
        if self._schema is None:
            raise RuntimeError(_errors.undefined_operator(self._qualname))
        return self._schema

    @property
    def name(self) -> str:
        """``ns::name.overload`` (``ns::name`` for the default overload)."""
        return self._qualname

    @property
    def namespace(self) -> str:
        return self._qualname.split("::", 1)[0]

    @property
    def overload_name(self) -> str:
        rest = self._qualname.split("::", 1)[1]
        return rest.split(".", 1)[1] if "." in rest else "default"

    @property
    def overloadpacket(self) -> OpOverloadPacket:
        """The packet of every overload of this name (one object per name)."""
        if self._packet is None:
            ns, rest = self._qualname.split("::", 1)
            self._packet = _packet.packet_of(ns, rest.split(".", 1)[0])
        return self._packet

    @property
    def tags(self) -> tuple[str, ...]:
        return self._tags

    @property
    def is_defined(self) -> bool:
        return self._schema is not None

    def __repr__(self) -> str:
        ns, rest = self._qualname.split("::", 1)
        name = rest if "." in rest else rest + ".default"
        return f"ops.{ns}.{name}"

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (lookup, (self._qualname,))

    # -- the call path: generated by _callpath.install (Note [Specialised call paths]) ------
    if TYPE_CHECKING:

        def __call__(self, /, *args: Any, **kwargs: Any) -> Any: ...
        def call1(self, a: Any, /) -> Any: ...
        def call2(self, a: Any, b: Any, /) -> Any: ...
        def call3(self, a: Any, b: Any, c: Any, /) -> Any: ...
        def call2k(self, a: Any, b: Any, kwargs: dict[str, Any], /) -> Any: ...
        def call3k(self, a: Any, b: Any, c: Any, kwargs: dict[str, Any], /) -> Any: ...
        def redispatch(self, keyset: DispatchKeySet, /, *args: Any, **kwargs: Any) -> Any: ...

    def below(self, bits: int, /) -> Callable[..., Any]:
        """The kernel ``redispatch(keyset_from_bits(bits), ...)`` would run, ready to call
        with the arguments (its key set bound when it takes one).

        Layers that redispatch on every call (autograd, ADInplaceOrView) call
        ``op.below(bits)(*args, **kwargs)``: the arguments are forwarded once, not through
        ``redispatch``'s frame too (~0.15 us a call).  Under DISPATCH_TRACE it returns
        a partial ``redispatch``, so the step shows in the trace.

        Note [The kernel below, kept]: the answer is a function of the key bits and the
        table alone, so the table's state keeps it per key bits (``_CallState.below``):
        one dict lookup instead of the highest bit, the with_keyset test and a new
        partial; the autograd layer's generated kernels read the memo inline (~45 ns a
        recorded call).  A rebuilt table is a new state with an empty memo.
        """
        state = self._state
        fn = state.below.get(bits)
        if fn is None:  # worked out once per key bits and table (``_CallState.below``)
            slot = bits.bit_length()
            fn = state.kernels[slot]
            if state.with_keyset >> slot & 1:
                fn = partial(fn, _from_bits(bits))
            state.below[bits] = fn
        return fn

    def direct_inplace(self, bits: int, /) -> Callable[..., Any] | None:
        """Note [Direct in-place entry]: the kernel a call whose tensors have the key
        ``bits`` runs below ADInplaceOrView's bump of its first argument, with the
        thread's default key sets; None when such a call takes any other path (a key
        above ADInplaceOrView, a tensor that requires grad, a kernel below that takes
        the key set, DISPATCH_TRACE).  Memoised in the table's state."""
        state = self._state
        direct = state.direct
        if bits in direct:
            return direct[bits]
        kernel = None
        if bits <= _RUNTIME_BITS and not _callpath.TRACE:
            ks = (bits | _DEFAULT_INCLUDED) & _DEFAULT_KEEP & state.mask
            slot = ks.bit_length()
            if state.bumps >> slot & 1:
                below = (ks & _BELOW_INPLACE).bit_length()
                if not state.with_keyset >> below & 1:
                    kernel = state.kernels[below]
        direct[bits] = kernel
        return kernel

    # -- registration (called by the registry, under its lock) -------------------------------
    def _set_schema(self, schema: FunctionSchema | None, tags: tuple[str, ...]) -> None:
        self._schema = schema
        self._tags = tags
        if schema is None:
            self._tensor_pos, self._extractors = (), ()
            self._check, self._arity1, self._arity2 = _no_check, False, False
            self._arity2t = self._arity3 = False
            self._types1 = self._types2 = self._types1of3 = frozenset()
            self._ints1 = False
            self._kwtypes = {}
            self.__class__ = OpOverload
            return
        self._check = _CheckOnFirstCall(self, schema)
        self._arity1 = arity_ok(schema, 1)
        self._arity2 = arity_ok(schema, 2)
        args = schema.arguments
        # The general class's call2 and call3: that many positional values, all of them
        # tensors (``Tensor`` or ``Tensor?``), so that their bits are all the call's bits
        # (an argument left out takes its default; a tensor's is None).
        tensors = [a.type.tensor_kind in ("tensor", "optional_tensor") for a in args[:3]]
        self._arity2t = self._arity2 and all(tensors[:2])
        self._arity3 = arity_ok(schema, 3) and len(tensors) == 3 and all(tensors)
        self._types1 = (
            fast_types(args[1].type)
            if self._arity2 and args[1].type.tensor_kind is None
            else frozenset()
        )
        self._ints1 = self._arity2 and int_list(args[1].type)
        # The two-tensor class's call3: a third positional value that is not a tensor; the
        # one-tensor class's call3 (``select.int(x, 0, 0)``): the second too.
        arity3 = arity_ok(schema, 3)
        self._types2 = (
            fast_types(args[2].type) if arity3 and args[2].type.tensor_kind is None else frozenset()
        )
        self._types1of3 = (
            fast_types(args[1].type) if arity3 and args[1].type.tensor_kind is None else frozenset()
        )
        # call2k and call3k: call2's and call3's shapes (``_arity2t``, ``_arity3``) with
        # keyword-only values, each of a type that fits its argument outright (``_kwtypes``:
        # a Scalar's int, float...; a keyword whose values need the checker, a tensor's,
        # has none, so it takes the full path).
        self._kwtypes = {a.name: types for a in schema.kwarg_only if (types := fast_types(a.type))}
        self._optional_elements = frozenset(
            i
            for i, a in enumerate(args)
            if isinstance(a.type, ListType) and isinstance(a.type.elem, OptionalType)
        )
        self._required_lists = frozenset(
            i for i, a in enumerate(args) if isinstance(a.type, ListType) and a.type.is_tensor_like
        )
        plain, extra = [], []
        for index, name, kind in schema.tensor_arg_indices:
            if kind == "tensor":
                plain.append(index)
            else:
                extra.append((index, name, kind))
        self._tensor_pos, self._extractors = tuple(plain), tuple(extra)
        # Note [Specialised call paths]: same slots, so the class can be swapped in place.
        if not extra:
            special = _SPECIALISED.get(self._tensor_pos)
        elif not plain and len(extra) == 1 and extra[0][0] == 0 and extra[0][2] == "tensor_list":
            special = _FirstTensorList
        else:
            special = None
        self.__class__ = special or OpOverload

    def _add_kernel(self, kernel: Kernel) -> None:
        self._kernels.setdefault(kernel.key, []).append(kernel)

    def _remove_kernel(self, kernel: Kernel) -> None:
        stack = self._kernels.get(kernel.key, [])
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is kernel:
                del stack[i]
                break
        if not stack:
            self._kernels.pop(kernel.key, None)

    def _keys_with_kernels(self) -> list[DispatchKey]:
        return sorted(self._kernels, key=lambda k: (k.is_alias, -int(k)))

    def _top(self, key: DispatchKey) -> Kernel | None:
        stack = self._kernels.get(key)
        return stack[-1] if stack else None

    def _resolve(
        self,
        key: DispatchKey,
        fallbacks: dict[DispatchKey, list[Kernel]],
        tops: dict[DispatchKey, Kernel],
    ) -> TableEntry:
        """The kernel for one runtime key: PyTorch's rules (SEMANTICS.md §4), in order.

        ``tops`` is the active kernel of each key that has one (``_top`` of every key,
        taken once per rebuild).
        """
        # 0. A Python-only override from py_impl(key) beats every registration.
        py_kernel = self._py_kernels.get(key)
        if isinstance(py_kernel, Kernel):
            return TableEntry(py_kernel, "py_impl")
        # 1. A direct registration at the key.
        if key is not _UNDEFINED:
            k = tops.get(key)
            if k is not None:
                return TableEntry(k, "direct")
        # 2. CompositeExplicitAutogradNonFunctional: Undefined and non-functional backends.
        if key is _UNDEFINED or key in ALIAS_TO_RUNTIME[_CEANF]:
            k = tops.get(_CEANF)
            if k is not None:
                return TableEntry(k, _CEANF.name)
        # 3. CompositeExplicitAutograd: Undefined and every backend key.
        if key is _UNDEFINED or key in ALIAS_TO_RUNTIME[_CEA]:
            k = tops.get(_CEA)
            if k is not None:
                return TableEntry(k, _CEA.name)
        # 4. CompositeImplicitAutograd: Undefined, backends and autograd keys, unless
        #    (for an autograd key) its backend or CompositeExplicitAutograd has a
        #    registration; a registered fallthrough counts, as in c10.  Our key set has
        #    no AutogradOther backends, so c10's "ambiguous AutogradOther" case (a CIA
        #    kernel plus a kernel at such a backend) cannot arise here.
        if key is _UNDEFINED or key in ALIAS_TO_RUNTIME[_CIA]:
            k = tops.get(_CIA)
            if k is not None:
                backend = _AUTOGRAD_TO_BACKEND.get(key)
                has_backend_kernel = (backend is not None and tops.get(backend) is not None) or (
                    key in AUTOGRAD_KEYS and tops.get(_CEA) is not None
                )
                if not has_backend_kernel:
                    return TableEntry(k, _CIA.name)
        # 5. The Autograd alias, for the autograd keys.
        if key in AUTOGRAD_KEYS:
            k = tops.get(_AUTOGRAD)
            if k is not None:
                return TableEntry(k, _AUTOGRAD.name)
        # 6. The backend fallback for the key (there is none at Undefined).
        stack = fallbacks.get(key)
        if stack:
            return TableEntry(stack[-1], "backend fallback")
        # 7. Missing: calling raises, naming the operator and the key.
        return _MISSING_ENTRY

    def _rebuild(self, fallbacks: dict[DispatchKey, list[Kernel]]) -> None:
        """Recompute the whole table (SEMANTICS.md §4 warns against partial updates)."""
        entries = []
        kernels: list[Callable[..., Any]] = []
        mask = 0
        grad_mask = 0
        with_keyset_slots = 0
        positional_slots = keyword_slots = bump_slots = 0
        by_arity: list[list[Any]] = [[], [], []]
        by_arity_k: list[list[Any]] = [[], []]
        defined = self._schema is not None
        tops = {key: stack[-1] for key, stack in self._kernels.items() if stack}
        for slot, key, bit in _SLOTS:
            entry = self._resolve(key, fallbacks, tops)
            entries.append(entry)
            kernel = entry.kernel
            if not defined:
                fn: Callable[..., Any] = _Raiser(self, key, "undefined")
                with_keyset = True
            elif kernel is None:
                fn, with_keyset = _Raiser(self, key, "missing"), True
                mask |= bit
                grad_mask |= bit
            elif kernel.is_fallthrough:
                fn, with_keyset = _Raiser(self, key, "fallthrough"), True
            else:
                fn, with_keyset = kernel.fn, kernel.with_keyset
                if entry.source == "backend fallback":
                    fn = (_BoundFallbackWithKeyset if with_keyset else _BoundFallback)(fn, self)
                grad_mask |= bit
                if not kernel.grad_only:
                    mask |= bit
                if with_keyset and not _callpath.TRACE:  # Note [Positional entries]
                    if getattr(fn, "bumps_first", False):  # Note [Direct in-place entry]
                        bump_slots |= 1 << slot
                    entries_n = getattr(fn, "positional", None)
                    if entries_n is not None:  # and keyword entries only beside them
                        positional_slots |= 1 << slot
                        _place_entries(by_arity, slot, entries_n)
                        entries_k = getattr(fn, "keywords", None)
                        if entries_k is not None:
                            keyword_slots |= 1 << slot
                            _place_entries(by_arity_k, slot, entries_k)
            kernels.append(fn)
            if with_keyset:
                with_keyset_slots |= 1 << slot
        self._entries = tuple(entries)
        self._state = _CallState(
            mask,
            tuple(kernels),
            with_keyset_slots,
            grad_mask,
            positional_slots,
            tuple(tuple(k) for k in by_arity),  # type: ignore[arg-type]
            keyword_slots,
            tuple(tuple(k) for k in by_arity_k),  # type: ignore[arg-type]
            bump_slots,
        )

    def _dump(self) -> str:
        """The computed table as text: one line per runtime key, highest priority first."""
        header = str(self._schema) if self._schema is not None else "<not defined>"
        lines = [f"{self._qualname}: {header}"]
        for key, stack in sorted(self._kernels.items(), key=lambda kv: -int(kv[0])):
            for depth, k in enumerate(reversed(stack)):
                state = "active" if depth == 0 else "shadowed"
                lines.append(f"  registered at {key.name}: {k.name} ({k.location}, {state})")
        lines.append(f"  {'key':<22}{'kernel':<47} source")
        order = [key_for_slot(s) for s in range(_NUM_SLOTS - 1, 0, -1)] + [_UNDEFINED]
        for key in order:
            entry = self._entries[int(key)] if self._entries else _MISSING_ENTRY
            active = entry.kernel
            if not self.is_defined:
                name, source = "<operator not defined>", "-"
            elif active is None:
                name, source = "<missing>", "missing"
            else:
                name, source = active.name, entry.source
                if active.grad_only:
                    source += ", grad-only"
            lines.append(f"  {key.name:<22}{name:<47} {source}")
        return "\n".join(lines)

    # -- Python-only overrides ----------------------------------------------------------------
    def py_impl(self, key_or_mode: object) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a Python-only override (decorator).

        With a dispatch key, ``fn(*args, **kwargs)`` runs whenever that key is
        dispatched, ahead of every registered kernel.  With a DispatchMode subclass,
        ``fn(mode, *args, **kwargs)`` runs instead of that mode's ``__dispatch__`` for
        this operator.
        """
        if isinstance(key_or_mode, type):
            mode_class = key_or_mode

            def register_mode(fn: Callable[..., Any]) -> Callable[..., Any]:
                self._py_kernels[mode_class] = fn
                return fn

            return register_mode
        key = parse_key(key_or_mode)  # type: ignore[arg-type]
        if not key.is_runtime:
            raise ValueError(
                f"{self._qualname}.py_impl: expected a runtime dispatch key or a mode class, "
                f"got {key.name}"
            )

        def register_key(fn: Callable[..., Any]) -> Callable[..., Any]:
            self._py_kernels[key] = Kernel(fn, key, with_keyset=False, location=_py_impl_location())
            with LOCK:
                self._rebuild(FALLBACKS)
            return fn

        return register_key


def _py_impl_location() -> str:
    frame = sys._getframe(2)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


class _OneTensor(OpOverload):
    """An overload whose only tensor argument is the first one (``sin``, ``sum``...).

    Its ``__call__``, ``call1`` and ``call2`` are generated: Note [Specialised call paths]
    in ``_callpath.py``.  An operator gets this class when its schema is defined.
    """

    __slots__ = ()


class _TwoTensors(OpOverload):
    """An overload whose tensor arguments are the first two (``add.Tensor``, ``mm``...).

    See Note [Specialised call paths].
    """

    __slots__ = ()


class _ThreeTensors(OpOverload):
    """An overload whose tensor arguments are the first three (``addmm``, ``addcmul``...).

    See Note [Specialised call paths].
    """

    __slots__ = ()


class _FirstTensorList(OpOverload):
    """An overload whose only tensor argument is a first ``Tensor[]`` (``cat``, ``stack``...).

    Its entries OR the list's bits inline (``_LIST_OR``, Note [Specialised call paths]).
    """

    __slots__ = ()


# Note [Specialised call paths]: the class an operator gets by its plain tensor positions.
_SPECIALISED: dict[tuple[int, ...], type[OpOverload]] = {
    (0,): _OneTensor,
    (0, 1): _TwoTensors,
    (0, 1, 2): _ThreeTensors,
}
_callpath.install(OpOverload, _OneTensor, _TwoTensors, _ThreeTensors, _FirstTensorList)


def _traced_below(self: OpOverload, bits: int, /) -> Callable[..., Any]:
    """``below`` under DISPATCH_TRACE: through ``redispatch``, so the hop is logged."""
    return partial(self.redispatch, _from_bits(bits))


if _callpath.TRACE:
    OpOverload.below = _traced_below  # type: ignore[method-assign]

# The registry of record: every operator that was ever defined or given a kernel, by
# qualified name.  Entries are never removed (user handles stay valid; a destroyed
# definition leaves an undefined operator).  Written only by ``_registry`` under its lock.
OPERATORS: dict[str, OpOverload] = {}
# Backend fallbacks per runtime key, newest last.
FALLBACKS: dict[DispatchKey, list[Kernel]] = {}
# Held by every write (registrations, py_impl); calls take no lock.
LOCK = threading.RLock()


def lookup(qualname: str) -> OpOverload:
    """The defined operator ``ns::name`` or ``ns::name.overload``; KeyError if none."""
    op = OPERATORS.get(qualname)
    if op is None and qualname.endswith(".default"):
        op = OPERATORS.get(qualname[: -len(".default")])
    if op is None or op._schema is None:
        raise KeyError(f"no operator named {qualname!r} is defined")
    return op

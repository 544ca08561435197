"""ADInplaceOrView kernels: version counters of in-place operators, ``_base`` of views.

Imports: ``dispatch`` and ``tensor``'s ``_convert``, ``_definitions``, ``optable``, ``_tensor``.

As in PyTorch, the key between autograd and the backends does the bookkeeping
that autograd relies on, generated from the schemas, for every backend at once:
- an operator that writes to an argument (``Tensor(a!)``: ``add_``, ``copy_``,
  ``add.out``, ``index_put_``) bumps that tensor's version counter after the
  backend ran; a tensor and its views share one counter, so writing through a
  view bumps the base too, and autograd sees stale saved tensors either way;
- a view operator (the table's ``view`` family) makes each result a view of
  ``self``: ``_base`` is the root tensor (a view of a view has the first base)
  and the version counter is shared; ``reshape`` (``maybe_view``) only when the
  backend returned memory shared with ``self``.
"""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np

from dispatch import DispatchKey, DispatchKeySet, Library, _callpath
from dispatch._codegen import compile_source
from dispatch._keys import keyset_from_bits as _from_bits

from . import _convert, _definitions
from ._tensor import Tensor, shared_version_counter
from .optable import OP_TABLE

__all__ = ["LIB", "mark_view", "register"]

LIB: Library | None = None
_BELOW = DispatchKeySet.full_after(DispatchKey.ADInplaceOrView)
_BELOW_BITS = _BELOW.bits


def mark_view(out: Any, base: Any) -> None:
    """Make ``out`` (a tensor, or a list/tuple of them) a view of ``base``."""
    root = base._base if base._base is not None else base
    counter = shared_version_counter(base)
    if isinstance(out, (list, tuple)):
        for t in out:
            t._base = root
            t._version_counter = counter
    else:
        out._base = root
        out._version_counter = counter


_ndarray = np.ndarray


def _kernel(op: Any, kind: str, position: int = 0, name: str = "") -> Any:
    """The ADInplaceOrView kernel of ``op``: ``kind`` "bump" (the written argument,
    ``position`` or keyword ``name``, gets its version bumped after the kernel below),
    "view" or "maybe_view" (the result made a view of ``self``).  One source for the
    three (they are the hot ones: ``p.add_(g)``, ``w.t()``) and for their entries
    (``_entries``), with the kernel below called without ``op.below``'s frame; under
    DISPATCH_TRACE through it, so the hop is logged."""
    traced = _callpath.TRACE
    bump = kind == "bump"
    maybe = kind == "maybe_view"
    kernel = _factory(bump, 0, False)(op, maybe, traced, position, name)
    prefix = "inplace" if bump else "view"
    kernel.__name__ = kernel.__qualname__ = f"{prefix}_{op.name.split('::')[1].replace('.', '_')}"
    if not traced:
        positional, keywords = _entries(op, kernel, bump, maybe, position)
        if positional is not None:
            kernel.positional, kernel.keywords = positional, keywords  # type: ignore[attr-defined]
        # Note [Direct in-place entry] in dispatch/_operator.py: generated in-place
        # methods do this kernel's two steps themselves for plain tensors.
        kernel.bumps_first = bump and position == 0  # type: ignore[attr-defined]
    return kernel


# The steps of the kernel (``_GENERAL``: the key set, ``*args`` and ``**kwargs``) and of
# its entries (``_ENTRY``: the key bits and the arguments): the kernel below, then the
# bump of the written argument ``a`` or the marks of ``a``'s view.
_GENERAL = """\
def entry(keyset, /, *args, **kwargs):
    ks = keyset._bits & _BELOW_BITS
    if traced:
        out = op.below(ks)(*args, **kwargs)
    else:  # ``op.below(ks)(*args, **kwargs)``, inline: the slot's kernel
        state = op._state
        slot = ks.bit_length()
        if state.with_keyset >> slot & 1:
            out = state.kernels[slot](_from_bits(ks), *args, **kwargs)
        elif kwargs:
            out = state.kernels[slot](*args, **kwargs)
        else:
            out = state.kernels[slot](*args)
    a = {written}
{after}\
"""
_ENTRY = """\
def entry(bits, {params}/):
    ks = bits & _BELOW_BITS
    state = op._state
    slot = ks.bit_length()
    if state.with_keyset >> slot & 1:
        out = state.kernels[slot](_from_bits(ks), {forward})
    else:
        out = state.kernels[slot]({forward})
{after}\
"""
_BUMP = """\
    counter = {written}._version_counter
    if counter is None:
        {written}._version_counter = [1]
    else:
        counter[0] += 1
    return out
"""
_VIEW = """\
    if maybe and not (out is not a and _shares(out._array, a._array)):
        return out
    if type(out) is _Tensor:
        counter = a._version_counter
        if counter is None:
            counter = a._version_counter = [0]
        base = a._base
        out._base = base if base is not None else a
        out._version_counter = counter
    else:
        _mark_view(out, a)
    return out
"""


# (bump, arity, keywords) -> a factory of the kernel's (arity 0) or an entry's closures
# over an operator, whether its view is a maybe-view, DISPATCH_TRACE and the written
# argument's position and name: compiled once, a dozen in all, so that the kernels of
# the hundreds of in-place and view operators cost closures at import (ci/bench
# import_time.py).
_FACTORIES: dict[tuple[bool, int, bool], Any] = {}


def _factory(bump: bool, n: int, keywords: bool) -> Any:
    key = (bump, n, keywords)
    factory = _FACTORIES.get(key)
    if factory is None:
        after = _BUMP.format(written="a") if bump else _VIEW
        if n == 0:
            written = (
                "args[position] if position < len(args) else kwargs[name]"
                if bump
                else 'args[0] if args else kwargs["self"]'
            )
            source = _GENERAL.format(written=written, after=after)
        else:
            names = ("a", "b", "c")
            params = "".join(f"{x}, " for x in names[:n]) + ("kwargs, " if keywords else "")
            forward = ", ".join(names[:n]) + (", **kwargs" if keywords else "")
            source = _ENTRY.format(params=params, forward=forward, after=after)
        source = (
            f"def factory(op, maybe, traced, position, name):\n"
            f"{textwrap.indent(source, '    ')}    return entry\n"
        )
        scope = {
            "_from_bits": _from_bits, "_BELOW_BITS": _BELOW_BITS, "_Tensor": Tensor,
            "_shares": _shares, "_mark_view": mark_view,
        }  # fmt: skip
        exec(compile_source(source, "<ADInplaceOrView entry>"), scope)  # noqa: S102
        factory = _FACTORIES[key] = scope["factory"]
    return factory


def _entries(op: Any, kernel: Any, bump: bool, maybe: bool, position: int) -> Any:
    """``kernel``'s entries for the fixed-arity and keyword call paths (Note [Positional
    entries]): ``entry(bits, a, ...)`` and ``entry(bits, a, b, kwargs)``, the kernel below
    called as ``kernel`` calls it, without the KeySet object, ``*args`` and ``**kwargs``
    it is passed and repacks, in one frame.  None for an operator that writes another
    argument than the first (``out=`` variants): the general kernel takes its calls."""
    if bump and position:
        return None, None

    def make(n: int, keywords: bool) -> Any:
        fn = _factory(bump, n, keywords)(op, maybe, False, position, "")
        fn.__name__ = fn.__qualname__ = f"{kernel.__name__}_{n}{'k' * keywords}"
        return fn

    return (make(1, False), make(2, False), make(3, False)), (make(2, True), make(3, True))


def _bump_all_kernel(op: Any, names: list[str]) -> Any:
    """``_kernel``'s "bump" for an operator writing several keyword-only outs (``values``,
    ``indices``)."""
    below = op.below

    def kernel(keyset: DispatchKeySet, /, *args: Any, **kwargs: Any) -> Any:
        out = below(keyset._bits & _BELOW_BITS)(*args, **kwargs)
        for name in names:
            shared_version_counter(kwargs[name])[0] += 1
        return out

    kernel.__name__ = kernel.__qualname__ = f"inplace_{op.name.split('::')[1].replace('.', '_')}"
    return kernel


def _shares(out: Any, array: Any) -> bool:
    """Whether ``maybe_view``'s result array ``out`` is memory of ``array``.

    A NumPy view's ``base`` is the array owning the memory (NumPy collapses chains of
    views), so a view of ``array`` has ``base`` ``array`` or ``array.base``: decided
    without ``may_share_memory``'s bounds computation.  Any other answer is checked
    the long way.  reshape of an empty tensor never copies (NumPy reports no shared
    memory for it).
    """
    if type(out) is _ndarray:
        base = out.base
        if base is not None and (base is array or base is array.base):
            return True
    return not out.size or _convert.shares_memory(out, array)


def register() -> None:
    """Register the ADInplaceOrView kernels of every mutating or view operator (once)."""
    global LIB
    if LIB is not None:
        return
    lib = Library("core", "IMPL")
    for row in OP_TABLE:
        for schema, op in zip(_definitions.schemas(row), _definitions.overloads(row), strict=True):
            qualname = schema.qualified_name
            if row.family in ("view", "maybe_view"):
                kernel = _kernel(op, row.family)
            elif schema.is_mutable:
                writes = [i for i, a in enumerate(schema.arguments) if a.is_write]
                if len(writes) > 1:  # sort.out(..., *, values, indices): bump each
                    kernel = _bump_all_kernel(op, [schema.arguments[i].name for i in writes])
                else:
                    kernel = _kernel(op, "bump", writes[0], schema.arguments[writes[0]].name)
            else:
                continue
            lib.impl(qualname, kernel, "ADInplaceOrView", with_keyset=True)
    LIB = lib

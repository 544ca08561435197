"""The one write path for registrations: validate, record where, rebuild tables.

Imports: the standard library and sibling ``dispatch`` modules.

Every change (define, kernel, backend fallback) goes through a function here,
under one re-entrant lock, and returns an undo callable that removes exactly
that registration.  Readers (the call path) take no lock: each operator swaps in
a complete new ``_CallState`` (``OpOverload._state``) with one reference store,
atomic in CPython (with the GIL or under free-threading), so a concurrent call sees
the old table or the new one.

Note [Bulk registration]
~~~~~~~~~~~~~~~~~~~~~~~~
Each registration rebuilds its operator's whole table (~15-30 us), and a backend
fallback rebuilds every table.  ``import tensor`` makes ~2,000 registrations into
~500 operators, so most of those rebuilds would be overwritten by the next one of the
same operator.  Inside ``bulk_registration()`` the write functions only note which
operators changed (all of them, after a fallback), and each is rebuilt once when
the outermost block ends.  A table is a function of the registrations alone
(``OpOverload._rebuild`` reads nothing else), so the tables after the block are
the ones immediate rebuilds would have left; ``tests/tensor/test_imports.py``
compares every operator's ``dump_table`` both ways.  The deferral is the block's
thread's own: another thread's registrations rebuild at once (from every
registration made so far, the block's included), and the block holds the lock only
while it rebuilds, so imports inside it cannot deadlock with registering threads.
Until the block ends, calls of an operator it changed see the old table.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from . import _ops
from ._kernel import Kernel
from ._keys import ALIAS_TO_RUNTIME, DispatchKey
from ._operator import FALLBACKS, LOCK, OPERATORS, OpOverload
from ._packet import PACKET_OBJECTS, PACKETS
from ._schema import FunctionSchema

__all__ = [
    "FALLBACKS",
    "LOCK",
    "add_fallback",
    "add_kernel",
    "bulk_registration",
    "caller_location",
    "define_op",
    "get_or_create",
]

_DEFINE_LOCATIONS: dict[str, str] = {}


class _Bulk(threading.local):
    """This thread's bulk_registration() state (Note [Bulk registration])."""

    # The operators whose rebuild waits for the block's end (insertion-ordered); None
    # outside a block.
    pending: dict[OpOverload, None] | None = None
    # Whether every operator's does (a backend fallback changed).
    everything = False


_bulk = _Bulk()
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_CONTEXTLIB = os.path.abspath(contextlib.__file__)


# Absolute code file name -> whether its frames are skipped (this package, contextlib):
# every registration walks a few frames, and abspath is most of the walk's cost.
_SKIPPED: dict[str, bool] = {}


def _skipped(co_filename: str) -> bool:
    skipped = _SKIPPED.get(co_filename)
    if skipped is None:
        filename = os.path.abspath(co_filename)
        skipped = filename.startswith(_PACKAGE_DIR) or filename == _CONTEXTLIB
        if os.path.isabs(co_filename):  # a relative one depends on the working directory
            _SKIPPED[co_filename] = skipped
    return skipped


def caller_location() -> str:
    """``file:line`` of the first frame outside this package (and contextlib)."""
    frame = sys._getframe(1)
    while frame is not None:
        if not _skipped(frame.f_code.co_filename):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back  # type: ignore[assignment]
    return "<unknown>"


def qualname_of(schema: FunctionSchema) -> str:
    base = schema.name
    return f"{base}.{schema.overload_name}" if schema.overload_name else base


@contextlib.contextmanager
def bulk_registration() -> Iterator[None]:
    """Within the block, rebuild each changed operator's table once, at its end.

    For registering many kernels at once (a backend, a package's operator set):
    Note [Bulk registration].  The tables after the block are the ones the same
    registrations would leave outside it.  Blocks nest; the outermost one rebuilds.

    >>> from dispatch import Library, bulk_registration, dump_table
    >>> with Library("doc_bulk", "DEF") as lib:
    ...     with bulk_registration():
    ...         _ = lib.define("f(Tensor x) -> Tensor")
    ...         lib.impl("f", abs, "CPU")
    ...     print(dump_table("doc_bulk::f").splitlines()[-2])
      CPU                   builtins.abs                                    direct
    """
    if _bulk.pending is not None:  # nested: the outermost block rebuilds
        yield
        return
    _bulk.pending, _bulk.everything = {}, False
    try:
        yield
    finally:
        with LOCK:
            pending, everything = _bulk.pending, _bulk.everything
            _bulk.pending, _bulk.everything = None, False
            ops = list(pending)
            if everything:
                ops += [op for op in OPERATORS.values() if op not in pending]
            for op in ops:
                op._rebuild(FALLBACKS)


def _rebuild(op: OpOverload) -> None:
    """Rebuild ``op``'s table now, or at the end of this thread's bulk_registration block."""
    pending = _bulk.pending
    if pending is None:
        op._rebuild(FALLBACKS)
    else:
        pending[op] = None


def get_or_create(qualname: str) -> OpOverload:
    op = OPERATORS.get(qualname)
    if op is None:
        op = OpOverload(qualname)
        OPERATORS[qualname] = op
        ns, rest = qualname.split("::", 1)
        PACKETS.setdefault((ns, rest.split(".", 1)[0]), []).append(op)
        _rebuild(op)
    return op


def _packet_changed(op: OpOverload) -> None:
    ns, rest = op.name.split("::", 1)
    name = rest.split(".", 1)[0]
    packet = PACKET_OBJECTS.get((ns, name))
    if packet is not None:
        packet._clear_cache()
    _ops.forget(ns, name)


def define_op(schema: FunctionSchema, tags: tuple[str, ...], location: str) -> Callable[[], None]:
    qualname = qualname_of(schema)
    with LOCK:
        op = get_or_create(qualname)
        if op.is_defined:
            raise RuntimeError(
                f"Tried to register an operator ({schema}) with the same name and overload "
                f"name multiple times. Each overload's schema should only be registered with "
                f"a single call to define(). Duplicate registration: registered at {location}. "
                f"Original registration: registered at {op.define_location}"
            )
        op._set_schema(schema, tags)
        op.define_location = location
        _rebuild(op)
        _packet_changed(op)

    def undo() -> None:
        with LOCK:
            if op._schema is schema:
                op._set_schema(None, ())
                op.define_location = ""
                _rebuild(op)
                _packet_changed(op)
                _drop_if_empty(op)

    return undo


def add_kernel(
    qualname: str,
    key: DispatchKey,
    fn: Callable[..., Any],
    *,
    with_keyset: bool,
    allow_override: bool,
    location: str,
    grad_only: bool = False,
) -> Callable[[], None]:
    kernel = Kernel(fn, key, with_keyset=with_keyset, location=location, grad_only=grad_only)
    with LOCK:
        op = get_or_create(qualname)
        existing = op._top(key)
        if existing is not None and not allow_override:
            raise RuntimeError(
                f"Tried to register a kernel for {qualname} at dispatch key {key.name} from "
                f"{location}, but one is already registered there: {existing.name} from "
                f"{existing.location}. Destroy the Library that registered the first one, or "
                f"pass allow_override=True to replace it on purpose (destroying the new "
                f"registration brings the old one back)."
            )
        op._add_kernel(kernel)
        _rebuild(op)

    def undo() -> None:
        with LOCK:
            op._remove_kernel(kernel)
            _rebuild(op)
            _drop_if_empty(op)

    return undo


def add_fallback(
    key: DispatchKey,
    fn: Callable[..., Any],
    *,
    with_keyset: bool,
    location: str,
    allow_override: bool = False,
    grad_only: bool = False,
) -> Callable[[], None]:
    keys = sorted(ALIAS_TO_RUNTIME[key]) if key.is_alias else [key]
    if DispatchKey.Undefined in keys:
        raise RuntimeError("a backend fallback cannot be registered at the Undefined key")
    kernels = [
        Kernel(fn, k, with_keyset=with_keyset, location=location, grad_only=grad_only) for k in keys
    ]
    with LOCK:
        if not allow_override:
            for k in keys:
                stack = FALLBACKS.get(k)
                if stack:
                    raise RuntimeError(
                        f"Tried to register multiple backend fallbacks for the same dispatch "
                        f"key {k.name}; previous registration registered at "
                        f"{stack[-1].location}, new registration registered at {location}. "
                        f"Pass allow_override=True to replace it on purpose."
                    )
        for kernel in kernels:
            FALLBACKS.setdefault(kernel.key, []).append(kernel)
        _rebuild_all()

    def undo() -> None:
        with LOCK:
            for kernel in kernels:
                stack = FALLBACKS.get(kernel.key, [])
                for i in range(len(stack) - 1, -1, -1):
                    if stack[i] is kernel:
                        del stack[i]
                        break
            _rebuild_all()

    return undo


def _drop_if_empty(op: OpOverload) -> None:
    """Forget an operator with no definition and no kernels, so define/destroy cycles
    leave nothing behind.  A handle kept by a user stays callable and says the
    operator is not defined; a later ``define`` makes a new operator object."""
    if op.is_defined or op._kernels or op._py_kernels:
        return
    if OPERATORS.get(op.name) is op:
        del OPERATORS[op.name]
    ns, rest = op.name.split("::", 1)
    name = rest.split(".", 1)[0]
    siblings = PACKETS.get((ns, name), [])
    if op in siblings:
        siblings.remove(op)
    if not siblings:
        PACKETS.pop((ns, name), None)
        PACKET_OBJECTS.pop((ns, name), None)
        _ops.forget(ns, name)


def _rebuild_all() -> None:
    if _bulk.pending is not None:
        _bulk.everything = True
        return
    for op in list(OPERATORS.values()):
        op._rebuild(FALLBACKS)

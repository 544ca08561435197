"""Per-thread dispatch state: the local include and exclude key sets.

Imports: the standard library and ``dispatch._keys``.

Defaults follow c10 (c10/core/impl/LocalDispatchKeySet.h): BackendSelect and
ADInplaceOrView are included, every autocast key is excluded.  Every new thread
starts from the defaults because they are class attributes of the
``threading.local`` subclass; a thread that changes them gets its own copy.

The call path reads ``state.included`` and ``state.keep`` (the complement of the
excluded set, so a call needs one ``&`` instead of ``& ~``).  Both are plain ints
written together by ``_set`` under no lock: they belong to one thread.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from . import _keys
from ._keys import DispatchKey, DispatchKeySet

__all__ = [
    "DEFAULT_EXCLUDED",
    "DEFAULT_INCLUDED",
    "exclude_keys",
    "include_keys",
    "state",
    "tls_local_exclude_set",
    "tls_local_include_set",
    "tls_is_dispatch_key_excluded",
    "tls_is_dispatch_key_included",
    "tls_set_dispatch_key_excluded",
    "tls_set_dispatch_key_included",
]

DEFAULT_INCLUDED = DispatchKey.BackendSelect.bit | DispatchKey.ADInplaceOrView.bit
DEFAULT_EXCLUDED = 0
for _k in _keys.AUTOCAST_KEYS:
    DEFAULT_EXCLUDED |= _k.bit


DEFAULT_KEEP = ~DEFAULT_EXCLUDED


class _State(threading.local):
    included: int = DEFAULT_INCLUDED
    excluded: int = DEFAULT_EXCLUDED
    keep: int = DEFAULT_KEEP
    # (included, keep) in one attribute: the call path reads it with one lookup.
    sets: tuple[int, int] = (DEFAULT_INCLUDED, DEFAULT_KEEP)
    nondefault: bool = False


state = _State()

# Note [Default key sets]
# NONDEFAULT[0] counts the threads whose include/exclude sets differ from the
# defaults.  While it is 0 the call path uses the default sets (module constants)
# instead of reading this thread's state, saving two thread-local lookups per call.
# It over-approximates: a thread that sets its sets back to the defaults or exits
# while they differ may leave it high, which only costs speed.  The count changes
# under a lock; readers see an int.  A thread's own change is counted before its
# next call reads the count, and other threads' changes never concern its own sets,
# so a stale read is always safe (this holds without the GIL too).
NONDEFAULT = [0]
_COUNT_LOCK = threading.Lock()


def _set(included: int, excluded: int) -> None:
    state.included = included
    state.excluded = excluded
    state.keep = ~excluded
    state.sets = (included, ~excluded)
    nondefault = included != DEFAULT_INCLUDED or excluded != DEFAULT_EXCLUDED
    if nondefault != state.nondefault:
        with _COUNT_LOCK:
            NONDEFAULT[0] += 1 if nondefault else -1
        state.nondefault = nondefault


def tls_local_include_set() -> DispatchKeySet:
    """This thread's local include set.

    >>> tls_local_include_set()
    DispatchKeySet(ADInplaceOrView, BackendSelect)
    """
    return DispatchKeySet.from_bits(state.included)


def tls_local_exclude_set() -> DispatchKeySet:
    """This thread's local exclude set.

    >>> DispatchKey.AutocastCPU in tls_local_exclude_set()
    True
    """
    return DispatchKeySet.from_bits(state.excluded)


def _bits_of(keys: tuple[DispatchKey | str | DispatchKeySet, ...]) -> int:
    bits = 0
    for k in keys:
        if isinstance(k, DispatchKeySet):
            bits |= k.bits
            continue
        key = _keys.parse_key(k)
        if key.is_alias:
            for rk in _keys.ALIAS_TO_RUNTIME[key]:
                bits |= rk.bit
        else:
            bits |= key.bit
    return bits


@contextmanager
def exclude_keys(*keys: DispatchKey | str | DispatchKeySet) -> Iterator[None]:
    """Add keys to this thread's exclude set for the duration of the block.

    The previous sets are restored on exit, also when the block raises.

    >>> with exclude_keys(DispatchKey.AutogradCPU):
    ...     DispatchKey.AutogradCPU in tls_local_exclude_set()
    True
    """
    bits = _bits_of(keys)
    inc, exc = state.included, state.excluded
    _set(inc, exc | bits)
    try:
        yield
    finally:
        _set(inc, exc)


@contextmanager
def include_keys(*keys: DispatchKey | str | DispatchKeySet) -> Iterator[None]:
    """Add keys to this thread's include set for the duration of the block.

    Exclusion wins over inclusion, as in c10.

    >>> with include_keys("Python"):
    ...     DispatchKey.Python in tls_local_include_set()
    True
    """
    bits = _bits_of(keys)
    inc, exc = state.included, state.excluded
    _set(inc | bits, exc)
    try:
        yield
    finally:
        _set(inc, exc)


def tls_set_dispatch_key_excluded(key: DispatchKey | str, excluded: bool) -> None:
    """Set or clear one key in this thread's exclude set (c10's spelling).

    Autocast uses it: its keys are excluded by default and enabling autocast
    clears the exclusion.  Prefer the ``exclude_keys`` guard where a block fits.
    """
    bits = _bits_of((key,))
    exc = state.excluded | bits if excluded else state.excluded & ~bits
    _set(state.included, exc)


def tls_set_dispatch_key_included(key: DispatchKey | str, included: bool) -> None:
    """Set or clear one key in this thread's include set (c10's spelling)."""
    bits = _bits_of((key,))
    inc = state.included | bits if included else state.included & ~bits
    _set(inc, state.excluded)


def tls_is_dispatch_key_excluded(key: DispatchKey | str) -> bool:
    return bool(state.excluded & _keys.parse_key(key).bit)


def tls_is_dispatch_key_included(key: DispatchKey | str) -> bool:
    return bool(state.included & _keys.parse_key(key).bit)


@contextmanager
def _replace_tls(included: int, excluded: int) -> Iterator[None]:
    """Replace both sets wholesale (used to restore a snapshot while a mode runs)."""
    inc, exc = state.included, state.excluded
    _set(included, excluded)
    try:
        yield
    finally:
        _set(inc, exc)

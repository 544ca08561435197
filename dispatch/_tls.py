"""Per-thread dispatch state: the local include and exclude key sets.

Imports: the standard library and ``dispatch._keys``.

Defaults follow c10 (c10/core/impl/LocalDispatchKeySet.h): BackendSelect and
ADInplaceOrView are included, every autocast key is excluded.  Every new thread
starts from the defaults because they are class attributes of the
``threading.local`` subclass; a thread that changes them gets its own copy.

The call path reads ``state.sets``: ``(included, keep)``, where ``keep`` is the
complement of the excluded set, so a call needs one ``&`` instead of ``& ~``.  It is
the one per-thread copy of the sets (``included``/``excluded``/``keep`` are views of
it), written whole by ``_set``/``_set_sets`` under no lock: it belongs to one thread.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ContextDecorator, contextmanager

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
    # (included, keep) in one attribute: the call path reads it with one lookup, and a
    # Python-mode call swaps both sets with one write (dispatch/_modes.py).
    sets: tuple[int, int] = (DEFAULT_INCLUDED, DEFAULT_KEEP)
    # Whether the sets differ from the defaults beyond autocast keys (Note [Default key sets]).
    beyond_autocast: bool = False
    # Grad mode (c10 keeps GradMode beside the key sets too).  ``tensor.autograd``'s
    # guards write it; the call path reads it to skip grad-only kernels while it is off
    # (Note [Grad-only kernels] in _operator.py).
    grad_enabled: bool = True
    inference: bool = False

    @property
    def included(self) -> int:
        return self.sets[0]

    @property
    def excluded(self) -> int:
        return ~self.sets[1]

    @property
    def keep(self) -> int:
        return self.sets[1]


state = _State()

# Note [Default key sets]
# NONDEFAULT[0] is a key mask covering every key at which some thread's sets may
# differ from the defaults: every key while any thread's sets differ beyond autocast
# keys (a Python mode, inference_mode, an exclude_keys guard...), else the autocast
# keys that any thread has ever changed (an autocast region; kept for good, so that
# an autocast kernel excluding its own key and restoring it takes no lock).  The call
# path ANDs it with the operator's mask: when the result is 0, no thread's sets differ
# at a key the operator does not fall through, so the key set is the same as with the
# defaults and the call computes it from module constants instead of reading this
# thread's state (a thread-local lookup saved).  That makes autocast free for an
# operator with no autocast kernel: sin under autocast("cpu") costs what plain sin
# costs (ci/bench/layers.py); after autocast was used, the ~30 operators that have an
# autocast kernel read the thread's sets on every call, a few ns.  The AND costs every
# call ~4 ns; testing the mask for 0 first would spare plain calls that, but then calls
# under autocast would pay it and the autocast layer would no longer be free.
# The mask only over-approximates.  A thread that exits while its sets differ stays
# counted, which costs speed only.  Changes are made under a lock; readers see an int.
# A thread's own change is made before its next call reads the mask, and other
# threads' changes never concern its own sets, so a stale read is always safe (this
# holds without the GIL too).
NONDEFAULT = [0]
_EVERY_KEY = (1 << (_keys.NUM_RUNTIME_KEYS + 1)) - 1
_AUTOCAST_BITS = DEFAULT_EXCLUDED
_BEYOND = [0]  # threads whose sets differ from the defaults beyond autocast keys
_STICKY = [0]  # autocast keys some thread has changed
_LOCK = threading.Lock()


# Note [Grad mode off somewhere]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A call whose tensors require grad reads its thread's grad mode to choose the grad mask
# (Note [Grad-only kernels] in _operator.py), a thread-local lookup (~35 ns).  GRAD_OFF[0]
# counts the threads whose grad mode is off, so while it is 0 (no ``no_grad`` open
# anywhere: a training step's forward) the call knows grad mode is on without the
# lookup.  Every write of ``state.grad_enabled`` goes through ``set_grad_mode``
# (tests/dispatch/test_grad_mode_count.py reads the sources for other writes), which
# counts a thread before its mode goes off and uncounts it after it comes back on, under
# a lock: a thread whose mode is off is always counted, so its own calls read its mode.
# A thread that exits with its mode off stays counted, which costs speed only.
GRAD_OFF = [0]


def set_grad_mode(enabled: bool) -> None:
    """Set this thread's grad mode (Note [Grad mode off somewhere])."""
    enabled = bool(enabled)
    if enabled is state.grad_enabled:
        return
    if enabled:
        state.grad_enabled = True
        with _LOCK:
            GRAD_OFF[0] -= 1
    else:
        with _LOCK:
            GRAD_OFF[0] += 1
        state.grad_enabled = False


def _set(included: int, excluded: int) -> None:
    """Replace this thread's sets."""
    _set_sets((included, ~excluded))


def _set_sets(sets: tuple[int, int]) -> None:
    """Replace this thread's sets, given as ``(included, keep)`` (``state.sets``'s form)."""
    state.sets = sets
    diff = (sets[0] ^ DEFAULT_INCLUDED) | (sets[1] ^ DEFAULT_KEEP)
    if diff & ~_AUTOCAST_BITS:
        if not state.beyond_autocast:
            _note(True, diff)
    elif state.beyond_autocast or diff & ~_STICKY[0]:
        # Compared with _STICKY, not NONDEFAULT: while another thread makes the mask
        # every key, these autocast keys must still be noted, for when it stops.
        _note(False, diff)


def _note(beyond: bool, diff: int) -> None:
    """Bring NONDEFAULT up to date with this thread's new sets (Note [Default key sets])."""
    with _LOCK:
        if beyond is not state.beyond_autocast:
            _BEYOND[0] += 1 if beyond else -1
            state.beyond_autocast = beyond
        if not beyond:
            _STICKY[0] |= diff
        NONDEFAULT[0] = _EVERY_KEY if _BEYOND[0] else _STICKY[0]


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


class _KeyGuard(ContextDecorator):
    """Edit this thread's sets for a block; restore them on exit, also when it raises.

    A class rather than a ``@contextmanager`` generator: autocast kernels enter one
    on every call, and a generator-based guard costs about twice as much.  Reentrant
    and usable as a decorator; each ``with`` saves the sets it found and puts them
    back, both of them (as the generator did).
    """

    _add = 0  # bits added to the include set
    _keep = -1  # mask applied to the keep set (the complement of the exclude set)

    def __init__(self) -> None:
        self._saved: list[tuple[int, int]] = []

    def _recreate_cm(self) -> _KeyGuard:
        # As a decorator: a fresh guard per call, so concurrent calls share no state.
        guard = object.__new__(type(self))
        guard._add, guard._keep, guard._saved = self._add, self._keep, []
        return guard

    def __enter__(self) -> None:
        sets = state.sets
        self._saved.append(sets)
        _set_sets((sets[0] | self._add, sets[1] & self._keep))

    def __exit__(self, *exc: object) -> None:
        _set_sets(self._saved.pop())


class exclude_keys(_KeyGuard):  # noqa: N801 - a guard, spelled like a function
    """Add keys to this thread's exclude set for the duration of the block.

    The previous sets are restored on exit, also when the block raises.

    >>> with exclude_keys(DispatchKey.AutogradCPU):
    ...     DispatchKey.AutogradCPU in tls_local_exclude_set()
    True
    """

    def __init__(self, *keys: DispatchKey | str | DispatchKeySet) -> None:
        self._keep = ~_bits_of(keys)  # a bad key raises here, before any change
        self._saved = []


class include_keys(_KeyGuard):  # noqa: N801 - a guard, spelled like a function
    """Add keys to this thread's include set for the duration of the block.

    Exclusion wins over inclusion, as in c10.

    >>> with include_keys("Python"):
    ...     DispatchKey.Python in tls_local_include_set()
    True
    """

    def __init__(self, *keys: DispatchKey | str | DispatchKeySet) -> None:
        self._add = _bits_of(keys)  # a bad key raises here, before any change
        self._saved = []


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

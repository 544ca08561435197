"""The Python-mode layer: ``DispatchMode``, the per-thread mode stack, and the
PythonTLSSnapshot and Python backend fallbacks (SEMANTICS.md §7).

Imports: the standard library and sibling ``dispatch`` modules.

- Entering a mode pushes it on this thread's stack and, if the stack was empty,
  adds Python and PythonTLSSnapshot to the thread's include set; leaving pops it
  and removes them when the stack empties.
- The PythonTLSSnapshot fallback records the thread's key sets when a call enters
  the dispatcher, then redispatches below itself, so the call goes through
  autocast and autograd as usual before it reaches the Python key.
- The Python fallback restores the entry snapshot, excludes every key above
  Python, and hands the call to the innermost mode (popped while it runs, so its
  own calls go to the layers below it), then to the ``__dispatch__`` classmethods
  of the tensor subclasses among the arguments.  ``NotImplemented`` passes on.

A tensor subclass takes part by defining a classmethod ``__dispatch__(cls, func,
types, args=(), kwargs=None)`` and carrying the Python key in ``_dispatch_bits``.
"""

from __future__ import annotations

import threading
from typing import Any

from . import _callpath, _registry, _tls
from ._keys import DispatchKey, DispatchKeySet
from ._operator import OpOverload, _BoundFallback

__all__ = ["DispatchMode", "current_modes", "overloaded_types"]

_PYTHON_BITS = DispatchKey.Python.bit | DispatchKey.PythonTLSSnapshot.bit
# Every runtime key above Python: excluded while a __dispatch__ handler runs.
_ABOVE_PYTHON = DispatchKeySet.full().bits & ~((DispatchKey.Python.bit << 1) - 1)
_BELOW_PYTHON = ~_ABOVE_PYTHON  # the same, as a mask on a keep set
_AFTER_SNAPSHOT_BITS = DispatchKeySet.full_after(DispatchKey.PythonTLSSnapshot).bits
_PYTHON_SLOT = int(DispatchKey.Python)  # the Python key's slot in a computed table
# Note [Snapshot straight to Python] is off under DISPATCH_TRACE, so every hop is logged.
_SHORTCUT = not _callpath.TRACE
_LOCATION = "dispatch/_modes.py (default backend fallback)"


class _ModeState(threading.local):
    def __init__(self) -> None:
        self.stack: list[DispatchMode] = []
        # (included, keep), as in _tls.state.sets, when the current call entered the
        # dispatcher.
        self.on_entry: tuple[int, int] | None = None


_state = _ModeState()


def current_modes() -> tuple[DispatchMode, ...]:
    """This thread's active modes, outermost first."""
    return tuple(_state.stack)


def _push(mode: DispatchMode) -> None:
    _state.stack.append(mode)
    tls = _tls.state
    _tls._set(tls.included | _PYTHON_BITS, tls.excluded)


def _pop() -> DispatchMode:
    mode = _state.stack.pop()
    if not _state.stack:
        tls = _tls.state
        _tls._set(tls.included & ~_PYTHON_BITS, tls.excluded)
    return mode


class DispatchMode:
    """Intercept every operator call in a ``with`` block.

    Subclasses define ``__dispatch__(self, func, types, args=(), kwargs=None)``;
    ``func(*args, **kwargs)`` inside it goes to the layers below the mode.

    >>> class Count(DispatchMode):
    ...     def __init__(self):
    ...         self.calls = 0
    ...     def __dispatch__(self, func, types, args=(), kwargs=None):
    ...         self.calls += 1
    ...         return func(*args, **(kwargs or {}))
    """

    def __dispatch__(
        self,
        func: OpOverload,
        types: tuple[type, ...],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        raise NotImplementedError(
            f"{type(self).__name__} must define __dispatch__(self, func, types, args, kwargs)"
        )

    def __enter__(self) -> DispatchMode:
        _push(self)
        return self

    def __exit__(self, *exc: object) -> None:
        stack = _state.stack
        if not stack or stack[-1] is not self:
            raise RuntimeError(
                f"{type(self).__name__}.__exit__: this mode is not the innermost active mode; "
                f"modes must be exited in the reverse order they were entered"
            )
        _pop()

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> DispatchMode:
        """Make an instance and enter it (leave with ``__exit__``)."""
        mode = cls(*args, **kwargs)
        return mode.__enter__()


def overloaded_types(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[type]:
    """Types among the tensor arguments that define ``__dispatch__``, in PyTorch's order:
    argument order, except that a subclass goes before its parent."""
    found: list[type] = []
    for index, name, _kind in op.schema.tensor_arg_indices:
        value = args[index] if index < len(args) else kwargs.get(name)
        for v in value if isinstance(value, (list, tuple)) else (value,):
            cls = type(v)
            if v is None or cls in found or getattr(cls, "__dispatch__", None) is None:
                continue
            for i, seen in enumerate(found):
                if issubclass(cls, seen):
                    found.insert(i, cls)
                    break
            else:
                found.append(cls)
    return found


def _handler_types(
    op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[type, ...]:
    """``overloaded_types`` as a tuple, with a shortcut for plain tensor arguments.

    Note [No subclass arguments]: most calls that reach the Python key come from a
    mode and have only plain tensors, at the schema's plain ``Tensor`` positions.  A
    ``getattr`` per such argument's type shows that none defines ``__dispatch__``,
    without building the ordered list (ci/bench/layers.py, the pass-through mode row;
    ``tensor.Tensor`` declares ``__dispatch__ = None`` so that this is a hit).
    """
    if not op._extractors:
        try:
            for i in op._tensor_pos:
                if getattr(type(args[i]), "__dispatch__", None) is not None:
                    break
            else:
                return ()
        except IndexError:  # a tensor argument given by keyword
            pass
    return tuple(overloaded_types(op, args, kwargs))


def _snapshot_fallback(keyset: DispatchKeySet, op: OpOverload, *args: Any, **kwargs: Any) -> Any:
    """Record the thread's key sets at dispatcher entry, then go below this key.

    Note [Snapshot straight to Python]: when the next key down is Python and its
    entry is the Python fallback (no autocast or autograd layer in between, as for a
    plain call under a mode), the snapshot would be the thread's sets as they are
    when that fallback runs, which is what it uses when it finds no snapshot.  So the
    fallback's body is called directly, skipping the snapshot bookkeeping, the
    redispatch and a repacking of the arguments (ci/bench/layers.py).  With
    DISPATCH_TRACE set the redispatch is kept, so every hop is logged.
    """
    below = keyset._bits & _AFTER_SNAPSHOT_BITS
    if _SHORTCUT and below.bit_length() == _PYTHON_SLOT:
        fn = op._state.kernels[_PYTHON_SLOT]
        if fn.__class__ is _BoundFallback and fn.fn is _python_fallback:
            return _handle(op, args, kwargs)
    outer = _state.on_entry
    if outer is None:
        _state.on_entry = _tls.state.sets
        try:
            return op.redispatch(DispatchKeySet.from_bits(below), *args, **kwargs)
        finally:
            _state.on_entry = None
    return op.redispatch(DispatchKeySet.from_bits(below), *args, **kwargs)


def _python_fallback(op: OpOverload, *args: Any, **kwargs: Any) -> Any:
    """Hand the call to the innermost mode, then to tensor subclasses."""
    return _handle(op, args, kwargs)


def _handle(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The Python fallback's body.

    Plain try/finally rather than context managers, and one swap of the thread's
    sets on the way in and one on the way out: this runs on every moded call.

    Note [Swapping sets on the mode path]: the sets a handler runs under exclude the
    autograd keys, so they differ from the defaults beyond autocast keys and make
    _tls.NONDEFAULT cover every key (Note [Default key sets]); so do the caller's
    sets while a mode is active (Python is included).  Going from sets that are
    beyond autocast keys to others that are leaves NONDEFAULT as it is, and so does
    going back to the caller's sets (already accounted for) while the thread's
    ``beyond_autocast`` flag is what it was: then a swap is one write of
    ``_tls.state.sets``, with no recount.
    """
    mode_state = _state
    tls = _tls.state
    outer = tls.sets
    beyond = tls.beyond_autocast  # outer's; the handlers' sets are (Note above)
    saved = mode_state.on_entry  # (included, keep) at dispatcher entry, or None
    entry = outer if saved is None else saved
    types = _handler_types(op, args, kwargs)
    # The handlers run under the entry snapshot with every key above Python excluded.
    keep = entry[1] & _BELOW_PYTHON
    stack = mode_state.stack
    try:
        # While a handler runs there is no entry snapshot (c10's RestorePythonTLSSnapshot):
        # calls it makes see the thread's key sets as they are then.
        if saved is not None:
            mode_state.on_entry = None
        if stack:
            mode = stack.pop()
            try:
                # Popping the last mode drops Python/PythonTLSSnapshot, as _pop does.
                sets = (entry[0] if stack else entry[0] & ~_PYTHON_BITS, keep)
                if beyond:
                    tls.sets = sets
                else:
                    _tls._set_sets(sets)
                override = op._py_kernels.get(type(mode)) if op._py_kernels else None
                if override is not None:
                    result = override(mode, *args, **kwargs)
                else:
                    result = mode.__dispatch__(op, types, args, kwargs)
            finally:
                stack.append(mode)
            if result is not NotImplemented:
                return result
            # Declined: the mode is back on the stack, with its keys included (_push).
            now = tls.sets
            _tls._set_sets((now[0] | _PYTHON_BITS, now[1]))
        else:
            _tls._set_sets((entry[0], keep))
        for cls in types:
            result = cls.__dispatch__(op, types, args, kwargs)  # type: ignore[attr-defined]
            if result is not NotImplemented:
                return result
    finally:
        if tls.beyond_autocast is beyond:
            tls.sets = outer
        else:
            _tls._set_sets(outer)
        if saved is not None:
            mode_state.on_entry = saved
    raise TypeError(
        f"Multiple dispatch failed for '{op.name}'; all __dispatch__ handlers returned "
        f"NotImplemented (modes: {[type(m).__name__ for m in _state.stack]}, "
        f"types: {[t.__name__ for t in types]})"
    )


def _register() -> None:
    _registry.add_fallback(
        DispatchKey.PythonTLSSnapshot,
        _snapshot_fallback,
        with_keyset=True,
        location=_LOCATION,
    )
    _registry.add_fallback(
        DispatchKey.Python, _python_fallback, with_keyset=False, location=_LOCATION
    )


_register()

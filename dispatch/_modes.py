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

from . import _registry, _tls
from ._keys import DispatchKey, DispatchKeySet
from ._operator import OpOverload

__all__ = ["DispatchMode", "current_modes", "overloaded_types"]

_PYTHON_BITS = DispatchKey.Python.bit | DispatchKey.PythonTLSSnapshot.bit
# Every runtime key above Python: excluded while a __dispatch__ handler runs.
_ABOVE_PYTHON = DispatchKeySet.full().bits & ~((DispatchKey.Python.bit << 1) - 1)
_AFTER_SNAPSHOT = DispatchKeySet.full_after(DispatchKey.PythonTLSSnapshot)
_LOCATION = "dispatch/_modes.py (default backend fallback)"


class _ModeState(threading.local):
    def __init__(self) -> None:
        self.stack: list[DispatchMode] = []
        # (included, excluded) when the current call entered the dispatcher.
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


def _snapshot_fallback(keyset: DispatchKeySet, op: OpOverload, *args: Any, **kwargs: Any) -> Any:
    """Record the thread's key sets at dispatcher entry, then go below this key."""
    outer = _state.on_entry
    if outer is None:
        _state.on_entry = (_tls.state.included, _tls.state.excluded)
    try:
        return op.redispatch(keyset & _AFTER_SNAPSHOT, *args, **kwargs)
    finally:
        _state.on_entry = outer


def _python_fallback(op: OpOverload, *args: Any, **kwargs: Any) -> Any:
    """Hand the call to the innermost mode, then to tensor subclasses."""
    saved = _state.on_entry
    entry = saved or (_tls.state.included, _tls.state.excluded)
    types = tuple(overloaded_types(op, args, kwargs))
    # While a handler runs there is no entry snapshot (c10's RestorePythonTLSSnapshot):
    # calls it makes see the thread's key sets as they are then.
    _state.on_entry = None
    tls = _tls.state
    outer_tls = (tls.included, tls.excluded)
    # Plain try/finally rather than a context manager: this runs on every moded call.
    _tls._set(entry[0], entry[1] | _ABOVE_PYTHON)
    try:
        if True:
            if _state.stack:
                mode = _pop()
                try:
                    override = op._py_kernels.get(type(mode))
                    if override is not None:
                        result = override(mode, *args, **kwargs)
                    else:
                        result = mode.__dispatch__(op, types, args, kwargs)
                finally:
                    _push(mode)
                if result is not NotImplemented:
                    return result
            for cls in types:
                result = cls.__dispatch__(op, types, args, kwargs)  # type: ignore[attr-defined]
                if result is not NotImplemented:
                    return result
    finally:
        _tls._set(*outer_tls)
        _state.on_entry = saved
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

"""Higher-order operators: Python-only operators that take functions (``cond``, ``map``).

Imports: the standard library and sibling ``dispatch`` modules.

As in ``torch/_ops.py``: a higher-order operator is not in the operator registry
and has no schema; its kernels are ``py_impl`` entries per dispatch key (or per
mode / tensor-subclass type for the Python key).  A call takes the key set of
every tensor found in its (nested) arguments, adds the thread's include set,
removes its exclude set and the operator's fallthrough keys, and runs the
highest key's kernel.  Kernels at layer keys go below themselves by calling the
operator again inside a TLS guard (``exclude_keys``), as PyTorch's do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from . import _modes, _tls
from ._keys import ALIAS_TO_RUNTIME, AUTOGRAD_KEYS, BACKEND_KEYS, DispatchKey, DispatchKeySet

__all__ = ["HigherOrderOperator"]

# torch/_ops.py: _HIGHER_ORDER_OP_DEFAULT_FALLTHROUGH_DISPATCH_KEYS
DEFAULT_FALLTHROUGH_KEYS = (
    DispatchKey.PythonDispatcher,
    DispatchKey.PythonTLSSnapshot,
    DispatchKey.ADInplaceOrView,
    DispatchKey.BackendSelect,
    DispatchKey.AutocastCPU,
    DispatchKey.AutocastCUDA,
)
_CEA = DispatchKey.CompositeExplicitAutograd
_CIA = DispatchKey.CompositeImplicitAutograd


def _tensor_bits(values: Iterable[Any]) -> tuple[int, list[type]]:
    """Union of ``_dispatch_bits`` over nested lists/tuples/dicts, and subclass types."""
    bits = 0
    types: list[type] = []
    stack = list(values)
    while stack:  # iterative: arguments may nest deeply
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        else:
            b = getattr(v, "_dispatch_bits", None)
            if b is not None:
                bits |= b
                cls = type(v)
                if getattr(cls, "__dispatch__", None) is not None and cls not in types:
                    types.append(cls)
    return bits, types


class HigherOrderOperator:
    """A Python operator dispatched by key, with kernels registered by ``py_impl``.

    >>> twice = HigherOrderOperator("twice")
    >>> @twice.py_impl("CompositeExplicitAutograd")
    ... def twice_impl(fn, x):
    ...     return fn(fn(x))
    >>> twice(lambda v: v + 1, 1)
    3
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self.py_kernels: dict[DispatchKey, Callable[..., Any]] = {}
        self.python_key_table: dict[type, Callable[..., Any]] = {}
        self._fallthrough_bits = 0
        for key in DEFAULT_FALLTHROUGH_KEYS:
            self._fallthrough_bits |= key.bit

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"HigherOrderOperator({self._name})"

    def py_impl(self, key_or_type: object) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a kernel for a dispatch key (alias keys allowed), or a handler for a
        mode class or tensor-subclass type (called ``fn(mode, *args)`` / ``fn(*args)``)."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            if isinstance(key_or_type, type) and not isinstance(key_or_type, DispatchKey):
                self.python_key_table[key_or_type] = fn
            else:
                key = DispatchKey.parse(key_or_type)  # type: ignore[arg-type]
                if key in self.py_kernels:
                    raise RuntimeError(
                        f"HigherOrderOperator {self._name}: a kernel is already registered "
                        f"for {key.name}"
                    )
                self.py_kernels[key] = fn
                self._fallthrough_bits &= ~key.bit
            return fn

        return register

    def fallthrough(self, key: DispatchKey | str) -> None:
        """Skip ``key`` for this operator."""
        self._fallthrough_bits |= DispatchKey.parse(key).bit

    def non_fallthrough_keys(self) -> DispatchKeySet:
        return DispatchKeySet.full() - DispatchKeySet.from_bits(self._fallthrough_bits)

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        bits, _types = _tensor_bits((args, kwargs))
        state = _tls.state
        ks = (bits | state.included) & state.keep & ~self._fallthrough_bits
        return self.dispatch(DispatchKeySet.from_bits(ks).highest_priority_key(), *args, **kwargs)

    def dispatch_below(self, key: DispatchKey | str, /, *args: Any, **kwargs: Any) -> Any:
        """Dispatch to the highest key of this call below ``key``.

        An autograd kernel of a higher-order operator that runs user functions eagerly
        uses it to reach the layers below autograd (Python modes, the backend) while the
        operators inside still record history, which a TLS exclusion would stop.
        """
        below = DispatchKeySet.full_after(key).bits & ~DispatchKey.PythonDispatcher.bit
        bits, _types = _tensor_bits((args, kwargs))
        state = _tls.state
        ks = (bits | state.included) & state.keep & ~self._fallthrough_bits & below
        return self.dispatch(DispatchKeySet.from_bits(ks).highest_priority_key(), *args, **kwargs)

    def dispatch(self, key: DispatchKey, /, *args: Any, **kwargs: Any) -> Any:
        """Run the kernel for ``key`` (the Python key consults modes, then subclasses)."""
        if key is DispatchKey.Python:
            return self._dispatch_python(args, kwargs)
        return self._resolve(key)(*args, **kwargs)

    def _resolve(self, key: DispatchKey) -> Callable[..., Any]:
        # 1. A kernel for the key itself.
        kernel = self.py_kernels.get(key)
        if kernel is not None:
            return kernel
        # 2. CompositeExplicitAutograd for backends (and Undefined).
        if (key is DispatchKey.Undefined or key in BACKEND_KEYS) and _CEA in self.py_kernels:
            return self.py_kernels[_CEA]
        # 3. CompositeImplicitAutograd for backends and autograd keys (and Undefined).
        if (
            key is DispatchKey.Undefined or key in ALIAS_TO_RUNTIME[_CIA]
        ) and _CIA in self.py_kernels:
            return self.py_kernels[_CIA]
        # 4. The Autograd alias for autograd keys.
        if key in AUTOGRAD_KEYS and DispatchKey.Autograd in self.py_kernels:
            return self.py_kernels[DispatchKey.Autograd]
        # 5. Nothing: say which keys do have kernels.
        raise NotImplementedError(
            f"could not find kernel for HigherOrderOperator {self._name} at dispatch key "
            f"{key.name}; it has kernels for "
            f"[{', '.join(k.name for k in self.py_kernels)}]. Register one with "
            f"@{self._name}.py_impl(DispatchKey.{key.name})."
        )

    def _dispatch_python(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if _modes._state.stack:
            mode = _modes._pop()
            try:
                handler = self.python_key_table.get(type(mode))
                if handler is not None:
                    return handler(mode, *args, **kwargs)
                if getattr(mode, "supports_higher_order_operators", False):
                    _bits, types = _tensor_bits((args, kwargs))
                    result = mode.__dispatch__(self, tuple(types), args, kwargs)  # type: ignore[arg-type]
                    if result is not NotImplemented:
                        return result
                else:
                    raise NotImplementedError(
                        f"There was no rule registered for HigherOrderOperator {self._name} "
                        f"and mode {type(mode).__name__}. Register one with "
                        f"@{self._name}.py_impl({type(mode).__name__}), or set "
                        f"{type(mode).__name__}.supports_higher_order_operators = True to "
                        f"receive it in __dispatch__."
                    )
            finally:
                _modes._push(mode)
        _bits, types = _tensor_bits((args, kwargs))
        for cls in types:
            handler = self.python_key_table.get(cls)
            if handler is not None:
                result = handler(*args, **kwargs)
                if result is not NotImplemented:
                    return result
        raise NotImplementedError(
            f"HigherOrderOperator {self._name}: no Python-key handler for modes "
            f"{[type(m).__name__ for m in _modes._state.stack]} or tensor types "
            f"{[t.__name__ for t in types]}; register one with @{self._name}.py_impl(<type>)"
        )

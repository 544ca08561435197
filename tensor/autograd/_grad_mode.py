"""Grad mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Imports: the standard library and ``dispatch``.

The flag is per thread (new threads start with grad enabled, as in PyTorch) and
every guard restores the previous state on exit, also when the block raises.
Guards are context managers and decorators (generators included).
``inference_mode`` additionally excludes the autograd keys and ADInplaceOrView for
the block (SEMANTICS.md §2), so no autograd kernel runs at all.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import dispatch
from dispatch import DispatchKey

__all__ = [
    "enable_grad",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
]

F = TypeVar("F", bound=Callable[..., Any])


# The flag is the dispatcher's (``state.grad_enabled``): its call path skips grad-only
# kernels while grad mode is off (Note [Grad-only kernels] in dispatch/_operator.py).
state = dispatch._tls.state
set_grad_mode = dispatch._tls.set_grad_mode


def is_grad_enabled() -> bool:
    """Whether operations record history on this thread.

    >>> with no_grad():
    ...     is_grad_enabled()
    False
    """
    return state.grad_enabled


def is_inference_mode_enabled() -> bool:
    return state.inference


class _Guard:
    """Base of the grad-mode guards: a context manager that also decorates."""

    def _enter(self) -> None:
        raise NotImplementedError

    def _exit(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> None:
        self._enter()

    def __exit__(self, *exc: object) -> None:
        self._exit()

    def clone(self) -> _Guard:
        return type(self)()

    def __call__(self, fn: F) -> F:
        if inspect.isgeneratorfunction(fn):

            @functools.wraps(fn)
            def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                # The guard is active only while the generator body runs, never across a
                # yield, so the caller keeps its own mode (PyTorch's generator_context).
                gen = fn(*args, **kwargs)
                try:
                    with self.clone():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException as exc:
                            with self.clone():
                                response = gen.throw(exc)
                        else:
                            with self.clone():
                                response = gen.send(request)
                except StopIteration as stop:
                    return stop.value

            return gen_wrapper  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class set_grad_enabled(_Guard):  # noqa: N801 - PyTorch's spelling
    """Set grad mode.  As a call it takes effect at once (PyTorch's behaviour); as a
    guard or decorator the previous mode is restored on exit."""

    def __init__(self, mode: bool) -> None:
        self.prev = state.grad_enabled
        self.mode = bool(mode)
        set_grad_mode(self.mode)

    def clone(self) -> set_grad_enabled:
        return set_grad_enabled(self.mode)

    def __call__(self, fn: F) -> F:
        set_grad_mode(self.prev)  # decorating must not change the mode now
        return super().__call__(fn)

    def _enter(self) -> None:
        set_grad_mode(self.mode)

    def _exit(self) -> None:
        set_grad_mode(self.prev)


class no_grad(_Guard):  # noqa: N801
    """Disable grad mode in a block or function.

    >>> import tensor as tt
    >>> x = tt.ones(2, requires_grad=True)
    >>> with no_grad():
    ...     (x * 2).requires_grad
    False
    """

    def _enter(self) -> None:
        self.prev = state.grad_enabled
        set_grad_mode(False)

    def _exit(self) -> None:
        set_grad_mode(self.prev)


class enable_grad(_Guard):  # noqa: N801
    """Enable grad mode in a block or function (inside ``no_grad``)."""

    def _enter(self) -> None:
        self.prev = state.grad_enabled
        set_grad_mode(True)

    def _exit(self) -> None:
        set_grad_mode(self.prev)


_INFERENCE_EXCLUDED = (DispatchKey.Autograd, DispatchKey.ADInplaceOrView)


class inference_mode(_Guard):  # noqa: N801
    """Disable grad mode and the autograd keys; tensors made here never require grad."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def clone(self) -> inference_mode:
        return inference_mode(self.mode)

    def _enter(self) -> None:
        self.prev = (state.grad_enabled, state.inference)
        self._guard = None
        if self.mode:
            set_grad_mode(False)
            state.inference = True
            self._guard = dispatch.exclude_keys(*_INFERENCE_EXCLUDED)
            self._guard.__enter__()

    def _exit(self) -> None:
        if self._guard is not None:
            self._guard.__exit__(None, None, None)
        set_grad_mode(self.prev[0])
        state.inference = self.prev[1]

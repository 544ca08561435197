"""Registered kernels, the fallthrough marker, and the kernels that stand in for errors.

Imports: the standard library and ``dispatch._keys``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._keys import DispatchKey

__all__ = ["Kernel", "fallthrough_kernel", "kernel_name"]


def fallthrough_kernel(*args: Any, **kwargs: Any) -> Any:
    """Register this at a key to make an operator skip that key.

    It is a marker: the dispatcher masks a fallthrough key out of the call's key
    set and never calls it.  Calling it directly is an error, as in PyTorch.
    """
    raise NotImplementedError("fallthrough_kernel() should never be called.")


class Kernel:
    """One registration: a function at a key, with where it was made.

    ``grad_only`` marks an autograd-layer kernel that has work to do only when an
    argument requires grad and grad mode is on; otherwise it would just redispatch
    below its key.  See Note [Grad-only kernels] in ``_operator.py``.
    """

    __slots__ = ("fn", "key", "location", "grad_only", "with_keyset")

    def __init__(
        self,
        fn: Callable[..., Any],
        key: DispatchKey,
        *,
        with_keyset: bool,
        location: str,
        grad_only: bool = False,
    ) -> None:
        self.fn = fn
        self.key = key
        self.with_keyset = with_keyset
        self.location = location
        self.grad_only = grad_only

    @property
    def is_fallthrough(self) -> bool:
        return self.fn is fallthrough_kernel

    @property
    def name(self) -> str:
        return kernel_name(self.fn)

    def __repr__(self) -> str:
        return f"<Kernel {self.name} at {self.key.name} from {self.location}>"


def kernel_name(fn: object) -> str:
    if fn is fallthrough_kernel:
        return "fallthrough"
    func = getattr(fn, "func", None)  # functools.partial
    if func is not None and not hasattr(fn, "__qualname__"):
        return f"partial({kernel_name(func)})"
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if name is None:
        return type(fn).__qualname__ + " instance"
    module = getattr(fn, "__module__", None)
    return f"{module}.{name}" if module and module != "__main__" else name

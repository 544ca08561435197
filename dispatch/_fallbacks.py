"""The default backend fallbacks of PyTorch 2.13 that belong to the dispatcher itself.

Imports: sibling ``dispatch`` modules.

Registered once, at import, from a private ``Library("_", "IMPL")`` (SEMANTICS.md §5):
- fallthrough at BackendSelect, ADInplaceOrView, AutocastCPU, AutocastCUDA and
  AutocastPrivateUse1 (c10's ``autocast_mode.cpp`` registers all three);
- the autograd fallback at every Autograd<Backend> key and AutogradOther: a real
  kernel that redispatches below autograd (PyTorch's "nothing" mode; recording a
  warning node is the tensor package's business);
- the Meta fallback, which raises NotImplementedError naming the operator.
The Python-mode fallbacks live in ``_modes``.
"""

from __future__ import annotations

from typing import Any

from . import _errors, _registry
from ._kernel import fallthrough_kernel
from ._keys import AUTOGRAD_KEYS, DispatchKey, DispatchKeySet
from ._operator import OpOverload

__all__ = ["AFTER_AUTOGRAD", "autograd_fallback", "meta_fallback"]

AFTER_AUTOGRAD = DispatchKeySet.full_after(DispatchKey.AutogradOther)
_LOCATION = "dispatch/_fallbacks.py (default backend fallback)"


def autograd_fallback(keyset: DispatchKeySet, op: OpOverload, *args: Any, **kwargs: Any) -> Any:
    """Run the operator below autograd, recording nothing."""
    return op.redispatch(keyset & AFTER_AUTOGRAD, *args, **kwargs)


def meta_fallback(op: OpOverload, *args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(_errors.meta_not_implemented(op.name))


def _register() -> None:
    for key in (
        DispatchKey.BackendSelect,
        DispatchKey.ADInplaceOrView,
        DispatchKey.AutocastCPU,
        DispatchKey.AutocastCUDA,
        DispatchKey.AutocastPrivateUse1,
    ):
        _registry.add_fallback(key, fallthrough_kernel, with_keyset=False, location=_LOCATION)
    for key in sorted(AUTOGRAD_KEYS):
        # Grad-only: see Note [Grad-only kernels] in _operator.py.
        _registry.add_fallback(
            key,
            autograd_fallback,
            with_keyset=True,
            location=_LOCATION,
            grad_only=True,
        )
    _registry.add_fallback(DispatchKey.Meta, meta_fallback, with_keyset=False, location=_LOCATION)


_register()

"""One way for every backend to register its kernels.

Imports: ``dispatch`` and ``backends.common``.

A backend package has the same modules (``elementwise``, ``reduction``, ``linalg``,
``shape``, ``nn``, each with ``kernels()``, and ``creation`` with ``register(lib)``);
``register_backend`` puts all of them, plus the in-place and ``out=`` variants made
from the functional kernels, into one IMPL library of ``core`` at the backend's key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

from dispatch import Library

from . import variants

__all__ = ["register_backend"]


def register_backend(
    key: str,
    modules: Iterable[ModuleType],
    creation: ModuleType,
    package: str,
    *,
    wrap: Callable[[str, Any], Any] | None = None,
) -> Library:
    """Register a backend's kernels at ``key``; returns the library (keep it alive).

    ``wrap(qualname, kernel)``, when given, wraps each kernel before it is registered
    (the CUDA backend's device guard).
    """
    lib = Library("core", "IMPL")
    found: dict[str, Any] = {}
    for module in modules:
        found.update(module.kernels())
    # add_, add.out, ...: made from the functional kernels
    found.update(variants.kernels(found, f"{package}.variants"))
    for qualname, kernel in found.items():
        lib.impl(qualname, kernel if wrap is None else wrap(qualname, kernel), key)
    creation.register(lib)
    return lib

"""The CPU backend: kernels computing with NumPy, one module per operator family.

Imports: NumPy, ``dispatch``, ``tensor`` and ``backends.common``.

``register()`` registers every CPU kernel into one IMPL library of the ``core``
namespace, kept alive as ``LIB``; ``tensor`` calls it once, at the end of its
own import.
"""

from __future__ import annotations

from typing import Any

from dispatch import Library

from ..common import variants
from . import creation, elementwise, linalg, nn, reduction, shape

__all__ = ["LIB", "register"]

LIB: Library | None = None


def register() -> None:
    """Register the CPU kernels (once; later calls do nothing)."""
    global LIB
    if LIB is not None:
        return
    lib = Library("core", "IMPL")
    found: dict[str, Any] = {}
    for module in (elementwise, reduction, linalg, shape, nn):
        found.update(module.kernels())
    # add_, add.out, ...: made from the functional kernels
    found.update(variants.kernels(found, f"{__name__}.variants"))
    for qualname, kernel in found.items():
        lib.impl(qualname, kernel, "CPU")
    creation.register(lib)
    LIB = lib

"""The CPU backend: kernels computing with NumPy, one module per operator family.

Imports: NumPy, ``dispatch``, ``tensor`` and ``backends.common``.

``register()`` registers every CPU kernel into one IMPL library of the ``core``
namespace, kept alive as ``LIB``; ``tensor`` calls it once, at the end of its
own import.
"""

from __future__ import annotations

from dispatch import Library

from . import creation, elementwise, linalg, reduction

__all__ = ["LIB", "register"]

LIB: Library | None = None


def register() -> None:
    """Register the CPU kernels (once; later calls do nothing)."""
    global LIB
    if LIB is not None:
        return
    lib = Library("core", "IMPL")
    for module in (elementwise, reduction, linalg, creation):
        module.register(lib)
    LIB = lib

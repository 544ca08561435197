"""The CPU backend: kernels computing with NumPy, one module per operator family.

Imports: NumPy, ``dispatch``, ``tensor`` and ``backends.common``.

``register()`` registers every CPU kernel into one IMPL library of the ``core``
namespace, kept alive as ``LIB``; ``tensor`` calls it once, at the end of its
own import.
"""

from __future__ import annotations

from dispatch import Library

from ..common.registration import register_backend
from . import creation, elementwise, linalg, nn, reduction, shape

__all__ = ["LIB", "register"]

LIB: Library | None = None


def register() -> None:
    """Register the CPU kernels (once; later calls do nothing)."""
    global LIB
    if LIB is None:
        LIB = register_backend(
            "CPU", (elementwise, reduction, linalg, shape, nn), creation, __name__
        )

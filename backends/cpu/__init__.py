"""The CPU backend: kernels computing with NumPy, one module per operator family.

Imports: NumPy, ``dispatch`` and ``backends.common``.

``register(front)`` registers every CPU kernel into one IMPL library of the ``core``
namespace, kept alive as ``LIB``; ``tensor`` calls it once, at the end of its own
import, with its ``FrontEnd`` (Note [One-way imports] in ``backends.common.frontend``).
"""

from __future__ import annotations

from dispatch import Library

from ..common.frontend import FrontEnd
from ..common.registration import register_backend
from . import creation, elementwise, linalg, nn, reduction, shape

__all__ = ["LIB", "register"]

LIB: Library | None = None


def register(front: FrontEnd) -> None:
    """Register the CPU kernels for ``front`` (once; later calls do nothing)."""
    global LIB
    if LIB is None:
        LIB = register_backend(
            "CPU", (elementwise, reduction, linalg, shape, nn), creation, __name__, front
        )

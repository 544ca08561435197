"""The Meta backend: kernels that compute result shapes and dtypes, never data.

Imports: ``dispatch`` and ``backends.common``.

Every kernel is built from the shape rules in ``backends.common.shape_rules`` and the
dtype rules of the operator table, the same ones the data kernels use, so a
meta tensor's result has the shape and dtype the CPU result would have.
``register(front)`` registers them; ``tensor`` calls it once, with its ``FrontEnd``.
"""

from __future__ import annotations

from dispatch import Library

from ..common.frontend import FrontEnd
from ..common.registration import register_backend
from . import creation, elementwise, linalg, nn, reduction, shape

__all__ = ["LIB", "register"]

LIB: Library | None = None


def register(front: FrontEnd) -> None:
    """Register the Meta kernels for ``front`` (once; later calls do nothing)."""
    global LIB
    if LIB is None:
        LIB = register_backend(
            "Meta", (elementwise, reduction, linalg, shape, nn), creation, __name__, front
        )

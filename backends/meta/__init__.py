"""The Meta backend: kernels that compute result shapes and dtypes, never data.

Imports: ``dispatch``, ``tensor`` and ``backends.common``.

Every kernel is built from the shape rules in ``backends.common.shapes`` and the
dtype rules of the operator table, the same ones the data kernels use, so a
meta tensor's result has the shape and dtype the CPU result would have.
"""

from __future__ import annotations

from typing import Any

from dispatch import Library

from ..common import variants
from . import creation, elementwise, linalg, nn, reduction, shape

__all__ = ["LIB", "register"]

LIB: Library | None = None


def register() -> None:
    """Register the Meta kernels (once; later calls do nothing)."""
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
        lib.impl(qualname, kernel, "Meta")
    creation.register(lib)
    LIB = lib

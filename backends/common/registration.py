"""One way for every backend to register its kernels.

Imports: ``dispatch`` and ``backends.common``.

A backend package has the same modules (``elementwise``, ``reduction``, ``linalg``,
``shape``, ``nn``, each with ``kernels(front)``, and ``creation`` with
``register(lib, front)``); ``register_backend`` puts all of them, plus the in-place and
``out=`` variants made from the functional kernels, into one IMPL library of ``core``
at the backend's key.  ``front`` is the front end's ``FrontEnd`` (Note [One-way
imports] in ``backends.common.frontend``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

from dispatch import Library

from . import variants
from .frontend import FrontEnd

__all__ = ["register_backend"]


def register_backend(
    key: str,
    modules: Iterable[ModuleType],
    creation: ModuleType,
    package: str,
    front: FrontEnd,
    *,
    wrap: Callable[[str, Any], Any] | None = None,
) -> Library:
    """Register a backend's kernels at ``key``; returns the library (keep it alive).

    ``wrap(qualname, kernel)``, when given, wraps each kernel before it is registered
    (the CUDA backend's device guard).
    """
    lib = Library("core", "IMPL")
    rows = {op.name: op for op in front.op_table}
    found: dict[str, Any] = {}
    for module in modules:
        found.update(module.kernels(front))
    # add_, add.out, ...: made from the functional kernels
    found.update(variants.kernels(front, found, f"{package}.variants"))
    for qualname, kernel in found.items():
        # The registration site dump_table shows: the table row the kernel was made from.
        row = rows.get(qualname.partition(".")[0])
        site = row.defined_at if row is not None else None
        lib.impl(qualname, kernel if wrap is None else wrap(qualname, kernel), key, location=site)
    creation.register(lib, front)
    return lib

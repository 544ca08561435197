"""Meta kernels of the shape, view, indexing, joining and sorting operators.

Imports: ``backends.common``.

The same kernels as the CPU's (``backends.common``), given meta arrays: a
``MetaArray`` has strides and a storage, and does views the way NumPy does, so
view results have PyTorch's layouts; data-dependent shapes (``nonzero``,
boolean masks, ``unique``) raise, as PyTorch's meta kernels do.
"""

from __future__ import annotations

from typing import Any

from ..common import indexing, joining, searching, sorting, variants, views
from ..common.elementwise import MetaNamespace, rename_all
from ..common.frontend import FrontEnd

__all__ = ["VIEW_FNS", "kernels"]

VIEW_FNS: dict[str, Any] = {
    "reshape": lambda x, shape, copy: x.reshape(shape, copy=copy),
    "broadcast_to": lambda x, shape: x.broadcast_to(shape),
    "diagonal": lambda x, offset, a, b: x.diagonal(offset, a, b),
}


def kernels(front: FrontEnd) -> dict[str, Any]:
    """Every shape-family Meta kernel, by qualified overload name."""
    ns = MetaNamespace(__name__, front)
    out: dict[str, Any] = {}
    out.update(views.kernels(front, VIEW_FNS))
    out.update(variants.mutation_kernels(front, meta=True))
    out.update(indexing.kernels(ns, {}))
    out.update(joining.kernels(ns, {}))
    out.update(sorting.kernels(ns))
    out.update(searching.kernels(ns, {}))
    return rename_all(out, __name__)

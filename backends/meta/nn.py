"""Meta kernels of the neural-network functions: the shared kernels, on shapes only.

Imports: ``backends.common``.
"""

from __future__ import annotations

from typing import Any

from ..common import conv, nn
from ..common.elementwise import MetaNamespace, rename_all
from ..common.frontend import FrontEnd

__all__ = ["kernels"]


def kernels(front: FrontEnd) -> dict[str, Any]:
    """Every nn Meta kernel, by qualified overload name."""
    ns = MetaNamespace(__name__, front)
    out: dict[str, Any] = {}
    out.update(nn.kernels(ns, {}))
    out.update(conv.kernels(ns, {}))
    return rename_all(out, __name__)

"""Meta kernels of the neural-network functions: the shared kernels, on shapes only.

Imports: ``backends.common``.
"""

from __future__ import annotations

from typing import Any

from ..common import conv, nn
from ..common.elementwise import MetaNamespace, rename_all

__all__ = ["NS", "kernels"]

NS = MetaNamespace(__name__)


def kernels() -> dict[str, Any]:
    """Every nn Meta kernel, by qualified overload name."""
    out: dict[str, Any] = {}
    out.update(nn.kernels(NS, {}))
    out.update(conv.kernels(NS, {}))
    return rename_all(out, __name__)

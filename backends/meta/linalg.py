"""Meta kernels of the matrix products: the shared dtype and shape checks, no data.

Imports: ``backends.common``.
"""

from __future__ import annotations

from typing import Any

from ..common import decompositions, linalg
from ..common.frontend import FrontEnd

__all__ = ["kernels"]


def _named(name: str, fn: Any) -> Any:
    fn.__name__ = fn.__qualname__ = name
    return fn


def kernels(front: FrontEnd) -> dict[str, Any]:
    """Every matrix-product Meta kernel, by qualified overload name."""
    op_info, make_meta = front.op_info, front.make_meta
    out: dict[str, Any] = {}
    for name in ("matmul", "mm", "bmm", "dot", "vdot", "outer"):
        op = op_info(name)

        def product(self: Any, other: Any, op: Any = op) -> Any:
            shape, _, odt, dev = linalg.result_binary(front, op, self, other)
            return make_meta(shape, odt, dev)

        out[name] = _named(name, product)

    def addmm(self: Any, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        shape, _, odt, dev = linalg.result_addmm(op_info("addmm"), self, mat1, mat2, beta, alpha)
        return make_meta(shape, odt, dev)

    def einsum(equation: str, tensors: list[Any]) -> Any:
        shape, _, odt, dev = linalg.result_einsum(front, op_info("einsum"), equation, tensors)
        return make_meta(shape, odt, dev)

    def tensordot(self: Any, other: Any, dims_self: Any, dims_other: Any) -> Any:
        op = op_info("tensordot")
        shape, _, odt, dev = linalg.result_tensordot(op, self, other, dims_self, dims_other)
        return make_meta(shape, odt, dev)

    def linalg_vecdot(x: Any, y: Any, *, dim: int = -1) -> Any:
        shape, _, _, odt, dev = linalg.result_vecdot(front, op_info("linalg_vecdot"), x, y, dim)
        return make_meta(shape, odt, dev)

    out["linalg_vecdot"] = linalg_vecdot
    out["addmm"] = addmm
    out["einsum"] = einsum
    out["tensordot"] = tensordot
    return out | decompositions.meta_kernels(front, __name__)

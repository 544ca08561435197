"""Meta kernels of the matrix products: the shared dtype and shape checks, no data.

Imports: ``dispatch``, ``tensor`` and ``backends.common``.
"""

from __future__ import annotations

from typing import Any

import tensor
from dispatch import Library
from tensor import Tensor

from ..common import linalg

__all__ = ["register"]

_make_meta = Tensor._make_meta


def _named(name: str, fn: Any) -> Any:
    fn.__name__ = fn.__qualname__ = name
    return fn


def kernels() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ("matmul", "mm", "bmm", "dot", "vdot", "outer"):
        op = tensor.op_info(name)

        def product(self: Any, other: Any, op: Any = op) -> Any:
            shape, _, odt, dev = linalg.result_binary(op, self, other)
            return _make_meta(shape, odt, dev)

        out[name] = _named(name, product)

    def addmm(self: Any, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        shape, _, odt, dev = linalg.result_addmm(tensor.op_info("addmm"), self, mat1, mat2)
        return _make_meta(shape, odt, dev)

    def einsum(equation: str, tensors: list[Any]) -> Any:
        shape, _, odt, dev = linalg.result_einsum(tensor.op_info("einsum"), equation, tensors)
        return _make_meta(shape, odt, dev)

    def tensordot(self: Any, other: Any, dims_self: Any, dims_other: Any) -> Any:
        op = tensor.op_info("tensordot")
        shape, _, odt, dev = linalg.result_tensordot(op, self, other, dims_self, dims_other)
        return _make_meta(shape, odt, dev)

    out["addmm"] = addmm
    out["einsum"] = einsum
    out["tensordot"] = tensordot
    return out


def register(lib: Library) -> None:
    for qualname, kernel in kernels().items():
        lib.impl(qualname, kernel, "Meta")

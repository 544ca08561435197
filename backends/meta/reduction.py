"""Meta kernels of the reductions and scans: the shared kernels, on shapes only.

Imports: ``dispatch``, ``tensor`` and ``backends.common``.

The argument handling, dtype rules and shape rules are those of the CPU kernels
(``backends.common.reduction``); only the array function differs: here it maps
a ``MetaArray`` to the ``MetaArray`` of the result shape.
"""

from __future__ import annotations

from typing import Any

import tensor
from dispatch import Library
from tensor import MetaArray, Tensor

from ..common import reduction as red
from ..common import shapes
from ..common.elementwise import MetaNamespace
from ..cpu.reduction import EXTREMES, REDUCTIONS

__all__ = ["register"]

NS = MetaNamespace(__name__)
_make = Tensor._make


def _reduced(x: Any, axes: Any, keepdim: bool, *extra: Any) -> MetaArray:
    return MetaArray(shapes.reduced_shape(tuple(x.shape), axes, keepdim), x.dtype)


def _argreduced(x: Any, axes: Any, keepdim: bool) -> MetaArray:
    # argmax(keepdim=True) without a dim keeps every dim as 1, like NumPy and PyTorch.
    return _reduced(x, axes, keepdim)


def _scanned(x: Any, axis: int) -> MetaArray:
    return MetaArray(tuple(x.shape), x.dtype)


def _count(x: Any, axes: Any, keepdim: bool) -> MetaArray:
    return _reduced(x, axes, False)


def max_min_dim(op: Any) -> Any:
    def kernel(self: Any, dim: Any, keepdim: bool = False) -> Any:
        p = red.plan(op, self, dim, keepdim)
        dev = self._device
        return (
            _make(MetaArray(p.shape, p.odt.numpy_dtype), p.odt, dev),
            _make(MetaArray(p.shape, tensor.int64.numpy_dtype), tensor.int64, dev),
        )

    kernel.__name__ = kernel.__qualname__ = f"{op.name}_dim"
    return kernel


def kernels() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, (_, accumulate) in REDUCTIONS.items():
        fn = {"cumsum": _scanned, "cumprod": _scanned, "count_nonzero": _count}.get(name, _reduced)
        out[name] = red.reduction(tensor.op_info(name), fn, NS, accumulate=accumulate)
    for name in EXTREMES:
        op = tensor.op_info(name)
        out[name] = red.max_min_all(op, _reduced, NS)
        out[f"{name}.dim"] = max_min_dim(op)
    return out


def register(lib: Library) -> None:
    for qualname, kernel in kernels().items():
        lib.impl(qualname, kernel, "Meta")

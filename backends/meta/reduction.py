"""Meta kernels of the reductions and scans: the shared kernels, on shapes only.

Imports: ``backends.common`` and ``backends.cpu.reduction`` (its table of operators).

The argument handling, dtype rules and shape rules are those of the CPU kernels
(``backends.common.reduction``); only the array function differs: here it maps
a ``MetaArray`` to the ``MetaArray`` of the result shape.
"""

from __future__ import annotations

from typing import Any

from ..common import reduction as red
from ..common import shape_rules
from ..common.elementwise import MetaNamespace
from ..common.frontend import FrontEnd
from ..cpu.reduction import EXTREMES, REDUCTIONS

__all__ = ["kernels"]


def kernels(front: FrontEnd) -> dict[str, Any]:
    """Every reduction and scan Meta kernel, by qualified overload name."""
    ns = MetaNamespace(__name__, front)
    meta_array, make_meta, int64 = front.MetaArray, front.make_meta, front.int64

    def reduced(x: Any, axes: Any, keepdim: bool, *extra: Any) -> Any:
        # argmax(keepdim=True) without a dim keeps every dim as 1, like NumPy and PyTorch.
        return meta_array(shape_rules.reduced_shape(tuple(x.shape), axes, keepdim), x.dtype)

    def scanned(x: Any, axis: int) -> Any:
        return meta_array(tuple(x.shape), x.dtype)

    def count(x: Any, axes: Any, keepdim: bool) -> Any:
        return reduced(x, axes, False)

    def max_min_dim(op: Any) -> Any:
        def kernel(self: Any, dim: Any, keepdim: bool = False) -> Any:
            p = red.plan(front, op, self, dim, keepdim)
            dev = self._device
            return make_meta(p.shape, p.odt, dev), make_meta(p.shape, int64, dev)

        kernel.__name__ = kernel.__qualname__ = f"{op.name}_dim"
        return kernel

    out: dict[str, Any] = {}
    for name, (_, accumulate) in REDUCTIONS.items():
        fn = {"cumsum": scanned, "cumprod": scanned, "count_nonzero": count}.get(name, reduced)
        out[name] = red.reduction(front.op_info(name), fn, ns, accumulate=accumulate)
    for name in EXTREMES:
        op = front.op_info(name)
        out[name] = red.max_min_all(op, reduced, ns)
        out[f"{name}.dim"] = max_min_dim(op)
    return out

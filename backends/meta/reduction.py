"""Meta kernels of the reductions and scans: the shared kernels, on shapes only.

Imports: ``backends.common``.

The argument handling, dtype rules, shape rules and the loop over the family are
those of every backend (``backends.common.reduction.kernels``); only the array
function differs: here every row's maps a ``MetaArray`` to the ``MetaArray`` of the
result shape.
"""

from __future__ import annotations

from typing import Any

from ..common import reduction as red
from ..common import shape_rules
from ..common.elementwise import MetaNamespace
from ..common.frontend import FrontEnd

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

    shapes = {"cumsum": scanned, "cumprod": scanned, "count_nonzero": count}
    overrides = {name: shapes.get(name, reduced) for name in red.NAMES}
    out = red.kernels(front, ns, overrides)
    for name in ("max", "min"):  # values and indices from the plan alone
        out[f"{name}.dim"] = max_min_dim(front.op_info(name))
    return out

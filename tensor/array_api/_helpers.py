"""What the Array API namespace's wrappers share: the standard's promotion, axis spelling.

Imports: ``tensor`` (the operators; this package is imported after it is built).

Note [The standard's promotion in the standard namespace]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
PyTorch and the Array API standard promote alike between arrays of one dimension or
more; they differ for 0-d arrays, which PyTorch treats as "weak" (``int8[3] + int64[]``
is ``int8`` in PyTorch, ``int64`` in the standard).  ``tensor.array_api``'s functions
follow the standard: they compute the result dtype from the arrays' dtypes alone
(``promote_types``) and cast their operands to it before calling the operator, so the
operator itself, and the ``tensor`` namespace, keep PyTorch's rule.  Python scalars
stay weak in both (the standard converts them to the array's dtype).  The Python
operators on a ``Tensor`` (``a + b``) are PyTorch's: a ``Tensor`` is one object for
both namespaces, and the skip list of the conformance run names the tests this costs.
"""

from __future__ import annotations

import builtins
import functools
from typing import Any

import tensor as tt
from tensor._tensor import Tensor

__all__ = ["axes", "is_array", "promote", "promoted_dtype"]


def is_array(x: Any) -> bool:
    return isinstance(x, Tensor)


def promoted_dtype(*arrays: Any) -> Any:
    """The standard's result dtype of the arrays among ``arrays`` (0-d arrays count in full)."""
    dtypes = [a.dtype for a in arrays if isinstance(a, Tensor)]
    if not dtypes:
        raise TypeError("at least one argument must be an array")
    return functools.reduce(tt.promote_types, dtypes)


def promote(*args: Any) -> list[Any]:
    """Cast the arrays among ``args`` to their standard result dtype (scalars pass through)."""
    dt = promoted_dtype(*args)
    return [a.to(dt) if isinstance(a, Tensor) and a.dtype != dt else a for a in args]


def axes(axis: Any, ndim: int) -> tuple[int, ...] | None:
    """``axis`` as a tuple of non-negative dims (``None``: every dim), range-checked."""
    if axis is None:
        return None
    if isinstance(axis, builtins.int):
        axis = (axis,)
    out = []
    for a in axis:
        if not -builtins.max(ndim, 1) <= a < builtins.max(ndim, 1):
            raise IndexError(f"axis {a} is out of bounds for an array of {ndim} dimensions")
        out.append(a % builtins.max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in {tuple(axis)}")
    return tuple(out)

"""``tensor.array_api``: the Array API standard's namespace (version 2025.12) over our operators.

Imports: ``tensor`` (built first) and this package's modules.  ``Tensor.__array_namespace__()``
returns this module, so SciPy, scikit-learn and anything else that goes through
``array_api_compat.array_namespace`` calls these functions on our tensors.

    >>> import tensor as tt
    >>> xp = tt.tensor([1.0, 2.0]).__array_namespace__()
    >>> xp.sum(xp.asarray([[1, 2], [3, 4]]), axis=0, keepdims=True).tolist()
    [[4, 6]]
    >>> [a.tolist() for a in xp.unique_counts(xp.asarray([3, 1, 3]))]
    [[1, 3], [1, 2]]

Note [A thin namespace]
~~~~~~~~~~~~~~~~~~~~~~~
Every function here translates the standard's spelling (positional-only arguments,
``axis``/``keepdims``, ``shape=``, plain tuples instead of named tuples, ``unique_*``,
``correction=0``) into calls of the ``tensor`` namespace's operators; none computes
anything itself, so each runs on every device, under autograd, autocast and modes, as
the operators do.  Where the standard and PyTorch differ, the difference is kept here
and the ``tensor`` namespace keeps PyTorch's behaviour: 0-d promotion (Note [The
standard's promotion in the standard namespace] in ``_helpers``), ``axis=()`` (no axes,
where PyTorch's ``dim=()`` means all of them), ``correction`` defaulting to 0, ``stable``
sorts by default.  What the namespace does not support is the skip list of the
conformance run (``tests/array_api/skips.txt``), each line with its reason.
"""

# ruff: noqa: F405 - __all__ lists the elementwise names that the star import brings

from __future__ import annotations

import builtins
import math
from collections import namedtuple
from typing import Any

import tensor as tt
from tensor._tensor import Tensor

from . import fft, linalg
from ._creation import (
    arange,
    asarray,
    empty,
    empty_like,
    eye,
    from_dlpack,
    full,
    full_like,
    linspace,
    meshgrid,
    ones,
    ones_like,
    tril,
    triu,
    zeros,
    zeros_like,
)
from ._dtypes import astype, can_cast, finfo, iinfo, isdtype, result_type
from ._elementwise import *  # noqa: F403 (abs, add, ..., the standard's elementwise names)
from ._helpers import promote as _promote
from ._info import __array_namespace_info__
from ._manipulation import (
    broadcast_arrays,
    broadcast_shapes,
    broadcast_to,
    concat,
    expand_dims,
    flip,
    moveaxis,
    permute_dims,
    repeat,
    reshape,
    roll,
    squeeze,
    stack,
    tile,
    unstack,
)
from ._statistics import (
    all,  # noqa: A004
    any,  # noqa: A004
    argmax,
    argmin,
    count_nonzero,
    cumulative_prod,
    cumulative_sum,
    diff,
    max,  # noqa: A004
    mean,
    min,  # noqa: A004
    prod,
    std,
    sum,  # noqa: A004
    var,
)

__array_api_version__ = "2025.12"

bool = tt.bool  # noqa: A001
int8, int16, int32, int64, uint8 = tt.int8, tt.int16, tt.int32, tt.int64, tt.uint8
float32, float64, complex64, complex128 = tt.float32, tt.float64, tt.complex64, tt.complex128

e, inf, nan, pi = math.e, math.inf, math.nan, math.pi
newaxis = None


# -- linear algebra (the main namespace's part; the rest is ``linalg``) -----------------


def matmul(x1: Tensor, x2: Tensor, /) -> Tensor:
    x1, x2 = _promote(x1, x2)
    return tt.matmul(x1, x2)


def matrix_transpose(x: Tensor, /) -> Tensor:
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: x must have at least 2 dimensions, not {x.ndim}")
    return x.mT


def tensordot(x1: Tensor, x2: Tensor, /, *, axes: Any = 2) -> Tensor:
    x1, x2 = _promote(x1, x2)
    if not isinstance(axes, builtins.int):
        axes = ([*axes[0]], [*axes[1]])
    return tt.tensordot(x1, x2, dims=axes)


def vecdot(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    x1, x2 = _promote(x1, x2)
    ndim = builtins.max(x1.ndim, x2.ndim)
    if not -builtins.min(x1.ndim, x2.ndim) <= axis < builtins.min(x1.ndim, x2.ndim):
        raise ValueError(f"vecdot: axis {axis} is out of bounds for both arrays")
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(
            f"vecdot: the arrays' sizes along axis {axis} differ: {x1.shape[axis]} and {x2.shape[axis]}"
        )
    dim = axis % ndim if axis < 0 else axis - ndim  # of the broadcast shape
    if x1.dtype.is_floating_point or x1.dtype.is_complex:
        return tt.linalg.vecdot(x1, x2, dim=dim)
    # integers, which PyTorch's linalg.vecdot refuses: in the arrays' dtype (PyTorch's sum
    # widens integers to int64)
    x1, x2 = tt.broadcast_tensors(x1, x2)
    return tt.sum(x1 * x2, dim=dim, dtype=x1.dtype)


# -- indexing, searching, sets, sorting --------------------------------------------------


def take(x: Tensor, indices: Tensor, /, *, axis: int | None = None) -> Tensor:
    if axis is None:
        if x.ndim != 1:
            raise ValueError("take: axis is required for arrays of more than one dimension")
        axis = 0
    return tt.index_select(x, axis, indices)


def take_along_axis(x: Tensor, indices: Tensor, /, *, axis: int = -1) -> Tensor:
    return tt.take_along_dim(x, indices, dim=axis)


def nonzero(x: Tensor, /) -> tuple[Tensor, ...]:
    if x.ndim == 0:
        raise ValueError("nonzero: x must have at least one dimension (a 0-d array was given)")
    return tuple(tt.nonzero(x, as_tuple=True))


def where(condition: Tensor, x1: Any, x2: Any, /) -> Tensor:
    if isinstance(x1, Tensor) or isinstance(x2, Tensor):
        x1, x2 = _promote(x1, x2)
    return tt.where(condition, x1, x2)


def searchsorted(
    x1: Tensor, x2: Tensor, /, *, side: str = "left", sorter: Tensor | None = None
) -> Tensor:
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', not {side!r}")
    x1, x2 = _promote(x1, x2)
    return tt.searchsorted(x1, x2, side=side, sorter=sorter)


UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _unique_flat(flat: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """``tensor.unique`` of a 1-D tensor, sorted, with inverse and counts; complex values
    (which ``unique`` does not sort) as unique (real, imag) rows, sorted by real part."""
    if flat.dtype.is_complex:
        pairs = tt.stack([tt.real(flat), tt.imag(flat)], 1)
        rows, inverse, counts = tt.unique(pairs, return_inverse=True, return_counts=True, dim=0)
        values = (rows[:, 0] + rows[:, 1] * 1j).to(flat.dtype)
        return values, inverse, counts
    return tt.unique(flat, sorted=True, return_inverse=True, return_counts=True)


def _unique(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Sorted unique values, the inverse (``x``'s shape) and counts, with each NaN its own
    value as the standard says (PyTorch's ``unique`` makes the NaNs one)."""
    flat = x.reshape(-1)
    if x.dtype.is_floating_point or x.dtype.is_complex:
        nan = tt.isnan(flat)
        if builtins.bool(nan.any()):
            keep, nans = tt.nonzero(~nan).reshape(-1), tt.nonzero(nan).reshape(-1)
            values, inverse, counts = _unique_flat(flat[keep])
            n, k = values.shape[0], nans.shape[0]
            full = tt.empty(flat.shape, dtype=inverse.dtype, device=x.device)
            full[keep] = inverse
            full[nans] = tt.arange(n, n + k, device=x.device)
            ones = tt.ones(k, dtype=counts.dtype, device=x.device)
            return tt.cat([values, flat[nans]]), full.reshape(x.shape), tt.cat([counts, ones])
    values, inverse, counts = _unique_flat(flat)
    return values, inverse.reshape(x.shape), counts


def unique_values(x: Tensor, /) -> Tensor:
    return _unique(x)[0]


def unique_counts(x: Tensor, /) -> UniqueCountsResult:
    values, _, counts = _unique(x)
    return UniqueCountsResult(values, counts)


def unique_inverse(x: Tensor, /) -> UniqueInverseResult:
    values, inverse, _ = _unique(x)
    return UniqueInverseResult(values, inverse)


def unique_all(x: Tensor, /) -> UniqueAllResult:
    """``indices`` are the first occurrences: the stable order of ``inverse``, read at each
    value's first slot (the running count of the values before it)."""
    values, inverse, counts = _unique(x)
    order = tt.argsort(inverse.reshape(-1), stable=True)
    starts = tt.cumsum(counts, 0) - counts
    return UniqueAllResult(values, tt.index_select(order, 0, starts), inverse, counts)


def isin(x1: Any, x2: Any, /, *, invert: bool = False) -> Tensor:
    return tt.isin(x1, x2, invert=invert)


def argsort(
    x: Tensor, /, *, axis: int = -1, descending: builtins.bool = False, stable: builtins.bool = True
) -> Tensor:
    return tt.argsort(x, dim=axis, descending=descending, stable=stable)


def sort(
    x: Tensor, /, *, axis: int = -1, descending: builtins.bool = False, stable: builtins.bool = True
) -> Tensor:
    return tt.sort(x, dim=axis, descending=descending, stable=stable)[0]


__all__ = [  # noqa: RUF022 - the standard's names, sorted
    "__array_api_version__",
    "__array_namespace_info__",
    "abs",
    "acos",
    "acosh",
    "add",
    "all",
    "any",
    "arange",
    "argmax",
    "argmin",
    "argsort",
    "asarray",
    "asin",
    "asinh",
    "astype",
    "atan",
    "atan2",
    "atanh",
    "bitwise_and",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "bool",
    "broadcast_arrays",
    "broadcast_shapes",
    "broadcast_to",
    "can_cast",
    "ceil",
    "clip",
    "complex128",
    "complex64",
    "concat",
    "conj",
    "copysign",
    "cos",
    "cosh",
    "count_nonzero",
    "cumulative_prod",
    "cumulative_sum",
    "diff",
    "divide",
    "e",
    "empty",
    "empty_like",
    "equal",
    "exp",
    "expand_dims",
    "expm1",
    "eye",
    "fft",
    "finfo",
    "flip",
    "float32",
    "float64",
    "floor",
    "floor_divide",
    "from_dlpack",
    "full",
    "full_like",
    "greater",
    "greater_equal",
    "hypot",
    "iinfo",
    "imag",
    "inf",
    "int16",
    "int32",
    "int64",
    "int8",
    "isdtype",
    "isfinite",
    "isin",
    "isinf",
    "isnan",
    "less",
    "less_equal",
    "linalg",
    "linspace",
    "log",
    "log10",
    "log1p",
    "log2",
    "logaddexp",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "matmul",
    "matrix_transpose",
    "max",
    "maximum",
    "mean",
    "meshgrid",
    "min",
    "minimum",
    "moveaxis",
    "multiply",
    "nan",
    "negative",
    "newaxis",
    "nextafter",
    "nonzero",
    "not_equal",
    "ones",
    "ones_like",
    "permute_dims",
    "pi",
    "positive",
    "pow",
    "prod",
    "real",
    "reciprocal",
    "remainder",
    "repeat",
    "reshape",
    "result_type",
    "roll",
    "round",
    "searchsorted",
    "sign",
    "signbit",
    "sin",
    "sinh",
    "sort",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "std",
    "subtract",
    "sum",
    "take",
    "take_along_axis",
    "tan",
    "tanh",
    "tensordot",
    "tile",
    "tril",
    "triu",
    "trunc",
    "uint8",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    "unstack",
    "var",
    "vecdot",
    "where",
    "zeros",
    "zeros_like",
]

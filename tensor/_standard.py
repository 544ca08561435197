"""PyTorch's spellings of the Array API standard's functions, in the ``tensor`` namespace.

Imports: NumPy, ml_dtypes, and this package's operators (``_generated``), dtypes and
factories.  ``tt.asarray``, ``tt.finfo``, ``tt.iinfo``, ``tt.multiply``, ``tt.concat``,
``tt.clip``, ``tt.moveaxis``, ``tt.meshgrid``,
``tt.diff``, ... with PyTorch's signatures and behaviour; ``tensor.array_api`` calls
them with the standard's.

Note [Compositions, not new math]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The functions here are aliases of operators (``multiply`` is ``mul``) or compositions
of them (``diff`` subtracts two ``narrow`` views, ``meshgrid`` and ``broadcast_tensors``
are ``broadcast_to`` views, ``repeat_interleave`` indexes with ``searchsorted``), so they
run on every backend, under autograd, autocast and modes, with no kernel of their own.
PyTorch makes the same choice: ``diff``, ``meshgrid``, ``broadcast_tensors`` and
``repeat_interleave(input, repeats)`` are CompositeImplicitAutograd there too, and
``broadcast_shapes`` is plain Python.  The array API's ``cumulative_sum`` and
``cumulative_prod`` (``include_initial``: ``cumsum``/``cumprod`` after a ``cat`` of the
initial value, ``tensor.array_api._statistics``) have no PyTorch operator to mirror.
``searchsorted`` and ``isin`` were compositions that compared every pair of elements
(memory proportional to the product of the sizes); they are operators now, with a
binary search per backend (Note [Searching operators] in ``backends.common.searching``),
generated into ``tt`` from their table rows.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from . import _dtype
from ._dtype import dtype as _dtype_type
from ._generated import FUNCTIONS as _F
from ._tensor import Tensor

__all__ = [
    "asarray",
    "broadcast_shapes",
    "broadcast_tensors",
    "clip",
    "concat",
    "concatenate",
    "conj_physical",
    "diff",
    "divide",
    "finfo",
    "greater",
    "greater_equal",
    "iinfo",
    "less",
    "less_equal",
    "meshgrid",
    "moveaxis",
    "movedim",
    "multiply",
    "negative",
    "not_equal",
    "positive",
    "repeat_interleave",
    "subtract",
    "swapaxes",
]

multiply = _F["mul"]
subtract = _F["sub"]
divide = _F["div"]
negative = _F["neg"]
greater = _F["gt"]
greater_equal = _F["ge"]
less = _F["lt"]
less_equal = _F["le"]
not_equal = _F["ne"]
concat = concatenate = _F["cat"]
clip = _F["clamp"]
conj_physical = _F["conj"]


def positive(input: Tensor) -> Tensor:  # noqa: A002
    """``torch.positive``: the input itself (PyTorch returns ``self``); bool is refused."""
    if input.dtype is _dtype.bool:
        raise TypeError("positive(): bool tensors are not supported, use a numeric dtype")
    return input


# -- finfo / iinfo ------------------------------------------------------------------------


@dataclass(frozen=True)
class finfo:  # noqa: N801 - PyTorch's spelling
    """``torch.finfo``: machine limits of a floating dtype (a complex one: of its parts).

    >>> import tensor as tt
    >>> tt.finfo(tt.float32).eps == 2.0**-23, tt.finfo(tt.bfloat16).bits
    (True, 16)
    """

    bits: int
    eps: float
    max: float
    min: float
    tiny: float
    smallest_normal: float
    resolution: float
    dtype: str

    def __init__(self, type: Any = None) -> None:  # noqa: A002
        dt = _dtype.get_default_dtype() if type is None else type
        if not isinstance(dt, _dtype_type) or not (dt.is_floating_point or dt.is_complex):
            raise TypeError(f"finfo(): expected a floating or complex dtype, got {dt!r}")
        real = dt.to_real()
        info = ml_dtypes.finfo(real.numpy_dtype)
        values = {
            "bits": int(info.bits),
            "eps": float(info.eps),
            "max": float(info.max),
            "min": float(info.min),
            "tiny": float(info.smallest_normal),
            "smallest_normal": float(info.smallest_normal),
            "resolution": float(info.resolution),
            "dtype": real.name,
        }
        for k, v in values.items():
            object.__setattr__(self, k, v)


@dataclass(frozen=True)
class iinfo:  # noqa: N801
    """``torch.iinfo``: limits of an integer dtype.

    >>> import tensor as tt
    >>> tt.iinfo(tt.int8).min, tt.iinfo(tt.uint8).max
    (-128, 255)
    """

    bits: int
    max: int
    min: int
    dtype: str

    def __init__(self, type: Any) -> None:  # noqa: A002
        if not isinstance(type, _dtype_type) or type.category not in (_dtype.BOOL, _dtype.INT):
            raise TypeError(f"iinfo(): expected an integer dtype, got {type!r}")
        info = np.iinfo(type.numpy_dtype) if type.category == _dtype.INT else None
        object.__setattr__(self, "bits", 8 * type.itemsize)
        object.__setattr__(self, "max", int(info.max) if info else 1)
        object.__setattr__(self, "min", int(info.min) if info else 0)
        object.__setattr__(self, "dtype", type.name)


# -- asarray --------------------------------------------------------------------------


def asarray(
    obj: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    copy: builtins.bool | None = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """``torch.asarray``: ``obj`` as a tensor, sharing its memory where it can.

    A tensor comes back as itself unless ``dtype``/``device`` ask for a conversion or
    ``copy=True``; a NumPy array (or anything with ``__array__``/the buffer protocol) is
    wrapped without a copy where its dtype is ours; ``copy=False`` refuses to copy.
    """
    from ._factories import as_tensor

    if isinstance(obj, Tensor):
        out = obj
        if device is not None:
            out = out.to(device)
        if dtype is not None:
            out = out.to(dtype)
        if out is not obj and copy is False:
            raise ValueError("asarray(): copy=False, but a dtype or device conversion copies")
        if copy and out is obj:
            out = out.clone()
        if requires_grad:
            out.requires_grad_(True)
        return out
    shares = isinstance(obj, np.ndarray) or hasattr(obj, "__dlpack__")
    if copy is False and not shares:
        if isinstance(obj, memoryview) or hasattr(obj, "__buffer__"):
            shares = True
        else:
            raise ValueError(
                f"asarray(): copy=False, but a {type(obj).__name__} cannot be wrapped without a copy"
            )
    if not isinstance(obj, np.ndarray) and (
        isinstance(obj, (memoryview, bytearray)) or hasattr(obj, "__buffer__")
    ):
        obj = np.asarray(obj)
    out = as_tensor(obj, dtype=dtype, device=device)
    if copy and shares:
        out = out.clone()
    if requires_grad:
        out.requires_grad_(True)
    return out


# -- shapes --------------------------------------------------------------------------------


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """``torch.broadcast_shapes``: the shape the shapes broadcast to (a ``RuntimeError``
    naming both sizes where they do not)."""
    shapes = tuple((s,) if isinstance(s, builtins.int) else tuple(s) for s in shapes)
    ndim = builtins.max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, size in enumerate(s, ndim - len(s)):
            if size == out[i] or size == 1:
                continue
            if out[i] == 1:
                out[i] = size
            else:
                raise RuntimeError(
                    f"broadcast_shapes(): shape mismatch: {size} and {out[i]} at dimension "
                    f"{i - ndim} of the shapes {list(shapes)}"
                )
    from ._tensor import Size

    return Size(out)


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """``torch.broadcast_tensors``: views of the tensors expanded to one shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t if t.shape == shape else _F["broadcast_to"](t, shape) for t in tensors)


def meshgrid(*tensors: Tensor, indexing: str = "ij") -> tuple[Tensor, ...]:
    """``torch.meshgrid``: coordinate grids of 1-D tensors (views, expanded)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid(): indexing must be 'ij' or 'xy', not {indexing!r}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"meshgrid(): expected 0-D or 1-D tensors, got {t.ndim}-D")
    if tensors and builtins.len({t.dtype for t in tensors}) > 1:
        raise RuntimeError("meshgrid(): expects all tensors to have the same dtype")
    sizes = [t.numel() for t in tensors]
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, t in enumerate(tensors):
        axis = (1 - i if i < 2 else i) if swap else i
        shape = [1] * len(tensors)
        shape[axis] = -1
        out.append(_F["broadcast_to"](t.reshape(shape), sizes))
    return tuple(out)


def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:  # noqa: A002
    """``torch.movedim``: ``source`` dims moved to ``destination``, the rest in order."""
    ndim = input.ndim
    src = [source] if isinstance(source, builtins.int) else [*source]
    dst = [destination] if isinstance(destination, builtins.int) else [*destination]
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim(): source and destination dims must have the same length, "
            f"got {len(src)} and {len(dst)}"
        )
    n = builtins.max(ndim, 1)
    for d in (*src, *dst):
        if not -n <= d < n:
            raise IndexError(
                f"movedim(): dimension {d} is out of range for a tensor of {ndim} dimensions"
            )
    src = [d % n for d in src]
    dst = [d % n for d in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise RuntimeError("movedim(): repeated dim in source or destination")
    order = [d for d in range(ndim) if d not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return _F["permute"](input, order)


moveaxis = movedim


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:  # noqa: A002
    return _F["transpose"](input, axis0, axis1)


def repeat_interleave(
    input: Tensor,  # noqa: A002
    repeats: Any,
    dim: int | None = None,
    *,
    output_size: int | None = None,
) -> Tensor:
    """``torch.repeat_interleave``: each element repeated ``repeats`` times along ``dim``
    (the flattened input when ``dim`` is None)."""
    if dim is None:
        input = input.reshape(-1)  # noqa: A001
        dim = 0
    dim = dim % builtins.max(input.ndim, 1)
    if isinstance(repeats, (list, tuple)) and len(repeats) == 1:
        repeats = repeats[0]
    if isinstance(repeats, builtins.int) or (isinstance(repeats, Tensor) and repeats.numel() == 1):
        # one count for every element (a one-element tensor broadcasts, as in PyTorch)
        r = int(repeats)
        if r < 0:
            raise RuntimeError("repeat_interleave(): repeats can not be negative")
        shape = list(input.shape)
        expanded = input.unsqueeze(dim + 1)
        target = [*shape[: dim + 1], r, *shape[dim + 1 :]]
        shape[dim] *= r
        return _F["broadcast_to"](expanded, target).reshape(shape)
    if not isinstance(repeats, Tensor):
        from ._factories import tensor

        repeats = tensor(repeats, device=input.device)
    if repeats.ndim != 1 or repeats.shape[0] != input.shape[dim]:
        raise RuntimeError(
            f"repeat_interleave(): repeats must have the same size as input along dim, "
            f"got {tuple(repeats.shape)} for size {input.shape[dim]}"
        )
    if builtins.bool((repeats < 0).any()):
        raise RuntimeError("repeat_interleave(): repeats can not be negative")
    ends = _F["cumsum"](repeats, 0)
    total = int(ends[-1]) if repeats.shape[0] else 0
    positions = _F["arange"](total, device=input.device)
    index = _F["searchsorted"](ends, positions, right=True)
    return _F["index_select"](input, dim, index)


# -- differences ----------------------------------------------------------------------


def diff(
    input: Tensor,  # noqa: A002
    n: int = 1,
    dim: int = -1,
    prepend: Tensor | None = None,
    append: Tensor | None = None,
) -> Tensor:
    """``torch.diff``: the ``n``-th forward difference along ``dim`` (``logical_xor``
    for bool tensors, as PyTorch)."""
    if input.ndim == 0:
        raise RuntimeError("diff(): expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"diff(): order must be non-negative but got {n}")
    parts = [p for p in (prepend, input, append) if p is not None]
    x = _F["cat"](parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        size = x.shape[dim]
        if size == 0:
            break
        hi = _F["narrow"](x, dim, 1, size - 1)
        lo = _F["narrow"](x, dim, 0, size - 1)
        x = _F["logical_xor"](hi, lo) if x.dtype is _dtype.bool else hi - lo
    return x

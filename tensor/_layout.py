"""Strided layouts: shapes, strides (in elements) and offsets, as pure functions of tuples.

Imports: the standard library only.

PyTorch's rules for which reshapes can be views (``view_strides``, c10's
``computeStride``), what "contiguous" means (dims of size 1 do not count, empty
tensors are contiguous), and how ``-1`` in a shape is inferred.  ``MetaArray``
uses them to give meta tensors real strides, so ``view`` on a meta tensor fails
exactly where it fails on the CPU; the Tensor's ``stride()``/``is_contiguous()``
and the ``reshape`` kernels use them too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "basic_index",
    "contiguous_strides",
    "infer_size",
    "is_contiguous",
    "view_strides",
]

Shape = tuple[int, ...]


def contiguous_strides(shape: Sequence[int]) -> Shape:
    """Row-major strides of ``shape`` (PyTorch gives size-0/1 dims the stride they'd have)."""
    out = []
    acc = 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """PyTorch's ``is_contiguous``: row-major, ignoring dims of size 1; empty is contiguous."""
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides), strict=True):
        if n == 0:
            return True
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def infer_size(op: str, shape: Sequence[Any], numel: int) -> Shape:
    """``shape`` with its ``-1`` (at most one) filled in so that it holds ``numel`` elements."""
    out: list[int] = []
    infer = -1
    known = 1
    for i, n in enumerate(shape):
        if isinstance(n, bool) or not hasattr(n, "__index__"):
            raise TypeError(
                f"{op}(): argument 'size' must be a sequence of ints, but element {i} is "
                f"{type(n).__name__}"
            )
        n = n.__index__()
        if n == -1:
            if infer >= 0:
                raise RuntimeError(
                    f"{op}(): only one dimension can be inferred (shape {list(shape)})"
                )
            infer = i
        elif n < 0:
            raise RuntimeError(f"{op}(): invalid shape dimension {n} in shape {list(shape)}")
        else:
            known *= n
        out.append(n)
    if infer >= 0:
        if known == 0 or numel % known:
            raise RuntimeError(
                f"{op}(): shape '{list(out)}' is invalid for input of size {numel}"
                + (
                    " (the unspecified dimension -1 is ambiguous with a 0-sized dim)"
                    if known == 0
                    else ""
                )
            )
        out[infer] = numel // known
    elif known != numel:
        raise RuntimeError(f"{op}(): shape '{list(out)}' is invalid for input of size {numel}")
    return tuple(out)


def view_strides(old_shape: Shape, old_strides: Shape, new_shape: Shape) -> Shape | None:
    """Strides that make ``new_shape`` a view of the old layout, or None (c10 computeStride).

    Groups of old dims that are contiguous with each other ("chunks") may be split and
    merged freely; a new dim may not span two chunks.
    """
    numel = 1
    for n in old_shape:
        numel *= n
    if numel == 0:
        return contiguous_strides(new_shape) if old_shape != new_shape else old_strides
    if not old_shape:  # a 0-d tensor becomes any shape of one element
        return tuple(1 for _ in new_shape)
    out = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        # A chunk ends where the next-left dim is not laid out right after this one.
        if tensor_d == 0 or (
            old_shape[tensor_d - 1] != 1
            and old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride
        ):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                out[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(out)


def basic_index(shape: Shape, strides: Shape, offset: int, key: Any) -> tuple[Shape, Shape, int]:
    """The layout of ``x[key]`` for a basic index (ints, slices with step > 0, None, ...)."""
    if not isinstance(key, tuple):
        key = (key,)
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    if consumed > len(shape):
        raise IndexError(
            f"too many indices for tensor of dimension {len(shape)} ({consumed} were given)"
        )
    expanded: list[Any] = []
    for k in key:
        if k is Ellipsis:
            expanded.extend([slice(None)] * (len(shape) - consumed))
            consumed = len(shape)  # a second Ellipsis adds nothing
        else:
            expanded.append(k)
    expanded.extend([slice(None)] * (len(shape) - sum(1 for k in expanded if k is not None)))
    new_shape: list[int] = []
    new_strides: list[int] = []
    d = 0
    for k in expanded:
        if k is None:
            new_shape.append(1)
            new_strides.append(0)
            continue
        size, stride = shape[d], strides[d]
        if isinstance(k, slice):
            start, stop, step = k.indices(size)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            n = max(0, (stop - start + step - 1) // step)
            if n:
                offset += start * stride
            new_shape.append(n)
            new_strides.append(stride * step)
        else:
            i = k.__index__()
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {d} with size {size}")
            offset += (i % size) * stride
        d += 1
    return tuple(new_shape), tuple(new_strides), offset

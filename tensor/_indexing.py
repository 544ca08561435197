"""``Tensor.__getitem__`` and ``__setitem__``: indexing decomposed into operators, as PyTorch does.

Imports: NumPy (index arrays given by users), ``dispatch`` and ``tensor``'s
``_tensor``, ``_convert``, ``_dtype``.

The basic part of an index (ints, slices with a positive step, None, Ellipsis)
becomes views: ``select``, ``slice``, ``unsqueeze``; so ``x[1:3, 0]`` shares
memory with ``x``.  What is left (integer tensors or lists, boolean masks)
becomes one ``index`` call on that view, with the index tensors aligned to its
dims; PyTorch's rules follow (``x[0, :, [1, 2]]`` has shape ``(4, 2)`` for a
``(3, 4, 5)`` tensor, where NumPy would give ``(2, 4)``).  Assignment takes the
same view and writes with ``index_put_``, ``copy_`` or ``fill_``, so writes reach
the base and bump its version.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from backends.common import fastpaths
from dispatch import ops

from . import _convert, _dtype
from ._tensor import Tensor, make

__all__ = ["getitem", "setitem"]

core = ops.core
_select = core.select.int
_slice = core.slice.Tensor
_unsqueeze = core.unsqueeze.default
_index = core.index.Tensor
_NUMBERS = (bool, int, float, complex)


def _bad_index(k: Any) -> IndexError:
    return IndexError(
        f"__getitem__(): only integers, slices (`:`), ellipsis (`...`), None and long or byte "
        f"Variables are valid indices (got {type(k).__name__})"
    )


def _as_index_tensor(k: Any, self: Tensor) -> Tensor:
    """A list, tuple or array used as an index, as a tensor on ``self``'s device."""
    try:
        arr = np.asarray(k)
    except ValueError as e:
        raise IndexError(f"__getitem__(): could not make an index from {k!r} ({e})") from None
    if arr.dtype.kind not in "biu" and not (arr.dtype.kind == "f" and arr.size == 0):
        raise IndexError(
            "__getitem__(): tensors used as indices must be long, int, byte or bool tensors "
            f"(got values of dtype {arr.dtype})"
        )
    dt = _dtype.bool if arr.dtype.kind == "b" else _dtype.int64
    array, dt = _convert.array_from_data(arr, dt, self._device)
    return make(array, dt, self._device)


def _items(self: Tensor, key: Any) -> list[Any]:
    if not isinstance(key, tuple):
        key = (key,)
    items: list[Any] = []
    for k in key:
        if k is None or k is Ellipsis or type(k) is slice or type(k) is int:
            items.append(k)
        elif isinstance(k, Tensor):
            if k._dtype.category == _dtype.INT and not k._array.ndim and k._device.type != "meta":
                items.append(k.__index__())  # a 0-d integer tensor acts as an int
            else:
                items.append(k)
        elif k is True or k is False:
            items.append(_as_index_tensor(k, self))  # numpy's rule: a 0-d mask
        elif isinstance(k, (list, tuple, np.ndarray)):
            items.append(_as_index_tensor(k, self))
        elif hasattr(k, "__index__") and not isinstance(k, float):
            items.append(k.__index__())
        else:
            raise _bad_index(k)
    return items


# Note [Negative steps]
# ~~~~~~~~~~~~~~~~~~~~~
# PyTorch refuses a slice with a negative step; NumPy and the Array API standard take
# it.  A view cannot have a negative stride here (the backends' arrays are wrapped as
# they are), so ``x[::-s]`` is the positive-step slice of the same elements, flipped:
# reading it flips the view (a copy); writing it flips the value instead and writes
# through the view, so the write still reaches ``x``.


def _apply(self: Tensor, key: Any) -> tuple[Tensor, list[Any], list[int]]:
    """The view of the basic part of ``key``, the advanced indices left for ``index``
    and the dims of the view to flip (Note [Negative steps])."""
    items = _items(self, key)
    ndim = self._array.ndim
    consumed = 0
    ellipses = 0
    for k in items:
        if k is Ellipsis:
            ellipses += 1
        elif k is not None:
            consumed += k._array.ndim if isinstance(k, Tensor) and k._dtype.category == 0 else 1
    if ellipses > 1:
        raise IndexError("__getitem__(): an index can only have a single ellipsis ('...')")
    if consumed > ndim:
        raise IndexError(
            f"__getitem__(): too many indices for tensor of dimension {ndim} ({consumed} given)"
        )
    result = self
    dim = 0
    flips: list[int] = []
    advanced: list[Any] = []
    covered = 0  # dims of `result` covered by the entries of `advanced`
    for k in items:
        if k is None:
            result = _unsqueeze(result, dim)
            dim += 1
        elif k is Ellipsis:
            dim += ndim - consumed
        elif type(k) is int:
            result = _select.call3(result, dim, k)
        elif type(k) is slice:
            step = 1 if k.step is None else _slice_index(k.step)
            if step == 0:
                raise ValueError("__getitem__(): step must be greater than zero")
            if step < 0:  # Note [Negative steps]
                indices = range(*slice(k.start, k.stop, step).indices(result.shape[dim]))
                if len(indices):
                    result = _slice(result, dim, indices[-1], indices[0] + 1, -step)
                else:
                    result = _slice(result, dim, 0, 0, 1)
                flips.append(dim)
            elif k.start is not None or k.stop is not None or step != 1:
                start, stop = k.start, k.stop
                if start is not None and type(start) is not int:
                    start = _slice_index(start)
                if stop is not None and type(stop) is not int:
                    stop = _slice_index(stop)
                result = _slice(result, dim, start, stop, step)
            dim += 1
        else:
            advanced.extend([None] * (dim - covered))
            advanced.append(k)
            width = k._array.ndim if k._dtype.category == 0 else 1
            dim += width
            covered = dim
    return result, advanced, flips


def _slice_index(value: Any) -> int:
    try:
        return int(value.__index__())
    except AttributeError:
        raise TypeError(
            "slice indices must be integers or None or have an __index__ method, "
            f"not {type(value).__name__}"
        ) from None


def getitem(self: Tensor, key: Any) -> Tensor:
    """``x[key]``: a view for basic indices, a copy when tensors or lists index.

    >>> import tensor as tt
    >>> x = tt.arange(12).reshape(3, 4).clone()
    >>> x[1:, ::2].tolist(), x[1:, ::2]._base is x
    ([[4, 6], [8, 10]], True)
    >>> x[x > 8].tolist(), x[[0, 2], -1].tolist()
    ([9, 10, 11], [3, 11])
    """
    if type(key) is int and fastpaths.ENABLED:  # the commonest index: one select
        return _select.call3(self, 0, key)  # type: ignore[no-any-return]
    if type(key) is slice and fastpaths.ENABLED:  # ``x[1:3]``: ``_apply``'s one step
        start, stop, step = key.start, key.stop, key.step
        if (
            (start is None or type(start) is int)
            and (stop is None or type(stop) is int)
            and (step is None or (type(step) is int and step > 0))
            and (start is not None or stop is not None or (step or 1) != 1)
            and self._array.ndim
        ):
            return _slice(self, 0, start, stop, step or 1)  # type: ignore[no-any-return]
    if isinstance(key, Tensor) and (key._dtype.category == 0 or key._array.ndim):
        return _index(self, [key])  # type: ignore[no-any-return]  # x[mask], x[idx]
    result, advanced, flips = _apply(self, key)
    if flips:
        result = core.flip.default(result, flips)
    if advanced:
        return _index(result, advanced)  # type: ignore[no-any-return]
    if result is self:  # x[...] or x[:]: an alias of the whole tensor
        return core.view.default(self, list(self._array.shape))  # type: ignore[no-any-return]
    return result


def setitem(self: Tensor, key: Any, value: Any) -> None:
    """``x[key] = value``: written through a view, so it reaches ``x`` and its views.

    >>> import tensor as tt
    >>> x = tt.zeros(2, 3)
    >>> row = x[1]
    >>> x[:, 0] = 5.0
    >>> row.tolist(), x._version
    ([5.0, 0.0, 0.0], 1)
    """
    result, advanced, flips = _apply(self, key)
    if flips:
        if advanced:
            raise IndexError(
                "__setitem__(): a slice with a negative step cannot be combined with tensor "
                "or list indices in an assignment"
            )
        if not isinstance(value, Tensor):
            array, dt = _convert.array_from_data(value, self._dtype, self._device)
            value = make(array, dt, self._device)
        value = core.flip.default(core.expand.default(value, list(result.shape)), flips)
    if advanced:
        if isinstance(value, Tensor):
            v = value if value._dtype is self._dtype else value.to(self._dtype)
        else:
            array, dt = _convert.array_from_data(value, self._dtype, self._device)
            v = make(array, dt, self._device)
        core.index_put_.default(result, advanced, v)
    elif isinstance(value, Tensor):
        core.copy_.default(result, value)
    elif isinstance(value, _NUMBERS):
        core.fill_.Scalar(result, value)
    else:
        array, dt = _convert.array_from_data(value, self._dtype, self._device)
        core.copy_.default(result, make(array, dt, self._device))

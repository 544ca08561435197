"""Joining and rearranging (cat, stack, flip, roll, repeat, tril, triu, diag), written once.

Imports: ``backends.common``.

Each kernel checks its arguments (PyTorch's rules and messages) and computes the
result's shape and dtype, which is all a meta kernel returns; data kernels then
call the array namespace.  ``cat`` and ``stack`` promote their inputs' dtypes
as PyTorch does, and ``cat`` skips legacy 1-D empty tensors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import errors, fastpaths, shape_rules
from .elementwise import MetaNamespace, Namespace
from .frontend import FrontEnd

__all__ = ["cat_result", "kernels"]


def _tensor_list(op: str, tensors: Any) -> list[Any]:
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise ValueError(f"{op}(): expected a non-empty list of Tensors (argument 'tensors')")
    return list(tensors)


def cat_result(
    front: FrontEnd, tensors: Any, dim: Any
) -> tuple[list[Any], tuple[int, ...], int, Any, Any]:
    """(tensors kept, shape, dim, dtype, device) of a ``cat`` call, or PyTorch's error."""
    tensors = _tensor_list("cat", tensors)
    first = tensors[0]
    dt, dev = first._dtype, first._device
    kept = []
    positions: list[int] = []  # each kept tensor's position in the list, for messages
    ref = None
    for i, t in enumerate(tensors):
        if t._dtype is not dt:
            dt = front.promote_types(dt, t._dtype)
        if t._device is not dev:
            raise errors.device_mismatch("cat", ("tensors[0]", dev), (f"tensors[{i}]", t._device))
        shape = t._array.shape
        if len(shape) == 1 and shape[0] == 0:
            continue  # legacy: 1-D empty tensors are skipped
        if not shape:
            raise RuntimeError(
                f"cat(): zero-dimensional tensor (at position {i}) cannot be concatenated"
            )
        kept.append(t)
        positions.append(i)
        if ref is None:
            ref = shape
    if ref is None:
        return kept, (0,), 0, dt, dev
    d = shape_rules.normalize_dim("cat", dim, len(ref))
    total = 0
    for t, position in zip(kept, positions, strict=True):
        shape = t._array.shape
        if len(shape) != len(ref):
            raise RuntimeError(
                f"cat(): Tensors must have same number of dimensions: got {len(ref)} and "
                f"{len(shape)}"
            )
        for j, (a, b) in enumerate(zip(ref, shape, strict=True)):
            if j != d and a != b:
                raise RuntimeError(
                    f"cat(): Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{a} but got size {b} for tensor number {position} in the list."
                )
        total += shape[d]
    out = list(ref)
    out[d] = total
    return kept, tuple(out), d, dt, dev


def _stack_result(
    front: FrontEnd, tensors: Any, dim: Any
) -> tuple[list[Any], tuple[int, ...], int, Any, Any]:
    tensors = _tensor_list("stack", tensors)
    first = tensors[0]
    ref = first._array.shape
    dt, dev = first._dtype, first._device
    for i, t in enumerate(tensors[1:], 1):
        if t._array.shape != ref:
            raise RuntimeError(
                f"stack(): stack expects each tensor to be equal size, but got {list(ref)} at "
                f"entry 0 and {list(t._array.shape)} at entry {i}"
            )
        if t._dtype is not dt:
            dt = front.promote_types(dt, t._dtype)
        if t._device is not dev:
            raise errors.device_mismatch("stack", ("tensors[0]", dev), (f"tensors[{i}]", t._device))
    d = shape_rules.normalize_dim("stack", dim, len(ref) + 1)
    return tensors, (*ref[:d], len(tensors), *ref[d:]), d, dt, dev


def _dims(op: str, dims: Any, ndim: int) -> tuple[int, ...]:
    out = []
    for d in [dims] if isinstance(dims, int) else dims:
        n = shape_rules.normalize_dim(op, d, ndim, "dims")
        if n in out:
            raise RuntimeError(f"{op}(): dim {n} appears multiple times in the list of dims")
        out.append(n)
    return tuple(out)


def standard_diag(xp: Any) -> Callable[[Any, int], Any]:
    """NumPy's ``diag(x, k)`` in the standard, for a library without one: a 2-D ``x``'s
    diagonal is ``linalg.diagonal``'s; a 1-D ``x`` goes on the ``k``-th diagonal of a
    zero matrix by ``where`` over ``eye``'s mask (row ``i`` holds ``x[i]`` above the
    main diagonal, column ``j`` holds ``x[j]`` below it)."""

    def diag(x: Any, k: int) -> Any:
        if x.ndim == 2:
            return xp.linalg.diagonal(x, offset=k)
        n = x.shape[0] + abs(k)
        vals = xp.concat([x, xp.zeros((abs(k),), dtype=x.dtype)])
        vals = vals[:, None] if k >= 0 else vals[None, :]
        return xp.where(xp.eye(n, n, k=k, dtype=xp.bool), vals, xp.zeros((), dtype=x.dtype))

    return diag


def kernels(ns: Namespace, fns: dict[str, Callable[..., Any]]) -> dict[str, Any]:
    """The joining kernels of one backend (``ns`` a ``MetaNamespace`` for meta);
    ``fns["diag"]`` is the namespace's ``diag`` (not in the array API)."""
    meta = isinstance(ns, MetaNamespace)
    xp = ns.xp
    front = ns.front
    make, make_meta = front.make, front.make_meta
    diag_fn = fns.get("diag")
    concat = fns.get("concat") or (xp.concat if xp is not None else None)

    copy, astype = ns.copy, ns.astype

    def _arrays(tensors: list[Any], dt: Any) -> list[Any]:
        return [t._array if t._dtype is dt else astype(t._array, dt) for t in tensors]

    def cat(tensors: Any, dim: Any = 0) -> Any:
        # Fast path (ci/bench/ops.py: cat of ten small tensors): one dtype (the call's
        # validation has made ``dim`` an integer).  The array library checks the rest
        # (shapes, 0-d arrays, the dim's range), and any error it raises sends the call
        # down the validating path below, which raises PyTorch's message (or, for legacy
        # 1-D empty tensors, skips them).  Devices are not compared here: arrays of
        # another device make the library raise.
        if not meta and tensors and fastpaths.ENABLED:
            first = tensors[0]
            dt = first._dtype
            arrays = [t._array for t in tensors if t._dtype is dt]
            if len(arrays) == len(tensors):
                try:
                    return make(concat(arrays, dim), dt, first._device)
                except (ValueError, TypeError, OverflowError):
                    pass
        kept, shape, d, dt, dev = cat_result(front, tensors, dim)
        if meta:
            return make_meta(shape, dt, dev)
        if not kept:
            return make(xp.zeros((0,), dtype=ns.dtype_of(dt)), dt, dev)
        return make(concat(_arrays(kept, dt), axis=d), dt, dev)

    def stack(tensors: Any, dim: Any = 0) -> Any:
        # Fast path (as cat's above): one dtype, one shape, an int dim in
        # range: each array indexed with a new axis at ``d`` and concatenated along it, as
        # NumPy's ``stack`` does after its checks (4.6 -> ~1.5 us for two [4, 8]).
        if not meta and tensors and type(dim) is int and fastpaths.ENABLED:
            first = tensors[0]
            dt, shape = first._dtype, first._array.shape
            n = len(shape)
            if -n - 1 <= dim <= n:
                d = dim % (n + 1)
                key = (*(slice(None),) * d, None)
                try:  # an array library that refuses the index (array_api_strict): below
                    arrays = [
                        t._array[key] for t in tensors if t._dtype is dt and t._array.shape == shape
                    ]
                    if len(arrays) == len(tensors):
                        return make(concat(arrays, d), dt, first._device)
                except (ValueError, TypeError, IndexError, OverflowError):
                    pass
        tensors, shape, d, dt, dev = _stack_result(front, tensors, dim)
        if meta:
            return make_meta(shape, dt, dev)
        return make(xp.stack(_arrays(tensors, dt), axis=d), dt, dev)

    def flip(self: Any, dims: Any) -> Any:
        x = self._array
        axes = _dims("flip", dims, x.ndim)
        if meta:
            return make_meta(tuple(x.shape), self._dtype, self._device)
        out = copy(xp.flip(x, axis=axes)) if axes and x.ndim else copy(x)
        return make(out, self._dtype, self._device)

    def roll(self: Any, shifts: Any, dims: Any = ()) -> Any:
        x = self._array
        shifts = [shifts] if isinstance(shifts, int) else list(shifts)
        dims = [dims] if isinstance(dims, int) else list(dims)
        if not shifts:
            raise RuntimeError("roll(): `shifts` required")
        if dims and len(shifts) != len(dims):
            raise RuntimeError(
                f"roll(): shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}"
            )
        if not dims and len(shifts) != 1:
            raise RuntimeError(
                f"roll(): with no dims, shifts must have one element, got {len(shifts)}"
            )
        axes = [shape_rules.normalize_dim("roll", d, x.ndim, "dims") for d in dims]
        if meta:
            return make_meta(tuple(x.shape), self._dtype, self._device)
        if not axes:
            flat = xp.roll(xp.reshape(x, (-1,)), shifts[0])
            return make(xp.reshape(flat, x.shape), self._dtype, self._device)
        return make(xp.roll(x, tuple(shifts), axis=tuple(axes)), self._dtype, self._device)

    def repeat(self: Any, repeats: Any) -> Any:
        x = self._array
        reps = [int(r) for r in repeats]
        if len(reps) < x.ndim:
            raise RuntimeError(
                f"repeat(): Number of dimensions of repeat dims can not be smaller than number "
                f"of dimensions of tensor (repeats has {len(reps)}, self has {x.ndim})"
            )
        lead = len(reps) - x.ndim
        base = (1,) * lead + tuple(x.shape)
        shape = tuple(r * n for r, n in zip(reps, base, strict=True))
        if any(r < 0 for r in reps):
            raise RuntimeError(
                f"repeat(): Trying to create tensor with negative dimension "
                f"{min(reps)}: {list(shape)}"
            )
        if meta:
            return make_meta(shape, self._dtype, self._device)
        out = xp.tile(xp.reshape(x, base), tuple(reps)) if reps else copy(x)
        return make(ns.asarray(out), self._dtype, self._device)

    def _triangle(op: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def kernel(self: Any, diagonal: Any = 0) -> Any:
            x = self._array
            if x.ndim < 2:
                raise RuntimeError(f"{op}(): input tensor must have at least 2 dimensions")
            if meta:
                return make_meta(tuple(x.shape), self._dtype, self._device)
            out = fn(x, k=int(diagonal))
            out = ns.retype(out, x.dtype)  # CuPy's tril/triu give bfloat16 back as float32
            return make(out, self._dtype, self._device)

        return kernel

    def diag(self: Any, diagonal: Any = 0) -> Any:
        x = self._array
        k = int(diagonal)
        if x.ndim == 1:
            n = x.shape[0] + abs(k)
            shape: tuple[int, ...] = (n, n)
        elif x.ndim == 2:
            r, c = x.shape
            shape = (max(0, min(r, c - k) if k >= 0 else min(r + k, c)),)
        else:
            raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D")
        if meta:
            return make_meta(shape, self._dtype, self._device)
        out = diag_fn(x, k)  # type: ignore[misc]
        return make(copy(out) if x.ndim == 2 else out, self._dtype, self._device)

    return {
        "cat": cat,
        "stack": stack,
        "flip": flip,
        "roll": roll,
        "repeat": repeat,
        "tril": _triangle("tril", getattr(ns.lib, "tril", None)),
        "triu": _triangle("triu", getattr(ns.lib, "triu", None)),
        "diag": diag,
    }

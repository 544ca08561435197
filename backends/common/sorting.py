"""Sorting and selection (sort, argsort, topk, unique), written once against the namespace.

Imports: ``backends.common``.

PyTorch's order: NaN is larger than every number (last ascending, first
descending); ``descending`` keeps ties in their original order when stable.  The
sorts are stable always (one code path; PyTorch's CPU sort is stable too).
``unique`` never merges NaNs and returns empty ``inverse``/``counts`` tensors
unless asked, as ``_unique2`` does; its result shape depends on the data, so its
meta kernel raises.
"""

from __future__ import annotations

from typing import Any

from . import errors, shape_rules
from .elementwise import MetaNamespace, Namespace

__all__ = ["kernels"]


def _check(op: Any, self: Any) -> None:
    if self._dtype not in op.result_dtypes:
        if op.name == "topk" and self._dtype.category == 0:  # bool
            raise NotImplementedError("topk(): topk does not support bool dtypes on CPU")
        raise errors.unsupported_dtype(op.name, self._dtype)


def kernels(ns: Namespace) -> dict[str, Any]:
    """The sorting kernels of one backend (``ns`` a ``MetaNamespace`` for meta)."""
    meta = isinstance(ns, MetaNamespace)
    xp = ns.xp
    front = ns.front
    make, make_meta, int64 = front.make, front.make_meta, front.int64
    op_info = front.op_info
    sort_op, argsort_op = op_info("sort"), op_info("argsort")
    topk_op, unique_op = op_info("topk"), op_info("_unique2")
    kind_of, retype, copy, float32 = ns.kind_of, ns.retype, ns.copy, front.float32
    wide_kinds: tuple[str, ...] = ("V",)

    narrow = (*wide_kinds, "b") if ns.standard else wide_kinds

    def _wide(x: Any) -> Any:
        # ml_dtypes' bfloat16 (kind "V") sorts NaN wrongly and CuPy cannot sort it at all:
        # order float32 copies, which hold it exactly.  The standard sorts no bools: uint8.
        kind = kind_of(x.dtype)
        if kind not in narrow:
            return x
        return ns.astype(x, float32 if kind == "V" else front.uint8)

    def _order(x: Any, d: int, descending: bool) -> Any:
        # array_api_compat's descending argsort flips, sorts stably and flips back: ties keep
        # their order and NaN (last ascending) comes first, as in PyTorch.
        return xp.argsort(_wide(x), axis=d, descending=descending, stable=True)

    def _sorted(op: Any, self: Any, dim: Any, descending: bool) -> tuple[Any, Any]:
        _check(op, self)
        x = self._array
        d = shape_rules.normalize_dim(op.name, dim, x.ndim)
        dev = self._device
        if meta:
            shape = tuple(x.shape)
            return make_meta(shape, self._dtype, dev), make_meta(shape, int64, dev)
        if x.ndim == 0:
            return make(copy(x), self._dtype, dev), make(xp.zeros((), dtype=xp.int64), int64, dev)
        idx = _order(x, d, descending)
        return (
            make(xp.take_along_axis(x, idx, axis=d), self._dtype, dev),
            make(retype(idx, xp.int64), int64, dev),
        )

    def sort(self: Any, dim: Any = -1, descending: bool = False) -> Any:
        return _sorted(sort_op, self, dim, descending)

    def sort_stable(self: Any, *, stable: Any, dim: Any = -1, descending: bool = False) -> Any:
        return _sorted(sort_op, self, dim, descending)

    def argsort(self: Any, dim: Any = -1, descending: bool = False) -> Any:
        return _sorted(argsort_op, self, dim, descending)[1]

    def argsort_stable(self: Any, *, stable: Any, dim: Any = -1, descending: bool = False) -> Any:
        return _sorted(argsort_op, self, dim, descending)[1]

    def topk(self: Any, k: Any, dim: Any = -1, largest: bool = True, sorted: bool = True) -> Any:  # noqa: A002
        _check(topk_op, self)
        x = self._array
        d = shape_rules.normalize_dim("topk", dim, x.ndim)
        size = x.shape[d] if x.ndim else 1
        k = int(k)
        if not 0 <= k <= size:
            raise RuntimeError(
                f"topk(): selected index k out of range (k={k}, dim {d} has size {size})"
            )
        dev = self._device
        shape = list(x.shape)
        if shape:
            shape[d] = k
        if meta:
            return make_meta(tuple(shape), self._dtype, dev), make_meta(tuple(shape), int64, dev)
        if x.ndim == 0:
            return make(copy(x), self._dtype, dev), make(xp.zeros((), dtype=xp.int64), int64, dev)
        idx = _order(x, d, largest)
        idx = idx[(*(slice(None),) * d, slice(0, k), ...)]
        return (
            make(xp.take_along_axis(x, idx, axis=d), self._dtype, dev),
            make(retype(idx, xp.int64), int64, dev),
        )

    def _empty_index(dev: Any) -> Any:
        return make(xp.zeros((0,), dtype=xp.int64), int64, dev)

    def unique2(
        self: Any,
        sorted: bool = True,
        return_inverse: bool = False,
        return_counts: bool = False,  # noqa: A002
    ) -> Any:
        _check(unique_op, self)
        if meta:
            raise NotImplementedError(
                "_unique2(): the result's shape depends on the data, which meta tensors do not "
                "have (PyTorch's meta kernels raise here too); run it on a 'cpu' tensor"
            )
        x = self._array
        flat = xp.reshape(x, (-1,))
        flat = _wide(flat)
        res = xp.unique_all(flat) if x.size else None
        dev = self._device
        if res is None:
            values = xp.reshape(x, (0,))
            inverse = xp.zeros(x.shape, dtype=xp.int64)
            counts = xp.zeros((0,), dtype=xp.int64)
        else:
            values, inverse, counts = (
                retype(res.values, x.dtype),
                xp.reshape(res.inverse_indices, x.shape),
                res.counts,
            )
        return (
            make(values, self._dtype, dev),
            make(retype(inverse, xp.int64), int64, dev) if return_inverse else _empty_index(dev),
            make(retype(counts, xp.int64), int64, dev) if return_counts else _empty_index(dev),
        )

    def unique_dim(
        self: Any, dim: Any, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
        return_counts: bool = False,
    ) -> Any:  # fmt: skip
        _check(unique_op, self)
        x = self._array
        d = shape_rules.normalize_dim("unique_dim", dim, x.ndim)
        if meta:
            raise NotImplementedError(
                "unique_dim(): the result's shape depends on the data, which meta tensors do "
                "not have; run it on a 'cpu' tensor"
            )
        dev = self._device
        moved = xp.moveaxis(x, d, 0)
        rows = xp.reshape(moved, (moved.shape[0], -1))
        if rows.shape[0] == 0:
            return self, _empty_index(dev), _empty_index(dev)
        # Lexicographic order of the slices along dim: sort by the last column first, stably.
        keys = _wide(rows)  # bfloat16, as unique
        order = xp.arange(rows.shape[0])
        for c in range(rows.shape[1] - 1, -1, -1):
            order = order[xp.argsort(keys[order, c], stable=True)]
        ordered = rows[order]
        new = xp.ones(rows.shape[0], dtype=xp.bool)
        if rows.shape[0] > 1:
            ordered_keys = keys[order]
            new[1:] = xp.any(ordered_keys[1:] != ordered_keys[:-1], axis=1)
        group = xp.cumsum(retype(new, xp.int64)) - 1
        first = xp.nonzero(new)[0]
        values = xp.moveaxis(xp.reshape(ordered[first], (-1, *moved.shape[1:])), 0, d)
        inverse = xp.zeros(rows.shape[0], dtype=xp.int64)
        inverse[order] = group
        counts = xp.diff(xp.concat([first, xp.asarray([rows.shape[0]])]))
        return (
            make(copy(values), self._dtype, dev),
            make(inverse, int64, dev) if return_inverse else _empty_index(dev),
            make(retype(counts, xp.int64), int64, dev) if return_counts else _empty_index(dev),
        )

    return {
        "sort": sort,
        "sort.stable": sort_stable,
        "argsort": argsort,
        "argsort.stable": argsort_stable,
        "topk": topk,
        "_unique2": unique2,
        "unique_dim": unique_dim,
    }

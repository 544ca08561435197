"""Indexing operators, written once against the array namespace (NumPy, CuPy) and for meta.

Imports: ``backends.common``.

``index`` (advanced indexing: integer and boolean tensors per dim, as left by
``Tensor.__getitem__`` after its basic part), ``index_put_``, ``index_select``,
``gather``, ``scatter_`` (``src``, ``value``, ``reduce``), ``scatter_add_``,
``masked_fill_``, ``masked_select``, ``nonzero``, ``take_along_dim``.  The
in-place forms are the primitives; the functional ones copy ``self`` first.
Each kernel checks its arguments with PyTorch's rules and messages, then either
computes the meta result's shape (data-dependent shapes raise
``NotImplementedError``, as in PyTorch) or calls the namespace.  ``fns`` gives
what the array API standard lacks: unbuffered ``add_at``/``multiply_at``
(NumPy's ``ufunc.at``) and ``put_along_axis``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import errors, shape_rules
from .elementwise import MetaNamespace, Namespace
from .frontend import FrontEnd
from .numbers import check_fits

__all__ = ["advanced_shape", "kernels"]


def _data_dependent(op: str) -> NotImplementedError:
    return NotImplementedError(
        f"{op}(): the result's shape depends on the data, which meta tensors do not have "
        f"(PyTorch's meta kernels raise here too); run it on a 'cpu' tensor"
    )


def advanced_shape(shape: tuple[int, ...], indices: list[Any]) -> tuple[int, ...]:
    """Result shape of ``x[indices]`` for integer index shapes (None = the whole dim)."""
    positions = [i for i, ix in enumerate(indices) if ix is not None]
    index_shape: tuple[int, ...] = ()
    for i in positions:
        index_shape = shape_rules.broadcast_shapes(
            "index", index_shape, indices[i], ("indices", "indices")
        )
    first, last = positions[0], positions[-1]
    rest = [n for d, n in enumerate(shape) if d >= len(indices) or indices[d] is None]
    if last - first + 1 == len(positions):  # adjacent: the index dims replace them in place
        before = [n for d, n in enumerate(shape[:first])]
        return (*before, *index_shape, *rest[len(before) :])
    return (*index_shape, *rest)


def _index_list(front: FrontEnd, op: str, self: Any, indices: Any) -> list[Any]:
    """Check the indices of index/index_put_; bool (and uint8) masks stay whole."""
    index_dtypes = (front.int64, front.int32, front.uint8, front.bool)
    shape = tuple(self._array.shape)
    used = 0
    for i, ix in enumerate(indices):
        if ix is None:
            used += 1
            continue
        if not isinstance(ix, front.Tensor):
            raise TypeError(
                f"{op}(): indices[{i}] must be a Tensor or None, not {type(ix).__name__}"
            )
        if ix._dtype not in index_dtypes:
            raise IndexError(
                f"{op}(): tensors used as indices must be long, int, byte or bool tensors "
                f"(indices[{i}] is {ix._dtype.name})"
            )
        if ix._dtype.category == 0 or ix._dtype is front.uint8:  # a mask covers mask.ndim dims
            mshape = tuple(ix._array.shape)
            for j, n in enumerate(mshape):
                if used + j >= len(shape) or shape[used + j] != n:
                    raise IndexError(
                        f"{op}(): The shape of the mask {list(mshape)} at index {j} does not "
                        f"match the shape of the indexed tensor {list(shape)} at index {used + j}"
                    )
            used += len(mshape)
        else:
            used += 1
    if used > len(shape):
        raise IndexError(
            f"{op}(): too many indices for tensor of dimension {len(shape)} ({used} were given)"
        )
    return list(indices)


def _extrema(xp: Any, idx: Any) -> tuple[int, int]:
    """The smallest and largest index of a non-empty ``idx`` (the standard has no
    ``idx.min()``)."""
    return int(xp.min(idx)), int(xp.max(idx))


def _check_range(xp: Any, op: str, idx: Any, size: int, dim: int, exc: type = IndexError) -> None:
    if idx.size:
        lo, hi = _extrema(xp, idx)
        if lo < -size or hi >= size:
            bad = hi if hi >= size else lo
            raise exc(f"{op}(): index {bad} is out of bounds for dimension {dim} with size {size}")


def _check_nonneg_range(xp: Any, op: str, idx: Any, size: int, dim: int) -> None:
    if idx.size:
        lo, hi = _extrema(xp, idx)
        if lo < 0 or hi >= size:
            raise RuntimeError(
                f"{op}(): index {hi if hi >= size else lo} is out of bounds for dimension {dim} "
                f"with size {size}"
            )


# Note [Indexing by take]
# ~~~~~~~~~~~~~~~~~~~~~~~
# The standard's ``__getitem__`` takes integer index arrays only with integer indices
# (no slices beside them) and masks only alone; NumPy's takes any mix.  Where the array
# refuses the key (array_api_strict), ``index`` computes the same result with ``take``:
# masks become their ``nonzero()`` arrays, the index arrays broadcast, the indexed dims
# move to the front and flatten into one, the flat index (checked against each dim's
# size, negatives wrapped) picks rows, and the broadcast index dims go where NumPy puts
# them (in place of adjacent indexed dims, else first).  Writes (``index_put_``,
# ``scatter``) have no such spelling in the standard and stay refused.
def _take_index(xp: Any, x: Any, key: tuple[Any, ...]) -> Any:
    """``x[key]`` (``key``: whole-dim slices, integer arrays, bool masks) with ``take``:
    Note [Indexing by take]."""
    parts: list[tuple[int, Any]] = []
    d = 0
    for k in key:
        if isinstance(k, slice):
            d += 1
        elif k.dtype == xp.bool:
            parts.extend((d + j, a) for j, a in enumerate(xp.nonzero(k)))
            d += k.ndim
        else:
            parts.append((d, k))
            d += 1
    shape = tuple(x.shape)
    dims = [dim for dim, _ in parts]
    try:
        arrays = xp.broadcast_arrays(*(a for _, a in parts))
    except ValueError:  # PyTorch's IndexError (an empty mask beside a non-empty index, too)
        shapes = ", ".join(str(list(a.shape)) for _, a in parts)
        raise IndexError(
            f"index(): shape mismatch: indexing tensors could not be broadcast together with "
            f"shapes {shapes}"
        ) from None
    index_shape = tuple(arrays[0].shape)
    flat = None
    for dim, a in zip(dims, arrays, strict=True):
        n = shape[dim]
        a = xp.astype(a, xp.int64)
        _check_range(xp, "index", a, n, dim)
        a = xp.where(a < 0, a + n, a)
        flat = a if flat is None else flat * n + a
    rest = [i for i in range(x.ndim) if i not in dims]
    rest_shape = tuple(shape[i] for i in rest)
    rows = 1
    for dim in dims:
        rows *= shape[dim]
    moved = xp.reshape(xp.permute_dims(x, (*dims, *rest)), (rows, *rest_shape))
    out = xp.take(moved, xp.reshape(flat, (-1,)), axis=0)
    out = xp.reshape(out, (*index_shape, *rest_shape))
    first, nb = dims[0], len(index_shape)
    if dims == list(range(first, first + len(dims))) and first:  # adjacent: in place
        order = [*range(nb, nb + first), *range(nb), *range(nb + first, out.ndim)]
        out = xp.permute_dims(out, tuple(order))
    return out


def _index_dtype(front: FrontEnd, op: str, index: Any, arg: str = "index") -> None:
    """``index`` must be an int64 or int32 tensor."""
    ok = (front.int64, front.int32)
    if not isinstance(index, front.Tensor) or index._dtype not in ok:
        got = index._dtype.name if isinstance(index, front.Tensor) else type(index).__name__
        names = " or ".join(d.name for d in ok)
        raise RuntimeError(f"{op}(): Expected dtype {names} for argument '{arg}', but got {got}")


def _gather_shapes(op: str, self: Any, dim: int, index: Any, src: Any = None) -> int:
    """PyTorch's gather/scatter shape rules; returns the wrapped dim."""
    xs, ishape = tuple(self._array.shape), tuple(index._array.shape)
    d = shape_rules.normalize_dim(op, dim, len(xs))
    if len(ishape) != len(xs) and (ishape or len(xs) > 1) and (xs or len(ishape) > 1):
        raise RuntimeError(
            f"{op}(): Index tensor must have the same number of dimensions as input tensor "
            f"(index has {len(ishape)}, self has {len(xs)})"
        )
    for i, n in enumerate(ishape):
        if i != d and i < len(xs) and n > xs[i]:
            raise RuntimeError(
                f"{op}(): Size does not match at dimension {i} expected index {list(ishape)} to "
                f"be no larger than self {list(xs)} apart from dimension {d}"
            )
        if src is not None and i < src._array.ndim and n > src._array.shape[i]:
            raise RuntimeError(
                f"{op}(): Expected index {list(ishape)} to be no larger than src "
                f"{list(src._array.shape)} in every dimension"
            )
    return d


def kernels(ns: Namespace, fns: dict[str, Callable[..., Any]]) -> dict[str, Any]:
    """The indexing kernels of one backend (``ns`` a ``MetaNamespace`` for meta)."""
    meta = isinstance(ns, MetaNamespace)
    xp = ns.xp
    front = ns.front
    make, make_meta, tensor_type = front.make, front.make_meta, front.Tensor
    bool_, int64 = front.bool, front.int64
    add_at, multiply_at = fns.get("add_at"), fns.get("multiply_at")
    standard, copy, retype = ns.standard, ns.copy, ns.retype
    # NumPy's and CuPy's copyto writes a mask in place; the standard: where, then x[...].
    copyto = None if standard else getattr(ns.lib, "copyto", None)

    def _array_key(indices: list[Any]) -> tuple[Any, ...]:
        return tuple(slice(None) if ix is None else ix._array for ix in indices)

    def index(self: Any, indices: Any) -> Any:
        indices = _index_list(front, "index", self, indices)
        dt, dev = self._dtype, self._device
        if meta:
            if any(ix is not None and ix._dtype.category == 0 for ix in indices):
                raise _data_dependent("index")
            shape = advanced_shape(
                tuple(self._array.shape),
                [None if ix is None else tuple(ix._array.shape) for ix in indices],
            )
            return make_meta(shape, dt, dev)
        key = _array_key(indices)
        try:
            out = self._array[key]
        except IndexError as e:
            if not standard:
                raise IndexError(f"index(): {str(e).replace('axis', 'dimension')}") from None
            out = _take_index(xp, self._array, key)  # Note [Indexing by take]
        return make(out, dt, dev)

    def index_put_(self: Any, indices: Any, values: Any, accumulate: bool = False) -> Any:
        indices = _index_list(front, "index_put_", self, indices)
        if values._dtype is not self._dtype:
            raise RuntimeError(
                f"index_put_(): Index put requires the source and destination dtypes match, "
                f"got {errors.C10_NAMES[self._dtype.name]} for the destination and "
                f"{errors.C10_NAMES[values._dtype.name]} for the source."
            )
        if meta:
            return self
        x, key, v = self._array, _array_key(indices), values._array
        try:
            arrays = [k for k in key if type(k) is not slice]
            if accumulate and arrays and all(k.ndim == 0 and k.dtype == xp.bool for k in arrays):
                # Only 0-d masks (``x[True]``'s gradient): no position twice, and no
                # ``nonzero`` of a 0-d array to give ufunc.at; read, add, write back.
                x[key] = x[key] + v
            elif accumulate:
                full: list[Any] = []
                for k in key:  # ufunc.at wants integer arrays: a mask becomes its nonzero()
                    full.extend(xp.nonzero(k) if getattr(k, "dtype", None) == xp.bool else (k,))
                add_at(x, tuple(full), v)  # type: ignore[misc]
            else:
                x[key] = v
        except IndexError as e:
            raise IndexError(f"index_put_(): {e}") from None
        except ValueError as e:
            raise RuntimeError(
                f"index_put_(): shape mismatch: value tensor of shape {list(v.shape)} cannot be "
                f"broadcast to the indexing result ({e})"
            ) from None
        return self

    def index_select(self: Any, dim: Any, index: Any) -> Any:
        _index_dtype(front, "index_select", index)
        x = self._array
        d = shape_rules.normalize_dim("index_select", dim, x.ndim)
        if index._array.ndim > 1:
            raise IndexError("index_select(): Index is supposed to be a vector")
        n = index._array.size
        shape = list(x.shape)
        if shape:
            shape[d] = n
        if meta:
            return make_meta(tuple(shape), self._dtype, self._device)
        idx = xp.reshape(index._array, (-1,))
        size = x.shape[d] if x.ndim else 1
        if idx.size:
            lo, hi = _extrema(xp, idx)
            if lo < -size or hi >= size:
                raise IndexError(
                    f"index_select(): index out of range in self (dim {d} has size {size})"
                )
        if x.ndim:
            out = xp.take(x, idx, axis=d)
        else:
            out = xp.reshape(xp.take(xp.reshape(x, (1,)), idx, axis=0), ())
        return make(out, self._dtype, self._device)

    def gather(self: Any, dim: Any, index: Any, *, sparse_grad: bool = False) -> Any:
        _index_dtype(front, "gather", index)
        d = _gather_shapes("gather", self, dim, index)
        if meta:
            return make_meta(tuple(index._array.shape), self._dtype, self._device)
        x, idx = self._array, index._array
        if x.ndim == 0 or idx.ndim == 0:
            _check_nonneg_range(xp, "gather", idx, x.shape[d] if x.ndim else 1, d)
            return make(copy(xp.reshape(x, idx.shape)), self._dtype, self._device)
        _check_nonneg_range(xp, "gather", idx, x.shape[d], d)
        key = tuple(slice(None) if i == d else slice(0, n) for i, n in enumerate(idx.shape))
        return make(xp.take_along_axis(x[key], idx, axis=d), self._dtype, self._device)

    def _scatter_key(x: Any, d: int, idx: Any) -> tuple[Any, ...]:
        # Open index grids by reshaping (meshgrid's ``sparse=`` is NumPy's, not the standard's).
        nd = idx.ndim
        grid: list[Any] = [
            xp.reshape(xp.arange(n), (1,) * i + (n,) + (1,) * (nd - i - 1))
            for i, n in enumerate(idx.shape)
        ]
        grid[d] = idx
        return tuple(grid)

    def _scatter(op: str, self: Any, dim: Any, index: Any, src: Any, reduce: Any) -> Any:
        _index_dtype(front, op, index)
        is_tensor = isinstance(src, tensor_type)
        d = _gather_shapes(op, self, dim, index, src if is_tensor else None)
        if reduce not in (None, "add", "multiply"):
            raise RuntimeError(
                f"{op}(): reduce argument must be either add or multiply, got {reduce!r}"
            )
        if is_tensor and src._dtype is not self._dtype:
            raise RuntimeError(
                f"{op}(): Expected self.dtype to be equal to src.dtype (self is "
                f"{self._dtype.name}, src is {src._dtype.name})"
            )
        if meta:
            return self
        x, idx = self._array, index._array
        if idx.size == 0:
            return self
        if x.ndim == 0:
            x, idx = xp.reshape(x, (1,)), xp.reshape(idx, (1,))
        _check_nonneg_range(xp, op, idx, x.shape[d], d)
        key = _scatter_key(x, d, idx)
        if is_tensor:
            s = src._array
            s = s[tuple(slice(0, n) for n in idx.shape)] if s.ndim else xp.reshape(s, (1,))
        else:
            s = retype(xp.asarray(src), x.dtype)
        if reduce == "add":
            add_at(x, key, s)  # type: ignore[misc]
        elif reduce == "multiply":
            multiply_at(x, key, s)  # type: ignore[misc]
        else:
            x[key] = s if is_tensor else xp.broadcast_to(s, idx.shape)
        return self

    def scatter_src(self: Any, dim: Any, index: Any, src: Any) -> Any:
        return _scatter("scatter_", self, dim, index, src, None)

    def scatter_reduce(self: Any, dim: Any, index: Any, src: Any, *, reduce: str) -> Any:
        return _scatter("scatter_", self, dim, index, src, reduce)

    def scatter_add_(self: Any, dim: Any, index: Any, src: Any) -> Any:
        return _scatter("scatter_add_", self, dim, index, src, "add")

    def masked_fill_(self: Any, mask: Any, value: Any) -> Any:
        if mask._dtype is not bool_:
            raise RuntimeError(
                f"masked_fill_(): masked_fill_ only supports boolean masks, but got mask with "
                f"dtype {mask._dtype.name} (argument 'mask')"
            )
        x = self._array
        shape = tuple(x.shape)
        if (
            shape_rules.broadcast_shapes(
                "masked_fill_", shape, tuple(mask._array.shape), ("self", "mask")
            )
            != shape
        ):
            raise RuntimeError(
                f"masked_fill_(): the mask of shape {list(mask._array.shape)} must broadcast to "
                f"self's shape {list(shape)} (argument 'mask')"
            )
        if isinstance(value, tensor_type):
            if value._array.ndim:
                raise RuntimeError(
                    f"masked_fill_(): masked_fill_ only supports a 0-dimensional value tensor, "
                    f"but got tensor with {value._array.ndim} dimension(s)."
                )
            if value._dtype.category > self._dtype.category:
                raise errors.cannot_cast("masked_fill_", value._dtype, self._dtype)
        else:
            check_fits("masked_fill_", value, self._dtype, "value")  # Note [Numbers that overflow]
        if meta:
            return self
        v = value._array if isinstance(value, tensor_type) else value
        v = retype(xp.asarray(v), x.dtype)
        if copyto is not None:
            copyto(x, v, where=mask._array)
        else:
            x[...] = xp.where(mask._array, v, x)
        return self

    def masked_select(self: Any, mask: Any) -> Any:
        if mask._dtype is not bool_:
            raise RuntimeError(
                f"masked_select(): masked_select: expected BoolTensor for mask, got "
                f"{mask._dtype.name} (argument 'mask')"
            )
        shape = shape_rules.broadcast_shapes(
            "masked_select", tuple(self._array.shape), tuple(mask._array.shape), ("self", "mask")
        )
        if meta:
            raise _data_dependent("masked_select")
        x, m = xp.broadcast_to(self._array, shape), xp.broadcast_to(mask._array, shape)
        return make(xp.reshape(x[m], (-1,)), self._dtype, self._device)

    def nonzero(self: Any) -> Any:
        if meta:
            raise _data_dependent("nonzero")
        x = self._array
        if x.ndim == 0:
            n = int(bool(x))
            out = xp.zeros((n, 0), dtype=xp.int64)
        else:
            out = ns.astype(xp.stack(xp.nonzero(x), axis=1), int64)
        return make(out, int64, self._device)

    def take_along_dim(self: Any, indices: Any, dim: Any = None) -> Any:
        if not isinstance(indices, tensor_type) or indices._dtype is not int64:
            got = (
                indices._dtype.name if isinstance(indices, tensor_type) else type(indices).__name__
            )
            raise RuntimeError(
                f"take_along_dim(): dtype of indices should be int64 but got {got} "
                f"(argument 'indices')"
            )
        x, idx = self._array, indices._array
        if dim is None:
            if meta:
                return make_meta((idx.size,), self._dtype, self._device)
            flat, fidx = xp.reshape(x, (-1,)), xp.reshape(idx, (-1,))
            _check_range(xp, "take_along_dim", fidx, flat.shape[0], 0)
            return make(xp.take(flat, fidx, axis=0), self._dtype, self._device)
        d = shape_rules.normalize_dim("take_along_dim", dim, x.ndim)
        if idx.ndim != x.ndim:
            raise RuntimeError(
                f"take_along_dim(): input and indices should have the same number of "
                f"dimensions, but got {x.ndim} dimensions for input, and {idx.ndim} dimensions "
                f"for indices"
            )
        xs = list(x.shape)
        ishape = list(idx.shape)
        xs[d] = ishape[d] = 1
        b = list(
            shape_rules.broadcast_shapes(
                "take_along_dim", tuple(xs), tuple(ishape), ("self", "indices")
            )
        )
        out_shape = list(b)
        out_shape[d] = idx.shape[d] if x.ndim else 1
        if meta:
            return make_meta(tuple(out_shape) if x.ndim else (), self._dtype, self._device)
        bx, bi = list(b), list(b)
        if x.ndim:
            bx[d], bi[d] = x.shape[d], idx.shape[d]
        ex, ei = xp.broadcast_to(x, tuple(bx)), xp.broadcast_to(idx, tuple(bi))
        _check_range(xp, "take_along_dim", ei, x.shape[d] if x.ndim else 1, d)
        if x.ndim == 0:
            return make(copy(x), self._dtype, self._device)
        return make(xp.take_along_axis(ex, ei, axis=d), self._dtype, self._device)

    def functional(inplace: Callable[..., Any]) -> Callable[..., Any]:
        def kernel(self: Any, *args: Any, **kwargs: Any) -> Any:
            return inplace(make(ns.copy(self._array), self._dtype, self._device), *args, **kwargs)

        kernel.__name__ = kernel.__qualname__ = inplace.__name__.rstrip("_")
        return kernel

    def masked_fill(self: Any, mask: Any, value: Any) -> Any:
        shape = shape_rules.broadcast_shapes(
            "masked_fill", tuple(self._array.shape), tuple(mask._array.shape), ("self", "mask")
        )
        x = self._array
        if meta:
            base = front.MetaArray(shape, x.dtype)
        else:
            base = copy(x) if tuple(x.shape) == shape else copy(xp.broadcast_to(x, shape))
        return masked_fill_(make(base, self._dtype, self._device), mask, value)

    return {
        "index.Tensor": index,
        "index_put_": index_put_,
        "index_put": functional(index_put_),
        "index_select": index_select,
        "gather": gather,
        "scatter_.src": scatter_src,
        "scatter_.value": scatter_src,
        "scatter_.reduce": scatter_reduce,
        "scatter_.value_reduce": scatter_reduce,
        "scatter.src": functional(scatter_src),
        "scatter.value": functional(scatter_src),
        "scatter.reduce": functional(scatter_reduce),
        "scatter.value_reduce": functional(scatter_reduce),
        "scatter_add_": scatter_add_,
        "scatter_add": functional(scatter_add_),
        "masked_fill_.Scalar": masked_fill_,
        "masked_fill_.Tensor": masked_fill_,
        "masked_fill.Scalar": masked_fill,
        "masked_fill.Tensor": masked_fill,
        "masked_select": masked_select,
        "nonzero": nonzero,
        "take_along_dim": take_along_dim,
    }

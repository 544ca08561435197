"""View operators (view, reshape, transpose, permute, expand, select, slice, diagonal,
unbind, split, squeeze, unsqueeze), written once for NumPy, CuPy and meta arrays.

Imports: ``backends.common``.

Every kernel checks its arguments with PyTorch's rules and messages, then asks
the array for a view: basic indexing (``x[:, 1:3]``, ``x[None]``) and
``x.transpose(axes)`` work alike on every array type; the rest (``reshape``
without a copy, ``broadcast_to``, a writeable ``diagonal``) comes from the
backend's ``fns`` table.  Results share memory with ``self``; the ADInplaceOrView
kernels (``tensor._inplace_or_view``) then record them as views.  Meta arrays
carry strides, so ``view`` of a meta tensor fails where it fails on the CPU.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import fastpaths, shape_rules
from .frontend import FrontEnd

__all__ = ["kernels", "strided_diagonal"]

_ALL = slice(None)


def _dim(op: str, dim: Any, ndim: int, arg: str = "dim") -> int:
    return shape_rules.normalize_dim(op, dim, ndim, arg)


def _key(dim: int, index: Any) -> tuple[Any, ...]:
    # The trailing Ellipsis keeps NumPy from turning an all-int index into a scalar.
    return (*(_ALL,) * dim, index, ...)


# Note [View fast path]
# ``x.view(b, -1)``, ``x.reshape(...)``, ``x.unsqueeze(0)`` on small tensors cost mostly
# argument checks: ``infer_size`` walks the sizes in Python, ``normalize_dim`` tests
# types.  A backend whose ``reshape`` validates a raw size itself (NumPy's: one -1 at
# most, the element count, ints only, bools refused) gives it as ``fns["reshape_raw"]``;
# the kernels hand it a list or tuple of sizes none below -1 (NumPy reads every
# negative size as "infer"; PyTorch refuses all but -1) and take the general path,
# with PyTorch's messages, whenever it raises.  ``unsqueeze`` wraps a plain int dim
# inline.  Results are the general path's: the same ``reshape`` call makes them.


def kernels(front: FrontEnd, fns: dict[str, Callable[..., Any]]) -> dict[str, Any]:
    """View kernels; ``fns``: ``reshape(x, shape, copy)``, ``broadcast_to(x, shape)``,
    ``diagonal(x, offset, axis1, axis2)`` (a writeable view) for the backend's arrays,
    and optionally ``reshape_raw`` (Note [View fast path])."""
    make, infer_size = front.make, front.infer_size
    reshape_fn, broadcast_to, diagonal_fn = fns["reshape"], fns["broadcast_to"], fns["diagonal"]
    reshape_raw = fns.get("reshape_raw")
    # The standard's ``permute_dims`` where the arrays have no ``transpose`` method.
    permute_dims = fns.get("permute_dims") or _transpose
    by_method = permute_dims is _transpose  # ``x.transpose(axes)`` inline on the fast path

    def _raw(x: Any, size: Any, copy: bool | None) -> Any:
        """``reshape_raw(x, size, copy)``, or None where the general path must decide."""
        if reshape_raw is None or not fastpaths.ENABLED or not isinstance(size, (list, tuple)):
            return None
        try:
            if min(size) < -1:
                return None
            return reshape_raw(x, size, copy)
        except (ValueError, TypeError, OverflowError):  # a bad count or type, a view needing a copy
            return None

    def view(self: Any, size: Any) -> Any:
        x = self._array
        # Note [View fast path]: ``_raw`` inline (view is the hot one), and not again below.
        if reshape_raw is not None and fastpaths.ENABLED and isinstance(size, (list, tuple)):
            try:
                if min(size) >= -1:
                    return make(reshape_raw(x, size, False), self._dtype, self._device)
            except (ValueError, TypeError, OverflowError):
                pass  # a bad count or type, a view needing a copy: the general path says
        shape = infer_size("view", size, x.size)
        try:
            out = reshape_fn(x, shape, False)
        except (ValueError, AttributeError):
            raise RuntimeError(
                f"view(): view size is not compatible with input tensor's size and stride (at "
                f"least one dimension spans across two contiguous subspaces); self has shape "
                f"{list(x.shape)} and strides {_list(_strides(x))}. Use .reshape(...) instead."
            ) from None
        return make(out, self._dtype, self._device)

    def reshape(self: Any, shape: Any) -> Any:
        x = self._array
        out = _raw(x, shape, None)
        if out is not None:  # Note [View fast path]
            return make(out, self._dtype, self._device)
        target = infer_size("reshape", shape, x.size)
        return make(reshape_fn(x, target, None), self._dtype, self._device)

    def transpose(self: Any, dim0: Any, dim1: Any) -> Any:
        x = self._array
        n = x.ndim
        if (  # a matrix's two dims: .T (autograd's mT)
            n == 2
            and fastpaths.ENABLED
            and type(dim0) is int
            and type(dim1) is int
            and -2 <= dim0 < 2
            and -2 <= dim1 < 2
            and (dim0 - dim1) % 2
        ):
            return make(x.T, self._dtype, self._device)
        a, b = _dim("transpose", dim0, n, "dim0"), _dim("transpose", dim1, n, "dim1")
        if n < 2 or a == b:
            return make(x[...], self._dtype, self._device)
        axes = list(range(n))
        axes[a], axes[b] = b, a
        return make(permute_dims(x, axes), self._dtype, self._device)

    def t(self: Any) -> Any:
        x = self._array
        n = x.ndim
        if n == 2 and fastpaths.ENABLED:  # transpose's matrix case, without its frame
            return make(x.T, self._dtype, self._device)
        if n > 2:
            raise RuntimeError(
                f"t(): t() expects a tensor with <= 2 dimensions, but self is {n}D; use "
                f"transpose(dim0, dim1) or .mT for batches of matrices"
            )
        return transpose(self, 0, 1 if n == 2 else 0)

    t.plain_transpose = True  # type: ignore[attr-defined]  (linear's autocast fast path)

    def permute(self: Any, dims: Any) -> Any:
        x = self._array
        n = x.ndim
        if type(dims) is list and len(dims) == n and fastpaths.ENABLED:
            # Note [View fast path]: a list of non-negative ints, each below the rank and
            # none twice (``x.T``'s reversed dims): already the general path's axes.
            seen = 0
            for d in dims:
                if type(d) is not int or not 0 <= d < n or seen >> d & 1:
                    break
                seen |= 1 << d
            else:
                if n < 2:
                    out = x[...]
                else:
                    out = x.transpose(dims) if by_method else permute_dims(x, dims)
                return make(out, self._dtype, self._device)
        dims = list(dims)
        if len(dims) != x.ndim:
            raise RuntimeError(
                f"permute(): number of dimensions in the tensor input does not match the "
                f"length of the desired ordering of dimensions i.e. input.dim() = {x.ndim} is "
                f"not equal to len(dims) = {len(dims)}"
            )
        axes = [_dim("permute", d, x.ndim, "dims") for d in dims]
        if len(set(axes)) != len(axes):
            raise RuntimeError(f"permute(): repeated dim in permute (argument 'dims' is {dims})")
        out = permute_dims(x, axes) if x.ndim > 1 else x[...]
        return make(out, self._dtype, self._device)

    def expand(self: Any, size: Any, *, implicit: bool = False) -> Any:
        x = self._array
        size = [int(s) for s in size]
        shape = tuple(x.shape)
        if len(size) < len(shape):
            raise RuntimeError(
                f"expand(): the number of sizes provided ({len(size)}) must be greater or equal "
                f"to the number of dimensions in the tensor ({len(shape)}) (argument 'size' is "
                f"{size}, self has shape {list(shape)})"
            )
        lead = len(size) - len(shape)
        target = []
        for i, s in enumerate(size):
            if i < lead:
                if s < 0:
                    raise RuntimeError(
                        f"expand(): The expanded size of the tensor ({s}) isn't allowed in a "
                        f"leading, non-existing dimension {i}"
                    )
                target.append(s)
                continue
            have = shape[i - lead]
            if s == -1:
                s = have
            elif have != s and have != 1:
                raise RuntimeError(
                    f"expand(): The expanded size of the tensor ({s}) must match the existing "
                    f"size ({have}) at non-singleton dimension {i}.  Target sizes: {size}.  "
                    f"Tensor sizes: {list(shape)}"
                )
            elif s < 0:
                raise RuntimeError(f"expand(): invalid size {s} at dimension {i} (argument 'size')")
            target.append(s)
        return make(broadcast_to(x, tuple(target)), self._dtype, self._device)

    def select(self: Any, dim: Any, index: Any) -> Any:
        x = self._array
        if x.ndim == 0:
            raise IndexError("select(): select() cannot be applied to a 0-dim tensor.")
        nd = x.ndim
        # ``_dim`` and ``_key`` inline for a plain int dim (``x[0]``: dim 0), the common case.
        d = dim % nd if type(dim) is int and -nd <= dim < nd else _dim("select", dim, nd)
        size = x.shape[d]
        i = index if type(index) is int else index.__index__()
        if not -size <= i < size:
            raise IndexError(
                f"select(): index {i} out of range for tensor of size {list(x.shape)} at "
                f"dimension {d}"
            )
        key = (i % size, ...) if d == 0 else _key(d, i % size)
        return make(x[key], self._dtype, self._device)

    def slice_(self: Any, dim: Any = 0, start: Any = None, end: Any = None, step: Any = 1) -> Any:
        x = self._array
        if x.ndim == 0:
            raise IndexError("slice(): slice() cannot be applied to a 0-dim tensor.")
        nd = x.ndim
        d = dim % nd if type(dim) is int and -nd <= dim < nd else _dim("slice", dim, nd)
        if step <= 0:
            raise ValueError(f"slice(): step must be greater than zero, got step={step}")
        try:
            out = x[(slice(start, end, step), ...) if d == 0 else _key(d, slice(start, end, step))]
        except IndexError:  # the standard's slices stay in range: the same slice, clamped
            out = x[_key(d, slice(*slice(start, end, step).indices(x.shape[d])))]
        return make(out, self._dtype, self._device)

    def diagonal(self: Any, offset: Any = 0, dim1: Any = 0, dim2: Any = 1) -> Any:
        x = self._array
        a, b = _dim("diagonal", dim1, x.ndim, "dim1"), _dim("diagonal", dim2, x.ndim, "dim2")
        if a == b:
            raise RuntimeError(
                f"diagonal(): diagonal dimensions cannot be identical {dim1}, {dim2}"
            )
        return make(diagonal_fn(x, int(offset), a, b), self._dtype, self._device)

    def unbind(self: Any, dim: Any = 0) -> Any:
        x = self._array
        if x.ndim == 0:
            raise IndexError("unbind(): Dimension specified as 0 but tensor has no dimensions")
        d = _dim("unbind", dim, x.ndim)
        dt, dev = self._dtype, self._device
        return tuple(make(x[_key(d, i)], dt, dev) for i in range(x.shape[d]))

    def _pieces(self: Any, d: int, sizes: list[int]) -> tuple[Any, ...]:
        x = self._array
        dt, dev = self._dtype, self._device
        out = []
        start = 0
        for n in sizes:
            out.append(make(x[_key(d, slice(start, start + n))], dt, dev))
            start += n
        return tuple(out)

    def split(self: Any, split_size: Any, dim: Any = 0) -> Any:
        x = self._array
        if x.ndim == 0:
            raise RuntimeError("split(): split expects at least a 1-dimensional tensor")
        d = _dim("split", dim, x.ndim)
        n = int(split_size)
        size = x.shape[d]
        if n < 0 or (n == 0 and size != 0):
            raise RuntimeError(
                f"split(): split_size can only be 0 if dimension size is 0, but got dimension "
                f"size of {size}"
                if n == 0
                else f"split(): split expects split_size be non-negative, but got split_size={n}"
            )
        if n == 0:
            return _pieces(self, d, [0])
        sizes = [n] * (size // n) + ([size % n] if size % n else [])
        return _pieces(self, d, sizes or [0])

    def split_with_sizes(self: Any, split_sizes: Any, dim: Any = 0) -> Any:
        x = self._array
        if x.ndim == 0:
            raise RuntimeError("split_with_sizes(): expects at least a 1-dimensional tensor")
        d = _dim("split_with_sizes", dim, x.ndim)
        sizes = [int(s) for s in split_sizes]
        if any(s < 0 for s in sizes) or sum(sizes) != x.shape[d]:
            raise RuntimeError(
                f"split_with_sizes(): split_with_sizes expects split_sizes to sum exactly to "
                f"{x.shape[d]} (input tensor's size at dimension {d}), but got "
                f"split_sizes={sizes}"
            )
        return _pieces(self, d, sizes)

    def squeeze(self: Any) -> Any:
        x = self._array
        key = (*(0 if n == 1 else _ALL for n in x.shape), ...)
        return make(x[key], self._dtype, self._device)

    def squeeze_dims(self: Any, dim: Any) -> Any:
        x = self._array
        dims = [dim] if isinstance(dim, int) else list(dim)
        wrapped = {_dim("squeeze", d, x.ndim) for d in dims}
        if x.ndim == 0:
            return make(x[...], self._dtype, self._device)
        key = (*(0 if i in wrapped and n == 1 else _ALL for i, n in enumerate(x.shape)), ...)
        return make(x[key], self._dtype, self._device)

    def unsqueeze(self: Any, dim: Any) -> Any:
        x = self._array
        n = x.ndim + 1
        if type(dim) is int and -n <= dim < n and fastpaths.ENABLED:  # Note [View fast path]
            d = dim % n
        else:
            d = _dim("unsqueeze", dim, n)
        shape = (*x.shape[:d], 1, *x.shape[d:])  # a reshape gives the new dim PyTorch's stride
        return make(reshape_fn(x, shape, False), self._dtype, self._device)

    return {
        "view": view,
        "reshape": reshape,
        "transpose.int": transpose,
        "t": t,
        "permute": permute,
        "expand": expand,
        "select.int": select,
        "slice.Tensor": slice_,
        "diagonal": diagonal,
        "unbind.int": unbind,
        "split.Tensor": split,
        "split_with_sizes": split_with_sizes,
        "squeeze": squeeze,
        "squeeze.dim": squeeze_dims,
        "squeeze.dims": squeeze_dims,
        "unsqueeze": unsqueeze,
    }


def _transpose(x: Any, axes: Any) -> Any:
    return x.transpose(axes)


def _strides(x: Any) -> tuple[int, ...] | str:
    item = getattr(x.dtype, "itemsize", None)
    strides = getattr(x, "strides", None)
    if item is None or strides is None:  # the standard's arrays have no strides
        return "unknown"
    return tuple(s // item for s in strides)


def _list(strides: Any) -> Any:
    return list(strides) if isinstance(strides, tuple) else strides


def strided_diagonal(as_strided: Callable[..., Any]) -> Callable[..., Any]:
    """``diagonal(x, offset, axis1, axis2)`` as a writeable view, made with ``as_strided``.

    NumPy's and CuPy's ``diagonal`` give read-only views or copies; PyTorch's diagonal
    can be written through, so the view is built from the strides directly.
    """

    def diagonal(x: Any, offset: int, a: int, b: int) -> Any:
        n1, n2 = x.shape[a], x.shape[b]
        r0, c0 = (0, offset) if offset >= 0 else (-offset, 0)
        n = max(0, min(n1 - r0, n2 - c0))
        key = [slice(None)] * x.ndim
        key[a], key[b] = slice(min(r0, n1), None), slice(min(c0, n2), None)
        start = x[tuple(key)]
        keep = [d for d in range(x.ndim) if d not in (a, b)]
        shape = (*(x.shape[d] for d in keep), n)
        strides = (*(x.strides[d] for d in keep), x.strides[a] + x.strides[b])
        return as_strided(start, shape, strides)

    return diagonal

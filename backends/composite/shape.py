"""CompositeImplicitAutograd kernels of shape operators written with other operators.

Imports: ``dispatch``.

As in ATen, these have no backend kernels and no derivative formulas of their
own: ``t`` is ``transpose``, ``narrow`` is ``slice``, ``chunk`` is ``split``,
``flatten`` is ``reshape``, ``unflatten`` is ``view``, ``broadcast_to`` and
``expand_as`` are ``expand``, ``tile`` is ``repeat``, ``contiguous`` and ``clone``
are ``_to_copy`` when a copy is needed.  ``register(lib)`` adds them to the
``backends.composite`` library.
"""

from __future__ import annotations

from typing import Any

from dispatch import Library, ops

__all__ = ["KERNELS", "register"]

core = ops.core


def _dim(op: str, dim: int, ndim: int, arg: str = "dim") -> int:
    size = ndim if ndim else 1
    if not -size <= dim < size:
        lo, hi = -size, size - 1
        raise IndexError(
            f"{op}(): Dimension out of range (expected to be in range of [{lo}, {hi}], but got "
            f"{dim}) for argument '{arg}'"
        )
    return dim % size


def narrow(self: Any, dim: int, start: int, length: int) -> Any:
    if self.ndim == 0:
        raise RuntimeError("narrow(): narrow() cannot be applied to a 0-dim tensor.")
    d = _dim("narrow", dim, self.ndim)
    size = self.shape[d]
    if not -size <= start <= size:
        raise IndexError(
            f"narrow(): start out of range (expected to be in range of [{-size}, {size}], but "
            f"got {start})"
        )
    if start < 0:
        start += size
    if length < 0 or start + length > size:
        raise RuntimeError(
            f"narrow(): start ({start}) + length ({length}) exceeds dimension size ({size})."
        )
    return core.slice.Tensor(self, d, start, start + length)  # type: ignore[no-any-return]


def chunk(self: Any, chunks: int, dim: int = 0) -> Any:
    x = self._array
    n = x.ndim
    if n == 0:
        raise RuntimeError("chunk(): chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk(): chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = dim % n if type(dim) is int and -n <= dim < n else _dim("chunk", dim, n)
    size = x.shape[d]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:
        return core.split_with_sizes(self, [0] * chunks, d)
    # The overload's fixed-arity entry (``split.Tensor(x, 2, 0)``), not the checker's call.
    return core.split.Tensor.call3(self, split_size, d)


def flatten(self: Any, start_dim: int = 0, end_dim: int = -1) -> Any:
    x = self._array
    n = x.ndim
    if n == 0:
        return core.reshape(self, [1])  # type: ignore[no-any-return]
    # ``_dim`` inline for plain ints in range (the defaults 0 and -1).
    if (
        type(start_dim) is int
        and -n <= start_dim < n
        and type(end_dim) is int
        and -n <= end_dim < n
    ):
        a, b = start_dim % n, end_dim % n
    else:
        a, b = _dim("flatten", start_dim, n, "start_dim"), _dim("flatten", end_dim, n, "end_dim")
    if a > b:
        raise RuntimeError(
            "flatten(): flatten() has invalid args: start_dim cannot come after end_dim"
        )
    if a == b:
        return self
    shape = list(x.shape)
    # The flattened size itself, not -1: -1 is ambiguous when another dim is 0 (PyTorch
    # flattens a [0, 3, 4] tensor from dim 1 to [0, 12]).
    size = 1
    for n in shape[a : b + 1]:
        size *= n
    # The overload's int-list entry, not the packet's overload resolution (3.4 -> ~1.9 us
    # for a [4, 8] tensor's flatten()).
    return core.reshape.default.call2(self, [*shape[:a], size, *shape[b + 1 :]])  # type: ignore[no-any-return]


def unflatten(self: Any, dim: int, sizes: Any) -> Any:
    d = _dim("unflatten", dim, self.ndim)
    sizes = [int(s) for s in sizes]
    if not sizes:
        raise RuntimeError("unflatten(): sizes must be non-empty")
    size = self.shape[d]
    known = 1
    for s in sizes:
        known *= s if s != -1 else 1
    inferred = sizes.count(-1) == 1 and known and size % known == 0
    if sizes.count(-1) > 1 or (not inferred and known != size):
        raise RuntimeError(
            f"unflatten(): Provided sizes {sizes} don't multiply up to the size of dim {dim} "
            f"({size}) in the input tensor"
        )
    shape = list(self.shape)
    return core.view(self, [*shape[:d], *sizes, *shape[d + 1 :]])  # type: ignore[no-any-return]


def broadcast_to(self: Any, size: Any) -> Any:
    return core.expand(self, list(size))  # type: ignore[no-any-return]


def expand_as(self: Any, other: Any) -> Any:
    return core.expand(self, list(other.shape))  # type: ignore[no-any-return]


def view_as(self: Any, other: Any) -> Any:
    return core.view(self, list(other.shape))  # type: ignore[no-any-return]


def reshape_as(self: Any, other: Any) -> Any:
    return core.reshape(self, list(other.shape))  # type: ignore[no-any-return]


def contiguous(self: Any, *, memory_format: Any = "contiguous_format") -> Any:
    # A plug-in device's arrays may have no strides (dask, array_api_strict): row-major.
    flags = getattr(self._array, "flags", None)
    if memory_format == "contiguous_format" and (flags is None or flags.c_contiguous):
        return self
    # PyTorch's: a clone in that layout (Note [Copies keep the layout] in backends/composite).
    return core.clone.default(self, memory_format=memory_format)  # type: ignore[no-any-return]


def tile(self: Any, dims: Any) -> Any:
    dims = [int(d) for d in dims]
    if len(dims) < self.ndim:  # tile pads the repetitions with leading ones
        dims = [1] * (self.ndim - len(dims)) + dims
    return core.repeat(self, dims)  # type: ignore[no-any-return]


KERNELS: dict[str, Any] = {
    "narrow": narrow,
    "chunk": chunk,
    "flatten.using_ints": flatten,
    "unflatten.int": unflatten,
    "broadcast_to": broadcast_to,
    "expand_as": expand_as,
    "view_as": view_as,
    "reshape_as": reshape_as,
    "contiguous": contiguous,
    "tile": tile,
}


def register(lib: Library) -> None:
    """Register the kernels above at CompositeImplicitAutograd."""
    for qualname, kernel in KERNELS.items():
        lib.impl(qualname, kernel, "CompositeImplicitAutograd")

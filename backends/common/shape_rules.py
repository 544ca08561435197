"""Shape rules shared by every backend: broadcasting, dims of reductions, matrix products.

Imports: ``backends.common.errors`` only.  Pure functions of shapes (tuples of
ints): Meta kernels compute output shapes with them, and data kernels call them
to raise PyTorch's errors before NumPy raises its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import errors

__all__ = [
    "broadcast_shapes",
    "einsum_shape",
    "linalg_shape",
    "normalize_dim",
    "normalize_dims",
    "reduced_shape",
    "tensordot_shape",
]

Shape = tuple[int, ...]


def broadcast_shapes(
    op: str, a: Shape, b: Shape, names: tuple[str, str] = ("self", "other")
) -> Shape:
    """The broadcast of two shapes; PyTorch's message naming both arguments if impossible."""
    if a == b:
        return a
    n = max(len(a), len(b))
    out = []
    for i in range(n):  # from the right
        da = a[len(a) - 1 - i] if i < len(a) else 1
        db = b[len(b) - 1 - i] if i < len(b) else 1
        if da == db or db == 1:
            out.append(da)
        elif da == 1:
            out.append(db)
        else:
            raise errors.broadcast(op, (a, b), i, names)
    return tuple(reversed(out))


def broadcast_all(op: str, named: Sequence[tuple[str, Shape]]) -> Shape:
    """Broadcast several named shapes (``where``, ``lerp``, ``clamp``)."""
    name, shape = named[0]
    for other_name, other in named[1:]:
        shape = broadcast_shapes(op, shape, other, (name, other_name))
        name = other_name
    return shape


def normalize_dim(op: str, dim: Any, ndim: int, arg: str = "dim") -> int:
    """``dim`` wrapped into ``range(ndim)`` (a 0-d tensor accepts 0 and -1)."""
    if isinstance(dim, bool) or not isinstance(dim, int):
        if hasattr(dim, "__index__") and not isinstance(dim, bool):
            dim = dim.__index__()
        else:
            raise TypeError(f"{op}(): argument '{arg}' must be an int, not {type(dim).__name__}")
    size = ndim if ndim else 1
    if not -size <= dim < size:
        raise errors.dim_out_of_range(op, dim, ndim, arg)
    return dim % size


def normalize_dims(op: str, dim: Any, ndim: int, arg: str = "dim") -> tuple[int, ...] | None:
    """Reduction dims: None (or an empty list) means all; an int or a sequence of ints.

    Returns sorted, wrapped dims, or None for "every dimension"; repeated dims raise.
    """
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if not dim:
            return None
        out = []
        for d in dim:
            n = normalize_dim(op, d, ndim, arg)
            if n in out:
                raise RuntimeError(f"{op}(): dim {n} appears multiple times in the list of dims")
            out.append(n)
        return tuple(sorted(out))
    return (normalize_dim(op, dim, ndim, arg),)


def reduced_shape(shape: Shape, dims: tuple[int, ...] | None, keepdim: bool) -> Shape:
    """The shape after reducing ``dims`` (None: all) with or without keeping them as 1."""
    if not shape:
        return ()
    if dims is None:
        return (1,) * len(shape) if keepdim else ()
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def _mat(shape: Shape) -> str:
    return "x".join(str(s) for s in shape)


def linalg_shape(op: str, a: Shape, b: Shape) -> Shape:
    """Result shape of ``matmul``/``mm``/``bmm``/``dot``/``vdot``/``outer`` (PyTorch's checks)."""
    if op == "mm":
        if len(a) != 2:
            raise errors.shape_mismatch(op, f"self must be a matrix (got a {len(a)}-D tensor)")
        if len(b) != 2:
            raise errors.shape_mismatch(op, f"mat2 must be a matrix (got a {len(b)}-D tensor)")
        if a[1] != b[0]:
            raise errors.shape_mismatch(
                op, f"mat1 and mat2 shapes cannot be multiplied ({_mat(a)} and {_mat(b)})"
            )
        return (a[0], b[1])
    if op == "bmm":
        if len(a) != 3:
            raise errors.shape_mismatch(op, f"batch1 must be a 3D tensor (got {len(a)}-D)")
        if len(b) != 3:
            raise errors.shape_mismatch(op, f"batch2 must be a 3D tensor (got {len(b)}-D)")
        if b[0] != a[0] or b[1] != a[2]:
            raise errors.shape_mismatch(
                op,
                f"Expected size for first two dimensions of batch2 tensor to be: "
                f"[{a[0]}, {a[2]}] but got: [{b[0]}, {b[1]}].",
            )
        return (a[0], a[1], b[2])
    if op in ("dot", "vdot"):
        if len(a) != 1 or len(b) != 1:
            raise errors.shape_mismatch(
                op, f"1D tensors expected, but got {len(a)}D and {len(b)}D tensors"
            )
        if a[0] != b[0]:
            raise errors.shape_mismatch(
                op,
                f"inconsistent tensor size, expected tensor [{a[0]}] and src [{b[0]}] to have "
                f"the same number of elements, but got {a[0]} and {b[0]} elements respectively",
            )
        return ()
    if op == "outer":
        if len(a) != 1 or len(b) != 1:
            raise errors.shape_mismatch(
                op, f"1D tensors expected, but got {len(a)}D and {len(b)}D tensors"
            )
        return (a[0], b[0])
    return _matmul_shape(op, a, b)


def _matmul_shape(op: str, a: Shape, b: Shape) -> Shape:
    if not a or not b:
        raise errors.shape_mismatch(
            op,
            f"both arguments to matmul need to be at least 1D, but they are {len(a)}D and "
            f"{len(b)}D",
        )
    if len(a) == 1 and len(b) == 1:
        return linalg_shape("dot", a, b)
    a2 = (1, a[0]) if len(a) == 1 else a
    b2 = (b[0], 1) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        shown_a = _mat(a2[-2:]) if len(a) > 1 else _mat((1, a[0]))
        raise errors.shape_mismatch(
            op,
            f"mat1 and mat2 shapes cannot be multiplied ({shown_a} and {_mat(b2[-2:])})"
            if len(a) <= 2 and len(b) <= 2
            else f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[..., {a2[-1]}] but got: [..., {b2[-2]}] (self has shape {list(a)}, other has "
            f"shape {list(b)})",
        )
    batch = broadcast_shapes(op, a2[:-2], b2[:-2])
    out = (*batch, a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


def einsum_shape(op: str, equation: str, shapes: Sequence[Shape]) -> Shape:
    """Result shape of an einsum (explicit ``->`` or implicit output; ``...`` supported)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise RuntimeError(
            f"{op}(): more operands were provided than specified in the equation"
            if len(shapes) > len(terms)
            else f"{op}(): fewer operands were provided than specified in the equation"
        )
    sizes: dict[str, int] = {}
    ell: Shape = ()
    counts: dict[str, int] = {}
    for i, (term, shape) in enumerate(zip(terms, shapes, strict=True)):
        labels = term.replace("...", ".")
        n_ell = len(shape) - (len(labels) - ("." in labels))
        if ("." not in labels and len(labels) != len(shape)) or n_ell < 0:
            raise RuntimeError(
                f"{op}(): the number of subscripts in the equation ({len(labels)}) does not "
                f"match the number of dimensions ({len(shape)}) for operand {i}"
                + ("" if "." in labels else " and no ellipsis was given")
            )
        pos = 0
        for ch in labels:
            if ch == ".":
                ell = broadcast_shapes(op, ell, tuple(shape[pos : pos + n_ell]), ("...", "..."))
                pos += n_ell
                continue
            if not ch.isalpha():
                raise RuntimeError(
                    f"{op}(): invalid subscript given at index {pos} in the equation"
                )
            size = shape[pos]
            prev = sizes.get(ch)
            if prev is not None and prev != size and 1 not in (prev, size):
                raise RuntimeError(
                    f"{op}(): operands do not broadcast with remapped shapes (original->remapped): "
                    f"subscript '{ch}' has size {prev} and {size}"
                )
            sizes[ch] = size if prev is None or prev == 1 else prev
            counts[ch] = counts.get(ch, 0) + 1
            pos += 1
    if arrow:
        out_labels = rhs.replace("...", ".")
    else:
        out_labels = ("." if "..." in lhs else "") + "".join(
            sorted(c for c, n in counts.items() if n == 1)
        )
    out: list[int] = []
    for ch in out_labels:
        if ch == ".":
            out.extend(ell)
        elif ch not in sizes:
            raise RuntimeError(
                f"{op}(): output subscript {ch} does not appear in the equation for any input operand"
            )
        else:
            out.append(sizes[ch])
    return tuple(out)


def tensordot_shape(
    op: str, a: Shape, b: Shape, dims_a: Sequence[int], dims_b: Sequence[int]
) -> Shape:
    if len(dims_a) != len(dims_b):
        raise RuntimeError(f"{op}(): both dimension lists should have same length")
    da = [normalize_dim(op, d, len(a), "dims_self") for d in dims_a]
    db = [normalize_dim(op, d, len(b), "dims_other") for d in dims_b]
    for x, y in zip(da, db, strict=True):
        if a[x] != b[y]:
            raise RuntimeError(
                f"{op}(): contracted dimensions need to match, but first has size {a[x]} in dim "
                f"{x} and second has size {b[y]} in dim {y}"
            )
    return tuple(s for i, s in enumerate(a) if i not in da) + tuple(
        s for i, s in enumerate(b) if i not in db
    )

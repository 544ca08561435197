"""Python wrappers of the shape operators whose PyTorch signatures are irregular.

Imports: ``tensor``'s ``_convert``, ``_indexing``, ``_meta_array``, ``_definitions``, ``_tensor``,
``return_types``.

Methods take sizes as varargs or one sequence (``x.view(2, 3)``, ``x.view((2, 3))``);
``split`` takes an int or a list of sizes (two overloads); ``squeeze`` takes no
dim, an int or a tuple; ``sort``/``argsort`` take ``stable=``; ``nonzero`` takes
``as_tuple=``; ``unique`` returns a tensor or a tuple depending on its flags.
``tensor._wrappers`` merges ``WRAPPERS``/``METHOD_WRAPPERS`` into its own tables;
the operator table names each wrapper in its ``py`` field.  ``TENSOR_ATTRS`` are
the layout accessors (``stride()``, ``storage_offset()``, ``is_contiguous()``,
``data_ptr()``), ``T``/``mT`` and indexing, set on the Tensor class by
``tensor._generated.install``.
"""

from __future__ import annotations

import warnings
from typing import Any

from backends.common import fastpaths
from dispatch import ops

from . import _convert, _definitions, _indexing, optable, return_types
from ._meta_array import MetaArray
from ._tensor import Tensor

__all__ = ["METHOD_WRAPPERS", "TENSOR_ATTRS", "WRAPPERS"]


# The first overload of a row, by name, once looked up (the method wrappers below read it
# on every call: ``x.view(4, 4)``).
_FIRST: dict[str, Any] = {}
_OTHERS: dict[tuple[str, int], Any] = {}


def _ov(name: str, index: int = 0) -> Any:
    if index:
        ov = _OTHERS.get((name, index))
        if ov is None:
            ov = _OTHERS[name, index] = _definitions.overloads(name)[index]
        return ov
    ov = _FIRST.get(name)
    if ov is None:
        ov = _FIRST[name] = _definitions.overloads(name)[0]
    return ov


def out_ov(name: str, index: int = 0) -> Any:
    """The out= overload made from a row's ``index``-th overload (``max.other_out``)."""
    schemas = _definitions.schemas(name)
    names = {s.overload_name for s in schemas}
    overload = optable.out_overload(schemas[index].overload_name, names)
    return getattr(getattr(ops.core, schemas[index].name), overload)


def pair(name: str, out: Any) -> tuple[Any, Any]:
    """``out=(values, indices)``: PyTorch's out= of an operator with two results."""
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(
            f"{name}(): out must be a tuple of two tensors (values, indices), got "
            f"{type(out).__name__}"
        )
    return out[0], out[1]


def _sizes(args: tuple[Any, ...], op: str, arg: str = "size") -> list[Any]:
    """Varargs or one sequence of ints, as PyTorch's size-taking methods accept."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    for n in args:  # plain ints, the common case: the list as it is
        if type(n) is not int:
            break
    else:
        return list(args)
    for i, n in enumerate(args):
        if isinstance(n, bool) or not hasattr(n, "__index__"):
            raise TypeError(
                f"{op}(): argument '{arg}' must be a sequence of ints, but element {i} is "
                f"{type(n).__name__} ({n!r})"
            )
    return [n.__index__() for n in args]


def _varargs(args: tuple[Any, ...], kwargs: dict[str, Any], op: str, arg: str) -> tuple[Any, ...]:
    """A method's sizes as varargs, or as one sequence by keyword (``x.flip(dims=(0,))``)."""
    if not kwargs:
        return args
    if args or set(kwargs) != {arg}:
        raise TypeError(
            f"{op}(): takes its {arg} as varargs or as {arg}=<sequence>, got {len(args)} "
            f"positional arguments and keywords {sorted(kwargs)}"
        )
    return (kwargs[arg],)


def view(self: Tensor, *shape: Any, **kw: Any) -> Tensor:
    """``x.view(*shape)``: the same data seen with another shape (no copy; may raise)."""
    sizes = _sizes(_varargs(shape, kw, "view", "size") if kw else shape, "view")
    return (_FIRST.get("view") or _ov("view")).call2(self, sizes)  # type: ignore[no-any-return]


def reshape(input: Tensor, shape: Any) -> Tensor:
    """``tt.reshape(input, shape)``: a view when the layout allows, else a copy."""
    return _ov("reshape").call2(input, _sizes((shape,), "reshape", "shape"))  # type: ignore[no-any-return]


def _reshape_method(self: Tensor, *shape: Any, **kw: Any) -> Tensor:
    sizes = _sizes(_varargs(shape, kw, "reshape", "shape") if kw else shape, "reshape", "shape")
    return (_FIRST.get("reshape") or _ov("reshape")).call2(self, sizes)  # type: ignore[no-any-return]


def permute(input: Tensor, dims: Any) -> Tensor:
    """``tt.permute(input, dims)``: the dims reordered (a view)."""
    return _ov("permute").call2(input, _sizes((dims,), "permute", "dims"))  # type: ignore[no-any-return]


def _permute_method(self: Tensor, *dims: Any, **kw: Any) -> Tensor:
    if not dims and not kw:  # PyTorch's: the dims are required, even for a 0-d tensor
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
    order = _sizes(_varargs(dims, kw, "permute", "dims") if kw else dims, "permute", "dims")
    return (_FIRST.get("permute") or _ov("permute")).call2(self, order)  # type: ignore[no-any-return]


def expand(self: Tensor, *sizes: Any, **kw: Any) -> Tensor:
    """``x.expand(*sizes)``: size-1 dims repeated without copying (-1 keeps a size)."""
    size = _sizes(_varargs(sizes, kw, "expand", "size") if kw else sizes, "expand")
    return (_FIRST.get("expand") or _ov("expand")).call2(self, size)  # type: ignore[no-any-return]


def repeat(self: Tensor, *sizes: Any, **kw: Any) -> Tensor:
    """``x.repeat(*sizes)``: the data tiled ``sizes`` times along each dim (a copy)."""
    repeats = _sizes(_varargs(sizes, kw, "repeat", "repeats"), "repeat", "repeats")
    return _ov("repeat")(self, repeats)  # type: ignore[no-any-return]


def tile(input: Tensor, dims: Any) -> Tensor:
    """``tt.tile(input, dims)``: ``repeat`` with missing leading repetitions taken as 1."""
    return _ov("tile")(input, _sizes((dims,), "tile", "dims"))  # type: ignore[no-any-return]


def _tile_method(self: Tensor, *dims: Any, **kw: Any) -> Tensor:
    reps = _sizes(_varargs(dims, kw, "tile", "dims"), "tile", "dims")
    return _ov("tile")(self, reps)  # type: ignore[no-any-return]


def flip(input: Tensor, dims: Any) -> Tensor:
    """``tt.flip(input, dims)``: the order of elements reversed along ``dims`` (a copy)."""
    return _ov("flip")(input, _sizes((dims,), "flip", "dims"))  # type: ignore[no-any-return]


def _flip_method(self: Tensor, *dims: Any, **kw: Any) -> Tensor:
    flipped = _sizes(_varargs(dims, kw, "flip", "dims"), "flip", "dims")
    return _ov("flip")(self, flipped)  # type: ignore[no-any-return]


def split(tensor: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Views of equal pieces of ``split_size`` along ``dim`` (the last smaller), or of the
    given section sizes.

    >>> import tensor as tt
    >>> [p.tolist() for p in tt.split(tt.arange(5), 2)]
    [[0, 1], [2, 3], [4]]
    """
    if isinstance(split_size_or_sections, (list, tuple)):
        return tuple(_ov("split_with_sizes")(tensor, list(split_size_or_sections), dim))
    return tuple(_ov("split")(tensor, split_size_or_sections, dim))


def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    """Dims of size 1 removed: all of them, or those of ``dim`` (an int or a tuple)."""
    if dim is None:
        return _ov("squeeze", 0).call1(input)  # type: ignore[no-any-return]
    if isinstance(dim, (list, tuple)):
        return _ov("squeeze", 2)(input, list(dim))  # type: ignore[no-any-return]
    return _ov("squeeze", 1).call2(input, dim)  # type: ignore[no-any-return]


def scatter(
    input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
    reduce: str | None = None, out: Any = None,
) -> Tensor:  # fmt: skip
    """``src`` (a tensor) or ``value`` (a number) written at ``index`` along ``dim``."""
    return _scatter(0, input, dim, index, src, value, reduce, out)


def _scatter_inplace(
    self: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
    reduce: str | None = None,
) -> Tensor:  # fmt: skip
    return _scatter(1, self, dim, index, src, value, reduce)


def _scatter(
    inplace: int, x: Tensor, dim: int, index: Tensor, src: Any, value: Any, reduce: Any,
    out: Any = None,
) -> Tensor:  # fmt: skip
    name = "scatter_" if inplace else "scatter"
    if src is None:
        if value is None:
            raise TypeError(f"{name}(): pass src (a tensor) or value (a number)")
        src = value
    which = (0 if isinstance(src, Tensor) else 1) + (0 if reduce is None else 2)
    kwargs: dict[str, Any] = {} if reduce is None else {"reduce": reduce}
    if out is not None:
        kwargs["out"] = out
        return out_ov(name, which)(x, dim, index, src, **kwargs)  # type: ignore[no-any-return]
    return _ov(name, which)(x, dim, index, src, **kwargs)  # type: ignore[no-any-return]


def nonzero(input: Tensor, *, out: Any = None, as_tuple: bool = False) -> Any:
    """Indices of the non-zero elements: an (n, ndim) tensor, or one 1-D tensor per dim."""
    if out is not None and not as_tuple:
        return out_ov("nonzero")(input, out=out)
    out = _ov("nonzero")(input)
    if not as_tuple:
        return out
    if input.ndim == 0:  # PyTorch treats a 0-d tensor as a one-element vector here
        return (_ov("zeros")((out.shape[0],), dtype=out.dtype, device=out.device),)
    return tuple(_ov("unbind")(out, 1))


def sort(
    input: Tensor,
    dim: int = -1,
    descending: bool = False,
    stable: bool = False,
    *,
    out: Any = None,
) -> Any:
    """(values, indices) sorted along ``dim``; ``stable=True`` keeps ties in order."""
    result = return_types.get("sort", ("values", "indices"))
    outs: dict[str, Any] = {}
    if out is not None:
        outs["values"], outs["indices"] = pair("sort", out)
    if stable:
        ov = _ov("sort", 1) if out is None else out_ov("sort", 1)
        return result._make(ov(input, stable=True, dim=dim, descending=descending, **outs))
    ov = _ov("sort", 0) if out is None else out_ov("sort", 0)
    return result._make(ov(input, dim, descending, **outs))


def argsort(
    input: Tensor,
    dim: int = -1,
    descending: bool = False,
    stable: bool = False,
    *,
    out: Any = None,
) -> Tensor:
    """The indices that sort ``input`` along ``dim``."""
    outs = {} if out is None else {"out": out}
    if stable:
        ov = _ov("argsort", 1) if out is None else out_ov("argsort", 1)
        return ov(input, stable=True, dim=dim, descending=descending, **outs)  # type: ignore[no-any-return]
    ov = _ov("argsort", 0) if out is None else out_ov("argsort", 0)
    return ov(input, dim, descending, **outs)  # type: ignore[no-any-return]


def unique(
    input: Tensor,
    sorted: bool = True,  # noqa: A002 - PyTorch's name
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """The distinct values (sorted), with the inverse indices and counts when asked.

    >>> import tensor as tt
    >>> values, counts = tt.unique(tt.tensor([3, 1, 3]), return_counts=True)
    >>> values.tolist(), counts.tolist()
    ([1, 3], [1, 2])
    """
    if dim is None:
        values, inverse, counts = _ov("_unique2")(input, sorted, return_inverse, return_counts)
    else:
        values, inverse, counts = _ov("unique_dim")(
            input, dim, sorted, return_inverse, return_counts
        )
    if not return_inverse and not return_counts:
        return values
    out = [values]
    if return_inverse:
        out.append(inverse)
    if return_counts:
        out.append(counts)
    return tuple(out)


WRAPPERS: dict[str, Any] = {
    "view": view,
    "reshape": reshape,
    "permute": permute,
    "expand": expand,
    "repeat": repeat,
    "tile": tile,
    "flip": flip,
    "split": split,
    "squeeze": squeeze,
    "scatter": scatter,
    "scatter_": _scatter_inplace,
    "nonzero": nonzero,
    "sort": sort,
    "argsort": argsort,
    "unique": unique,
}
# Methods whose signature differs from the function's (varargs sizes).
# Note [Contiguous without dispatch]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# PyTorch's ``Tensor::contiguous`` asks the tensor first and returns it, without a
# dispatcher call, when it is already in the asked layout; only a copy dispatches
# (``contiguous`` is CompositeImplicitAutograd: a mode sees its ``clone``, never the call
# itself).  ``x.contiguous()`` does the same: the test of the composite kernel (row-major,
# or an array with no strides to show), then ``x`` itself, 0.37 -> ~0.13 us on a [4, 8]
# tensor (``ci/bench/calls.py``); anything else, another memory format among it, takes
# the operator.  tests/tensor/test_fastpath_contiguous.py checks both sides of the test
# against the general path and PyTorch.
_CONTIGUOUS_FORMAT = "contiguous_format"


def _contiguous_method(self: Tensor, *, memory_format: Any = _CONTIGUOUS_FORMAT) -> Tensor:
    """``x.contiguous()``: ``x`` itself when it is row-major already, else a row-major copy."""
    if memory_format is _CONTIGUOUS_FORMAT and fastpaths.ENABLED:
        flags = getattr(self._array, "flags", None)
        if flags is None or flags.c_contiguous:
            return self
        return (_FIRST.get("contiguous") or _ov("contiguous")).call1(self)  # type: ignore[no-any-return]
    return _ov("contiguous")(self, memory_format=memory_format)  # type: ignore[no-any-return]


_contiguous_method.__name__ = "contiguous"
_contiguous_method.__qualname__ = "Tensor.contiguous"


METHOD_WRAPPERS: dict[str, Any] = {
    "reshape": _reshape_method,
    "permute": _permute_method,
    "tile": _tile_method,
    "flip": _flip_method,
}


# -- layout accessors and properties of the Tensor --------------------------------------------
def stride(self: Tensor, dim: int | None = None) -> Any:
    """Elements to skip in memory to step one index along each dim (PyTorch's strides).

    >>> import tensor as tt
    >>> x = tt.zeros(2, 3)
    >>> x.stride(), x.T.stride(), x[:, ::2].stride()
    ((3, 1), (1, 3), (3, 2))
    """
    array = self._array
    item = array.dtype.itemsize
    strides = tuple(s // item for s in array.strides)
    if dim is None:
        return strides
    n = len(strides)
    if not -max(n, 1) <= dim < max(n, 1):
        raise IndexError(
            f"stride(): Dimension out of range (expected to be in range of [{-max(n, 1)}, "
            f"{max(n, 1) - 1}], but got {dim})"
        )
    return strides[dim % n] if n else 1


def storage_offset(self: Tensor) -> int:
    """Elements between the start of the storage (the base's data) and this tensor's first."""
    array = self._array
    if type(array) is MetaArray:
        return array.offset
    root = self._base if self._base is not None else self
    return (_convert.data_ptr(array) - _convert.data_ptr(root._array)) // array.dtype.itemsize


def data_ptr(self: Tensor) -> int:
    """The address of the first element (0 for meta tensors)."""
    return _convert.data_ptr(self._array)


def is_contiguous(self: Tensor, memory_format: Any = None) -> bool:
    """Row-major without gaps (dims of size 1 and empty tensors don't break it), as PyTorch.

    Arrays with no strides to show (a plug-in device's: dask, array_api_strict) have
    only their logical row-major layout, so they count as contiguous."""
    flags = getattr(self._array, "flags", None)
    return True if flags is None else bool(flags.c_contiguous)


def _is_view(self: Tensor) -> bool:
    return self._base is not None


def _T(self: Tensor) -> Tensor:  # noqa: N802
    # PyTorch's numpy_T: a permute of the dims reversed, whatever the rank (a matrix's
    # grad_fn is PermuteBackward0, not TransposeBackward0), with its deprecation warnings
    # for a rank other than 2.
    n = self._array.ndim
    if n == 2:
        return (_FIRST.get("permute") or _ov("permute")).call2(self, [1, 0])  # type: ignore[no-any-return]
    if n == 0:
        warnings.warn(
            "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
            UserWarning,
            stacklevel=2,
        )
    else:
        warnings.warn(
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
            "deprecated and it will throw an error in a future release. Consider `x.mT` to "
            "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` "
            "to reverse the dimensions of a tensor.",
            UserWarning,
            stacklevel=2,
        )
    return _ov("permute")(self, list(range(n - 1, -1, -1)))  # type: ignore[no-any-return]


def _mT(self: Tensor) -> Tensor:  # noqa: N802
    if self._array.ndim == 0:  # PyTorch: the identity (deprecated), an alias
        return _ov("view")(self, [])  # type: ignore[no-any-return]
    if self._array.ndim < 2:
        raise RuntimeError(
            f"mT: tensor.mT is only supported on matrices or batches of matrices. Got "
            f"{self._array.ndim}-D tensor."
        )
    return _ov("transpose")(self, -2, -1)  # type: ignore[no-any-return]


def _real(self: Tensor) -> Tensor:
    return _ov("real")(self)  # type: ignore[no-any-return]


def _imag(self: Tensor) -> Tensor:
    return _ov("imag")(self)  # type: ignore[no-any-return]


def _iter(self: Tensor) -> Any:
    # Rows are views of self (unbind), so writing to one reaches self, as in PyTorch.
    if not self._array.ndim:
        raise TypeError("iteration over a 0-d tensor")
    return iter(_ov("unbind")(self, 0))


TENSOR_ATTRS: dict[str, Any] = {
    "stride": stride,
    "storage_offset": storage_offset,
    "data_ptr": data_ptr,
    "is_contiguous": is_contiguous,
    "contiguous": _contiguous_method,  # in place of the row's method (it has no function)
    "_is_view": _is_view,
    "T": property(_T, doc="The dims in reverse order (the transpose of a matrix); a view."),
    "mT": property(_mT, doc="The last two dims swapped (a batch of matrices transposed)."),
    # Attributes, as PyTorch's (``x.real * 2``); new tensors, not views (the rows' note in
    # tensor/optable/elementwise.py), so a write into one does not reach ``x``.
    "real": property(_real, doc="The real part (a new tensor; for a real tensor, its values)."),
    "imag": property(_imag, doc="The imaginary part of a complex tensor (a new tensor)."),
    "__getitem__": _indexing.getitem,
    "__setitem__": _indexing.setitem,
    "__iter__": _iter,
}

"""Operator rows: shapes, views, indexing, joining, sorting, and the mutating primitives.

Imports: this package's ``_grad`` and ``_row``.  Each section holds its formulas first
and its rows below them.

Families, which say who implements a row:
- ``view``: a kernel per backend returning an array that shares memory with
  ``self``; the ADInplaceOrView kernel (``tensor._inplace_or_view``) marks the
  result as a view (``_base``, shared version counter).  ``maybe_view``
  (``reshape``) is marked only when the backend could avoid a copy.
- ``composite``: a CompositeImplicitAutograd kernel in ``backends.composite``
  written with other operators (``t`` is ``transpose``, ``chunk`` is ``split``).
- ``index``, ``join``, ``sort``: kernels per backend (``backends.*.shape``).
- ``mutation``: in-place primitives with ``Tensor(a!)`` schemas (``zero_``,
  ``fill_``, ``copy_``); in-place forms of functional rows are generated
  (``_variants``).

Gradients that put values into a larger zero tensor (``select``, ``slice``,
``gather``, ``sort``...) use ``scatter``/``scatter_add``/``index_put`` out of place,
whose own formulas then give second derivatives.  The composites need no formula:
their decomposition is differentiated.
"""

from __future__ import annotations

from typing import Any

from . import _grad
from ._row import (
    ALL,
    INPLACE_FUNCTION,
    REAL,
    REAL_NO_BOOL,
    InPlace,
    NoFormula,
    OpInfo,
    same,
    to_bool,
    to_int64,
)

__all__ = ["ROWS"]

core = _grad.core
needs = _grad.needs_grad


def _view(name: str, *schemas: str, **kw: object) -> OpInfo:
    return OpInfo(name, schemas, "view", ALL, same, **kw)  # type: ignore[arg-type]


def _composite(name: str, *schemas: str, **kw: object) -> OpInfo:
    return OpInfo(name, schemas, "composite", ALL, same, **kw)  # type: ignore[arg-type]


def _op(name: str, family: str, *schemas: str, **kw: object) -> OpInfo:
    return OpInfo(name, schemas, family, **kw)  # type: ignore[arg-type]


def _zeros(x: Any, like: Any) -> Any:
    """Zeros of ``x``'s shape, in the gradient ``like``'s dtype and device."""
    return core.zeros(list(x.shape), dtype=like.dtype, device=like.device)


def _positions(n: int, d: int, ndim: int, like: Any) -> Any:
    """``arange(n)`` laid along dim ``d`` of an ``ndim``-dim tensor (size 1 elsewhere)."""
    p = core.arange(0, n, 1, device=like.device)
    return core.reshape(p, [n] + [1] * (ndim - 1 - d))


def _along(index: Any, d: int, shape: list[int]) -> Any:
    """A 1-D ``index`` laid along dim ``d`` and expanded to ``shape`` (for scatter)."""
    shaped = core.reshape(index, [index.shape[0]] + [1] * (len(shape) - 1 - d))
    return core.expand(shaped, shape)


# -- views ------------------------------------------------------------------------------------------
@_grad.saves()
def _reshape(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (core.reshape(g, list(a["self"].shape)),)


@_grad.saves()
def _transpose(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (core.transpose.int(g, a["dim0"], a["dim1"]),)


@_grad.saves()
def _t(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (core.t(g),)


@_grad.saves()
def _permute(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    ndim = a["self"].ndim
    dims = [d % ndim for d in a["dims"]]
    inverse = [0] * ndim
    for i, d in enumerate(dims):
        inverse[d] = i
    return (core.permute(g, inverse),)


@_grad.saves()
def _expand(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (_grad.sum_to(g, a["self"]),)


@_grad.saves()
def _unsqueeze(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (core.squeeze.dim(g, _grad.wrap_dim(a["dim"], g.ndim)),)


@_grad.saves()
def _select(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    d = _grad.wrap_dim(a["dim"], x.ndim)
    n = x.shape[d]
    at = core.eq(_positions(n, d, x.ndim, g), a["index"] % n)
    return (core.where(at, core.unsqueeze(g, d), _zeros(x, g)),)


@_grad.saves()
def _slice(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    d = _grad.wrap_dim(a["dim"], x.ndim)
    start, stop, step = slice(a["start"], a["end"], a["step"]).indices(x.shape[d])
    if tuple(g.shape) == tuple(x.shape):
        return (g,)
    if not len(range(start, stop, step)):  # x[1:0]: no element (arange would refuse it)
        return (_zeros(x, g),)
    index = core.arange(start, stop, step, device=g.device)
    return (core.scatter.src(_zeros(x, g), d, _along(index, d, list(g.shape)), g),)


def _diagonal_embed(g: Any, shape: list[int], offset: int, dim1: int, dim2: int) -> Any:
    """Zeros of ``shape`` with ``g`` on the diagonal ``diagonal(offset, dim1, dim2)`` reads
    (PyTorch's diagonal_backward, as one einsum against a 0/1 selection tensor)."""
    ndim = len(shape)
    d1, d2 = dim1 % ndim, dim2 % ndim
    n1, n2 = shape[d1], shape[d2]
    length = g.shape[-1]
    k = core.reshape(core.arange(0, length, 1, device=g.device), [length, 1, 1])
    i = core.reshape(core.arange(0, n1, 1, device=g.device), [1, n1, 1])
    j = core.reshape(core.arange(0, n2, 1, device=g.device), [1, 1, n2])
    pick = core.logical_and(core.eq(i, k + max(-offset, 0)), core.eq(j, k + max(offset, 0)))
    pick = core._to_copy(pick, dtype=g.dtype)
    embedded = core.einsum("...k,kij->...ij", [g, pick])  # (other dims..., n1, n2)
    others = [p for p in range(ndim) if p not in (d1, d2)]
    order = others + [d1, d2]
    inverse = [0] * ndim
    for pos, p in enumerate(order):
        inverse[p] = pos
    return core.permute(embedded, inverse)


@_grad.saves()
def _diagonal(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    return (_diagonal_embed(g, list(x.shape), a["offset"], a["dim1"], a["dim2"]),)


@_grad.saves()
def _unbind(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    return (core.stack(list(g), _grad.wrap_dim(a["dim"], x.ndim)),)


@_grad.saves()
def _split(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    grads = list(g) if isinstance(g, (tuple, list)) else [g]
    return (core.cat(grads, _grad.wrap_dim(a["dim"], x.ndim)),)


_VIEWS: tuple[OpInfo, ...] = (
    _view("view", "view(Tensor(a) self, SymInt[] size) -> Tensor(a)", function=None, py="view",
          grad=_reshape),
    OpInfo(
        "reshape", ("reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)",), "maybe_view",
        py="reshape", grad=_reshape,
    ),
    _view("transpose", "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
          grad=_transpose),
    # PyTorch's t is an operator of its own (CompositeExplicitAutograd, TBackward0), not
    # transpose's composite: one dispatch for F.linear's weight.
    _view("t", "t(Tensor(a) self) -> Tensor(a)", grad=_t),
    _view("permute", "permute(Tensor(a) self, int[] dims) -> Tensor(a)", py="permute",
          grad=_permute),
    _view(
        "expand", "expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
        function=None, py="expand", grad=_expand,
    ),
    _view("select", "select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)",
          grad=_select),
    _view(
        "slice",
        "slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, "
        "SymInt step=1) -> Tensor(a)",
        function=None, method=False, grad=_slice,
    ),
    _view("diagonal", "diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)",
          grad=_diagonal),
    _view("unbind", "unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]", grad=_unbind),
    _view(
        "split", "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
        py="split", grad=_split,
    ),
    _view(
        "split_with_sizes",
        "split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]",
        grad=_split,
    ),
    _view(
        "squeeze",
        "squeeze(Tensor(a) self) -> Tensor(a)",
        "squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)",
        "squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)",
        py="squeeze", grad=_reshape,
    ),
    _view("unsqueeze", "unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", grad=_unsqueeze),
)  # fmt: skip

# -- composites of the views ------------------------------------------------------------------------
_COMPOSITES: tuple[OpInfo, ...] = (
    _composite("narrow", "narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)"),
    _composite("chunk", "chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]"),
    _composite(
        "flatten", "flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)"
    ),
    _composite("unflatten", "unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)"),
    _composite("broadcast_to", "broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a)"),
    _composite("expand_as", "expand_as(Tensor(a) self, Tensor other) -> Tensor(a)", function=None),
    _composite("view_as", "view_as(Tensor(a) self, Tensor other) -> Tensor(a)", function=None),
    _composite("reshape_as", "reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)", function=None),
    _composite(
        "contiguous",
        "contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
        function=None,
    ),
    _composite("tile", "tile(Tensor self, SymInt[] dims) -> Tensor", py="tile"),
)  # fmt: skip


# -- indexing ---------------------------------------------------------------------------------------
@_grad.saves("indices")
def _index(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    return (core.index_put(_zeros(x, g), list(a["indices"]), g, True),)


@_grad.saves("indices")
def _index_put(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    indices, values = list(a["indices"]), a["values"]
    gself = None
    if needs(a["self"]):
        gself = g if a["accumulate"] else core.index_put(g, indices, core.zeros_like(values), False)
    gvalues = _grad.grad_for(core.index.Tensor(g, indices), values) if needs(values) else None
    return (gself, *(None for _ in indices), gvalues)


@_grad.saves("index")
def _index_select(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, index = a["self"], a["index"]
    if x.ndim == 0:
        return (core.sum(g),)
    d = _grad.wrap_dim(a["dim"], x.ndim)
    index = core.reshape(index, [-1])
    return (core.scatter_add(_zeros(x, g), d, _along(index, d, list(g.shape)), g), None)


@_grad.saves("index")
def _gather(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    return (core.scatter_add(_zeros(x, g), a["dim"], a["index"], g), None)


@_grad.saves("index")
def _scatter_src(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    dim, index = a["dim"], a["index"]
    gself = core.scatter.value(g, dim, index, 0) if needs(a["self"]) else None
    gsrc = core.gather(g, dim, index) if needs(a["src"]) else None
    return gself, None, gsrc


@_grad.saves("index")
def _scatter_value(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return core.scatter.value(g, a["dim"], a["index"], 0), None


@_grad.saves("index")
def _scatter_add(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    gsrc = core.gather(g, a["dim"], a["index"]) if needs(a["src"]) else None
    return g, None, gsrc


@_grad.saves("mask")
def _masked_fill(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    mask, value = a["mask"], a["value"]
    gself = _grad.grad_for(core.where(mask, core.zeros_like(g), g), a["self"])
    if not _grad.is_tensor(value):
        return gself, None
    gvalue = _grad.grad_for(core.where(mask, g, core.zeros_like(g)), value)
    return gself, None, gvalue


@_grad.saves("mask")
def _masked_select(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, mask = a["self"], a["mask"]
    shape = list(core.broadcast_to(x, _broadcast_shape(x, mask)).shape)
    full = core.broadcast_to(mask, shape)
    spread = core.index_put(core.zeros(shape, dtype=g.dtype, device=g.device), [full], g, False)
    return _grad.grad_for(spread, x), None


def _broadcast_shape(x: Any, y: Any) -> list[int]:
    a, b = list(x.shape), list(y.shape)
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    return [p if q == 1 else q for p, q in zip(a, b, strict=True)]


@_grad.saves("indices")
def _take_along_dim(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, indices, dim = a["self"], a["indices"], a["dim"]
    if dim is None:
        flat = core.scatter_add(
            core.zeros([x.numel()], dtype=g.dtype, device=g.device),
            0,
            core.reshape(indices, [-1]),
            core.reshape(g, [-1]),
        )
        return core.reshape(flat, list(x.shape)), None
    d = _grad.wrap_dim(dim, x.ndim)
    shape = _broadcast_shape(x, indices)
    shape[d] = x.shape[d]
    index_shape = list(shape)
    index_shape[d] = indices.shape[d]
    index = core.expand(indices, index_shape)
    spread = core.scatter_add(core.zeros(shape, dtype=g.dtype, device=g.device), d, index, g)
    return _grad.grad_for(spread, x), None


_NOT_IMPLEMENTED = NoFormula("PyTorch: derivative not implemented")

_INDEXING: tuple[OpInfo, ...] = (
    _op("index", "index", "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
        function=None, method=False, grad=_index),
    _op("index_put", "index",
        "index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
        grad=_index_put, autocast={"cuda": "promote"}, inplace=INPLACE_FUNCTION),
    _op("index_select", "index", "index_select(Tensor self, int dim, Tensor index) -> Tensor",
        grad=_index_select, out=True),
    _op("gather", "index",
        "gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
        grad=_gather, out=True),
    _op(
        "scatter", "index",
        "scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
        "scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
        "scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor",
        "scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str reduce) "
        "-> Tensor",
        py="scatter", out=True, inplace=InPlace(),
        grad={"src": _scatter_src, "value": _scatter_value, "reduce": _NOT_IMPLEMENTED,
              "value_reduce": _NOT_IMPLEMENTED},
    ),
    _op("scatter_add", "index",
        "scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
        grad=_scatter_add, autocast={"cuda": "promote"}, out=True, inplace=InPlace()),
    _op(
        "masked_fill", "index",
        "masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor",
        "masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor",
        grad=_masked_fill, inplace=InPlace(),
    ),
    _op("masked_select", "index", "masked_select(Tensor self, Tensor mask) -> Tensor",
        grad=_masked_select, out=True),
    _op("nonzero", "index", "nonzero(Tensor self) -> Tensor", rule=to_int64, py="nonzero",
        grad=False, out=True),
    _op("take_along_dim", "index",
        "take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor",
        grad=_take_along_dim, out=True),
)  # fmt: skip


# -- joining and rearranging ------------------------------------------------------------------------
@_grad.saves()
def _cat(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    tensors = list(a["tensors"])
    d = _grad.wrap_dim(a["dim"], g.ndim)  # g has the result's shape
    grads: list[Any] = []
    offset = 0
    for x in tensors:
        if x.ndim == 1 and x.shape[0] == 0 and g.ndim != 1:
            grads.append(core.zeros_like(x) if needs(x) else None)  # legacy empty input
            continue
        n = x.shape[d]
        grads.append(_grad.grad_for(core.narrow(g, d, offset, n), x) if needs(x) else None)
        offset += n
    return tuple(grads)


@_grad.saves()
def _stack(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    tensors = list(a["tensors"])
    d = _grad.wrap_dim(a["dim"], g.ndim)
    return tuple(
        _grad.grad_for(core.select.int(g, d, i), x) if needs(x) else None
        for i, x in enumerate(tensors)
    )


@_grad.saves()
def _flip(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (core.flip(g, list(a["dims"])),)


@_grad.saves()
def _roll(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    shifts = a["shifts"]
    shifts = [-s for s in shifts] if isinstance(shifts, (list, tuple)) else [-shifts]
    dims = a["dims"]
    dims = list(dims) if isinstance(dims, (list, tuple)) else [dims]
    return (core.roll(g, shifts, dims),)


@_grad.saves()
def _repeat(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, repeats = a["self"], list(a["repeats"])
    sizes = [1] * (len(repeats) - x.ndim) + list(x.shape)
    interleaved: list[int] = []
    for r, s in zip(repeats, sizes, strict=True):
        interleaved += [r, s]
    grad = core.sum(core.reshape(g, interleaved), list(range(0, 2 * len(repeats), 2)), False)
    return (core.reshape(grad, list(x.shape)),)


@_grad.saves()
def _tril(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (core.tril(g, a["diagonal"]),)


@_grad.saves()
def _triu(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (core.triu(g, a["diagonal"]),)


@_grad.saves()
def _diag(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, k = a["self"], a["diagonal"]
    if x.ndim == 1:
        return (core.diagonal(g, k, 0, 1),)
    return (_diagonal_embed(g, list(x.shape), k, 0, 1),)


_JOINING: tuple[OpInfo, ...] = (
    _op("cat", "join", "cat(Tensor[] tensors, int dim=0) -> Tensor", method=False,
        grad=_cat, autocast={"cpu": "promote"}, out=True),
    _op("stack", "join", "stack(Tensor[] tensors, int dim=0) -> Tensor", method=False,
        grad=_stack, autocast={"cpu": "promote"}, out=True),
    _op("flip", "join", "flip(Tensor self, int[] dims) -> Tensor", py="flip", grad=_flip),
    _op("roll", "join", "roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor",
        grad=_roll),
    _op("repeat", "join", "repeat(Tensor self, SymInt[] repeats) -> Tensor", function=None,
        py="repeat", grad=_repeat),
    _op("tril", "join", "tril(Tensor self, int diagonal=0) -> Tensor",
        grad=_tril, out=True, inplace=InPlace()),
    _op("triu", "join", "triu(Tensor self, int diagonal=0) -> Tensor",
        grad=_triu, out=True, inplace=InPlace()),
    _op("diag", "join", "diag(Tensor self, int diagonal=0) -> Tensor", grad=_diag, out=True),
)  # fmt: skip


# -- sorting ----------------------------------------------------------------------------------------
@_grad.saves("result")
def _sort(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    if x.ndim == 0:
        return (g[0],)
    d = _grad.wrap_dim(a["dim"], x.ndim)
    return (core.scatter.src(_zeros(x, g[0]), d, out[1], g[0]),)


_SORTING: tuple[OpInfo, ...] = (
    _op(
        "sort", "sort",
        "sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)",
        "sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) "
        "-> (Tensor values, Tensor indices)",
        dtypes=REAL, py="sort", grad=_sort, out=True,
    ),
    _op(
        "argsort", "sort",
        "argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor",
        "argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) -> Tensor",
        dtypes=REAL, rule=to_int64, py="argsort", grad=False, out=True,
    ),
    _op(
        "topk", "sort",
        "topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) "
        "-> (Tensor values, Tensor indices)",
        dtypes=REAL_NO_BOOL, grad=_sort, out=True,
    ),
    _op(
        "_unique2", "sort",
        "_unique2(Tensor self, bool sorted=True, bool return_inverse=False, "
        "bool return_counts=False) -> (Tensor, Tensor, Tensor)",
        dtypes=REAL, function="unique", py="unique",  # tt.unique picks _unique2 or unique_dim
        grad=_NOT_IMPLEMENTED,
    ),
    # Note [Searching operators] in backends.common.searching: binary searches per value.
    _op(
        "searchsorted", "sort",
        "searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, "
        "bool right=False, str? side=None, Tensor? sorter=None) -> Tensor",
        "searchsorted.Scalar(Tensor sorted_sequence, Scalar self, *, bool out_int32=False, "
        "bool right=False, str? side=None, Tensor? sorter=None) -> Tensor",
        dtypes=REAL_NO_BOOL, rule=to_int64, method=False, grad=False,
    ),
    _op(
        "isin", "sort",
        "isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False, "
        "bool invert=False) -> Tensor",
        "isin.Tensor_Scalar(Tensor elements, Scalar test_element, *, bool assume_unique=False, "
        "bool invert=False) -> Tensor",
        "isin.Scalar_Tensor(Scalar element, Tensor test_elements, *, bool assume_unique=False, "
        "bool invert=False) -> Tensor",
        dtypes=REAL_NO_BOOL, rule=to_bool, method=False, grad=False,
    ),
    _op(
        "unique_dim", "sort",
        "unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, "
        "bool return_counts=False) -> (Tensor, Tensor, Tensor)",
        dtypes=REAL, function=None, method=False, grad=_NOT_IMPLEMENTED,
    ),
)  # fmt: skip


# -- mutating primitives ----------------------------------------------------------------------------
@_grad.saves()
def _zero(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (core.zeros_like(g),)


@_grad.saves()
def _fill_tensor(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return core.zeros_like(g), _grad.grad_for(core.sum(g), a["value"])


@_grad.saves()
def _copy(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    src = a["src"]
    gsrc = None
    if needs(src):
        gsrc = _grad.sum_to(g, src)
        if gsrc.dtype != src.dtype or gsrc.device != src.device:
            gsrc = core._to_copy(gsrc, dtype=src.dtype, device=src.device)
    return core.zeros_like(g), gsrc


_MUTATIONS: tuple[OpInfo, ...] = (
    # torch.zero_ and torch.fill_ are functions too (torch has no torch.copy_).
    _op("zero_", "mutation", "zero_(Tensor(a!) self) -> Tensor(a!)", grad=_zero),
    _op(
        "fill_", "mutation",
        "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)",
        "fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)",
        grad={"Scalar": _zero, "Tensor": _fill_tensor},
    ),
    # fill is fill_ on a copy (a composite, as its in-place sibling is the primitive).
    _composite(
        "fill", "fill.Scalar(Tensor self, Scalar value) -> Tensor",
        "fill.Tensor(Tensor self, Tensor value) -> Tensor", method=False,
    ),
    # normal_ writes samples of normal.float_float into self (a composite too).
    _composite(
        "normal_",
        "normal_(Tensor(a!) self, float mean=0, float std=1, *, Generator? generator=None) "
        "-> Tensor(a!)",
        function=None,
    ),
    _op("copy_", "mutation", "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
        function=None, grad=_copy),
)  # fmt: skip

ROWS: tuple[OpInfo, ...] = _VIEWS + _COMPOSITES + _INDEXING + _JOINING + _SORTING + _MUTATIONS

"""Operator rows: shapes, views, indexing, joining, sorting, and the mutating primitives.

Imports: ``tensor._opinfo`` only.  ``tensor._optable`` adds these rows to the table.

Families, which say who implements a row:
- ``view``: a kernel per backend returning an array that shares memory with
  ``self``; the ADInplaceOrView kernel (``tensor._inplace_or_view``) marks the
  result as a view (``_base``, shared version counter).  ``maybe_view``
  (``reshape``) is marked only when the backend could avoid a copy.
- ``composite``: a CompositeImplicitAutograd kernel in ``tensor._composite``
  written with other operators (``t`` is ``transpose``, ``chunk`` is ``split``).
- ``index``, ``join``, ``sort``: kernels per backend (``backends.*.shape``).
- ``mutation``: in-place primitives with ``Tensor(a!)`` schemas (``zero_``,
  ``fill_``, ``copy_``); in-place forms of functional rows are generated
  (``tensor._optable_variants``).
"""

from __future__ import annotations

from ._opinfo import ALL, REAL, REAL_NO_BOOL, OpInfo, same, to_int64

__all__ = ["ROWS"]


def _view(name: str, *schemas: str, **kw: object) -> OpInfo:
    return OpInfo(name, schemas, "view", ALL, same, **kw)  # type: ignore[arg-type]


def _composite(name: str, *schemas: str, **kw: object) -> OpInfo:
    return OpInfo(name, schemas, "composite", ALL, same, **kw)  # type: ignore[arg-type]


def _op(name: str, family: str, *schemas: str, **kw: object) -> OpInfo:
    return OpInfo(name, schemas, family, **kw)  # type: ignore[arg-type]


ROWS: tuple[OpInfo, ...] = (
    # -- views ------------------------------------------------------------------------------
    _view("view", "view(Tensor(a) self, SymInt[] size) -> Tensor(a)", function=None, py="view"),
    OpInfo(
        "reshape", ("reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)",), "maybe_view",
        py="reshape",
    ),
    _view("transpose", "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)"),
    _view("permute", "permute(Tensor(a) self, int[] dims) -> Tensor(a)", py="permute"),
    _view(
        "expand", "expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
        function=None, py="expand",
    ),
    _view("select", "select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)"),
    _view(
        "slice",
        "slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, "
        "SymInt step=1) -> Tensor(a)",
        function=None, method=False,
    ),
    _view("diagonal", "diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)"),
    _view("unbind", "unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]"),
    _view(
        "split", "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
        py="split",
    ),
    _view(
        "split_with_sizes",
        "split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]",
    ),
    _view(
        "squeeze",
        "squeeze(Tensor(a) self) -> Tensor(a)",
        "squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)",
        "squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)",
        py="squeeze",
    ),
    _view("unsqueeze", "unsqueeze(Tensor(a) self, int dim) -> Tensor(a)"),
    # -- composites of the views -----------------------------------------------------------------
    _composite("t", "t(Tensor(a) self) -> Tensor(a)"),
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
    # Tensor.clone stays the class's own method (it dispatches _to_copy, as this does).
    _composite("clone", "clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", method=False),
    _composite("tile", "tile(Tensor self, SymInt[] dims) -> Tensor", py="tile"),
    # -- indexing --------------------------------------------------------------------------------
    _op("index", "index", "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
        function=None, method=False),
    _op("index_put", "index",
        "index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor"),
    _op("index_select", "index", "index_select(Tensor self, int dim, Tensor index) -> Tensor"),
    _op("gather", "index",
        "gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor"),
    _op(
        "scatter", "index",
        "scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
        "scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
        "scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor",
        "scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str reduce) "
        "-> Tensor",
        py="scatter",
    ),
    _op("scatter_add", "index",
        "scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor"),
    _op(
        "masked_fill", "index",
        "masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor",
        "masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor",
    ),
    _op("masked_select", "index", "masked_select(Tensor self, Tensor mask) -> Tensor"),
    _op("nonzero", "index", "nonzero(Tensor self) -> Tensor", rule=to_int64, py="nonzero"),
    _op("take_along_dim", "index",
        "take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor"),
    # -- joining and rearranging -----------------------------------------------------------------
    _op("cat", "join", "cat(Tensor[] tensors, int dim=0) -> Tensor", method=False),
    _op("stack", "join", "stack(Tensor[] tensors, int dim=0) -> Tensor", method=False),
    _op("flip", "join", "flip(Tensor self, int[] dims) -> Tensor", py="flip"),
    _op("roll", "join", "roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor"),
    _op("repeat", "join", "repeat(Tensor self, SymInt[] repeats) -> Tensor", function=None,
        py="repeat"),
    _op("tril", "join", "tril(Tensor self, int diagonal=0) -> Tensor"),
    _op("triu", "join", "triu(Tensor self, int diagonal=0) -> Tensor"),
    _op("diag", "join", "diag(Tensor self, int diagonal=0) -> Tensor"),
    # -- sorting and selection -------------------------------------------------------------------
    _op(
        "sort", "sort",
        "sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)",
        "sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) "
        "-> (Tensor values, Tensor indices)",
        dtypes=REAL, py="sort",
    ),
    _op(
        "argsort", "sort",
        "argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor",
        "argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) -> Tensor",
        dtypes=REAL, rule=to_int64, py="argsort",
    ),
    _op(
        "topk", "sort",
        "topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) "
        "-> (Tensor values, Tensor indices)",
        dtypes=REAL_NO_BOOL,
    ),
    _op(
        "_unique2", "sort",
        "_unique2(Tensor self, bool sorted=True, bool return_inverse=False, "
        "bool return_counts=False) -> (Tensor, Tensor, Tensor)",
        dtypes=REAL, function="unique", py="unique",  # tt.unique picks _unique2 or unique_dim
    ),
    _op(
        "unique_dim", "sort",
        "unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, "
        "bool return_counts=False) -> (Tensor, Tensor, Tensor)",
        dtypes=REAL, function=None, method=False,
    ),
    # -- mutating primitives ---------------------------------------------------------------------
    # torch.zero_ and torch.fill_ are functions too (torch has no torch.copy_).
    _op("zero_", "mutation", "zero_(Tensor(a!) self) -> Tensor(a!)"),
    _op(
        "fill_", "mutation",
        "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)",
        "fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)",
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
        function=None),
)  # fmt: skip

"""Derivative formulas of the shape, view, indexing, joining and sorting operators.

Imports: ``dispatch`` (through ``_formulas_common``).  Same conventions as
``_formulas``.  Gradients that put values into a larger zero tensor (``select``,
``slice``, ``gather``, ``sort``...) use ``scatter``/``scatter_add``/``index_put`` out
of place, whose own formulas then give second derivatives.  The composites
(``t``, ``narrow``, ``flatten``, ``clone``...) need no row: their decomposition is
differentiated.
"""

from __future__ import annotations

from typing import Any

from . import _formulas_common as common

__all__ = ["FORMULAS"]

core = common.core
needs = common.needs_grad


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
@common.saves()
def _reshape(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (core.reshape(g, list(a["self"].shape)),)


@common.saves()
def _transpose(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (core.transpose.int(g, a["dim0"], a["dim1"]),)


@common.saves()
def _permute(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    ndim = a["self"].ndim
    dims = [d % ndim for d in a["dims"]]
    inverse = [0] * ndim
    for i, d in enumerate(dims):
        inverse[d] = i
    return (core.permute(g, inverse),)


@common.saves()
def _expand(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (common.sum_to(g, a["self"]),)


@common.saves()
def _unsqueeze(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (core.squeeze.dim(g, common.wrap_dim(a["dim"], g.ndim)),)


@common.saves()
def _select(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    d = common.wrap_dim(a["dim"], x.ndim)
    n = x.shape[d]
    at = core.eq(_positions(n, d, x.ndim, g), a["index"] % n)
    return (core.where(at, core.unsqueeze(g, d), _zeros(x, g)),)


@common.saves()
def _slice(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    d = common.wrap_dim(a["dim"], x.ndim)
    start, stop, step = slice(a["start"], a["end"], a["step"]).indices(x.shape[d])
    if tuple(g.shape) == tuple(x.shape):
        return (g,)
    index = core.arange(start, stop, step, device=g.device)
    if index.shape[0] == 0:
        return (_zeros(x, g),)
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


@common.saves()
def _diagonal(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    return (_diagonal_embed(g, list(x.shape), a["offset"], a["dim1"], a["dim2"]),)


@common.saves()
def _unbind(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    return (core.stack(list(g), common.wrap_dim(a["dim"], x.ndim)),)


@common.saves()
def _split(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    grads = list(g) if isinstance(g, (tuple, list)) else [g]
    return (core.cat(grads, common.wrap_dim(a["dim"], x.ndim)),)


# -- indexing ---------------------------------------------------------------------------------------
@common.saves("indices")
def _index(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    return (core.index_put(_zeros(x, g), list(a["indices"]), g, True),)


@common.saves("indices")
def _index_put(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    indices, values = list(a["indices"]), a["values"]
    gself = None
    if needs(a["self"]):
        gself = g if a["accumulate"] else core.index_put(g, indices, core.zeros_like(values), False)
    gvalues = common.grad_for(core.index.Tensor(g, indices), values) if needs(values) else None
    return (gself, *(None for _ in indices), gvalues)


@common.saves("index")
def _index_select(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, index = a["self"], a["index"]
    if x.ndim == 0:
        return (core.sum(g),)
    d = common.wrap_dim(a["dim"], x.ndim)
    index = core.reshape(index, [-1])
    return (core.scatter_add(_zeros(x, g), d, _along(index, d, list(g.shape)), g), None)


@common.saves("index")
def _gather(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    return (core.scatter_add(_zeros(x, g), a["dim"], a["index"], g), None)


@common.saves("index")
def _scatter_src(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    dim, index = a["dim"], a["index"]
    gself = core.scatter.value(g, dim, index, 0) if needs(a["self"]) else None
    gsrc = core.gather(g, dim, index) if needs(a["src"]) else None
    return gself, None, gsrc


@common.saves("index")
def _scatter_value(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return core.scatter.value(g, a["dim"], a["index"], 0), None


@common.saves("index")
def _scatter_add(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    gsrc = core.gather(g, a["dim"], a["index"]) if needs(a["src"]) else None
    return g, None, gsrc


@common.saves("mask")
def _masked_fill(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    mask, value = a["mask"], a["value"]
    gself = common.grad_for(core.where(mask, core.zeros_like(g), g), a["self"])
    if not common.is_tensor(value):
        return gself, None
    gvalue = common.grad_for(core.where(mask, g, core.zeros_like(g)), value)
    return gself, None, gvalue


@common.saves("mask")
def _masked_select(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, mask = a["self"], a["mask"]
    shape = list(core.broadcast_to(x, _broadcast_shape(x, mask)).shape)
    full = core.broadcast_to(mask, shape)
    spread = core.index_put(core.zeros(shape, dtype=g.dtype, device=g.device), [full], g, False)
    return common.grad_for(spread, x), None


def _broadcast_shape(x: Any, y: Any) -> list[int]:
    a, b = list(x.shape), list(y.shape)
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    return [p if q == 1 else q for p, q in zip(a, b, strict=True)]


@common.saves("indices")
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
    d = common.wrap_dim(dim, x.ndim)
    shape = _broadcast_shape(x, indices)
    shape[d] = x.shape[d]
    index_shape = list(shape)
    index_shape[d] = indices.shape[d]
    index = core.expand(indices, index_shape)
    spread = core.scatter_add(core.zeros(shape, dtype=g.dtype, device=g.device), d, index, g)
    return common.grad_for(spread, x), None


# -- joining and rearranging ------------------------------------------------------------------------
@common.saves()
def _cat(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    tensors = list(a["tensors"])
    d = common.wrap_dim(a["dim"], g.ndim)  # g has the result's shape
    grads: list[Any] = []
    offset = 0
    for x in tensors:
        if x.ndim == 1 and x.shape[0] == 0 and g.ndim != 1:
            grads.append(core.zeros_like(x) if needs(x) else None)  # legacy empty input
            continue
        n = x.shape[d]
        grads.append(common.grad_for(core.narrow(g, d, offset, n), x) if needs(x) else None)
        offset += n
    return tuple(grads)


@common.saves()
def _stack(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    tensors = list(a["tensors"])
    d = common.wrap_dim(a["dim"], g.ndim)
    return tuple(
        common.grad_for(core.select.int(g, d, i), x) if needs(x) else None
        for i, x in enumerate(tensors)
    )


@common.saves()
def _flip(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (core.flip(g, list(a["dims"])),)


@common.saves()
def _roll(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    shifts = a["shifts"]
    shifts = [-s for s in shifts] if isinstance(shifts, (list, tuple)) else [-shifts]
    dims = a["dims"]
    dims = list(dims) if isinstance(dims, (list, tuple)) else [dims]
    return (core.roll(g, shifts, dims),)


@common.saves()
def _repeat(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, repeats = a["self"], list(a["repeats"])
    sizes = [1] * (len(repeats) - x.ndim) + list(x.shape)
    interleaved: list[int] = []
    for r, s in zip(repeats, sizes, strict=True):
        interleaved += [r, s]
    grad = core.sum(core.reshape(g, interleaved), list(range(0, 2 * len(repeats), 2)), False)
    return (core.reshape(grad, list(x.shape)),)


@common.saves()
def _tril(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (core.tril(g, a["diagonal"]),)


@common.saves()
def _triu(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (core.triu(g, a["diagonal"]),)


@common.saves()
def _diag(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, k = a["self"], a["diagonal"]
    if x.ndim == 1:
        return (core.diagonal(g, k, 0, 1),)
    return (_diagonal_embed(g, list(x.shape), k, 0, 1),)


# -- sorting ----------------------------------------------------------------------------------------
@common.saves("result")
def _sort(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    if x.ndim == 0:
        return (g[0],)
    d = common.wrap_dim(a["dim"], x.ndim)
    return (core.scatter.src(_zeros(x, g[0]), d, out[1], g[0]),)


# -- mutating primitives ----------------------------------------------------------------------------
@common.saves()
def _zero(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (core.zeros_like(g),)


@common.saves()
def _fill_tensor(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return core.zeros_like(g), common.grad_for(core.sum(g), a["value"])


@common.saves()
def _copy(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    src = a["src"]
    gsrc = None
    if needs(src):
        gsrc = common.sum_to(g, src)
        if gsrc.dtype != src.dtype or gsrc.device != src.device:
            gsrc = core._to_copy(gsrc, dtype=src.dtype, device=src.device)
    return core.zeros_like(g), gsrc


FORMULAS: dict[str, common.Formula] = {
    "view": _reshape,
    "reshape": _reshape,
    "transpose.int": _transpose,
    "permute": _permute,
    "expand": _expand,
    "select.int": _select,
    "slice.Tensor": _slice,
    "diagonal": _diagonal,
    "unbind.int": _unbind,
    "split.Tensor": _split,
    "split_with_sizes": _split,
    "squeeze": _reshape,
    "squeeze.dim": _reshape,
    "squeeze.dims": _reshape,
    "unsqueeze": _unsqueeze,
    "index.Tensor": _index,
    "index_put": _index_put,
    "index_select": _index_select,
    "gather": _gather,
    "scatter.src": _scatter_src,
    "scatter.value": _scatter_value,
    "scatter_add": _scatter_add,
    "masked_fill.Scalar": _masked_fill,
    "masked_fill.Tensor": _masked_fill,
    "masked_select": _masked_select,
    "take_along_dim": _take_along_dim,
    "cat": _cat,
    "stack": _stack,
    "flip": _flip,
    "roll": _roll,
    "repeat": _repeat,
    "tril": _tril,
    "triu": _triu,
    "diag": _diag,
    "sort": _sort,
    "sort.stable": _sort,
    "topk": _sort,
    "zero_": _zero,
    "fill_.Scalar": _zero,
    "fill_.Tensor": _fill_tensor,
    "copy_": _copy,
}

"""Op-database entries of the shape, view, indexing, joining and sorting operators.

Imports: NumPy and the sibling ``opentry``/``samples``/``samples_shape`` modules (never
torch).

The ``aliases`` entries are views, which ``test_opdb_views.py`` also checks write
through to their base; references are NumPy on the samples' arrays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .references_shape import (
    _cat,
    _chunk,
    _expand,
    _flatten,
    _gather,
    _index_put,
    _masked_fill,
    _nonzero,
    _order,
    _scatter,
    _slice,
    _split,
    _squeeze,
    _swap,
    _take_along,
    _topk,
    _unflatten,
    _unique,
)
from .samples import DTYPE_NAMES, Sample, noncontig, up
from .samples_shape import (
    _cat_samples,
    _copy_samples,
    _diagonal_samples,
    _dim_samples,
    _expand_samples,
    _fill_samples,
    _flatten_samples,
    _gather_samples,
    _index_put_samples,
    _index_samples,
    _index_select_samples,
    _int_index,
    _mask,
    _masked_fill_samples,
    _masked_select_samples,
    _meta_raises,
    _narrow_samples,
    _nonzero_samples,
    _one,
    _pair_samples,
    _permute_samples,
    _s,
    _same_numel_samples,
    _scatter_samples,
    _select_samples,
    _slice_samples,
    _sort_samples,
    _split_samples,
    _squeeze_samples,
    _stack_samples,
    _take_along_samples,
    _tile_samples,
    _topk_samples,
    _transpose_samples,
    _unflatten_samples,
    _unique_samples,
    _v,
    _view_samples,
)

__all__ = ["ALIASES", "entries"]

ALIASES: set[str] = set()  # ids of entries whose result is a view of args[0]


# -- calls -----------------------------------------------------------------------------------------
def _method(name: str) -> Callable[..., Any]:
    def call(lib: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(x, name)(*args, **kwargs)

    return call


def _fn(name: str) -> Callable[..., Any]:
    def call(lib: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(lib, name)(*args, **kwargs)

    return call


def _core(name: str) -> Callable[..., Any]:
    def call(lib: Any, *args: Any, **kwargs: Any) -> Any:
        if lib.__name__ == "torch":
            return getattr(lib.ops.aten, name)(*args, **kwargs)
        from dispatch import ops

        return getattr(ops.core, name)(*args, **kwargs)

    return call


def _through_view(name: str) -> Callable[..., Any]:
    """``name`` called in place on a view of a copy of ``x``; returns the copy (the base)."""

    def call(lib: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        base = x.clone()
        view = base.view(base.shape)
        result = getattr(view, name)(*args, **kwargs)
        assert result is view, f"{name} returned another tensor than self"
        if lib.__name__ == "tensor":
            assert base._version >= 1, f"{name} did not bump the base's version"
        return base

    return call


def _get(key: Callable[[Any], Any]) -> Callable[..., Any]:
    def call(lib: Any, x: Any, idx: Any) -> Any:
        return x[key(idx)]

    return call


def _set(key: Callable[[Any], Any], value: Any) -> Callable[..., Any]:
    def call(lib: Any, x: Any, idx: Any) -> Any:
        y = x.clone()
        y[key(idx)] = value if not callable(value) else value(y)
        return y

    return call


# -- entries -----------------------------------------------------------------------------------------
def entries() -> list[Any]:
    from .opentry import OpEntry

    E = OpEntry
    out: list[Any] = []

    def alias(entry: Any) -> None:
        ALIASES.add(entry.id)
        out.append(entry)

    sorted_dtypes = tuple(d for d in DTYPE_NAMES if not d.startswith("complex"))
    # views
    alias(E("view", "view", _method("view"), lambda x, s: up(x).reshape(s), _view_samples))
    alias(E("reshape", "reshape", _fn("reshape"), lambda x, s: up(x).reshape(s), _view_samples))
    alias(
        E(
            "reshape_method",
            "reshape",
            lambda lib, x, s: x.reshape(*s),
            lambda x, s: up(x).reshape(s),
            _view_samples,
        )
    )
    alias(E("transpose", "transpose", _fn("transpose"), _swap, _transpose_samples))
    alias(
        E(
            "permute",
            "permute",
            _fn("permute"),
            lambda x, d: np.transpose(up(x), d),
            _permute_samples,
        )
    )
    alias(
        E(
            "permute_method",
            "permute",
            lambda lib, x, d: x.permute(*d),
            lambda x, d: np.transpose(up(x), d),
            _permute_samples,
        )
    )
    alias(E("expand", "expand", lambda lib, x, s: x.expand(*s), _expand, _expand_samples))
    alias(
        E(
            "select",
            "select",
            _fn("select"),
            lambda x, d, i: np.take(up(x), i, axis=d),
            _select_samples,
        )
    )
    alias(E("slice", "slice", _core("slice"), _slice, _slice_samples))
    alias(
        E(
            "diagonal",
            "diagonal",
            _fn("diagonal"),
            lambda x, offset=0, dim1=0, dim2=1: np.diagonal(up(x), offset, dim1, dim2),
            _diagonal_samples,
        )
    )
    alias(
        E(
            "unbind",
            "unbind",
            _fn("unbind"),
            lambda x, d: tuple(np.moveaxis(up(x), d, 0)),
            _dim_samples(0, 1, -1),
        )
    )
    alias(E("split", "split", _fn("split"), _split, _split_samples))
    alias(
        E(
            "split_with_sizes",
            "split_with_sizes",
            lambda lib, x, s, d=0: lib.split(x, list(s), d),
            _split,
            lambda dt, rng: [
                _s(_v(dt, rng, 5, 4), [2, 3], plain=True),
                _s(_v(dt, rng, 5, 4), [4, 0], 1),
            ],
        )
    )
    alias(E("squeeze", "squeeze", _fn("squeeze"), _squeeze, _squeeze_samples))
    alias(
        E(
            "unsqueeze",
            "unsqueeze",
            _fn("unsqueeze"),
            lambda x, d: np.expand_dims(up(x), d),
            _dim_samples(0, -1, 2),
        )
    )
    alias(
        E(
            "t",
            "t",
            _fn("t"),
            lambda x: up(x).T,
            lambda dt, rng: [
                _s(_v(dt, rng, 3, 4), plain=True),
                _s(_v(dt, rng, 3)),
                _s(_v(dt, rng), name="0-d"),
                _s(_v(dt, rng, 2, 2, 2), name="3-d"),
            ],
        )
    )
    alias(E("T", "permute", lambda lib, x: x.T, lambda x: up(x).T, _one))
    alias(
        E(
            "mT",
            "transpose",
            lambda lib, x: x.mT,
            lambda x: np.swapaxes(up(x), -1, -2) if np.ndim(x) else up(x),
            _one,
        )
    )
    alias(
        E(
            "narrow",
            "narrow",
            _fn("narrow"),
            lambda x, d, s, n: np.take(up(x), range(s % x.shape[d], s % x.shape[d] + n), axis=d),
            _narrow_samples,
        )
    )
    alias(E("chunk", "chunk", _fn("chunk"), _chunk, _dim_samples(2, 3, shape=(5, 4))))
    alias(E("flatten", "flatten", _fn("flatten"), _flatten, _flatten_samples))
    alias(E("unflatten", "unflatten", _fn("unflatten"), _unflatten, _unflatten_samples))
    alias(
        E(
            "broadcast_to",
            "broadcast_to",
            lambda lib, x, y: lib.broadcast_to(x, y.shape),
            lambda x, y: np.broadcast_to(up(x), y.shape),
            _pair_samples,
        )
    )
    alias(
        E(
            "expand_as",
            "expand_as",
            lambda lib, x, y: x.expand_as(y),
            lambda x, y: np.broadcast_to(up(x), y.shape),
            _pair_samples,
        )
    )
    alias(
        E(
            "view_as",
            "view_as",
            lambda lib, x, y: x.view_as(y),
            lambda x, y: up(x).reshape(y.shape),
            _same_numel_samples,
        )
    )
    out.append(
        E(
            "reshape_as",
            "reshape_as",
            lambda lib, x, y: x.reshape_as(y),
            lambda x, y: up(x).reshape(y.shape),
            _same_numel_samples,
        )
    )
    out.append(E("contiguous", "contiguous", lambda lib, x: x.contiguous(), up, _one))
    out.append(E("clone", "clone", _fn("clone"), up, _one))
    out.append(E("tile", "tile", _fn("tile"), lambda x, d: np.tile(up(x), d), _tile_samples))
    # indexing
    out.append(
        E(
            "getitem_basic",
            "slice",
            lambda lib, x: x[1:, None, ..., ::2],
            lambda x: up(x)[1:, None, ..., ::2],
            _one_3d,
        )
    )
    out.append(E("getitem_int", "select", lambda lib, x: x[1, -1], lambda x: up(x)[1, -1], _one_3d))
    out.append(
        E(
            "getitem_list",
            "index",
            _get(lambda i: i),
            lambda x, i: up(x)[i],
            _index_samples(_int_index),
        )
    )
    out.append(
        E(
            "getitem_mask",
            "index",
            _get(lambda m: m),
            lambda x, m: up(x)[m],
            _index_samples(_mask, mask=True),
        )
    )
    out.append(
        E(
            "getitem_mixed",
            "index",
            _get(lambda i: (0, slice(None), i[:2])),
            lambda x, i: up(x)[0][:, i[:2]],
            _index_samples(_int_index),
        )
    )
    out.append(
        E(
            "getitem_pairs",
            "index",
            _get(lambda i: (i, i[::-1].copy() if hasattr(i, "copy") else i)),
            lambda x, i: up(x)[i, i[::-1]],
            _index_samples(_int_index),
        )
    )
    out.append(
        E(
            "getitem_mask_slice",
            "index",
            _get(lambda m: (m[:, 0], slice(1, 3))),
            lambda x, m: up(x)[m[:, 0], 1:3],
            _index_samples(_mask, mask=True),
        )
    )
    out.append(
        E(
            "setitem_basic",
            "fill_",
            _set(lambda i: (slice(1, None), 0), 7),
            lambda x, i: _assign(x, (slice(1, None), 0), 7),
            _index_samples(_int_index),
        )
    )
    out.append(
        E(
            "setitem_list",
            "index_put_",
            _set(lambda i: i, 1),
            lambda x, i: _assign(x, i, 1),
            _index_samples(_int_index),
        )
    )
    out.append(
        E(
            "setitem_mask",
            "index_put_",
            _set(lambda m: m, 0),
            lambda x, m: _assign(x, m, 0),
            _index_samples(_mask),
        )
    )
    out.append(E("index_put", "index_put", _fn("index_put"), _index_put, _index_put_samples))
    out.append(
        E(
            "index_select",
            "index_select",
            _fn("index_select"),
            lambda x, d, i: np.take(up(x), i, axis=d),
            _index_select_samples,
        )
    )
    out.append(E("gather", "gather", _fn("gather"), _gather, _gather_samples))
    out.append(E("scatter", "scatter", _fn("scatter"), _scatter, _scatter_samples("src")))
    out.append(E("scatter_value", "scatter", _fn("scatter"), _scatter, _scatter_samples("value")))
    out.append(
        E(
            "scatter_reduce",
            "scatter",
            _fn("scatter"),
            _scatter,
            _scatter_samples("reduce"),
            dtypes=tuple(d for d in DTYPE_NAMES if d != "bool"),
        )
    )
    out.append(
        E(
            "scatter_add",
            "scatter_add",
            _fn("scatter_add"),
            lambda x, d, i, s: _scatter(x, d, i, s, reduce="add"),
            _scatter_samples("add"),
        )
    )
    out.append(
        E("masked_fill", "masked_fill", _fn("masked_fill"), _masked_fill, _masked_fill_samples)
    )
    out.append(
        E(
            "masked_select",
            "masked_select",
            _fn("masked_select"),
            lambda x, m: np.broadcast_to(up(x), np.broadcast_shapes(x.shape, m.shape))[
                np.broadcast_to(m, np.broadcast_shapes(x.shape, m.shape))
            ],
            _masked_select_samples,
        )
    )
    out.append(E("nonzero", "nonzero", _fn("nonzero"), _nonzero, _nonzero_samples))
    out.append(
        E(
            "nonzero_tuple",
            "nonzero",
            lambda lib, x: lib.nonzero(x, as_tuple=True),
            lambda x: tuple(_nonzero(x).T) if np.ndim(x) else (np.zeros(int(bool(x)), np.int64),),
            _nonzero_samples,
        )
    )
    out.append(
        E(
            "where_condition",
            "nonzero",
            lambda lib, x: lib.where(x != 0),
            lambda x: tuple(_nonzero(x).T),
            lambda dt, rng: [_meta_raises(_s(_v(dt, rng, 3, 4, lo=-1, hi=1), plain=True))],
        )
    )
    out.append(
        E(
            "take_along_dim",
            "take_along_dim",
            _fn("take_along_dim"),
            _take_along,
            _take_along_samples,
        )
    )
    # joining and rearranging
    out.append(E("cat", "cat", _fn("cat"), _cat, _cat_samples))
    out.append(
        E(
            "stack",
            "stack",
            _fn("stack"),
            lambda ts, dim=0: np.stack([up(t) for t in ts], dim),
            _stack_samples,
        )
    )
    out.append(
        E(
            "flip",
            "flip",
            _fn("flip"),
            lambda x, d: np.flip(up(x), d),
            lambda dt, rng: [
                _s(_v(dt, rng, 3, 4), [0], plain=True),
                _s(_v(dt, rng, 3, 4), [0, 1]),
                _s(noncontig(dt, rng), [-1], name="nc"),
                _s(_v(dt, rng, 3, 4), [0, 0], name="repeated"),
            ],
        )
    )
    out.append(
        E(
            "flip_method",
            "flip",
            lambda lib, x: x.flip(0, 1),
            lambda x: np.flip(up(x), (0, 1)),
            lambda dt, rng: [_s(_v(dt, rng, 3, 4), plain=True)],
        )
    )
    out.append(
        E(
            "roll",
            "roll",
            _fn("roll"),
            lambda x, s, d=None: np.roll(
                up(x), s, d if d is None or isinstance(d, int) else tuple(d)
            ),
            lambda dt, rng: [
                _s(_v(dt, rng, 3, 4), 1, 1, plain=True),
                _s(_v(dt, rng, 3, 4), [1, -2], [0, 1]),
                _s(_v(dt, rng, 3, 4), 5),
                _s(noncontig(dt, rng), -1, 0, name="nc"),
            ],
        )
    )
    out.append(
        E(
            "repeat",
            "repeat",
            lambda lib, x, r: x.repeat(*r),
            lambda x, r: np.tile(up(x).reshape((1,) * (len(r) - x.ndim) + x.shape), r),
            lambda dt, rng: [
                _s(_v(dt, rng, 2, 3), (2, 2), plain=True),
                _s(_v(dt, rng, 2, 3), (3, 1, 2)),
                _s(noncontig(dt, rng), (1, 2), name="nc"),
                _s(_v(dt, rng, 2, 3), (2,), name="too-few"),
            ],
        )
    )
    for name, fn in (("tril", np.tril), ("triu", np.triu)):
        out.append(
            E(
                name,
                name,
                _fn(name),
                lambda x, diagonal=0, f=fn: f(up(x), diagonal),
                lambda dt, rng: [
                    _s(_v(dt, rng, 3, 4), plain=True),
                    _s(_v(dt, rng, 3, 4), diagonal=1),
                    _s(_v(dt, rng, 2, 3, 3), diagonal=-1),
                    _s(noncontig(dt, rng), name="nc"),
                    _s(_v(dt, rng, 3), name="1-d"),
                ],
            )
        )
    out.append(
        E(
            "diag",
            "diag",
            _fn("diag"),
            lambda x, diagonal=0: np.diag(up(x), diagonal),
            lambda dt, rng: [
                _s(_v(dt, rng, 3), plain=True),
                _s(_v(dt, rng, 3), 1),
                _s(_v(dt, rng, 3, 4)),
                _s(_v(dt, rng, 3, 4), -1),
                _s(noncontig(dt, rng), name="nc"),
                _s(_v(dt, rng, 2, 2, 2), name="3-d"),
            ],
        )
    )
    # sorting and selection
    out.append(E("sort", "sort", _fn("sort"), _order, _sort_samples, dtypes=sorted_dtypes))
    out.append(
        E(
            "sort_stable",
            "sort",
            lambda lib, x, dim=-1, descending=False: lib.sort(
                x, dim=dim, descending=descending, stable=True
            ),
            _order,
            _sort_samples,
            dtypes=sorted_dtypes,
        )
    )
    out.append(
        E(
            "argsort",
            "argsort",
            _fn("argsort"),
            lambda *a, **k: _order(*a, **k)[1],
            _sort_samples,
            dtypes=sorted_dtypes,
        )
    )
    out.append(
        E(
            "argsort_stable",
            "argsort",
            lambda lib, x, dim=-1, descending=False, **kw: lib.argsort(
                x, dim=dim, descending=descending, stable=True, **kw
            ),
            lambda *a, **k: _order(*a, **k)[1],
            _sort_samples,
            dtypes=sorted_dtypes,
        )
    )
    out.append(E("topk", "topk", _fn("topk"), _topk, _topk_samples, dtypes=sorted_dtypes))
    out.append(
        E("unique", "_unique2", _fn("unique"), _unique, _unique_samples, dtypes=sorted_dtypes)
    )
    out.append(
        E(
            "unique_dim",
            "unique_dim",
            _fn("unique"),
            _unique,
            lambda dt, rng: [s for s in _unique_samples(dt, rng) if "dim" in s.kwargs],
            dtypes=sorted_dtypes,
        )
    )
    # mutating primitives, through a view of a copy
    out.append(E("zero_", "zero_", _through_view("zero_"), lambda x: np.zeros_like(up(x)), _one))
    out.append(
        E(
            "fill_",
            "fill_",
            _through_view("fill_"),
            lambda x, v: np.full_like(up(x), up(v)),
            _fill_samples,
        )
    )
    out.append(
        E("fill", "fill", _fn("fill"), lambda x, v: np.full_like(up(x), up(v)), _fill_samples)
    )
    out.append(
        E(
            "normal_",
            "normal_",
            _through_view("normal_"),
            None,
            lambda dt, rng: [*_one(dt, rng), _s(_v(dt, rng, 3), 1.0, 0.5, name="mean-std")],
            random=True,
            supported=("float16", "bfloat16", "float32", "float64"),
        )
    )
    out.append(
        E(
            "copy_",
            "copy_",
            _through_view("copy_"),
            lambda x, s: np.broadcast_to(up(s), x.shape).astype(up(x).dtype),
            _copy_samples,
        )
    )
    return out


def _one_3d(dtype: str, rng: np.random.Generator) -> list[Sample]:
    return [
        _s(_v(dtype, rng, 3, 4, 5), plain=True),
        _s(_v(dtype, rng, 5, 4, 3).transpose(2, 1, 0), name="nc"),
    ]


def _assign(x: Any, key: Any, value: Any) -> Any:
    out = up(x).copy()
    out[key] = value
    return out

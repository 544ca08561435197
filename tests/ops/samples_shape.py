"""Sample inputs of the shape, view, indexing, joining and sorting operators.

Imports: NumPy and the sibling ``samples`` module.

Samples cover contiguous, non-contiguous (transposed), 0-d and empty inputs, and
the errors PyTorch raises (bad dims, sizes, indices).  Samples whose result
shape depends on the data (boolean masks, ``nonzero``, ``unique``) are
``meta_raises``: meta kernels raise there, as PyTorch's do; ``data_error``
samples fail on the CPU because of index values, which meta tensors cannot see.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .samples import INT_NAMES, Sample, noncontig, up, values


def _s(
    *args: Any, name: str = "", plain: bool = False, data_error: bool = False, **kw: Any
) -> Sample:
    sample = Sample(tuple(args), kw, name=name or repr(kw or args[1:]), plain=plain)
    sample.data_error = data_error
    return sample


def _v(dtype: str, rng: np.random.Generator, *shape: int, lo: float = -3, hi: float = 3) -> Any:
    return values(dtype, shape, rng, lo, hi)


def _meta_raises(sample: Sample) -> Sample:
    sample.meta_raises = True
    return sample


# -- samples -------------------------------------------------------------------------------------------
def _view_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 3, 4)
    return [
        _s(x, [4, 3], plain=True),
        _s(x, [-1]),
        _s(x, [2, -1, 2]),
        _s(noncontig(dtype, rng), [3, 4], name="noncontig-same"),
        _s(noncontig(dtype, rng), [12], name="noncontig-flat"),  # raises in both
        _s(_v(dtype, rng), [1, 1], name="0-d"),
        _s(_v(dtype, rng, 0, 3), [3, 0, 1], name="empty"),
        _s(x, [5], name="bad-size"),
    ]


def _transpose_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 2, 3, 4)
    return [
        _s(x, 0, 2, plain=True),
        _s(x, -1, 0),
        _s(noncontig(dtype, rng), 0, 1, name="noncontig"),
        _s(_v(dtype, rng), 0, -1, name="0-d"),
        _s(x, 0, 3, name="bad-dim"),
    ]


def _permute_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 2, 3, 4)
    return [
        _s(x, [2, 0, 1], plain=True),
        _s(x, [-1, 1, 0]),
        _s(noncontig(dtype, rng), [1, 0], name="noncontig"),
        _s(x, [0, 1], name="too-few"),
        _s(x, [0, 0, 1], name="repeated"),
    ]


def _expand_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    return [
        _s(_v(dtype, rng, 3, 1), [3, 4], plain=True),
        _s(_v(dtype, rng, 3, 1), [2, 3, 4]),
        _s(_v(dtype, rng, 3, 1), [-1, 5]),
        _s(_v(dtype, rng), [2, 3], name="0-d"),
        _s(_v(dtype, rng, 3, 2), [3, 4], name="mismatch"),
        _s(_v(dtype, rng, 3, 2), [2], name="too-few"),
    ]


def _select_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 3, 4)
    return [
        _s(x, 0, 1, plain=True),
        _s(x, 1, -1),
        _s(noncontig(dtype, rng), 1, 2, name="noncontig"),
        _s(x, 0, 3, name="out-of-range"),
    ]


def _slice_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 5, 4)
    return [
        _s(x, 0, 1, 4, 1, plain=True),
        _s(x, 1, 0, 4, 2),
        _s(x, 0, -3, 100, 1),
        _s(noncontig(dtype, rng), 1, 1, 3, 1, name="noncontig"),
    ]


def _diagonal_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 3, 4)
    return [
        _s(x, plain=True),
        _s(x, offset=1),
        _s(x, offset=-2),
        _s(x, offset=5),
        _s(_v(dtype, rng, 2, 3, 4), 0, 1, 2, name="3-d"),
        _s(noncontig(dtype, rng), name="noncontig"),
        _s(x, 0, 1, 1, name="same-dims"),
    ]


def _dim_samples(*dims: Any, shape: tuple[int, ...] = (3, 4)) -> Callable[..., list[Sample]]:
    def samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
        x = _v(dtype, rng, *shape)
        out = [_s(x, d, plain=i == 0) for i, d in enumerate(dims)]
        out.append(_s(noncontig(dtype, rng), dims[0], name="noncontig"))
        return out

    return samples


def _split_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 5, 4)
    return [
        _s(x, 2, plain=True),
        _s(x, 3, 1),
        _s(x, [1, 3], 1, name="sections"),
        _s(noncontig(dtype, rng), 2, 1, name="noncontig"),
        _s(x, [1, 1], 1, name="bad-sections"),
    ]


def _squeeze_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 1, 3, 1)
    return [
        _s(x, plain=True),
        _s(x, 0),
        _s(x, 1),
        _s(x, (0, 2), name="dims"),
        _s(_v(dtype, rng), name="0-d"),
    ]


def _narrow_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 5, 4)
    return [
        _s(x, 0, 1, 2, plain=True),
        _s(x, 1, -2, 2),
        _s(noncontig(dtype, rng), 0, 1, 3, name="noncontig"),
        _s(x, 0, 4, 2, name="too-long"),
    ]


def _flatten_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 2, 3, 4)
    return [
        _s(x, plain=True),
        _s(x, 1),
        _s(x, 0, 1),
        _s(np.ascontiguousarray(x.transpose(2, 1, 0)).transpose(2, 1, 0), 1, name="noncontig"),
        _s(_v(dtype, rng), name="0-d"),
    ]


def _unflatten_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 2, 12)
    return [
        _s(x, 1, (3, 4), plain=True),
        _s(x, -1, (2, -1)),
        _s(noncontig(dtype, rng), 0, (3, 1), name="noncontig"),
        _s(x, 1, (5, 2), name="bad-sizes"),
    ]


def _pair_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    return [
        _s(_v(dtype, rng, 3, 1), _v(dtype, rng, 2, 3, 4), plain=True),
        _s(_v(dtype, rng, 2, 6), _v(dtype, rng, 3, 4), name="same-numel"),
    ]


def _same_numel_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    return [
        _s(_v(dtype, rng, 2, 6), _v(dtype, rng, 3, 4), plain=True),
        _s(noncontig(dtype, rng), _v(dtype, rng, 12), name="nc"),
    ]


def _tile_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 2, 3)
    return [_s(x, (2,), plain=True), _s(x, (2, 1, 2)), _s(noncontig(dtype, rng), (1, 2), name="nc")]


def _one(dtype: str, rng: np.random.Generator) -> list[Sample]:
    return [
        _s(_v(dtype, rng, 3, 4), plain=True),
        _s(noncontig(dtype, rng), name="noncontig"),
        _s(_v(dtype, rng), name="0-d"),
    ]


def _index_samples(key: Callable[..., Any], mask: bool = False) -> Callable[..., list[Sample]]:
    """x[key(...)] on a (3, 4, 5) tensor, non-contiguous too; index arrays built per sample."""

    def samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
        x = _v(dtype, rng, 3, 4, 5)
        nc = _v(dtype, rng, 5, 4, 3).transpose(2, 1, 0)
        out = [Sample((x, key(rng)), name="plain", plain=True), Sample((nc, key(rng)), name="nc")]
        if mask:
            for s in out:
                s.meta_raises = True
        return out

    return samples


def _int_index(rng: np.random.Generator) -> Any:
    return np.array([2, 0, 2], dtype=np.int64)


def _mask(rng: np.random.Generator) -> Any:
    m = rng.random((3, 4)) < 0.5
    m[0, 0] = True
    return m


def _gather_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 3, 4)
    idx = rng.integers(0, 3, (2, 4)).astype(np.int64)
    return [
        _s(x, 0, idx, plain=True),
        _s(x, 1, rng.integers(0, 4, (3, 2)).astype(np.int64)),
        _s(noncontig(dtype, rng), 1, rng.integers(0, 4, (2, 2)).astype(np.int64), name="nc"),
        _s(x, 0, np.array([[5]], dtype=np.int64), name="out-of-range", data_error=True),
        _s(x, 0, idx.astype(np.int32), name="int32-index"),
    ]


def _scatter_samples(kind: str) -> Callable[..., list[Sample]]:
    def samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
        x = _v(dtype, rng, 3, 4)
        # distinct positions per column, so overwriting scatters are deterministic
        idx = np.stack([rng.permutation(3)[:2] for _ in range(4)], axis=1).astype(np.int64)
        src = _v(dtype, rng, 2, 4)
        out = [_s(x, 0, idx, src, plain=True), _s(noncontig(dtype, rng), 0, idx[:, :3], src[:, :3])]
        if kind == "value":
            out = [_s(x, 0, idx, value=1 if dtype != "bool" else True, plain=True)]
        if kind == "reduce":
            out = [_s(x, 0, idx, src, reduce="add", plain=True)]
            if dtype != "bool":
                out.append(_s(x, 0, idx, src, reduce="multiply"))
        if kind == "add":
            dup = rng.integers(0, 3, (3, 4)).astype(np.int64)
            out.append(_s(x, 0, dup, _v(dtype, rng, 3, 4), name="repeated"))
        return out

    return samples


def _masked_fill_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 3, 4)
    m = rng.random((3, 4)) < 0.5
    value = True if dtype == "bool" else 2
    return [
        _s(x, m, value, plain=True),
        _s(x, m[0], value, name="broadcast-mask"),
        _s(noncontig(dtype, rng), m, value, name="nc"),
        _s(x, m, _v(dtype, rng), name="0-d-value"),
        _s(x[0], m, value, name="broadcast-self"),
    ]


def _masked_select_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 3, 4)
    return [
        _meta_raises(_s(x, _mask(rng), plain=True)),
        _meta_raises(_s(x, _mask(rng)[0], name="broadcast")),
    ]


def _nonzero_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    return [
        _meta_raises(_s(_v(dtype, rng, 3, 4, lo=-1, hi=1), plain=True)),
        _meta_raises(_s(noncontig(dtype, rng, lo=-1, hi=1), name="nc")),
        _meta_raises(_s(_v(dtype, rng, lo=-1, hi=1), name="0-d")),
        _meta_raises(_s(_v(dtype, rng, 0, 3), name="empty")),
    ]


def _take_along_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 3, 4)
    return [
        _s(x, rng.integers(0, 4, (3, 2)).astype(np.int64), 1, plain=True),
        _s(x, rng.integers(0, 3, (1, 4)).astype(np.int64), 0, name="broadcast"),
        _s(x, rng.integers(0, 12, (5,)).astype(np.int64), name="flat"),
    ]


def _index_select_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 3, 4)
    return [
        _s(x, 0, np.array([2, 0, 2], dtype=np.int64), plain=True),
        _s(noncontig(dtype, rng), 1, np.array([1], dtype=np.int64), name="nc"),
        _s(x, 1, np.array([4], dtype=np.int64), name="out-of-range", data_error=True),
    ]


def _index_put_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 3, 4)
    idx = np.array([0, 2], dtype=np.int64)
    return [
        _s(x, [idx], _v(dtype, rng, 2, 4), plain=True),
        _s(x, [idx, np.array([1, 3], dtype=np.int64)], _v(dtype, rng), name="pairs"),
        _s(x, [np.array([1, 1], dtype=np.int64)], _v(dtype, rng, 4), accumulate=True, name="acc"),
    ]


def _cat_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    a, b = _v(dtype, rng, 2, 3), _v(dtype, rng, 1, 3)
    other = "int64" if dtype == "float64" else "float64"
    return [
        _s([a, b], plain=True),
        _s([a, _v(dtype, rng, 2, 2)], 1, name="dim1"),
        _s([a, noncontig(dtype, rng)[:2]], 1, name="nc"),
        _s([a, _v(dtype, rng, 0)], name="legacy-empty"),
        _s([a, _v(other, rng, 1, 3)], name="promote"),
        _s([a, _v(dtype, rng, 2, 4)], name="mismatch"),
        _s([a, _v(dtype, rng, 3)], name="ndim-mismatch"),
    ]


def _stack_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    a, b = _v(dtype, rng, 2, 3), _v(dtype, rng, 2, 3)
    return [
        _s([a, b], plain=True),
        _s([a, b, a], -1, name="last"),
        _s([a, noncontig(dtype, rng)[:2]], 1, name="nc"),
        _s([a, _v(dtype, rng, 3)], name="mismatch"),
        _s([_v(dtype, rng), _v(dtype, rng)], name="0-d"),
    ]


def _sort_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 3, 5)
    out = [
        _s(x, plain=True),
        _s(x, 0),
        _s(x, descending=True),
        _s(noncontig(dtype, rng), 0, True, name="nc"),
        _s(_v(dtype, rng), name="0-d"),
    ]
    if dtype in ("float16", "bfloat16", "float32", "float64"):
        sp = np.array([2.0, np.nan, -np.inf, 1.0, np.inf, -1.0]).astype(x.dtype)
        out.append(_s(sp, name="special"))
        out.append(_s(sp, descending=True, name="special-desc"))
    return out


def _topk_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 3, 5)
    return [
        _s(x, 2, plain=True),
        _s(x, 1, 0),
        _s(x, 3, largest=False),
        _s(noncontig(dtype, rng), 2, 0, name="nc"),
        _s(x, 6, name="k-too-big"),
    ]


def _unique_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 3, 4, lo=-1, hi=2)
    x = np.round(up(x)).astype(x.dtype) if dtype not in INT_NAMES + ("bool",) else x
    out = [
        _s(x, plain=True),
        _s(x, return_inverse=True, return_counts=True),
        _s(x, dim=0, return_inverse=True, return_counts=True),
        _s(np.concatenate([x, x[:1]]), dim=0, return_counts=True, name="dup-rows"),
        _s(noncontig(dtype, rng, lo=-1, hi=2), return_counts=True, name="nc"),
    ]
    return [_meta_raises(s) for s in out]


def _fill_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    value = True if dtype == "bool" else 3
    return [
        _s(_v(dtype, rng, 3, 4), value, plain=True),
        _s(noncontig(dtype, rng), value, name="nc"),
        _s(_v(dtype, rng, 3, 4), _v(dtype, rng), name="0-d-tensor"),
    ]


def _copy_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    other = "float32" if dtype != "float32" else "int64"
    return [
        _s(_v(dtype, rng, 3, 4), _v(dtype, rng, 3, 4), plain=True),
        _s(_v(dtype, rng, 3, 4), _v(dtype, rng, 4), name="broadcast"),
        _s(noncontig(dtype, rng), _v(other, rng, 3, 4), name="cross-dtype"),
        _s(_v(dtype, rng, 3), _v(dtype, rng, 2, 3), name="bad-broadcast"),
    ]

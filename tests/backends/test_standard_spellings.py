"""The standard's spellings of NumPy-only operations in ``backends.common``, each against
NumPy's own (the path the CPU takes), over array_api_strict where it is installed.

``_take_index`` (Note [Indexing by take]) against NumPy's advanced indexing,
``sliding_windows`` against ``sliding_window_view``, ``standard_diag`` against
``np.diag``, and ``Formulas.fmod`` made from ``remainder`` against ``np.fmod``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from backends.common import conv, joining
from backends.common.formulas import Formulas
from backends.common.indexing import _take_index

xp = pytest.importorskip("array_api_strict", reason="the strict extra (array-api-strict)")


def _np(a: object) -> np.ndarray:
    return np.asarray(np.from_dlpack(a))


@st.composite
def _indexing(draw: st.DrawFn) -> tuple[np.ndarray, tuple[object, ...]]:
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    x = np.arange(int(np.prod(shape))).reshape(shape)
    n = draw(st.integers(1, len(shape)))
    key: list[object] = []
    rng = np.random.default_rng(draw(st.integers(0, 99)))
    index_shape = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    for d in range(n):
        kind = draw(st.sampled_from(["all", "int", "mask"] if d == 0 else ["all", "int"]))
        if kind == "all":
            key.append(slice(None))
        elif kind == "int":
            key.append(rng.integers(-shape[d], shape[d], index_shape))
        else:
            key.append(rng.random(shape[d]) < 0.5)
    if all(isinstance(k, slice) for k in key):
        key[0] = rng.integers(0, shape[0], index_shape)
    return x, tuple(key)


@given(_indexing())
def test_take_index_is_numpy_indexing(case: tuple[np.ndarray, tuple[object, ...]]) -> None:
    x, key = case
    strict_key = tuple(k if isinstance(k, slice) else xp.asarray(k) for k in key)
    try:
        want = x[key]
    except IndexError:  # index arrays that do not broadcast (an all-False mask beside one)
        with pytest.raises(IndexError, match="could not be broadcast together with shapes"):
            _take_index(xp, xp.asarray(x), strict_key)
        return
    got = _np(_take_index(xp, xp.asarray(x), strict_key))
    np.testing.assert_array_equal(got, want)


def test_take_index_checks_bounds() -> None:
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 1 with size 3"):
        _take_index(xp, xp.ones((2, 3)), (slice(None), xp.asarray([0, 3])))


@given(
    st.integers(1, 3), st.integers(1, 6), st.integers(1, 6), st.integers(1, 3), st.integers(1, 3)
)
def test_sliding_windows_are_numpys(c: int, h: int, w: int, kh: int, kw: int) -> None:
    kh, kw = min(kh, h), min(kw, w)
    x = np.random.default_rng(h * 7 + w).standard_normal((2, c, h, w))
    got = _np(conv.sliding_windows(xp)(xp.asarray(x), (kh, kw), axis=(2, 3)))
    want = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    np.testing.assert_array_equal(got, want)


@given(st.integers(0, 5), st.integers(-4, 4), st.booleans())
def test_standard_diag_is_numpys(n: int, k: int, matrix: bool) -> None:
    x = np.arange(1.0, n * (n + 1) + 1).reshape(n, n + 1) if matrix else np.arange(1.0, n + 1)
    got = _np(joining.standard_diag(xp)(xp.asarray(x), k))
    np.testing.assert_array_equal(got, np.diag(x, k))


@given(
    st.lists(st.integers(-50, 50), min_size=1, max_size=8),
    st.integers(-7, 7).filter(lambda v: v != 0),
)
def test_integer_fmod_from_remainder(values: list[int], divisor: int) -> None:
    F = Formulas(xp, kind_of=lambda d: "i", standard=True)
    assert F._fmod is None  # the standard has no fmod: the remainder path runs
    x = np.asarray(values, dtype=np.int64)
    got = _np(F.fmod(xp.asarray(x), xp.asarray(divisor)))
    np.testing.assert_array_equal(got, np.fmod(x, divisor))

"""backends/cuda's own kernels, run on the CPU by the harness, against NumPy.

Each source is built once with every instance ``backends.cuda._tables.instances(tensor.op_info)``
lists (the same cached libraries the plugin's sessions load) and its kernels are
launched as the Python launchers launch them: strided elementwise kernels through
``backends.cuda._launch.geometry`` (transposed, sliced, reversed, broadcast operands,
and grids smaller than the data so the grid-stride loops wrap), the row reductions in
each of their plans (one pass, column chunks and a finishing pass, flat vector loads),
scans across several 512-element tiles, and the compare-and-swap scatter-multiply on
neighbouring bytes of one word, and the binary searches (rows, sorters, NaNs, grids
smaller than the values).  These are the tests that catch a wrong stride, a
missing barrier or an off-by-one in a scan without a GPU (README: "Kernels on the CPU").
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tensor
from backends.cuda import _compile, _tables
from backends.cuda import _launch as geometry
from tests.ops import opdb_search

from . import _build, _launch

BF16 = np.dtype(ml_dtypes.bfloat16)
pytestmark = pytest.mark.cudasim


def _library(source: str) -> _launch.Library:
    names = _tables.instances(tensor.op_info)[source]
    return _launch.Library(_build.build(_compile.source_text(source), _compile.OPTIONS, names))


@pytest.fixture(scope="module")
def ew(toolchain: None) -> _launch.Library:
    return _library("elementwise.cu")


@pytest.fixture(scope="module")
def red(toolchain: None) -> _launch.Library:
    return _library("reduce.cu")


@pytest.fixture(scope="module")
def scatter(toolchain: None) -> _launch.Library:
    return _library("scatter.cu")


@pytest.fixture(scope="module")
def search(toolchain: None) -> _launch.Library:
    return _library("search.cu")


ZERO = np.float64(0.0)
RNG = np.random.default_rng(17)


# -- elementwise: strided layouts through the Geometry ----------------------------------------
def _layouts() -> list[tuple[str, np.ndarray]]:
    base = RNG.standard_normal((6, 10, 7)).astype(np.float32)
    return [
        ("transposed", base[:, :, 0].T),
        ("sliced", base[1:5, ::3, 2]),
        ("reversed", base[::-1, 2, ::-2]),
        ("permuted", base.transpose(2, 0, 1)[:, ::2]),
        ("column", base[:, 3, :1]),
    ]


@pytest.mark.parametrize(("name", "x"), _layouts(), ids=[n for n, _ in _layouts()])
def test_unary_strided_reads_through_the_strides(ew: _launch.Library, name: str,
                                                 x: np.ndarray) -> None:  # fmt: skip
    expr = _tables.unary_expressions("Neg", "float32", "float32")["strided"]
    out = np.empty(x.shape, np.float32)
    g = geometry.geometry(x.shape, [x])
    ew.kernel(expr)(geometry.grid(out.size), (256,), (x, out, g, ZERO, ZERO, ZERO))
    np.testing.assert_array_equal(out, -x)


@pytest.mark.parametrize(
    ("xs", "ys"),
    [((5, 1, 4), (3, 1)), ((1, 7), (6, 1)), ((4, 6), (6,)), ((2, 3, 4, 5), (3, 1, 5))],
)
def test_binary_strided_broadcasts(ew: _launch.Library, xs: tuple[int, ...],
                                   ys: tuple[int, ...]) -> None:  # fmt: skip
    expr = _tables.binary_expressions("Sub", "float64", "float64")["strided"]
    x = RNG.standard_normal(xs[::-1]).T  # Fortran-ordered: not contiguous
    y = RNG.standard_normal(ys)
    shape = np.broadcast_shapes(x.shape, y.shape)
    out = np.empty(shape, np.float64)
    g = geometry.geometry(shape, [x, y])
    ew.kernel(expr)(geometry.grid(out.size), (256,), (x, y, out, g, ZERO, ZERO, ZERO))
    np.testing.assert_array_equal(out, x - y)


def test_grid_stride_loops_cover_more_than_the_grid(ew: _launch.Library) -> None:
    x = RNG.integers(-50, 50, (40, 90)).T  # int64, transposed
    out = np.empty(x.shape, np.int64)
    expr = _tables.binary_expressions("Mul", "int64", "int64")["scalar"]
    g = geometry.geometry(x.shape, [x])
    ew.kernel(expr)((3,), (128,), (x, np.int64(-3), out, g, ZERO, ZERO, ZERO))
    np.testing.assert_array_equal(out, x * -3)
    contig = _tables.binary_expressions("Mul", "int64", "int64")["scalar_contig"]
    flat = np.ascontiguousarray(x)
    out2 = np.empty(flat.shape, np.int64)
    ew.kernel(contig)((2,), (64,), (flat, np.int64(5), out2, np.int64(flat.size), ZERO, ZERO, ZERO))
    np.testing.assert_array_equal(out2, flat * 5)


@pytest.mark.parametrize("dtype", [np.dtype(np.float16), BF16])
def test_half_precision_computes_in_float(ew: _launch.Library, dtype: np.dtype) -> None:
    name = dtype.name
    x = (RNG.standard_normal(300) * 3).astype(dtype)
    out = np.empty(300, dtype)
    expr = _tables.unary_expressions("Exp", name, name)["contig"]
    ew.kernel(expr)(geometry.grid(300), (256,), (x, out, np.int64(300), ZERO, ZERO, ZERO))
    expected = np.exp(x.astype(np.float32)).astype(dtype)  # one rounding, from float
    np.testing.assert_array_equal(out.astype(np.float32), expected.astype(np.float32))


# -- reductions: every plan of backends.cuda.reduction._reduce ------------------------------
def _rows(red: _launch.Library, expr: str, m: np.ndarray, out: np.ndarray, chunk: int,
          grid_y: int = 1) -> None:  # fmt: skip
    rows, cols = m.shape
    red.kernel(expr)((min(rows, 65535), grid_y), (256,),
                     (m, out, np.int64(rows), np.int64(cols), np.int64(chunk)))  # fmt: skip


@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (7, 300), (2, 1000), (300, 33)])
def test_reduce_rows_one_pass(red: _launch.Library, shape: tuple[int, int]) -> None:
    exprs = _tables.reduction_expressions("sum", "float64")
    m = RNG.standard_normal(shape)
    out = np.empty(shape[0], np.float64)
    _rows(red, exprs["rows"], m, out, shape[1])
    np.testing.assert_allclose(out, m.sum(axis=1), rtol=1e-12)


@pytest.mark.parametrize("cols", [20000, 70001])
def test_reduce_rows_in_chunks_then_finished(red: _launch.Library, cols: int) -> None:
    exprs = _tables.reduction_expressions("sum", "int64")
    m = RNG.integers(-1000, 1000, (2, cols))
    chunk_cols = 256 * 32
    chunks = (cols + chunk_cols - 1) // chunk_cols
    chunk = (cols + chunks - 1) // chunks
    partial = np.empty(2 * chunks, np.int64)
    _rows(red, exprs["partial"], m, partial, chunk, grid_y=chunks)
    out = np.empty(2, np.int64)
    _rows(red, exprs["finish"], partial.reshape(2, chunks), out, chunks)
    np.testing.assert_array_equal(out, m.sum(axis=1))


@pytest.mark.parametrize("n", [1 << 16, (1 << 16) + 3])
def test_reduce_flat_vector_loads_then_finished(red: _launch.Library, n: int) -> None:
    exprs = _tables.reduction_expressions("amax", "float32")
    x = RNG.standard_normal(n).astype(np.float32)
    x[n // 3] = 50.0
    x[-1] = 60.0 if n % 4 else x[-1]  # the tail, when there is one
    blocks = min(1024, (n + 1023) // 1024)
    partial = np.empty(blocks, np.float32)
    red.kernel(exprs["flat"])((blocks,), (256,), (x, partial, np.int64(n)))
    out = np.empty((), np.float32)
    _rows(red, exprs["finish"], partial.reshape(1, blocks), out.reshape(1), blocks)
    assert out == x.max()


@pytest.mark.parametrize(
    ("name", "dtype"),
    [
        ("amax", "float32"),
        ("amin", "int16"),
        ("prod", "float64"),
        ("all", "bool"),
        ("any", "bool"),
    ],  # fmt: skip
)
def test_reduce_rows_operators(red: _launch.Library, name: str, dtype: str) -> None:
    expr = _tables.reduction_expressions(name, dtype)["rows"]
    _, _, out_name = _tables.reduction_types(name, dtype)
    if dtype == "bool":
        m = RNG.random((5, 70)) < (0.98 if name == "all" else 0.02)
        m[0] = name == "all"
    elif dtype == "float64":
        m = RNG.uniform(0.5, 1.5, (5, 70))
    else:
        m = RNG.integers(-100, 100, (5, 70)).astype(dtype)
    if name == "amax":
        m[2, 40] = np.nan  # NaN propagates
    out = np.empty(5, out_name)
    _rows(red, expr, m, out, 70)
    reference = {"amax": np.max, "amin": np.min, "prod": np.prod, "all": np.all, "any": np.any}
    expected = reference[name](m, axis=1)
    if dtype == "float64":
        np.testing.assert_allclose(out, expected, rtol=1e-12)
    else:
        np.testing.assert_array_equal(out, expected)


# -- scans: tiles of 512 with a running carry -----------------------------------------------
@pytest.mark.parametrize("cols", [1, 31, 512, 513, 1300])
def test_scan_rows_across_tiles(red: _launch.Library, cols: int) -> None:
    expr = _tables.reduction_expressions("cumsum", "int64")["scan"]
    m = RNG.integers(-9, 10, (3, cols))
    out = np.empty_like(m)
    red.kernel(expr)((3,), (512,), (m, out, np.int64(3), np.int64(cols)))
    np.testing.assert_array_equal(out, np.cumsum(m, axis=1))


def test_scan_rows_product_and_more_rows_than_blocks(red: _launch.Library) -> None:
    expr = _tables.reduction_expressions("cumprod", "float64")["scan"]
    m = RNG.uniform(0.9, 1.1, (5, 600))
    out = np.empty_like(m)
    red.kernel(expr)((2,), (512,), (m, out, np.int64(5), np.int64(600)))  # rows wrap
    np.testing.assert_allclose(out, np.cumprod(m, axis=1), rtol=1e-12)


# -- scatter: compare-and-swap multiply on words shared by neighbours -------------------------
@pytest.mark.parametrize(
    "dtype",
    [
        "bool",
        "uint8",
        "int8",
        "int16",
        "int32",
        "int64",
        "float16",
        "bfloat16",
        "float32",
        "float64",
    ],  # fmt: skip
)
def test_scatter_mul_applies_every_repeat(scatter: _launch.Library, dtype: str) -> None:
    dt = BF16 if dtype == "bfloat16" else np.dtype(dtype)
    x = RNG.integers(1, 4, 9).astype(dt) if dtype != "bool" else RNG.random(9) < 0.8
    offsets = np.array([0, 1, 2, 3, 1, 1, 4, 5, 0, 8, 7, 6, 2], np.int64)  # repeats, neighbours
    values = (RNG.integers(-2, 3, offsets.size).astype(dt) if dtype != "bool"
              else RNG.random(offsets.size) < 0.7)  # fmt: skip
    if dtype in ("uint8", "bool"):
        values = np.abs(values.astype(np.int64)).astype(dt)
    expected = x.copy()
    np.multiply.at(expected, offsets, values)
    name = _tables.CTYPES[dtype]
    scatter.kernel(f"scatter_mul<{name}>")((1,), (256,), (x, offsets, values, np.int64(13)))
    np.testing.assert_array_equal(x.astype(np.float64), expected.astype(np.float64))


# -- search: PyTorch's binary search per value, and isin's search in sorted test elements ---
_torch_search = opdb_search._bisect  # ATen's cus_lower_bound / cus_upper_bound, one value


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("sorted_rows", [True, False])
def test_searchsorted_rows_follows_pytorchs_search(
    search: _launch.Library, right: bool, sorted_rows: bool
) -> None:
    rows, n, per_row = 3, 9, 300  # 900 values on one 256-thread block: the grid loop wraps
    bd = np.sort(RNG.integers(-5, 5, (rows, n)).astype(np.float32), axis=1)
    bd[1, -2:] = np.nan  # NaN boundaries: the path matters, as in PyTorch
    order = None
    if not sorted_rows:  # a shuffled row read through its sorter
        perm = np.stack([RNG.permutation(n) for _ in range(rows)])
        shuffled = np.empty_like(bd)
        np.put_along_axis(shuffled, perm, bd, axis=1)
        bd, order = shuffled, perm.astype(np.int64)
    v = RNG.integers(-6, 6, (rows, per_row)).astype(np.float32)
    v[0, :7] = np.nan
    out = np.empty(v.shape, np.int64)
    sorter = order if order is not None else np.zeros(1, np.int64)
    args = (bd, sorter, v, out, np.int64(v.size), np.int64(per_row), np.int64(n),
            np.int32(1), np.int32(right), np.int32(order is not None))  # fmt: skip
    search.kernel("searchsorted_rows<float, long long>")((1,), (256,), args)
    expected = [
        [_torch_search(bd[r].tolist(), x, right, None if order is None else order[r].tolist())
         for x in v[r].tolist()]
        for r in range(rows)
    ]  # fmt: skip
    np.testing.assert_array_equal(out, np.asarray(expected))


@pytest.mark.parametrize("dtype", ["int8", "float16", "bfloat16", "int64"])
def test_searchsorted_rows_one_row_int32_out(search: _launch.Library, dtype: str) -> None:
    dt = BF16 if dtype == "bfloat16" else np.dtype(dtype)
    bd = np.sort(RNG.integers(-20, 20, 33)).astype(dt)
    v = RNG.integers(-25, 25, 500).astype(dt)
    out = np.empty(v.shape, np.int32)
    args = (bd, np.zeros(1, np.int64), v, out, np.int64(v.size), np.int64(v.size),
            np.int64(bd.size), np.int32(0), np.int32(0), np.int32(0))  # fmt: skip
    name = _tables.CTYPES[dtype]
    search.kernel(f"searchsorted_rows<{name}, int>")((1,), (64,), args)
    wide = bd.astype(np.float64)
    np.testing.assert_array_equal(out, np.searchsorted(wide, v.astype(np.float64)))


@pytest.mark.parametrize("invert", [False, True])
def test_isin_sorted_finds_present_elements_and_never_nan(
    search: _launch.Library, invert: bool
) -> None:
    t = np.sort(np.concatenate([RNG.integers(-9, 9, 40).astype(np.float64), [np.nan] * 3]))
    x = np.concatenate([RNG.integers(-12, 12, 700).astype(np.float64), [np.nan, -0.0]])
    out = np.empty(x.shape, np.bool_)
    args = (x, t, out, np.int64(x.size), np.int64(t.size), np.int32(invert))
    search.kernel("isin_sorted<double>")((2,), (128,), args)
    np.testing.assert_array_equal(out, np.isin(x, t, invert=invert))

"""Note [Float32 erf by SciPy] (backends/cpu/elementwise.py): the CPU's float32 erf by
SciPy's ufunc gives ``math.erf``'s bits rounded to float32, for every value kind, on both
sides of the guard (float32 arrays take SciPy; float64, the half-precision dtypes, which
compute in float32, and non-arrays take or reach ``math.erf``), and erf, erfc and gelu
agree with PyTorch where it is installed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tensor as tt
from backends.cpu import elementwise as cpu_elementwise

_MATH_ERF = np.frompyfunc(math.erf, 1, 1)
_EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38, 3.9, 4.0, 5.9, 6.0, 9.5]


def _by_math(x: np.ndarray) -> np.ndarray:
    """erf element by element by ``math.erf``, rounded to ``x``'s dtype."""
    return np.asarray(_MATH_ERF(x), dtype=np.float64).astype(x.dtype)


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """The same bits, a NaN's payload aside (its sign counts): ``math.erf`` returns a NaN
    input itself, payload and all, SciPy a NaN of its own (PyTorch's kernels keep no
    payload either); hypothesis found a float32 NaN whose payload survived only the first."""

    def canonical(x: np.ndarray) -> np.ndarray:
        return np.where(np.isnan(x), np.copysign(np.array(np.nan, x.dtype), x), x)

    return (
        a.dtype == b.dtype
        and a.shape == b.shape
        and canonical(a).tobytes() == canonical(b).tobytes()
    )


def test_float32_erf_is_math_erf_rounded_on_many_values() -> None:
    rng = np.random.default_rng(0)
    x = np.concatenate(
        [
            rng.standard_normal(200_000) * 2,
            rng.uniform(-6, 6, 100_000),
            rng.standard_normal(100_000) * 1e-3,
            rng.standard_normal(50_000) * 1e-40,  # subnormals
            np.array(_EDGES + [-v for v in _EDGES]),
        ]
    ).astype(np.float32)
    got = cpu_elementwise._float32_erf(x)
    assert got is not None
    assert _same_bits(got, _by_math(x))
    assert np.signbit(cpu_elementwise._float32_erf(np.array([-0.0], np.float32))[0])


@settings(max_examples=200, deadline=None)
@given(
    x=hnp.arrays(
        np.float32,
        hnp.array_shapes(min_dims=0, max_dims=3, max_side=5),
        elements=st.floats(width=32, allow_nan=True, allow_infinity=True),
    )
)
def test_the_scipy_path_against_math_erf(x: np.ndarray) -> None:
    """The fast side of the guard (float32 arrays of any shape, 0-d included) against the
    general one; the kernel's result is an array of the input's shape either way."""
    got = cpu_elementwise._float32_erf(x)
    assert type(got) is np.ndarray
    assert _same_bits(got, _by_math(x))
    t = tt.erf(tt.tensor(x))
    assert _same_bits(t.numpy(), _by_math(x))


@pytest.mark.parametrize(
    "x",
    [
        np.array([0.5, -1.5], np.float64),
        np.array([0.5, -1.5], np.float16),
        np.float32(0.5),  # a NumPy scalar, not an array
        [0.5],
        np.array([0.5, -1.5], np.dtype(">f4")),  # byte-swapped float32
    ],
)
def test_other_inputs_are_left_to_math_erf(x: object) -> None:
    assert cpu_elementwise._float32_erf(x) is None


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16"])
def test_other_dtypes_keep_their_values(dtype: str) -> None:
    """float64 is ``math.erf``'s; half precision computes in float32 (by SciPy now) and
    rounds once, which ``math.erf`` rounded to float32 then to the dtype reproduces."""
    rng = np.random.default_rng(1)
    x64 = rng.standard_normal(1000) * 2
    t = tt.tensor(x64).to(getattr(tt, dtype))
    got = tt.erf(t)
    assert got.dtype is getattr(tt, dtype)
    if dtype == "float64":
        want = _by_math(x64)
    else:
        wide = t.to(tt.float32).numpy()
        want = tt.tensor(_by_math(wide)).to(getattr(tt, dtype)).numpy()
    assert got.numpy().tobytes() == want.tobytes()


def test_gelu_takes_the_same_erf() -> None:
    """gelu's exact formula calls the backend's erf: float32 gelu is the formula over
    ``math.erf`` rounded to float32, step by step in NumPy."""
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((16, 33)) * 3).astype(np.float32)
    want = 0.5 * x * (1 + _by_math(x * (1.0 / math.sqrt(2.0))))
    got = tt.nn.functional.gelu(tt.tensor(x)).numpy()
    assert _same_bits(got, want)


@pytest.mark.parametrize("op", ["erf", "erfc", "gelu"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_against_pytorch(op: str, dtype: str) -> None:
    torch = pytest.importorskip("torch", reason="PyTorch not installed: compared by its values")
    rng = np.random.default_rng(3)
    edges = _EDGES if op != "gelu" else [e for e in _EDGES if abs(e) != np.inf]
    # (PyTorch's float32 gelu of +inf is NaN, its float64 one inf: ours is inf for both.)
    x = np.concatenate([rng.standard_normal(5000) * 3, np.array(edges)]).astype(dtype)
    ours = {"erf": tt.erf, "erfc": tt.erfc, "gelu": tt.nn.functional.gelu}[op](tt.tensor(x))
    theirs = {"erf": torch.erf, "erfc": torch.erfc, "gelu": torch.nn.functional.gelu}[op](
        torch.from_numpy(x.copy())
    )
    # PyTorch's float32 erf is a polynomial within a few ulps; ours is correctly rounded.
    a, b = ours.numpy(), theirs.numpy()
    assert np.array_equal(np.isnan(a), np.isnan(b))
    eps = float(np.finfo(dtype).eps)
    if op == "gelu":  # x * (1 + erf(x / sqrt 2)) / 2 cancels for negative x: within x's ulps
        tol = 8 * eps * np.abs(x)
    else:  # PyTorch's float32 erf is a polynomial within a few ulps; ours correctly rounded
        tol = 4 * eps * np.abs(b)
    ok = np.isnan(a) | (np.abs(a - b) <= tol + np.finfo(dtype).smallest_subnormal)
    assert ok.all(), (x[~ok][:5], a[~ok][:5], b[~ok][:5])

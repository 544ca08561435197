"""The CUDA kernels' scalar math, run on the host: the one part of them a machine without a
GPU can execute.

The functors of ``backends/cuda/_include/ad_functors.cuh`` and the conversions of
``ad_types.cuh`` are ``__host__ __device__``.  A small driver compiled by ``nvcc``
(host code only) evaluates the tricky ones on chosen inputs and prints the results;
the test compares them with NumPy/ml_dtypes (which the CPU backend uses and which
follow PyTorch here).  Skipped, saying so, without ``nvcc``.
"""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

INCLUDE = Path(__file__).resolve().parents[2] / "backends" / "cuda" / "_include"
NVCC = shutil.which("nvcc")

FLOATS = [7.0, -7.0, 0.5, -0.0, 5.5, 2.5, -2.5, 1e300, 3.75, float("nan"), float("inf"), -3.0]
DIVISORS = [2.0, -2.0, 0.1, 3.0, 0.0, -3.5, 1e-300, 1.5, -0.25, 2.0, 3.0, 1.5]
INTS = [(7, 2), (-7, 2), (7, -2), (-7, -2), (0, 3), (-1, 5), (9, -4), (-9, 4)]
SHIFTS = [(1, 7), (-128, 8), (100, 9), (-3, 1), (64, 1), (-1, 100), (5, 0)]
ROUNDS = [(2.5, 0), (3.5, 0), (-2.5, 0), (1.2345, 2), (1250.0, -2), (1350.0, -2), (0.125, 2)]
BF16 = [1.0, 1.00390625, 1.01171875, 3.14159, -2.7182818, 65504.0, 1e-20, 3.0e38]
GELU = [-3.0, -0.5, 0.0, 0.7, 2.0]
SOFTPLUS = [(-2.0, 1.0, 20.0), (0.5, 1.0, 20.0), (25.0, 1.0, 20.0), (3.0, 2.0, 5.0)]

DRIVER = r"""
#include <cstdio>
#include "ad_functors.cuh"
using namespace ad;
static const Params none{0, 0, 0};
int main() {
%s
  return 0;
}
"""


def _body() -> str:
    lines = []
    for a, b in zip(FLOATS, DIVISORS, strict=True):
        for name, functor in (
            ("floor_divide", "FloorDivide"),
            ("remainder", "Remainder"),
            ("fmod", "Fmod"),
            ("maximum", "Maximum"),
            ("minimum", "Minimum"),
        ):
            lines.append(
                f'printf("{name} {a!r} {b!r} %.17g\\n", '
                f"(double){functor}(0,0,0)((double){_c(a)}, (double){_c(b)}));"
            )
    for a, b in INTS:
        for name, functor in (
            ("floor_divide_i", "FloorDivide"),
            ("remainder_i", "Remainder"),
            ("fmod_i", "Fmod"),
        ):
            lines.append(
                f'printf("{name} {a} {b} %lld\\n", {functor}(0,0,0)((long long){a}, '
                f"(long long){b}));"
            )
    for a, b in SHIFTS:
        for name, functor in (("left_shift", "ShiftLeft"), ("right_shift", "ShiftRight")):
            lines.append(
                f'printf("{name} {a} {b} %d\\n", (int){functor}(0,0,0)((signed char){a}, '
                f"(signed char){b}));"
            )
    for x, d in ROUNDS:
        lines.append(f'printf("round {x!r} {d} %.17g\\n", Round({d},0,0)((double){x!r}));')
    for x in BF16:
        lines.append(
            f'printf("bf16 {x!r} 0 %.17g\\n", (double)to_float(cast<__nv_bfloat16>({x!r}f)));'
        )
        lines.append(f'printf("f16 {x!r} 0 %.17g\\n", (double)to_float(cast<__half>({x!r}f)));')
    for x in GELU:
        for approx in (0, 1):
            lines.append(
                f'printf("gelu{approx} {x!r} 0 %.17g\\n", Gelu({approx},0,0)((double){x!r}));'
            )
    for x, beta, threshold in SOFTPLUS:
        lines.append(
            f'printf("softplus {x!r} {beta!r} %.17g\\n", '
            f"Softplus({beta!r},{threshold!r},0)((double){x!r}));"
        )
    for x in (float("nan"), -0.0, -3.0, 2.0):
        for name, functor in (("sign", "Sign"), ("relu", "Relu")):
            lines.append(
                f'printf("{name} {x!r} 0 %.17g\\n", (double){functor}(0,0,0)((double){_c(x)}));'
            )
    for x in (float("nan"), float("inf"), float("-inf"), 1.5):
        lines.append(f'printf("nan_to_num {x!r} 0 %.17g\\n", NanToNum(9,8,-8)((double){_c(x)}));')
    return "\n".join("  " + line for line in lines)


def _c(x: float) -> str:
    if math.isnan(x):
        return "__longlong_as_double_host(0x7ff8000000000000LL)"
    if math.isinf(x):
        return "(1.0/0.0)" if x > 0 else "(-1.0/0.0)"
    return repr(x)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str, str], float]:
    if NVCC is None:
        pytest.skip("nvcc not found on PATH: install the CUDA toolkit to run the functor test")
    work = tmp_path_factory.mktemp("functors")
    source = work / "driver.cu"
    helper = (
        "#include <cstring>\nstatic double __longlong_as_double_host(long long v) "
        "{ double d; std::memcpy(&d, &v, 8); return d; }\n"
    )
    source.write_text(helper + DRIVER % _body())
    exe = work / "driver"
    cmd = [NVCC, "-std=c++17", "-I", str(INCLUDE), "-o", str(exe), str(source)]
    built = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-4000:]
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, check=True)
    table = {}
    for line in out.stdout.splitlines():
        name, a, b, value = line.split()
        table[(name, a, b)] = float(value)
    return table


def _same(actual: float, expected: Any, what: str, rel: float = 0.0) -> None:
    expected = float(expected)
    if math.isnan(expected):
        assert math.isnan(actual), f"{what}: {actual} != nan"
    elif rel:
        assert actual == pytest.approx(expected, rel=rel, abs=1e-300), what
    else:
        assert actual == expected, f"{what}: {actual!r} != {expected!r}"
        assert math.copysign(1, actual) == math.copysign(1, expected), f"{what}: sign of zero"


def _remainder(a: Any, b: Any) -> Any:
    """PyTorch's float remainder (the CPU backend's): NumPy's, but a zero result keeps the
    dividend's sign."""
    r = np.remainder(a, b)
    return np.copysign(r, a) if r == 0 else r


def test_float_division_and_remainders(results: dict[tuple[str, str, str], float]) -> None:
    with np.errstate(all="ignore"):
        for a, b in zip(FLOATS, DIVISORS, strict=True):
            for name, ref in (
                ("floor_divide", np.floor_divide),
                ("remainder", _remainder),
                ("fmod", np.fmod),
                ("maximum", np.maximum),
                ("minimum", np.minimum),
            ):
                got = results[(name, _fmt(a), _fmt(b))]
                _same(got, ref(np.float64(a), np.float64(b)), f"{name}({a}, {b})")


def test_integer_division_remainder_and_shifts(results: dict[tuple[str, str, str], float]) -> None:
    for a, b in INTS:
        assert results[("floor_divide_i", str(a), str(b))] == a // b
        assert results[("remainder_i", str(a), str(b))] == a % b
        assert results[("fmod_i", str(a), str(b))] == int(np.fmod(a, b))
    for a, b in SHIFTS:
        # PyTorch (and NumPy): shifting by the width or more gives 0, or -1 for a negative
        # number shifted right.
        left = 0 if b >= 8 else int(np.left_shift(np.int8(a), np.int8(b)))
        right = (-1 if a < 0 else 0) if b >= 8 else int(np.right_shift(np.int8(a), np.int8(b)))
        assert results[("left_shift", str(a), str(b))] == left, (a, b)
        assert results[("right_shift", str(a), str(b))] == right, (a, b)


def test_round_half_even_with_decimals(results: dict[tuple[str, str, str], float]) -> None:
    for x, d in ROUNDS:
        _same(results[("round", repr(x), str(d))], np.round(x, d), f"round({x}, {d})")


def test_half_precision_conversions_round_to_nearest_even(
    results: dict[tuple[str, str, str], float],
) -> None:
    for x in BF16:
        _same(results[("bf16", repr(x), "0")], np.float32(x).astype(ml_dtypes.bfloat16), f"{x}")
        with np.errstate(over="ignore"):
            _same(results[("f16", repr(x), "0")], np.float32(x).astype(np.float16), f"{x}")


def test_activations(results: dict[tuple[str, str, str], float]) -> None:
    for x in GELU:
        exact = 0.5 * x * (1 + math.erf(x / math.sqrt(2)))
        tanh = 0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
        _same(results[("gelu0", repr(x), "0")], exact, f"gelu({x})", rel=1e-14)
        _same(results[("gelu1", repr(x), "0")], tanh, f"gelu_tanh({x})", rel=1e-14)
    for x, beta, threshold in SOFTPLUS:
        expected = x if x * beta > threshold else math.log1p(math.exp(beta * x)) / beta
        _same(results[("softplus", repr(x), repr(beta))], expected, f"softplus({x})", rel=1e-14)
    for x in (float("nan"), -0.0, -3.0, 2.0):
        sign = 0.0 if math.isnan(x) else float((x > 0) - (x < 0))
        _same(results[("sign", _fmt(x), "0")], sign, f"sign({x})")
        _same(results[("relu", _fmt(x), "0")], np.maximum(x, 0.0), f"relu({x})")
    for x, expected in ((float("nan"), 9), (float("inf"), 8), (float("-inf"), -8), (1.5, 1.5)):
        _same(results[("nan_to_num", _fmt(x), "0")], expected, f"nan_to_num({x})")


def _fmt(x: float) -> str:
    return repr(x)

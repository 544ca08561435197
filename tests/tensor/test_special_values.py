"""Special values against PyTorch: NaN, infinities, signed zeros, ties, subnormals, and
incoming gradients that are themselves infinite, NaN or zero; gradients first, then the
forward results where NumPy's conventions differ from PyTorch's (the sign of a zero).

The formulas follow PyTorch's (``derivatives.yaml`` and ``FunctionsManual.cpp``) in
their order of operations, so they agree at these points too: exact zeros where PyTorch
masks (``where(mask, grad, 0)``, not ``grad * 0``, which is NaN for an infinite
gradient), a NaN input passing its gradient where PyTorch's comparisons let it through
(relu, maximum), PyTorch's floor division in remainder's, its masked reciprocal in
atan2's, and so on.  Values are compared to 1e-12 relative (libm and SLEEF differ in
the last place), NaN with NaN, and the sign of every zero.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensor as tt

torch = pytest.importorskip("torch", reason="PyTorch is not installed: these tests compare with it")

pytestmark = pytest.mark.torch

VALUES = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -2.5, 1e-310, 30.0]
GRADS = [1.3, -0.7, np.inf, -np.inf, np.nan, 0.0, -0.0]


def _grid(nargs: int, values: list[float] = VALUES) -> tuple[list[np.ndarray], np.ndarray]:
    """Every combination of ``values`` for ``nargs`` inputs, each with every gradient."""
    combos = np.repeat(np.array(list(itertools.product(values, repeat=nargs))), len(GRADS), 0)
    grad = np.tile(np.array(GRADS), len(combos) // len(GRADS))
    return [combos[:, i].copy() for i in range(nargs)], grad


def _grads(lib: Any, fn: Callable[..., Any], arrays: list[np.ndarray], grad: Any) -> list[Any]:
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *inputs)
    if grad is None:
        grad = np.linspace(0.5, 1.7, out.numel()).reshape(tuple(out.shape))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        found = lib.autograd.grad(out, inputs, lib.tensor(grad), allow_unused=True)
    return [None if g is None else g.detach().numpy() for g in found]


def _assert_same(ours: np.ndarray, theirs: np.ndarray, where: str) -> None:
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=0, equal_nan=True, err_msg=where)
    zeros = (ours == 0) & (theirs == 0)
    wrong = np.flatnonzero(np.signbit(ours[zeros]) != np.signbit(theirs[zeros]))
    assert not wrong.size, f"{where}: zeros of the other sign at {np.flatnonzero(zeros)[wrong]}"


def _check(fn: Callable[..., Any], arrays: list[np.ndarray], grad: Any = None) -> None:
    with np.errstate(all="ignore"):
        ours, theirs = _grads(tt, fn, arrays, grad), _grads(torch, fn, arrays, grad)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert (a is None) == (b is None), f"input {i}: None against {b if a is None else a}"
        if a is not None:
            _assert_same(a, b, f"input {i}")


UNARY: dict[str, Callable[..., Any]] = {
    "relu": lambda lib, x: lib.relu(x),
    "floor": lambda lib, x: lib.floor(x),
    "ceil": lambda lib, x: lib.ceil(x),
    "trunc": lambda lib, x: lib.trunc(x),
    "round": lambda lib, x: lib.round(x),
    "sign": lambda lib, x: lib.sign(x),
    "rsqrt": lambda lib, x: lib.rsqrt(x),
    "reciprocal": lambda lib, x: lib.reciprocal(x),
    "x ** 0": lambda lib, x: x**0,
    "x ** 2": lambda lib, x: x**2,
    "x ** 3": lambda lib, x: x**3,
    "x ** 0.5": lambda lib, x: x**0.5,
    "x ** -0.5": lambda lib, x: x**-0.5,
    "x ** -2": lambda lib, x: x**-2,
    "x ** 1.5": lambda lib, x: x**1.5,
    "0 ** x": lambda lib, x: 0.0**x,
    "2 ** x": lambda lib, x: 2.0**x,
    "clamp(x, -1, 2)": lambda lib, x: lib.clamp(x, -1.0, 2.0),
    "clamp(x, min=0.5)": lambda lib, x: lib.clamp(x, min=0.5),
    "2.5 / x": lambda lib, x: 2.5 / x,
}
BINARY: dict[str, Callable[..., Any]] = {
    "div": lambda lib, x, y: lib.div(x, y),
    "div floor": lambda lib, x, y: lib.div(x, y, rounding_mode="floor"),
    "div trunc": lambda lib, x, y: lib.div(x, y, rounding_mode="trunc"),
    "pow": lambda lib, x, y: lib.pow(x, y),
    "atan2": lambda lib, x, y: lib.atan2(x, y),
    "maximum": lambda lib, x, y: lib.maximum(x, y),
    "minimum": lambda lib, x, y: lib.minimum(x, y),
    "remainder": lambda lib, x, y: lib.remainder(x, y),
    "fmod": lambda lib, x, y: lib.fmod(x, y),
    "logaddexp": lambda lib, x, y: lib.logaddexp(x, y),
    "logaddexp2": lambda lib, x, y: lib.logaddexp2(x, y),
    "copysign": lambda lib, x, y: lib.copysign(x, y),
    "where(x > 0, x, y)": lambda lib, x, y: lib.where(x > 0, x, y),
}
TERNARY: dict[str, Callable[..., Any]] = {
    "clamp(x, lo, hi)": lambda lib, x, lo, hi: lib.clamp(x, lo, hi),
    "addcmul": lambda lib, x, a, b: lib.addcmul(x, a, b, value=0.5),
    "addcdiv": lambda lib, x, a, b: lib.addcdiv(x, a, b, value=0.5),
}


@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name: str) -> None:
    _check(UNARY[name], *_grid(1))


@pytest.mark.parametrize("name", list(BINARY))
def test_binary(name: str) -> None:
    _check(BINARY[name], *_grid(2))


@pytest.mark.parametrize("name", list(TERNARY))
def test_ternary(name: str) -> None:
    _check(TERNARY[name], *_grid(3, [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0]))


ROWS = [
    [1.5, 0.0, 2.0, -3.0],
    [0.0, 0.0, 2.0, 1.0],
    [1.5, 0.0, np.inf, 2.0],
    [1.5, 0.0, np.nan, 2.0],
    [1.5, 2.0, np.inf, 3.0],
    [np.nan, 1.0, 2.0, 3.0],
    [0.0, np.inf, 1.0, 1.0],
    [2.0, 3.0, 0.0, 0.0],
    [1.0, 2.0, 3.0, 0.0],
    [0.5, -2.0, 3.0, 1.25],
]
PRODUCTS: dict[str, Callable[..., Any]] = {
    "prod": lambda lib, x: lib.prod(x),
    "prod(dim=1)": lambda lib, x: lib.prod(x.reshape(2, 2), 1),
    "prod(dim=0, keepdim)": lambda lib, x: lib.prod(x.reshape(2, 2), 0, keepdim=True),
    "cumprod": lambda lib, x: lib.cumprod(x, 0),
    "cumprod(dim=1)": lambda lib, x: lib.cumprod(x.reshape(2, 2), 1),
    "cumprod(dim=0)": lambda lib, x: lib.cumprod(x.reshape(2, 2), 0),
}


@pytest.mark.parametrize("row", ROWS, ids=str)
@pytest.mark.parametrize("name", list(PRODUCTS))
def test_products_with_zeros_and_infinities(name: str, row: list[float]) -> None:
    """PyTorch's prod_backward (``grad * result / input`` without zeros, the products of
    the others with one, zeros for two or more) and its O(n) cumprod_backward (exactly 0
    after the first zero)."""
    _check(PRODUCTS[name], [np.array(row)])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weights", ["none", "pos_weight", "weight"])
def test_bce_with_logits_at_zero_logits(reduction: str, weights: str) -> None:
    """A zero-initialised classifier's logits are exactly 0: the input gradient there is
    ``sigmoid(0) - target``, not ``1 - target`` (the subgradients of |x| and relu at 0)."""
    x = np.array([0.0, -0.0, 1.0, -30.0, 40.0, 0.0, 2.0])
    t = np.array([0.0, 0.5, 0.3, 0.2, 0.7, 1.0, 0.9])
    extra = np.linspace(0.5, 3.0, x.size)

    def fn(lib: Any, logits: Any, target: Any) -> Any:
        kw = {} if weights == "none" else {weights: lib.tensor(extra)}
        return lib.nn.functional.binary_cross_entropy_with_logits(
            logits, target, reduction=reduction, **kw
        )

    _check(fn, [x, t], None if reduction == "none" else np.array(1.7))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("exponent", [2, 3, 0.5, -0.5, -1, -2, 3.0, -2.0])
def test_pow_by_the_exponents_torch_computes_as_products(dtype: str, exponent: float) -> None:
    """PyTorch computes ``x ** 3``, ``x ** -0.5`` and ``x ** -2`` as ``x * x * x``,
    ``1 / sqrt(x)`` and ``1 / (x * x)``: the same bits here ((-0.0) ** -0.5 is -inf)."""
    values = np.array(VALUES + [3.3, -7.1, 1.7e154, 1e-160])
    with np.errstate(all="ignore"):
        ours = tt.pow(tt.tensor(values).to(getattr(tt, dtype)), exponent).numpy()
    theirs = torch.pow(torch.tensor(values).to(getattr(torch, dtype)), exponent).numpy()
    np.testing.assert_array_equal(ours, theirs)
    finite = ~np.isnan(ours)
    assert (np.signbit(ours[finite]) == np.signbit(theirs[finite])).all()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("spelling", ["tensors", "number divisor", "number dividend", "0-d"])
def test_remainder_zero_keeps_the_dividends_sign(dtype: str, spelling: str) -> None:
    """PyTorch's remainder is fmod moved by the divisor where the signs differ: a zero
    result has the dividend's sign (remainder(0.0, -1.0) is 0.0, remainder(-3.0, 1.5)
    -0.0), NumPy's the divisor's.  No subnormal divisor: PyTorch's vectorized fmod gives
    NaN for one (remainder(-3.0, 1e-310)), where the remainder is a subnormal."""
    values = [v for v in VALUES if v != 1e-310] + [-3.0, 1.5, -1.5, 3.0]
    pairs = np.array(list(itertools.product(values, repeat=2)))

    def run(lib: Any) -> Any:
        dt = getattr(lib, dtype)
        x, y = lib.tensor(pairs[:, 0]).to(dt), lib.tensor(pairs[:, 1]).to(dt)
        if spelling == "tensors":
            out = lib.remainder(x, y)
        elif spelling == "number divisor":
            out = lib.remainder(x, -1.5)
        elif spelling == "number dividend":
            out = lib.remainder(-3.0, y)
        else:
            out = lib.remainder(lib.tensor(-3.0).to(dt), 1.5)
        return out.double().numpy()

    with np.errstate(all="ignore"):
        ours, theirs = run(tt), run(torch)
    np.testing.assert_array_equal(ours, theirs)
    kept = ~np.isnan(ours)
    assert (np.signbit(ours[kept]) == np.signbit(theirs[kept])).all()


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "bfloat16"])
def test_cumsum_starts_from_positive_zero(dtype: str) -> None:
    """PyTorch's running sum starts from +0: leading -0.0s sum to +0.0 (NumPy's first
    partial sum is the element itself)."""
    rows = np.array([[-0.0, -0.0, 1.0, -1.0], [-0.0, 2.0, -0.0, -2.0], [1.0, -0.0, -1.0, -0.0]])

    def run(lib: Any) -> Any:
        out = lib.cumsum(lib.tensor(rows).to(getattr(lib, dtype)), 1)
        return (out.real if dtype.startswith("complex") else out).double().numpy()

    ours, theirs = run(tt), run(torch)
    np.testing.assert_array_equal(ours, theirs)
    assert (np.signbit(ours) == np.signbit(theirs)).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("weight_kind", ["tensor", "number"])
def test_lerp_keeps_the_signs_of_zero(dtype: str, weight_kind: str) -> None:
    """PyTorch's vectorized lerp is ``fma(w, end - self, self)`` for |w| < 0.5 and
    ``fma(w - 1, end - self, end)`` otherwise: at w = 1 an end of -0.0 stays -0.0
    (``end - diff * (1 - w)`` gave +0.0).  Values exact in both (small integers, weights
    0, 1/4, 3/4, 1), 400 elements a call: PyTorch's scalar tail loop (the elements past
    the last whole vector) computes ``end - diff * (1 - w)`` and gives the other zero."""
    ends = [0.0, -0.0, 1.0, -2.0, 4.0]
    combos = np.tile(np.array(list(itertools.product(ends, ends, [0.0, 0.25, 0.75, 1.0]))), (4, 1))

    def run(lib: Any) -> Any:
        dt = getattr(lib, dtype)
        x, e = lib.tensor(combos[:, 0]).to(dt), lib.tensor(combos[:, 1]).to(dt)
        if weight_kind == "tensor":
            return lib.lerp(x, e, lib.tensor(combos[:, 2]).to(dt)).numpy()
        return np.stack([lib.lerp(x, e, w).numpy() for w in (0.0, 0.25, 0.75, 1.0)])

    ours, theirs = run(tt), run(torch)
    np.testing.assert_array_equal(ours, theirs)
    assert (np.signbit(ours) == np.signbit(theirs)).all()


LOGITS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0, -2.5, 30.0, -30.0, -10.0, 1e-310]
TARGETS = [0.0, -0.0, 1.0, 0.3, 0.5]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weights", ["none", "weight", "pos_weight", "both"])
def test_bce_with_logits_and_mse_loss_gradients(dtype: str, reduction: str, weights: str) -> None:
    """Note [Explicit composites] (backends/composite/nn.py): PyTorch's nodes and its
    closed-form gradients, to the bit in float64 (float32 within 1e-5: NumPy's exp and
    PyTorch's differ in the last place, which ``sigmoid(x) - t`` magnifies where the two
    are close), every zero's sign in both."""
    pairs = np.array(list(itertools.product(LOGITS, TARGETS)))
    n = len(pairs)
    grads = np.resize([1.3, -0.7, np.inf, np.nan, 0.0, -0.0], n)

    def run(lib: Any, loss: str) -> tuple[Any, ...]:
        dt = getattr(lib, dtype)
        x = lib.tensor(pairs[:, 0]).to(dt).requires_grad_()
        t = lib.tensor(pairs[:, 1]).to(dt).requires_grad_()
        if loss == "mse":
            out = lib.nn.functional.mse_loss(x, t, reduction=reduction)
        else:
            kw = {}
            if weights in ("weight", "both"):
                kw["weight"] = lib.tensor(np.linspace(0.5, 2.0, n)).to(dt)
            if weights in ("pos_weight", "both"):
                kw["pos_weight"] = lib.tensor(np.linspace(0.2, 3.0, n)).to(dt)
            out = lib.nn.functional.binary_cross_entropy_with_logits(
                x, t, reduction=reduction, **kw
            )
        g = lib.tensor(grads if reduction == "none" else 1.7).to(dt)
        gx, gt = lib.autograd.grad(out, [x, t], g)
        name = out.grad_fn.name()
        return name, out.detach().double().numpy(), gx.double().numpy(), gt.double().numpy()

    losses = ["bce"] if weights != "none" else ["bce", "mse"]
    for loss in losses:
        with np.errstate(all="ignore"):
            ours, theirs = run(tt, loss), run(torch, loss)
        assert ours[0] == theirs[0]
        parts = zip(("loss", "input grad", "target grad"), ours[1:], theirs[1:], strict=True)
        for what, a, b in parts:
            where = f"{loss} {what}"
            if dtype == "float64":
                np.testing.assert_array_equal(a, b, err_msg=where)
            else:
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=0, equal_nan=True, err_msg=where)
            a, b = np.atleast_1d(a), np.atleast_1d(b)
            zeros = (a == 0) & (b == 0)
            assert (np.signbit(a[zeros]) == np.signbit(b[zeros])).all(), where

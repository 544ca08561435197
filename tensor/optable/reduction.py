"""Rows of the reductions and scans, with their derivatives.

Imports: this package's ``_grad``, ``_row`` and ``elementwise`` (``max.other`` and
``min.other`` are ``maximum`` and ``minimum``).  Each section holds its formulas
first and its rows below them.  Selections (``amax``, ``max``, inf-norms) split the
gradient evenly among ties, as PyTorch does; ``max.dim``/``min.dim`` send it to the
selected index only.
"""

from __future__ import annotations

import math
from typing import Any

from . import _grad, elementwise
from ._row import (
    ALL,
    INEXACT,
    REAL,
    REAL_NO_BOOL,
    InPlace,
    OpInfo,
    all_any,
    float_to_real,
    int_to_int64,
    to_float,
    to_int64,
)

__all__ = ["ROWS"]

core = _grad.core

_DIMS = "int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None"


def _grad_input(g: Any, x: Any, dtype: Any) -> Any:
    """A gradient back in the input's dtype when the op computed in ``dtype=...``."""
    return _grad.cast_like(g, x) if dtype is not None else g


def _any(t: Any) -> bool:
    """Whether any element of a bool tensor is set (False on meta tensors: no values)."""
    if t.device.type == "meta" or t.numel() == 0:
        return False
    return bool(core.any(t))


# -- sum, mean, prod ---------------------------------------------------------------------------
@_grad.saves()
def _sum(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    g = _grad.unsqueeze_reduced(g, x, a["dim"], a["keepdim"])
    return (_grad_input(_grad.expand_to(g, x), x, a["dtype"]),)


@_grad.saves()
def _mean(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, dim = a["self"], a["dim"]
    count = _grad.numel_of(x, _grad.reduced_dims(dim, x.ndim))
    g = _grad.unsqueeze_reduced(g, x, dim, a["keepdim"])
    return (_grad_input(_grad.expand_to(g / max(count, 1), x), x, a["dtype"]),)


def _exclusive_cumprod(x: Any, d: int) -> Any:
    """Products of the elements before each one along ``d`` (1 for the first)."""
    n = x.shape[d]
    before = core.cumprod(core.narrow(x, d, 0, n - 1), d)
    ones = core.ones_like(core.narrow(x, d, 0, 1))
    return core.cat([ones, before], d)


def _prod_others(x: Any, d: int) -> Any:
    """For each element, the product of the others along ``d``; right even with zeros
    (PyTorch's prod_safe_zeros_backward) and differentiable again."""
    if x.shape[d] == 1:
        return core.ones_like(x)
    left = _exclusive_cumprod(x, d)
    right = core.flip(_exclusive_cumprod(core.flip(x, [d]), d), [d])
    return left * right


@_grad.saves("self", "result")
@_grad.holomorphic
def _prod(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    # PyTorch's prod_backward: without a zero, ``grad * (result / input)`` (NaN at an
    # infinite or NaN input, as PyTorch's); with zeros, the products of the others
    # (prod_safe_zeros_backward), except a whole product with two zeros or more outside
    # grad mode: zeros.
    x, dim, keepdim = a["self"], a["dim"], a["keepdim"]
    if x.numel() == 0:
        return (core.zeros_like(x),)
    if x.ndim == 0:
        return (_grad_input(g, x, a["dtype"]),)
    zeros = core.eq(x, 0)
    if dim is None:
        count = int(core.sum(zeros)) if x.device.type != "meta" else 0
        if count == 0:
            grad = g * (out / x)
        elif count > 1 and not _grad.records_graph():
            grad = core.zeros_like(x)
        else:
            flat = core.reshape(x, [-1])
            grad = g * core.reshape(_prod_others(flat, 0), list(x.shape))
    else:
        d = _grad.wrap_dim(dim, x.ndim)
        if not keepdim:
            g, out = core.unsqueeze(g, d), core.unsqueeze(out, d)
        grad = g * _prod_others(x, d) if _any(zeros) else g * (out / x)
    return (_grad_input(grad, x, a["dtype"]),)


_SUMS: tuple[OpInfo, ...] = (
    OpInfo(
        "sum", (f"sum(Tensor self, {_DIMS}) -> Tensor",), "reduction", ALL, int_to_int64,
        grad=_sum, autocast={"cuda": "fp32_set_opt_dtype"},
    ),
    OpInfo("mean", (f"mean(Tensor self, {_DIMS}) -> Tensor",), "reduction", INEXACT, grad=_mean),
    OpInfo(
        "prod",
        ("prod(Tensor self, int? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",),
        "reduction", ALL, int_to_int64,
        grad=_prod, autocast={"cpu": "fp32", "cuda": "fp32_set_opt_dtype"},
    ),
)  # fmt: skip


# -- selections; argmax, argmin (not differentiable) ---------------------------------------------
@_grad.saves("self", "result")
def _amax(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, dim, keepdim = a["self"], a["dim"], a["keepdim"]
    dims = _grad.reduced_dims(dim, x.ndim)
    value = _grad.unsqueeze_reduced(out, x, dim, keepdim)
    g = _grad.unsqueeze_reduced(g, x, dim, keepdim)
    mask = core.eq(x, value)
    count = core.sum(mask, dims, True) if dims else core.ones_like(value)
    return ((g / count) * mask,)


@_grad.saves("self", "result")
def _max_all(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    mask = core.logical_or(core.eq(x, out), core.logical_and(core.isnan(x), core.isnan(out)))
    return (mask * (g / core.sum(mask)),)


def _select_backward(g: Any, x: Any, dim: int, index: Any, keepdim: bool) -> Any:
    """PyTorch's value_selecting_reduction_backward: ``g`` at ``index`` along ``dim``,
    zeros elsewhere."""
    if x.ndim == 0:
        return g
    d = _grad.wrap_dim(dim, x.ndim)
    if not keepdim:
        g, index = core.unsqueeze(g, d), core.unsqueeze(index, d)
    n = x.shape[d]
    positions = core.arange(0, n, 1, dtype=index.dtype, device=index.device)
    positions = core.reshape(positions, [n] + [1] * (x.ndim - 1 - d))
    return core.where(core.eq(positions, index), g, core.zeros_like(x))


@_grad.saves("result")
def _max_dim(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (_select_backward(g[0], a["self"], a["dim"], out[1], a["keepdim"]),)


_SELECTIONS: tuple[OpInfo, ...] = (
    OpInfo(
        "amax", ("amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",), "reduction",
        REAL, grad=_amax,
    ),
    OpInfo(
        "amin", ("amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",), "reduction",
        REAL, grad=_amax,
    ),
    OpInfo(
        "max",
        (
            "max(Tensor self) -> Tensor",
            "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
            "max.other(Tensor self, Tensor other) -> Tensor",
        ),
        "reduction", REAL, py="max", out=True,
        grad={"default": _max_all, "dim": _max_dim, "other": elementwise.maximum_grad},
    ),
    OpInfo(
        "min",
        (
            "min(Tensor self) -> Tensor",
            "min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
            "min.other(Tensor self, Tensor other) -> Tensor",
        ),
        "reduction", REAL, py="min", out=True,
        grad={"default": _max_all, "dim": _max_dim, "other": elementwise.minimum_grad},
    ),
    OpInfo(
        "argmax", ("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",),
        "reduction", REAL_NO_BOOL, to_int64, grad=False,
    ),
    OpInfo(
        "argmin", ("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",),
        "reduction", REAL_NO_BOOL, to_int64, grad=False,
    ),
)  # fmt: skip


# -- var, std, logsumexp; all, any (not differentiable) --------------------------------------
def _var_grad(g: Any, x: Any, dim: Any, correction: Any, keepdim: bool) -> Any:
    dims = _grad.reduced_dims(dim, x.ndim)
    dof = _grad.numel_of(x, dims) - (1 if correction is None else correction)
    g = _grad.unsqueeze_reduced(g, x, dim, keepdim)
    centered = x - core.mean(x, dims, True) if dims else x - x
    return (2.0 / dof if dof else math.inf) * g * centered


@_grad.saves("self")
def _var(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (_var_grad(g, a["self"], a["dim"], a["correction"], a["keepdim"]),)


@_grad.saves("self", "result")
def _std(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    g = core.where(out == 0, core.zeros_like(g), g / (out * 2))
    return (_var_grad(g, a["self"], a["dim"], a["correction"], a["keepdim"]),)


@_grad.saves("self", "result")
@_grad.holomorphic
def _logsumexp(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, dim, keepdim = a["self"], a["dim"], a["keepdim"]
    value = _grad.unsqueeze_reduced(out, x, dim, keepdim)
    g = _grad.unsqueeze_reduced(g, x, dim, keepdim)
    return (g * core.exp(x - value),)


_MOMENTS: tuple[OpInfo, ...] = (
    OpInfo(
        "var",
        ("var(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",),
        "reduction", INEXACT, float_to_real, grad=_var,
    ),
    OpInfo(
        "std",
        ("std(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",),
        "reduction", INEXACT, float_to_real, grad=_std,
    ),
    OpInfo(
        "all", ("all(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor",), "reduction",
        ALL, all_any, grad=False,
    ),
    OpInfo(
        "any", ("any(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor",), "reduction",
        ALL, all_any, grad=False,
    ),
    OpInfo(
        "logsumexp", ("logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",),
        "reduction", ALL, to_float, grad=_logsumexp, autocast={"cuda": "fp32"},
    ),
)  # fmt: skip


# -- scans ----------------------------------------------------------------------------------------
def _reverse_cumsum(g: Any, d: int) -> Any:
    return core.flip(core.cumsum(core.flip(g, [d]), d), [d])


def _cumprod_zeros(g: Any, x: Any, out: Any, is_zero: Any, d: int) -> Any:
    """PyTorch's O(n) cumprod_backward for an input with zeros, outside grad mode: before
    the first zero of a slice, ``reversed_cumsum(out * g) / x`` over that stretch; at the
    first zero z1, ``sum_j g[j] * prod(x[z1+1 .. j]) * out[z1-1]`` over the stretch up to
    the second zero; exactly 0 after it (where the products of every other element would
    be 0 times whatever comes later, NaN after an inf)."""
    n = x.shape[d]
    zeros_before = core.cumsum(is_zero, d)
    before = core.eq(zeros_before, 0)
    w = core.where.ScalarOther(before, out * g, 0)
    grad = core.where.ScalarOther(before, _reverse_cumsum(w, d) / x, 0)
    stretch = core.eq(zeros_before, 1)  # from the first zero up to the second
    first = core.logical_and(stretch, is_zero)
    inside = core.logical_and(stretch, core.logical_not(is_zero))
    products = core.cumprod(core.where.ScalarSelf(core.logical_not(inside), 1, x), d)
    part = core.sum(products * core.where.ScalarOther(stretch, g, 0), [d], True)
    # out[z1 - 1], the product before the first zero (1 where that zero comes first): the
    # element whose next one is the first zero.
    ahead = core.cat(
        [core.narrow(first, d, 1, n - 1), core.zeros_like(core.narrow(first, d, 0, 1))], d
    )
    previous = core.sum(core.where.ScalarOther(ahead, out, 0), [d], True)
    previous = core.where.ScalarSelf(core.narrow(first, d, 0, 1), 1, previous)
    return core.where(first, part * previous, grad)


@_grad.saves()
def _cumsum(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    if x.ndim == 0:
        return (_grad_input(g, x, a["dtype"]),)
    return (_grad_input(_reverse_cumsum(g, _grad.wrap_dim(a["dim"], x.ndim)), x, a["dtype"]),)


@_grad.saves("self", "result")
@_grad.holomorphic
def _cumprod(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    if x.ndim == 0 or x.numel() == 0:
        return (_grad_input(g, x, a["dtype"]),)
    d = _grad.wrap_dim(a["dim"], x.ndim)
    if x.shape[d] == 1:
        return (_grad_input(g, x, a["dtype"]),)
    is_zero = core.eq(x, 0)
    if not _any(is_zero):
        return (_grad_input(_reverse_cumsum(out * g, d) / x, x, a["dtype"]),)
    if not _grad.records_graph():
        return (_grad_input(_cumprod_zeros(g, x, out, is_zero, d), x, a["dtype"]),)
    # With zeros, d out[j] / d x[k] = prod_{i <= j, i != k} x[i] for j >= k: one scan per k.
    n = x.shape[d]
    positions = core.reshape(core.arange(0, n, 1, device=x.device), [n] + [1] * (x.ndim - 1 - d))
    grad = core.zeros_like(x)
    for k in range(n):
        at_k = core.eq(positions, k)
        scan = core.cumprod(core.where(at_k, core.ones_like(x), x), d)
        part = core.sum(core.where(core.ge(positions, k), g * scan, core.zeros_like(g)), [d], True)
        grad = core.where(at_k, part, grad)
    return (_grad_input(grad, x, a["dtype"]),)


_SCANS: tuple[OpInfo, ...] = (
    OpInfo(
        "cumsum", ("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",),
        "scan", ALL, int_to_int64,
        grad=_cumsum, autocast={"cuda": "fp32_set_opt_dtype"}, inplace=InPlace(),
    ),
    OpInfo(
        "cumprod", ("cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",),
        "scan", ALL, int_to_int64,
        grad=_cumprod, autocast={"cuda": "fp32_set_opt_dtype"}, inplace=InPlace(),
    ),
)  # fmt: skip


# -- norms (``linalg.vector_norm`` too); count_nonzero ----------------------------------------
def _norm_grad(g: Any, x: Any, p: Any, dim: Any, keepdim: bool, out: Any) -> Any:
    """PyTorch's linalg_vector_norm_backward (``sgn`` for complex inputs)."""
    p = 2.0 if p is None else float(p)
    if p == 0.0:
        return core.zeros_like(x)
    norm = _grad.unsqueeze_reduced(out, x, dim, keepdim)
    g = _grad.unsqueeze_reduced(g, x, dim, keepdim)
    if p == 1.0:
        return _grad.sgn(x) * g
    zero = core.zeros_like(norm)
    if p == 2.0:
        return x * core.where(norm == 0, zero, g / norm)
    if math.isinf(p):
        absx = core.abs(x)
        mask = core.logical_or(core.eq(absx, norm), core.isnan(absx))
        dims = _grad.reduced_dims(dim, x.ndim)
        count = core.sum(mask, dims, True) if dims else core.ones_like(norm)
        return _grad.sgn(x) * ((g / count) * mask)
    scale = g / norm ** (p - 1)
    if p < 1.0:
        grad = _grad.sgn(x) * core.abs(x) ** (p - 1) * scale
        return core.where(x == 0, core.zeros_like(grad), grad)
    scale = core.where(norm == 0, zero, scale)
    if p < 2.0:
        return _grad.sgn(x) * core.abs(x) ** (p - 1) * scale
    return x * core.abs(x) ** (p - 2) * scale


@_grad.saves("self", "result")
def _norm(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    grad = _norm_grad(g, x, a["p"], a["dim"], a["keepdim"], out)
    return (_grad_input(grad, x, a["dtype"]),)


@_grad.saves("self", "result")
def _vector_norm(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    grad = _norm_grad(g, x, a["ord"], a["dim"], a["keepdim"], out)
    return (_grad_input(grad, x, a["dtype"]),)


_NORMS: tuple[OpInfo, ...] = (
    OpInfo(
        "norm",
        ("norm(Tensor self, Scalar? p=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",),
        "reduction", INEXACT, float_to_real, py="norm", out=True,
        grad=_norm, autocast={"cuda": "fp32_append_dtype"},
    ),
    OpInfo(
        "linalg_vector_norm",
        (
            "linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, "
            "*, ScalarType? dtype=None) -> Tensor",
        ),
        "reduction", INEXACT, float_to_real, function="linalg.vector_norm", method=False,
        grad=_vector_norm, autocast={"cuda": "fp32_set_opt_dtype"},
    ),
    OpInfo(
        "count_nonzero", ("count_nonzero(Tensor self, int[1]? dim=None) -> Tensor",),
        "reduction", ALL, to_int64, grad=False, out=False,
    ),
)  # fmt: skip

ROWS: tuple[OpInfo, ...] = _SUMS + _SELECTIONS + _MOMENTS + _SCANS + _NORMS

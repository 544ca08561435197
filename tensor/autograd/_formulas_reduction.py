"""Derivative formulas of the reductions and scans (rows of ``FORMULAS``).

Imports: ``dispatch`` (through ``_formulas_common``).  Same conventions as
``_formulas``: ``f(grad, a, out) -> tuple``, one gradient per tensor argument.
Selections (``amax``, ``max``, inf-norms) split the gradient evenly among ties, as
PyTorch does; ``max.dim``/``min.dim`` send it to the selected index only.
"""

from __future__ import annotations

import math
from typing import Any

from . import _formulas_common as common

__all__ = ["FORMULAS"]

core = common.core


def _grad_input(g: Any, x: Any, dtype: Any) -> Any:
    """A gradient back in the input's dtype when the op computed in ``dtype=...``."""
    return common.cast_like(g, x) if dtype is not None else g


def _any(t: Any) -> bool:
    """Whether any element of a bool tensor is set (False on meta tensors: no values)."""
    if t.device.type == "meta" or t.numel() == 0:
        return False
    return bool(core.any(t))


# -- sum, mean, prod ---------------------------------------------------------------------------
@common.saves()
def _sum(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    g = common.unsqueeze_reduced(g, x, a["dim"], a["keepdim"])
    return (_grad_input(common.expand_to(g, x), x, a["dtype"]),)


@common.saves()
def _mean(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, dim = a["self"], a["dim"]
    count = common.numel_of(x, common.reduced_dims(dim, x.ndim))
    g = common.unsqueeze_reduced(g, x, dim, a["keepdim"])
    return (_grad_input(common.expand_to(g / max(count, 1), x), x, a["dtype"]),)


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


@common.saves("self")
def _prod(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, dim, keepdim = a["self"], a["dim"], a["keepdim"]
    if x.numel() == 0:
        return (core.zeros_like(x),)
    if x.ndim == 0:
        return (_grad_input(g, x, a["dtype"]),)
    if dim is None:
        flat = core.reshape(x, [-1])
        others = core.reshape(_prod_others(flat, 0), list(x.shape))
        grad = g * others
    else:
        d = common.wrap_dim(dim, x.ndim)
        if not keepdim:
            g = core.unsqueeze(g, d)
        grad = g * _prod_others(x, d)
    return (_grad_input(grad, x, a["dtype"]),)


# -- selections ----------------------------------------------------------------------------------
@common.saves("self", "result")
def _amax(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, dim, keepdim = a["self"], a["dim"], a["keepdim"]
    dims = common.reduced_dims(dim, x.ndim)
    value = common.unsqueeze_reduced(out, x, dim, keepdim)
    g = common.unsqueeze_reduced(g, x, dim, keepdim)
    mask = core.eq(x, value)
    count = core.sum(mask, dims, True) if dims else core.ones_like(value)
    return ((g / count) * mask,)


@common.saves("self", "result")
def _max_all(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    mask = core.logical_or(core.eq(x, out), core.logical_and(core.isnan(x), core.isnan(out)))
    return (mask * (g / core.sum(mask)),)


def _select_backward(g: Any, x: Any, dim: int, index: Any, keepdim: bool) -> Any:
    """PyTorch's value_selecting_reduction_backward: ``g`` at ``index`` along ``dim``,
    zeros elsewhere."""
    if x.ndim == 0:
        return g
    d = common.wrap_dim(dim, x.ndim)
    if not keepdim:
        g, index = core.unsqueeze(g, d), core.unsqueeze(index, d)
    n = x.shape[d]
    positions = core.arange(0, n, 1, dtype=index.dtype, device=index.device)
    positions = core.reshape(positions, [n] + [1] * (x.ndim - 1 - d))
    return core.where(core.eq(positions, index), g, core.zeros_like(x))


@common.saves("result")
def _max_dim(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (_select_backward(g[0], a["self"], a["dim"], out[1], a["keepdim"]),)


# -- var, std, logsumexp -------------------------------------------------------------------------
def _var_grad(g: Any, x: Any, dim: Any, correction: Any, keepdim: bool) -> Any:
    dims = common.reduced_dims(dim, x.ndim)
    dof = common.numel_of(x, dims) - (1 if correction is None else correction)
    g = common.unsqueeze_reduced(g, x, dim, keepdim)
    centered = x - core.mean(x, dims, True) if dims else x - x
    return (2.0 / dof if dof else math.inf) * g * centered


@common.saves("self")
def _var(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (_var_grad(g, a["self"], a["dim"], a["correction"], a["keepdim"]),)


@common.saves("self", "result")
def _std(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    g = core.where(out == 0, core.zeros_like(g), g / (out * 2))
    return (_var_grad(g, a["self"], a["dim"], a["correction"], a["keepdim"]),)


@common.saves("self", "result")
def _logsumexp(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, dim, keepdim = a["self"], a["dim"], a["keepdim"]
    value = common.unsqueeze_reduced(out, x, dim, keepdim)
    g = common.unsqueeze_reduced(g, x, dim, keepdim)
    return (g * core.exp(x - value),)


# -- scans ----------------------------------------------------------------------------------------
def _reverse_cumsum(g: Any, d: int) -> Any:
    return core.flip(core.cumsum(core.flip(g, [d]), d), [d])


@common.saves()
def _cumsum(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    if x.ndim == 0:
        return (_grad_input(g, x, a["dtype"]),)
    return (_grad_input(_reverse_cumsum(g, common.wrap_dim(a["dim"], x.ndim)), x, a["dtype"]),)


@common.saves("self", "result")
def _cumprod(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    if x.ndim == 0 or x.numel() == 0:
        return (_grad_input(g, x, a["dtype"]),)
    d = common.wrap_dim(a["dim"], x.ndim)
    if not _any(core.eq(x, 0)):
        return (_grad_input(_reverse_cumsum(g * out, d) / x, x, a["dtype"]),)
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


# -- norms ----------------------------------------------------------------------------------------
def _norm_grad(g: Any, x: Any, p: Any, dim: Any, keepdim: bool, out: Any) -> Any:
    """PyTorch's linalg_vector_norm_backward (real inputs)."""
    p = 2.0 if p is None else float(p)
    if p == 0.0:
        return core.zeros_like(x)
    norm = common.unsqueeze_reduced(out, x, dim, keepdim)
    g = common.unsqueeze_reduced(g, x, dim, keepdim)
    if p == 1.0:
        return core.sign(x) * g
    zero = core.zeros_like(norm)
    if p == 2.0:
        return x * core.where(norm == 0, zero, g / norm)
    if math.isinf(p):
        absx = core.abs(x)
        mask = core.logical_or(core.eq(absx, norm), core.isnan(absx))
        dims = common.reduced_dims(dim, x.ndim)
        count = core.sum(mask, dims, True) if dims else core.ones_like(norm)
        return core.sign(x) * ((g / count) * mask)
    scale = g / norm ** (p - 1)
    if p < 1.0:
        grad = core.sign(x) * core.abs(x) ** (p - 1) * scale
        return core.where(x == 0, core.zeros_like(grad), grad)
    scale = core.where(norm == 0, zero, scale)
    if p < 2.0:
        return core.sign(x) * core.abs(x) ** (p - 1) * scale
    return x * core.abs(x) ** (p - 2) * scale


@common.saves("self", "result")
def _norm(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    grad = _norm_grad(g, x, a["p"], a["dim"], a["keepdim"], out)
    return (_grad_input(grad, x, a["dtype"]),)


@common.saves("self", "result")
def _vector_norm(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    grad = _norm_grad(g, x, a["ord"], a["dim"], a["keepdim"], out)
    return (_grad_input(grad, x, a["dtype"]),)


FORMULAS: dict[str, common.Formula] = {
    "sum": _sum,
    "mean": _mean,
    "prod": _prod,
    "amax": _amax,
    "amin": _amax,
    "max": _max_all,
    "min": _max_all,
    "max.dim": _max_dim,
    "min.dim": _max_dim,
    "var": _var,
    "std": _std,
    "logsumexp": _logsumexp,
    "cumsum": _cumsum,
    "cumprod": _cumprod,
    "norm": _norm,
    "linalg_vector_norm": _vector_norm,
}

"""Backward lanes: the hottest derivative formulas again, on the arrays of plain CPU tensors.

Imports: NumPy, ``dispatch`` (the key bit and the thread state), ``backends.common``
(the fast-path switch and the masking kernel the ``where`` fast path uses), the CPU's
erf and the forward values it keeps (``backends.cpu.elementwise``, ``backends.cpu.nn``),
and ``tensor``'s ``_tensor`` and ``optable``.

Note [Backward lanes]
~~~~~~~~~~~~~~~~~~~~~
A derivative formula is written once, over operators (``core.mm(g, _mT(m2))``), so it
runs on every backend and records its own graph under ``create_graph=True``.  In a
training step's backward (grad mode off, default thread state, CPU tensors of a float
dtype) that generality costs more than the arithmetic: F.linear's ``AddmmBackward0`` on
a [32, 64] batch took 35-45 us where its three NumPy calls take 10 (binding the call,
the complex-convention wrapper, ``needs_grad`` per input, ``sum_to``'s shape logic, a
packet, a validated call and a view per operator call; ``ci/bench/autograd.py``).

A lane is the same formula on the arrays, for the one case that is hot: it computes
exactly what the formula's operator calls would (the same NumPy call on the same
operands, each result wrapped as the kernel wraps it, views made as the view kernels
make them, the incoming gradient itself where the formula returns it), or returns
None and the formula runs.  One liberty: an input that does not require grad may get
None where the formula computes a gradient anyway (``mul``'s ``g * other`` for a
constant ``self``): the engine passes nothing along an edge without a node.  Lanes:
addmm, mm, matmul (matrices), add, sub, mul (tensors), neg, relu, tanh, sigmoid, exp,
gelu (exact), silu, softplus, abs, layer_norm, softmax, log_softmax, ``x ** 2``, sum and mean (a
loss's reductions, positional dims), transpose/t, embedding, slice and select (``x[:, :32]``,
``x[:, 0]``), max_pool2d and max/min along a dim (nodes of two outputs: a lane
marked ``all_outputs`` takes every output's gradient), and cross_entropy (no class weights: the
``_cross_entropy_backward`` kernel; class targets with no row ignored, the CPU kernel's
own arithmetic, ``rows_grad``, without the kernel's checks, which the forward already
made).  ``seed`` makes ``loss.backward()``'s implicit gradient as the
CPU ``ones_like`` kernel does.  ``OpNode.apply`` tries the lane only when grad mode is off
(no graph to record), the fast paths are on (Note [Fast-path switch]) and the thread
state is the default (no autocast, no Python mode: nothing that would reroute the
formula's calls), and only for a call recorded with positional arguments (``node._args``).
Each lane then checks its own guards: plain ``Tensor``s on one device object whose arrays
are NumPy's, float32 or float64 throughout (no promotion, no complex convention, no
half-precision accumulation), and the ranks and shapes it handles.  Everything else,
users' kernels included (a lane never runs where a registered kernel could: CPU tensors
with the default state reach the CPU kernels, which are ours), takes the formula.

tests/tensor/test_lanes.py runs every lane against its formula (``fastpaths.disabled()``)
on both sides of each guard: values bit for bit, dtypes, shapes, strides, which results
are views of what, and which result is the incoming gradient itself (that decides
whether AccumulateGrad may steal it, Note [Stealing gradients]).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from backends.common import fastpaths
from backends.common.linalg import matrix_product
from backends.common.nn import REDUCTIONS, smoothing
from backends.common.ternary import zero_mask_fn
from backends.cpu.elementwise import F as _cpu_formulas
from backends.cpu.elementwise import take_gelu_erf as _take_gelu_erf
from backends.cpu.nn import mean_keep as _mean_keep
from backends.cpu.nn import take_layer_norm as _take_layer_norm
from backends.cpu.shape import INDEX_FNS as _INDEX_FNS
from dispatch import REQUIRES_GRAD_BIT, DispatchKey, DispatchKeySet, _tls, ops

from .. import _dtype
from .._inplace_or_view import mark_view
from .._tensor import Tensor, make
from ..optable import OP_TABLE
from ..optable import elementwise as _elementwise
from ..optable import linalg as _linalg
from ..optable import nn as _nn
from ..optable import reduction as _reduction
from ..optable import shape as _shape
from . import _backward
from ._layer import _DEFAULT_SETS

__all__ = ["install"]

Lane = Callable[[Any, tuple[Any, ...], Any], Any]

_DTYPES = frozenset({_dtype.float32, _dtype.float64})
_UNSIGNED = {np.dtype("float32"): np.dtype("uint32"), np.dtype("float64"): np.dtype("uint64")}
_ndarray = np.ndarray
_matmul = matrix_product  # mm's CPU product: Note [Products of widened copies]
_reduce = np.add.reduce  # the CPU sum kernel's one-axis call (backends/cpu/reduction.py)
_less_equal = np.less_equal
_mul = operator.mul  # the CPU mul kernel's ndarray.__mul__ (backends/cpu/elementwise.py)
_RG = REQUIRES_GRAD_BIT
_add_at = _INDEX_FNS["add_at"]  # the CPU index_put_'s accumulation
_transposed = _linalg._transposed


def _plain(g: Any, *ts: Any) -> bool:
    """``g`` and ``ts``: plain Tensors of one lane dtype on ``g``'s device object, NumPy
    arrays."""
    if type(g) is not Tensor or type(g._array) is not _ndarray:
        return False
    dt, dev = g._dtype, g._device
    if dt not in _DTYPES:
        return False
    for t in ts:
        if type(t) is not Tensor or t._dtype is not dt or t._device is not dev:
            return False
        if type(t._array) is not _ndarray:
            return False
    return True


def _view_t(base: Any) -> Any:
    """``core.transpose.int(base, -2, -1)`` of a matrix: the backend's ``x.T`` and the
    ADInplaceOrView kernel's marks (``mark_view``)."""
    out = make(base._array.T, base._dtype, base._device)
    mark_view(out, base)
    return out


def _mat1_grad(g: Any, m1: Any, m2: Any) -> Any:
    """``linalg._mat1_grad`` (Note [Transposed products' gradients])."""
    dt, dev = g._dtype, g._device
    if _transposed(m1):
        return _view_t(make(_matmul(m2._array, g._array.T), dt, dev))
    return make(_matmul(g._array, m2._array.T), dt, dev)


def _mat2_grad(g: Any, m1: Any, m2: Any) -> Any:
    """``linalg._mat2_grad``."""
    dt, dev = g._dtype, g._device
    if _transposed(m2):
        return _view_t(make(_matmul(g._array.T, m1._array), dt, dev))
    return make(_matmul(m1._array.T, g._array), dt, dev)


_BAIL = object()


def _grad_for(g: Any, like: Any) -> Any:
    """``_grad.grad_for(g, like)`` for ``like`` of ``g``'s dtype: ``g`` itself for the same
    shape, one sum over the leading dim for a bias; ``_BAIL`` for anything else."""
    shape = like._array.shape
    ga = g._array
    if ga.shape == shape:
        return g
    if ga.ndim == len(shape) + 1 and ga.shape[1:] == shape:
        return make(_reduce(ga, 0, None, None, False), g._dtype, g._device)
    return _BAIL


def _products(g: Any, x: Any, y: Any) -> Any:
    """The gradients of ``x @ y`` for matrices (``_mm``; ``_matmul``'s 2-D case)."""
    if not _plain(g, x, y) or g._array.ndim != 2 or x._array.ndim != 2 or y._array.ndim != 2:
        return None
    return (
        _mat1_grad(g, x, y) if x._dispatch_bits & _RG else None,
        _mat2_grad(g, x, y) if y._dispatch_bits & _RG else None,
    )


def mm_lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    if len(args) != 2:
        return None
    return _products(g, args[0], args[1])


def addmm_lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    # beta and alpha are keyword-only: a positional call has their defaults, 1 and 1.
    if len(args) != 3:
        return None
    s, m1, m2 = args
    grads = _products(g, m1, m2)
    if grads is None or not _plain(g, s):
        return None
    gs = None
    if s._dispatch_bits & _RG:
        gs = _grad_for(g, s)
        if gs is _BAIL:
            return None
    return (gs, *grads)


def _operands(g: Any, args: tuple[Any, ...]) -> Any:
    """``(self, other)`` of a binary call recorded positionally (``alpha`` is keyword-only,
    so 1), when ``g`` and both are plain tensors of one lane dtype; else None."""
    if len(args) != 2 or not _plain(g, args[0], args[1]):
        return None
    return args


def _pair(gx: Any, gy: Any) -> Any:
    return None if gx is _BAIL or gy is _BAIL else (gx, gy)


def add_lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    xy = _operands(g, args)
    return None if xy is None else _pair(_grad_for(g, xy[0]), _grad_for(g, xy[1]))


def _wrapped(array: Any, like: Any) -> Any:
    """``array`` as a binary or unary kernel wraps its result (0-d results of NumPy's
    operators are scalars: the kernels' ``asarray``)."""
    if type(array) is not _ndarray:
        array = np.asarray(array)
    return make(array, like._dtype, like._device)


def sub_lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    # ``g`` and ``-g`` summed to each input's shape.  An input that does not require grad
    # gets None (the engine passes nothing to it; the formula computes its gradient anyway).
    xy = _operands(g, args)
    if xy is None:
        return None
    x, y = xy
    gx = _grad_for(g, x) if x._dispatch_bits & _RG else None
    gy = _grad_for(_wrapped(np.negative(g._array), g), y) if y._dispatch_bits & _RG else None
    return _pair(gx, gy)


def mul_lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    # mul.Tensor: ``g * other`` and ``g * self`` (the kernel's ``ndarray.__mul__``), each
    # summed to its input's shape; mul.Scalar (a number) takes the formula.
    xy = _operands(g, args)
    if xy is None:
        return None
    x, y = xy
    ga = g._array
    gx = _grad_for(_wrapped(_mul(ga, y._array), g), x) if x._dispatch_bits & _RG else None
    gy = _grad_for(_wrapped(_mul(ga, x._array), g), y) if y._dispatch_bits & _RG else None
    return _pair(gx, gy)


def neg_lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    if not _plain(g):
        return None
    return (_wrapped(np.negative(g._array), g),)


def relu_lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    # ``where(out <= 0, 0, g)`` by the where kernel's bit mask (Note [Masking by bits]).
    if out is None or not _plain(g, out):
        return None
    ga, oa = g._array, out._array
    if ga.shape != oa.shape or not (ga.flags.c_contiguous and oa.flags.c_contiguous):
        return None
    mask = _less_equal(oa, 0)
    return (make(zero_mask_fn(mask, ga, _UNSIGNED[ga.dtype]), g._dtype, g._device),)


def gelu_lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    # ``_gelu``'s exact case (a positional call: ``approximate`` is keyword-only, so
    # "none"), each operator call of the formula as its CPU kernel computes it: NumPy's
    # ufuncs on float32/float64 arrays with Python numbers (rounded to the dtype, as the
    # kernels' weak scalars are) and the CPU erf (Note [Float32 erf by SciPy]).  ~12
    # dispatched calls (~45 us on [32, 64]) become these eight array operations.
    if len(args) != 1 or not _plain(g, args[0]):
        return None
    x = args[0]
    xa, ga = x._array, g._array
    if xa.shape != ga.shape or not xa.ndim:  # 0-d: NumPy's scalars; broadcasts: the formula
        return None
    e = _take_gelu_erf(xa)  # Note [Gelu's erf kept for the backward]
    if e is None:
        e = _cpu_erf(xa * _elementwise._INV_SQRT_2)
    cdf = 0.5 * (1 + e)
    pdf = _exp(-0.5 * xa * xa) * _elementwise._INV_SQRT_2PI
    return (make(ga * (cdf + xa * pdf), g._dtype, g._device),)


def _reduced_shape(args: tuple[Any, ...], shape: tuple[int, ...]) -> Any:
    """The shape a reduction's gradient broadcasts from (its reduced dims as 1), for a
    positional ``(self[, dim[, keepdim]])`` call of ``sum``/``mean`` over ``shape``
    (``dtype`` is keyword-only: such a call is recorded bound); None for what the lane
    leaves to the formula."""
    n = len(args)
    dim = args[1] if n > 1 else None
    if n > 3 or (n > 2 and type(args[2]) is not bool):
        return None
    ndim = len(shape)
    if dim is None or dim == []:
        dims = range(ndim)
    else:
        dims = [dim] if type(dim) is int else dim
        if type(dims) not in (list, tuple) or not dims:
            return None
        for d in dims:
            if type(d) is not int or not -ndim <= d < ndim:
                return None
        dims = {d % ndim for d in dims}
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _expanded(ga: Any, like: Any, shape: Any, g: Any) -> Any:
    """``expand_to``'s copy: ``ga`` broadcast to ``like``'s shape in a new row-major array
    (the dense copy ``_to_copy`` makes of the stride-0 expansion)."""
    out = np.empty(like._array.shape, ga.dtype)
    out[...] = ga.reshape(shape)
    return make(out, g._dtype, g._device)


def _reduced_input(g: Any, args: tuple[Any, ...]) -> Any:
    """``(x, reduced shape)`` of a ``sum``/``mean`` call the lanes take: plain tensors,
    a non-empty input whose reduced shape differs from its own (keepdim over size-1 dims
    and 0-d inputs: the formula returns a view of ``g``, left to it); else None."""
    if not args or not _plain(g, args[0]):
        return None
    x = args[0]
    shape = x._array.shape
    reduced = _reduced_shape(args, shape)
    if reduced is None or reduced == shape or not x._array.size:
        return None
    return x, reduced


def sum_lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    # ``_sum``: the incoming gradient expanded back to the input's shape, as a copy.
    taken = _reduced_input(g, args)
    if taken is None:
        return None
    x, reduced = taken
    return (_expanded(g._array, x, reduced, g),)


def mean_lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    # ``_mean``: ``g / count`` (the div kernel: NumPy's division by the int, a 0-d result
    # made an array again), expanded as ``sum_lane``'s.
    taken = _reduced_input(g, args)
    if taken is None:
        return None
    x, reduced = taken
    count = 1
    for size, r in zip(x._array.shape, reduced, strict=True):
        if r == 1:
            count *= size
    q = g._array / count
    if type(q) is not _ndarray:
        q = np.asarray(q)
    return (_expanded(q, x, reduced, g),)


def pow_lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    # ``x ** 2`` (a squared error): ``g * (2 * x ** 1)``, where the CPU pow by 1 is ``x``
    # itself and ``2 * x`` NumPy's exact doubling.  Other exponents take the formula.
    if len(args) != 2 or type(args[1]) is not int or args[1] != 2 or not _plain(g, args[0]):
        return None
    xa, ga = args[0]._array, g._array
    if xa.shape != ga.shape or not xa.ndim:
        return None
    return (make(ga * (xa * 2), g._dtype, g._device),)


def _of_input(name: str, grad: Callable[[Any, Any], Any]) -> Lane:
    """The lane of a one-input formula that reads its input: ``grad(g, x)`` on the
    arrays of one shape with at least one dimension (0-d arrays' arithmetic gives NumPy
    scalars)."""

    def lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
        if len(args) != 1 or not _plain(g, args[0]):
            return None
        xa, ga = args[0]._array, g._array
        if xa.shape != ga.shape or not xa.ndim:
            return None
        return (make(grad(ga, xa), g._dtype, g._device),)

    lane.__name__ = lane.__qualname__ = name
    return lane


def _silu_grad(ga: Any, xa: Any) -> Any:
    # ``g * sigmoid(x) * (1 + x * (1 - sigmoid(x)))``, left to right, the CPU sigmoid
    # kernel's formula (computed once: the formula's two calls give the same bits) and
    # NumPy's arithmetic with the Python numbers (weak scalars, as the kernels take them).
    s = _cpu_formulas.sigmoid(xa)
    return ga * s * (1 + xa * (1 - s))


def softplus_lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    # ``_softplus``: ``where(x * beta > threshold, g, g * sigmoid(x * beta))``, the mul
    # kernel's product with the Python number and the CPU sigmoid kernel's formula.
    n = len(args)
    if not 1 <= n <= 3 or not _plain(g, args[0]):
        return None
    beta = args[1] if n > 1 else 1
    threshold = args[2] if n > 2 else 20
    if type(beta) not in (int, float) or type(threshold) not in (int, float):
        return None
    xa, ga = args[0]._array, g._array
    if xa.shape != ga.shape or not xa.ndim:
        return None
    xb = xa * beta
    grad = np.where(xb > threshold, ga, ga * _cpu_formulas.sigmoid(xb))
    return (make(grad, g._dtype, g._device),)


# ``g * sgn(x)``: for a real float x the CPU sign kernel's ``(x > 0) - (x < 0)`` (0 for
# NaN and both zeros), times ``g``.
abs_lane = _of_input("abs_lane", lambda ga, xa: ga * _cpu_formulas.sign(xa))
silu_lane = _of_input("silu_lane", _silu_grad)


def _result_arrays(g: Any, out: Any) -> Any:
    """``(g's array, the saved output's array)`` for a formula that reads its result, of
    one shape with at least one dimension (0-d arrays' arithmetic gives NumPy scalars);
    None for anything else."""
    if out is None or not _plain(g, out):
        return None
    ga, oa = g._array, out._array
    if ga.shape != oa.shape or not oa.ndim:
        return None
    return ga, oa


def _of_result(name: str, grad: Callable[[Any, Any], Any]) -> Lane:
    """The lane of a one-input formula that reads only its result: ``grad(g, out)`` on
    the arrays, each step as the mul and rsub kernels compute it."""

    def lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
        arrays = _result_arrays(g, out)
        if arrays is None:
            return None
        ga, oa = arrays
        return (make(grad(ga, oa), g._dtype, g._device),)

    lane.__name__ = lane.__qualname__ = name
    return lane


tanh_lane = _of_result("tanh_lane", lambda ga, oa: ga * (1 - oa * oa))  # g * (1 - out * out)
sigmoid_lane = _of_result("sigmoid_lane", lambda ga, oa: ga * oa * (1 - oa))  # left to right
exp_lane = _of_result("exp_lane", lambda ga, oa: ga * oa)  # g * out


def layer_norm_lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    # ``_layer_norm``'s formula, each operator call as its CPU kernel computes it: the
    # mean kernel's sum and division (the forward's own ``mean_keep``), ``rsqrt`` as
    # reciprocal of sqrt, ``grad_for``'s sum
    # over the leading dims.  ~20 dispatched calls (~80 us on [32, 64]) become NumPy's.
    n = len(args)
    if n < 2:
        return None
    x, norm = args[0], args[1]
    w = args[2] if n > 2 else None
    b = args[3] if n > 3 else None
    eps = args[4] if n > 4 else 1e-05
    if type(eps) is not float or type(norm) is not list or not _plain(g, x):
        return None
    if (w is not None and not _plain(g, w)) or (b is not None and not _plain(g, b)):
        return None
    xa, ga = x._array, g._array
    k = len(norm)
    lead = xa.ndim - k
    if not k or lead < 0 or ga.shape != xa.shape or not xa.size:
        return None
    dims = tuple(range(lead, xa.ndim))
    kept = _take_layer_norm(xa, k, eps)  # Note [Layer norm's statistics kept ...]
    if kept is not None:
        xhat, rstd = kept
    else:
        centered = xa - _mean_keep(xa, dims)
        rstd = np.reciprocal(np.sqrt(_mean_keep(centered * centered, dims) + eps))
        xhat = centered * rstd
    leading = tuple(range(lead))
    gw = gb = gx = None
    if w is not None and w._dispatch_bits & _RG:
        t = ga * xhat
        gw = make(_reduce(t, leading, None, None, False) if lead else t, g._dtype, g._device)
    if b is not None and b._dispatch_bits & _RG:
        gb = make(_reduce(ga, leading, None, None, False), g._dtype, g._device) if lead else g
    if x._dispatch_bits & _RG:
        gh = ga * w._array if w is not None else ga
        t = gh - _mean_keep(gh, dims) - xhat * _mean_keep(gh * xhat, dims)
        gx = make(rstd * t, g._dtype, g._device)
    return gx, gw, gb


def transpose_lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    # t() and transpose(x, 0, 1) of a matrix: the gradient is the transpose back.
    if len(args) != 3 or not _plain(g) or g._array.ndim != 2:
        return None
    d0, d1 = args[1], args[2]
    if type(d0) is not int or type(d1) is not int or not (-2 <= d0 < 2 and -2 <= d1 < 2):
        return None
    if not (d0 - d1) % 2:
        return None
    return (_view_t(g),)


def _softmax_dim(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    """``(g's array, the output's array, dim)`` of a ``softmax.int``/``log_softmax.int``
    call with an int dim and no dtype (its gradient keeps the dtype: ``cast_like`` is
    the identity), or None."""
    n = len(args)
    if not 2 <= n <= 3 or (n == 3 and args[2] is not None):
        return None
    arrays = _result_arrays(g, out)
    d = args[1]
    if arrays is None or type(d) is not int or not -arrays[1].ndim <= d < arrays[1].ndim:
        return None
    return arrays[0], arrays[1], d % arrays[1].ndim


def softmax_lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    # ``_softmax``: ``out * (g - sum(g * out, [d], True))``, the sum kernel's one-axis
    # add.reduce.
    taken = _softmax_dim(g, args, out)
    if taken is None:
        return None
    ga, oa, d = taken
    return (make(oa * (ga - _reduce(ga * oa, d, None, None, True)), g._dtype, g._device),)


def log_softmax_lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    # ``_log_softmax``: ``g - exp(out) * sum(g, [d], True)``.
    taken = _softmax_dim(g, args, out)
    if taken is None:
        return None
    ga, oa, d = taken
    grad = ga - np.exp(oa) * _reduce(ga, d, None, None, True)
    return (make(grad, g._dtype, g._device),)


def max_dim_lane(grads: list[Any], args: tuple[Any, ...], out: Any) -> Any:
    # ``x.max(d)`` / ``x.min(d)`` (values and indices): ``_select_backward``'s where of
    # the values' gradient at the indices along ``d`` and zeros elsewhere, as
    # ``put_along_axis`` writes it (a copy of each gradient element).  Several outputs:
    # ``grads`` holds each one's (None for the indices, which have none).
    g = grads[0]
    n = len(args)
    if g is None or not 2 <= n <= 3 or not _plain(g, args[0]):
        return None
    x, d = args[0], args[1]
    keepdim = args[2] if n > 2 else False
    shape = x._array.shape
    if type(d) is not int or type(keepdim) is not bool or not -len(shape) <= d < len(shape):
        return None
    d %= len(shape)
    index = out[1]._array
    ga = g._array
    if not keepdim:
        index, ga = np.expand_dims(index, d), np.expand_dims(ga, d)
    z = np.zeros(shape, ga.dtype)
    np.put_along_axis(z, index, ga, d)
    return (make(z, g._dtype, g._device),)


max_dim_lane.all_outputs = True  # type: ignore[attr-defined]


def max_pool2d_lane(grads: list[Any], args: tuple[Any, ...], out: Any) -> Any:
    # ``_max_pool2d``: the values' gradient added at each window's argmax into zeros of
    # the input's planes (a scatter_add along the flattened plane, positions in C order:
    # overlapping windows may pick one element twice), by the same ``add_at`` the
    # scatter_add kernel calls, with the same key: each plane's number, the argmax.
    g = grads[0]
    if g is None or not args or not _plain(g, args[0]):
        return None
    xa, ga, index = args[0]._array, g._array, out[1]._array
    if xa.ndim not in (3, 4) or ga.shape != index.shape or not xa.size:
        return None
    plane = xa.shape[-2] * xa.shape[-1]
    planes = xa.size // plane
    z = np.zeros((planes, plane), ga.dtype)
    key = (np.arange(planes)[:, None], index.reshape(planes, -1))
    _add_at(z, key, ga.reshape(planes, -1))
    # The formula's result is a view: its (..., h * w) scatter reshaped to the input's.
    base = make(z.reshape(*xa.shape[:-2], plane), g._dtype, g._device)
    result = make(z.reshape(xa.shape), g._dtype, g._device)
    mark_view(result, base)
    return (result,)


max_pool2d_lane.all_outputs = True  # type: ignore[attr-defined]


def embedding_lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    # ``_embedding``: each gradient row added at its index into zeros of the weight's
    # shape, by the same ``add_at`` the formula's ``index_put_`` calls (Note
    # [Accumulation at flat indices]); the rows at ``padding_idx``, which the formula
    # zeroes before adding, are left out (adding +0.0 to the +0.0 there changes nothing).
    n = len(args)
    if not 2 <= n <= 5 or not _plain(g, args[0]):
        return None
    w, indices = args[0], args[1]
    padding = args[2] if n > 2 else -1
    if (n > 3 and args[3] is not False) or type(padding) is not int:
        return None  # scale_grad_by_freq: the formula
    if type(indices) is not Tensor or type(indices._array) is not _ndarray:
        return None
    wa, flat = w._array, indices._array.reshape(-1)
    if wa.ndim != 2 or g._array.shape != (*indices._array.shape, wa.shape[1]):
        return None
    rows = g._array.reshape(-1, wa.shape[1])
    if padding >= 0:
        keep = flat != padding
        flat, rows = flat[keep], rows[keep]
    z = np.zeros(wa.shape, g._array.dtype)
    _add_at(z, (flat,), rows)
    return (make(z, g._dtype, g._device), None)


def _scattered(g: Any, x: Any, d: int, key: Any) -> Any:
    """Zeros of ``x``'s shape in ``g``'s dtype with ``g`` written at ``key`` along dim ``d``
    (a slice or an index): what ``_slice``'s scatter and ``_select``'s where give, both
    copies of ``g``'s elements (NaN, -0.0 and all) into zeros."""
    z = np.zeros(x._array.shape, g._array.dtype)
    z[(slice(None),) * d + (key,)] = g._array
    return make(z, g._dtype, g._device)


def slice_lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    # ``x[:, :32]``, ``x[1:3]``, ``x.narrow(...)``: ``_slice``'s zeros with ``g`` at the
    # slice (its formula builds an arange index, expands it and scatters).  The formula
    # returns ``g`` itself for a slice that keeps every element, and takes empty ones.
    n = len(args)
    if not 2 <= n <= 5 or not _plain(g):
        return None
    x, d = args[0], args[1]
    start = args[2] if n > 2 else None
    end = args[3] if n > 3 else None
    step = args[4] if n > 4 else 1
    if type(d) is not int or type(step) is not int or type(x) is not Tensor:
        return None
    if (start is not None and type(start) is not int) or (end is not None and type(end) is not int):
        return None
    shape = x._array.shape
    if not -len(shape) <= d < len(shape) or step <= 0:
        return None
    d %= len(shape)
    key = slice(*slice(start, end, step).indices(shape[d]))
    if g._array.shape == shape or not len(range(key.start, key.stop, key.step)):
        return None
    return (_scattered(g, x, d, key),)


def select_lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    # ``x[3]``, ``x[:, 0]``: ``_select``'s where of ``g`` at the index and zeros elsewhere.
    if len(args) != 3 or not _plain(g):
        return None
    x, d, index = args
    if type(d) is not int or type(index) is not int or type(x) is not Tensor:
        return None
    shape = x._array.shape
    if not -len(shape) <= d < len(shape):
        return None
    d %= len(shape)
    if not shape[d]:
        return None
    return (_scattered(g, x, d, index % shape[d]),)


def t_lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    # t() of a matrix: the gradient is the transpose back (t of a vector or a scalar
    # takes the formula).
    if len(args) != 1 or not _plain(g) or g._array.ndim != 2:
        return None
    return (_view_t(g),)


def cross_entropy_lane(g: Any, args: tuple[Any, ...], out: Any) -> Any:
    # ``_cross_entropy``'s first case (no weights, no graph recorded, a target that does
    # not require grad): the fused kernel, without binding the call or the packet.  A
    # batch of (N, C) logits whose class targets are all >= 0 with a negative
    # ignore_index (the default -100: no row ignored) goes straight to the CPU kernel's
    # arithmetic (``rows_grad``, the same function its fast path calls, so the same
    # bits): the forward that recorded this node already checked the targets' range (a
    # target >= C still raises in the arithmetic; then the kernel runs and raises
    # PyTorch's error).  Anything else: the kernel, called as the formula calls it.
    n = len(args)
    if n < 2 or n > 6:
        return None
    x, target = args[0], args[1]
    weight = args[2] if n > 2 else None
    reduction = args[3] if n > 3 else 1
    ignore = args[4] if n > 4 else -100
    eps = args[5] if n > 5 else 0.0
    if weight is not None or type(target) is not Tensor or not _plain(g, x):
        return None
    if type(eps) is not float and type(eps) is not int:
        return None
    eps = smoothing("cross_entropy", eps)  # the kernel's rule: PyTorch smooths only above 0
    if target._dtype.is_floating_point:  # class probabilities
        if target._dispatch_bits & _RG:
            return None  # the formula computes the target's gradient too
        return _CROSS_ENTROPY_BACKWARD(g, x, target, reduction, ignore, eps), None, None
    mode = REDUCTIONS.get(reduction) if type(reduction) is int else None
    a, t, ga = x._array, target._array, g._array
    if (
        mode is not None
        and type(ignore) is int
        and ignore < 0
        and a.ndim == 2
        and a.size
        and target._dtype is _dtype.int64
        and type(t) is _ndarray
        and t.shape == a.shape[:1]
        and ga.shape == (t.shape if mode == "none" else ())
        and _min_all(t) >= 0
    ):
        rows_grad = getattr(_CROSS_ENTROPY_BACKWARD.below(_CPU_BITS), "rows_grad", None)
        if rows_grad is not None:
            try:
                p = rows_grad(a, t, ga, mode, eps)
            except IndexError:
                p = None  # a target >= C: the kernel raises PyTorch's error
            if p is not None:
                return make(p, x._dtype, x._device), None, None
    return _CROSS_ENTROPY_BACKWARD(g, x, target, reduction, ignore, eps), None, None


_CROSS_ENTROPY_BACKWARD = ops.core._cross_entropy_backward.default
_CPU_BITS = DispatchKeySet(DispatchKey.CPU).bits  # the kernel at the CPU key
_min_all = np.minimum.reduce
_exp = np.exp
_cpu_erf = _cpu_formulas.erf  # the CPU erf kernel's function


def seed(out: Any) -> Any:
    """``ones_like(out)``, the gradient ``out.backward()`` starts from, as the CPU kernel
    makes it (a new ``ones`` array of the output's shape and dtype), for a plain CPU tensor
    under the default thread state; None otherwise (the dispatched call: a Python mode
    sees it, a plug-in or CUDA device makes its own)."""
    if type(out) is not Tensor or not fastpaths.ENABLED:
        return None
    if _tls.NONDEFAULT[0] and _tls.state.sets != _DEFAULT_SETS:
        return None
    a = out._array
    if type(a) is not _ndarray:
        return None
    if a.ndim:
        return make(np.ones(a.shape, a.dtype), out._dtype, out._device)
    # A loss: a copy of a kept 0-d one (np.ones is a Python function: ~3 us against 0.5).
    one = _SCALAR_ONES.get(a.dtype)
    if one is None:
        one = _SCALAR_ONES[a.dtype] = np.ones((), a.dtype)
    return make(one.copy(), out._dtype, out._device)


_SCALAR_ONES: dict[Any, Any] = {}


LANES: dict[Any, Lane] = {
    _linalg._mm: mm_lane,
    _linalg._matmul: mm_lane,
    _linalg._addmm: addmm_lane,
    _elementwise._add: add_lane,
    _elementwise._sub: sub_lane,
    _elementwise._mul: mul_lane,
    _shape._transpose: transpose_lane,
    _shape._t: t_lane,
    _shape._slice: slice_lane,
    _shape._select: select_lane,
    _reduction._max_dim: max_dim_lane,
    _nn._max_pool2d: max_pool2d_lane,
    _nn._embedding: embedding_lane,
    _nn._cross_entropy: cross_entropy_lane,
    _nn._layer_norm: layer_norm_lane,
    _nn._softmax: softmax_lane,
    _nn._log_softmax: log_softmax_lane,
    _elementwise._gelu: gelu_lane,
    _elementwise._softplus: softplus_lane,
    _reduction._sum: sum_lane,
    _reduction._mean: mean_lane,
    _elementwise._pow: pow_lane,
}


_INLINE: dict[str, Lane] = {
    "relu": relu_lane,
    "neg": neg_lane,
    "abs": abs_lane,
    "tanh": tanh_lane,
    "sigmoid": sigmoid_lane,
    "exp": exp_lane,
    "silu": silu_lane,
}


def install() -> None:
    """Attach each lane to its formula (``formula.lane``, read by ``OpNode.apply``).  A
    formula object serves every overload that shares it (``_add``: ``add.Tensor`` and
    ``add.Scalar``; in-place forms record bound calls, which no lane takes): each lane's
    guards hold for all of them."""
    for formula, lane in LANES.items():
        formula.lane = lane  # type: ignore[attr-defined]
    _backward._seed = seed
    for row in OP_TABLE:
        inline = _INLINE.get(row.name)  # formulas made inline in the table
        if inline is not None:
            for _, formula in row.derivatives():
                formula.lane = inline  # type: ignore[union-attr]

"""Operator rows: the neural-network functions (``tt.nn.functional``).

Imports: ``tensor._dtype`` and this package's ``_grad`` and ``_row``.  Each section
holds its formulas first and its rows below them.

ATen's names and schemas (``cross_entropy_loss``, ``max_pool2d_with_indices``,
``native_dropout``; ``reduction`` is ATen's int: 0 none, 1 mean, 2 sum).  The
``nn`` family has kernels per backend (``backends.*.nn``); ``composite`` rows are
CompositeImplicitAutograd kernels written with other operators
(``backends.composite.nn``), so autograd differentiates their decomposition.
``tt.nn.functional`` wraps them with PyTorch's Python signatures.

Convolution's gradients are convolutions again (so second derivatives come from
this same formula): the weight's is the input correlated with the output gradient
(stride and dilation swapped), the input's the transposed convolution, written as
a convolution of the stride-dilated gradient with the flipped, transposed weight.
Padding is made explicit (zeros concatenated), which also covers ``padding='same'``
with its odd pixel at the end.  ``avg_pool2d``'s input gradient is that transposed
convolution with a kernel of ones, per channel, after dividing by each window's
divisor.
"""

from __future__ import annotations

from typing import Any

from .._dtype import int64
from . import _grad
from ._row import ALL, FLOATS, NO_BOOL, REAL_NO_BOOL, NoFormula, OpInfo

__all__ = ["ROWS"]

core = _grad.core
needs = _grad.needs_grad
saves = _grad.saves


def _nn(name: str, *schemas: str, **kw: object) -> OpInfo:
    kw.setdefault("method", False)
    kw.setdefault("dtypes", FLOATS)
    return OpInfo(name, schemas, "nn", **kw)  # type: ignore[arg-type]


def _composite(name: str, *schemas: str, family: str = "composite", **kw: object) -> OpInfo:
    kw.setdefault("method", False)
    kw.setdefault("dtypes", FLOATS)
    return OpInfo(name, schemas, family, **kw)  # type: ignore[arg-type]


def _explicit(name: str, *schemas: str, **kw: object) -> OpInfo:
    """A CompositeExplicitAutograd row: its kernel is written with other operators for
    every backend (``backends.composite.nn``) and its derivative is a formula of its own
    (Note [Explicit composites] there)."""
    return _composite(name, *schemas, family="explicit", **kw)


_POOL = "int[2] kernel_size, int[2] stride=[], int[2] padding=0"
_CONV = "Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1"
# Autocast policies PyTorch gives these rows on both devices.
_FP32 = {"cpu": "fp32", "cuda": "fp32"}
_LOWER = {"cpu": "lower_precision_fp", "cuda": "lower_precision_fp"}


def _pair(v: Any, default: Any = None) -> tuple[int, int]:
    if isinstance(v, (list, tuple)):
        if not v:
            return _pair(default)
        return (int(v[0]), int(v[-1])) if len(v) in (1, 2) else (int(v[0]), int(v[1]))
    return int(v), int(v)


# -- softmax, log_softmax, layer_norm ------------------------------------------------------------
@saves("result")
def _softmax(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, d = a["self"], a["dim"]
    grad = out * (g - core.sum(g * out, [d], True))
    return (_grad.cast_like(grad, x),)


@saves("result")
def _log_softmax(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, d = a["self"], a["dim"]
    grad = g - core.exp(out) * core.sum(g, [d], True)
    return (_grad.cast_like(grad, x),)


@saves("input", "weight")
def _layer_norm(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, w, b, eps = a["input"], a["weight"], a["bias"], a["eps"]
    k = len(a["normalized_shape"])
    dims = list(range(x.ndim - k, x.ndim))
    centered = x - core.mean(x, dims, True)
    rstd = core.rsqrt(core.mean(centered * centered, dims, True) + eps)
    xhat = centered * rstd
    gw = _grad.grad_for(g * xhat, w) if needs(w) else None
    gb = _grad.grad_for(g, b) if needs(b) else None
    gx = None
    if needs(x):
        gh = g * w if w is not None else g
        gx = rstd * (gh - core.mean(gh, dims, True) - xhat * core.mean(gh * xhat, dims, True))
    return gx, gw, gb


@saves("result")
def _native_dropout(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    p, train = a["p"], a["train"]
    if train is False:
        return (g[0],)
    scale = 0.0 if p >= 1 else 1.0 / (1.0 - p)
    return (g[0] * out[1] * scale,)


@saves("indices")
def _embedding(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    w, indices, padding_idx = a["weight"], a["indices"], a["padding_idx"]
    n, dim = w.shape
    flat = core.reshape(indices, [-1])
    rows = core.reshape(g, [-1, dim])
    if a["scale_grad_by_freq"]:
        ones = core.ones([flat.shape[0]], dtype=g.dtype, device=g.device)
        counts = core.scatter_add(core.zeros([n], dtype=g.dtype, device=g.device), 0, flat, ones)
        rows = rows / core.unsqueeze(core.gather(counts, 0, flat), 1)
    if padding_idx is not None and padding_idx >= 0:
        pad = core.eq(core.unsqueeze(flat, 1), padding_idx)
        rows = core.where(pad, core.zeros_like(rows), rows)
    # Each row added at its index in order (PyTorch's index_add_ of the rows): an
    # index_put that accumulates, whose key is the rows' index alone.
    zeros = core.zeros([n, dim], dtype=g.dtype, device=g.device)
    if _grad.records_graph():
        return core.index_put(zeros, [flat], rows, True), None
    return core.index_put_(zeros, [flat], rows, True), None  # into its own zeros


_NORMALIZATION: tuple[OpInfo, ...] = (
    _nn("softmax", "softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
        method=True, grad=_softmax, autocast={"cuda": "fp32_set_opt_dtype"}, out=True),
    _nn("log_softmax", "log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
        method=True, grad=_log_softmax, autocast={"cuda": "fp32_set_opt_dtype"}, out=True),
    _nn(
        "layer_norm",
        "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
        "Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
        grad=_layer_norm, autocast={"cuda": "fp32"},
    ),
    _nn("native_dropout", "native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)",
        function=None, grad=_native_dropout),
    _composite("dropout", "dropout(Tensor input, float p, bool train) -> Tensor", dtypes=ALL),
    _composite("dropout_", "dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)",
               dtypes=ALL),
    OpInfo(
        "embedding",
        ("embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, "
         "bool scale_grad_by_freq=False, bool sparse=False) -> Tensor",),
        "nn", method=False, grad=_embedding,
    ),
)  # fmt: skip


# -- cross_entropy ------------------------------------------------------------------------------------
@saves("self", "target", "weight")
def _cross_entropy(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    """With ``a[i, c]`` the coefficients of ``loss_i = -sum_c a[i, c] * log_softmax(x)[i, c]``
    (target classes or probabilities, label smoothing and class weights folded in), the
    input gradient is ``G_i * (p[i, c] * sum_c a[i, c] - a[i, c])``."""
    x, target, weight = a["self"], a["target"], a["weight"]
    reduction, ignore, eps = a["reduction"], a["ignore_index"], a["label_smoothing"]
    eps = eps if eps > 0 else 0.0  # PyTorch smooths nothing for 0, a negative value or NaN
    cdim = 0 if x.ndim == 1 else 1
    n_classes = x.shape[cdim]
    if weight is None and not _grad.records_graph() and not needs(target):
        # The kernel (class targets or probabilities, smoothed or not); the forward
        # has refused a label_smoothing above 1.
        return core._cross_entropy_backward(g, x, target, reduction, ignore, eps), None, None
    if weight is None and not eps and not target.dtype.is_floating_point:
        return _cross_entropy_classes(g, x, target, reduction, ignore, cdim), None, None
    logp = core.log_softmax.int(x, cdim)
    w = None
    if weight is not None:
        w = core.reshape(weight, [n_classes] + [1] * (x.ndim - cdim - 1))
    if target.dtype.is_floating_point:  # class probabilities
        smoothed = target * (1 - eps) + eps / n_classes if eps else target
        coef = smoothed * w if w is not None else smoothed
        denominator: Any = x.numel() // max(n_classes, 1)
    else:
        classes = core.reshape(
            core.arange(0, n_classes, 1, device=x.device), [n_classes] + [1] * (x.ndim - cdim - 1)
        )
        picked = core.eq(classes, core.unsqueeze(target, cdim))
        keep = core.unsqueeze(core.logical_not(core.eq(target, ignore)), cdim)
        hot = core._to_copy(core.logical_and(picked, keep), dtype=x.dtype)
        kept = core._to_copy(keep, dtype=x.dtype)
        coef = hot * (1 - eps)
        if eps:
            coef = coef + kept * (eps / n_classes)
        if w is not None:
            coef = coef * w
            denominator = core.sum(hot * w)
        else:
            denominator = core.sum(kept)
        # Every row ignored: coef is all zeros and so is PyTorch's gradient (not 0 / 0).
        denominator = denominator + core.eq(core.sum(kept), 0)
    if reduction == 0:  # none
        scale = core.unsqueeze(g, cdim)
    elif reduction == 1:  # mean
        scale = g / denominator
    else:
        scale = g
    gx = scale * (core.exp(logp) * core.sum(coef, [cdim], True) - coef) if needs(x) else None
    gt = None
    if needs(target):
        gt = -scale * logp * (w if w is not None else 1) * (1 - eps)
    return gx, gt, None


def _cross_entropy_classes(
    g: Any, x: Any, target: Any, reduction: int, ignore: int, cdim: int
) -> Any:  # fmt: skip
    """The common case (class targets, no weights, no smoothing): ``softmax - one_hot``
    on the rows not ignored, in fewer operators."""
    n = x.shape[cdim]
    classes = core.reshape(core.arange(0, n, 1, device=x.device), [n] + [1] * (x.ndim - cdim - 1))
    hot = core.eq(classes, core.unsqueeze(target, cdim))  # no class equals an ignored index
    keep = core.ne(target, ignore)
    p = core.softmax.int(x, cdim)
    grad = core.where(hot, p - 1, p) * core.unsqueeze(keep, cdim)
    if reduction == 0:
        return grad * core.unsqueeze(g, cdim)
    if reduction == 1:  # over the rows kept; every row ignored gives zeros, as in PyTorch
        return grad * (g / core.clamp(core.sum(keep), 1))
    return grad * g


@saves("self", "target")
def _mse_loss(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    """PyTorch's ``mse_loss_backward(grad, self, target)``, ``norm * (self - target) *
    grad`` with norm 2 (2 / numel for a mean) in the dtype, and the target's with the two
    swapped (not its negation: the sign of a zero)."""
    x, y, reduction = a["self"], a["target"], a["reduction"]

    def backward(first: Any, second: Any) -> Any:
        diff = first - second
        norm = 2.0 / diff.numel() if reduction == 1 and diff.numel() else 2.0
        return _grad.grad_for(diff * norm * g, first)

    return (
        backward(x, y) if needs(x) else None,
        backward(y, x) if needs(y) else None,
    )


@saves("self", "target", "weight", "pos_weight")
def _bce_with_logits(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    """PyTorch's ``binary_cross_entropy_with_logits_backward`` (``sigmoid(x) - t``, with
    ``pos_weight`` ``(pw * t + 1 - t) * sigmoid(x) - pw * t``) and its ``_target_backward``
    (``-x``, with ``pos_weight`` ``log_sigmoid(-x) - log_sigmoid(x) * pw``), each times the
    gradient and the weight, over numel for a mean, in PyTorch's order."""
    x, t, weight, pw, reduction = (
        a["self"], a["target"], a["weight"], a["pos_weight"], a["reduction"],
    )  # fmt: skip

    def finish(grad: Any, like: Any) -> Any:
        grad = grad * g
        if weight is not None:
            grad = grad * weight
        if reduction == 1:
            grad = grad / like.numel()
        return _grad.grad_for(grad, like)

    gx = gt = None
    if needs(x):
        if pw is not None:
            scaled = pw * t
            gx = finish((scaled + 1 - t) * core.sigmoid(x) - scaled, x)
        else:
            gx = finish(core.sigmoid(x) - t, x)
    if needs(t):
        if pw is not None:
            gt = finish(_log_sigmoid(-x) - _log_sigmoid(x) * pw, t)
        else:
            gt = finish(-x, t)
    return gx, gt, None, None


def _log_sigmoid(x: Any) -> Any:
    """PyTorch's CPU log_sigmoid: ``min(x, 0) - log1p(exp(-|x|))``."""
    return core.minimum(x, core.zeros_like(x)) - core.log1p(core.exp(-core.abs(x)))


_LOSSES: tuple[OpInfo, ...] = (
    _nn(
        "cross_entropy_loss",
        "cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
        "SymInt ignore_index=-100, float label_smoothing=0.0) -> Tensor",
        function=None, grad=_cross_entropy, autocast={"cpu": "fp32"},
    ),
    # The input gradient of cross_entropy_loss without class weights (class targets or
    # probabilities, label smoothing or none) in one kernel (PyTorch differentiates
    # nll_loss, the smoothing's sum and _log_softmax_backward_data).  cross_entropy's
    # formula calls it when the backward records no graph; with create_graph it
    # differentiates a composite instead.
    _nn(
        "_cross_entropy_backward",
        "_cross_entropy_backward(Tensor grad_output, Tensor self, Tensor target, "
        "int reduction=1, SymInt ignore_index=-100, float label_smoothing=0.0) -> Tensor",
        function=None,
        grad=NoFormula("a backward kernel: cross_entropy's formula calls it only when "
                       "the backward records no graph; with create_graph it differentiates "
                       "a composite"),
    ),
    _explicit("mse_loss", "mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
              function=None, autocast=_FP32, grad=_mse_loss),
    _explicit(
        "binary_cross_entropy_with_logits",
        "binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, "
        "Tensor? pos_weight=None, int reduction=1) -> Tensor",
        py="binary_cross_entropy_with_logits",  # Note [binary_cross_entropy_with_logits defaults]
        autocast=_FP32, grad=_bce_with_logits,
    ),
)  # fmt: skip


# -- convolution and pooling -------------------------------------------------------------------------
def _pad(x: Any, pads: tuple[int, int, int, int]) -> Any:
    """``x`` with zero rows/columns added: (top, bottom, left, right) of the last two dims."""
    for dim, (before, after) in ((x.ndim - 2, pads[:2]), (x.ndim - 1, pads[2:])):
        parts = []
        for n in (before, after):
            shape = list(x.shape)
            shape[dim] = n
            parts.append(core.zeros(shape, dtype=x.dtype, device=x.device) if n else None)
        if parts[0] is not None or parts[1] is not None:
            x = core.cat([p for p in (parts[0], x, parts[1]) if p is not None], dim)
    return x


def _fit(x: Any, size: int, dim: int) -> Any:
    """``x`` cut or zero-padded at the end of ``dim`` to ``size``."""
    n = x.shape[dim]
    if n > size:
        return core.narrow(x, dim, 0, size)
    if n < size:
        shape = list(x.shape)
        shape[dim] = size - n
        return core.cat([x, core.zeros(shape, dtype=x.dtype, device=x.device)], dim)
    return x


def _dilate(g: Any, stride: tuple[int, int]) -> Any:
    """``g`` with ``stride - 1`` zeros between neighbours along the last two dims."""
    for dim, s in ((g.ndim - 2, stride[0]), (g.ndim - 1, stride[1])):
        if s == 1:
            continue
        n = g.shape[dim]
        zeros = core.zeros_like(g)
        spread = core.stack([g] + [zeros] * (s - 1), dim + 1)  # (..., n, s, ...)
        shape = list(g.shape)
        shape[dim] = n * s
        g = core.narrow(core.reshape(spread, shape), dim, 0, (n - 1) * s + 1)
    return g


def _conv_transpose(
    g: Any, w: Any, stride: tuple[int, int], dilation: tuple[int, int], groups: int,
    size: tuple[int, int],
) -> Any:  # fmt: skip
    """The input gradient of an unpadded ``conv2d(x, w, stride, dilation, groups)`` with
    ``x``'s spatial ``size``: the transposed convolution of ``g``."""
    o, cg, kh, kw = w.shape
    wt = core.reshape(w, [groups, o // groups, cg, kh, kw])
    wt = core.reshape(core.transpose.int(wt, 1, 2), [groups * cg, o // groups, kh, kw])
    wt = core.flip(wt, [2, 3])
    full = _pad(
        _dilate(g, stride),
        (dilation[0] * (kh - 1),) * 2 + (dilation[1] * (kw - 1),) * 2,
    )
    grad = core.conv2d(full, wt, None, [1, 1], [0, 0], list(dilation), groups)
    return _fit(_fit(grad, size[0], grad.ndim - 2), size[1], grad.ndim - 1)


def _conv_weight_grad(
    xp: Any, g: Any, w: Any, stride: tuple[int, int], dilation: tuple[int, int], groups: int
) -> Any:
    """The weight gradient of an unpadded convolution of the (padded) input ``xp``."""
    o, cg, kh, kw = w.shape
    og = o // groups
    batched_x = xp if xp.ndim == 4 else core.unsqueeze(xp, 0)
    batched_g = g if g.ndim == 4 else core.unsqueeze(g, 0)
    parts = []
    for k in range(groups):
        xk = core.transpose.int(core.narrow(batched_x, 1, k * cg, cg), 0, 1)  # (cg, n, h, w)
        gk = core.transpose.int(core.narrow(batched_g, 1, k * og, og), 0, 1)  # (og, n, oh, ow)
        corr = core.conv2d(xk, gk, None, list(dilation), [0, 0], list(stride), 1)  # (cg, og, ...)
        corr = core.narrow(core.narrow(corr, 2, 0, kh), 3, 0, kw)
        parts.append(core.transpose.int(corr, 0, 1))
    return parts[0] if groups == 1 else core.cat(parts, 0)


def _conv_pads(a: dict[str, Any], w: Any) -> tuple[int, int, int, int]:
    padding = a["padding"]
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0, 0, 0)
        dh, dw = _pair(a["dilation"])
        th, tw = dh * (w.shape[2] - 1), dw * (w.shape[3] - 1)
        return (th // 2, th - th // 2, tw // 2, tw - tw // 2)
    ph, pw = _pair(padding)
    return (ph, ph, pw, pw)


@saves("input", "weight")
@_grad.holomorphic
def _conv2d(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, w, b = a["input"], a["weight"], a["bias"]
    stride, dilation, groups = _pair(a["stride"]), _pair(a["dilation"]), int(a["groups"])
    pads = _conv_pads(a, w)
    gx = gw = gb = None
    if needs(x):
        hp, wp = x.shape[-2] + pads[0] + pads[1], x.shape[-1] + pads[2] + pads[3]
        gxp = _conv_transpose(g, w, stride, dilation, groups, (hp, wp))
        d = x.ndim - 2
        gx = core.narrow(core.narrow(gxp, d, pads[0], x.shape[-2]), d + 1, pads[2], x.shape[-1])
    if needs(w):
        gw = _conv_weight_grad(_pad(x, pads), g, w, stride, dilation, groups)
    if needs(b):
        gb = core.sum(g, [0, 2, 3] if g.ndim == 4 else [1, 2])
    return gx, gw, gb


@saves("result")
def _max_pool2d(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x, indices = a["self"], out[1]
    lead = list(x.shape[:-2])
    plane = x.shape[-2] * x.shape[-1]
    zeros = core.zeros(lead + [plane], dtype=g[0].dtype, device=g[0].device)
    spread = core.scatter_add(
        zeros, x.ndim - 2, core.reshape(indices, lead + [-1]), core.reshape(g[0], lead + [-1])
    )
    return (core.reshape(spread, list(x.shape)),)


def _pool_divisors(a: dict[str, Any], x: Any, out_hw: tuple[int, int], like: Any) -> Any:
    """Each output position's divisor (``avg_pool2d``'s rule), shaped (oh, ow)."""
    k = _pair(a["kernel_size"])
    s, p = _pair(a["stride"], k), _pair(a["padding"])
    if a["divisor_override"] is not None:
        return a["divisor_override"]
    sizes = []
    for size, ki, si, pi, n in zip(x.shape[-2:], k, s, p, out_hw, strict=True):
        start = core.arange(0, n, 1, device=like.device) * si - pi
        end = core.clamp(start + ki, None, size + pi)
        if not a["count_include_pad"]:
            start, end = core.clamp(start, 0, None), core.clamp(end, None, size)
        sizes.append(core._to_copy(end - start, dtype=like.dtype))
    return core.unsqueeze(sizes[0], 1) * core.unsqueeze(sizes[1], 0)


@saves()
def _avg_pool2d(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    k = _pair(a["kernel_size"])
    s, p = _pair(a["stride"], k), _pair(a["padding"])
    h, w = x.shape[-2], x.shape[-1]
    oh, ow = g.shape[-2], g.shape[-1]
    scaled = core.reshape(g / _pool_divisors(a, x, (oh, ow), g), [-1, 1, oh, ow])
    ones = core.ones([1, 1, k[0], k[1]], dtype=g.dtype, device=g.device)
    gxp = _conv_transpose(scaled, ones, s, (1, 1), 1, (h + 2 * p[0], w + 2 * p[1]))
    gx = core.narrow(core.narrow(gxp, 2, p[0], h), 3, p[1], w)
    return (core.reshape(gx, list(x.shape)),)


_CONVOLUTION: tuple[OpInfo, ...] = (
    _composite("linear", "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
               function=None, dtypes=NO_BOOL, autocast=_LOWER),
    _nn(
        "conv2d",
        f"conv2d({_CONV}, SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor",
        f"conv2d.padding({_CONV}, str padding=\"valid\", SymInt[2] dilation=1, SymInt groups=1) "
        "-> Tensor",
        py="conv2d", dtypes=NO_BOOL, grad=_conv2d,
        # PyTorch's CUDA list has conv2d, not conv2d.padding.
        autocast={"cpu": "lower_precision_fp", "cuda": {"default": "lower_precision_fp"}},
    ),
    _nn(
        "max_pool2d_with_indices",
        f"max_pool2d_with_indices(Tensor self, {_POOL}, int[2] dilation=1, bool ceil_mode=False) "
        "-> (Tensor, Tensor)",
        function=None, dtypes=REAL_NO_BOOL, grad=_max_pool2d,
    ),
    _composite(
        "max_pool2d",
        f"max_pool2d(Tensor self, {_POOL}, int[2] dilation=1, bool ceil_mode=False) -> Tensor",
        dtypes=REAL_NO_BOOL,
    ),
    _nn(
        "avg_pool2d",
        f"avg_pool2d(Tensor self, {_POOL}, bool ceil_mode=False, bool count_include_pad=True, "
        "int? divisor_override=None) -> Tensor",
        function=None, dtypes=FLOATS | {int64}, grad=_avg_pool2d,
    ),
)  # fmt: skip

ROWS: tuple[OpInfo, ...] = _NORMALIZATION + _LOSSES + _CONVOLUTION

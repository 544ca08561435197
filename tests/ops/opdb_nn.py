"""Op-database entries of the neural-network functions, called as ``lib.nn.functional.<name>``.

Imports: NumPy and the sibling ``opentry``/``samples`` modules (never torch).

The same call serves ``tensor`` and ``torch`` (both spell it ``nn.functional``);
references are written independently of the kernels (conv2d and the pools loop
over kernel offsets or output pixels on small inputs, where the kernels use
strided windows and im2col).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .opentry import OpEntry, _core
from .samples import FLOAT_NAMES, Sample, noncontig, up, values

__all__ = ["entries"]


def _f(name: str) -> Callable[..., Any]:
    def call(lib: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(lib.nn.functional, name)(*args, **kwargs)

    return call


def _s(*args: Any, name: str = "", plain: bool = False, **kw: Any) -> Sample:
    return Sample(tuple(args), kw, name=name or repr(kw) or "plain", plain=plain)


def _v(dtype: str, rng: np.random.Generator, *shape: int, lo: float = -2, hi: float = 2) -> Any:
    return values(dtype, shape, rng, lo, hi)


def _targets(rng: np.random.Generator, classes: int, *shape: int) -> Any:
    return rng.integers(0, classes, shape).astype(np.int64)


def _f64(x: Any) -> Any:
    return up(x).astype(np.float64) if np.asarray(x).dtype.kind in "biu" else up(x)


# -- references --------------------------------------------------------------------------------------
def _log_softmax(x: Any, dim: int) -> Any:
    a = up(x).astype(np.float64)
    a = a - a.max(axis=dim, keepdims=True)
    return a - np.log(np.exp(a).sum(axis=dim, keepdims=True))


def _layer_norm(x: Any, shape: Any, weight: Any = None, bias: Any = None, eps: float = 1e-5) -> Any:
    a = up(x)
    axes = tuple(range(a.ndim - len(shape), a.ndim))
    out = (a - a.mean(axes, keepdims=True)) / np.sqrt(a.var(axes, keepdims=True) + eps)
    if weight is not None:
        out = out * up(weight)
    return out + up(bias) if bias is not None else out


def _cross_entropy(
    x: Any, t: Any, weight: Any = None, ignore_index: int = -100, reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Any:  # fmt: skip
    cdim = 0 if x.ndim == 1 else 1
    logp = _log_softmax(x, cdim)
    c = x.shape[cdim]
    wshape = [1] * x.ndim
    wshape[cdim] = c
    w = np.ones(c) if weight is None else up(weight)
    if t.dtype.kind not in "iu":  # probabilities (bfloat16 is kind "V")
        p = up(t) * (1 - label_smoothing) + label_smoothing / c
        loss = -(logp * p * w.reshape(wshape)).sum(cdim)
        return {"none": loss, "sum": loss.sum(), "mean": loss.sum() / (x.size / c)}[reduction]
    keep = t != ignore_index
    safe = np.where(keep, t, 0)
    picked = np.take_along_axis(logp, np.expand_dims(safe, cdim), cdim).squeeze(cdim)
    wt = np.where(keep, w[safe], 0.0)
    nll = -picked * wt
    smooth = np.where(keep, -(logp * w.reshape(wshape)).sum(cdim), 0.0)
    if reduction == "none":
        return (1 - label_smoothing) * nll + smooth * label_smoothing / c
    if reduction == "sum":
        return (1 - label_smoothing) * nll.sum() + smooth.sum() * label_smoothing / c
    denom = wt.sum() if weight is not None else keep.sum()
    return (1 - label_smoothing) * nll.sum() / wt.sum() + smooth.sum() / denom * label_smoothing / c


def _bce(
    x: Any, t: Any, weight: Any = None, reduction: str = "mean", pos_weight: Any = None
) -> Any:
    x, t = up(x), up(t)
    lw = 1 if pos_weight is None else 1 + (up(pos_weight) - 1) * t
    loss = (1 - t) * x + lw * np.log1p(np.exp(-x))
    if weight is not None:
        loss = loss * up(weight)
    return {"none": loss, "sum": loss.sum(), "mean": loss.mean()}[reduction]


def _pair(v: Any) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else tuple(v)  # type: ignore[return-value]


def _conv2d(
    x: Any, w: Any, bias: Any = None, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
    groups: int = 1,
) -> Any:  # fmt: skip
    if x.ndim == 3:
        return _conv2d(x[None], w, bias, stride, padding, dilation, groups)[0]
    x, w = up(x), up(w)
    (sh, sw), (dh, dw) = _pair(stride), _pair(dilation)
    o, cg, kh, kw = w.shape
    if padding == "same":
        th, tw = dh * (kh - 1), dw * (kw - 1)
        pads = ((th // 2, th - th // 2), (tw // 2, tw - tw // 2))
    elif padding == "valid":
        pads = ((0, 0), (0, 0))
    else:
        ph, pw = _pair(padding)
        pads = ((ph, ph), (pw, pw))
    xp = np.pad(x, ((0, 0), (0, 0), *pads))
    oh = (xp.shape[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (xp.shape[3] - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((x.shape[0], o, oh, ow), dtype=np.result_type(x, w))
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg : (g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dh : i * dh + sh * (oh - 1) + 1 : sh,
                           j * dw : j * dw + sw * (ow - 1) + 1 : sw]  # fmt: skip
                out[:, g * og : (g + 1) * og] += np.einsum(
                    "nchw,oc->nohw", patch, w[g * og : (g + 1) * og, :, i, j]
                )
    return out + up(bias).reshape(1, -1, 1, 1) if bias is not None else out


def _pool(
    x: Any, kernel: Any, stride: Any, padding: Any, dilation: Any, ceil: bool, kind: str,
    count_include_pad: bool = True,
) -> Any:  # fmt: skip
    x = up(x)
    (kh, kw), (ph, pw), (dh, dw) = _pair(kernel), _pair(padding), _pair(dilation)
    sh, sw = _pair(stride) if stride is not None else (kh, kw)
    h, w = x.shape[-2:]

    def size(n: int, k: int, s: int, p: int, d: int) -> int:
        span = n + 2 * p - d * (k - 1) - 1
        o = (-(-span // s) if ceil else span // s) + 1
        return o - 1 if ceil and (o - 1) * s >= n + p else o

    oh, ow = size(h, kh, sh, ph, dh), size(w, kw, sw, pw, dw)
    vals = np.zeros((*x.shape[:-2], oh, ow))
    idx = np.zeros((*x.shape[:-2], oh, ow), np.int64)
    for a in range(oh):
        for b in range(ow):
            rows = [a * sh - ph + i * dh for i in range(kh)]
            cols = [b * sw - pw + j * dw for j in range(kw)]
            if kind == "max":
                best = np.full(x.shape[:-2], -np.inf)
                arg = np.zeros(x.shape[:-2], np.int64)
                for r in rows:
                    for c in cols:
                        if 0 <= r < h and 0 <= c < w:
                            v = x[..., r, c]
                            better = (v > best) | (np.isnan(v) & ~np.isnan(best))
                            best, arg = np.where(better, v, best), np.where(better, r * w + c, arg)
                vals[..., a, b], idx[..., a, b] = best, arg
            else:
                inside = [(r, c) for r in rows for c in cols if 0 <= r < h and 0 <= c < w]
                total = sum(x[..., r, c] for r, c in inside)
                r0, c0 = a * sh - ph, b * sw - pw
                r1, c1 = min(r0 + kh, h + ph), min(c0 + kw, w + pw)
                div = (r1 - r0) * (c1 - c0) if count_include_pad else len(inside)
                vals[..., a, b] = total / div
    if x.dtype.kind in "iu":
        vals = np.trunc(vals)  # integer pools truncate, as C division does
    return (vals, idx) if kind == "max" else vals


# -- samples -----------------------------------------------------------------------------------------
def _softmax_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 3, 4)
    return [
        _s(x, 1, plain=True), _s(x, 0), _s(noncontig(dtype, rng), -1, name="nc"),
        _s(_v(dtype, rng, 2, 3, 4), dim=1), _s(x, dim=1, dtype=_F64, name="dtype"),
    ]  # fmt: skip


class _Float64:
    """Stands for float64 of the library under test (tt.float64 / torch.float64)."""


_F64: Any = _Float64()


def _layer_norm_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 2, 3, 4)
    return [
        _s(x, [4], plain=True),
        _s(x, [3, 4], _v(dtype, rng, 3, 4), _v(dtype, rng, 3, 4), name="affine"),
        _s(x, [4], eps=1e-3, name="eps"),
        _s(x, [3], name="bad-shape"),
    ]


def _ce_backward(
    g: Any, x: Any, t: Any, reduction: int = 1, ignore_index: int = -100,
    label_smoothing: float = 0.0,
) -> Any:  # fmt: skip
    """d cross_entropy / d x: softmax times the coefficients' sum minus the coefficients
    (the smoothed one-hot on the kept rows, or the smoothed probabilities), times the
    gradient."""
    cdim = 0 if x.ndim == 1 else 1
    classes = x.shape[cdim]
    eps = label_smoothing if label_smoothing > 0 else 0.0
    p = np.exp(_log_softmax(x, cdim))
    if not np.issubdtype(np.asarray(t).dtype, np.integer):  # probabilities (bfloat16 too)
        c = up(t).astype(np.float64) * (1 - eps) + eps / classes
        keep = np.ones(p.shape[:cdim] + p.shape[cdim + 1 :], bool)
    else:
        keep = t != ignore_index
        hot = np.moveaxis(np.eye(classes)[np.where(keep, t, 0)], -1, cdim)
        c = (hot * (1 - eps) + eps / classes) * np.expand_dims(keep, cdim)
    grad = p * c.sum(cdim, keepdims=True) - c
    g = up(g).astype(np.float64)
    if reduction == 0:
        return grad * np.expand_dims(g, cdim)
    return grad * g / (max(int(keep.sum()), 1) if reduction == 1 else 1)


def _torch_ce_backward(
    torch: Any, g: Any, x: Any, t: Any, reduction: int = 1, ignore_index: int = -100,
    label_smoothing: float = 0.0,
) -> Any:  # fmt: skip
    """PyTorch's own gradient of cross_entropy, through its autograd."""
    leaf = x.detach().requires_grad_()
    with torch.enable_grad():
        loss = torch.nn.functional.cross_entropy(
            leaf,
            t,
            reduction=("none", "mean", "sum")[reduction],
            ignore_index=ignore_index,
            label_smoothing=label_smoothing,
        )
    return torch.autograd.grad(loss, leaf, g)[0]


def _ce_backward_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 5, 4)
    t = _targets(rng, 4, 5)
    t_ignored = t.copy()
    t_ignored[1] = -100
    one = _v(dtype, rng, lo=0.5, hi=2)
    return [
        _s(one, x, t, plain=True),
        _s(one, x, t, 2, name="sum"),
        _s(_v(dtype, rng, 5), x, t, 0, name="none"),
        _s(one, x, t_ignored, name="ignore_index"),
        _s(one, x, np.full(5, -100), name="all-ignored"),
        _s(one, values(dtype, (4, 5), rng, -2, 2).T, t, name="noncontig"),
        _s(one, _v(dtype, rng, 5, 4, lo=-90, hi=90), t, name="wide-logits"),
        _s(_v(dtype, rng, 2, 4), _v(dtype, rng, 2, 3, 4), _targets(rng, 3, 2, 4), 0,
           name="spatial"),
        _s(one, _v(dtype, rng, 4), _targets(rng, 4), name="unbatched"),
        _s(one, x, t, 1, -100, 0.2, name="smoothing"),
        _s(_v(dtype, rng, 5), x, t_ignored, 0, -100, 0.3, name="smoothing-ignore-none"),
        _s(one, x, t, 1, -100, -0.5, name="negative-smoothing"),
        _s(one, x, values(dtype, (5, 4), rng, 0, 1), name="probabilities"),
        _s(_v(dtype, rng, 2, 4), _v(dtype, rng, 2, 3, 4), values(dtype, (2, 3, 4), rng, 0, 1),
           0, -100, 0.1, name="probabilities-spatial-smoothing"),
        _s(one, x, _targets(rng, 4, 3), name="batch-mismatch"),
        _out_of_range(_s(one, x, np.array([0, 1, 2, 3, 4]), name="target-out-of-range")),
        _s(_v(dtype, rng, 5), x, t, name="grad-shape"),
    ]  # fmt: skip


def _ce_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 5, 4)
    t = _targets(rng, 4, 5)
    t_ignored = t.copy()
    t_ignored[1] = -100
    w = values(dtype, (4,), rng, 0.5, 2)
    probs = values(dtype, (5, 4), rng, 0, 1)
    return [
        _s(x, t, plain=True),
        _s(x, t, reduction="sum"), _s(x, t, reduction="none"),
        _s(x, t, weight=w, name="weight"),
        _s(x, t_ignored, name="ignore_index"),
        _s(x, t_ignored, weight=w, label_smoothing=0.2, name="smoothing-weight"),
        _s(x, t, label_smoothing=0.1, reduction="none", name="smoothing-none"),
        _s(x, probs, name="probabilities"),
        _s(x, probs, label_smoothing=0.3, reduction="sum", name="probabilities-smoothing"),
        _s(_v(dtype, rng, 2, 3, 4), _targets(rng, 3, 2, 4), name="spatial"),
        _s(_v(dtype, rng, 4), _targets(rng, 4), name="unbatched"),
        _s(x, _targets(rng, 4, 3), name="batch-mismatch"),
    ]  # fmt: skip


def _conv_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x, w = _v(dtype, rng, 2, 4, 7, 6), _v(dtype, rng, 6, 4, 3, 3)
    wg = _v(dtype, rng, 6, 2, 3, 2)
    return [
        _s(x, w, plain=True),
        _s(x, w, _v(dtype, rng, 6), stride=2, padding=1, name="bias-stride-pad"),
        _s(x, w, dilation=2, padding=(2, 1), name="dilation"),
        _s(x, wg, groups=2, stride=(1, 2), name="groups"),
        _s(x, w, padding="same", name="same"),
        _s(x, w, padding="same", dilation=2, name="same-dilated"),
        _s(x, w, padding="valid", name="valid"),
        _s(x[0], w, name="unbatched"),
        _s(x, _v(dtype, rng, 6, 3, 3, 3), name="channel-mismatch"),
    ]


def _pool_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = _v(dtype, rng, 2, 3, 7, 6)
    return [
        _s(x, 2, plain=True),
        _s(x, 3, stride=2, padding=1, name="pad"),
        _s(x, (3, 2), stride=(2, 1), ceil_mode=True, name="ceil"),
        _s(x[0], 2, name="unbatched"),
        _s(x, 3, padding=2, name="pad-too-big"),
    ]


def _out_of_range(sample: Sample) -> Sample:
    sample.data_error = True  # meta tensors cannot see index values
    return sample


# -- entries -----------------------------------------------------------------------------------------
def _with_dtype(call: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(lib: Any, *args: Any, **kwargs: Any) -> Any:
        kwargs = {k: (lib.float64 if v is _F64 else v) for k, v in kwargs.items()}
        return call(lib, *args, **kwargs)

    return wrapped


def entries() -> list[OpEntry]:
    E = OpEntry
    out = [
        E("softmax", "softmax", _with_dtype(_f("softmax")),
          lambda x, dim, dtype=None: np.exp(_log_softmax(x, dim)), _softmax_samples, tol=2),
        E("log_softmax", "log_softmax", _with_dtype(_f("log_softmax")),
          lambda x, dim, dtype=None: _log_softmax(x, dim), _softmax_samples, tol=2),
        E("softmax_tt", "softmax", lambda lib, x, **kw: lib.softmax(x, -1, **kw),
          lambda x: np.exp(_log_softmax(x, -1)), lambda dt, rng: [_s(_v(dt, rng, 3, 4), plain=True)]),
        E("log_softmax_tt", "log_softmax", lambda lib, x, **kw: lib.log_softmax(x, -1, **kw),
          lambda x: _log_softmax(x, -1), lambda dt, rng: [_s(_v(dt, rng, 3, 4), plain=True)]),
        E("layer_norm", "layer_norm", _f("layer_norm"), _layer_norm, _layer_norm_samples, tol=10),
        E("dropout_eval", "dropout", lambda lib, x: lib.nn.functional.dropout(x, 0.3, training=False),
          up, lambda dt, rng: [_s(_v(dt, rng, 3, 4), plain=True)]),
        E("dropout", "native_dropout", lambda lib, x, p: lib.nn.functional.dropout(x, p), None,
          lambda dt, rng: [_s(_v(dt, rng, 30, 4), 0.4, plain=True), _s(_v(dt, rng, 3), 1.0)],
          random=True),
        E("dropout_p1", "native_dropout", lambda lib, x: lib.nn.functional.dropout(x, 1.0),
          lambda x: np.zeros_like(up(x)), lambda dt, rng: [_s(_v(dt, rng, 3, 4), plain=True)]),
        E("dropout_", "dropout_", lambda lib, x, p: lib.dropout_(x.clone(), p, True), None,
          lambda dt, rng: [_s(_v(dt, rng, 30, 4), 0.4, plain=True), _s(_v(dt, rng, 3), 1.0)],
          random=True, supported=FLOAT_NAMES),
        E("dropout__eval", "dropout_", lambda lib, x: lib.dropout_(x.clone(), 0.3, False), up,
          lambda dt, rng: [_s(_v(dt, rng, 3, 4), plain=True)]),
        E("embedding", "embedding", _f("embedding"), lambda i, w, **k: up(w)[i],
          lambda dt, rng: [
              _s(_targets(rng, 5, 2, 3), _v(dt, rng, 5, 4), plain=True),
              _s(_targets(rng, 5, 4), _v(dt, rng, 5, 4), padding_idx=0, name="padding_idx"),
              _out_of_range(_s(np.array([5]), _v(dt, rng, 5, 4), name="out-of-range")),
          ]),
        E("cross_entropy", "cross_entropy_loss", _f("cross_entropy"), _cross_entropy, _ce_samples,
          tol=10),
        E("cross_entropy_backward", "_cross_entropy_backward", _core("_cross_entropy_backward"),
          _ce_backward, _ce_backward_samples, tol=10, torch_call=_torch_ce_backward),
        E("mse_loss", "mse_loss", _f("mse_loss"),
          lambda x, t, reduction="mean": {"mean": np.mean, "sum": np.sum, "none": lambda a: a}[
              reduction]((up(x) - up(t)) ** 2),
          lambda dt, rng: [
              _s(_v(dt, rng, 3, 4), _v(dt, rng, 3, 4), plain=True),
              _s(_v(dt, rng, 3, 4), _v(dt, rng, 3, 4), reduction="sum"),
              _s(_v(dt, rng, 3, 4), _v(dt, rng, 3, 4), reduction="none"),
          ], tol=10),
        E("bce_with_logits", "binary_cross_entropy_with_logits",
          _f("binary_cross_entropy_with_logits"), _bce,
          lambda dt, rng: [
              _s(_v(dt, rng, 3, 4), values(dt, (3, 4), rng, 0, 1), plain=True),
              _s(_v(dt, rng, 3, 4), values(dt, (3, 4), rng, 0, 1), reduction="none"),
              _s(_v(dt, rng, 3, 4), values(dt, (3, 4), rng, 0, 1), weight=_v(dt, rng, 4),
                 pos_weight=values(dt, (4,), rng, 0.5, 3), reduction="sum", name="weights"),
          ], tol=10),
        E("linear", "linear", _f("linear"),
          lambda x, w, b=None: up(x) @ up(w).T + (0 if b is None else up(b)),
          lambda dt, rng: [
              _s(_v(dt, rng, 3, 4), _v(dt, rng, 5, 4), _v(dt, rng, 5), plain=True),
              _s(_v(dt, rng, 2, 3, 4), _v(dt, rng, 5, 4), name="batched-no-bias"),
              _s(_v(dt, rng, 4), _v(dt, rng, 5, 4), _v(dt, rng, 5), name="vector"),
          ], tol=10),
        E("conv2d", "conv2d", _f("conv2d"), _conv2d, _conv_samples, tol=20),
        E("conv2d_tt", "conv2d", lambda lib, x, w: lib.conv2d(x, w, None, 1, "same"),
          lambda x, w: _conv2d(x, w, padding="same"),
          lambda dt, rng: [_s(_v(dt, rng, 1, 2, 5, 5), _v(dt, rng, 3, 2, 3, 3), plain=True)],
          tol=20),
        E("max_pool2d", "max_pool2d", _f("max_pool2d"),
          lambda x, k, stride=None, padding=0, ceil_mode=False: _pool(
              x, k, stride, padding, 1, ceil_mode, "max")[0], _pool_samples),
        E("max_pool2d_with_indices", "max_pool2d_with_indices",
          lambda lib, x, k, **kw: lib.nn.functional.max_pool2d(x, k, return_indices=True, **kw),
          lambda x, k, stride=None, padding=0, ceil_mode=False: _pool(
              x, k, stride, padding, 1, ceil_mode, "max"), _pool_samples),
        E("avg_pool2d", "avg_pool2d", _f("avg_pool2d"),
          lambda x, k, stride=None, padding=0, ceil_mode=False, count_include_pad=True: _pool(
              x, k, stride, padding, 1, ceil_mode, "avg", count_include_pad),
          lambda dt, rng: [*_pool_samples(dt, rng), _s(_v(dt, rng, 2, 3, 7, 6), 3, padding=1,
                                                        count_include_pad=False, name="exclude")],
          tol=4),
    ]  # fmt: skip
    for name, ref in (
        ("relu", lambda x: np.maximum(up(x), 0)),
        ("sigmoid", lambda x: 1 / (1 + np.exp(-_f64(x)))),
        ("tanh", lambda x: np.tanh(_f64(x))),
        ("gelu", None),
        ("silu", lambda x: _f64(x) / (1 + np.exp(-_f64(x)))),
        ("softplus", lambda x: np.log1p(np.exp(_f64(x)))),
    ):
        out.append(
            E(
                f"F.{name}",
                name,
                _f(name),
                ref,
                lambda dt, rng: [_s(_v(dt, rng, 3, 4), plain=True)],
                random=ref is None,
            )  # fmt: skip
        )
    return out

"""Neural-network kernels (softmax, log_softmax, layer_norm, native_dropout, embedding,
cross_entropy_loss), written once against the array namespace and for meta.

Imports: ``backends.common``.

Each kernel checks its arguments with PyTorch's rules and messages and computes
the result's shape and dtype (all a meta kernel returns), then the values with
the namespace.  Half-precision inputs compute in float32 and round once at the
end, as PyTorch's CPU kernels accumulate.  Convolution and pooling live in
``backends.common.conv``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import errors, fastpaths, shape_rules
from .elementwise import MetaNamespace, Namespace

__all__ = ["REDUCTIONS", "kernels", "smoothing"]

REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}  # ATen's Reduction enum


def _float_dtype(op: str, dt: Any, arg: str = "self") -> None:
    if not dt.is_floating_point:
        raise errors.unsupported_dtype(op, dt, arg)


def _reduction(op: str, reduction: Any) -> str:
    name = REDUCTIONS.get(reduction)
    if name is None:
        raise ValueError(f"{op}(): {reduction!r} is not a valid value for reduction (0, 1 or 2)")
    return name


def smoothing(op: str, label_smoothing: Any) -> float:
    """The label smoothing a cross-entropy call applies: PyTorch smooths only for a value
    above 0 (0, a negative value or NaN smooth nothing) and refuses one above 1."""
    eps = float(label_smoothing)
    if not eps > 0:
        return 0.0
    if eps > 1:
        raise RuntimeError(
            f"{op}(): label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing} "
            "(argument 'label_smoothing')"
        )
    return eps


def _floor(info: Any) -> float:
    """The smallest row sum the shared shift allows (Note [Cross-entropy fast path]):
    tiny * 2**(nmant + 7), in the standard's finfo terms (eps = 2**-nmant)."""
    tiny = getattr(info, "smallest_normal", None)
    return float(info.tiny if tiny is None else tiny) / float(info.eps) * 128.0


# Note [Cross-entropy softmax kept for the backward]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The fast forward (Note [Cross-entropy fast path]) computes ``exp(x - max(x))`` and its
# row sums; the fast backward (``_softmax_minus_hot``: the backward lane's ``rows_grad``
# and the ``cross_entropy_backward`` kernel) computed them again from ``x``, ~6.5 us of a
# [32, 10] backward's ~19.  The forward keeps the last pair beside the logits array
# (``kept_softmax``, one slot a backend), and a backward of that same array object takes
# it instead: the same functions of the same values, so the same bits, and only what the
# forward's checks passed (a batch whose smallest row sum passed the shared shift).  As
# PyTorch's log_softmax saves its output for its backward, the backward reads the
# forward's values.  The slot is taken when used (a second backward with retain_graph
# computes again), replaced by the next forward (another thread's forward or an
# interleaved graph: the backward finds another array there and computes), and kept only
# for up to ``_KEPT_SOFTMAX_SIZE`` logits (256 KiB of float32): a large vocabulary's
# forward without a backward would otherwise hold its softmax until the next call.  The
# backward divides into a new array: two backward passes of one graph on two threads may
# both read the pair.  Mutating the logits in place between forward and backward is
# refused before the backward runs (their saved version), as it is without the slot.
_KEPT_SOFTMAX_SIZE = 1 << 16


# Note [Layer norm's statistics kept for the backward]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# layer_norm's formula (tensor/optable/nn.py) recomputes from the saved input what the
# forward computed: the mean, the centered input, its variance, ``rstd`` and ``xhat``,
# six of the backward lane's eleven passes over the batch (tensor/autograd/_lanes.py).
# The forward computes them in the formula's own steps (the CPU's ``mean_keep`` is the
# mean kernel's sum and division) and the CPU keeps the last (input array, normalized
# dims, eps, xhat, rstd), for float32 and float64 inputs of up to ``_KEPT_NORM_SIZE``
# elements whose output is a new array (an affine layer: without weight or bias the
# output is ``xhat`` itself, which its user may change); a backward whose saved input is
# that same array, with the same dims and eps, takes it (``take_layer_norm``), the slot
# emptied: the same values, so the same bits.  Overwritten by the next forward; an input
# changed in place before the backward is refused by its saved version, as without the
# slot.  As Note [Cross-entropy softmax kept for the backward].
_KEPT_NORM_SIZE = 1 << 18


def kernels(ns: Namespace, fns: dict[str, Callable[..., Any]]) -> dict[str, Any]:
    """The nn kernels of one backend (``ns`` a ``MetaNamespace`` for meta);
    ``fns["engine"](front, None, device)`` gives the random engine of the device's
    default generator (``native_dropout``)."""
    meta = isinstance(ns, MetaNamespace)
    xp = ns.xp
    front = ns.front
    make, make_meta = front.make, front.make_meta
    bool_, int64, int32, float32 = front.bool, front.int64, front.int32, front.float32
    half = (front.float16, front.bfloat16)
    floats = (front.float32, front.float64)  # the fast paths' dtypes
    engine = fns.get("engine")
    # Row reductions of a matrix: NumPy's ufunc.reduce skips the wrappers of .max()/.sum().
    # The standard's spellings by default (Note [Array dtypes of a namespace]); the
    # backends give faster ones.
    row_sum = fns.get("row_sum", lambda a: xp.sum(a, axis=1))
    sum_all = fns.get("total", lambda a: xp.sum(a))
    # Means over ``axes`` kept as dims of 1 (layer_norm): NumPy's np.mean is a Python
    # wrapper (~5 us on [32, 64]); the CPU's is the mean kernel's sum and division.
    mean_keep = fns.get("mean_keep", lambda a, axes: xp.mean(a, axis=axes, keepdims=True))
    # ``keep_layer_norm(x, k, eps, xhat, rstd)``: told each layer_norm's input array (not
    # a widened copy) and its statistics, unless the output is ``xhat`` itself (the CPU's
    # Note [Layer norm's statistics kept for the backward]); None: nothing told.
    keep_layer_norm = fns.get("keep_layer_norm")
    max_all = fns.get("max_all", lambda a: xp.max(a))
    asarray = ns.asarray
    min_all = fns.get("min_all", lambda a: xp.min(a))
    aranges: dict[int, Any] = {}
    count_nonzero = getattr(ns.lib, "count_nonzero", None) or (lambda a: xp.count_nonzero(a))
    dtype_of, astype, retype, copy = ns.dtype_of, ns.astype, ns.retype, ns.copy
    # The fast backward's in-place p[rows, targets] -= 1: NumPy's and CuPy's indexing only.
    fancy_writes = not ns.standard
    tiny_sums: dict[Any, float] = {}  # dtype -> smallest row sum the shared shift allows
    # Note [Cross-entropy softmax kept for the backward]: (logits array, exp of the
    # shifted logits, their row sums) of the last fast forward, for its backward.
    kept_softmax: list[Any] = [None]

    def _rows(n: int) -> Any:
        rows = aranges.get(n)
        if rows is None:
            rows = aranges[n] = xp.arange(n)
            if len(aranges) > 64:  # a few batch sizes at a time
                aranges.clear()
        return rows

    def _compute(x: Any, dt: Any) -> Any:
        cdt = float32 if dt in half else dt
        return x if x.dtype == dtype_of(cdt) else astype(x, cdt)

    # Note [Softmax fast path]: float32/float64 input, no dtype argument, an int dim:
    # the backend's ``max_keep(a, axis)``/``sum_keep(a, axis)`` (ufunc.reduce without
    # the np.max/np.sum wrappers, BLAS row sums) and one division in place.  Everything
    # else, and every error, goes the general way.
    max_keep: Any = fns.get("max_keep")
    sum_keep: Any = fns.get("sum_keep")
    exp: Any = getattr(ns.lib, "exp", None)
    log_: Any = getattr(ns.lib, "log", None)
    fast = max_keep is not None and sum_keep is not None and not meta

    def _softmax(op: str, log: bool) -> Callable[..., Any]:
        def kernel(self: Any, dim: Any, dtype: Any = None) -> Any:
            dt = self._dtype
            if fast and dtype is None and dt in floats and type(dim) is int and fastpaths.ENABLED:
                x = self._array
                n = x.ndim
                if n and -n <= dim < n and x.size:
                    d = dim % n
                    shifted = x - max_keep(x, d)
                    e = exp(shifted)
                    if log:
                        out = shifted - log_(sum_keep(e, d))
                    else:
                        e /= sum_keep(e, d)
                        out = e
                    return make(out, dt, self._device)
            odt = dt if dtype is None else dtype
            _float_dtype(op, odt)
            x = self._array
            d = shape_rules.normalize_dim(op, dim, x.ndim)
            if meta:
                return make_meta(tuple(x.shape), odt, self._device)
            a = _compute(x, odt)
            if a.ndim == 0 or a.size == 0:  # exp(x - x) / exp(x - x): NaN for inf or NaN
                out = retype(xp.where(xp.isfinite(a), 0.0 if log else 1.0, xp.nan), a.dtype)
                return make(astype(out, odt), odt, self._device)
            shifted = a - xp.max(a, axis=d, keepdims=True)
            e = xp.exp(shifted)
            s = xp.sum(e, axis=d, keepdims=True)
            out = shifted - xp.log(s) if log else e / s
            return make(astype(out, odt, copy=False), odt, self._device)

        return kernel

    def layer_norm(
        input: Any, normalized_shape: Any, weight: Any = None, bias: Any = None,
        eps: float = 1e-05, cudnn_enable: bool = True,
    ) -> Any:  # fmt: skip
        _float_dtype("layer_norm", input._dtype, "input")
        x = input._array
        norm = tuple(int(n) for n in normalized_shape)
        k = len(norm)
        if not k or tuple(x.shape[x.ndim - k :]) != norm or k > x.ndim:
            raise RuntimeError(
                f"layer_norm(): Given normalized_shape={list(norm)}, expected input with shape "
                f"[*, {', '.join(map(str, norm))}], but got input of size{list(x.shape)}"
            )
        for arg, t in (("weight", weight), ("bias", bias)):
            if t is not None and tuple(t._array.shape) != norm:
                raise RuntimeError(
                    f"layer_norm(): Expected {arg} to be of same shape as normalized_shape, but "
                    f"got {arg} of shape {list(t._array.shape)} and normalized_shape = {list(norm)}"
                )
        dt, dev = input._dtype, input._device
        if meta:
            return make_meta(tuple(x.shape), dt, dev)
        a = _compute(x, dt)
        axes = tuple(range(x.ndim - k, x.ndim))
        # The formula's steps (tensor/optable/nn.py, ``_layer_norm``), so the normalized
        # input and the reciprocal deviation can serve its backward (Note [Layer norm's
        # statistics kept for the backward]); PyTorch's kernel too multiplies by rstd.
        centered = a - mean_keep(a, axes)
        rstd = xp.reciprocal(xp.sqrt(mean_keep(centered * centered, axes) + eps))
        xhat = centered * rstd
        if weight is not None:
            out = xhat * _compute(weight._array, dt)
            if bias is not None:
                out += _compute(bias._array, dt)  # a new array of this call's: in place
        elif bias is not None:
            out = xhat + _compute(bias._array, dt)
        else:
            out = xhat
        if keep_layer_norm is not None and out is not xhat and a is x:
            keep_layer_norm(x, k, eps, xhat, rstd)
        return make(astype(out, dt, copy=False), dt, dev)

    def native_dropout(input: Any, p: float, train: Any) -> Any:
        _float_dtype("native_dropout", input._dtype, "input")
        x = input._array
        dt, dev = input._dtype, input._device
        if meta:
            shape = tuple(x.shape)
            return make_meta(shape, dt, dev), make_meta(shape, bool_, dev)
        if train is False or p == 0:
            return make(copy(x), dt, dev), make(xp.ones(x.shape, dtype=xp.bool), bool_, dev)
        rng = engine(front, None, dev)  # type: ignore[misc]
        keep = rng.random(x.shape) >= p
        scale = 0.0 if p >= 1 else 1.0 / (1.0 - p)
        # PyTorch's ``input.mul(mask).mul_(scale)``: a dropped element is ``x * 0``, so
        # NaN for NaN and infinities, -0.0 for negatives (a select gave 0 for all of them).
        a = _compute(x, dt)
        out = a * (retype(keep, a.dtype) if ns.standard else keep)  # the standard: no bools
        out *= scale  # in arithmetic; NumPy and CuPy take them as 0 and 1
        return make(astype(out, dt), dt, dev), make(keep, bool_, dev)

    def embedding(
        weight: Any, indices: Any, padding_idx: Any = -1, scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> Any:  # fmt: skip
        if indices._dtype not in (int64, int32):
            raise RuntimeError(
                f"embedding(): Expected tensor for argument #1 'indices' to have one of the "
                f"following scalar types: Long, Int; but got {indices._dtype.name} instead"
            )
        w = weight._array
        if w.ndim != 2:
            raise RuntimeError(f"embedding(): 'weight' must be 2-D (got {w.ndim}-D)")
        idx = indices._array
        shape = (*idx.shape, w.shape[1])
        if meta:
            return make_meta(shape, weight._dtype, weight._device)
        if idx.size and (int(xp.min(idx)) < 0 or int(xp.max(idx)) >= w.shape[0]):
            raise IndexError(
                f"embedding(): index out of range in self (indices must be in [0, {w.shape[0]}))"
            )
        rows = xp.take(w, xp.reshape(idx, (-1,)), axis=0)
        return make(xp.reshape(rows, shape), weight._dtype, weight._device)

    def cross_entropy_loss(
        self: Any, target: Any, weight: Any = None, reduction: Any = 1,
        ignore_index: Any = -100, label_smoothing: float = 0.0,
    ) -> Any:  # fmt: skip
        x, t = self._array, target._array
        eps = smoothing("cross_entropy", label_smoothing)
        if ignore_index >= 0 and target._dtype.is_floating_point:
            raise RuntimeError(
                "cross_entropy(): ignore_index is not supported for floating point target "
                f"(argument 'ignore_index' is {ignore_index}; class probabilities ignore no row)"
            )
        # Fast path (ci/bench/ops.py): (N, C) logits, N class indices, a mean, no weight,
        # and a negative ignore_index (the default -100), so that targets all >= 0 ignore
        # no row (a target equal to ignore_index must be left out of the mean, which only
        # the general path does); label smoothing or none.
        # Note [Cross-entropy fast path]: one shift for the whole batch (the largest logit)
        # instead of per-row maxima, whose axis reductions cost most of the call on small
        # batches.  log-sum-exp is exact under any shift unless a row's exp() sums
        # underflow, i.e. the row lies far below the batch's largest logit; then (and for
        # inf/nan logits) the smallest row sum says so and the per-row path below runs.
        # Label smoothing adds each row's ``-sum(log_softmax)``, ``C * log(sum) -
        # sum(shifted)`` under the shared shift.  Class probabilities (a target of the
        # logits' shape and dtype) take it too: a row's loss is ``sum(c * (log(sum) -
        # shifted))``, ``log(sum) * sum(c) - sum(c * shifted)``, ``c`` the smoothed target.
        # The shift cancels in both differences, as in ``log(sum) - picked``; the values
        # agree with the general path's within rounding
        # (tests/backends/test_fastpath_cross_entropy_smoothing.py).  The backward of all
        # of them is one kernel, ``_cross_entropy_backward``: ``softmax - c`` (a class
        # target's coefficients sum to 1), ``softmax * sum(c) - c`` for probabilities.
        # Label smoothing [32, 10] forward and backward: 176 -> 38 us (PyTorch 122).
        probs = target._dtype is self._dtype
        if (
            reduction == 1 and weight is None and not meta and fastpaths.ENABLED
            and x.ndim == 2 and self._dtype in floats and x.shape[0] and x.shape[1]
            and (
                t.shape == x.shape if probs else (
                    ignore_index < 0 and target._dtype is int64 and t.ndim == 1
                    and t.shape[0] == x.shape[0] and int(min_all(t)) >= 0
                )
            )
        ):  # fmt: skip
            n, classes = x.shape
            shifted = x - max_all(x)
            e = xp.exp(shifted)
            sums = row_sum(e)
            floor = tiny_sums.get(x.dtype)
            if floor is None:
                floor = tiny_sums[x.dtype] = _floor(xp.finfo(x.dtype))
            picked = None
            if not probs:
                try:
                    picked = shifted[_rows(n), t]
                except IndexError:
                    n = 0  # a target out of range: the checks below raise PyTorch's error
            if n and float(min_all(sums)) >= floor:
                if e.size <= _KEPT_SOFTMAX_SIZE:  # Note [Cross-entropy softmax kept ...]
                    kept_softmax[0] = (x, e, sums)
                terms = xp.log(sums)
                if probs:  # log(sum) * sum(c) - sum(c * shifted), c = t smoothed
                    c = t * (1 - eps) + eps / classes if eps else t
                    terms *= row_sum(c)
                    terms -= row_sum(c * shifted)
                    loss = sum_all(terms) / n
                else:
                    if eps:  # each row's -sum(log_softmax): C * log(sum) - sum(shifted)
                        smooth = terms * classes
                        smooth -= row_sum(shifted)
                    terms -= picked
                    loss = sum_all(terms) / n
                    if eps:  # the general path's combination, in its order
                        loss = (1 - eps) * loss + (sum_all(smooth) / n) * (eps / classes)
                out = asarray(loss)  # the raw library's asarray: no wrapper
                if out.dtype != x.dtype:
                    out = retype(out, x.dtype)
                return make(out, self._dtype, self._device)
        mode = _reduction("cross_entropy", reduction)
        _float_dtype("cross_entropy", self._dtype)
        if x.ndim == 0:
            raise RuntimeError("cross_entropy(): input must have at least 1 dimension (classes)")
        cdim = 0 if x.ndim == 1 else 1
        classes = x.shape[cdim]
        probs = target._dtype.is_floating_point
        batch_shape = tuple(s for i, s in enumerate(x.shape) if i != cdim)
        if probs:
            if tuple(t.shape) != tuple(x.shape):
                raise RuntimeError(
                    f"cross_entropy(): Expected target size {list(x.shape)}, got {list(t.shape)}"
                )
            if target._dtype is not self._dtype:
                raise RuntimeError(
                    f"cross_entropy(): expected scalar type {self._dtype.name} but found "
                    f"{target._dtype.name} (argument 'target' holds probabilities)"
                )
        else:
            if target._dtype is not int64:
                raise RuntimeError(
                    f"cross_entropy(): expected scalar type Long but found "
                    f"{errors.C10_NAMES[target._dtype.name]} (argument 'target')"
                )
            if tuple(t.shape) != batch_shape:
                raise RuntimeError(
                    f"cross_entropy(): Expected input batch_size ({x.shape[0] if x.ndim > 1 else 1}) "
                    f"to match target batch_size ({t.shape[0] if t.ndim else 1}) (input has "
                    f"shape {list(x.shape)}, target {list(t.shape)})"
                )
        if weight is not None and tuple(weight._array.shape) != (classes,):
            raise RuntimeError(
                f"cross_entropy(): weight tensor should be defined either for all {classes} "
                f"classes or no classes but got weight tensor of shape: {list(weight._array.shape)}"
            )
        dt, dev = self._dtype, self._device
        out_shape = batch_shape if mode == "none" else ()
        if meta:
            return make_meta(out_shape, dt, dev)
        a = _compute(x, dt)
        logp = a - xp.max(a, axis=cdim, keepdims=True) if a.size else a
        logp = logp - xp.log(xp.sum(xp.exp(logp), axis=cdim, keepdims=True))
        wshape = [1] * a.ndim
        wshape[cdim] = classes
        w = None if weight is None else xp.reshape(_compute(weight._array, dt), tuple(wshape))
        if probs:
            p = _compute(t, dt)
            if eps > 0:
                p = p * (1 - eps) + eps / classes
            terms = logp * p if w is None else logp * p * w
            loss = -xp.sum(terms, axis=cdim)
            if mode == "mean":
                loss = xp.sum(loss) / (a.size / classes if classes else 0)
            elif mode == "sum":
                loss = xp.sum(loss)
            return make(astype(xp.asarray(loss), dt), dt, dev)
        ignored = t == ignore_index
        safe = xp.where(ignored, 0, t)
        if t.size:
            lo, hi = int(min_all(safe)), int(max_all(safe))
            if lo < 0 or hi >= classes:
                bad = hi if hi >= classes else lo
                raise IndexError(f"cross_entropy(): Target {bad} is out of bounds.")
        picked = xp.squeeze(
            xp.take_along_axis(logp, xp.expand_dims(safe, axis=cdim), axis=cdim), axis=cdim
        )
        wt = (
            xp.ones(t.shape, dtype=a.dtype)
            if w is None
            else xp.take(_compute(weight._array, dt), safe)
        )
        wt = xp.where(ignored, 0, wt)
        nll = xp.where(ignored, 0, -picked * wt)  # an ignored row adds 0, even a NaN one's
        if eps > 0:
            smooth = -xp.sum(logp if w is None else logp * w, axis=cdim)
            smooth = xp.where(ignored, 0, smooth)
        if mode == "none":
            loss = nll if eps == 0 else (1 - eps) * nll + smooth * (eps / classes)
        elif mode == "sum":
            loss = xp.sum(nll)
            if eps > 0:
                loss = (1 - eps) * loss + xp.sum(smooth) * (eps / classes)
        else:
            total = xp.sum(wt)
            loss = xp.sum(nll) / total
            if eps > 0:
                denom = total if w is not None else xp.sum(astype(~ignored, int64))
                loss = (1 - eps) * loss + (xp.sum(smooth) / denom) * (eps / classes)
        return make(astype(xp.asarray(loss), dt), dt, dev)

    def cross_entropy_backward(
        grad_output: Any, self: Any, target: Any, reduction: Any = 1, ignore_index: Any = -100,
        label_smoothing: float = 0.0,
    ) -> Any:  # fmt: skip
        """``d cross_entropy_loss / d self`` without class weights.  Class targets:
        ``(softmax(self) - c) * grad_output`` on the rows not ignored (over their count for
        a mean), ``c`` the one-hot target, smoothed to ``(1 - eps) * one_hot + eps / C``.
        Class probabilities ``t``: ``(softmax(self) * sum(c) - c) * grad_output`` with
        ``c = t * (1 - eps) + eps / C`` (over the batch's size for a mean)."""
        op = "_cross_entropy_backward"
        mode = _reduction(op, reduction)
        eps = smoothing(op, label_smoothing)
        dt, dev = self._dtype, self._device
        _float_dtype(op, dt)
        x, t, g = self._array, target._array, grad_output._array
        if x.ndim == 0:
            raise RuntimeError(f"{op}(): input must have at least 1 dimension (classes)")
        cdim = 0 if x.ndim == 1 else 1
        classes = x.shape[cdim]
        batch_shape = tuple(s for i, s in enumerate(x.shape) if i != cdim)
        probs = target._dtype.is_floating_point
        if probs:
            if target._dtype is not dt or tuple(t.shape) != tuple(x.shape):
                raise RuntimeError(
                    f"{op}(): argument 'target' (class probabilities) must have the input's "
                    f"dtype {dt.name} and shape {list(x.shape)}; got {target._dtype.name} "
                    f"{list(t.shape)}"
                )
        elif target._dtype is not int64:
            raise RuntimeError(
                f"{op}(): expected scalar type Long but found "
                f"{errors.C10_NAMES[target._dtype.name]} (argument 'target')"
            )
        elif tuple(t.shape) != batch_shape:
            raise RuntimeError(
                f"{op}(): argument 'target' has shape {list(t.shape)}; expected "
                f"{list(batch_shape)} (the input's shape {list(x.shape)} without dim {cdim})"
            )
        expected = batch_shape if mode == "none" else ()
        if tuple(g.shape) != expected:
            raise RuntimeError(
                f"{op}(): argument 'grad_output' has shape {list(g.shape)}; expected "
                f"{list(expected)} for reduction={mode!r}"
            )
        if meta:
            return make_meta(tuple(x.shape), dt, dev)
        a = _compute(x, dt)
        gc = _compute(g, dt)
        if probs:
            c = _compute(t, dt)
            if eps:
                c = c * (1 - eps) + eps / classes
            if x.ndim == 2 and x.size and fastpaths.ENABLED:
                p = _softmax_rows(a)
            else:
                p = _softmax_along(a, cdim)
            p *= xp.sum(c, axis=cdim, keepdims=True)
            p -= c
            rows = a.size // classes if classes else 0
            return make(astype(_scaled(p, gc, mode, rows, cdim), dt, copy=False), dt, dev)
        keep = t != ignore_index
        kept = int(count_nonzero(keep))
        safe = t if kept == t.size else xp.where(keep, t, 0)
        if t.size:
            lo, hi = int(min_all(safe)), int(max_all(safe))
            if lo < 0 or hi >= classes:
                raise IndexError(f"{op}(): Target {hi if hi >= classes else lo} is out of bounds.")
        if x.ndim == 2 and x.size and fastpaths.ENABLED and fancy_writes:
            if kept == t.size:
                return make(astype(rows_grad(a, safe, gc, mode, eps), dt, copy=False), dt, dev)
            p = _softmax_minus_hot(a, safe, eps)
            p *= keep[:, None]  # ignored rows: 0 * p, NaN where p is (PyTorch's gradient too)
        else:
            p = _softmax_along(a, cdim)
            shape = [1] * a.ndim
            shape[cdim] = classes
            hot = xp.reshape(xp.arange(classes), tuple(shape)) == xp.expand_dims(safe, cdim)
            # Arithmetic on bools is NumPy's, not the standard's: the masks as p's dtype.
            c = retype(hot, p.dtype)
            if eps:
                c = c * (1 - eps) + eps / classes
            p = (p - c) * retype(xp.expand_dims(keep, cdim), p.dtype)
        return make(astype(_scaled(p, gc, mode, kept, cdim), dt, copy=False), dt, dev)

    def _softmax_along(a: Any, cdim: int) -> Any:
        """The softmax of ``a`` along ``cdim``, each slice shifted by its own maximum."""
        shifted = a - xp.max(a, axis=cdim, keepdims=True) if a.size else a
        e = xp.exp(shifted)
        return e / xp.sum(e, axis=cdim, keepdims=True)

    def _softmax_minus_hot(a: Any, targets: Any, eps: float = 0.0) -> Any:
        """Note [Cross-entropy fast path]: ``softmax(a) - one_hot(targets)`` of a non-empty
        (N, C) matrix with targets in range, the one-hot smoothed to ``(1 - eps) * one_hot
        + eps / C``.  An out-of-range target raises IndexError."""
        p = _softmax_rows(a)
        if eps:
            p -= eps / a.shape[1]
            p[_rows(a.shape[0]), targets] -= 1 - eps
        else:
            p[_rows(a.shape[0]), targets] -= 1
        return p

    def _softmax_rows(a: Any) -> Any:
        """The softmax of a non-empty (N, C) matrix's rows as a new array: one shift for
        the batch, per-row when a row's sum could underflow under it (Note [Cross-entropy
        fast path]), or the forward's kept pair (Note [Cross-entropy softmax kept ...])."""
        kept = kept_softmax[0]
        if kept is not None and kept[0] is a:  # Note [Cross-entropy softmax kept ...]
            kept_softmax[0] = None
            e, sums = kept[1], kept[2]
        else:
            e = xp.exp(a - max_all(a))
            sums = row_sum(e)
            floor = tiny_sums.get(a.dtype)
            if floor is None:
                floor = tiny_sums[a.dtype] = _floor(xp.finfo(a.dtype))
            if not float(min_all(sums)) >= floor:
                e = xp.exp(a - xp.max(a, axis=1, keepdims=True))
                sums = row_sum(e)
        return e / sums[:, None]  # a new array: ``e`` may be another backward's too

    def _scaled(p: Any, gc: Any, mode: str, kept: int, cdim: int) -> Any:
        """``p`` times the incoming gradient, over the rows kept for a mean (in place)."""
        if mode == "none":
            p *= xp.expand_dims(gc, cdim)
        elif mode == "mean":
            if kept:  # every row ignored: p is zeros already (PyTorch's gradient too)
                p *= gc / kept
        else:
            p *= gc
        return p

    def rows_grad(a: Any, targets: Any, gc: Any, mode: str, eps: float = 0.0) -> Any:
        """The fast case's arithmetic, no row ignored: ``cross_entropy_backward`` of a
        non-empty (N, C) float32/float64 matrix ``a``, N int64 ``targets`` all in [0, C),
        the incoming gradient's array ``gc`` (0-d, or (N,) for mode "none"), the label
        smoothing ``eps`` (in [0, 1]).  The backward lane calls it (Note [Backward lanes] in
        tensor/autograd/_lanes.py) after its own checks, so the two compute the same bits.
        An out-of-range target raises IndexError."""
        return _scaled(_softmax_minus_hot(a, targets, eps), gc, mode, a.shape[0], 1)

    if fancy_writes and not meta:
        cross_entropy_backward.rows_grad = rows_grad  # type: ignore[attr-defined]
        cross_entropy_backward.kept_softmax = kept_softmax  # type: ignore[attr-defined]

    return {
        "_cross_entropy_backward": cross_entropy_backward,
        "softmax.int": _softmax("softmax", False),
        "log_softmax.int": _softmax("log_softmax", True),
        "layer_norm": layer_norm,
        "native_dropout": native_dropout,
        "embedding": embedding,
        "cross_entropy_loss": cross_entropy_loss,
    }

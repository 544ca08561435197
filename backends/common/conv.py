"""conv2d, max_pool2d_with_indices and avg_pool2d: PyTorch's shape rules, vectorised kernels.

Imports: ``backends.common``.

No Python loop runs over pixels: the input is padded once, a strided window view
(``sliding_window_view``, no copy) gives every receptive field, and then
- conv2d gathers the fields of each group into columns (im2col: one copy) and
  multiplies them with the weights in one batched matmul (BLAS);
- the pools reduce each window (max with its argmax, or a sum) in one call.
``*_shape`` functions hold PyTorch's checks and output-size formulas; meta kernels
stop there.  Half-precision inputs compute in float32.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import errors, fastpaths
from .elementwise import MetaNamespace, Namespace
from .frontend import FrontEnd

__all__ = ["conv2d_shape", "kernels", "pool_shape"]


def _pair(op: str, value: Any, arg: str) -> tuple[int, int]:
    v = list(value) if isinstance(value, (list, tuple)) else [value]
    if len(v) == 1:
        v = v * 2
    if len(v) != 2:
        raise RuntimeError(f"{op}(): {arg} must be one int or two ints, got {list(value)}")
    return int(v[0]), int(v[1])


def _check_input(front: FrontEnd, op: str, x: Any) -> None:
    if x._array.ndim not in (3, 4):
        raise RuntimeError(
            f"{op}(): Expected 3D (unbatched) or 4D (batched) input to {op}, but got input of "
            f"size: {list(x._array.shape)}"
        )
    row = front.op_info("max_pool2d_with_indices" if op == "max_pool2d" else op)
    if x._dtype not in row.result_dtypes:
        raise errors.unsupported_dtype(op, x._dtype, "input")


def conv2d_shape(
    front: FrontEnd,
    input: Any,
    weight: Any,
    bias: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
) -> tuple[tuple[int, ...], tuple[int, int, int, int], tuple[int, int], tuple[int, int]]:
    """(output shape, padding (top, bottom, left, right), stride, dilation), or the error."""
    op = "conv2d"
    _check_input(front, op, input)
    w = weight._array
    if w.ndim != 4:
        raise RuntimeError(
            f"{op}(): weight should have 4 dimensions (out_channels, in_channels / groups, kH, "
            f"kW), got weight of size {list(w.shape)}"
        )
    if weight._dtype is not input._dtype or (bias is not None and bias._dtype is not input._dtype):
        other = weight if weight._dtype is not input._dtype else bias
        raise RuntimeError(
            f"{op}(): Input type ({input._dtype.name}) and {'weight' if other is weight else 'bias'}"
            f" type ({other._dtype.name}) should be the same"
        )
    x = input._array
    unbatched = x.ndim == 3
    n, c, h, wd = (1, *x.shape) if unbatched else x.shape
    o, cg, kh, kw = w.shape
    if groups <= 0:
        raise RuntimeError(f"{op}(): non-positive groups is not supported (groups={groups})")
    if c != cg * groups:
        raise RuntimeError(
            f"{op}(): Given groups={groups}, weight of size {list(w.shape)}, expected "
            f"input{list(x.shape)} to have {cg * groups} channels, but got {c} channels instead"
        )
    if o % groups:
        raise RuntimeError(
            f"{op}(): Given groups={groups}, expected weight to be divisible by {groups} at "
            f"dimension 0, but got weight of size {list(w.shape)} instead"
        )
    if bias is not None and tuple(bias._array.shape) != (o,):
        raise RuntimeError(
            f"{op}(): Given weight of size {list(w.shape)}, expected bias to be 1-dimensional "
            f"with {o} elements, but got bias of size {list(bias._array.shape)} instead"
        )
    sh, sw = _pair(op, stride, "stride")
    dh, dw = _pair(op, dilation, "dilation")
    # PyTorch's CPU kernels cannot convolve these with dilation (int64 they can).
    no_dilated = (front.uint8, front.int8, front.int16, front.int32)
    if (dh, dw) != (1, 1) and input._dtype in no_dilated:
        raise errors.unsupported_dtype("slow_conv_dilated", input._dtype, "input")
    if min(sh, sw) <= 0 or min(dh, dw) <= 0:
        raise RuntimeError(
            f"{op}(): stride and dilation must be positive, got {stride}, {dilation}"
        )
    if isinstance(padding, str):
        if padding == "valid":
            pads = (0, 0, 0, 0)
        elif padding == "same":
            if (sh, sw) != (1, 1):
                raise RuntimeError(
                    f"{op}(): padding='same' is not supported for strided convolutions"
                )
            th, tw = dh * (kh - 1), dw * (kw - 1)  # PyTorch puts the odd pixel at the end
            pads = (th // 2, th - th // 2, tw // 2, tw - tw // 2)
        else:
            raise ValueError(
                f"{op}(): Invalid padding string '{padding}', should be one of ['valid', 'same']"
            )
    else:
        ph, pw = _pair(op, padding, "padding")
        if min(ph, pw) < 0:
            raise RuntimeError(f"{op}(): negative padding is not supported, got {padding}")
        pads = (ph, ph, pw, pw)
    eh, ew = dh * (kh - 1) + 1, dw * (kw - 1) + 1
    hp, wp = h + pads[0] + pads[1], wd + pads[2] + pads[3]
    if hp < eh or wp < ew:
        raise RuntimeError(
            f"{op}(): Calculated padded input size per channel: ({hp} x {wp}). Kernel size: "
            f"({eh} x {ew}). Kernel size can't be greater than actual input size"
        )
    oh, ow = (hp - eh) // sh + 1, (wp - ew) // sw + 1
    shape = (o, oh, ow) if unbatched else (n, o, oh, ow)
    return shape, pads, (sh, sw), (dh, dw)


def _out_size(size: int, k: int, s: int, p: int, d: int, ceil: bool) -> int:
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= size + p:  # the last window must start inside the input
        out -= 1
    return out


def pool_shape(
    front: FrontEnd,
    op: str,
    x: Any,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil: bool,
) -> tuple[tuple[int, ...], tuple[int, int], tuple[int, int], tuple[int, int], tuple[int, int]]:
    """(output shape, kernel, stride, padding, dilation) of a 2-D pool, or PyTorch's error."""
    _check_input(front, op, x)
    k = _pair(op, kernel_size, "kernel_size")
    s = _pair(op, stride, "stride") if stride not in (None, [], ()) else k
    p = _pair(op, padding, "padding")
    d = _pair(op, dilation, "dilation")
    if min(k) <= 0 or min(s) <= 0 or min(d) <= 0:
        raise RuntimeError(
            f"{op}(): kernel_size, stride and dilation must be greater than zero, but got "
            f"kernel_size={list(k)}, stride={list(s)}, dilation={list(d)}"
        )
    for i in range(2):
        if p[i] > (d[i] * (k[i] - 1) + 1) // 2:
            raise RuntimeError(
                f"{op}(): pad should be at most half of effective kernel size, but got "
                f"pad={p[i]}, kernel_size={k[i]} and dilation={d[i]}"
            )
    shape = tuple(x._array.shape)
    h, w = shape[-2:]
    oh = _out_size(h, k[0], s[0], p[0], d[0], ceil)
    ow = _out_size(w, k[1], s[1], p[1], d[1], ceil)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(
            f"{op}(): Given input size: ({'x'.join(map(str, shape[-3:]))}). Calculated output "
            f"size: ({shape[-3]}x{oh}x{ow}). Output size is too small"
        )
    return (*shape[:-2], oh, ow), k, s, p, d


def sliding_windows(xp: Any) -> Callable[..., Any]:
    """``sliding_window_view(x, (wh, ww), axis=(-2, -1))`` in the standard, for a library
    without one: the windows stacked from ``wh * ww`` slices (a copy of every window,
    where NumPy's is a strided view: memory, not results, differ)."""

    def windows(x: Any, window: Any, axis: Any = (-2, -1)) -> Any:
        if tuple(a % x.ndim for a in axis) != (x.ndim - 2, x.ndim - 1):
            raise NotImplementedError(f"sliding windows over axes {axis}: the last two only")
        wh, ww = window
        oh, ow = x.shape[-2] - wh + 1, x.shape[-1] - ww + 1
        rows = [
            xp.stack([x[..., i : i + oh, j : j + ow] for j in range(ww)], axis=-1)
            for i in range(wh)
        ]
        return xp.stack(rows, axis=-2)

    return windows


_POSITIONS = 64  # Note [Convolution by output position]


def kernels(ns: Namespace, fns: dict[str, Callable[..., Any]]) -> dict[str, Any]:
    """conv2d and pool kernels; ``fns["sliding_window_view"]`` is the namespace's."""
    meta = isinstance(ns, MetaNamespace)
    xp = ns.xp
    front = ns.front
    make, make_meta, int64 = front.make, front.make_meta, front.int64
    half = (front.float16, front.bfloat16)
    windows_of = fns.get("sliding_window_view")

    def _pad(x: Any, top: int, bottom: int, left: int, right: int, fill: Any) -> Any:
        # A filled array and one slice assignment: 4x faster than np.pad on CNN-sized inputs.
        h, w = x.shape[-2:]
        out = xp.full((*x.shape[:-2], h + top + bottom, w + left + right), fill, dtype=x.dtype)
        out[..., top : top + h, left : left + w] = x
        return out

    astype, float32 = ns.astype, front.float32

    def _compute(a: Any, dt: Any) -> Any:
        if dt in half:
            return astype(a, float32)
        if dt.category == 1:  # integers accumulate in int64 and wrap when cast back, as in C
            return astype(a, int64)
        return a

    def conv2d(
        input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
        dilation: Any = 1, groups: Any = 1,
    ) -> Any:  # fmt: skip
        shape, pads, (sh, sw), (dh, dw) = conv2d_shape(
            front, input, weight, bias, stride, padding, dilation, int(groups)
        )
        dt, dev = input._dtype, input._device
        if meta:
            return make_meta(shape, dt, dev)
        g = int(groups)
        x = _compute(input._array, dt)
        if x.ndim == 3:
            x = xp.expand_dims(x, axis=0)
        w = _compute(weight._array, dt)
        o, cg, kh, kw = w.shape
        if any(pads):
            x = _pad(x, *pads, 0)
        oh, ow = shape[-2:]
        if oh * ow < kh * kw and oh * ow <= _POSITIONS and fastpaths.ENABLED:
            out = _by_position(x, w, g, (oh, ow), (sh, sw), (dh, dw))
        else:
            out = _by_columns(x, w, g, (sh, sw), (dh, dw))
        if bias is not None:  # in place: the product is ours, and a new array costs a page-in
            out += xp.reshape(_compute(bias._array, dt), (1, o, 1, 1))
        if len(shape) == 3:
            out = out[0, ...]
        return make(astype(out, dt, copy=False), dt, dev)

    # Note [Convolution by output position]
    # ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    # im2col copies every window into a column matrix, one product of the weights with
    # it: right for a small kernel sliding over a large image.  conv2d's weight gradient
    # is a convolution the other way round (the batch as channels, the output gradient as
    # a kernel the size of the image, an output the size of the kernel): 9 outputs of
    # 32x32 windows, whose column matrix is gathered with the 9 as its fastest dim.  When
    # the output has fewer positions than the kernel, each output position is instead one
    # product of its window (rows of the input, copied in order) with the weights: on
    # a [3, 8, 34, 34] input and [16, 8, 32, 32] weight 1,434 -> ~400 us.  At most
    # ``_POSITIONS`` of them (a 7x7 kernel's weight gradient has 49): each costs a
    # Python-level product, where the columns' one copy and product do not grow in calls
    # with the positions.  The sums run over the same terms in another order (a product
    # of another shape): the values agree within rounding with the columns'
    # (tests/backends/test_conv_by_position.py).
    def _by_position(
        x: Any, w: Any, g: int, out_hw: tuple[int, int], s: tuple[int, int],
        d: tuple[int, int],
    ) -> Any:  # fmt: skip
        n = x.shape[0]
        o, cg, kh, kw = w.shape
        k = cg * kh * kw
        weights = xp.permute_dims(xp.reshape(w, (g, o // g, k)), (0, 2, 1))  # (g, k, o/g)
        out = xp.empty((n, o, *out_hw), dtype=x.dtype)
        for i in range(out_hw[0]):
            for j in range(out_hw[1]):
                r, c = i * s[0], j * s[1]
                window = x[
                    :, :, r : r + d[0] * (kh - 1) + 1 : d[0], c : c + d[1] * (kw - 1) + 1 : d[1]
                ]
                rows = xp.reshape(window, (n, g, 1, k))  # a copy, in the input's row order
                out[:, :, i, j] = xp.reshape(xp.matmul(rows, weights), (n, o))
        return out

    def _by_columns(x: Any, w: Any, g: int, s: tuple[int, int], d: tuple[int, int]) -> Any:
        sh, sw = s
        dh, dw = d
        n = x.shape[0]
        o, cg, kh, kw = w.shape
        win = windows_of(x, (dh * (kh - 1) + 1, dw * (kw - 1) + 1), axis=(2, 3))  # type: ignore[misc]
        win = win[:, :, ::sh, ::sw, ::dh, ::dw]  # (n, c, oh, ow, kh, kw), a view
        oh, ow = win.shape[2:4]
        # im2col: (n, g, cg*kh*kw, oh*ow), one copy; then (g, o/g, K) @ columns per group.
        cols = xp.reshape(
            xp.permute_dims(xp.reshape(win, (n, g, cg, oh, ow, kh, kw)), (0, 1, 2, 5, 6, 3, 4)),
            (n, g, cg * kh * kw, oh * ow),
        )
        out = xp.matmul(xp.reshape(w, (g, o // g, cg * kh * kw)), cols)  # (n, g, o/g, oh*ow)
        return xp.reshape(out, (n, o, oh, ow))

    def _windows(x: Any, k: Any, s: Any, p: Any, d: Any, out_hw: Any, fill: Any) -> Any:
        """Windows (..., oh, ow, kh, kw) of ``x`` padded with ``fill`` (extra at the end
        for ceil_mode)."""
        h, w = x.shape[-2:]
        need_h = (out_hw[0] - 1) * s[0] + d[0] * (k[0] - 1) + 1
        need_w = (out_hw[1] - 1) * s[1] + d[1] * (k[1] - 1) + 1
        extra_h = max(0, need_h - (h + 2 * p[0]))
        extra_w = max(0, need_w - (w + 2 * p[1]))
        if p[0] or p[1] or extra_h or extra_w:
            x = _pad(x, p[0], p[0] + extra_h, p[1], p[1] + extra_w, fill)
        win = windows_of(x, (d[0] * (k[0] - 1) + 1, d[1] * (k[1] - 1) + 1), axis=(-2, -1))  # type: ignore[misc]
        nd = win.ndim
        key = [slice(None)] * (nd - 4) + [
            slice(0, (out_hw[0] - 1) * s[0] + 1, s[0]), slice(0, (out_hw[1] - 1) * s[1] + 1, s[1]),
            slice(None, None, d[0]), slice(None, None, d[1]),
        ]  # fmt: skip
        return win[tuple(key)]

    def max_pool2d_with_indices(
        self: Any, kernel_size: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1,
        ceil_mode: bool = False,
    ) -> Any:  # fmt: skip
        shape, k, s, p, d = pool_shape(
            front, "max_pool2d", self, kernel_size, stride, padding, dilation, ceil_mode
        )
        dt, dev = self._dtype, self._device
        if meta:
            return make_meta(shape, dt, dev), make_meta(shape, int64, dev)
        x = self._array
        # Integers compute in float64 so that padding (-inf) never ties with a value.
        x = astype(x, front.float64) if not dt.is_floating_point else _compute(x, dt)
        h, w = x.shape[-2:]
        win = _windows(x, k, s, p, d, shape[-2:], -xp.inf)
        size = k[0] * k[1]
        if size <= 16 and fastpaths.ENABLED and not bool(xp.any(xp.isnan(x))):
            values, arg = _window_max(win, k)
        else:
            flat = xp.reshape(win, (*win.shape[:-2], size))
            arg = xp.argmax(flat, axis=-1)
            nan = xp.isnan(flat)
            if bool(xp.any(nan)):  # PyTorch's ``val > max || isnan(val)``: the last NaN wins
                last = (size - 1) - xp.argmax(nan[..., ::-1], axis=-1)
                arg = xp.where(xp.any(nan, axis=-1), last, arg)
            values = xp.take_along_axis(flat, xp.expand_dims(arg, -1), axis=-1)
            values = xp.squeeze(values, axis=-1)
        i, j = arg // k[1], arg % k[1]
        rows = xp.reshape(xp.arange(shape[-2]) * s[0] - p[0], (-1, 1)) + i * d[0]
        cols = xp.reshape(xp.arange(shape[-1]) * s[1] - p[1], (1, -1)) + j * d[1]
        indices = ns.retype(rows * w + cols, xp.int64)
        return (
            make(astype(values, dt, copy=False), dt, dev),
            make(indices, int64, dev),
        )

    # Note [Window maxima by comparison]
    # ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    # max_pool2d's general path copies every window into a row (a reshape of the strided
    # windows view) and takes its argmax: ~330 us of a [8, 16, 16, 16] 2x2 pool's forward
    # (PyTorch's forward and backward: ~120).  For windows of up to 16 elements and input
    # without NaN, the window's elements are instead compared in order, one strided view
    # of (..., oh, ow) each: a later element replaces the best so far only when greater,
    # so the first maximum wins, as argmax's does (ties of 0.0 and -0.0 included), and the
    # values are the same elements.  Windows with NaN (where PyTorch's kernel, ``val > max
    # || isnan(val)``, keeps the last NaN) and larger windows take the general path.
    # tests/backends/test_conv_by_position.py compares the two.
    def _window_max(win: Any, k: tuple[int, int]) -> tuple[Any, Any]:
        best = win[..., 0, 0]
        arg = xp.zeros(best.shape, dtype=xp.int64)
        for q in range(1, k[0] * k[1]):
            t = win[..., q // k[1], q % k[1]]
            take = t > best
            best = xp.where(take, t, best)
            arg = xp.where(take, q, arg)
        return best, arg

    def avg_pool2d(
        self: Any, kernel_size: Any, stride: Any = (), padding: Any = 0, ceil_mode: bool = False,
        count_include_pad: bool = True, divisor_override: Any = None,
    ) -> Any:  # fmt: skip
        shape, k, s, p, d = pool_shape(
            front, "avg_pool2d", self, kernel_size, stride, padding, 1, ceil_mode
        )
        if divisor_override is not None and divisor_override == 0:
            raise RuntimeError("avg_pool2d(): divisor must be not zero")
        dt, dev = self._dtype, self._device
        if meta:
            return make_meta(shape, dt, dev)
        x = _compute(self._array, dt)
        h, w = x.shape[-2:]
        sums = xp.sum(_windows(x, k, s, p, d, shape[-2:], 0), axis=(-2, -1))
        if dt.category == 1:  # true division (the standard's takes floats only)
            sums = astype(sums, front.float64)
        if divisor_override is not None:
            out = sums / divisor_override
        else:
            div = []
            for size, ki, si, pi, n in (
                (h, k[0], s[0], p[0], shape[-2]),
                (w, k[1], s[1], p[1], shape[-1]),
            ):
                start = xp.arange(n) * si - pi
                end = xp.minimum(start + ki, size + pi)
                if count_include_pad:
                    div.append(end - start)
                else:
                    div.append(xp.minimum(end, size) - xp.maximum(start, 0))
            divisor = xp.reshape(div[0], (-1, 1)) * xp.reshape(div[1], (1, -1))
            out = sums / astype(divisor, front.float64)  # the standard divides no ints
        if dt.category == 1:  # integer pools divide with truncation, as C does
            out = xp.trunc(out)
        return make(astype(out, dt, copy=False), dt, dev)

    return {
        "conv2d": conv2d,
        "conv2d.padding": conv2d,
        "max_pool2d_with_indices": max_pool2d_with_indices,
        "avg_pool2d": avg_pool2d,
    }

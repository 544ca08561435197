"""``repr(tensor)`` in PyTorch's format (torch/_tensor_str.py), computed from NumPy data.

Imports: NumPy and ``tensor._dtype``.  Works on any object with ``_array``,
``_dtype``, ``_device`` and ``requires_grad`` (the Tensor class is not imported).

Floats print with 4 decimals, as integers with a trailing "." when all values
are whole, or in scientific notation when the range is wide; values are padded
to a common width; tensors over 1000 elements are summarised with "...";
device, dtype and size are shown only when they are not the defaults.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _dtype

__all__ = ["PRINT_OPTS", "tensor_repr"]


class PRINT_OPTS:  # noqa: N801 - PyTorch's name
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode: bool | None = None


class _Formatter:
    def __init__(self, values: np.ndarray, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        p = PRINT_OPTS.precision
        if not floating:
            for v in values.reshape(-1).tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        vals = values.reshape(-1).astype(np.float64)
        finite = vals[np.isfinite(vals) & (vals != 0)]
        if finite.size == 0:
            return
        absv = np.abs(finite)
        lo, hi = float(absv.min()), float(absv.max())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        wide = hi / lo > 1000.0 or hi > 1.0e8
        if self.int_mode:
            if wide:
                self.sci_mode = True
                widths = [len(f"{v:.{p}e}") for v in finite.tolist()]
            else:
                widths = [len(f"{v:.0f}") + 1 for v in finite.tolist()]
        elif wide or lo < 1.0e-4:
            self.sci_mode = True
            widths = [len(f"{v:.{p}e}") for v in finite.tolist()]
        else:
            widths = [len(f"{v:.{p}f}") for v in finite.tolist()]
        self.max_width = max([self.max_width, *widths])
        if PRINT_OPTS.sci_mode is not None:
            self.sci_mode = PRINT_OPTS.sci_mode

    def _text(self, v: Any) -> str:
        if not self.floating:
            return str(v)
        p = PRINT_OPTS.precision
        if self.sci_mode:
            return f"{v:.{p}e}"
        if self.int_mode:
            text = f"{v:.0f}"
            return text if math.isinf(v) or math.isnan(v) else text + "."
        return f"{v:.{p}f}"

    def format(self, v: Any) -> str:
        text = self._text(v)
        return " " * (self.max_width - len(text)) + text


def _summarize(a: np.ndarray) -> np.ndarray:
    # The values that will be printed when summarising (edge items of every dimension).
    e = PRINT_OPTS.edgeitems
    for axis in range(a.ndim):
        if a.shape[axis] > 2 * e:
            a = np.concatenate(
                [
                    np.take(a, range(e), axis=axis),
                    np.take(a, range(a.shape[axis] - e, a.shape[axis]), axis=axis),
                ],
                axis=axis,
            )
    return a


def _fmt_value(v: Any, f1: _Formatter, f2: _Formatter | None) -> str:
    if f2 is None:
        return f1.format(v)
    real = f1.format(v.real)
    imag = (f2.format(v.imag) + "j").lstrip()
    return real + imag if imag[0] in "+-" else real + "+" + imag


def _vector(
    a: np.ndarray, indent: int, summarize: bool, f1: _Formatter, f2: _Formatter | None
) -> str:
    width = f1.max_width + 2 + (f2.max_width + 1 if f2 is not None else 0)
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / width)))
    e = PRINT_OPTS.edgeitems
    values = a.tolist()
    if summarize and len(values) > 2 * e:
        data = [_fmt_value(v, f1, f2) for v in values[:e]] + [" ..."]
        data += [_fmt_value(v, f1, f2) for v in values[-e:]]
    else:
        data = [_fmt_value(v, f1, f2) for v in values]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(
    a: np.ndarray, indent: int, summarize: bool, f1: _Formatter, f2: _Formatter | None
) -> str:
    if a.ndim == 0:
        return _fmt_value(a.item(), f1, f2)
    if a.ndim == 1:
        return _vector(a, indent, summarize, f1, f2)
    e = PRINT_OPTS.edgeitems
    n = a.shape[0]
    if summarize and n > 2 * e:
        rows = [_nested(a[i], indent + 1, summarize, f1, f2) for i in range(e)] + ["..."]
        rows += [_nested(a[i], indent + 1, summarize, f1, f2) for i in range(n - e, n)]
    else:
        rows = [_nested(a[i], indent + 1, summarize, f1, f2) for i in range(n)]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _data_str(a: np.ndarray, dt: _dtype.dtype, indent: int) -> str:
    if a.size == 0:
        return "[]"
    summarize = a.size > PRINT_OPTS.threshold
    shown = _summarize(a) if summarize else a
    if dt is _dtype.bfloat16 or dt is _dtype.float16:
        a, shown = a.astype(np.float32), shown.astype(np.float32)
    if dt.is_complex:
        f1 = _Formatter(shown.real, True)
        f2 = _Formatter(shown.imag, True)
        return _nested(a, indent, summarize, f1, f2)
    return _nested(a, indent, summarize, _Formatter(shown, dt.category == _dtype.FLOAT), None)


def _default_dtypes() -> tuple[_dtype.dtype, ...]:
    return (
        _dtype.get_default_dtype(),
        _dtype.get_default_complex_dtype(),
        _dtype.int64,
        _dtype.bool,
    )


def tensor_repr(t: Any, prefix: str = "tensor(") -> str:
    """PyTorch's repr of a tensor (``tensor([1., 2.], dtype=tensor.float64)``)."""
    indent = len(prefix)
    array = t._array
    dt = t._dtype
    dev = t._device
    suffixes = []
    if dev.type != "cpu":
        suffixes.append(f"device='{dev}'")
    shape = tuple(array.shape)
    if dev.type == "meta":
        body = "..."
        suffixes.append(f"size={shape}")
        if dt is not _dtype.get_default_dtype():
            suffixes.append(f"dtype={dt!r}")
    else:
        data = t.numpy(force=True) if hasattr(t, "numpy") else np.asarray(array)
        if data.size == 0:
            body = "[]"
            if data.ndim != 1:
                suffixes.append(f"size={shape}")
            if dt is not _dtype.get_default_dtype():
                suffixes.append(f"dtype={dt!r}")
        else:
            body = _data_str(data, dt, indent)
            if dt not in _default_dtypes():
                suffixes.append(f"dtype={dt!r}")
    if t.grad_fn is not None:
        name = getattr(t.grad_fn, "name", None)
        name = name() if callable(name) else type(t.grad_fn).__name__
        suffixes.append(f"grad_fn=<{name}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    text = prefix + body
    for s in suffixes:
        text += ", " + s
    return text + ")"

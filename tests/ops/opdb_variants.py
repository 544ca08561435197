"""Op-database entries of the in-place and ``out=`` rows, generated from the functional ones.

Imports: NumPy, ``tensor`` (the operator table) and the sibling ``opentry``/``samples``.

For each in-place row (``add_``) the functional entry of the same name gives the
samples; the call copies ``self``, applies the in-place method to a view of the
copy, checks it returned that view (and, for our tensors, that the copy's version
moved) and returns the copy, so the value written reached the base.  The
reference is the functional one cast to ``self``'s dtype; results that cannot be
cast raise in both libraries.  For each out row (``add.out``) the call passes an
empty ``out`` of the functional result's dtype, which must be resized and
returned.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import tensor as tt

from .opentry import OpEntry
from .samples import Sample, up

__all__ = ["entries"]


def _inplace_call(name: str, base_call: Callable[..., Any]) -> Callable[..., Any]:
    def call(lib: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        if not hasattr(x, "clone"):
            return base_call(lib, x, *args, **kwargs)  # a number first: no in-place form
        base = x.clone()
        view = base.view(base.shape)
        result = getattr(view, name)(*args, **kwargs)
        assert result is view, f"{name} returned another tensor than self"
        if lib is tt:
            assert base._version >= 1, f"{name} did not bump the base's version"
        return base

    return call


def _inplace_ref(ref: Callable[..., Any]) -> Callable[..., Any]:
    def reference(x: Any, *args: Any, **kwargs: Any) -> Any:
        out = np.asarray(ref(x, *args, **kwargs))
        target = up(x).dtype if isinstance(x, np.ndarray) else out.dtype
        if out.dtype.kind == "c" and np.dtype(target).kind != "c":
            return out  # raises in both libraries (complex into a real tensor)
        return out.astype(target)

    return reference


def _out_call(base_call: Callable[..., Any]) -> Callable[..., Any]:
    def call(lib: Any, *args: Any, **kwargs: Any) -> Any:
        expected = base_call(lib, *args, **kwargs)
        if isinstance(expected, tuple):  # (values, indices): out=(values, indices)
            out: Any = tuple(lib.empty(0, dtype=e.dtype, device=e.device) for e in expected)
        else:
            out = lib.empty(0, dtype=expected.dtype, device=expected.device)
        result = base_call(lib, *args, out=out, **kwargs)
        if isinstance(out, tuple):
            assert all(r is o for r, o in zip(result, out, strict=True)), "out= not returned"
            return result
        assert result is out, "out= returned another tensor than out"
        return out

    return call


def _with_dim(samples: Callable[..., list[Sample]]) -> Callable[..., list[Sample]]:
    # torch.sum(x, out=...) needs a dim in PyTorch's Python API; keep those samples.
    def filtered(dtype: str, rng: np.random.Generator) -> list[Sample]:
        return [s for s in samples(dtype, rng) if "dim" in s.kwargs]

    return filtered


def _tensors_only(samples: Callable[..., list[Sample]]) -> Callable[..., list[Sample]]:
    # torch.where(c, x, 1.0, out=...): PyTorch's out= form takes tensors only (where.self_out).
    def filtered(dtype: str, rng: np.random.Generator) -> list[Sample]:
        return [s for s in samples(dtype, rng) if all(hasattr(a, "shape") for a in s.args)]

    return filtered


def _float_mean_std(samples: Callable[..., list[Sample]]) -> Callable[..., list[Sample]]:
    # torch.normal(mean_tensor, std, out=empty) does not resize out (PyTorch 2.13 raises a
    # size mismatch); the float mean and std form does.
    def filtered(dtype: str, rng: np.random.Generator) -> list[Sample]:
        return [s for s in samples(dtype, rng) if not any(hasattr(a, "shape") for a in s.args)]

    return filtered


# Out rows whose functional entry is another than the row's (PyTorch's argsort takes
# out= only with stable=True: argsort.stable_out; F.softmax has no out=, torch.softmax
# does), and sample filters per out row.
_OUT_BASE = {
    "argsort.out": "argsort_stable",
    "softmax.out": "softmax_tt",
    "log_softmax.out": "log_softmax_tt",
}
_OUT_SAMPLES = {"where.out": _tensors_only, "normal.out": _float_mean_std}


def table_names(entry: OpEntry) -> list[str]:
    return [d.name for d in tt.op_info(entry.support or entry.op).dtypes]


def entries(functional: list[OpEntry]) -> list[OpEntry]:
    by_id = {e.id: e for e in functional}
    out: list[OpEntry] = []
    for row in tt.OP_TABLE:
        if row.family not in ("inplace", "out"):
            continue
        base = by_id.get(_OUT_BASE.get(row.name, row.tags[0]))
        if base is None:
            continue
        if row.family == "inplace":
            # Supported: the dtypes whose result can be written back (not int.sin_()).
            table = tt.op_info(base.support or base.op).result_dtypes
            castable = {d.name for d, (_, o) in table.items() if tt.can_cast(o, d)}
            if row.name == "abs_":  # PyTorch refuses in-place abs of complex tensors
                castable -= {"complex64", "complex128"}
            names = base.supported if base.supported is not None else tuple(table_names(base))
            dtypes = base.dtypes
            if row.name in ("cumsum_", "cumprod_"):
                # PyTorch scans in place in self's dtype and has no bool kernel, except that
                # a 0-d tensor is copied; ours refuse bool self (int64 can't be written into
                # it) whatever its shape.  Left out rather than matched sample by sample.
                dtypes = tuple(d for d in dtypes if d != "bool")
            out.append(
                OpEntry(
                    row.name, row.name, _inplace_call(row.name, base.call),
                    None if base.ref is None else _inplace_ref(base.ref), base.samples,
                    dtypes=dtypes, tol=base.tol, random=base.random,
                    supported=tuple(n for n in names if n in castable),
                    torch_values_for=base.torch_values_for,
                )
            )  # fmt: skip
        else:
            reduction = tt.op_info(row.tags[0]).family in ("reduction",)
            samples = _with_dim(base.samples) if reduction else base.samples
            samples = _OUT_SAMPLES.get(row.name, lambda s: s)(samples)
            out.append(
                OpEntry(
                    row.name, row.name, _out_call(base.call), base.ref, samples,
                    dtypes=base.dtypes, random=base.random,
                    tol=base.tol, support=base.support or base.op, supported=base.supported,
                    torch_values_for=base.torch_values_for, torch_call=None,
                )
            )  # fmt: skip
    return out

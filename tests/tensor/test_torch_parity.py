"""The parity sweep: every PyTorch 2.13 spelling of every OPS.md operator exists here and
behaves as PyTorch's does on small samples (skipped when torch is not installed).

For each name of OPS.md (``torch_parity_samples.OPS_MD``) the spellings are read from
torch itself: ``torch.<name>`` and ``torch.<name>_`` (in ``dir(torch)``), the methods
``Tensor.<name>`` and ``Tensor.<name>_`` (in ``dir(torch.Tensor)``), ``F.<name>`` and
``F.<name>_`` (in ``dir(torch.nn.functional)``), and ``torch.<name>(..., out=)`` where
torch's function accepts ``out=`` on one of the samples.  Each must exist here under the
same name (``tt.<name>``, ``tt.Tensor.<name>``, ``tt.nn.functional.<name>``) and, on
every sample, give what torch gives: the same dtype, shape and values (dtype and shape
only for random results), the same structure (named-tuple fields, which result is which
argument, as for in-place and ``out=`` forms), the same arguments afterwards, or an error
where torch raises one.  A spelling we do not support on purpose is in ``EXCLUDED`` with
its reason; a missing one fails with its name.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import tensor as tt

from .torch_parity_samples import OPS_MD, SAMPLES, Dt, Sample

torch = pytest.importorskip("torch", reason="PyTorch is not installed: the sweep compares with it")
F = torch.nn.functional

pytestmark = pytest.mark.torch

# Spelling kind -> (torch's namespace, ours).
NAMESPACES = {
    "torch": (torch, tt),
    "Tensor": (torch.Tensor, tt.Tensor),
    "F": (F, tt.nn.functional),
}

# Spellings left out on purpose, each with its reason.
EXCLUDED: dict[str, str] = {
    # In-place view operators restride an existing tensor and, under autograd, replace its
    # history with the view's (x.unsqueeze_(0) gets UnsqueezeBackward1).  Our autograd
    # records in-place writes of values, not of layouts; the out-of-place views cover them.
    "Tensor.squeeze_": "in-place view (layout change): not supported; use x = x.squeeze()",
    "Tensor.unsqueeze_": "in-place view (layout change): not supported; use x = x.unsqueeze()",
    "Tensor.t_": "in-place view (layout change): not supported; use x = x.t()",
    "Tensor.transpose_": "in-place view (layout change): not supported; use x = x.transpose()",
}


@dataclass(frozen=True)
class Spelling:
    op: str  # the OPS.md name
    kind: str  # "torch", "Tensor", "F" or "out"
    name: str  # the attribute: "sin", "sin_", "linalg.vector_norm"

    def __str__(self) -> str:
        if self.kind == "out":
            return f"torch.{self.name}(out=)"
        return f"{self.kind}.{self.name}"

    @property
    def sample_kind(self) -> str:
        return "torch" if self.kind == "out" else self.kind


def _attr(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _names() -> list[str]:
    seen: dict[str, None] = {}
    for text in OPS_MD.values():
        seen.update(dict.fromkeys(text.split()))
    return list(seen)


def _samples(op: str, kind: str) -> list[Sample]:
    return [s for s in SAMPLES.get(op, []) if s.kinds is None or kind in s.kinds]


def _spellings() -> Iterator[Spelling]:
    for op in _names():
        if "." in op:  # linalg.vector_norm
            if _attr(torch, op) is not None:
                yield Spelling(op, "torch", op)
            continue
        for name in (op, op + "_"):
            for kind, (theirs, _) in NAMESPACES.items():
                if name in dir(theirs):
                    yield Spelling(op, kind, name)
        if op in dir(torch) and any(_takes_out(op, s) for s in _samples(op, "torch")):
            yield Spelling(op, "out", op)


# -- running a sample in either library -----------------------------------------------------------
def _convert(value: Any, lib: Any) -> Any:
    if isinstance(value, np.ndarray):
        return lib.tensor(value)
    if isinstance(value, Dt):
        return getattr(lib, value.name)
    if isinstance(value, (tuple, list)):
        return type(value)(_convert(v, lib) for v in value)
    return value


def _empty_like(result: Any, lib: Any) -> Any:
    """An ``out=`` argument for a result (tuples for tuples), of its shape: resizing empty
    ones is the op database's concern (and torch.normal(mean_tensor, out=) does not)."""
    if isinstance(result, tuple):
        return tuple(_empty_like(r, lib) for r in result)
    return lib.empty(tuple(result.shape), dtype=result.dtype)


def _run(spelling: Spelling, sample: Sample, lib: Any) -> tuple[Any, list[Any]]:
    """(result, the arguments as converted) of one sample in ``lib`` (torch or tt)."""
    args = [_convert(a, lib) for a in sample.args]
    kwargs = {k: _convert(v, lib) for k, v in sample.kwargs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if spelling.kind == "Tensor":
            rest = args[: sample.self_index] + args[sample.self_index + 1 :]
            attr = getattr(args[sample.self_index], spelling.name)
            result = attr(*rest, **kwargs) if callable(attr) else attr
        elif spelling.kind == "out":
            fn = getattr(lib, spelling.name)
            out = _empty_like(fn(*args, **kwargs), lib)
            kwargs["out"] = out
            result = fn(*args, **kwargs)
            args.append(out)
        else:
            ns = lib if spelling.kind == "torch" else (F if lib is torch else tt.nn.functional)
            result = _attr(ns, spelling.name)(*args, **kwargs)
    return result, args


def _takes_out(op: str, sample: Sample) -> bool:
    try:
        _run(Spelling(op, "out", op), sample, torch)
    except TypeError:
        return False  # torch's function has no out= (for these arguments)
    except Exception:
        return False  # the functional call itself fails: not a sample for out=
    return True


# -- comparing results ----------------------------------------------------------------------------
def _fields(value: Any) -> tuple[str, ...] | None:
    return getattr(type(value), "_fields", None) or getattr(type(value), "__match_args__", None)


def _assert_same(ours: Any, theirs: Any, values: bool, where: str) -> None:
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, tt.Tensor), f"{where}: {type(ours).__name__}, torch: a Tensor"
        their_dtype = str(theirs.dtype).removeprefix("torch.")
        assert ours.dtype.name == their_dtype, (
            f"{where}: dtype {ours.dtype.name}, torch: {their_dtype}"
        )
        assert tuple(ours.shape) == tuple(theirs.shape), (
            f"{where}: shape {tuple(ours.shape)}, torch: {tuple(theirs.shape)}"
        )
        if values:
            mine, reference = ours.numpy(), theirs.detach().numpy()
            if reference.dtype.kind == "f":
                np.testing.assert_allclose(
                    mine, reference, rtol=1e-5, atol=1e-6, equal_nan=True, err_msg=where
                )
            else:
                np.testing.assert_array_equal(mine, reference, err_msg=where)
    elif isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)), f"{where}: {type(ours).__name__}, torch: a tuple"
        assert len(ours) == len(theirs), f"{where}: {len(ours)} results, torch: {len(theirs)}"
        assert _fields(ours) == _fields(theirs), (
            f"{where}: fields {_fields(ours)}, torch: {_fields(theirs)}"
        )
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            _assert_same(a, b, values, f"{where}[{i}]")
    elif isinstance(theirs, torch.dtype):
        assert isinstance(ours, tt.dtype), f"{where}: {ours!r}, torch: {theirs!r}"
        assert ours.name == str(theirs).removeprefix("torch."), (
            f"{where}: {ours!r}, torch: {theirs!r}"
        )
    else:
        assert type(ours) is type(theirs) and ours == theirs, (
            f"{where}: {ours!r}, torch: {theirs!r}"
        )


def _identity(result: Any, args: list[Any]) -> list[int]:
    """Which arguments the result (or its parts) are: in-place forms return ``self``."""
    parts = result if isinstance(result, (tuple, list)) else (result,)
    flat = [a for arg in args for a in (arg if isinstance(arg, (tuple, list)) else (arg,))]
    return [next((i for i, a in enumerate(flat) if a is p), -1) for p in parts]


def _check(spelling: Spelling, sample: Sample, index: int) -> None:
    where = f"{spelling} sample {index}"
    try:
        theirs, their_args = _run(spelling, sample, torch)
    except TypeError:
        if spelling.kind == "out":
            return  # no out= in torch for these arguments (torch.sum(x, out=) needs a dim)
        with pytest.raises(Exception):  # noqa: B017 - torch raised: any error of ours will do
            _run(spelling, sample, tt)
        return
    except Exception as their_error:
        with pytest.raises(Exception):  # noqa: B017 - torch raised: any error of ours will do
            _run(spelling, sample, tt)
        del their_error
        return
    try:
        ours, our_args = _run(spelling, sample, tt)
    except Exception as e:
        raise AssertionError(f"{where}: raised {type(e).__name__}: {e}; torch did not") from e
    _assert_same(ours, theirs, sample.values, where)
    assert _identity(ours, our_args) == _identity(theirs, their_args), (
        f"{where}: returns arguments {_identity(ours, our_args)}, torch: "
        f"{_identity(theirs, their_args)} (in-place and out= forms return the written tensor)"
    )
    for i, (a, b) in enumerate(zip(our_args, their_args, strict=True)):
        _assert_same(a, b, sample.values, f"{where}: argument {i} afterwards")


ALL_SPELLINGS = list(_spellings())
CHECKED = [s for s in ALL_SPELLINGS if str(s) not in EXCLUDED]


@pytest.mark.parametrize("spelling", CHECKED, ids=str)
def test_spelling_exists_and_matches_torch(spelling: Spelling) -> None:
    if spelling.kind == "out":
        ours = getattr(tt, spelling.name, None)
    else:
        ours = _attr(NAMESPACES[spelling.kind][1], spelling.name)
    assert ours is not None, f"{spelling} is missing here (PyTorch 2.13 has it)"
    samples = _samples(spelling.op, spelling.sample_kind)
    assert samples, f"{spelling}: no sample in torch_parity_samples.SAMPLES[{spelling.op!r}]"
    for i, sample in enumerate(samples):
        _check(spelling, sample, i)


def test_exclusions_are_torch_spellings_we_lack() -> None:
    """An exclusion that torch no longer has, or that we now support, is stale."""
    names = {str(s): s for s in ALL_SPELLINGS}
    for text, reason in EXCLUDED.items():
        assert reason, text
        assert text in names, f"{text} is excluded but is not one of PyTorch's spellings"
        s = names[text]
        assert _attr(NAMESPACES[s.kind][1], s.name) is None, f"{text} exists now: drop it"


def test_every_ops_md_name_has_a_spelling_and_samples() -> None:
    spelled = {s.op for s in ALL_SPELLINGS}
    for op in _names():
        assert op in spelled, f"{op}: PyTorch has no spelling of it (a typo in OPS_MD?)"
        assert SAMPLES.get(op), f"{op}: no samples"

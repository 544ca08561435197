"""A stand-in CUDA device, so that CUDA-side rules are tested on machines without a GPU.

Tensors on it hold NumPy arrays and say they are on ``cuda:0``; they carry the CUDA
keys (CUDA, AutogradCUDA, AutocastCUDA), so the dispatcher routes their calls as it
routes real CUDA tensors: through the AutocastCUDA layer and its policies, through
AutogradCUDA, to the CUDA key.  There a backend fallback runs the CPU kernel on the
same arrays and labels the results ``cuda:0`` ("the computation continues on the CPU
backend").  ``_to_copy`` has a CompositeExplicitAutograd kernel, which beats a backend
fallback, so it gets direct CPU and CUDA kernels that move data by relabelling.  The
CUDA hooks of ``tensor._device`` and ``tt.cuda.is_available()`` are patched so that
``t.to("cuda")`` and ``tt.autocast("cuda")`` work as on a GPU machine.

Only labels differ from real CUDA, so what these tests check is the dispatch and
autocast logic, not CUDA kernels (tests/backends/test_cuda.py covers those on a GPU).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import dispatch
import tensor as tt
from backends.composite import to_copy_kernel
from tensor import _device
from tensor._frontend import FRONT

to_copy = to_copy_kernel(FRONT)

__all__ = ["standin_cuda"]

CPU = tt.device("cpu")
CUDA0 = tt.device("cuda:0")


def _relabel(value: Any, device: tt.device) -> Any:
    if isinstance(value, tt.Tensor):
        return tt.Tensor._make(value.array, value.dtype, device)  # type: ignore[attr-defined]
    if isinstance(value, (list, tuple)):
        return type(value)(_relabel(v, device) for v in value)
    return value


def _is_cuda(device: Any) -> bool:
    return device is not None and tt.device(device).type == "cuda"


def _cuda_kernel(op: Any, *args: Any, **kwargs: Any) -> Any:
    """The stand-in CUDA backend (a fallback at the CUDA key): compute on the CPU."""
    kwargs = {k: _relabel(v, CPU) for k, v in kwargs.items()}
    if _is_cuda(kwargs.get("device")):  # factories: make the CPU tensor, then relabel
        kwargs["device"] = CPU
    return _relabel(op(*_relabel(args, CPU), **kwargs), CUDA0)


def _to_copy(
    self: tt.Tensor,
    *,
    dtype: Any = None,
    device: Any = None,
    non_blocking: bool = False,
    memory_format: Any = None,
) -> tt.Tensor:
    """``_to_copy`` at CPU and CUDA: the real kernel, with moves to and from cuda as relabels."""
    target = self.device if device is None else tt.device(device)
    if self.device.type != "cuda" and target.type != "cuda":
        return to_copy(
            self, dtype=dtype, device=device, non_blocking=non_blocking, memory_format=memory_format
        )
    out = to_copy(_relabel(self, CPU), dtype=dtype, memory_format=memory_format)
    return _relabel(out, CUDA0 if target.type == "cuda" else target)  # type: ignore[no-any-return]


@contextmanager
def standin_cuda(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Install the stand-in CUDA device for the duration of the block."""
    monkeypatch.setattr(_device.CudaHooks, "init", lambda: None)
    monkeypatch.setattr(_device.CudaHooks, "current", lambda: 0)
    monkeypatch.setattr(_device.CudaHooks, "count", lambda: 1)
    monkeypatch.setattr(tt.cuda, "is_available", lambda: True)
    with dispatch.Library("_", "IMPL") as fallbacks, dispatch.Library("core", "IMPL") as core:
        fallbacks.fallback(_cuda_kernel, "CUDA")
        core.impl("_to_copy", _to_copy, "CPU")
        core.impl("_to_copy", _to_copy, "CUDA")
        yield

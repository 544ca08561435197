"""The CUDA device guard's argument scan, run without a GPU.

``backends.cuda._runtime`` imports CuPy; here it is imported against a stand-in
module (NumPy arrays, a no-op device context) so the pure-Python rules of
Note [Device guards] run on any machine: which tensors may meet in one CUDA op,
which CPU tensors move to the device, and what the error names.  The real CuPy
path is covered by tests/backends/test_cuda.py on a GPU.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import types
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tensor as tt
from tensor._frontend import FRONT


class _Device(contextlib.nullcontext):  # type: ignore[type-arg]
    def __init__(self, index: int = 0) -> None:
        super().__init__()


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    cupy = types.ModuleType("cupy")
    cupy.asarray = np.asarray  # type: ignore[attr-defined]
    cupy.ndarray = type("ndarray", (), {})  # type: ignore[attr-defined]
    cuda = types.ModuleType("cupy.cuda")
    cuda.Device = _Device  # type: ignore[attr-defined]
    cuda.runtime = types.SimpleNamespace(getDevice=lambda: 0)  # type: ignore[attr-defined]
    cupy.cuda = cuda  # type: ignore[attr-defined]
    for name, module in (
        ("cupy", cupy),
        ("cupy.cuda", cuda),
        ("cupyx", types.ModuleType("cupyx")),
    ):
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.delitem(sys.modules, "backends.cuda._runtime", raising=False)
    yield importlib.import_module("backends.cuda._runtime")
    sys.modules.pop("backends.cuda._runtime", None)


def on(device: str, data: Any) -> tt.Tensor:
    # A tensor labelled with a device (its array stays a NumPy one: only labels matter here).
    arr = np.asarray(data, dtype=np.float32)
    return tt.Tensor._make(arr, tt.float32, tt.device(device))


def test_one_device_passes_unchanged(runtime: Any) -> None:
    a, b = on("cuda:0", [1.0, 2.0]), on("cuda:0", [3.0, 4.0])
    dev, moved = runtime._scan(FRONT, "add.Tensor", (a, b))
    assert dev == tt.device("cuda:0") and moved is None


def test_zero_dim_cpu_tensor_moves_to_the_device(runtime: Any) -> None:
    a, s = on("cuda:0", [1.0, 2.0]), on("cpu", 2.0)
    dev, moved = runtime._scan(FRONT, "mul.Tensor", (a, s))
    assert dev == tt.device("cuda:0")
    assert moved is not None and moved[0] is a
    assert moved[1].device == tt.device("cuda:0") and float(moved[1].array) == 2.0


def test_cpu_tensor_with_dims_names_both_devices(runtime: Any) -> None:
    a, b = on("cpu", [1.0, 2.0]), on("cuda:0", [3.0, 4.0])
    with pytest.raises(RuntimeError) as info:
        runtime._scan(FRONT, "add.Tensor", (a, b))
    message = str(info.value)
    assert message.startswith("add(): Expected all tensors to be on the same device")
    assert "cuda:0 (argument 'other')" in message and "cpu (argument 'self')" in message


def test_two_cuda_devices_name_both(runtime: Any) -> None:
    with pytest.raises(RuntimeError, match=r"cuda:0 \(argument 'self'\) and cuda:1 \(argument"):
        runtime._scan(FRONT, "add.Tensor", (on("cuda:0", [1.0]), on("cuda:1", [1.0])))


def test_tensors_inside_lists_are_checked(runtime: Any) -> None:
    with pytest.raises(RuntimeError, match="same device"):
        runtime._scan(FRONT, "cat", ([on("cuda:0", [1.0]), on("cpu", [1.0])],))


def test_indexing_moves_cpu_index_tensors(runtime: Any) -> None:
    x = on("cuda:0", [[1.0, 2.0], [3.0, 4.0]])
    idx = tt.tensor([1, 0])
    dev, moved = runtime._scan(FRONT, "index.Tensor", (x, [None, idx]))
    assert dev == tt.device("cuda:0") and moved is not None
    assert moved[1][0] is None and moved[1][1].device == tt.device("cuda:0")
    assert moved[1][1].dtype is tt.int64


def test_guard_runs_the_kernel_with_moved_arguments(runtime: Any) -> None:
    seen = []

    def kernel(x: Any, y: Any) -> str:
        seen.append((x.device, y.device))
        return "ran"

    guarded = runtime.guard(FRONT, kernel, "mul.Tensor", multi_device=False)
    assert guarded(on("cuda:0", [1.0]), on("cpu", 3.0)) == "ran"
    assert seen == [(tt.device("cuda:0"), tt.device("cuda:0"))]
    assert guarded.__wrapped__ is kernel

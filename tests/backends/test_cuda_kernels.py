"""The CUDA backend registers a kernel for every operator overload the CPU backend has.

Building the kernel tables needs CuPy (not a GPU): skipped, saying so, where CuPy is
not installed; the GPU job runs it.
"""

from __future__ import annotations

import importlib
import importlib.util

import pytest

import tensor
from tensor._frontend import FRONT

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(importlib.util.find_spec("cupy") is None, reason="CuPy is not installed"),
]

FAMILIES = ["elementwise", "reduction", "shape", "nn", "linalg"]


@pytest.mark.parametrize("family", FAMILIES)
def test_cuda_covers_every_cpu_kernel(family: str) -> None:
    cpu = importlib.import_module(f"backends.cpu.{family}").kernels(FRONT)
    cuda = importlib.import_module(f"backends.cuda.{family}").kernels(FRONT)
    assert set(cuda) == set(cpu), (
        f"missing on CUDA: {sorted(set(cpu) - set(cuda))}; only on CUDA: "
        f"{sorted(set(cuda) - set(cpu))}"
    )


def test_raw_launchers_request_only_compiled_instances() -> None:
    from backends.cuda import _tables, elementwise

    compiled = set(_tables.instances(tensor.op_info)["elementwise.cu"])
    for name, functor in _tables.UNARY.items():
        op = tensor.op_info(name)
        launch = elementwise.unary(op, functor, None)
        assert callable(launch)
        for cdt, odt in _tables.raw_dtypes(op):
            assert set(_tables.unary_expressions(functor, cdt, odt).values()) <= compiled


@pytest.mark.parametrize("family", FAMILIES)
def test_cuda_kernels_take_omitted_defaults(family: str) -> None:
    """The generated methods pass only the tensor when every other argument is at its
    default (``x.sum()``), so each kernel must carry its schema's defaults."""
    from tests.backends.test_kernel_signatures import check_defaults

    check_defaults(importlib.import_module(f"backends.cuda.{family}").kernels(FRONT))

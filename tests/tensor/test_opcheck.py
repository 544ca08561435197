"""opcheck on custom operators built with the tensor package (PyTorch's registration self-test)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

import dispatch
import tensor as tt
from dispatch import OpCheckError, opcheck


@pytest.fixture
def scale() -> Iterator[Any]:
    @dispatch.custom_op("test_opcheck::scale", mutates_args=())
    def scale(x: tt.Tensor, k: float) -> tt.Tensor:
        return x * k

    yield scale
    scale._destroy()


def test_a_well_registered_op_passes(scale: Any) -> None:
    scale.register_autograd(lambda ctx, g: (g * ctx.k, None), setup_context=_save_k)
    x = tt.randn(3, requires_grad=True)
    expected = {
        "test_schema": "SUCCESS",
        "test_autograd_registration": "SUCCESS",
        "test_faketensor": "SUCCESS",
    }
    if tt.cuda.is_available():  # test_cuda runs only where there is a CUDA device
        expected["test_cuda"] = "SUCCESS"
    assert opcheck(scale, (x, 2.0)) == expected


def _save_k(ctx: Any, inputs: Any, output: Any) -> None:
    ctx.k = inputs[1]


def test_missing_autograd_registration_is_reported(scale: Any) -> None:
    x = tt.randn(3, requires_grad=True)
    result = opcheck(scale, (x, 2.0), raise_exception=False)
    assert "no autograd registration at AutogradCPU" in result["test_autograd_registration"]
    with pytest.raises(OpCheckError, match="register_autograd"):
        opcheck(scale, (x, 2.0), test_utils="test_autograd_registration")


def test_undeclared_mutation_and_wrong_fake_are_reported() -> None:
    @dispatch.custom_op("test_opcheck::sneaky", mutates_args=())
    def sneaky(x: tt.Tensor) -> tt.Tensor:
        x.array[...] += 1  # an in-place write the schema does not declare
        return x.clone()

    @sneaky.register_fake
    def _(x: tt.Tensor) -> tt.Tensor:
        return tt.empty(2, 2, device="meta")

    try:
        result = opcheck(sneaky, (tt.zeros(3),), raise_exception=False)
        assert "argument 'x' was modified in place" in result["test_schema"]
        assert "the real kernel gives shape (3,)" in result["test_faketensor"]
    finally:
        sneaky._destroy()


def test_declared_mutation_that_does_not_happen_and_an_aliasing_output() -> None:
    @dispatch.custom_op("test_opcheck::lazy", mutates_args=("out",))
    def lazy(x: tt.Tensor, out: tt.Tensor) -> None:
        return None  # declared to write `out`, never does

    @dispatch.custom_op("test_opcheck::same", mutates_args=())
    def same(x: tt.Tensor) -> tt.Tensor:
        return x  # an alias of its input, not declared

    try:
        result = opcheck(lazy, (tt.ones(2), tt.zeros(2)), raise_exception=False)
        assert (
            "declared mutable (Tensor(a!)) but the call left it unchanged" in result["test_schema"]
        )
        result = opcheck(same, (tt.ones(2),), test_utils="test_schema", raise_exception=False)
        assert "output 0 aliases an input" in result["test_schema"]
    finally:
        lazy._destroy()
        same._destroy()


# -- test_cuda: CUDA results against CPU results -------------------------------------------------
@pytest.mark.cuda
@pytest.mark.skipif(not tt.cuda.is_available(), reason="no CUDA device")
def test_cuda_results_match_cpu_on_a_gpu(scale: Any) -> None:
    x = tt.randn(3, 4)
    assert opcheck(scale, (x, 2.0), test_utils="test_cuda") == {"test_cuda": "SUCCESS"}
    on_gpu = x.to("cuda")  # inputs already on CUDA are compared with CPU copies too
    assert opcheck(scale, (on_gpu, 2.0))["test_cuda"] == "SUCCESS"
    # Built-in operators, with several outputs and integer results.
    mm = dispatch.ops.core.mm.default
    assert opcheck(mm, (x, x.T.to("cuda")), test_utils="test_cuda") == {"test_cuda": "SUCCESS"}
    assert opcheck(dispatch.ops.core.max.dim, (on_gpu, 1), test_utils="test_cuda") == {
        "test_cuda": "SUCCESS"
    }


def test_without_cuda_the_cuda_test_does_not_run(scale: Any) -> None:
    if tt.cuda.is_available():
        pytest.skip("a CUDA device is present: test_cuda runs there")
    assert opcheck(scale, (tt.randn(3), 2.0), test_utils="test_cuda") == {}
    assert "test_cuda" not in opcheck(scale, (tt.randn(3), 2.0))


def test_cuda_kernels_that_disagree_with_the_cpu_are_reported(cuda_device: str) -> None:
    """On a GPU, or on the stand-in CUDA device (tests/tensor/standin_cuda.py)."""

    @dispatch.custom_op("test_opcheck::twice", mutates_args=())
    def twice(x: tt.Tensor) -> tt.Tensor:
        return x * 2

    @dispatch.custom_op("test_opcheck::halve_", mutates_args=("x",))
    def halve_(x: tt.Tensor) -> None:
        x.array[...] /= 2

    try:
        x = tt.randn(2, 3)
        assert opcheck(twice, (x,), test_utils="test_cuda") == {"test_cuda": "SUCCESS"}
        assert opcheck(twice, (x.to("cuda"),), test_utils="test_cuda") == {"test_cuda": "SUCCESS"}
        assert opcheck(halve_, (x,), test_utils="test_cuda") == {"test_cuda": "SUCCESS"}
        cases = [
            (lambda x: x * 3, "output 0 on CUDA differs from the CPU result"),
            (
                lambda x: (x * 2).double(),
                "dtype tensor.float64 on CUDA, but shape (2, 3) and dtype ",
            ),
            (
                lambda x: (x * 2)[0],
                "has shape (3,) and dtype tensor.float32 on CUDA, but shape (2, 3)",
            ),
            (lambda x: x.cpu() * 2, "output 0 is on cpu, not on CUDA"),
            (lambda x: (x, x), "on CUDA the call gives 2 output(s), on the CPU 1"),
        ]
        for kernel, message in cases:
            twice.register_kernel("cuda", kernel)
            with pytest.raises(OpCheckError, match=re.escape(message)):
                opcheck(twice, (x,), test_utils="test_cuda")

        @halve_.register_kernel("cuda")
        def _(x: tt.Tensor) -> None:
            x.array[...] /= 3

        result = opcheck(halve_, (x,), test_utils="test_cuda", raise_exception=False)
        assert "argument 'x' on CUDA differs from the CPU result" in result["test_cuda"]
    finally:
        twice._destroy()
        halve_._destroy()

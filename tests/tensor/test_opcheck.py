"""opcheck on custom operators built with the tensor package (PyTorch's registration self-test)."""

from __future__ import annotations

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
    assert opcheck(scale, (x, 2.0)) == {
        "test_schema": "SUCCESS",
        "test_autograd_registration": "SUCCESS",
        "test_faketensor": "SUCCESS",
    }


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

"""The autograd fallback for operators without a formula (Note [Autograd fallback]):
a CPU kernel made of tensor operators keeps the history they record, as PyTorch 2.13's
"warn" fallback does; each case runs the same registrations on PyTorch and compares."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

import dispatch
import tensor as tt

NS = "test_ag_fallback"
SCHEMAS = {
    "ops": "ops(Tensor x) -> Tensor",
    "pair": "pair(Tensor x, Tensor y) -> (Tensor, Tensor)",
    "arrays": "arrays(Tensor x) -> Tensor",
    "array_pair": "array_pair(Tensor x) -> (Tensor, Tensor)",
    "scale_": "scale_(Tensor(a!) x) -> Tensor(a!)",
}


def kernels(lib: Any, from_array: Callable[[Any], Any]) -> dict[str, Callable[..., Any]]:
    """The same CPU kernels for ``tensor`` and PyTorch; ``arrays`` ones compute on NumPy
    arrays, so nothing inside records history."""

    def arrays(x: Any) -> Any:
        return from_array(x.detach().numpy() * 2)

    return {
        "ops": lambda x: x.sin() * 2,
        "pair": lambda x, y: (x * y, x + 1),
        "arrays": arrays,
        "array_pair": lambda x: (arrays(x), from_array(x.detach().numpy() * 3)),
        "scale_": lambda x: x.mul_(2),
    }


@contextmanager
def registered(lib_name: str) -> Iterator[Any]:
    """The operators of SCHEMAS with CPU kernels, in ``tensor`` or in PyTorch."""
    if lib_name == "tt":
        with dispatch.Library(NS, "DEF") as lib:
            for schema in SCHEMAS.values():
                lib.define(schema)
            for name, fn in kernels(tt, lambda a: tt.tensor(a)).items():
                dispatch.impl(f"{NS}::{name}", "cpu", fn, lib=lib)
            yield tt, getattr(dispatch.ops, NS)
        return
    torch = pytest.importorskip("torch", reason="PyTorch not installed: differential check skipped")
    lib = torch.library.Library(NS, "DEF")
    try:
        for schema in SCHEMAS.values():
            lib.define(schema)
        for name, fn in kernels(torch, torch.from_numpy).items():
            torch.library.impl(f"{NS}::{name}", "cpu", fn, lib=lib)
        yield torch, getattr(torch.ops, NS)
    finally:
        lib._destroy()


def observe(lib: Any, ops: Any, case: str) -> dict[str, Any]:
    """Run one case; what it shows: gradient, grad_fn names, warnings at each step."""
    x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    seen: dict[str, Any] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if case == "scale_":
            h = x * 1.0
            outs = (ops.scale_(h),)
            seen["returns_input"] = outs[0] is h
        elif case == "scale_view":
            h = x * 1.0
            outs = (ops.scale_(h[1:]),)
            outs = (h,)  # backward through the base, whose history the write rebased
        elif case == "pair":
            outs = ops.pair(x, lib.tensor([3.0, 4.0, 5.0], dtype=lib.float64))
        else:
            outs = getattr(ops, case)(x)
            outs = outs if isinstance(outs, tuple) else (outs,)
        forward = len(caught)
        seen["forward_warnings"] = len(_about_autograd(caught))
        seen["grad_fn"] = [o.grad_fn.name() if o.grad_fn is not None else None for o in outs]
        sum(o.sum() for o in outs).backward()
        messages = _about_autograd(caught[forward:])
    seen["backward_warnings"] = len(messages)
    seen["warning_names_op"] = all(
        m.startswith(f"{NS}::") and "an autograd kernel was not registered" in m for m in messages
    )
    seen["grad"] = None if x.grad is None else x.grad.tolist()
    return seen


def _about_autograd(caught: list[Any]) -> list[str]:
    # The fallback's warnings only: another library can warn meanwhile (on the GPU machine,
    # NumPy 2.5 and CuPy 14, one unrelated warning was recorded during backward).
    return [str(w.message) for w in caught if "autograd" in str(w.message)]


CASES = ["ops", "pair", "arrays", "array_pair", "scale_", "scale_view"]
# Node names that differ only in spelling (PyTorch's C++ classes).
SAME_NODE = {"WarnNotImplemented": "NotImplemented", "CopyBackwards": "CopyBackward0"}


def our_spelling(name: str | None) -> str | None:
    if name is None:
        return None
    name = name.removeprefix("torch::autograd::")
    return SAME_NODE.get(name, name)


@pytest.mark.parametrize("case", CASES)
def test_fallback_matches_torch(case: str) -> None:
    with registered("torch") as (torch, torch_ops):
        expected = observe(torch, torch_ops, case)
    expected["grad_fn"] = [our_spelling(n) for n in expected["grad_fn"]]
    with registered("tt") as (lib, ops):
        assert observe(lib, ops, case) == expected


def test_kernel_made_of_operators_reaches_its_inputs() -> None:
    # The same facts without PyTorch at hand.
    with registered("tt") as (lib, ops):
        seen = observe(lib, ops, "ops")
        np.testing.assert_allclose(seen["grad"], 2 * np.cos([1.0, 2.0, 3.0]))
        assert seen["grad_fn"] == ["MulBackward0"]
        assert (seen["forward_warnings"], seen["backward_warnings"]) == (0, 1)
        assert seen["warning_names_op"]
        seen = observe(lib, ops, "array_pair")  # no history inside: warns, no gradient
        assert seen["grad"] is None and seen["grad_fn"] == ["NotImplemented"] * 2
        assert seen["backward_warnings"] == 1
        x = tt.tensor([1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with tt.no_grad():
                assert not ops.ops(x).requires_grad
            assert not ops.ops(tt.tensor([1.0])).requires_grad
        with pytest.warns(UserWarning, match=f"{NS}::pair: an autograd kernel was not"):
            (g,) = tt.autograd.grad(ops.pair(x, x)[0].sum(), x)  # x * x
        np.testing.assert_allclose(g.numpy(), [2.0])


def test_custom_ops_still_run_below_autograd() -> None:
    """custom_op's kernel runs with no history inside (PyTorch's custom_op autograd kernel
    does), so without register_autograd its output gets the warning node."""

    @dispatch.custom_op(f"{NS}::custom", mutates_args=())
    def custom(x: tt.Tensor) -> tt.Tensor:
        return x * 3

    try:
        x = tt.tensor([1.0, 2.0], requires_grad=True)
        y = custom(x)
        assert y.grad_fn.name() == "NotImplemented"
        with pytest.warns(UserWarning, match=f"{NS}::custom: an autograd kernel was not"):
            y.sum().backward()
        assert x.grad is None
    finally:
        custom._destroy()

"""Note [Direct in-place entry] (dispatch/_operator.py): an in-place method
(``p.add_(g, alpha=-lr)``, ``v.addcmul_(g, g, value=...)``, ``m.lerp_(g, 0.1)``,
``v.mul_(0.9)``) runs the backend kernel below ADInplaceOrView and bumps ``self``'s
version itself when the operator's table says that is all the call would do.  Both
sides of its guard: the same values, versions, errors and notes as the entry it skips
(``call2``/``call3``/``call2k``/``call3k``) and the general entry;
every other key set (grad, a mode, autocast's thread state, another backend's kernel, a
subclass with ``__dispatch__``), a keyword of another type, and a re-registered kernel
take the full path or the new kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from dispatch import Library, SchemaBindError, ops
from tensor.modes import LoggingMode

core = ops.core

# name -> (operator, method call, keyword entry call, general call), each on (p, a, b, k)
Case = tuple[Any, Callable[..., Any], Callable[..., Any], Callable[..., Any]]
CASES: dict[str, Case] = {
    "add_ alpha": (
        core.add_.Tensor,
        lambda p, a, b, k: p.add_(a, alpha=k),
        lambda p, a, b, k: core.add_.Tensor.call2k(p, a, {"alpha": k}),
        lambda p, a, b, k: core.add_.Tensor(p, a, alpha=k),
    ),
    "sub_ alpha": (
        core.sub_.Tensor,
        lambda p, a, b, k: p.sub_(a, alpha=k),
        lambda p, a, b, k: core.sub_.Tensor.call2k(p, a, {"alpha": k}),
        lambda p, a, b, k: core.sub_.Tensor(p, a, alpha=k),
    ),
    "addcmul_": (
        core.addcmul_.default,
        lambda p, a, b, k: p.addcmul_(a, b, value=k),
        lambda p, a, b, k: core.addcmul_.default.call3k(p, a, b, {"value": k}),
        lambda p, a, b, k: core.addcmul_.default(p, a, b, value=k),
    ),
    "addcdiv_": (
        core.addcdiv_.default,
        lambda p, a, b, k: p.addcdiv_(a, b, value=k),
        lambda p, a, b, k: core.addcdiv_.default.call3k(p, a, b, {"value": k}),
        lambda p, a, b, k: core.addcdiv_.default(p, a, b, value=k),
    ),
    "add_ tensor": (
        core.add_.Tensor,
        lambda p, a, b, k: p.add_(a),
        lambda p, a, b, k: core.add_.Tensor.call2(p, a),
        lambda p, a, b, k: core.add_.Tensor(p, a),
    ),
    "mul_ number": (
        core.mul_.Scalar,
        lambda p, a, b, k: p.mul_(k),
        lambda p, a, b, k: core.mul_.Scalar.call2(p, k),
        lambda p, a, b, k: core.mul_.Scalar(p, k),
    ),
    "add_ number": (
        core.add_.Scalar,
        lambda p, a, b, k: p.add_(k),
        lambda p, a, b, k: core.add_.Scalar.call2(p, k),
        lambda p, a, b, k: core.add_.Scalar(p, k),
    ),
    "lerp_ number": (
        core.lerp_.Scalar,
        lambda p, a, b, k: p.lerp_(a, k),
        lambda p, a, b, k: core.lerp_.Scalar.call3(p, a, k),
        lambda p, a, b, k: core.lerp_.Scalar(p, a, k),
    ),
    "div_ tensor": (
        core.div_.Tensor,
        lambda p, a, b, k: p.div_(b),
        lambda p, a, b, k: core.div_.Tensor.call2(p, b),
        lambda p, a, b, k: core.div_.Tensor(p, b),
    ),
}
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, 3e38]


@st.composite
def operands(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any, str]:
    dtype = draw(st.sampled_from(["float32", "float64", "float16", "int64", "complex64"]))
    shape = draw(st.sampled_from([(), (3,), (2, 3), (4, 1)]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    arrays = [np.asarray(rng.standard_normal(shape) + 2.0) for _ in range(3)]
    if dtype == "int64":
        arrays = [np.rint(a * 3).astype(np.int64) for a in arrays]
        arrays[2] = np.where(arrays[2] == 0, 1, arrays[2])
    elif draw(st.booleans()):
        for a in arrays:
            a.reshape(-1)[0] = draw(st.sampled_from(SPECIALS))
    number = draw(
        st.sampled_from([-0.01, 0.5, 3, True, 2.5e-39, 1e300, 1 + 1j]) if dtype != "int64" else
        st.sampled_from([2, -1, True, 0.5])
    )  # fmt: skip
    layout = draw(st.sampled_from(["plain", "view", "broadcast"]))
    # Who requires grad (self, an operand, nobody) and whether grad mode is on: the
    # direct path's guard on each side (a tensor that requires grad takes it only
    # outside grad mode, where the call path masks the grad-only autograd kernels out).
    needs = "nobody" if dtype == "int64" else draw(st.sampled_from(["nobody", "self", "other"]))
    grad_mode = draw(st.booleans())
    arrays = [np.asarray(a).astype(dtype) for a in arrays]
    return *arrays, number, layout, needs, grad_mode  # type: ignore[return-value]


def _run(
    call: Callable[..., Any], args: tuple[np.ndarray, ...], k: Any, layout: str,
    needs: str = "nobody", grad_mode: bool = False,
) -> Any:  # fmt: skip
    """``call`` on fresh tensors: (result values or the error, self's values, its version,
    its base's version for a view, and what the result records)."""
    p_arr, a_arr, b_arr = args
    base = tt.tensor(np.stack([p_arr, p_arr])) if layout == "view" else None
    if base is not None and needs == "self":
        base.requires_grad_()
    p = base[1] if base is not None else tt.tensor(p_arr)
    if base is None and needs == "self":
        p.requires_grad_()
    a = tt.tensor(a_arr[..., :1] if layout == "broadcast" and a_arr.ndim else a_arr)
    b = tt.tensor(b_arr)
    if needs == "other":
        a.requires_grad_()
    before = p._version
    try:
        with tt.set_grad_enabled(grad_mode):
            out = call(p, a, b, k)
        outcome: Any = ("ok", out is p)
    except Exception as e:  # compared: type, message, notes
        outcome = (type(e), str(e), getattr(e, "__notes__", []))
    history = (p.requires_grad, None if p.grad_fn is None else p.grad_fn.name())
    with tt.no_grad():
        values = p.to(tt.complex128).numpy() if p.dtype.is_complex else p.double().numpy()
    return outcome, values, p._version - before, None if base is None else base._version, history


@settings(max_examples=250, deadline=None)
@given(args=operands(), name=st.sampled_from(list(CASES)))
def test_the_direct_entry_does_what_the_full_paths_do(args: tuple[Any, ...], name: str) -> None:
    op, method, keyword_entry, general = CASES[name]
    *arrays, k, layout, needs, grad_mode = args
    with np.errstate(all="ignore"):
        ours = _run(method, tuple(arrays), k, layout, needs, grad_mode)
        for other in (keyword_entry, general):
            theirs = _run(other, tuple(arrays), k, layout, needs, grad_mode)
            assert ours[0] == theirs[0]
            np.testing.assert_array_equal(ours[1], theirs[1])
            assert ours[2:] == theirs[2:]


def test_plain_tensors_take_it_and_others_do_not() -> None:
    """The memo names the backend kernel for plain CPU tensors; a tensor that requires
    grad, or a different keyword type, leaves it (the full path says what is wrong)."""
    op = core.addcmul_.default
    p, g = tt.ones(3), tt.full((3,), 2.0)
    with tt.no_grad():
        p.addcmul_(g, g, value=0.5)
    bits = p._dispatch_bits | g._dispatch_bits
    assert op._state.direct[bits] is op.direct_inplace(bits) is not None
    assert p.tolist() == [3.0, 3.0, 3.0] and p._version == 1
    w = tt.ones(3, requires_grad=True)
    assert op.direct_inplace(w._dispatch_bits | g._dispatch_bits) is None
    y = w * 1
    y.addcmul_(g, g, value=0.5)  # recorded: the autograd kernel ran
    assert y.grad_fn.name() == "AddcmulBackward0"
    y.sum().backward()
    assert w.grad.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(SchemaBindError, match="value"):
        p.addcmul_(g, g, value="half")
    assert p._version == 1


def test_a_kernel_that_raises_bumps_nothing_and_is_annotated_as_before() -> None:
    p, g = tt.ones(3), tt.ones(4)
    errors = []
    for call in (
        lambda: p.add_(g, alpha=2.0),
        lambda: core.add_.Tensor.call2k(p, g, {"alpha": 2.0}),
    ):
        with tt.no_grad(), pytest.raises(RuntimeError, match="must match the size") as info:
            call()
        errors.append((str(info.value), info.value.__notes__))
    assert errors[0] == errors[1]
    assert "while dispatching core::add_.Tensor (key ADInplaceOrView)" in errors[0][1]
    assert p._version == 0 and p.tolist() == [1.0, 1.0, 1.0]


def test_a_mode_sees_the_call() -> None:
    """A dispatch mode changes the thread's key sets: the call takes the full path."""
    p, g = tt.ones(2), tt.ones(2)
    with tt.no_grad(), LoggingMode() as log:
        p.addcmul_(g, g, value=0.5)
        p.add_(g, alpha=2)
    assert [line.split("(")[0] for line in log.lines] == ["core::addcmul_", "core::add_.Tensor"]
    assert p.tolist() == [3.5, 3.5] and p._version == 2


def test_under_autocast_and_after_it() -> None:
    p, g = tt.ones(2), tt.ones(2)
    with tt.autocast("cpu"):
        p.add_(g, alpha=0.5)
    p.add_(g, alpha=0.5)
    assert p.tolist() == [2.0, 2.0] and p._version == 2 and p.dtype is tt.float32


def test_a_re_registered_kernel_is_the_one_that_runs() -> None:
    """A new CPU kernel rebuilds the table, whose state starts an empty memo."""
    op = core.addcdiv_.default
    p, a, b = tt.ones(2), tt.ones(2), tt.full((2,), 2.0)
    p.addcdiv_(a, b, value=1.0)
    assert p.tolist() == [1.5, 1.5]
    seen = []
    lib = Library("core", "IMPL")
    try:
        below = op.direct_inplace(p._dispatch_bits)

        def spy(self: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
            seen.append(value)
            return below(self, tensor1, tensor2, value=value)

        lib.impl("core::addcdiv_", spy, "CPU", allow_override=True)
        p.addcdiv_(a, b, value=2.0)
        assert seen == [2.0] and p.tolist() == [2.5, 2.5] and p._version == 2
    finally:
        lib.destroy()
    p.addcdiv_(a, b, value=2.0)
    assert seen == [2.0] and p.tolist() == [3.5, 3.5]


def test_a_dispatch_subclass_takes_its_handler() -> None:
    calls = []

    class Traced(tt.Tensor):
        @classmethod
        def __dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            calls.append(func.name)
            unwrapped = [a.as_subclass(tt.Tensor) if isinstance(a, Traced) else a for a in args]
            return func(*unwrapped, **(kwargs or {}))

    p = tt.ones(2).as_subclass(Traced)
    with tt.no_grad():
        p.add_(tt.ones(2), alpha=3)
    assert calls == ["core::add_.Tensor"]

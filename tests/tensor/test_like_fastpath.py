"""Note [Like fast path] (backends/composite): ``zeros_like(x)`` and its family without
``dtype``/``device`` call the factory's backend kernel directly.  Against the general path
(the factory through its BackendSelect kernel, ``fastpaths.disabled()``) on both sides of
the guard: dtypes, shapes, layouts and devices; random factories draw the same numbers
from the same seed; a Python mode sees the same calls either way; arguments that leave
the fast path (dtype=, device=) still work.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from backends.common import fastpaths
from tensor.modes import LoggingMode

_NAMES = ["zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"]
_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "bool", "complex64"]


def _call(name: str, x: Any, **kw: Any) -> Any:
    tt.manual_seed(7)
    return getattr(tt, name)(x, **kw)


def _same(a: Any, b: Any, values: bool) -> None:
    assert type(a) is type(b)
    assert a.dtype is b.dtype and a.device == b.device and a.shape == b.shape
    assert a.stride() == b.stride()
    assert not a.requires_grad and a.grad_fn is None
    if values and a.device.type != "meta":
        assert a.numpy().tobytes() == b.numpy().tobytes()


@settings(max_examples=80, deadline=None)
@given(
    name=st.sampled_from(_NAMES),
    dtype=st.sampled_from(_DTYPES),
    shape=st.sampled_from([(), (0,), (3,), (2, 3), (2, 1, 4)]),
    layout=st.sampled_from(["C", "T"]),
    device=st.sampled_from(["cpu", "meta"]),
    grad=st.booleans(),
)
def test_like_matches_the_factory(
    name: str, dtype: str, shape: tuple[int, ...], layout: str, device: str, grad: bool
) -> None:
    dt = getattr(tt, dtype)
    if name in ("rand_like", "randn_like") and not (dt.is_floating_point or dt.is_complex):
        return  # PyTorch refuses those; both paths raise alike (tested below)
    x = tt.zeros(shape, dtype=dt, device=device)
    if layout == "T" and x.ndim == 2:
        x = x.t()
    if grad and dt.is_floating_point:
        x = x.detach().requires_grad_()
    fast = _call(name, x)
    with fastpaths.disabled():
        general = _call(name, x)
    _same(fast, general, values=name != "empty_like")


@pytest.mark.parametrize("name", ["rand_like", "randn_like"])
def test_like_errors_match(name: str) -> None:
    x = tt.zeros(3, dtype=tt.int64)
    with pytest.raises(RuntimeError) as fast:
        _call(name, x)
    with fastpaths.disabled(), pytest.raises(RuntimeError) as general:
        _call(name, x)
    assert str(fast.value) == str(general.value)


def test_a_python_mode_sees_the_same_calls() -> None:
    # As in PyTorch, a dispatch mode sees zeros_like (a CompositeExplicitAutograd
    # operator), not the factory call inside it, fast path or not; and, as PyTorch's
    # __torch_dispatch__ does, without the keywords left at their defaults.
    x = tt.ones(2, 3)
    logs = []
    for disabled in (False, True):
        with LoggingMode() as log:
            if disabled:
                with fastpaths.disabled():
                    tt.zeros_like(x)
            else:
                tt.zeros_like(x)
        logs.append(log.lines)
    assert logs[0] == logs[1] == ["core::zeros_like(float32[2x3]@cpu) -> float32[2x3]@cpu"]


def test_keywords_take_the_general_path() -> None:
    x = tt.ones(2, 3)
    y = tt.zeros_like(x, dtype=tt.float64)
    assert y.dtype is tt.float64 and y.shape == x.shape
    z = tt.ones_like(x, device="meta")
    assert z.device.type == "meta"
    np.testing.assert_array_equal(tt.ones_like(x).numpy(), np.ones((2, 3), np.float32))

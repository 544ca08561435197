"""Fuzzing with hypothesis: only the documented exceptions, and no hang (issue 9)."""

from __future__ import annotations

import string
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dispatch
import tensor as tt
from dispatch import DispatchKey, DispatchKeySet
from tensor._device import device_types

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
KEY_NAMES = [k.name for k in DispatchKey]


@FUZZ
@given(st.one_of(st.text(max_size=30), st.sampled_from(KEY_NAMES), st.integers(), st.none()))
def test_key_names(name: Any) -> None:
    try:
        key = DispatchKey.parse(name)
    except RuntimeError as e:
        assert "could not parse dispatch key" in str(e)
    except TypeError as e:
        assert "expected a DispatchKey or its name" in str(e)
    else:
        assert DispatchKeySet(key) == DispatchKeySet([key])


DEVICE_TEXT = st.one_of(
    st.text(max_size=12),
    st.builds(
        lambda t, sep, n: f"{t}{sep}{n}",
        st.sampled_from(["cpu", "cuda", "meta", "gpu", "CUDA", ""]),
        st.sampled_from([":", "", "::", " :"]),
        st.one_of(st.integers(-3, 12).map(str), st.text(string.printable, max_size=3)),
    ),
)


@FUZZ
@given(DEVICE_TEXT)
def test_device_strings(text: str) -> None:
    try:
        dev = tt.device(text)
    except RuntimeError as e:
        assert repr(text) in str(e) or "device" in str(e)
    else:
        # The built-in types, or a plug-in device registered on first use ("strict").
        assert dev.type in device_types()
        assert tt.device(str(dev)) == dev


@FUZZ
@given(
    shape=st.lists(st.integers(0, 4), max_size=4),
    dim=st.one_of(st.none(), st.integers(-6, 6), st.lists(st.integers(-6, 6), max_size=3)),
    keepdim=st.booleans(),
    device=st.sampled_from(["cpu", "meta"]),
)
def test_reductions_over_shapes_and_dims(
    shape: list[int], dim: Any, keepdim: bool, device: str
) -> None:
    x = tt.ones(*shape, device=device) if shape else tt.ones((), device=device)
    try:
        out = x.sum(dim, keepdim)
    except IndexError as e:
        assert "sum" in str(e) and "out of range" in str(e)
    except RuntimeError as e:
        assert "sum" in str(e)
    else:
        assert out.device.type == device
        if dim is None and not keepdim:
            assert out.shape == ()


SCALARS = st.one_of(
    st.integers(-5, 5), st.floats(allow_nan=True), st.booleans(), st.text(max_size=3)
)


@FUZZ
@given(
    args=st.lists(
        st.one_of(
            SCALARS,
            st.just("tensor"),
            st.just("meta"),
            st.none(),
            st.lists(st.integers(0, 2), max_size=2),
        ),
        max_size=4,
    ),
    kwargs=st.dictionaries(
        st.sampled_from(["alpha", "other", "dim", "bogus", "self"]), SCALARS, max_size=2
    ),
    name=st.sampled_from(["add", "mul", "sum", "where", "clamp", "matmul", "pow", "sin"]),
)
def test_argument_lists(args: list[Any], kwargs: dict[str, Any], name: str) -> None:
    made = [
        tt.ones(2) if a == "tensor" else tt.ones(2, device="meta") if a == "meta" else a
        for a in args
    ]
    packet = getattr(dispatch.ops.core, name)
    try:
        packet(*made, **kwargs)
    except (TypeError, ValueError, IndexError, RuntimeError, NotImplementedError) as e:
        assert str(e)  # every documented error explains itself

"""Note [Contiguous without dispatch] (tensor/_wrappers_shape.py): ``x.contiguous()`` of a
row-major tensor is ``x`` itself without a dispatcher call, as PyTorch's; on both sides
of that test (row-major or not: transposed, sliced, expanded, 0-d, empty, size-1 dims)
it agrees with the operator's path (Note [Fast-path switch]) and PyTorch."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from backends.common import fastpaths
from tests.backends.fastpath_support import ALL_DTYPES, same_both_ways, tensors, torch

_FORMATS = st.sampled_from([None, "contiguous_format", "preserve_format"])


@settings(max_examples=300, deadline=None)
@given(x=tensors(dtypes=ALL_DTYPES, requires_grad=None), memory_format=_FORMATS)
def test_contiguous(x: Any, memory_format: str | None) -> None:
    def call(a: Any) -> Any:
        out = a.contiguous() if memory_format is None else a.contiguous(memory_format=memory_format)
        same = out is a
        if a.requires_grad:
            total = (out * 2).sum()
            total.backward(total.detach() * 0 + 1)  # complex sums too
            return out, same, out.is_contiguous(), a.grad
        return out, same, out.is_contiguous()

    fast = same_both_ways(call, x, torch_call=call if memory_format is None else None)
    with fastpaths.disabled():
        general = call(x.detach().requires_grad_(x.requires_grad) if x.requires_grad else x)
    assert fast.value[0].stride() == general[0].stride()
    if memory_format != "preserve_format":  # itself exactly when already row-major
        assert fast.value[1] == x.is_contiguous()


def test_itself_or_a_copy_as_pytorch() -> None:
    base = tt.arange(12.0).reshape(3, 4)
    cases = [base, base.T, base[:, ::2], base[1:], base[:, 1:], base[None], base.expand(2, 3, 4)]
    for i, x in enumerate(cases):
        out = x.contiguous()
        assert (out is x) == x.is_contiguous()
        assert out.is_contiguous() and out.tolist() == x.tolist()
        if torch is not None:
            t = torch.arange(12.0).reshape(3, 4)
            spelled = [t, t.T, t[:, ::2], t[1:], t[:, 1:], t[None], t.expand(2, 3, 4)]
            theirs = spelled[i]
            assert (theirs.contiguous() is theirs) == (out is x)
            assert theirs.contiguous().stride() == out.stride()


def test_a_copy_is_recorded_and_dispatched() -> None:
    """A copy goes through the operator: its node, and a mode sees its clone."""
    x = tt.ones(3, 4, requires_grad=True)
    y = x.T.contiguous()
    assert type(y.grad_fn).__name__ == "CloneBackward0"
    seen: list[str] = []

    class Log(tt.modes.DispatchMode):  # type: ignore[misc]
        def __dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with Log():
        a = tt.ones(3, 4)
        assert a.contiguous() is a
        a.T.contiguous()
    assert not any("contiguous" in s for s in seen) and any("clone" in s for s in seen)


@pytest.mark.parametrize("bad", [1, "bogus"])
def test_a_bad_memory_format_is_refused_as_before(bad: Any) -> None:
    x = tt.ones(2, 2)
    for enabled in (True, False):
        with pytest.raises(Exception, match="memory_format") as fast:
            if enabled:
                x.contiguous(memory_format=bad)
            else:
                with fastpaths.disabled():
                    x.contiguous(memory_format=bad)
        assert "contiguous" in str(fast.value)

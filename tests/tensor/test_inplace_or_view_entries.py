"""The ADInplaceOrView kernels' entries (Note [Positional entries] in dispatch/_operator.py,
``_entries`` in tensor/_inplace_or_view.py): ``entry(bits, a, ...)`` for the fixed-arity
call paths and ``entry(bits, a, b, kwargs)`` for ``call2k``/``call3k``.

Each entry does what the general kernel does for the same call: the same result, the
written argument's version bumped once (and not at all when the kernel below raises),
a view's ``_base`` and shared counter; the call paths reach them; an operator that
writes an ``out=`` keyword has none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from dispatch import DispatchKey, DispatchKeySet, _tls, ops
from dispatch._keys import keyset_from_bits

core = ops.core
SLOT = DispatchKeySet(DispatchKey.ADInplaceOrView).bits.bit_length()


def _bits(op: Any, args: tuple[Any, ...]) -> int:
    """The key bits a call path computes for ``args`` outside grad mode."""
    bits = 0
    for a in args:
        bits |= getattr(a, "_dispatch_bits", 0)
    return (bits | _tls.DEFAULT_INCLUDED) & _tls.DEFAULT_KEEP & op._state.mask


def _kernel(op: Any) -> Any:
    kernel = op._state.kernels[SLOT]
    assert kernel.__name__.startswith(("inplace_", "view_")), op.name
    return kernel


# (operator, arguments, keywords): mutating operators that write ``self`` (position 0),
# one that writes a keyword (add.out), views and a maybe-view, each from an array.
Case = Callable[[np.ndarray], tuple[Any, tuple[Any, ...], dict[str, Any]]]


def _t(a: np.ndarray) -> Any:
    return tt.tensor(a)


CASES: dict[str, Case] = {
    "add_": lambda a: (core.add_.Tensor, (_t(a), _t(a[::-1].copy())), {}),
    "add_ alpha": lambda a: (core.add_.Tensor, (_t(a), _t(a * 2)), {"alpha": -0.01}),
    "sub_ alpha": lambda a: (core.sub_.Tensor, (_t(a), _t(a * 2)), {"alpha": 3}),
    "mul_ number": lambda a: (core.mul_.Scalar, (_t(a), 0.9), {}),
    "lerp_": lambda a: (core.lerp_.Scalar, (_t(a), _t(a + 1), 0.1), {}),
    "addcmul_": lambda a: (core.addcmul_.default, (_t(a), _t(a), _t(a)), {"value": 0.5}),
    "addcdiv_": lambda a: (core.addcdiv_.default, (_t(a), _t(a), _t(a * a + 1)), {"value": -2.0}),
    "copy_": lambda a: (core.copy_.default, (_t(a), _t(a + 1)), {}),
    "t": lambda a: (core.t.default, (_t(a.reshape(len(a), 1)),), {}),
    "transpose": lambda a: (core.transpose.int, (_t(a.reshape(1, -1)), 0, 1), {}),
    "unsqueeze": lambda a: (core.unsqueeze.default, (_t(a), 0), {}),
    "reshape (a view)": lambda a: (core.reshape.default, (_t(a), [1, -1]), {}),
    "reshape (a copy)": lambda a: (
        core.reshape.default,
        (core.t.default(_t(np.stack([a, a]))), [-1]),
        {},
    ),
}


def _entry(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, int] | None:
    """The entry a call path would call for the call, and its key bits; None: none."""
    ks = _bits(op, args)
    if ks.bit_length() != SLOT:
        return None
    state = op._state
    if kwargs:
        if len(args) not in (2, 3) or not state.keywords >> SLOT & 1:
            return None
        return getattr(state, f"kernels{len(args)}k")[SLOT], ks
    if not state.positional >> SLOT & 1:
        return None
    return getattr(state, f"kernels{len(args)}")[SLOT], ks


def _state(t: Any) -> tuple[Any, ...]:
    return (t._version, t._base is not None)


def _run(name: str, a: np.ndarray, through_entry: bool) -> tuple[Any, list[Any]]:
    op, args, kwargs = CASES[name](a)
    found = _entry(op, args, kwargs)
    assert found is not None, name
    entry, ks = found
    for i, x in enumerate([*args, *kwargs.values()]):  # counters made, at distinct values
        if isinstance(x, tt.Tensor) and x._version_counter is None:
            x._version_counter = [3 + i]
    with tt.no_grad():
        if through_entry:
            out = entry(ks, *args, kwargs) if kwargs else entry(ks, *args)
        else:
            out = _kernel(op)(keyset_from_bits(ks), *args, **kwargs)
    return out, [*args, *kwargs.values()]


arrays = st.integers(1, 6).flatmap(
    lambda n: st.lists(st.floats(-100, 100, allow_nan=False, width=32), min_size=n, max_size=n).map(
        lambda v: np.array(v, np.float32)
    )
)


@settings(max_examples=40, deadline=None)
@given(a=arrays)
@pytest.mark.parametrize("name", list(CASES))
def test_an_entry_does_what_the_general_kernel_does(name: str, a: np.ndarray) -> None:
    ours, our_args = _run(name, a, True)
    general, general_args = _run(name, a, False)
    np.testing.assert_array_equal(ours.numpy(), general.numpy())
    assert ours._dtype is general._dtype and tuple(ours.shape) == tuple(general.shape)
    for x, y in zip(our_args, general_args, strict=True):
        if isinstance(x, tt.Tensor):
            np.testing.assert_array_equal(x.numpy(), y.numpy())
            assert _state(x) == _state(y), name
    # The result: the written argument itself, or a view of the first (sharing its
    # counter and base), or a new tensor, alike both ways.
    for out, args in ((ours, our_args), (general, general_args)):
        first = args[0]
        root = first._base if first._base is not None else first
        is_view = out._base is not None and out is not first and out._base is root
        assert is_view == (general._base is not None and general is not general_args[0]), name
        if is_view:
            assert out._version_counter is first._version_counter, name
    assert [a is ours for a in our_args] == [a is general for a in general_args], name


@pytest.mark.parametrize("through_entry", [True, False])
def test_a_kernel_that_raises_bumps_nothing(through_entry: bool) -> None:
    """A shape error below: the written tensor's values and version stay as they were."""
    p, g = tt.ones(3), tt.ones(4)
    op = core.add_.Tensor
    entry, ks = _entry(op, (p, g), {"alpha": 2.0})  # type: ignore[misc]
    with tt.no_grad(), pytest.raises(RuntimeError, match="must match the size"):
        if through_entry:
            entry(ks, p, g, {"alpha": 2.0})
        else:
            op(p, g, alpha=2.0)
    assert p._version == 0 and p.tolist() == [1.0, 1.0, 1.0]


def test_call_paths_reach_the_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    """``add_``'s call2, its keyword entry call2k, ``addcmul_``'s call3k (the in-place
    methods on plain tensors take the direct entry instead: Note [Direct in-place entry],
    tests/tensor/test_direct_inplace.py) and ``w.t()`` (call1) go through the entries; a
    version is bumped once a call."""
    calls: list[str] = []
    for op, field in (
        (core.add_.Tensor, "kernels2"),
        (core.add_.Tensor, "kernels2k"),
        (core.addcmul_.default, "kernels3k"),
        (core.t.default, "kernels1"),
    ):
        table = list(getattr(op._state, field))
        fn = table[SLOT]

        def spy(*args: Any, _fn: Any = fn, _name: str = f"{op.name} {field}") -> Any:
            calls.append(_name)
            return _fn(*args)

        table[SLOT] = spy
        monkeypatch.setattr(op._state, field, tuple(table))
    p, g, w = tt.ones(3), tt.full((3,), 2.0), tt.ones(2, 3)
    with tt.no_grad():
        core.add_.Tensor.call2(p, g)
        core.add_.Tensor.call2k(p, g, {"alpha": -0.5})
        core.addcmul_.default.call3k(p, g, g, {"value": 0.25})
    assert w.t()._base is w
    assert calls == [
        "core::add_.Tensor kernels2",
        "core::add_.Tensor kernels2k",
        "core::addcmul_ kernels3k",
        "core::t kernels1",
    ]
    assert p._version == 3 and p.tolist() == [3.0, 3.0, 3.0]


def test_an_operator_writing_another_argument_has_no_entries() -> None:
    """``add(a, b, out=c)`` writes a keyword: its kernel offers no entries (Note
    [Positional entries]), so every call takes the general kernel, which bumps ``c``."""
    op = core.add.out
    assert not op._state.positional >> SLOT & 1 and not op._state.keywords >> SLOT & 1
    a, b, c = tt.ones(2), tt.ones(2), tt.zeros(2)
    with tt.no_grad():
        assert tt.add(a, b, out=c) is c
    assert c._version == 1 and a._version == 0 and c.tolist() == [2.0, 2.0]

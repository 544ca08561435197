"""Note [Positional entries] (dispatch/_operator.py): the generated autograd kernels'
entries for exactly 1, 2 or 3 positional arguments, which the fixed-arity call paths
(``call1``, ``call2``, ``call3``) call with the key bits.

Each entry records what the general generated kernel records for the same call (the
differential test over every op-database sample whose op has one), the call paths do
reach them, and they are never reached outside grad mode.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensor as tt
from dispatch import _tls, ops
from dispatch._keys import keyset_from_bits
from tests.ops.opdb import OPDB, OpEntry
from tests.tensor.test_autograd_formulas import _float64_samples, _leaves

pytestmark = [
    pytest.mark.filterwarnings("ignore::RuntimeWarning:(tests|backends|tensor)"),
    pytest.mark.filterwarnings("ignore:Using a target size:UserWarning"),
    pytest.mark.filterwarnings("ignore:Tensor.m?T is deprecated on 0-D:UserWarning"),
]


def _key_bits(op: Any, args: tuple[Any, ...]) -> int:
    """The key bits a call path computes for ``args`` in grad mode (default key sets)."""
    bits = 0
    for a in args:
        bits |= getattr(a, "_dispatch_bits", 0)
    return (bits | _tls.DEFAULT_INCLUDED) & _tls.DEFAULT_KEEP & op._state.grad_mask


def _entry(op: Any, args: tuple[Any, ...]) -> tuple[Any, int] | None:
    """The positional entry a call path would call for ``args``, and its key bits."""
    ks = _key_bits(op, args)
    slot = ks.bit_length()
    state = op._state
    if not 1 <= len(args) <= 3 or not state.positional >> slot & 1:
        return None
    return getattr(state, f"kernels{len(args)}")[slot], ks


def _same_node(a: Any, b: Any, name: str) -> None:
    assert type(a) is type(b), name
    assert a.op is b.op and a.formula is b.formula, name
    assert a._args == b._args and all(x is y for x, y in zip(a._args, b._args, strict=True))
    assert a.next_functions == b.next_functions, name
    assert (a.out is None) == (b.out is None), name
    assert len(a.versions) == len(b.versions), name
    for (t, v), (u, w) in zip(a.versions, b.versions, strict=True):
        assert v == w, name
        if t is not u:  # the saved result: a detached alias of its own output
            assert t.grad_fn is None and u.grad_fn is None, name
    assert a._view_version == b._view_version, name


def _positional_calls(entry: OpEntry) -> list[tuple[Any, tuple[Any, ...]]]:
    """(operator, positional arguments) of the samples whose recorded call has a
    positional entry for its argument count."""
    from tensor.autograd._layer import GENERATED

    calls = []
    for sample in _float64_samples(entry):
        args, kwargs, _ = _leaves(sample, tt)
        try:
            out = entry.call(tt, *args, **kwargs)
        except RuntimeError:  # out= variants refuse arguments that require grad
            continue
        for o in out if isinstance(out, (tuple, list)) else [out]:
            node = getattr(o, "grad_fn", None)
            op = getattr(node, "op", None)
            if op is None or op not in GENERATED or node._args is None:
                continue
            if _entry(op, node._args) is not None:
                calls.append((op, node._args))
    return calls


ENTRIES = [e for e in OPDB if e.dtypes is None or "float64" in e.dtypes]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.id)
def test_positional_entry_records_what_the_general_kernel_records(entry: OpEntry) -> None:
    """The same call through the positional entry and through the general generated
    kernel (``*args`` and the key set): equal results, and nodes of the same class with
    the same arguments, edges, saved versions and kept result."""
    from tensor.autograd._layer import GENERATED

    calls = _positional_calls(entry)
    if not calls:
        pytest.skip("no recorded call of this entry has a positional entry")
    for op, args in calls:
        fn, ks = _entry(op, args)  # type: ignore[misc]
        tt.manual_seed(0)  # random operators (dropout) draw the same numbers for both
        ours = _outputs(fn(ks, *args))
        tt.manual_seed(0)
        general = _outputs(GENERATED[op](keyset_from_bits(ks), *args))
        assert len(ours) == len(general), op.name
        for o, g in zip(ours, general, strict=True):
            np.testing.assert_array_equal(o.numpy(), g.numpy())
            assert o.requires_grad == g.requires_grad, op.name
            if g.grad_fn is None:
                assert o.grad_fn is None, op.name
            else:
                _same_node(o.grad_fn, g.grad_fn, op.name)
                assert o._output_nr == g._output_nr, op.name


def _outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def test_call_paths_reach_the_positional_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    """``a + b`` (call2), ``tt.sin(a)`` (call1) and ``F.linear(x, w, b)``'s addmm (call3)
    go through the entry for their argument count when an argument requires grad, and
    not otherwise."""
    calls: list[str] = []
    a = tt.ones(3, requires_grad=True)
    b = tt.ones(3)
    w = tt.ones(2, 3, requires_grad=True)
    bias = tt.zeros(2, requires_grad=True)
    x = tt.ones(4, 3)
    for op, n in ((ops.core.add.Tensor, 2), (ops.core.sin.default, 1), (ops.core.addmm.default, 3)):
        state = op._state
        table = list(getattr(state, f"kernels{n}"))
        for slot, fn in enumerate(table):
            if fn is not None:

                def spy(*args: Any, _fn: Any = fn, _name: str = op.name) -> Any:
                    calls.append(_name)
                    return _fn(*args)

                table[slot] = spy
        monkeypatch.setattr(state, f"kernels{n}", tuple(table))
    assert (a + b).grad_fn is not None
    assert tt.sin(a).grad_fn is not None
    assert tt.nn.functional.linear(x, w, bias).grad_fn is not None
    assert calls == ["core::add.Tensor", "core::sin", "core::addmm"]
    calls.clear()
    with tt.no_grad():
        assert (a + b).grad_fn is None and tt.sin(a).grad_fn is None
    assert tt.sin(b).grad_fn is None
    assert calls == []


def test_positional_entries_with_the_fast_path_switch_off() -> None:
    """Note [Fast-path switch]: the entry hands the call to the general ``record``, which
    records the same node."""
    from backends.common import fastpaths

    a = tt.tensor([0.5, 1.0], requires_grad=True)
    b = tt.tensor([2.0, 3.0])
    fast = a * b
    with fastpaths.disabled():
        slow = a * b
    _same_node(fast.grad_fn, slow.grad_fn, "mul")
    (ga,) = tt.autograd.grad(fast.sum(), a)
    np.testing.assert_array_equal(ga.numpy(), [2.0, 3.0])


def test_node_classes_are_named_for_their_operator() -> None:
    """Each operator's nodes have a class of its own, named as PyTorch names them, which
    holds the operator and formula; a recorded call sets only the node's slots (Note
    [Node fields])."""
    a = tt.ones(2, requires_grad=True)
    n = a.sin().grad_fn
    assert type(n).__name__ == n.name() == "SinBackward0"
    assert type((a + a).grad_fn).__name__ == "AddBackward0"
    assert n.op is ops.core.sin.default and type(n).op is n.op
    assert n.__dict__ == {}  # the bound call, keywords and result at their class default
    e = a.exp().grad_fn  # exp's formula reads its result: kept on the node
    assert e.out is not None and "out" in e.__dict__
    assert n.bound["self"] is a  # bound at first read, then kept
    assert "_bound" in n.__dict__ and n._args is None


def test_an_entry_is_built_on_its_first_call() -> None:
    """The table holds a stand-in until the entry's first call, which builds the entry
    and puts it in the table and in the kernel's ``positional`` (for later rebuilds)."""
    from tensor.autograd._layer import GENERATED

    op = ops.core.atan2.default
    a, b = tt.tensor([0.5], requires_grad=True), tt.tensor([2.0])
    _, ks = _entry(op, (a, b))  # type: ignore[misc]
    out = op.call2(a, b)
    assert type(out.grad_fn).__name__ == "Atan2Backward0"
    built = op._state.kernels2[ks.bit_length()]
    assert built.__name__ == "autograd_atan2_2" and GENERATED[op].positional[1] is built
    assert op.call2(a, b).grad_fn.next_functions == out.grad_fn.next_functions


def test_the_kernel_below_follows_the_table() -> None:
    """Note [The kernel below, kept]: a recorded call runs the kernel below autograd that
    the table has now (a kernel registered at CPU after calls were recorded, then gone
    again), and a with_keyset kernel below (``t``'s ADInplaceOrView) gets its key set."""
    import dispatch

    a = tt.tensor([0.25, 0.5], requires_grad=True)
    before = tt.sin(a)
    calls: list[Any] = []
    lib = dispatch.Library("core", "IMPL")

    def spy(self: Any) -> Any:
        calls.append(self)
        return tt.from_numpy(np.sin(self.numpy()) + 1.0)

    try:
        lib.impl("sin", spy, "CPU", allow_override=True)
        out = tt.sin(a)
        assert calls == [a] and out.grad_fn is not None
        np.testing.assert_allclose(out.detach().numpy(), before.detach().numpy() + 1.0)
    finally:
        lib.destroy()
    calls.clear()
    again = tt.sin(a)
    assert calls == []
    np.testing.assert_array_equal(again.detach().numpy(), before.detach().numpy())
    m = tt.ones(2, 3, requires_grad=True)
    tm = m.t()
    assert tm.shape == (3, 2) and tm._base is m and tm.grad_fn is not None
    assert m.t()._base is m  # the kept partial, called again

"""Note [Tensor fields] (tensor/_tensor.py): ``grad_fn``, ``_version_counter`` and ``_base``
are slots that every way of making a tensor stores, so none can be read before it is set,
and recorded outputs, saved results, views and in-place writes need no instance
``__dict__``."""

from __future__ import annotations

import numpy as np
import pytest

import tensor as tt
from tensor._tensor import make


class Sub(tt.Tensor):
    pass


def _leaf() -> tt.Tensor:
    return tt.tensor([1.0, -2.0], requires_grad=True)


MAKERS = {
    "tt.tensor": lambda: tt.tensor([1.0, 2.0]),
    "Tensor(...)": lambda: tt.Tensor([1.0, 2.0]),
    "a subclass": lambda: Sub([1.0, 2.0]),
    "make": lambda: make(np.ones(2, np.float32), tt.float32),
    "detach": lambda: _leaf().detach(),
    ".data": lambda: _leaf().data,
    "as_subclass": lambda: _leaf().as_subclass(Sub),
    "a kernel's output": lambda: tt.ones(2) + 1,
    "from_numpy": lambda: tt.from_numpy(np.ones(3)),
    "a view": lambda: tt.ones(2, 3)[0],
    "a wrapped number": lambda: tt.tensor(2.0) * 3,
    "zeros_like": lambda: tt.zeros_like(tt.ones(2)),
    "under no_grad": lambda: _no_grad_sin(),
    "clone": lambda: tt.ones(2).clone(),
    "to(float64)": lambda: tt.ones(2).to(tt.float64),
}


def _no_grad_sin() -> tt.Tensor:
    with tt.no_grad():
        return tt.sin(_leaf())


@pytest.mark.parametrize("how", list(MAKERS))
def test_every_tensor_starts_without_a_grad_fn(how: str) -> None:
    t = MAKERS[how]()
    assert t.grad_fn is None and t.is_leaf
    assert t._version_counter is None or t._version_counter[0] >= 0
    assert t._base is None or how == "a view"
    assert not getattr(t, "__dict__", {}), f"{how} made an instance __dict__"


@pytest.mark.parametrize("op", ["sin", "neg", "exp", "relu", "add", "mul", "mm", "sum"])
def test_a_recorded_output_holds_its_node_in_the_slot(op: str) -> None:
    a = tt.ones(3, 3, requires_grad=True)
    b = tt.full((3, 3), 2.0)
    out = {
        "add": lambda: a + b,
        "mul": lambda: a * b,
        "mm": lambda: tt.mm(a, b),
        "sum": lambda: a.sum(),
    }.get(op, lambda: getattr(tt, op)(a))()
    assert out.grad_fn is not None and not out.is_leaf
    assert not getattr(out, "__dict__", {}), "a recorded output made an instance __dict__"
    out.sum().backward()
    assert a.grad is not None
    out.grad_fn = None  # a slot can be cleared and read again
    assert out.grad_fn is None


def test_views_and_inplace_writes_keep_their_fields_in_slots() -> None:
    x = tt.ones(2, 3)
    v = x.t()
    assert v._base is x and v._version_counter is x._version_counter
    v.add_(1)
    assert x._version_counter[0] == 1 and float(x[0, 0]) == 2.0
    assert not x.__dict__ and not v.__dict__
    y = tt.ones(2, requires_grad=True)
    out = y.exp()  # the result saved for the backward, through detach()
    assert out._version_counter is not None and not out.__dict__
    out.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()

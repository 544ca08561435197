"""How backward adds into an existing ``.grad``: in place, as PyTorch's AccumulateGrad
does when grad mode is off, and out of place under ``create_graph``.  Each scenario runs
on ``tensor`` and on PyTorch and must observe the same."""

from __future__ import annotations

from typing import Any

import pytest

import tensor as tt


def second_backward(lib: Any) -> list[Any]:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    g = x.grad
    (x * 3).sum().backward()
    return [x.grad is g, g.tolist(), g._version]


def into_a_grad_the_user_set(lib: Any) -> list[Any]:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    mine = lib.ones(2)
    x.grad = mine
    (x * 2).sum().backward()
    return [x.grad is mine, mine.tolist()]


def never_into_the_callers_gradient(lib: Any) -> list[Any]:
    # The first .grad must be a copy of the caller's tensor, or the second backward would
    # write into it.
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    seed = lib.ones(2)
    x.backward(seed)
    x.backward(seed)
    return [seed.tolist(), x.grad.tolist(), x.grad is seed]


def under_create_graph(lib: Any) -> list[Any]:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward(create_graph=True)
    g = x.grad
    (x * x).sum().backward(create_graph=True)  # a new tensor with history of both
    first = [x.grad is g, g.tolist(), x.grad.tolist(), x.grad.grad_fn is not None]
    g = x.grad
    (x * x).sum().backward()  # grad mode off: in place, keeping g's history
    return [*first, x.grad is g, g.tolist(), g.grad_fn is not None]


def two_leaves_one_gradient(lib: Any) -> list[Any]:
    # add hands one gradient to both leaves: each .grad must be its own tensor before the
    # second backward adds into them in place.
    p = lib.tensor([1.0, 1.0], requires_grad=True)
    q = lib.tensor([2.0, 2.0], requires_grad=True)
    ((p + q) * 2).sum().backward()
    ((p + q) * 2).sum().backward()
    return [p.grad.tolist(), q.grad.tolist(), p.grad is q.grad]


SCENARIOS = [
    second_backward,
    into_a_grad_the_user_set,
    never_into_the_callers_gradient,
    under_create_graph,
    two_leaves_one_gradient,
]


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph")  # PyTorch's
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_accumulation_matches_torch(scenario: Any) -> None:
    torch = pytest.importorskip("torch", reason="PyTorch not installed: differential check skipped")
    assert scenario(tt) == scenario(torch)


def test_second_backward_adds_in_place() -> None:
    # The same facts without PyTorch at hand.
    assert second_backward(tt) == [True, [5.0, 5.0], 1]
    assert into_a_grad_the_user_set(tt) == [True, [3.0, 3.0]]
    assert never_into_the_callers_gradient(tt) == [[1.0, 1.0], [2.0, 2.0], False]
    assert under_create_graph(tt) == [False, [2.0, 4.0], [4.0, 8.0], True, True, [6.0, 12.0], True]

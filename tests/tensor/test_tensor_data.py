"""``Tensor.data`` (Note [Tensor.data]): each scenario runs on ``tensor`` and on PyTorch
and must observe the same."""

from __future__ import annotations

from typing import Any

import pytest

import tensor as tt


def getter(lib: Any) -> list[Any]:
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    d = w.data
    seen = [d.requires_grad, d.grad_fn is None, d.is_leaf, d._version, type(d) is type(w)]
    d[0] = 7.0  # shares memory with w
    seen += [w.tolist(), w._version, d._version]
    y = w * 2
    seen += [y.data.requires_grad, y.data.grad_fn is None, y.requires_grad]
    v = lib.arange(6.0).reshape(2, 3)[0]
    seen += [v._base is not None, v.data._base is None]
    return seen


def old_style_sgd_step(lib: Any) -> list[Any]:
    # ``w.data -= lr * w.grad`` outside no_grad, as old tutorials do; the in-place change
    # is invisible to autograd, so the graph that saved w still runs (with w's new values).
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (w * w).sum()  # saves w
    (w * 3).sum().backward()
    w.data -= 0.5 * w.grad
    seen = [w.tolist(), w._version, w.requires_grad, w.is_leaf]
    y.backward()
    return [*seen, w.grad.tolist()]


def detach_is_not_data(lib: Any) -> list[Any]:
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (w * w).sum()
    w.detach().add_(1.0)  # detach shares the version counter: autograd notices
    try:
        y.backward()
    except RuntimeError as e:
        return ["modified by an inplace operation" in str(e)]
    return ["no error"]


def setter(lib: Any) -> list[Any]:
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (w * w).sum().backward()
    new = lib.tensor([10.0, 20.0], dtype=lib.float64)
    w.data = new
    seen = [w.tolist(), str(w.dtype).split(".")[-1], list(w.shape), w.requires_grad, w.is_leaf]
    seen += [w._version, w.grad.tolist()]
    new.add_(1.0)  # same memory, separate version counters
    seen += [w.tolist(), w._version, new._version]
    h = lib.tensor([1.0, 2.0], requires_grad=True) * 2
    h.data = lib.tensor([7.0, 8.0])
    seen += [h.tolist(), h.grad_fn is not None]
    return seen


def setter_errors(lib: Any) -> list[Any]:
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    for value in (lib.tensor([1, 2]), [1.0, 2.0]):
        try:
            w.data = value
            seen.append("accepted")
        except (RuntimeError, TypeError) as e:
            seen.append((type(e).__name__, str(e).split(" (")[0]))
    plain = lib.tensor([1.0, 2.0])
    plain.data = lib.tensor([1, 2])  # no grad required: any dtype
    return [*seen, str(plain.dtype).split(".")[-1]]


SCENARIOS = [getter, old_style_sgd_step, detach_is_not_data, setter, setter_errors]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_data_matches_torch(scenario: Any) -> None:
    torch = pytest.importorskip("torch", reason="PyTorch not installed: differential check skipped")
    assert scenario(tt) == scenario(torch)


def test_data_without_torch() -> None:
    assert old_style_sgd_step(tt) == [[-0.5, 0.5, 1.5], 0, True, True, [2.0, 4.0, 6.0]]
    assert setter(tt)[:5] == [[10.0, 20.0], "float64", [2], True, True]

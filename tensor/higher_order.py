"""Higher-order operators: ``cond`` and ``map`` (``tt.cond``, ``tt.higher_order.map``).

Imports: ``dispatch`` and ``tensor`` siblings.

As in PyTorch 2.13, ``cond`` and ``map`` are functions that check their arguments and
call the ``dispatch.HigherOrderOperator``s ``cond_op`` and ``map_op`` (PyTorch's
``torch.ops.higher_order.cond`` and ``torch.ops.higher_order.map_impl``, with the same
names); ``isinstance(torch.cond, HigherOrderOperator)`` is False there too.  The
operators have PyTorch's eager semantics.  Their
CompositeImplicitAutograd kernel runs the user's functions on the real operands,
so the operators inside record autograd history and meet autocast as usual (the
Autocast keys fall through for higher-order operators).  The shipped modes get
rules: ``LoggingMode`` logs the call and the operators inside it, ``FakeMode``
runs both branches of ``cond`` on meta tensors and checks they agree, as
PyTorch's fake ``cond`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dispatch import DispatchKey, HigherOrderOperator, ops

from .modes import FakeMode, LoggingMode, _describe

__all__ = ["cond", "cond_op", "map", "map_op"]

cond_op = HigherOrderOperator("cond")
map_op = HigherOrderOperator("map_impl")  # PyTorch's name for map's operator


def _is_tensor(v: Any) -> bool:
    return getattr(v, "_dispatch_bits", None) is not None


def _check_cond(pred: Any, true_fn: Any, false_fn: Any, operands: Any) -> None:
    if not (isinstance(pred, bool) or (_is_tensor(pred) and pred.numel() == 1)):
        raise RuntimeError(
            f"cond: pred must be a Python bool or a tensor with a single element, got "
            f"{_describe(pred)}"
        )
    if not (callable(true_fn) and callable(false_fn)):
        raise RuntimeError("cond: true_fn and false_fn must be callables")
    if not isinstance(operands, (tuple, list)) or not all(_is_tensor(o) for o in operands):
        raise RuntimeError(
            f"cond: operands must be a list or tuple of tensors, got {_describe(operands)}"
        )


def cond(
    pred: Any,
    true_fn: Callable[..., Any],
    false_fn: Callable[..., Any],
    operands: Sequence[Any] = (),
) -> Any:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``.

    >>> import tensor as tt
    >>> x = tt.tensor([1.0, 2.0])
    >>> cond(x.sum() > 2, lambda v: v * 10, lambda v: v - 1, (x,))
    tensor([10., 20.])
    """
    _check_cond(pred, true_fn, false_fn, operands)
    return cond_op(pred, true_fn, false_fn, tuple(operands))


@cond_op.py_impl("CompositeExplicitAutograd")
def _cond_eager(pred: Any, true_fn: Any, false_fn: Any, operands: tuple[Any, ...]) -> Any:
    return true_fn(*operands) if bool(pred) else false_fn(*operands)


@cond_op.py_impl("Autograd")
def _cond_autograd(*args: Any) -> Any:
    # Below autograd without excluding it: the branch's operators record history.
    return cond_op.dispatch_below(DispatchKey.AutogradOther, *args)


@cond_op.py_impl(FakeMode)
def _cond_fake(mode: FakeMode, pred: Any, true_fn: Any, false_fn: Any, operands: Any) -> Any:
    with mode:
        a = true_fn(*operands)
        b = false_fn(*operands)
    left, right = _leaves(a), _leaves(b)
    if len(left) != len(right) or any(
        (x.shape, x.dtype) != (y.shape, y.dtype) for x, y in zip(left, right, strict=False)
    ):
        raise RuntimeError(
            f"cond: true_fn and false_fn must return the same structure of tensors with the "
            f"same shapes and dtypes; got {_describe(a)} and {_describe(b)}"
        )
    return a


@cond_op.py_impl(LoggingMode)
def _cond_logged(mode: LoggingMode, pred: Any, true_fn: Any, false_fn: Any, operands: Any) -> Any:
    mode.lines.append(f"cond({_describe(pred)}, {_describe(tuple(operands))})")
    with mode:
        return _cond_eager(pred, true_fn, false_fn, operands)


def _leaves(v: Any) -> list[Any]:
    if isinstance(v, (list, tuple)):
        return [leaf for x in v for leaf in _leaves(x)]
    return [v] if _is_tensor(v) else []


# -- map ---------------------------------------------------------------------------------------
def map(fn: Callable[..., Any], xs: Any, *args: Any) -> Any:  # noqa: A001 - PyTorch's name
    """Apply ``fn(x, *args)`` to each slice ``x`` of ``xs`` along dim 0 and stack the
    results; ``xs`` may be a tensor or a list/tuple of tensors sliced together.

    >>> import tensor as tt
    >>> map(lambda row, k: row.sum() * k, tt.tensor([[1.0, 2.0], [3.0, 4.0]]), 2)
    tensor([ 6., 14.])
    """
    leaves = _leaves(xs)
    if not leaves or len(leaves) != len(xs if isinstance(xs, (list, tuple)) else [xs]):
        raise RuntimeError(
            f"map: xs must be a tensor or a list/tuple of tensors, got {_describe(xs)}"
        )
    sizes = {x.shape[0] if x.ndim else None for x in leaves}
    if None in sizes or len(sizes) != 1:
        raise RuntimeError(
            f"map: every tensor of xs needs the same leading dimension; got {_describe(xs)}"
        )
    return map_op(fn, xs, *args)


@map_op.py_impl("Autograd")
def _map_autograd(*args: Any) -> Any:
    return map_op.dispatch_below(DispatchKey.AutogradOther, *args)


@map_op.py_impl("CompositeExplicitAutograd")
def _map_eager(fn: Any, xs: Any, *args: Any) -> Any:
    if isinstance(xs, (list, tuple)):
        columns = [ops.core.unbind.int(x, 0) for x in xs]
        slices = [type(xs)(col) for col in zip(*columns, strict=True)]
    else:
        slices = list(ops.core.unbind.int(xs, 0))
    results = [fn(s, *args) for s in slices]
    if isinstance(results[0], (list, tuple)):
        return type(results[0])(
            ops.core.stack([r[i] for r in results]) for i in range(len(results[0]))
        )
    return ops.core.stack(results)


@map_op.py_impl(FakeMode)
def _map_fake(mode: FakeMode, fn: Any, xs: Any, *args: Any) -> Any:
    with mode:
        return _map_eager(fn, xs, *args)


@map_op.py_impl(LoggingMode)
def _map_logged(mode: LoggingMode, fn: Any, xs: Any, *args: Any) -> Any:
    mode.lines.append(f"map({_describe(xs)})")
    with mode:
        return _map_eager(fn, xs, *args)

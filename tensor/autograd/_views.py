"""Gradient edges and view history: where a recorded call's gradients flow, and how a
write through a view rebases its base's history.

Imports: the standard library, ``dispatch`` and ``tensor.autograd``'s ``_graph`` and
``_grad_mode``.  ``edges_of(inputs)`` is a node's ``next_functions``: every recorded call
makes them (Note [Recording cost] in ``_layer.py``), so its two common cases (an input
that does not require grad; a leaf's accumulator) are tested first, and a view whose
data changed since its ``grad_fn`` was made gets a fresh node that reads it from the
base (``_edge``).  ``CopySlices`` and ``AsStridedBackward0`` (``_ViewOfBaseNode``) are
the nodes of an in-place write through a view (the in-place kernel in ``_layer.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dispatch import REQUIRES_GRAD_BIT, ops

from . import _grad_mode
from ._graph import Node, grad_accumulator

__all__ = ["CopySlices", "edges_of", "mark_requires_grad"]

_FLOAT_KIND = 2  # tensor._dtype.FLOAT; COMPLEX (3) is above it
_NO_EDGE: tuple[None, int] = (None, 0)


def _is_differentiable(t: Any) -> bool:
    """A tensor whose dtype can carry gradients (floating point or complex)."""
    if getattr(t, "_dispatch_bits", None) is None:
        return False
    return t._dtype.category >= _FLOAT_KIND  # type: ignore[no-any-return]


def _outputs(out: Any) -> tuple[Any, ...]:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def mark_requires_grad(out: Any, node: Node, skip: frozenset[int] = frozenset()) -> None:
    """Make the differentiable outputs of a call require grad, with ``node`` as grad_fn
    (outputs whose ``id`` is in ``skip`` are left alone)."""
    for nr, t in enumerate(_outputs(out)):
        if _is_differentiable(t) and id(t) not in skip:
            t.grad_fn = node
            t._output_nr = nr
            t._dispatch_bits |= REQUIRES_GRAD_BIT


def _edge(t: Any) -> tuple[Node | None, int]:
    """The edge gradients of input ``t`` flow along.  A view whose data changed since
    its ``grad_fn`` was made (a write through another view, or to its base) first gets
    a new one that reads it from the base's current history, as PyTorch regenerates
    view ``grad_fn``s."""
    if t is None or not t._dispatch_bits & REQUIRES_GRAD_BIT:
        return _NO_EDGE
    fn = t.grad_fn
    if fn is None:
        return (grad_accumulator(t), 0)
    stale = fn._view_version
    if stale is not None and stale != t._version and t._base is not None:
        base = t._base
        if base.grad_fn is not None:
            with _grad_mode.no_grad():
                positions = _view_positions(t, base)
            mark_requires_grad(t, _ViewOfBaseNode(base, positions, t._version))
            return (t.grad_fn, 0)
    return (fn, t._output_nr)


def edges_of(inputs: Sequence[Any]) -> tuple[tuple[Node | None, int], ...]:
    """A node's ``next_functions``: ``_edge`` of each input, its two common cases inline."""
    edges = []
    for t in inputs:
        if t is None or not t._dispatch_bits & REQUIRES_GRAD_BIT:
            edges.append(_NO_EDGE)
            continue
        fn = t.grad_fn
        if fn is None:
            acc = t._grad_accumulator  # Note [One accumulator a leaf]
            edges.append((acc if acc is not None else grad_accumulator(t), 0))
        elif fn._view_version is None:
            edges.append((fn, t._output_nr))
        else:
            edges.append(_edge(t))
    return tuple(edges)


def _view_positions(view: Any, base: Any) -> Any:
    """For each element of ``view``, the flat (row-major) index of the element of ``base``
    it shares memory with, as an int64 tensor of the view's shape."""
    core = ops.core
    shape, strides = list(view.shape), view.stride()
    int64 = core.arange(0, 1, 1, device=view.device).dtype  # arange of ints: int64
    offset = view.storage_offset() - base.storage_offset()
    pos = core.full(shape, offset, dtype=int64, device=view.device)
    for k, (n, s) in enumerate(zip(shape, strides, strict=True)):
        if n > 1 and s:
            pos = pos + core.reshape(
                core.arange(0, n * s, s, dtype=int64, device=view.device),
                [n] + [1] * (len(shape) - 1 - k),
            )
    bshape, bstrides = list(base.shape), base.stride()
    if list(bstrides) == _contiguous_strides(bshape):
        return pos
    # A strided base: undo its layout dim by dim, largest stride first (negative strides
    # count from the other end).
    for n, s in zip(bshape, bstrides, strict=True):
        if s < 0:
            pos = pos - (n - 1) * s
    flat = core.zeros(shape, dtype=int64, device=view.device)
    rows = _contiguous_strides(bshape)
    for k in sorted(range(len(bshape)), key=lambda k: -abs(bstrides[k])):
        n, s = bshape[k], bstrides[k]
        if n == 1 or s == 0:
            continue
        index = core.remainder(core.floor_divide(pos, abs(s)), n)
        pos = pos - index * abs(s)
        if s < 0:
            index = (n - 1) - index
        flat = flat + index * rows[k]
    return flat


def _contiguous_strides(shape: list[int]) -> list[int]:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return out[::-1]


class CopySlices(Node):
    """A base's node after an in-place write through one of its views: the written
    elements' gradient goes through the write's node, the others pass on unchanged."""

    __slots__ = ("node", "positions", "shape")

    def __init__(self, base: Any, positions: Any, node: Any) -> None:
        super().__init__((_edge(base), *node.next_functions[1:]))
        self.node = node
        self.positions = positions
        self.shape = list(base.shape)

    def name(self) -> str:
        return "CopySlices"

    def apply(self, grads: list[Any]) -> Sequence[Any]:
        self.check_not_freed()
        core = ops.core
        flat = core.reshape(grads[0], [-1])
        written = core.index.Tensor(flat, [self.positions])
        result = list(self.node.apply([written]))
        old = result[0] if result else None
        if old is None:
            old = core.zeros_like(written)
        rest = core.index_put(flat, [self.positions], old, False)
        return [core.reshape(rest, self.shape), *result[1:]]

    def release(self) -> None:
        super().release()
        self.node.release()
        self.positions = None


class _ViewOfBaseNode(Node):
    """A view's node after a write through it: its elements, read back from the base."""

    __slots__ = ("positions", "shape")

    def __init__(self, base: Any, positions: Any, version: int) -> None:
        super().__init__(((base.grad_fn, base._output_nr),))
        self.positions = positions
        self.shape = list(base.shape)
        self._view_version = version

    def name(self) -> str:
        return "AsStridedBackward0"

    def apply(self, grads: list[Any]) -> Sequence[Any]:
        self.check_not_freed()
        core = ops.core
        g = grads[0]
        n = 1
        for size in self.shape:
            n *= size
        zeros = core.zeros([n], dtype=g.dtype, device=g.device)
        return [core.reshape(core.index_put(zeros, [self.positions], g, True), self.shape)]

    def release(self) -> None:
        super().release()
        self.positions = None


def _rebase_view(view: Any, base: Any, node: Any) -> None:
    with _grad_mode.no_grad():
        positions = _view_positions(view, base)
    mark_requires_grad(base, CopySlices(base, positions, node))
    mark_requires_grad(view, _ViewOfBaseNode(base, positions, view._version))

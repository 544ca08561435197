"""The autograd graph and its engine.

Imports: the standard library and sibling autograd modules (the engine calls
operators through the tensors it is given; it never imports ``tensor._tensor``).

A ``Node`` is a tensor's ``grad_fn``: it knows how to turn gradients of its
outputs into gradients of its inputs, and its ``next_functions`` are the edges
``(node, output_nr)`` to the nodes of those inputs (``AccumulateGrad`` for leaves
that require grad, ``None`` for inputs that don't).

The engine (``run_backward``) is iterative, so graphs of any depth work: it counts
each node's incoming edges among the nodes that can reach what was asked for,
then runs nodes whose gradients are complete, highest sequence number first
(PyTorch's order), summing gradients that meet at a node.  A shared subgraph runs
once.  Unless ``retain_graph`` is set, each node drops its saved tensors after it
runs, and a second backward through it raises as in PyTorch.
"""

from __future__ import annotations

import heapq
import itertools
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from . import _grad_mode

__all__ = ["AccumulateGrad", "Node", "run_backward"]

_sequence = itertools.count()


class Node:
    """A backward function in the graph (a tensor's ``grad_fn``)."""

    __slots__ = (
        "__weakref__",
        "_freed",
        "_post_hooks",
        "_pre_hooks",
        "_retain_hooks",
        "next_functions",
        "seq",
    )

    def __init__(self, next_functions: tuple[tuple[Node | None, int], ...]) -> None:
        self.next_functions = next_functions
        self.seq = next(_sequence)
        self._freed = False
        self._pre_hooks: list[Callable[..., Any]] | None = None
        self._post_hooks: list[Callable[..., Any]] | None = None
        # retain_grad's hooks run after every other pre-hook, as in PyTorch.
        self._retain_hooks: list[Callable[..., Any]] | None = None

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()} object>"

    @property
    def num_outputs(self) -> int:
        return 1

    def apply(self, grads: list[Any]) -> Sequence[Any]:
        """Gradients of the inputs (one per ``next_functions`` entry) from those of the
        outputs (``None`` where an output got no gradient)."""
        raise NotImplementedError

    def release(self) -> None:
        """Drop saved state after a backward that does not retain the graph."""
        self._freed = True

    def check_not_freed(self) -> None:
        if self._freed:
            raise RuntimeError(
                f"Trying to backward through the graph a second time (or directly access saved "
                f"tensors after they have already been freed) at {self.name()}. Saved "
                f"intermediate values of the graph are freed when you call .backward() or "
                f"autograd.grad(). Specify retain_graph=True if you need to backward through "
                f"the graph a second time or if you need to access saved tensors after calling "
                f"backward."
            )

    def register_hook(self, fn: Callable[..., Any]) -> None:
        """``fn(grad_inputs, grad_outputs)`` after this node runs."""
        if self._post_hooks is None:
            self._post_hooks = []
        self._post_hooks.append(fn)

    def register_prehook(self, fn: Callable[..., Any]) -> None:
        """``fn(grad_outputs)`` before this node runs; may return replacement grads."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._pre_hooks.append(fn)


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: adds incoming gradients to ``.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable: Any) -> None:
        super().__init__(())
        self.variable = variable

    def apply(self, grads: list[Any]) -> Sequence[Any]:
        grad = grads[0]
        if grad is None:
            return ()
        var = self.variable
        if var.grad is None:
            # A gradient may alias another leaf's (``add`` passes the same one to both
            # inputs) or be a stride-0 expansion, so .grad gets its own contiguous copy
            # (PyTorch clones unless it can steal an unshared buffer).  Detached unless
            # building a higher-order graph (PyTorch's rule).
            var.grad = grad.clone() if _grad_mode.state.grad_enabled else grad.detach().clone()
        elif _grad_mode.state.grad_enabled:
            var.grad = var.grad + grad
        else:
            var.grad = var.grad + grad.detach()
        return ()

    def release(self) -> None:
        pass  # nothing saved; the leaf may be used again


def _sum(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _prepare_grads(node: Node, grads: list[Any]) -> list[Any]:
    """Run pre-hooks: a leaf's tensor hooks, then the node's own."""
    if isinstance(node, AccumulateGrad) and grads[0] is not None:
        for hook in getattr(node.variable, "_hooks", None) or ():
            new = hook(grads[0])
            if new is not None:
                grads = [new]
    for hook in node._pre_hooks or ():
        new = hook(tuple(grads))
        if new is not None:
            grads = list(new)
    for hook in node._retain_hooks or ():
        hook(tuple(grads))
    return grads


def run_backward(
    roots: Sequence[tuple[Any, Any]],
    *,
    retain_graph: bool,
    create_graph: bool,
    inputs: Sequence[Any] | None = None,
    accumulate: bool = True,
) -> list[Any]:
    """Backpropagate ``(tensor, grad)`` pairs.  With ``accumulate`` False, return the
    gradients reaching ``inputs`` (``autograd.grad``) instead of adding them to ``.grad``.
    """
    root_edges: list[tuple[Node, int, Any]] = []
    for t, g in roots:
        node = _edge_node(t)
        if node is None:
            raise RuntimeError(
                "element 0 of tensors does not require grad and does not have a grad_fn"
            )
        root_edges.append((node, t._output_nr if t.grad_fn is not None else 0, g))

    # Where gradients are captured: (node, output_nr) -> index into ``inputs``.
    captures: dict[tuple[int, int], int] = {}
    for i, t in enumerate(inputs or ()):
        node = _edge_node(t)
        if node is None:
            raise RuntimeError(
                f"One of the differentiated Tensors (input {i}) does not require grad"
            )
        captures[(id(node), t._output_nr if t.grad_fn is not None else 0)] = i
    captured: list[Any] = [None] * len(inputs or ())
    wanted = {node_id for node_id, _ in captures}

    # Count dependencies among the nodes reachable from the roots (iteratively), and
    # keep only those that lead to a wanted node when inputs were given.
    deps: dict[int, int] = {}
    nodes: dict[int, Node] = {}
    children: dict[int, list[Node]] = {}
    # One entry per distinct root node: two roots on one node (``a, b = x.split(2)``)
    # must not count its edges twice.
    stack = list({id(n): n for n, _, _ in root_edges}.values())
    for n in stack:
        nodes[id(n)] = n
    order: list[Node] = []
    seen: set[int] = {id(n) for n in stack}
    while stack:
        n = stack.pop()
        order.append(n)
        kids = [nxt for nxt, _ in n.next_functions if nxt is not None]
        children[id(n)] = kids
        for nxt in kids:
            deps[id(nxt)] = deps.get(id(nxt), 0) + 1
            if id(nxt) not in seen:
                seen.add(id(nxt))
                nodes[id(nxt)] = nxt
                stack.append(nxt)
    needed: set[int] | None = None
    if inputs is not None:
        # A node is needed if a wanted node is reachable from it: sweep in reverse
        # topological order (children before parents) via sequence numbers.
        needed = set()
        for n in sorted(order, key=lambda n: n.seq):
            if id(n) in wanted or any(id(k) in needed for k in children[id(n)]):
                needed.add(id(n))

    buffers: dict[int, list[Any]] = {}
    ready: list[tuple[int, int, Node]] = []
    for node, nr, g in root_edges:
        buf = buffers.setdefault(id(node), [None] * node.num_outputs)
        buf[nr] = _sum(buf[nr], g)
    for node in {id(n): n for n, _, _ in root_edges}.values():
        if deps.get(id(node), 0) == 0:
            heapq.heappush(ready, (-node.seq, id(node), node))

    with _grad_mode.set_grad_enabled(create_graph):
        while ready:
            _, _, node = heapq.heappop(ready)
            grads = buffers.pop(id(node), [None] * node.num_outputs)
            run = needed is None or id(node) in needed
            if run:
                grads = _prepare_grads(node, grads)  # tensor hooks come before capture
            for nr, g in enumerate(grads):
                slot = captures.get((id(node), nr))
                if slot is not None:
                    captured[slot] = _sum(captured[slot], g)
            if run and not (not accumulate and isinstance(node, AccumulateGrad)):
                node.check_not_freed()
                grad_inputs = node.apply(grads) if any(g is not None for g in grads) else ()
                for hook in node._post_hooks or ():
                    hook(tuple(grad_inputs), tuple(grads))
                if not retain_graph:
                    node.release()
            else:
                grad_inputs = ()
            for i, (nxt, nr) in enumerate(node.next_functions):
                if nxt is None:
                    continue
                g = grad_inputs[i] if i < len(grad_inputs) else None
                if g is not None:
                    buf = buffers.setdefault(id(nxt), [None] * nxt.num_outputs)
                    buf[nr] = _sum(buf[nr], g)
                deps[id(nxt)] -= 1
                if deps[id(nxt)] == 0:
                    heapq.heappush(ready, (-nxt.seq, id(nxt), nxt))
    return captured


def _edge_node(t: Any) -> Node | None:
    """The node gradients of ``t`` flow into: its grad_fn, or its AccumulateGrad."""
    if t.grad_fn is not None:
        return t.grad_fn  # type: ignore[no-any-return]
    if t.requires_grad:
        return grad_accumulator(t)
    return None


def grad_accumulator(t: Any) -> AccumulateGrad:
    """The one AccumulateGrad node of a leaf.  The tensor keeps only a weak reference
    (graphs keep the node alive), so tensor and node form no reference cycle."""
    ref = t._grad_accumulator
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t._grad_accumulator = weakref.ref(acc)
    return acc

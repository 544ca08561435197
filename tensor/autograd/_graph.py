"""The autograd graph and its engine.

Imports: the standard library, NumPy (whose views' layout stealing a gradient's base
reads), sibling autograd modules, and ``backends.common.fastpaths`` (the switch of Note
[Fast-path switch], which stealing gradients tests; a leaf module).
The engine calls operators through the tensors it is given; it never imports
``tensor._tensor``.

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
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from sys import getrefcount
from typing import Any

import numpy as np

from backends.common import fastpaths
from backends.composite import dense_order

from . import _grad_mode

__all__ = ["AccumulateGrad", "Node", "run_backward"]

_ndarray = np.ndarray
_sequence = itertools.count()
new_seq = _sequence.__next__  # a node's sequence number: later nodes run first


class Node:
    """A backward function in the graph (a tensor's ``grad_fn``)."""

    # Every recorded call makes a node, so it sets only what every node has; the fields
    # most nodes keep at their defaults are class attributes, set on a node (in its
    # ``__dict__``, made then) only when they change (Note [Recording cost]).
    __slots__ = ("__dict__", "__weakref__", "next_functions", "seq")

    _freed = False
    _num_outputs = 1
    _pre_hooks: list[Callable[..., Any]] | None = None
    _post_hooks: list[Callable[..., Any]] | None = None
    # retain_grad's hooks run after every other pre-hook, as in PyTorch.
    _retain_hooks: list[Callable[..., Any]] | None = None
    _view_version: int | None = None  # the view output's version when made (_views._edge)

    def __init__(self, next_functions: tuple[tuple[Node | None, int], ...]) -> None:
        self.next_functions = next_functions
        self.seq = new_seq()

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()} object>"

    @property
    def num_outputs(self) -> int:
        return self._num_outputs

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


# Note [Stealing gradients]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# A leaf's first gradient becomes its ``.grad``.  PyTorch's AccumulateGrad stores the
# incoming tensor itself ("steals" it) when nothing else can see it (use_count within
# what the engine holds) and its layout fits; otherwise it clones, because a gradient
# may alias another leaf's (``add`` passes one tensor to both inputs), a user's tensor
# (``backward(gradient=g)``, a hook's return), or be a stride-0 expansion, and ``.grad``
# may later be written in place.  We do the same with CPython reference counts: the
# engine drops its own references first (``_run``), so a gradient is stolen only when
# the AccumulateGrad call's argument list and locals are all that hold the tensor and
# its array (``_STEALABLE_REFS``), the array owns its memory and is C-contiguous, and
# grad mode is off (under create_graph the gradient has history to keep).  It saves a
# copy per parameter per step (ci/bench/autograd.py).  Where reference counts are not
# exact (another Python implementation, a free-threaded build) nothing is stolen, nor
# with the fast paths off (Note [Fast-path switch]): then every first gradient is copied.
def _stealable(grad: Any, var: Any) -> bool:
    array = grad._array
    return (
        getrefcount(grad) <= _STEALABLE_REFS
        and grad._base is None
        and getattr(array, "base", 0) is None
        and getrefcount(array) <= _ARRAY_REFS
        and grad._dtype is var._dtype
        and grad._device is var._device  # devices are interned: one object each
        and array.shape == var._array.shape
        and array.flags.c_contiguous
        and var._array.flags.c_contiguous  # PyTorch's layout contract: var's strides
    )


def _clone_obeying_layout(grad: Any, var: Any) -> Any:
    """A copy of ``grad`` laid out as PyTorch's AccumulateGrad lays a ``.grad`` out
    (``clone_obey_contract``): with ``var``'s strides when ``var`` is dense and
    non-overlapping (a transposed parameter gets a transposed gradient), row-major
    otherwise; whatever layout ``grad`` has (Note [Copies keep the layout] makes copies
    keep theirs)."""
    array = var._array
    flags = getattr(array, "flags", None)
    if flags is None or flags.c_contiguous or array.ndim < 2:
        return grad.clone(memory_format="contiguous_format")
    order = dense_order(array.shape, tuple(s // array.itemsize for s in array.strides))
    compact = 1
    for d in reversed(order):  # dense and non-overlapping: the strides of that order
        if array.shape[d] != 1 and array.strides[d] != compact * array.itemsize:
            return grad.clone(memory_format="contiguous_format")
        compact *= array.shape[d]
    inverse = [order.index(d) for d in range(array.ndim)]
    laid = grad.permute(order).clone(memory_format="contiguous_format")
    return laid.permute(inverse)


def _whole_view_base(grad: Any, var: Any) -> Any:
    """The base of ``grad`` when ``grad`` is all of it in its own layout (a transpose of a
    transpose: F.linear's weight gradient, Note [Transposed products' gradients] in
    tensor/optable/linalg.py) and nothing else holds either, so the base can be stolen
    instead of copying the view; None otherwise."""
    if getrefcount(grad) > _STEALABLE_REFS:
        return None
    base = grad._base
    if base is None or base._base is not None or getrefcount(base) > _ARRAY_REFS:
        return None
    array, owner = grad._array, base._array
    same = (
        getattr(owner, "base", 0) is None
        and getattr(array, "base", None) is owner
        and getrefcount(owner) <= _ARRAY_REFS + 1  # base._array and the view's .base
        and grad._dtype is var._dtype
        and base._dtype is var._dtype
        and base._device is var._device
        and owner.shape == var._array.shape
        and array.shape == owner.shape
        and array.strides == owner.strides
        and owner.flags.c_contiguous
        and var._array.flags.c_contiguous  # PyTorch's layout contract: var's strides
        and owner.size > 0
    )
    # The same data pointer too: a NumPy view of ``owner`` (``array.base is owner``) lies
    # within owner's buffer (indexing cannot leave it, and ``ndarray(buffer=owner,
    # offset=...)`` checks the bounds; ``as_strided``'s result has another base), and one
    # with owner's shape and strides spans all of it, so it starts where owner starts.
    return base if same and type(owner) is _ndarray else None


def _refs_in_apply(grads: list[Any]) -> int:
    grad = grads[0]  # as in AccumulateGrad.apply
    return _refs_of(grad)


def _refs_of(grad: Any) -> int:
    return getrefcount(grad)  # as in _stealable


class _Holder:
    __slots__ = ("_array",)


def _array_refs(holder: _Holder) -> int:
    array = holder._array  # as in _stealable
    return getrefcount(array)


# The reference counts of an unshared gradient and array at the checks, measured on
# this interpreter rather than assumed (they are implementation details of CPython).
# Where counts are not exact (another implementation, a free-threaded build), never steal.
_EXACT_COUNTS = (
    sys.implementation.name == "cpython" and getattr(sys, "_is_gil_enabled", lambda: True)()
)
_STEALABLE_REFS = _refs_in_apply([object()]) if _EXACT_COUNTS else 0
_probe = _Holder()
_probe._array = object()
_ARRAY_REFS = _array_refs(_probe)
del _probe


# Note [Concurrent accumulation]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Threads may run backward at once on graphs that share a leaf (hogwild training, a
# data-parallel loop over one model).  Reading ``.grad``, adding and storing the sum
# are separate bytecodes, so two threads can both read the old value and one update is
# lost.  As in PyTorch (``AccumulateGrad::apply`` takes ``mutex_``), each accumulator
# holds a lock for the whole read-modify-write, stealing included (the ``.grad is None``
# test and the store must not interleave with another thread's).  That only works if a
# leaf has one live accumulator: ``grad_accumulator`` makes it under a lock, so two
# threads building graphs over the same leaf cannot each make their own.  Leaf tensor
# hooks run outside the lock, before ``apply``, as in PyTorch: each sees its own thread's
# gradient.  Uncontended, the lock costs ~0.15 us a leaf per backward.
#
# The locks are a fixed pool, picked by the leaf's ``id``, rather than one made with each
# accumulator (when accumulators were made again with every graph, a new lock a time was
# a fifth of that cost; Note [One accumulator a leaf] now makes one a leaf).  Two leaves
# that share a lock only wait for each other; they never lose an update.
_LOCK_POOL = tuple(threading.Lock() for _ in range(64))


def _lock_of(variable: Any) -> Any:
    return _LOCK_POOL[(id(variable) >> 4) & 63]


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: adds incoming gradients to ``.grad``
    (Note [One accumulator a leaf])."""

    __slots__ = ("_variable",)

    def __init__(self, variable: Any) -> None:
        super().__init__(())
        self.seq = _ACCUMULATOR_SEQ + self.seq
        self._variable = weakref.ref(variable)

    @property
    def variable(self) -> Any:
        """The leaf, or None once it is gone."""
        return self._variable()

    @property
    def lock(self) -> Any:
        """The lock held while this leaf's ``.grad`` is read and written (Note
        [Concurrent accumulation])."""
        return _lock_of(self.variable)

    def apply(self, grads: list[Any]) -> Sequence[Any]:
        grad = grads[0]
        var = self._variable()
        if grad is None or var is None:  # a leaf that is gone has no .grad to add to
            return ()
        if grad._dtype is not var._dtype:
            # PyTorch's validate_outputs: a leaf gets a gradient of its own dtype (a
            # formula run under autocast, backward called inside the region, gives its
            # products in the lower precision).
            grad = grad.to(var._dtype)
        enabled = _grad_mode.state.grad_enabled
        with _LOCK_POOL[(id(var) >> 4) & 63]:  # _lock_of, inline
            old = var.grad
            if old is None:
                # Detached unless building a higher-order graph (PyTorch's rule); its own
                # copy unless it can be stolen (Note [Stealing gradients]).
                if enabled:
                    var.grad = _clone_obeying_layout(grad, var)
                elif fastpaths.ENABLED and _stealable(grad, var):
                    var.grad = (
                        grad if grad.grad_fn is None and not grad.requires_grad else grad.detach()
                    )
                elif (
                    fastpaths.ENABLED
                    and grad._base is not None
                    and (base := _whole_view_base(grad, var)) is not None
                ):
                    var.grad = (
                        base if base.grad_fn is None and not base.requires_grad else base.detach()
                    )
                else:
                    var.grad = _clone_obeying_layout(grad.detach(), var)
            elif enabled:
                # Building a higher-order graph: a new tensor whose history includes both.
                var.grad = old + grad
            else:
                # PyTorch adds into the existing ``.grad`` in place (its Case 2.3): a
                # reference to it taken earlier sees the total, and an optimizer that
                # holds the tensor keeps working.  Shared or not, as in PyTorch.
                old.add_(grad)
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
        for hook in getattr(node._variable(), "_hooks", None) or ():
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
    roots = ()  # the caller's list still holds the root gradients; we need not

    # Where gradients are captured: (node, output_nr) -> index into ``inputs``.
    captures: dict[tuple[Node, int], int] = {}
    for i, t in enumerate(inputs or ()):
        node = _edge_node(t)
        if node is None:
            raise RuntimeError(
                f"One of the differentiated Tensors (input {i}) does not require grad"
            )
        captures[(node, t._output_nr if t.grad_fn is not None else 0)] = i
    captured: list[Any] = [None] * len(inputs or ())

    # Count each node's incoming edges among the nodes reachable from the roots
    # (iteratively: graphs of any depth).  One entry per distinct root node: two roots
    # on one node (``a, b = x.split(2)``) must not count its edges twice.  Nodes are
    # dict keys by identity.
    start = list(dict.fromkeys(n for n, _, _ in root_edges))
    deps: dict[Node, int] = dict.fromkeys(start, 0)
    stack = list(start)
    order: list[Node] = []
    keep_order = inputs is not None
    while stack:
        n = stack.pop()
        if keep_order:
            order.append(n)
        for nxt, _ in n.next_functions:
            if nxt is not None:
                count = deps.get(nxt)
                if count is None:
                    deps[nxt] = 1
                    stack.append(nxt)
                else:
                    deps[nxt] = count + 1
    needed: set[Node] | None = None
    if inputs is not None:
        # A node is needed if a wanted node is reachable from it: sweep in reverse
        # topological order (children before parents) via sequence numbers.
        wanted = {node for node, _ in captures}
        needed = set()
        for n in sorted(order, key=_seq_of):
            if n in wanted or any(k in needed for k, _ in n.next_functions if k is not None):
                needed.add(n)
    del order

    buffers: dict[Node, list[Any]] = {}
    for node, nr, g in root_edges:
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._num_outputs
        buf[nr] = _sum(buf[nr], g)
    ready = [(-n.seq, n) for n in start if deps[n] == 0]
    heapq.heapify(ready)
    del root_edges, start
    state = _grad_mode.state  # grad mode is create_graph while formulas run
    previous = state.grad_enabled
    _grad_mode.set_grad_mode(create_graph)
    try:
        _run(ready, deps, buffers, captures, captured, needed, accumulate, retain_graph)
    finally:
        _grad_mode.set_grad_mode(previous)
    return captured


def _seq_of(n: Node) -> int:
    """A key that sorts children before parents: sequence numbers grow with recording,
    and accumulators, made once a leaf (Note [One accumulator a leaf]), have no children."""
    return -1 if type(n) is AccumulateGrad else n.seq


def _run(
    ready: list[tuple[int, Node]],
    deps: dict[Node, int],
    buffers: dict[Node, list[Any]],
    captures: dict[tuple[Node, int], int],
    captured: list[Any],
    needed: set[Node] | None,
    accumulate: bool,
    retain_graph: bool,
) -> None:
    """The engine loop: run ready nodes, latest first (PyTorch's order), routing each
    node's input gradients to the buffers of the nodes they flow into."""
    if not captures and needed is None and accumulate:
        _run_all(ready, deps, buffers, retain_graph)
        return
    pop, push = heapq.heappop, heapq.heappush
    while ready:
        node = pop(ready)[1]
        grads = buffers.pop(node, None)
        buf: list[Any] | None
        if grads is None:
            grads = [None] * node._num_outputs
        run = needed is None or node in needed
        if run and (
            node._pre_hooks is not None
            or node._retain_hooks is not None
            or (type(node) is AccumulateGrad and getattr(node._variable(), "_hooks", None))
        ):
            grads = _prepare_grads(node, grads)  # tensor hooks come before capture
        if captures:
            for nr, g in enumerate(grads):
                slot = captures.get((node, nr))
                if slot is not None:
                    captured[slot] = _sum(captured[slot], g)
        edges = node.next_functions
        if run and (accumulate or type(node) is not AccumulateGrad):
            for g in grads:
                if g is not None:
                    g = None  # no reference of ours may stay (Note [Stealing gradients])
                    grad_inputs = node.apply(grads)
                    break
            else:
                grad_inputs = ()
            if node._post_hooks:
                for hook in node._post_hooks:
                    hook(tuple(grad_inputs), tuple(grads))
            if not retain_graph:
                node.release()
        else:
            grad_inputs = ()
        grads = None
        n_in = len(grad_inputs)
        for i, (nxt, nr) in enumerate(edges):
            if nxt is None:
                continue
            if i < n_in:
                g = grad_inputs[i]
                if g is not None:
                    buf = buffers.get(nxt)
                    if buf is None:
                        buf = buffers[nxt] = [None] * nxt._num_outputs
                        buf[nr] = g
                    else:
                        buf[nr] = _sum(buf[nr], g)
            count = deps[nxt] - 1
            deps[nxt] = count
            if count == 0:
                push(ready, (-nxt.seq, nxt))
        g = grad_inputs = buf = None


# Note [The engine's common loop]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``backward()`` (every training step) captures nothing, runs every node and accumulates
# into ``.grad``: ``_run_all`` is ``_run`` with those three cases taken out, and routes
# the gradients of a node whose formula returned one per edge (all of them do) with one
# ``zip``.  It keeps ``_run``'s order, hooks, stealing and release exactly; the engine
# tests run both loops (``autograd.grad`` and ``backward(inputs=...)`` take ``_run``).
def _run_all(
    ready: list[tuple[int, Node]],
    deps: dict[Node, int],
    buffers: dict[Node, list[Any]],
    retain_graph: bool,
) -> None:
    pop, push = heapq.heappop, heapq.heappush
    take, find = buffers.pop, buffers.get
    accumulate_grad = AccumulateGrad
    while ready:
        node = pop(ready)[1]
        grads = take(node, None)
        if grads is None:
            grads = [None] * node._num_outputs
        if (
            node._pre_hooks is not None
            or node._retain_hooks is not None
            or (type(node) is accumulate_grad and getattr(node._variable(), "_hooks", None))
        ):
            grads = _prepare_grads(node, grads)
        for g in grads:
            if g is not None:
                g = None  # no reference of ours may stay (Note [Stealing gradients])
                grad_inputs = node.apply(grads)
                break
        else:
            grad_inputs = ()
        if node._post_hooks:
            for hook in node._post_hooks:
                hook(tuple(grad_inputs), tuple(grads))
        grads = None
        if not retain_graph and type(node) is not accumulate_grad:
            node.release()
        edges = node.next_functions
        if not edges:  # an AccumulateGrad
            continue
        if len(grad_inputs) != len(edges):
            grad_inputs = (*grad_inputs, *([None] * (len(edges) - len(grad_inputs))))
        for (nxt, nr), g in zip(edges, grad_inputs, strict=False):  # extras: as _run
            if nxt is None:
                continue
            if g is not None:
                buf = find(nxt)
                if buf is None:
                    buf = buffers[nxt] = [None] * nxt._num_outputs
                    buf[nr] = g
                else:
                    buf[nr] = _sum(buf[nr], g)
            count = deps[nxt] - 1
            deps[nxt] = count
            if count == 0:
                push(ready, (-nxt.seq, nxt))
        g = grad_inputs = buf = None


def _edge_node(t: Any) -> Node | None:
    """The node gradients of ``t`` flow into: its grad_fn, or its AccumulateGrad."""
    if t.grad_fn is not None:
        return t.grad_fn  # type: ignore[no-any-return]
    if t.requires_grad:
        return grad_accumulator(t)
    return None


_ACCUMULATOR_LOCK = threading.Lock()  # Note [Concurrent accumulation]
_new = object.__new__


# Note [One accumulator a leaf]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A leaf's AccumulateGrad is made once, the first time a graph reaches the leaf, and the
# leaf keeps it (``_grad_accumulator``) for life; the node holds the leaf weakly, so the
# two form no reference cycle.  PyTorch keeps it the other way round (a weak pointer in
# the leaf, the leaf held by the node), so every graph over a leaf whose last graph died
# makes a new node: a lock, an object and a weak reference, ~1 us in Python, on every
# training step and every recorded op on a leaf (ci/bench/autograd.py).  What a user can
# see of the difference: the node is the same object from graph to graph (as it is in
# PyTorch for as long as anyone holds it, which is what DDP-style code that hooks it
# does), and a graph does not keep a leaf alive by itself (a gradient reaching a leaf
# nobody holds any more is dropped; nothing could read it).  Its sequence number puts it
# before every other node that is ready at the same time, as PyTorch's (UINT64_MAX), the
# accumulators among themselves in the order they were made.
_ACCUMULATOR_SEQ = 1 << 62


def grad_accumulator(t: Any) -> AccumulateGrad:
    """The one AccumulateGrad node of a leaf (Note [One accumulator a leaf])."""
    acc = t._grad_accumulator
    if acc is None:
        with _ACCUMULATOR_LOCK:  # one accumulator a leaf, whichever thread asks first
            acc = t._grad_accumulator
            if acc is None:  # AccumulateGrad(t), without its two __init__ frames
                acc = _new(AccumulateGrad)
                acc.next_functions = ()
                acc.seq = _ACCUMULATOR_SEQ + new_seq()
                acc._variable = weakref.ref(t)
                t._grad_edge = (acc, 0)  # the edge to it, made once (Note [Generated recording])
                t._grad_accumulator = acc
    return acc  # type: ignore[no-any-return]

"""``autograd.Function``: user-defined forward and backward, and ``register_autograd``.

Imports: the standard library, ``dispatch`` and sibling autograd modules.

Both PyTorch styles work: ``forward(ctx, *args)``, or ``forward(*args)`` plus
``setup_context(ctx, inputs, output)``.  The forward runs under ``no_grad``; if
an input requires grad (and grad mode is on), the outputs get a ``BackwardNode``
that calls ``backward(ctx, *grads)``.  ``register_autograd`` builds an operator's
Autograd kernel from the same pieces.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from dispatch import REQUIRES_GRAD_BIT, DispatchKeySet, OpOverload, ops

from . import _grad_mode
from ._graph import Node, _edge_node
from ._layer import AFTER_AUTOGRAD
from ._views import _is_differentiable, _outputs, mark_requires_grad

__all__ = ["Function", "FunctionCtx", "autograd_kernel_from_backward"]


def _is_tensor(v: Any) -> bool:
    return getattr(v, "_dispatch_bits", None) is not None


# Note [Saved outputs]
# ~~~~~~~~~~~~~~~~~~~~
# A Function may save its own output (``ctx.save_for_backward(out)``: exp, tanh...).
# Kept as is, that makes a reference cycle: node -> ctx -> output -> grad_fn = node, so
# the whole graph (and its arrays) lives until the cycle collector runs.  PyTorch's
# SavedVariable stores an output of its own node without the grad_fn ("is_output") and
# attaches the node again on unpack; we do the same: once the outputs are marked
# (``_attach``), each saved output becomes a ``_SavedOutput`` holding a detached alias
# (same data, same version counter, no history), and ``saved_tensors`` hands out a new
# tensor whose grad_fn is the node, found through a weak reference (the node is alive
# while its backward runs), so double backward still reaches the node.  The node keeps
# only the outputs' shapes and dtypes (to materialize zero gradients), never the outputs.
# OpNode does the same for built-in formulas (``_layer._save_outputs``).
class _SavedOutput:
    """A saved tensor that is an output of the node itself (Note [Saved outputs])."""

    __slots__ = ("alias", "output_nr")

    def __init__(self, t: Any, output_nr: int) -> None:
        self.alias = t.detach()  # shares data and version counter, holds no grad_fn
        self.output_nr = output_nr

    def unpack(self, node: Node | None) -> Any:
        t = self.alias.detach()
        if node is not None:
            t.grad_fn = node
            t._output_nr = self.output_nr
            t._dispatch_bits |= REQUIRES_GRAD_BIT
        return t


class FunctionCtx:
    """What ``forward``/``setup_context`` leave for ``backward``."""

    def __init__(self) -> None:
        self._saved: tuple[Any, ...] = ()
        self._node: weakref.ref[Node] | None = None  # set by _attach: Note [Saved outputs]
        self._versions: tuple[int, ...] = ()
        self._freed = False
        self.needs_input_grad: tuple[bool, ...] = ()
        self.dirty: tuple[Any, ...] = ()
        self.non_differentiable: tuple[Any, ...] = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors: Any) -> None:
        self._saved = tensors
        self._versions = tuple(t._version if t is not None else 0 for t in tensors)

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        if self._freed:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Specify retain_graph=True if you "
                "need to backward through the graph a second time."
            )
        node = self._node() if self._node is not None else None
        tensors = []
        for t, v in zip(self._saved, self._versions, strict=True):
            if type(t) is _SavedOutput:
                t = t.unpack(node)
            if t is not None and t._version != v:
                raise RuntimeError(
                    f"one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: a saved tensor of shape {list(t.shape)} is at "
                    f"version {t._version}; expected version {v} instead."
                )
            tensors.append(t)
        return tuple(tensors)

    def mark_dirty(self, *tensors: Any) -> None:
        self.dirty = tensors

    def mark_non_differentiable(self, *tensors: Any) -> None:
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value


OutputSpec = tuple[list[int], Any, Any] | None  # shape, dtype, device; None: not differentiable


class BackwardNode(Node):
    """Calls a user ``backward(ctx, *grads)``; its gradients map onto the inputs."""

    __slots__ = ("backward_fn", "ctx", "fn_name", "input_is_tensor", "outs")

    def __init__(
        self,
        fn_name: str,
        backward_fn: Callable[..., Any],
        ctx: FunctionCtx,
        inputs: Sequence[Any],
        outs: tuple[Any, ...],
    ) -> None:
        super().__init__(
            tuple(
                (_edge_node(t), t._output_nr if t.grad_fn is not None else 0)
                if _is_tensor(t) and t.requires_grad
                else (None, 0)
                for t in inputs
            )
        )
        self.fn_name = fn_name
        self.backward_fn = backward_fn
        self.ctx = ctx
        # What zero gradients need, not the outputs themselves (Note [Saved outputs]).
        self.outs: tuple[OutputSpec, ...] = tuple(
            (list(o.shape), o.dtype, o.device) if _is_differentiable(o) else None for o in outs
        )
        self._num_outputs = len(outs)

    def name(self) -> str:
        return f"{self.fn_name}Backward"

    def apply(self, grads: list[Any]) -> Sequence[Any]:
        self.check_not_freed()
        if self.ctx.materialize_grads:
            grads = [
                g if g is not None or spec is None else _zeros(spec)
                for g, spec in zip(grads, self.outs, strict=True)
            ]
        result = self.backward_fn(self.ctx, *grads)
        result = result if isinstance(result, tuple) else (result,)
        n = len(self.next_functions)
        if len(result) < n:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {n}, got {len(result)})"
            )
        return [
            g if self.next_functions[i][0] is not None else None for i, g in enumerate(result[:n])
        ]

    def release(self) -> None:
        super().release()
        self.ctx._freed = True
        self.ctx._saved = ()
        self.outs = ()


def _zeros(spec: tuple[list[int], Any, Any]) -> Any:
    shape, dtype, device = spec
    return ops.core.zeros.default(shape, dtype=dtype, device=device)


def _attach(
    name: str, backward: Callable[..., Any], ctx: FunctionCtx, inputs: Sequence[Any], out: Any
) -> Any:
    outs = _outputs(out)
    node = BackwardNode(name, backward, ctx, inputs, outs)
    mark_requires_grad(out, node, skip=frozenset(id(t) for t in ctx.non_differentiable))
    # Saved outputs of this node lose their grad_fn reference (Note [Saved outputs]).
    mine = {id(t): nr for nr, t in enumerate(outs) if getattr(t, "grad_fn", None) is node}
    if any(id(t) in mine for t in ctx._saved if t is not None):
        ctx._saved = tuple(
            _SavedOutput(t, mine[id(t)]) if t is not None and id(t) in mine else t
            for t in ctx._saved
        )
    ctx._node = weakref.ref(node)
    # PyTorch drops these after forward; kept, a dirty output would be a cycle too.
    ctx.dirty = ctx.non_differentiable = ()
    return out


class Function:
    """A differentiable function with a hand-written backward.

    >>> import tensor as tt
    >>> class Cube(Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x * x
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         (x,) = ctx.saved_tensors
    ...         return grad * 3 * x * x
    >>> x = tt.tensor(2.0, requires_grad=True)
    >>> Cube.apply(x).backward(); x.grad
    tensor(12.)
    """

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("a Function subclass must define forward")

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> Any:
        raise NotImplementedError("a Function subclass must define backward to be differentiated")

    setup_context: Any = None

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(_is_tensor(a) and a.requires_grad for a in args)
        separate = cls.setup_context is not None and cls.setup_context is not Function.setup_context
        with _grad_mode.no_grad():
            out = cls.forward(*args, **kwargs) if separate else cls.forward(ctx, *args, **kwargs)
        # An input returned as is becomes a new tensor sharing its data (PyTorch makes a view).
        ids = {id(a) for a in args if _is_tensor(a)}
        dirty = {id(t) for t in ctx.dirty}
        outs = _outputs(out)
        if any(id(t) in ids and id(t) not in dirty for t in outs):
            fixed = [t.detach() if id(t) in ids and id(t) not in dirty else t for t in outs]
            out = type(out)(fixed) if isinstance(out, (tuple, list)) else fixed[0]
        if separate:
            cls.setup_context(ctx, args, out)
        if _grad_mode.state.grad_enabled and any(ctx.needs_input_grad):
            _attach(cls.__name__, cls.backward, ctx, args, out)
        return out


def autograd_kernel_from_backward(
    op: OpOverload,
    backward: Callable[..., Any],
    setup_context: Callable[..., Any] | None,
) -> Callable[..., Any]:
    """The Autograd kernel ``register_autograd`` installs for an operator."""
    schema = op.schema
    names = [a.name for a in schema.arguments]
    fn_name = op.name.split("::", 1)[1].split(".", 1)[0]

    def kernel(keyset: DispatchKeySet, /, *args: Any, **kwargs: Any) -> Any:
        out = op.redispatch(keyset & AFTER_AUTOGRAD, *args, **kwargs)
        if not _grad_mode.state.grad_enabled:
            return out
        bound = schema.bind(args, kwargs, op_name=op.name)
        inputs = [bound[n] for n in names]
        if not any(_is_tensor(t) and t.requires_grad for t in inputs):
            return out
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(_is_tensor(t) and t.requires_grad for t in inputs)
        if setup_context is not None:
            setup_context(ctx, tuple(inputs), out)
        return _attach(fn_name, backward, ctx, inputs, out)

    return kernel

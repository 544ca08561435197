"""The autograd layer: kernels at the Autograd keys that record graph nodes.

Imports: the standard library, ``dispatch`` and sibling autograd modules.

Every operator with a formula gets one kernel, made once by ``autograd_kernel``
and registered at the ``Autograd`` alias key (so every backend shares it) as a
grad-only kernel (Note [Grad-only kernels] in ``dispatch/_operator.py``): a call
where no argument requires grad never enters it.  When one does, the kernel runs
the operator below autograd, and if grad mode is on, binds the call to the
schema (defaults filled), saves what the formula needs with the tensors'
versions, and makes the floating-point outputs require grad with an ``OpNode``
as their ``grad_fn``.

Operators without a formula get PyTorch's default "warn" autograd fallback:
their outputs get a node that warns at backward and passes no gradient on.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from dispatch import REQUIRES_GRAD_BIT, DispatchKey, DispatchKeySet, Library, OpOverload, ops

from . import _grad_mode
from ._graph import Node, _edge_node

__all__ = [
    "OpNode",
    "autograd_kernel",
    "mark_requires_grad",
    "register_fallback",
    "zeros_like",
]

AFTER_AUTOGRAD = DispatchKeySet.full_after(DispatchKey.AutogradOther)
Formula = Callable[[Any, dict[str, Any], Any], Sequence[Any]]


def _is_differentiable(t: Any) -> bool:
    """A tensor whose dtype can carry gradients (floating point or complex)."""
    if getattr(t, "_dispatch_bits", None) is None:
        return False
    d = t.dtype
    return d.is_floating_point or d.is_complex


def _outputs(out: Any) -> tuple[Any, ...]:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def mark_requires_grad(out: Any, node: Node, skip: frozenset[int] = frozenset()) -> None:
    """Make the differentiable outputs of a call require grad, with ``node`` as grad_fn
    (outputs whose ``id`` is in ``skip`` are left alone)."""
    for nr, t in enumerate(_outputs(out)):
        if _is_differentiable(t) and id(t) not in skip:
            t.grad_fn = node
            t._output_nr = nr
            t._requires_grad = True
            t._dispatch_bits |= REQUIRES_GRAD_BIT


def _collect(schema: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The tensor arguments in schema order, lists flattened (None kept for Tensor?)."""
    found: list[Any] = []
    for index, name, kind in schema.tensor_arg_indices:
        value = args[index] if index < len(args) else kwargs.get(name)
        if kind == "tensor_list":
            found.extend(value or ())
        else:
            found.append(value)
    return found


class OpNode(Node):
    """The backward of one operator call: its formula applied to the saved call."""

    __slots__ = ("bound", "formula", "op", "out", "versions", "_num_outputs")

    def __init__(
        self,
        op: OpOverload,
        formula: Formula,
        bound: dict[str, Any],
        out: Any,
        inputs: list[Any],
    ) -> None:
        super().__init__(
            tuple(
                (_edge_node(t), t._output_nr if t.grad_fn is not None else 0)
                if t is not None and t.requires_grad
                else (None, 0)
                for t in inputs
            )
        )
        self.op = op
        self.formula = formula
        self.bound = bound
        self.out = out
        self._num_outputs = len(_outputs(out))
        self.versions = [(t, t._version) for t in inputs if t is not None]

    @property
    def num_outputs(self) -> int:
        return self._num_outputs

    def name(self) -> str:
        base = self.op.name.split("::", 1)[1].split(".", 1)[0]
        return "".join(part.capitalize() for part in base.split("_")) + "Backward0"

    def apply(self, grads: list[Any]) -> Sequence[Any]:
        self.check_not_freed()
        for t, version in self.versions:
            if t._version != version:
                raise RuntimeError(
                    f"one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: [{t.dtype.name} tensor of shape {list(t.shape)}], "
                    f"which is an input of {self.name()} ({self.op.name}), is at version "
                    f"{t._version}; expected version {version} instead. Hint: the operation "
                    f"that modified it came after this one; clone() the tensor before "
                    f"modifying it in place."
                )
        outs = _outputs(self.out)
        if self._num_outputs == 1:
            grad = grads[0]
        else:
            # Outputs that got no gradient contribute zeros (PyTorch materializes them).
            grad = tuple(
                g if g is not None or not _is_differentiable(o) else zeros_like(o)
                for g, o in zip(grads, outs, strict=True)
            )
        result = self.formula(grad, self.bound, self.out)
        return list(result)

    def release(self) -> None:
        super().release()
        self.bound = {}
        self.out = None
        self.versions = []


def zeros_like(t: Any) -> Any:
    return ops.core.zeros_like(t)


def autograd_kernel(op: OpOverload, formula: Formula) -> Callable[..., Any]:
    """The Autograd-key kernel of ``op`` (with_keyset, grad-only)."""
    schema = op.schema
    redispatch = op.redispatch
    grad_state = _grad_mode.state

    def kernel(keyset: DispatchKeySet, /, *args: Any, **kwargs: Any) -> Any:
        out = redispatch(keyset & AFTER_AUTOGRAD, *args, **kwargs)
        if not grad_state.enabled:
            return out
        inputs = _collect(schema, args, kwargs)
        if not any(t is not None and t.requires_grad for t in inputs):
            return out
        bound = schema.bind(args, kwargs, op_name=op.name)
        mark_requires_grad(out, OpNode(op, formula, bound, out, inputs))
        return out

    kernel.__qualname__ = kernel.__name__ = f"autograd_{op.name.split('::')[1].replace('.', '_')}"
    return kernel


class _NotImplementedNode(Node):
    """PyTorch's "warn" autograd fallback node: warns at backward, passes nothing on."""

    __slots__ = ("op",)

    def __init__(self, op: OpOverload, inputs: list[Any]) -> None:
        super().__init__(
            tuple(
                (_edge_node(t), t._output_nr if t.grad_fn is not None else 0)
                if t is not None and t.requires_grad
                else (None, 0)
                for t in inputs
            )
        )
        self.op = op

    def name(self) -> str:
        return "NotImplemented"

    def apply(self, grads: list[Any]) -> Sequence[Any]:
        warnings.warn(
            f"{self.op.name}: an autograd kernel was not registered to the Autograd key(s) but "
            f"we are trying to backprop through it. This may lead to silently incorrect "
            f"behavior. This behavior is deprecated and will be removed in a future version. "
            f"Please register a formula for this operator (register_autograd) if it is "
            f"differentiable.",
            UserWarning,
            stacklevel=2,
        )
        return [None] * len(self.next_functions)


def _warn_fallback(keyset: DispatchKeySet, op: OpOverload, /, *args: Any, **kwargs: Any) -> Any:
    # A backend fallback sees every tensor type: use only the dispatch protocol here.
    out = op.redispatch(keyset & AFTER_AUTOGRAD, *args, **kwargs)
    if _grad_mode.state.enabled:
        inputs = _collect(op.schema, args, kwargs)
        if any(getattr(t, "_dispatch_bits", 0) & REQUIRES_GRAD_BIT for t in inputs):
            mark_requires_grad(out, _NotImplementedNode(op, inputs))
    return out


_FALLBACK_LIB = Library("_", "IMPL")


def register_fallback() -> None:
    """Replace the dispatcher's plain autograd fallback with PyTorch's "warn" one."""
    _FALLBACK_LIB.fallback(
        _warn_fallback, "Autograd", with_keyset=True, allow_override=True, grad_only=True
    )

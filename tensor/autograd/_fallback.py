"""The autograd fallback: what an operator without an autograd kernel records.

Imports: ``warnings``, ``dispatch`` and sibling autograd modules.

PyTorch's "warn" fallback (``torch/csrc/autograd/autograd_not_implemented_fallback``):
an operator with no kernel at its Autograd key still runs; when an input requires
grad its outputs get a node that warns at backward time and passes no gradient on,
and out= and in-place forms are refused where PyTorch refuses them.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from dispatch import (
    REQUIRES_GRAD_BIT,
    DispatchKey,
    DispatchKeySet,
    Library,
    OpOverload,
    exclude_keys,
)

from . import _grad_mode
from ._graph import Node
from ._layer import _WITH_FORMULA, AFTER_AUTOGRAD, _collect
from ._views import _edge, _is_differentiable, _outputs

__all__ = ["register_fallback"]


def _warn_not_implemented(op_name: str) -> None:
    warnings.warn(
        f"{op_name}: an autograd kernel was not registered to the Autograd key(s) but we are "
        f"trying to backprop through it. This may lead to silently incorrect behavior. This "
        f"behavior is deprecated and will be removed in a future version. If the operator is "
        f"differentiable, register a formula for it (register_autograd); if it is not, "
        f"register fallthrough_kernel at its Autograd key, which also silences this warning.",
        UserWarning,
        stacklevel=3,
    )


class _NotImplementedNode(Node):
    """PyTorch's "warn" autograd fallback node: warns at backward, passes nothing on."""

    __slots__ = ("op",)

    def __init__(self, op: OpOverload, inputs: list[Any]) -> None:
        super().__init__(tuple(_edge(t) for t in inputs))
        self.op = op

    def name(self) -> str:
        return "NotImplemented"

    def apply(self, grads: list[Any]) -> Sequence[Any]:
        _warn_not_implemented(self.op.name)
        return [None] * len(self.next_functions)


class _WarnHook:
    """A pre-hook on the node of a fallback output that kept its kernel's history: warns
    when a gradient for that output arrives (PyTorch's ``register_hook`` in the fallback)."""

    __slots__ = ("op_name", "output_nr")

    def __init__(self, op_name: str, output_nr: int) -> None:
        self.op_name, self.output_nr = op_name, output_nr

    def __call__(self, grads: tuple[Any, ...]) -> None:
        if grads[self.output_nr] is not None:
            _warn_not_implemented(self.op_name)


# Note [Autograd fallback]
# ~~~~~~~~~~~~~~~~~~~~~~~~
# An operator with no kernel at its Autograd key gets PyTorch's "warn" fallback
# (``basicAutogradNotImplementedFallbackImpl``, torch/csrc/autograd/
# autograd_not_implemented_fallback.cpp).  Its kernel below autograd runs as is, so a
# kernel made of tensor operators records their history, and PyTorch keeps it: an output
# that comes back requiring grad keeps its grad_fn and only gets a hook that warns when a
# gradient reaches it, so ``backward()`` reaches the inputs.  An output that comes back
# without history (a kernel that computed on arrays) gets a node that warns and passes no
# gradient on; a mutable (``Tensor(a!)``) output is then left alone, as PyTorch does.
# Operators made by ``custom_op`` are different in PyTorch: custom_op registers its own
# Autograd kernel, which runs the kernel below autograd (no history inside) and whose
# backward raises until ``register_autograd``.  Ours has no such kernel (dispatch's
# custom_op would have to register it), so the fallback runs custom ops below autograd and
# gives them the warning node.
def _warn_fallback(keyset: DispatchKeySet, op: OpOverload, /, *args: Any, **kwargs: Any) -> Any:
    # A backend fallback sees every tensor type: use only the dispatch protocol here.
    if _grad_mode.state.grad_enabled:
        inputs = _collect(op.schema, args, kwargs)
        if any(getattr(t, "_dispatch_bits", 0) & REQUIRES_GRAD_BIT for t in inputs):
            _refuse_out(op)
            # Edges first: the kernel may write to an input in place (PyTorch's order too).
            node = _NotImplementedNode(op, inputs)
            if "custom_op" in op.tags:
                with exclude_keys(*_AUTOGRAD_KEYS):
                    out = op.redispatch(keyset & AFTER_AUTOGRAD, *args, **kwargs)
            else:
                out = op.redispatch(keyset & AFTER_AUTOGRAD, *args, **kwargs)
            _fallback_history(op, out, node)
            return out
    return op.redispatch(keyset & AFTER_AUTOGRAD, *args, **kwargs)


# The autograd keys (AutogradOther and Autograd<backend>): what PyTorch's custom_op kernel
# excludes to run below autograd (``_AutoDispatchBelowAutograd``).
_AUTOGRAD_KEYS = tuple(
    (DispatchKeySet.full() - AFTER_AUTOGRAD) & DispatchKeySet.full_after(DispatchKey.AutocastCPU)
)


def _fallback_history(op: OpOverload, out: Any, node: _NotImplementedNode) -> None:
    """History for the outputs of a fallback call (Note [Autograd fallback])."""
    outs = _outputs(out)
    returns = op.schema.returns
    node._num_outputs = len(outs)
    for nr, t in enumerate(outs):
        if not _is_differentiable(t):
            continue
        mutable = nr < len(returns) and returns[nr].alias_info is not None
        mutable = mutable and returns[nr].alias_info.is_write  # type: ignore[union-attr]
        if t._dispatch_bits & REQUIRES_GRAD_BIT:
            fn = t.grad_fn
            if fn is not None:  # (a leaf returned as is gets no hook: it would stay on it)
                fn.register_prehook(_WarnHook(op.name, t._output_nr))
            base = t._base
            if mutable and base is not None and base.grad_fn is not None:
                # History rebased onto the base by a write through this view: warn there.
                base.grad_fn.register_prehook(_WarnHook(op.name, base._output_nr))
        elif not mutable:
            t.grad_fn = node
            t._output_nr = nr
            t._dispatch_bits |= REQUIRES_GRAD_BIT


def _refuse_out(op: OpOverload) -> None:
    """PyTorch's rule: the out= form of a differentiable operator refuses inputs that
    require grad (the out tensor included)."""
    if op.name.split(".", 1)[0] not in _WITH_FORMULA:
        return
    if any(a.is_write and a.kwarg_only for a in op.schema.arguments):
        name = op.name.split("::", 1)[1].split(".", 1)[0]
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic "
            f"differentiation, but one of the arguments requires grad."
        )


_FALLBACK_LIB = Library("_", "IMPL")


def register_fallback() -> None:
    """Replace the dispatcher's plain autograd fallback with PyTorch's "warn" one."""
    _FALLBACK_LIB.fallback(
        _warn_fallback, "Autograd", with_keyset=True, allow_override=True, grad_only=True
    )

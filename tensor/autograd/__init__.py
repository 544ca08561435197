"""Autograd: grad mode, the graph engine, ``Function``, formulas and ``gradcheck``.

Imports: ``dispatch`` and this package's modules; ``register()`` (called by
``tensor`` once the ``core`` operators exist) puts one grad-only kernel per
operator with a formula at the ``Autograd`` key, and PyTorch's "warn" fallback
behind the rest.
"""

from dispatch import Library, OpOverload, fallthrough_kernel, ops, set_autograd_kernel_factory

from ..optable import FORMULAS, NOT_DIFFERENTIABLE, sum_to
from ._backward import backward, grad
from ._fallback import register_fallback
from ._function import Function, FunctionCtx, autograd_kernel_from_backward
from ._grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from ._gradcheck import GradcheckError, gradcheck, gradgradcheck
from ._graph import AccumulateGrad, Node, grad_accumulator
from ._layer import OpNode, autograd_kernel

__all__ = [
    "FORMULAS",
    "AccumulateGrad",
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "Node",
    "OpNode",
    "backward",
    "enable_grad",
    "grad",
    "grad_accumulator",
    "gradcheck",
    "gradgradcheck",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "register",
    "set_grad_enabled",
    "sum_to",
]

_LIB: Library | None = None


def register() -> None:
    """Register the autograd kernels of the ``core`` operators (once)."""
    global _LIB
    if _LIB is not None:
        return
    _LIB = Library("core", "IMPL")
    for name, formula in FORMULAS.items():
        base, _, overload = name.partition(".")
        op: OpOverload = getattr(getattr(ops.core, base), overload or "default")
        _LIB.impl(name, autograd_kernel(op, formula), "Autograd", with_keyset=True, grad_only=True)
    for name in NOT_DIFFERENTIABLE:
        _LIB.impl(name, fallthrough_kernel, "Autograd")
    register_fallback()
    set_autograd_kernel_factory(autograd_kernel_from_backward)
    from . import _lanes  # imports tensor._tensor, which imports this package

    _lanes.install()

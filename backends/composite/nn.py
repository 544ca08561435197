"""Kernels of the nn functions written with other operators.

Imports: ``dispatch``.

CompositeImplicitAutograd: ``dropout`` is ``native_dropout`` when training (else the
input itself, as in PyTorch), ``max_pool2d`` is ``max_pool2d_with_indices``'s first
result and ``linear`` is ``matmul`` (``addmm`` for a matrix with a bias), so autograd
differentiates them through their decomposition.  CompositeExplicitAutograd: the two
losses, a few elementwise operators and a reduction run below autograd, with formulas
of their own (Note [Explicit composites]).  ``register(lib)`` adds them to
``backends.composite``'s library.
"""

from __future__ import annotations

from typing import Any

from dispatch import DispatchKey, DispatchKeySet, Library, _tls, exclude_keys, ops

__all__ = ["EXPLICIT", "KERNELS", "register"]

core = ops.core
_BELOW_INPLACE = DispatchKeySet.full_after(DispatchKey.ADInplaceOrView).bits


def _reduce(loss: Any, reduction: int, op: str) -> Any:
    if reduction == 1:
        return core.mean.default(loss)
    if reduction == 2:
        return core.sum.default(loss)
    if reduction == 0:
        return loss
    raise ValueError(f"{op}(): {reduction!r} is not a valid value for reduction (0, 1 or 2)")


def dropout(input: Any, p: float, train: bool) -> Any:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout(): dropout probability has to be between 0 and 1, but got {p}")
    if not train or p == 0.0:
        return input
    if p == 1.0:  # PyTorch: input times a zero of its own dtype, for every dtype
        return core.mul.Tensor(input, core.zeros_like.default(input))
    return core.native_dropout.default(input, p, train)[0]


def max_pool2d(
    self: Any, kernel_size: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1,
    ceil_mode: bool = False,
) -> Any:  # fmt: skip
    return core.max_pool2d_with_indices.default(
        self, kernel_size, stride, padding, dilation, ceil_mode
    )[0]


def linear(input: Any, weight: Any, bias: Any = None) -> Any:
    ndim = input.ndim
    if ndim == 2:  # PyTorch's graph: AddmmBackward0 (or MmBackward0) over TBackward0
        # The entries for exactly their tensors (Note [Specialised call paths]).
        if bias is not None:
            return core.addmm.default.call3(bias, input, core.t.default.call1(weight))
        if getattr(weight, "ndim", None) == 2:
            return core.mm.default.call2(input, core.t.default.call1(weight))
    elif (
        bias is not None
        and ndim > 2
        and bias.ndim == 1
        and getattr(weight, "ndim", None) == 2
        and input.is_contiguous()
    ):
        # PyTorch's _flatten_nd_linear: a contiguous batch of rows (a transformer's [B, T,
        # C]) is one addmm of its rows, the bias in the product's pass (Note [Linear by
        # gemm]), viewed back: ViewBackward0 over AddmmBackward0, as PyTorch records it.
        sizes = list(input.shape)
        rows = 1
        for n in sizes[:-1]:
            rows *= n
        flat = core.view.default.call2(input, [rows, sizes[-1]])  # contiguous: a view
        out = core.addmm.default.call3(bias, flat, core.t.default.call1(weight))
        return core.view.default.call2(out, sizes[:-1] + [out.shape[1]])
    out = core.matmul.default(input, core.t.default(weight))
    return out if bias is None else core.add.Tensor(out, bias)


def _linear_lower_precision(bits: int, to: Any, input: Any, weight: Any, bias: Any = None) -> Any:
    """Note [Autocast product fast path]: ``linear`` of its arguments cast to ``to``, when
    it is the addmm case and ``t`` and ``addmm`` are the built-in kernels at ``bits`` (the
    key set below autocast); None otherwise."""
    if bias is None or getattr(getattr(input, "_array", None), "ndim", 0) != 2:
        return None
    t, addmm = core.t.default, core.addmm.default
    # t's backend kernel (below its ADInplaceOrView kernel, which only marks the view).
    if not getattr(t.below(bits & _BELOW_INPLACE & t._state.mask), "plain_transpose", False):
        return None
    fused = getattr(addmm.below(bits & addmm._state.mask), "linear_lower_precision", None)
    return None if fused is None else fused(bias, input, weight, to)


linear.lower_precision = _linear_lower_precision  # type: ignore[attr-defined]


def _floating(op: str, *tensors: Any) -> None:
    for arg, t in zip(("self", "target"), tensors, strict=False):
        if not t.dtype.is_floating_point:
            raise NotImplementedError(
                f"\"{op}\" not implemented for '{t.dtype.name}' (argument '{arg}'); convert it "
                f"first, e.g. x.float()"
            )


# Note [Explicit composites]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~
# mse_loss and binary_cross_entropy_with_logits are ATen native functions with formulas
# of their own in derivatives.yaml, so PyTorch records one node a call
# (MseLossBackward0, BinaryCrossEntropyWithLogitsBackward0) whose gradient is a closed
# form: ``sigmoid(x) - t`` for the logits, ``2 * (x - t) * grad`` for mse.  Their kernels
# here are written with other operators, as CompositeExplicitAutograd kernels (one for
# every backend), and their formulas are PyTorch's (tensor/optable/nn.py).  Differentiated
# through the decomposition instead, as they were, the logits' gradient was ``1 +
# sigmoid(x) - 1`` in effect: in float32 0 for a logit of -30 (PyTorch 9.4e-14) and 5e-4
# off at -10, the target gradients had the other zero's sign, and the graph showed the
# decomposition's nodes.  The kernel runs its operators below autograd, as PyTorch's
# kernels run below ``AutoDispatchBelowADInplaceOrView``: they record nothing (the node
# is the autograd kernel's).
_BELOW_AUTOGRAD = exclude_keys(
    *(
        (DispatchKeySet.full() - DispatchKeySet.full_after(DispatchKey.AutogradOther))
        & DispatchKeySet.full_after(DispatchKey.AutocastCPU)
    )
)


def mse_loss(self: Any, target: Any, reduction: int = 1) -> Any:
    _floating("mse_loss", self, target)
    return _mse_loss(self, target, reduction)


@_BELOW_AUTOGRAD  # as a decorator, a fresh guard each call: calls may run at once
def _mse_loss(self: Any, target: Any, reduction: int) -> Any:
    diff = core.sub.Tensor(self, target)
    return _reduce(core.mul.Tensor(diff, diff), reduction, "mse_loss")


def _not_differentiable(op: str, **tensors: Any) -> None:
    """PyTorch's ``check_no_requires_grad``: an argument without a formula may not
    require grad while grad mode is on."""
    for name, t in tensors.items():
        if t is not None and t.requires_grad and _tls.state.grad_enabled:
            raise RuntimeError(
                f"The function '{op}' is not differentiable with respect to argument "
                f"'{name}'. This input cannot have requires_grad True."
            )


def binary_cross_entropy_with_logits(
    self: Any, target: Any, weight: Any = None, pos_weight: Any = None, reduction: int = 1
) -> Any:
    _floating("binary_cross_entropy_with_logits", self)
    _not_differentiable("binary_cross_entropy_with_logits", weight=weight, pos_weight=pos_weight)
    return _bce_with_logits(self, target, weight, pos_weight, reduction)


@_BELOW_AUTOGRAD
def _bce_with_logits(self: Any, target: Any, weight: Any, pos_weight: Any, reduction: int) -> Any:
    if tuple(target.shape) != tuple(self.shape):
        raise ValueError(
            f"binary_cross_entropy_with_logits(): Target size ({list(target.shape)}) must be the "
            f"same as input size ({list(self.shape)})"
        )
    # PyTorch's stable form: (1 - t) * x + lw * (log1p(exp(-|x|)) + max(-x, 0)),
    # with lw = 1 + (pos_weight - 1) * t (the gradients are the formula's, Note
    # [Explicit composites]).
    neg = core.neg.default(self)
    softplus_neg = core.add.Tensor(
        core.log1p.default(core.exp.default(core.neg.default(core.abs.default(self)))),
        core.maximum.default(neg, core.zeros_like.default(neg)),
    )
    if pos_weight is not None:
        lw = core.add.Scalar(core.mul.Tensor(core.sub.Scalar(pos_weight, 1), target), 1)
        softplus_neg = core.mul.Tensor(lw, softplus_neg)
    loss = core.add.Tensor(core.mul.Tensor(core.rsub.Scalar(target, 1), self), softplus_neg)
    if weight is not None:
        loss = core.mul.Tensor(loss, weight)
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


KERNELS: dict[str, Any] = {
    "dropout": dropout,
    "max_pool2d": max_pool2d,
    "linear": linear,
}
EXPLICIT: dict[str, Any] = {  # Note [Explicit composites]
    "mse_loss": mse_loss,
    "binary_cross_entropy_with_logits": binary_cross_entropy_with_logits,
}


def register(lib: Library) -> None:
    """Register the kernels above: ``KERNELS`` at CompositeImplicitAutograd, ``EXPLICIT``
    at CompositeExplicitAutograd."""
    for qualname, kernel in KERNELS.items():
        lib.impl(qualname, kernel, "CompositeImplicitAutograd")
    for qualname, kernel in EXPLICIT.items():
        lib.impl(qualname, kernel, "CompositeExplicitAutograd")

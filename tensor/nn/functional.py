"""``tt.nn.functional``: PyTorch's ``torch.nn.functional`` signatures over the core operators.

Imports: ``dispatch`` and ``tensor``'s ``_generated`` (the generated functions) and ``_tensor``.

Each function translates PyTorch's Python conventions (``reduction="mean"``,
``training=``, ``padding_idx=None``, ``return_indices=``, ``dim=None`` for
softmax) to the ATen operator it calls (``cross_entropy_loss``,
``native_dropout``, ``embedding``, ``max_pool2d_with_indices`` ...).

>>> import tensor as tt
>>> import tensor.nn.functional as F
>>> F.softmax(tt.tensor([[1.0, 1.0]]), dim=1).tolist()
[[0.5, 0.5]]
>>> F.cross_entropy(tt.tensor([[0.0, 0.0]]), tt.tensor([1])).item()  # log(2)
0.6931471824645996
"""

from __future__ import annotations

import warnings
from typing import Any

from dispatch import ops

from .._generated import FUNCTIONS
from .._standard import broadcast_tensors
from .._tensor import Tensor

__all__ = [
    "avg_pool2d",
    "binary_cross_entropy_with_logits",
    "conv2d",
    "cross_entropy",
    "dropout",
    "embedding",
    "gelu",
    "layer_norm",
    "linear",
    "log_softmax",
    "max_pool2d",
    "mse_loss",
    "relu",
    "relu_",
    "sigmoid",
    "silu",
    "softmax",
    "softplus",
    "tanh",
]

core = ops.core
# The entries for exactly the tensors given (Note [Specialised call paths]).
_linear2, _linear3 = core.linear.default.call2, core.linear.default.call3
_cross_entropy2 = core.cross_entropy_loss.default.call2
_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}

gelu = FUNCTIONS["nn.functional.gelu"]
softplus = FUNCTIONS["nn.functional.softplus"]
sigmoid = FUNCTIONS["sigmoid"]
tanh = FUNCTIONS["tanh"]
conv2d = FUNCTIONS["conv2d"]


def _reduction(op: str, reduction: str, size_average: Any = None, reduce: Any = None) -> int:
    if size_average is not None or reduce is not None:  # PyTorch's legacy arguments
        warnings.warn(
            f"{op}(): size_average and reduce args will be deprecated, please use "
            f"reduction='{'sum' if size_average is False else 'mean'}' instead.",
            UserWarning,
            stacklevel=3,
        )
        if reduce is False:
            return 0
        return 1 if size_average is None or size_average else 2
    value = _REDUCTIONS.get(reduction)
    if value is None:
        raise ValueError(f"{op}(): {reduction} is not a valid value for reduction")
    return value


def _implicit_dim(op: str, ndim: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {op} has been deprecated. Change the call to include "
        f"dim=X as an argument.",
        UserWarning,
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0) elementwise (in place with ``inplace=True``)."""
    return core.relu_.default(input) if inplace else core.relu.default(input)  # type: ignore[no-any-return]


def relu_(input: Tensor) -> Tensor:
    """max(x, 0) elementwise, in place."""
    return core.relu_.default(input)  # type: ignore[no-any-return]


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) elementwise."""
    out = core.silu.default(input)
    return input.copy_(out) if inplace else out  # type: ignore[no-any-return]


def softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim`` (computed in ``dtype`` when given)."""
    if dim is None:
        dim = _implicit_dim("softmax", input.ndim)
    return core.softmax.int(input, dim, dtype)  # type: ignore[no-any-return]


def log_softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """log(softmax(x)) along ``dim``, computed stably."""
    if dim is None:
        dim = _implicit_dim("log_softmax", input.ndim)
    return core.log_softmax.int(input, dim, dtype)  # type: ignore[no-any-return]


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias."""
    if bias is None:
        return _linear2(input, weight)  # type: ignore[no-any-return]
    return _linear3(input, weight, bias)  # type: ignore[no-any-return]


def layer_norm(
    input: Tensor,
    normalized_shape: Any,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-05,
) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` dims, then scale and shift."""
    if isinstance(normalized_shape, int):
        normalized_shape = [normalized_shape]
    return core.layer_norm.default(input, list(normalized_shape), weight, bias, eps)  # type: ignore[no-any-return]


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero elements with probability ``p`` (the device's generator) and scale the rest
    by 1/(1-p), when ``training``; the input itself otherwise."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout(): dropout probability has to be between 0 and 1, but got {p}")
    out = core.dropout.default(input, p, training)
    if inplace and out is not input:
        return input.copy_(out)  # type: ignore[no-any-return]
    return out  # type: ignore[no-any-return]


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of ``weight`` picked by the indices in ``input`` (``padding_idx``'s row gets no
    gradient)."""
    if max_norm is not None:
        raise NotImplementedError(
            "embedding(): max_norm is not supported; renormalise weight first"
        )
    if padding_idx is None:
        padding_idx = -1
    else:
        rows = weight.shape[0]
        if not -rows <= padding_idx < rows:
            raise ValueError(f"embedding(): Padding_idx must be within num_embeddings ({rows})")
        padding_idx %= rows
    return core.embedding.default(weight, input, padding_idx, scale_grad_by_freq, sparse)  # type: ignore[no-any-return]


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross entropy of logits ``input`` with class indices or class probabilities."""
    if (
        weight is None
        and reduction == "mean"
        and size_average is None
        and reduce is None
        and type(ignore_index) is int
        and ignore_index == -100
        and type(label_smoothing) is float
        and label_smoothing == 0.0
    ):  # the schema's defaults: the two-tensor entry (Note [Specialised call paths])
        return _cross_entropy2(input, target)  # type: ignore[no-any-return]
    r = _reduction("cross_entropy", reduction, size_average, reduce)
    return core.cross_entropy_loss.default(  # type: ignore[no-any-return]
        input, target, weight, r, ignore_index, label_smoothing
    )


def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """Mean (or sum) of squared differences."""
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            f"Please ensure they have the same size.",
            UserWarning,
            stacklevel=2,
        )
        # PyTorch's: the two broadcast first (ExpandBackward0 in the graph), so that the
        # operator and its formula see one shape.
        input, target = broadcast_tensors(input, target)
    r = _reduction("mse_loss", reduction, size_average, reduce)
    return core.mse_loss.default(input, target, r)  # type: ignore[no-any-return]


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Binary cross entropy of logits, stably; ``pos_weight`` weighs the positive class."""
    r = _reduction("binary_cross_entropy_with_logits", reduction, size_average, reduce)
    return core.binary_cross_entropy_with_logits.default(input, target, weight, pos_weight, r)  # type: ignore[no-any-return]


def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """The maximum of each window (and its flat index in the input plane, when asked)."""
    stride = [] if stride is None else stride
    out = core.max_pool2d_with_indices.default(
        input, kernel_size, stride, padding, dilation, ceil_mode
    )
    return out if return_indices else out[0]


def avg_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """The mean of each window (padding counted unless ``count_include_pad=False``)."""
    stride = [] if stride is None else stride
    return core.avg_pool2d.default(  # type: ignore[no-any-return]
        input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )

"""Python wrappers of nn operators with irregular signatures (``tt.conv2d``,
``tt.binary_cross_entropy_with_logits``).

Imports: ``tensor._definitions`` and ``_tensor``.  ``tensor._wrappers`` merges ``WRAPPERS``.
"""

from __future__ import annotations

from typing import Any

from . import _definitions
from ._tensor import Tensor

__all__ = ["WRAPPERS"]


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """2-D convolution (cross-correlation); ``padding`` is ints or ``"same"``/``"valid"``."""
    index = 1 if isinstance(padding, str) else 0
    return _definitions.overloads("conv2d")[index](  # type: ignore[no-any-return]
        input, weight, bias, stride, padding, dilation, groups
    )


# Note [binary_cross_entropy_with_logits defaults]
# torch.binary_cross_entropy_with_logits (the ATen function, not F.'s) takes ``reduction``
# as ATen's int, and PyTorch 2.13's Python binding defaults it to 0, no reduction, although
# the schema's default is 1 (mean), which ops.core.binary_cross_entropy_with_logits keeps,
# as torch.ops.aten's does.  F.binary_cross_entropy_with_logits takes reduction="mean".
def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    pos_weight: Tensor | None = None,
    reduction: int = 0,
) -> Tensor:
    """The loss of each element (``reduction`` 0), or its mean (1) or sum (2); see
    Note [binary_cross_entropy_with_logits defaults]."""
    return _definitions.overloads("binary_cross_entropy_with_logits")[0](  # type: ignore[no-any-return]
        input, target, weight, pos_weight, reduction
    )


WRAPPERS: dict[str, Any] = {
    "conv2d": conv2d,
    "binary_cross_entropy_with_logits": binary_cross_entropy_with_logits,
}

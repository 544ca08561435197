"""Python wrappers of nn operators with irregular signatures (``tt.conv2d``).

Imports: ``tensor._ops`` and ``_tensor``.  ``tensor._pyapi`` merges ``WRAPPERS``.
"""

from __future__ import annotations

from typing import Any

from . import _ops
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
    return _ops.overloads("conv2d")[index](  # type: ignore[no-any-return]
        input, weight, bias, stride, padding, dilation, groups
    )


WRAPPERS: dict[str, Any] = {"conv2d": conv2d}

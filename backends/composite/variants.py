"""CompositeImplicitAutograd kernels of the functional and in-place siblings of primitives.

Imports: ``dispatch``.

PyTorch spells some operators both ways where this package has one primitive:
``fill`` is ``fill_`` on a copy of ``self``; ``dropout_`` writes ``dropout``'s result
into ``self`` (``copy_``); ``normal_`` writes samples of ``normal`` into ``self``.
Written with other operators, they get autograd, version counters and every
backend from those.  ``register(lib)`` adds them to ``backends.composite``'s library.
"""

from __future__ import annotations

from typing import Any

from dispatch import Library, ops

from . import nn

__all__ = ["KERNELS", "register"]

core = ops.core


def fill_scalar(self: Any, value: Any) -> Any:
    return core.fill_.Scalar(core.clone.default(self), value)


def fill_tensor(self: Any, value: Any) -> Any:
    return core.fill_.Tensor(core.clone.default(self), value)


def dropout_(self: Any, p: float, train: bool) -> Any:
    out = nn.dropout(self, p, train)
    return self if out is self else core.copy_.default(self, out)


def normal_(self: Any, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Any:
    sample = core.normal.float_float(
        float(mean), float(std), list(self.shape), generator=generator, dtype=self.dtype,
        device=self.device,
    )  # fmt: skip
    return core.copy_.default(self, sample)


KERNELS: dict[str, Any] = {
    "fill.Scalar": fill_scalar,
    "fill.Tensor": fill_tensor,
    "dropout_": dropout_,
    "normal_": normal_,
}


def register(lib: Library) -> None:
    """Register the kernels above at CompositeImplicitAutograd."""
    for qualname, kernel in KERNELS.items():
        lib.impl(qualname, kernel, "CompositeImplicitAutograd")

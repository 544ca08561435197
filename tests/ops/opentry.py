"""The op database's record (``OpEntry``) and the call helpers every entry module uses.

Imports: the standard library and the sibling ``samples`` module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .samples import DTYPE_NAMES, Sample

__all__ = ["OpEntry", "_core", "_fn"]


@dataclass
class OpEntry:
    id: str
    op: str  # row of tensor.OP_TABLE
    call: Callable[..., Any]
    ref: Callable[..., Any] | None
    samples: Callable[[str, np.random.Generator], list[Sample]]
    dtypes: tuple[str, ...] = DTYPE_NAMES  # dtypes to run (supported or not)
    random: bool = False  # values are random: compare shape/dtype only
    tol: float = 1.0  # multiplies the default tolerances
    torch_call: Callable[..., Any] | None = None  # when torch spells it differently
    support: str = ""  # the table row whose dtypes say what is supported (default: op)
    supported: tuple[str, ...] | None = None  # or the supported dtype names themselves
    torch_values_for: tuple[str, ...] = DTYPE_NAMES  # dtypes whose values match PyTorch's

    def __repr__(self) -> str:
        return self.id


def _fn(name: str) -> Callable[..., Any]:
    """``lib.<name>(*args, **kwargs)`` (dotted names walk modules: ``linalg.vector_norm``)."""

    def call(lib: Any, *args: Any, **kwargs: Any) -> Any:
        obj = lib
        for part in name.split("."):
            obj = getattr(obj, part)
        return obj(*args, **kwargs)

    return call


def _core(name: str) -> Callable[..., Any]:
    """Our ``ops.core.<name>`` (for ops PyTorch keeps in torch.nn.functional)."""

    def call(lib: Any, *args: Any, **kwargs: Any) -> Any:
        from dispatch import ops

        return getattr(ops.core, name)(*args, **kwargs)

    return call

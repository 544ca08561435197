"""Rows of the conversions and factories (``_to_copy``, ``zeros``, ``*_like``, random).

Imports: this package's ``_grad`` and ``_row``.  Formulas first, rows below them.
The factories take no tensor to differentiate: not differentiable, as ``*_like``
(their result does not depend on the input's values).  A factory's out= tensor
gives the result's dtype and device.
"""

from __future__ import annotations

from typing import Any

from . import _grad
from ._row import INEXACT, NO_BOOL, REAL, REAL_NO_BOOL, OpInfo

__all__ = ["ROWS"]

core = _grad.core
saves = _grad.saves
_t = _grad.grad_for
_is_tensor = _grad.is_tensor

_FACTORY = "ScalarType? dtype=None, Device? device=None"
_RANDOM = "Generator? generator=None, ScalarType? dtype=None, Device? device=None"


@saves()
def _to_copy(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    x = a["self"]
    if g.dtype != x.dtype or g.device != x.device:
        g = core._to_copy(g, dtype=x.dtype, device=x.device)
    return (g,)


@saves()
def _clone(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    return (g,)  # PyTorch's CloneBackward0: the gradient as it comes


@saves()
def _normal(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
    # PyTorch: the mean and std of a sample get zero gradients (not "not differentiable").
    return tuple(_t(core.zeros_like(g), v) for v in (a.get("mean"), a.get("std")) if _is_tensor(v))


ROWS: tuple[OpInfo, ...] = (
    OpInfo(
        "_to_copy",
        (
            "_to_copy(Tensor self, *, ScalarType? dtype=None, Device? device=None, "
            "bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
        ),
        "conversion", function=None, method=False, grad=_to_copy,
    ),
    # PyTorch's clone: a copy of its own operator (CloneBackward0), which contiguous()
    # calls too; the same kernel as _to_copy's (Note [Copies keep the layout]).
    OpInfo(
        "clone",
        ("clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",),
        "conversion", method=False, grad=_clone,
    ),
    OpInfo(
        "empty", (f"empty(SymInt[] size, *, {_FACTORY}) -> Tensor",), "factory",
        py="empty", method=False, grad=False, out=True,
    ),
    OpInfo(
        "zeros", (f"zeros(SymInt[] size, *, {_FACTORY}) -> Tensor",), "factory",
        py="zeros", method=False, grad=False, out=True,
    ),
    OpInfo(
        "ones", (f"ones(SymInt[] size, *, {_FACTORY}) -> Tensor",), "factory",
        py="ones", method=False, grad=False, out=True,
    ),
    OpInfo(
        "full", (f"full(SymInt[] size, Scalar fill_value, *, {_FACTORY}) -> Tensor",), "factory",
        py="full", method=False, grad=False, out=True,
    ),
    OpInfo(
        "arange", (f"arange(Scalar start, Scalar end, Scalar step=1, *, {_FACTORY}) -> Tensor",),
        "factory", REAL_NO_BOOL, py="arange", method=False, grad=False, out=True,
    ),
    OpInfo(
        "linspace", (f"linspace(Scalar start, Scalar end, int steps, *, {_FACTORY}) -> Tensor",),
        "factory", NO_BOOL, py="linspace", method=False, grad=False, out=True,
    ),
    OpInfo(
        "eye", (f"eye(SymInt n, SymInt? m=None, *, {_FACTORY}) -> Tensor",), "factory",
        py="eye", method=False, grad=False, out=True,
    ),
    OpInfo(
        "rand", (f"rand(SymInt[] size, *, {_RANDOM}) -> Tensor",), "factory", INEXACT,
        py="rand", method=False, grad=False, out=True,
    ),
    OpInfo(
        "randn", (f"randn(SymInt[] size, *, {_RANDOM}) -> Tensor",), "factory", INEXACT,
        py="randn", method=False, grad=False, out=True,
    ),
    OpInfo(
        "randint", (f"randint(SymInt low, SymInt high, SymInt[] size, *, {_RANDOM}) -> Tensor",),
        "factory", REAL, py="randint", method=False, grad=False, out=True,
    ),
    OpInfo(
        "normal",
        (
            "normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None) -> Tensor",
            "normal.Tensor_float(Tensor mean, float std=1, *, Generator? generator=None) -> Tensor",
            "normal.float_Tensor(float mean, Tensor std, *, Generator? generator=None) -> Tensor",
            f"normal.float_float(float mean, float std, SymInt[] size, *, {_RANDOM}) -> Tensor",
        ),
        "factory", INEXACT, py="normal", method=False, out=True,
        grad={"Tensor_Tensor": _normal, "Tensor_float": _normal, "float_Tensor": _normal,
              "float_float": False},
    ),
    OpInfo(
        "empty_like", (f"empty_like(Tensor self, *, {_FACTORY}) -> Tensor",), "like",
        py="like", method=False, grad=False,
    ),
    OpInfo(
        "zeros_like", (f"zeros_like(Tensor self, *, {_FACTORY}) -> Tensor",), "like",
        py="like", method=False, grad=False,
    ),
    OpInfo(
        "ones_like", (f"ones_like(Tensor self, *, {_FACTORY}) -> Tensor",), "like",
        py="like", method=False, grad=False,
    ),
    OpInfo(
        "full_like", (f"full_like(Tensor self, Scalar fill_value, *, {_FACTORY}) -> Tensor",),
        "like", py="like", method=False, grad=False,
    ),
    OpInfo(
        "rand_like", (f"rand_like(Tensor self, *, {_FACTORY}) -> Tensor",), "like", INEXACT,
        py="like", method=False, grad=False,
    ),
    OpInfo(
        "randn_like", (f"randn_like(Tensor self, *, {_FACTORY}) -> Tensor",), "like", INEXACT,
        py="like", method=False, grad=False,
    ),
)  # fmt: skip

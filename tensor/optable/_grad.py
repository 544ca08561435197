"""Helpers shared by the derivative formulas of the family modules.

Imports: ``dispatch`` only.  Everything here calls operators (``ops.core``), never
arrays, so formulas built on it run on every backend and record their own graph
under ``create_graph=True``.

A formula is ``f(grad, a, out) -> tuple``: ``grad`` is the gradient of the output
(a tuple for several outputs), ``a`` the call bound to its schema (defaults filled,
by argument name), ``out`` the forward result (see ``saves``).  It
returns one gradient per tensor argument of the schema, in order (``None``
where there is none; a shorter tuple leaves the rest None); ``sum_to`` and
``grad_for`` undo broadcasting.  ``saves`` declares which values a formula reads
(what the autograd layer version-checks).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dispatch import _tls, ops

__all__ = [
    "Formula",
    "cast_like",
    "core",
    "expand_to",
    "grad_for",
    "holomorphic",
    "is_tensor",
    "needs_grad",
    "numel_of",
    "records_graph",
    "reduced_dims",
    "saves",
    "sgn",
    "sum_to",
    "unsqueeze_dims",
    "unsqueeze_reduced",
    "wrap_dim",
]

core = ops.core
Formula = Callable[[Any, dict[str, Any], Any], tuple[Any, ...]]


def saves(*names: str) -> Callable[[Formula], Formula]:
    """Declare what a formula reads the values of: argument names, and ``"result"`` for
    the output.  The autograd layer checks only their versions at backward (a saved
    tensor modified in place raises, as in PyTorch; an unsaved one may change), and
    the in-place form of an operator keeps a copy of ``self``'s old value only when
    the formula reads ``"self"``.  ``"self:other"`` reads ``self`` only when ``other``
    requires grad (``self`` serves only ``other``'s gradient, as in ``mul``).  A formula
    that does not say reads every tensor argument.  The arguments' shapes and dtypes
    may always be read: in-place writes keep them.  The result is kept only when named
    (a formula that does not name it gets ``None``: Note [Recording cost]); its shape is
    the gradient's."""

    def mark(formula: Formula) -> Formula:
        formula.saved = names  # type: ignore[attr-defined]
        return formula

    return mark


# Note [Complex gradients]: PyTorch's gradient of a complex input is the conjugate
# Wirtinger derivative (its "Autograd for Complex Numbers"): for a holomorphic f,
# grad_input = grad * conj(f'(z)) (derivatives.yaml: ``sin: grad * self.cos().conj()``,
# ``mul: grad * other.conj()``, ``mm: grad.mm(mat2.t().conj())``).  The formulas of the
# family modules are written as for real numbers, grad * f'(z); ``holomorphic`` turns
# one into PyTorch's once, for every formula linear in ``grad`` with coefficients
# holomorphic in the inputs: conj(formula(conj(grad))) = grad * conj(f'(z)).  Real
# gradients skip it (one dtype test), and a real input of a complex call still gets the
# real part (``grad_for``).  Formulas of non-holomorphic functions (abs, real, imag,
# conj, angle, the linear-algebra decompositions) say what they do themselves.


_COMPLEX_CATEGORY = 3  # tensor._dtype's categories: bool, int, float, complex


def _conj(v: Any) -> Any:
    if is_tensor(v) and v.dtype.is_complex:
        return core.conj(v)
    return v


def holomorphic(formula: Formula) -> Formula:
    """``formula`` in PyTorch's complex convention (Note [Complex gradients]); the same
    formula for real gradients."""

    def wrapped(g: Any, a: dict[str, Any], out: Any) -> tuple[Any, ...]:
        dt = getattr(g, "_dtype", None)  # one gradient: its dtype's category decides
        if dt is not None:
            if dt.category < _COMPLEX_CATEGORY:
                return formula(g, a, out)
        elif not any(is_tensor(x) and x.dtype.is_complex for x in g or ()):
            return formula(g, a, out)
        cg = type(g)(_conj(x) for x in g) if isinstance(g, (tuple, list)) else _conj(g)
        return tuple(_conj(r) for r in formula(cg, a, out))

    wrapped.__name__ = getattr(formula, "__name__", "formula")
    wrapped.__doc__ = formula.__doc__
    if hasattr(formula, "saved"):
        wrapped.saved = formula.saved  # type: ignore[attr-defined]
    return wrapped


def sgn(x: Any) -> Any:
    """PyTorch's ``sgn``: ``sign`` for real tensors, ``z / |z|`` (0 at 0) for complex ones
    (the derivative factor of ``abs`` and the norms)."""
    if not x.dtype.is_complex:
        return core.sign(x)
    mag = core.abs(x)
    return core.where(core.eq.Scalar(mag, 0), x * 0, x / mag)


def records_graph() -> bool:
    """Whether this backward records a graph of its own (``create_graph=True``: grad mode
    is on while formulas run).  Without one, a formula may call a fused backward kernel
    that has no formula itself."""
    return _tls.state.grad_enabled


def is_tensor(v: Any) -> bool:
    return getattr(v, "_dispatch_bits", None) is not None


def needs_grad(v: Any) -> bool:
    """Whether a gradient for argument ``v`` is wanted (saves computing unused ones)."""
    return is_tensor(v) and v.requires_grad


def cast_like(g: Any, like: Any) -> Any:
    """``g`` in ``like``'s dtype (the engine hands each input a gradient of its own dtype,
    as PyTorch's does)."""
    if g.dtype != like.dtype:
        return core._to_copy(g, dtype=like.dtype)
    return g


def sum_to(g: Any, like: Any) -> Any:
    """Sum ``g`` down to ``like``'s shape (undo broadcasting); ``like`` may be a number."""
    shape = getattr(like, "shape", ())
    gshape = g.shape
    if gshape == shape:
        return g
    shape, gshape = tuple(shape), tuple(gshape)
    lead = len(gshape) - len(shape)
    if lead > 0:
        g = core.sum(g, list(range(lead)), False)
    ones = [i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1]
    if ones:
        g = core.sum(g, ones, True)
    return g


def grad_for(g: Any, like: Any) -> Any:
    """The gradient of tensor argument ``like``: ``g`` summed to its shape and cast to its
    dtype; None for a number or a tensor that cannot carry gradients."""
    if getattr(like, "_dispatch_bits", None) is None:
        return None
    d = like.dtype
    if not (d.is_floating_point or d.is_complex):
        return None
    if g.shape != like.shape:
        g = sum_to(g, like)
    if g.dtype.is_complex and not d.is_complex:
        g = core.real(g)  # a real input of a complex call: PyTorch's handle_r_to_c
    return g if g.dtype == d else core._to_copy(g, dtype=d)


def wrap_dim(d: int, ndim: int) -> int:
    """A dimension index made non-negative (0-d tensors accept 0 and -1)."""
    return d % ndim if ndim else 0


def reduced_dims(dim: Any, ndim: int) -> list[int]:
    """The sorted, non-negative dims a reduction's ``dim`` argument names (None or an
    empty list: all of them)."""
    if dim is None:
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    if not dims:
        return list(range(ndim))
    if not ndim:
        return []
    return sorted({d % ndim for d in dims})


def numel_of(x: Any, dims: Sequence[int]) -> int:
    n = 1
    for d in dims:
        n *= x.shape[d]
    return n


def unsqueeze_dims(g: Any, dims: Sequence[int]) -> Any:
    """``g`` with a size-1 dim inserted at each of the sorted ``dims``."""
    for d in dims:
        g = core.unsqueeze(g, d)
    return g


def unsqueeze_reduced(g: Any, x: Any, dim: Any, keepdim: bool) -> Any:
    """A reduction's output (or gradient) with its reduced dims back as size 1, so it
    broadcasts against the input ``x``."""
    if keepdim or not x.ndim:
        return g
    return unsqueeze_dims(g, reduced_dims(dim, x.ndim))


def expand_to(g: Any, x: Any) -> Any:
    """``g`` broadcast to ``x``'s shape, as a tensor of its own: a leaf's ``.grad`` may be
    written in place (``grad.zero_()``), which a stride-0 view refuses (PyTorch's
    AccumulateGrad copies such gradients; ours stores what it gets)."""
    if tuple(g.shape) == tuple(x.shape):
        return g
    return core._to_copy(core.expand(g, list(x.shape)))

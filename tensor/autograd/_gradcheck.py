"""``gradcheck`` and ``gradgradcheck``: analytical gradients against finite differences.

Imports: NumPy, ``dispatch`` and sibling autograd modules (tensors are made through
the ``core`` operators, so the check runs on whatever device its inputs live on).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dispatch import ops

from . import _grad_mode
from ._backward import grad

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the analytical and numerical Jacobians differ."""


def _as_tuple(x: Any) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _is_tensor(v: Any) -> bool:
    return getattr(v, "_dispatch_bits", None) is not None


def _differentiable(o: Any) -> bool:
    return _is_tensor(o) and (o.dtype.is_floating_point or o.dtype.is_complex)


def _with_array(t: Any, array: np.ndarray) -> Any:
    """A tensor like ``t`` holding ``array``."""
    return type(t)(array, dtype=t.dtype, device=t.device)


# Note [Complex gradcheck]: PyTorch's convention (Note [Complex gradients] in
# tensor.optable._grad): for a real function L of a complex input z = x + iy, the
# gradient is dL/dx + i dL/dy.  A complex output counts as two real ones, its real part
# (grad_output 1) and its imaginary part (grad_output 1j); a complex input's numerical
# column is the real direction's difference plus i times the imaginary direction's.


def _parts(o: Any) -> list[np.ndarray]:
    """An output's values as real vectors: itself, or its real and imaginary parts."""
    v = o.detach().numpy().reshape(-1)
    if np.iscomplexobj(v):
        return [v.real.astype(np.float64), v.imag.astype(np.float64)]
    return [v.astype(np.float64)]


def _numerical(
    fn: Callable[..., Any], inputs: tuple[Any, ...], i: int, eps: float
) -> list[np.ndarray]:
    """d output parts / d inputs[i] as one (out numel, in numel) matrix per real part of
    each output (Note [Complex gradcheck])."""
    x = inputs[i]
    base = x.detach().numpy().astype(x.detach().numpy().dtype, copy=True)
    flat = base.reshape(-1)
    steps = (1.0, 1j) if np.iscomplexobj(flat) else (1.0,)
    columns: list[list[np.ndarray]] = []
    for j in range(flat.size):
        column: list[np.ndarray] | None = None
        for step in steps:
            results = []
            for sign in (1.0, -1.0):
                moved = flat.copy()
                moved[j] += sign * eps * step
                args = list(inputs)
                args[i] = _with_array(x, moved.reshape(base.shape))
                with _grad_mode.no_grad():
                    outs = _as_tuple(fn(*args))
                results.append([p for o in outs if _differentiable(o) for p in _parts(o)])
            diff = [(p - m) / (2 * eps) for p, m in zip(results[0], results[1], strict=True)]
            if column is None:
                column = [d.astype(np.complex128) if step != 1.0 else d for d in diff]
            else:
                column = [c + 1j * d for c, d in zip(column, diff, strict=True)]
        columns.append(column or [])
    n_out = len(columns[0]) if columns else 0
    return [
        np.stack([col[k] for col in columns], axis=1) if columns else np.zeros((0, 0))
        for k in range(n_out)
    ]


def gradcheck(
    fn: Callable[..., Any],
    inputs: Sequence[Any] | Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """Check the gradients of ``fn`` at ``inputs`` against central differences.

    Use float64 (or complex128) inputs that require grad, as with PyTorch's gradcheck;
    complex ones are checked in PyTorch's convention (Note [Complex gradcheck]).

    >>> import tensor as tt
    >>> x = tt.tensor([0.5, 1.5], dtype=tt.float64, requires_grad=True)
    >>> gradcheck(tt.sin, (x,))
    True
    """
    inputs = _as_tuple(inputs)
    # The same outputs on both sides: every floating-point tensor output, in order (one
    # that does not depend on the inputs has a zero analytical Jacobian); a complex one
    # as its real part (seed 1) and its imaginary part (seed 1j).
    parts = [
        (o, seed)
        for o in _as_tuple(fn(*inputs))
        if _differentiable(o)
        for seed in ((1.0, 1j) if o.dtype.is_complex else (1.0,))
    ]
    for i, x in enumerate(inputs):
        if not (_is_tensor(x) and x.requires_grad) or x.numel() == 0:
            continue
        numerical = _numerical(fn, inputs, i, eps)
        x_complex = x.dtype.is_complex
        for k, (out, seed) in enumerate(parts):
            n_out, n_in = out.numel(), x.numel()
            analytical = np.zeros((n_out, n_in), np.complex128 if x_complex else np.float64)
            for row in range(n_out if out.requires_grad else 0):
                one_hot = np.zeros(n_out, dtype=out.detach().numpy().dtype)
                one_hot[row] = seed
                (g,) = grad(
                    out,
                    x,
                    grad_outputs=_with_array(out, one_hot.reshape(out.detach().numpy().shape)),
                    retain_graph=True,
                    allow_unused=True,
                )
                if g is not None:
                    analytical[row] = g.detach().numpy().reshape(-1)
            if not np.allclose(analytical, numerical[k], atol=atol, rtol=rtol):
                if raise_exception:
                    raise GradcheckError(
                        f"Jacobian mismatch for output {k} with respect to input {i},\n"
                        f"numerical:{numerical[k]}\nanalytical:{analytical}\n"
                    )
                return False
    return True


def gradgradcheck(
    fn: Callable[..., Any],
    inputs: Sequence[Any] | Any,
    grad_outputs: Sequence[Any] | None = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
) -> bool:
    """Check second derivatives: gradcheck of the first derivative (create_graph=True)."""
    inputs = _as_tuple(inputs)
    diff = {i for i, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad}

    def first_derivative(*args: Any) -> tuple[Any, ...]:
        # Runs under gradcheck's no_grad for the finite differences: build the graph anyway.
        with _grad_mode.enable_grad():
            args = tuple(
                a.detach().requires_grad_() if i in diff and not a.requires_grad else a
                for i, a in enumerate(args)
            )
            outs = [o for o in _as_tuple(fn(*args)) if _is_tensor(o) and o.requires_grad]
            wrt = [a for a in args if _is_tensor(a) and a.requires_grad]
            seeds = (
                list(grad_outputs)
                if grad_outputs is not None
                else [ops.core.ones_like(o) for o in outs]
            )
            return grad(
                outs,
                wrt,
                grad_outputs=seeds,
                create_graph=True,
                allow_unused=True,
                materialize_grads=True,
            )

    return gradcheck(first_derivative, inputs, eps=eps, atol=atol, rtol=rtol)

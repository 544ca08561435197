"""``backward`` and ``grad``: the entry points to the engine.

Imports: the standard library and sibling autograd modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dispatch import ops

from ._graph import run_backward

__all__ = ["backward", "grad"]

# ``_lanes.seed``, set by ``_lanes.install`` (Note [Backward lanes]): the implicit
# gradient of ``loss.backward()`` without a dispatched ``ones_like``, or None.
_seed: Any = None


def _as_tuple(x: Any) -> tuple[Any, ...]:
    if x is None:
        return ()
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _make_grads(outputs: tuple[Any, ...], grads: tuple[Any, ...], what: str) -> list[Any]:
    if grads and len(grads) != len(outputs):
        raise RuntimeError(
            f"{what}: got {len(grads)} gradients for {len(outputs)} outputs; pass one per output"
        )
    result = []
    for i, out in enumerate(outputs):
        g = grads[i] if grads else None
        if g is None:
            if out.numel() != 1:
                raise RuntimeError(
                    f"{what}: grad can be implicitly created only for scalar outputs, but output "
                    f"{i} has shape {list(out.shape)}; pass a gradient for it"
                )
            if out.dtype.is_complex:  # PyTorch: d out / d out is ambiguous for complex out
                raise RuntimeError(
                    f"{what}: grad can be implicitly created only for real scalar outputs, but "
                    f"output {i} has dtype {out.dtype.name}; pass a gradient for it"
                )
            seed = _seed
            g = seed(out) if seed is not None else None
            if g is None:
                g = ops.core.ones_like.default(out)
        elif tuple(g.shape) != tuple(out.shape):
            raise RuntimeError(
                f"{what}: mismatch in shape: grad_output[{i}] has a shape of {list(g.shape)} and "
                f"output[{i}] has a shape of {list(out.shape)}"
            )
        result.append(g)
    return result


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Sequence[Any] | Any | None = None,
) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves they depend on
    (only into ``inputs`` when given)."""
    outputs = _as_tuple(tensors)
    grads = _make_grads(outputs, _as_tuple(grad_tensors), "backward")
    if retain_graph is None:
        retain_graph = create_graph
    for i, out in enumerate(outputs):
        if not out.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
    inputs_t = _as_tuple(inputs) if inputs is not None else None
    if inputs_t is not None and not inputs_t:
        raise RuntimeError("backward: 'inputs' argument should not be empty")
    run_backward(
        list(zip(outputs, grads, strict=True)),
        retain_graph=retain_graph,
        create_graph=create_graph,
        inputs=inputs_t,
        accumulate=True,
    )


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    materialize_grads: bool = False,
) -> tuple[Any, ...]:
    """Gradients of ``outputs`` with respect to ``inputs``, without touching ``.grad``.

    >>> import tensor as tt
    >>> x = tt.tensor([1.0, 2.0], requires_grad=True)
    >>> grad((x * x).sum(), x)
    (tensor([2., 4.]),)
    """
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    if not ins:
        raise RuntimeError("grad requires at least one input")
    grads = _make_grads(outs, _as_tuple(grad_outputs), "grad")
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    for i, out in enumerate(outs):
        if not out.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
    result = run_backward(
        list(zip(outs, grads, strict=True)),
        retain_graph=retain_graph,
        create_graph=create_graph,
        inputs=ins,
        accumulate=False,
    )
    for i, g in enumerate(result):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"One of the differentiated Tensors (input {i}) appears to not have been used "
                    f"in the graph. Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                result[i] = ops.core.zeros_like(ins[i])
    return tuple(result)

"""Hand-written Python wrappers for operators whose PyTorch signature is irregular.

Imports: ``tensor._ops``, ``_tensor``, ``_device``, ``_dtype``, ``return_types``.

Factories take sizes as varargs or one sequence (``zeros(2, 3)``, ``zeros((2, 3))``)
and a ``requires_grad`` flag that is not part of the operator; ``max(x, 1)`` and
``max(x, y)`` are different overloads; ``einsum`` takes operands as varargs;
``norm`` takes ``p="fro"``.  Each wrapper is written once and serves as both the
``tt.<name>`` function and, where PyTorch has one, the Tensor method.  The
operator table (``tensor._optable``) names the wrapper in its ``py`` field.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import _ops, _pynn, _pyshape, return_types
from ._optable import OpInfo
from ._tensor import Tensor

__all__ = ["METHOD_WRAPPERS", "WRAPPERS"]


def _ov(name: str, index: int = 0) -> Any:
    return _ops.overloads(name)[index]


_MISSING: Any = object()


def _size(size: tuple[Any, ...], op: str) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    out = []
    for i, s in enumerate(size):
        if isinstance(s, bool) or not hasattr(s, "__index__"):
            raise TypeError(
                f"{op}(): argument 'size' must be a sequence of ints, but element {i} is "
                f"{type(s).__name__} ({s!r})"
            )
        n = s.__index__()
        if n < 0:
            raise RuntimeError(
                f"{op}(): Trying to create tensor with negative dimension {n}: {list(size)}"
            )
        out.append(n)
    return tuple(out)


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad = True
    return t


# -- factories -----------------------------------------------------------------------------
def _sized_factory(name: str) -> Callable[..., Tensor]:
    ov = _ov(name)

    def factory(
        *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
    ) -> Tensor:
        return _finish(ov(_size(size, name), dtype=dtype, device=device), requires_grad)

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = f"``tt.{name}(*size, dtype=None, device=None, requires_grad=False)``."
    return factory


def _random_factory(name: str) -> Callable[..., Tensor]:
    ov = _ov(name)

    def factory(
        *size: Any,
        generator: Any = None,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
    ) -> Tensor:
        t = ov(_size(size, name), generator=generator, dtype=dtype, device=device)
        return _finish(t, requires_grad)

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = (
        f"``tt.{name}(*size, generator=None, dtype=None, device=None, requires_grad=False)``; "
        f"the device's default generator unless one is given (seed it with tt.manual_seed)."
    )
    return factory


empty = _sized_factory("empty")
zeros = _sized_factory("zeros")
ones = _sized_factory("ones")
rand = _random_factory("rand")
randn = _random_factory("randn")


def full(
    size: Sequence[int],
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``tt.full(size, fill_value)``: dtype from the value (bool, int64 or the default float)."""
    return _finish(
        _ov("full")(_size((size,), "full"), fill_value, dtype=dtype, device=device), requires_grad
    )


def arange(
    start: Any,
    end: Any = None,
    step: Any = 1,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``tt.arange(end)`` or ``tt.arange(start, end, step=1)``; int64 unless a bound is a float."""
    if end is None:
        start, end = 0, start
    return _finish(_ov("arange")(start, end, step, dtype=dtype, device=device), requires_grad)


def linspace(
    start: Any,
    end: Any,
    steps: int,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    return _finish(_ov("linspace")(start, end, steps, dtype=dtype, device=device), requires_grad)


def eye(
    n: int,
    m: int | None = None,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """An ``n`` x ``m`` matrix with ones on the diagonal."""
    return _finish(_ov("eye")(n, m, dtype=dtype, device=device), requires_grad)


def randint(
    *args: Any,
    generator: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    size: Any = None,
) -> Tensor:
    """``tt.randint(high, size)`` or ``tt.randint(low, high, size)``: ints in [low, high)."""
    if size is not None:
        args = (*args, size)
    if len(args) == 2:
        low, high, sz = 0, args[0], args[1]
    elif len(args) == 3:
        low, high, sz = args
    else:
        raise TypeError(
            f"randint() takes (high, size) or (low, high, size), got {len(args)} positional "
            f"arguments"
        )
    t = _ov("randint")(
        low, high, _size((sz,), "randint"), generator=generator, dtype=dtype, device=device
    )
    return _finish(t, requires_grad)


def normal(
    mean: Any,
    std: Any = 1.0,
    size: Any = None,
    *,
    generator: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Normal samples: tensor ``mean``/``std`` elementwise, or float ones with ``size``."""
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if mt and st:
        t = _ov("normal", 0)(mean, std, generator=generator)
    elif mt:
        t = _ov("normal", 1)(mean, std, generator=generator)
    elif st:
        t = _ov("normal", 2)(mean, std, generator=generator)
    else:
        if size is None:
            raise TypeError("normal(): with float mean and std, pass a size")
        t = _ov("normal", 3)(
            float(mean),
            float(std),
            _size((size,), "normal"),
            generator=generator,
            dtype=dtype,
            device=device,
        )
    return _finish(t, requires_grad)


def _like(op: OpInfo) -> Callable[..., Tensor]:
    ov = _ov(op.name)
    if op.name == "full_like":

        def full_like(
            input: Tensor,
            fill_value: Any,
            *,
            dtype: Any = None,
            device: Any = None,
            requires_grad: bool = False,
        ) -> Tensor:
            return _finish(ov(input, fill_value, dtype=dtype, device=device), requires_grad)

        return full_like

    def like(
        input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
    ) -> Tensor:
        return _finish(ov(input, dtype=dtype, device=device), requires_grad)

    like.__name__ = like.__qualname__ = op.name
    like.__doc__ = f"``tt.{op.name}(input, *, dtype=None, device=None, requires_grad=False)``."
    return like


# -- irregular operators ----------------------------------------------------------------------
def where(condition: Tensor, input: Any = _MISSING, other: Any = _MISSING) -> Tensor:
    """``input`` where ``condition`` holds, else ``other`` (either may be a number);
    ``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``."""
    if input is _MISSING and other is _MISSING:
        return _pyshape.nonzero(condition, as_tuple=True)
    if input is _MISSING or other is _MISSING:
        raise TypeError("where(condition, input, other): pass both input and other")
    ti, to = isinstance(input, Tensor), isinstance(other, Tensor)
    index = 0 if ti and to else 1 if ti else 2 if to else 3
    return _ov("where", index)(condition, input, other)  # type: ignore[no-any-return]


def _where_method(self: Tensor, condition: Tensor, other: Any) -> Tensor:
    return where(condition, self, other)


def _max_min(name: str) -> Callable[..., Any]:
    whole, by_dim, other_ov = _ops.overloads(name)
    result = return_types.get(name, ("values", "indices"))

    def fn(
        input: Tensor, dim: Any = _MISSING, keepdim: bool = False, *, other: Any = _MISSING
    ) -> Any:
        if other is not _MISSING:
            return other_ov(input, other)
        if dim is _MISSING:
            return whole(input)
        if isinstance(dim, Tensor):
            return other_ov(input, dim)
        return result._make(by_dim(input, dim, keepdim))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"``{name}(input)``: the {name}imum value; ``{name}(input, dim, keepdim=False)``: "
        f"named tuple (values, indices); ``{name}(input, other)``: elementwise."
    )
    return fn


max = _max_min("max")  # noqa: A001 - PyTorch's name
min = _max_min("min")  # noqa: A001 - PyTorch's name


def norm(
    input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None
) -> Tensor:
    """The p-norm over ``dim`` (all elements by default); ``p="fro"`` is the 2-norm."""
    if p == "fro" or p is None:
        p = 2
    elif isinstance(p, str):
        raise NotImplementedError(
            f"norm(): p={p!r} is not supported; use p='fro', a number, or float('inf')"
        )
    if dtype is None:
        return _ov("norm")(input, p, dim, keepdim)  # type: ignore[no-any-return]
    return _ov("norm")(input, p, dim, keepdim, dtype=dtype)  # type: ignore[no-any-return]


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation, ``tt.einsum("ij,jk->ik", a, b)`` (operands as varargs or a list)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return _ov("einsum")(equation, list(operands))  # type: ignore[no-any-return]


def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """Contract the last ``dims`` dimensions of ``a`` with the first of ``b`` (or given lists)."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot(): expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(
                f"tensordot(): dims={dims} is larger than the number of dimensions of an input "
                f"(argument 'a' has {a.ndim}, argument 'b' has {b.ndim})"
            )
        dims_a = list(range(a.ndim - dims, a.ndim))
        dims_b = list(range(dims))
    else:
        dims_a, dims_b = dims
        dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
        dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
    return _ov("tensordot")(a, b, dims_a, dims_b)  # type: ignore[no-any-return]


WRAPPERS: dict[str, Any] = {
    "empty": empty,
    "zeros": zeros,
    "ones": ones,
    "full": full,
    "arange": arange,
    "linspace": linspace,
    "eye": eye,
    "rand": rand,
    "randn": randn,
    "randint": randint,
    "normal": normal,
    "like": _like,  # a maker: one wrapper per *_like row
    "where": where,
    "max": max,
    "min": min,
    "norm": norm,
    "einsum": einsum,
    "tensordot": tensordot,
}
# Methods whose receiver is not the wrapper's first argument.
METHOD_WRAPPERS: dict[str, Any] = {"where": _where_method}
WRAPPERS.update(_pyshape.WRAPPERS)  # the shape operators' wrappers (view, split, sort, ...)
WRAPPERS.update(_pynn.WRAPPERS)
METHOD_WRAPPERS.update(_pyshape.METHOD_WRAPPERS)

"""Hand-written Python wrappers for operators whose PyTorch signature is irregular.

Imports: ``tensor._definitions``, ``_tensor``, ``_device``, ``_dtype``, ``return_types``.

Factories take sizes as varargs or one sequence (``zeros(2, 3)``, ``zeros((2, 3))``)
and a ``requires_grad`` flag that is not part of the operator; ``max(x, 1)`` and
``max(x, y)`` are different overloads; ``einsum`` takes operands as varargs;
``norm`` takes ``p="fro"``.  Each wrapper is written once and serves as both the
``tt.<name>`` function and, where PyTorch has one, the Tensor method.  The
operator table (``tensor.optable``) names the wrapper in its ``py`` field.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from backends.common.creation import size_of

from . import _definitions, _wrappers_nn, _wrappers_shape, return_types
from ._tensor import Tensor
from .optable import OpInfo

__all__ = ["METHOD_WRAPPERS", "WRAPPERS"]


def _ov(name: str, index: int = 0) -> Any:
    return _definitions.overloads(name)[index]


def _factory_out(name: str, index: int, out: Any, args: tuple[Any, ...], **kwargs: Any) -> Any:
    """A factory writing into ``out`` (PyTorch's out= form): ``out``'s dtype and device
    unless given; a dtype other than ``out``'s is refused, as in PyTorch."""
    if isinstance(out, Tensor):
        dtype = kwargs.get("dtype")
        if dtype is not None and dtype is not out.dtype:
            raise RuntimeError(
                f"{name}(): dtype {dtype} does not match dtype of out parameter ({out.dtype})"
            )
        kwargs["dtype"] = out.dtype
        if kwargs.get("device") is None:
            kwargs["device"] = out.device
    return _wrappers_shape.out_ov(name, index)(*args, out=out, **kwargs)


_MISSING: Any = object()


def _size(size: tuple[Any, ...], op: str) -> tuple[int, ...]:
    """``*size`` as PyTorch's factories take it (``ones(2, 3)`` or ``ones((2, 3))``),
    checked by the factories' own ``size_of``."""
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    return size_of(op, size)


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad = True
    return t


# -- factories -----------------------------------------------------------------------------
def _sized_factory(name: str) -> Callable[..., Tensor]:
    ov = _ov(name)

    def factory(
        *size: Any,
        out: Any = None,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
    ) -> Tensor:
        if out is not None:
            t = _factory_out(name, 0, out, (_size(size, name),), dtype=dtype, device=device)
            return _finish(t, requires_grad)
        if dtype is None and device is None:  # no keywords for the checker to bind
            for n in size:  # ``zeros(4, 8)``: ``size_of``'s own answer, without its frames
                if type(n) is not int or n < 0:
                    t = ov(_size(size, name))
                    break
            else:
                t = ov(size)
        else:
            t = ov(_size(size, name), dtype=dtype, device=device)
        if requires_grad:
            t.requires_grad = True
        return t

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = (
        f"``tt.{name}(*size, out=None, dtype=None, device=None, requires_grad=False)``."
    )
    return factory


def _random_factory(name: str) -> Callable[..., Tensor]:
    ov = _ov(name)

    def factory(
        *size: Any,
        generator: Any = None,
        out: Any = None,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
    ) -> Tensor:
        if out is not None:
            t = _factory_out(
                name, 0, out, (_size(size, name),), generator=generator, dtype=dtype,
                device=device,
            )  # fmt: skip
        else:
            t = ov(_size(size, name), generator=generator, dtype=dtype, device=device)
        return _finish(t, requires_grad)

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = (
        f"``tt.{name}(*size, generator=None, out=None, dtype=None, device=None, "
        f"requires_grad=False)``; "
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
    out: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``tt.full(size, fill_value)``: dtype from the value (bool, int64 or the default float)."""
    args = (_size((size,), "full"), fill_value)
    if out is not None:
        return _finish(
            _factory_out("full", 0, out, args, dtype=dtype, device=device), requires_grad
        )
    return _finish(_ov("full")(*args, dtype=dtype, device=device), requires_grad)


def arange(
    start: Any,
    end: Any = None,
    step: Any = 1,
    *,
    out: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``tt.arange(end)`` or ``tt.arange(start, end, step=1)``; int64 unless a bound is a float."""
    if end is None:
        start, end = 0, start
    if out is not None:
        t = _factory_out("arange", 0, out, (start, end, step), dtype=dtype, device=device)
        return _finish(t, requires_grad)
    return _finish(_ov("arange")(start, end, step, dtype=dtype, device=device), requires_grad)


def linspace(
    start: Any,
    end: Any,
    steps: int,
    *,
    out: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    if out is not None:
        t = _factory_out("linspace", 0, out, (start, end, steps), dtype=dtype, device=device)
        return _finish(t, requires_grad)
    return _finish(_ov("linspace")(start, end, steps, dtype=dtype, device=device), requires_grad)


def eye(
    n: int,
    m: int | None = None,
    *,
    out: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """An ``n`` x ``m`` matrix with ones on the diagonal."""
    if out is not None:
        return _finish(
            _factory_out("eye", 0, out, (n, m), dtype=dtype, device=device), requires_grad
        )
    return _finish(_ov("eye")(n, m, dtype=dtype, device=device), requires_grad)


def randint(
    *args: Any,
    generator: Any = None,
    out: Any = None,
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
    args = (low, high, _size((sz,), "randint"))
    if out is not None:
        t = _factory_out("randint", 0, out, args, generator=generator, dtype=dtype, device=device)
    else:
        t = _ov("randint")(*args, generator=generator, dtype=dtype, device=device)
    return _finish(t, requires_grad)


def normal(
    mean: Any,
    std: Any = 1.0,
    size: Any = None,
    *,
    generator: Any = None,
    out: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Normal samples: tensor ``mean``/``std`` elementwise, or float ones with ``size``."""
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    index = 0 if mt and st else 1 if mt else 2 if st else 3
    if index < 3:
        ov = _ov("normal", index) if out is None else _wrappers_shape.out_ov("normal", index)
        t = (
            ov(mean, std, generator=generator)
            if out is None
            else ov(mean, std, generator=generator, out=out)
        )
        return _finish(t, requires_grad)
    if size is None:
        raise TypeError("normal(): with float mean and std, pass a size")
    args = (float(mean), float(std), _size((size,), "normal"))
    if out is not None:
        t = _factory_out("normal", 3, out, args, generator=generator, dtype=dtype, device=device)
    else:
        t = _ov("normal", 3)(*args, generator=generator, dtype=dtype, device=device)
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
        if dtype is None and device is None:  # ``zeros_like(x)``: the one-tensor entry
            return _finish(ov.call1(input), requires_grad)
        return _finish(ov(input, dtype=dtype, device=device), requires_grad)

    like.__name__ = like.__qualname__ = op.name
    like.__doc__ = f"``tt.{op.name}(input, *, dtype=None, device=None, requires_grad=False)``."
    return like


# -- irregular operators ----------------------------------------------------------------------
def where(
    condition: Tensor, input: Any = _MISSING, other: Any = _MISSING, *, out: Any = None
) -> Tensor:
    """``input`` where ``condition`` holds, else ``other`` (either may be a number);
    ``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``."""
    if input is _MISSING and other is _MISSING:
        return _wrappers_shape.nonzero(condition, as_tuple=True)
    if input is _MISSING or other is _MISSING:
        raise TypeError("where(condition, input, other): pass both input and other")
    ti, to = isinstance(input, Tensor), isinstance(other, Tensor)
    index = 0 if ti and to else 1 if ti else 2 if to else 3
    if out is not None:
        return _wrappers_shape.out_ov("where", index)(condition, input, other, out=out)  # type: ignore[no-any-return]
    return _ov("where", index)(condition, input, other)  # type: ignore[no-any-return]


def _where_method(self: Tensor, condition: Tensor, other: Any) -> Tensor:
    return where(condition, self, other)


def _max_min(name: str) -> Callable[..., Any]:
    whole, by_dim, other_ov = _definitions.overloads(name)
    result = return_types.get(name, ("values", "indices"))

    def fn(
        input: Tensor,
        dim: Any = _MISSING,
        keepdim: bool = False,
        *,
        other: Any = _MISSING,
        out: Any = None,
    ) -> Any:
        if dim is not _MISSING and isinstance(dim, Tensor):
            other, dim = dim, _MISSING
        if out is not None:
            if other is not _MISSING:
                return _wrappers_shape.out_ov(name, 2)(input, other, out=out)
            if dim is _MISSING:
                return _wrappers_shape.out_ov(name, 0)(input, out=out)
            values, indices = _wrappers_shape.pair(name, out)
            return result._make(
                _wrappers_shape.out_ov(name, 1)(input, dim, keepdim, values=values, indices=indices)
            )
        if other is not _MISSING:
            return other_ov(input, other)
        if dim is _MISSING:
            return whole(input)
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
    input: Tensor,
    p: Any = "fro",
    dim: Any = None,
    keepdim: bool = False,
    out: Any = None,
    dtype: Any = None,
) -> Tensor:
    """The p-norm over ``dim`` (all elements by default); ``p="fro"`` is the 2-norm."""
    if p == "fro" or p is None:
        p = 2
    elif isinstance(p, str):
        raise NotImplementedError(
            f"norm(): p={p!r} is not supported; use p='fro', a number, or float('inf')"
        )
    kwargs: dict[str, Any] = {} if dtype is None else {"dtype": dtype}
    if out is not None:
        return _wrappers_shape.out_ov("norm")(input, p, dim, keepdim, out=out, **kwargs)  # type: ignore[no-any-return]
    return _ov("norm")(input, p, dim, keepdim, **kwargs)  # type: ignore[no-any-return]


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation, ``tt.einsum("ij,jk->ik", a, b)`` (operands as varargs or a list)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return _ov("einsum")(equation, list(operands))  # type: ignore[no-any-return]


def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Any = None) -> Tensor:
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
    if out is not None:
        return _wrappers_shape.out_ov("tensordot")(a, b, dims_a, dims_b, out=out)  # type: ignore[no-any-return]
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
WRAPPERS.update(_wrappers_shape.WRAPPERS)  # the shape operators' wrappers (view, split, sort, ...)
WRAPPERS.update(_wrappers_nn.WRAPPERS)
METHOD_WRAPPERS.update(_wrappers_shape.METHOD_WRAPPERS)

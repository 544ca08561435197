"""``custom_op``: an operator from a Python function, and its per-device kernels.

Imports: the standard library and sibling ``dispatch`` modules.

As ``torch.library.custom_op``: the schema is inferred from the annotations
(or given), the function becomes the kernel for ``device_types`` (every backend,
via CompositeExplicitAutograd, when None), and the returned ``CustomOpDef``
registers more kernels with ``register_kernel`` and a shape-only Meta kernel with
``register_fake``.  Each definition owns a ``Library`` that lives as long as the
process (like PyTorch's global ``OPDEFS``) unless ``_destroy()`` is called.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar, overload

from ._infer_schema import infer_schema
from ._keys import DispatchKeySet
from ._library import Library, _library_for, impl, key_for_type
from ._operator import OPERATORS, OpOverload
from ._tls import exclude_keys

__all__ = [
    "CustomOpDef",
    "custom_op",
    "register_autocast",
    "register_autograd",
    "register_fake",
    "register_kernel",
    "set_autograd_kernel_factory",
]

F = TypeVar("F", bound=Callable[..., Any])
_OPDEFS: dict[str, CustomOpDef] = {}
AutogradFactory = Callable[
    [OpOverload, Callable[..., Any], Callable[..., Any] | None], Callable[..., Any]
]
_autograd_factory: list[AutogradFactory] = []


def set_autograd_kernel_factory(factory: AutogradFactory) -> None:
    """Install the autograd engine's kernel maker for ``register_autograd``.

    The dispatcher has no autograd engine of its own (that belongs to the tensor
    system); ``factory(op, backward, setup_context)`` must return a with_keyset
    kernel for the Autograd key that records ``backward`` when inputs require grad.
    ``import tensor`` installs one.
    """
    _autograd_factory[:] = [factory]


def _device_types(device_types: str | Sequence[str] | None) -> list[str]:
    if device_types is None:
        return ["default"]
    return [device_types] if isinstance(device_types, str) else list(device_types)


class CustomOpDef:
    """The object ``custom_op`` returns: call it to run the operator."""

    def __init__(
        self,
        qualname: str,
        schema: str,
        fn: Callable[..., Any],
        device_types: str | Sequence[str] | None,
    ) -> None:
        ns, name = qualname.split("::", 1)
        self._qualname = qualname
        self._init_fn = fn
        self._lib = Library(ns, "FRAGMENT")
        self._lib.define(name + schema, tags=("custom_op",))
        self._opoverload: OpOverload = OPERATORS[qualname]
        for device_type in _device_types(device_types):
            self._lib.impl(name, fn, key_for_type(device_type))

    @property
    def name(self) -> str:
        return self._qualname

    @property
    def schema(self) -> Any:
        return self._opoverload.schema

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        return self._opoverload(*args, **kwargs)

    @overload
    def register_kernel(
        self, device_types: str | Sequence[str], fn: None = None
    ) -> Callable[[F], F]: ...
    @overload
    def register_kernel(self, device_types: str | Sequence[str], fn: F) -> F: ...
    def register_kernel(
        self, device_types: str | Sequence[str], fn: Callable[..., Any] | None = None
    ) -> Any:
        """Register ``fn`` for device types; it replaces the default for those devices."""

        def register(f: F) -> F:
            for device_type in _device_types(device_types):
                self._lib.impl(self._qualname, f, key_for_type(device_type), allow_override=True)
            return f

        return register if fn is None else register(fn)

    @overload
    def register_fake(self, fn: None = None) -> Callable[[F], F]: ...
    @overload
    def register_fake(self, fn: F) -> F: ...
    def register_fake(self, fn: Callable[..., Any] | None = None) -> Any:
        """Register the shape-and-dtype-only implementation, used for meta tensors."""

        def register(f: F) -> F:
            self._lib.impl(self._qualname, f, "Meta", allow_override=True)
            return f

        return register if fn is None else register(fn)

    def register_autograd(
        self, backward: Callable[..., Any], /, *, setup_context: Callable[..., Any] | None = None
    ) -> None:
        """Make the operator differentiable: ``backward(ctx, *grads)`` gives the input
        gradients, ``setup_context(ctx, inputs, output)`` saves what it needs."""
        kernel = _autograd_kernel(self._opoverload, backward, setup_context)
        self._lib.impl(
            self._qualname,
            kernel,
            "Autograd",
            with_keyset=True,
            allow_override=True,
            grad_only=True,
        )

    def register_autocast(self, device_type: str, cast_inputs: Any) -> None:
        """Cast floating inputs to ``cast_inputs`` inside autocast regions on ``device_type``."""
        register_autocast(self, device_type, cast_inputs)

    def _destroy(self) -> None:
        self._lib.destroy()
        _OPDEFS.pop(self._qualname, None)


@overload
def custom_op(
    name: str,
    fn: None = None,
    /,
    *,
    mutates_args: Iterable[str] | str,
    device_types: str | Sequence[str] | None = None,
    schema: str | None = None,
) -> Callable[[Callable[..., Any]], CustomOpDef]: ...
@overload
def custom_op(
    name: str,
    fn: Callable[..., Any],
    /,
    *,
    mutates_args: Iterable[str] | str,
    device_types: str | Sequence[str] | None = None,
    schema: str | None = None,
) -> CustomOpDef: ...
def custom_op(
    name: str,
    fn: Callable[..., Any] | None = None,
    /,
    *,
    mutates_args: Iterable[str] | str,
    device_types: str | Sequence[str] | None = None,
    schema: str | None = None,
) -> Any:
    """Make an operator ``ns::name`` from a Python function (decorator or call).

    >>> @custom_op("doc_custom::scale", mutates_args=())
    ... def scale(x: float, factor: float = 2.0) -> float:
    ...     return x * factor
    >>> str(scale.schema)
    'doc_custom::scale(float x, float factor=2.0) -> float'
    """
    if not isinstance(name, str) or "::" not in name:
        raise ValueError(f"custom_op: expected a name 'namespace::name', got {name!r}")

    def make(f: Callable[..., Any]) -> CustomOpDef:
        text = (
            schema
            if schema is not None
            else infer_schema(f, mutates_args=mutates_args, op_name=name)
        )
        opdef = CustomOpDef(name, text, f, device_types)
        _OPDEFS[name] = opdef
        return opdef

    return make if fn is None else make(fn)


def register_kernel(
    op: str | OpOverload | CustomOpDef,
    device_types: str | Sequence[str],
    func: Callable[..., Any] | None = None,
    /,
    *,
    lib: Library | None = None,
) -> Any:
    """Register a kernel for device types on a custom op or any operator (decorator too)."""
    if isinstance(op, CustomOpDef):
        return op.register_kernel(device_types, func)
    opdef = _OPDEFS.get(op if isinstance(op, str) else op.name)
    if opdef is not None and lib is None:
        return opdef.register_kernel(device_types, func)
    return impl(op, device_types, func, lib=lib)


def register_fake(
    op: str | OpOverload | CustomOpDef,
    func: Callable[..., Any] | None = None,
    /,
    *,
    lib: Library | None = None,
) -> Any:
    """Register the meta (shape-only) implementation of an operator (decorator too)."""
    if isinstance(op, CustomOpDef):
        return op.register_fake(func)
    opdef = _OPDEFS.get(op if isinstance(op, str) else op.name)
    if opdef is not None and lib is None:
        return opdef.register_fake(func)
    return impl(op, "meta", func, lib=lib)


def _autograd_kernel(
    op: OpOverload, backward: Callable[..., Any], setup_context: Callable[..., Any] | None
) -> Callable[..., Any]:
    if not callable(backward):
        raise TypeError(
            f"register_autograd({op.name}): backward must be callable, got {backward!r}"
        )
    if not _autograd_factory:
        raise RuntimeError(
            f"register_autograd({op.name}): no autograd engine is installed. Import the tensor "
            f"package (import tensor), or install one with set_autograd_kernel_factory()."
        )
    return _autograd_factory[0](op, backward, setup_context)


def register_autograd(
    op: str | OpOverload | CustomOpDef,
    backward: Callable[..., Any],
    /,
    *,
    setup_context: Callable[..., Any] | None = None,
    lib: Library | None = None,
) -> None:
    """Register the backward of an operator made with ``define`` or ``custom_op``."""
    if isinstance(op, CustomOpDef):
        return op.register_autograd(backward, setup_context=setup_context)
    name = op if isinstance(op, str) else op.name
    opdef = _OPDEFS.get(name)
    if opdef is not None and lib is None:
        return opdef.register_autograd(backward, setup_context=setup_context)
    overload = op if isinstance(op, OpOverload) else OPERATORS.get(name)
    if overload is None or not overload.is_defined:
        raise RuntimeError(f"register_autograd: no operator named {name!r} is defined")
    kernel = _autograd_kernel(overload, backward, setup_context)
    library = lib if lib is not None else _library_for(name.split("::", 1)[0], None)
    library.impl(name, kernel, "Autograd", with_keyset=True, grad_only=True)
    return None


_AUTOCAST_KEYS = {"cpu": "AutocastCPU", "cuda": "AutocastCUDA"}


def _autocast_kernel(op: OpOverload, key: str, device_type: str, cast_inputs: Any) -> Any:
    """Cast eligible inputs to ``cast_inputs`` and call ``op`` again below this key.

    Eligible, as PyTorch's autocast: a tensor on ``device_type`` whose dtype is floating
    point and narrower than 64 bits (the tensor protocol's ``dtype``/``device``/``to``).
    """
    own_key = DispatchKeySet(key)

    def cast(v: Any) -> Any:
        if isinstance(v, (list, tuple)):
            return type(v)(cast(x) for x in v)
        dt = getattr(v, "dtype", None) if getattr(v, "_dispatch_bits", None) is not None else None
        if (
            dt is not None
            and getattr(dt, "is_floating_point", False)
            and getattr(dt, "itemsize", 8) < 8
            and v.device.type == device_type
            and dt != cast_inputs
        ):
            return v.to(cast_inputs)
        return v

    def kernel(*args: Any, **kwargs: Any) -> Any:
        with exclude_keys(own_key):
            return op(*(cast(a) for a in args), **{k: cast(v) for k, v in kwargs.items()})

    kernel.__qualname__ = kernel.__name__ = f"autocast_{device_type}_to_{cast_inputs}"
    return kernel


def register_autocast(
    op: str | OpOverload | CustomOpDef,
    device_type: str,
    cast_inputs: Any,
    /,
    *,
    lib: Library | None = None,
) -> None:
    """Make an operator take part in autocast on ``device_type``: inside an autocast
    region its floating-point inputs are cast to ``cast_inputs`` first (as PyTorch's
    ``torch.library.register_autocast``)."""
    key = _AUTOCAST_KEYS.get(device_type)
    if key is None:
        raise ValueError(
            f"register_autocast: device_type must be 'cpu' or 'cuda', got {device_type!r}"
        )
    if isinstance(op, CustomOpDef):
        overload: OpOverload | None = op._opoverload
    else:
        overload = op if isinstance(op, OpOverload) else OPERATORS.get(op)
    if overload is None or not overload.is_defined:
        raise RuntimeError(f"register_autocast: no operator named {op!r} is defined")
    name = overload.name
    kernel = _autocast_kernel(overload, key, device_type, cast_inputs)
    opdef = _OPDEFS.get(name)
    if opdef is not None and lib is None:
        opdef._lib.impl(name, kernel, key, allow_override=True)
        return
    library = lib if lib is not None else _library_for(name.split("::", 1)[0], None)
    library.impl(name, kernel, key)

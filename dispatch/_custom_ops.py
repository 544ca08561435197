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
from ._library import Library, impl, key_for_type
from ._operator import OPERATORS, OpOverload

__all__ = ["CustomOpDef", "custom_op", "register_fake", "register_kernel"]

F = TypeVar("F", bound=Callable[..., Any])
_OPDEFS: dict[str, CustomOpDef] = {}


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

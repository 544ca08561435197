"""``opcheck``: test that an operator's registrations agree with each other (PyTorch's).

Imports: the standard library and sibling ``dispatch`` modules.

The checks use only what the tensor protocol offers beyond ``_dispatch_bits``:
``clone()``, ``to("meta")``, ``shape``, ``dtype``, ``requires_grad``, ``==`` and
``all()`` (the ``tensor`` package's Tensor has them all).

- ``test_schema``: the call returns what the schema says (count and tensor-ness);
  it changes exactly the arguments the schema marks mutable (``Tensor(a!)``); and
  its outputs share no memory with its inputs unless the schema says they may.
- ``test_faketensor``: the operator runs on meta copies of the arguments (its
  fake/Meta kernel) and gives the same shapes and dtypes as the real call.
- ``test_autograd_registration``: when an input requires grad, the operator has a
  kernel at its Autograd key (``register_autograd``) instead of the fallback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._explain import resolve_op
from ._keys import DispatchKey
from ._operator import OpOverload, OpOverloadPacket

__all__ = ["OpCheckError", "opcheck"]

DEFAULT_TESTS = ("test_schema", "test_autograd_registration", "test_faketensor")


class OpCheckError(Exception):
    """An ``opcheck`` test failed; the message says which and why."""


def _is_tensor(v: Any) -> bool:
    return getattr(v, "_dispatch_bits", None) is not None


def _flat(v: Any) -> list[Any]:
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in _flat(item)]
    return [v]


def _map(v: Any, fn: Callable[[Any], Any]) -> Any:
    if isinstance(v, (list, tuple)):
        return type(v)(_map(x, fn) for x in v)
    return fn(v) if _is_tensor(v) else v


def _test_schema(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    schema = op.schema
    bound = schema.bind(args, kwargs, op_name=op.name)
    mutable = set(schema.mutated_args)
    before = {
        name: _map(value, lambda t: t.detach().clone())
        for name, value in bound.items()
        if any(_is_tensor(x) for x in _flat(value))
    }
    out = op(*_map(args, lambda t: t), **kwargs)
    if not schema.returns and out is None:
        outs: tuple[Any, ...] | list[Any] = ()
    else:
        outs = out if isinstance(out, (tuple, list)) and len(schema.returns) != 1 else (out,)
    if len(schema.returns) != len(outs) and not (
        len(schema.returns) == 1 and str(schema.returns[0].type).endswith("[]")
    ):
        raise OpCheckError(
            f"{op.name}: the schema declares {len(schema.returns)} return value(s) but the "
            f"call returned {len(outs)}"
        )
    for i, (ret, value) in enumerate(zip(schema.returns, outs, strict=False)):
        if str(ret.type) == "Tensor" and not _is_tensor(value):
            raise OpCheckError(
                f"{op.name}: return {i} should be a Tensor (schema: {schema}) but the kernel "
                f"returned {type(value).__name__}"
            )
    for name, saved in before.items():
        pairs = [
            (o, n) for o, n in zip(_flat(saved), _flat(bound[name]), strict=True) if _is_tensor(o)
        ]
        changed = any(not bool((o == n.detach()).all()) for o, n in pairs)
        if changed and name not in mutable:
            raise OpCheckError(
                f"{op.name}: argument '{name}' was modified in place, but the schema does "
                f"not mark it mutable; declare it Tensor(a!) (custom_op: mutates_args="
                f"['{name}'])"
            )
        if not changed and name in mutable:
            raise OpCheckError(
                f"{op.name}: argument '{name}' is declared mutable (Tensor(a!)) but the call "
                f"left it unchanged; drop it from mutates_args if the kernel never writes it"
            )
    # Outputs may share memory with an input only where the schema says so (Tensor(a)).
    aliased = {r.alias_info is not None for r in schema.returns}
    inputs = [t for value in bound.values() for t in _flat(value) if _is_tensor(t)]
    for i, value in enumerate(outs):
        if not _is_tensor(value) or True in aliased:
            continue
        for t in inputs:
            if value is t or getattr(value, "_base", None) is t or _same_data(value, t):
                raise OpCheckError(
                    f"{op.name}: output {i} aliases an input, but the schema's return is not "
                    f"annotated as a view (Tensor(a)); return a new tensor (e.g. x.clone())"
                )


def _same_data(a: Any, b: Any) -> bool:
    ptr = getattr(a, "data_ptr", None)
    return ptr is not None and a.numel() > 0 and b.numel() > 0 and ptr() == b.data_ptr()


def _test_faketensor(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    real = op(*args, **kwargs)
    meta_args = _map(args, lambda t: t.detach().to("meta"))
    meta_kwargs = {k: _map(v, lambda t: t.detach().to("meta")) for k, v in kwargs.items()}
    try:
        fake = op(*meta_args, **meta_kwargs)
    except NotImplementedError as e:
        raise OpCheckError(
            f"{op.name}: running on meta tensors failed ({e}). Register a fake "
            f"implementation with register_fake('{op.name}')."
        ) from e
    for i, (r, f) in enumerate(zip(_flat(real), _flat(fake), strict=False)):
        if _is_tensor(r) and (tuple(r.shape) != tuple(f.shape) or r.dtype != f.dtype):
            raise OpCheckError(
                f"{op.name}: output {i} of the fake (meta) implementation has shape "
                f"{tuple(f.shape)} and dtype {f.dtype}, but the real kernel gives shape "
                f"{tuple(r.shape)} and dtype {r.dtype}"
            )


def _test_autograd_registration(
    op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    tensors = [t for t in _flat((args, list(kwargs.values()))) if _is_tensor(t)]
    if not any(t.requires_grad for t in tensors):
        return
    devices = {t.device.type for t in tensors}
    for device in devices:
        key = {"cpu": DispatchKey.AutogradCPU, "cuda": DispatchKey.AutogradCUDA}.get(device)
        if key is None:
            continue
        entry = op._entries[int(key)]
        if entry.source == "backend fallback" and not entry.kernel.is_fallthrough:  # type: ignore[union-attr]
            raise OpCheckError(
                f"{op.name}: an input requires grad, but the operator has no autograd "
                f"registration at {key.name} (it would fall back to {entry.kernel.name}). "  # type: ignore[union-attr]
                f"Register one with register_autograd('{op.name}', backward, "
                f"setup_context=...), or a CompositeImplicitAutograd kernel."
            )


_TESTS = {
    "test_schema": _test_schema,
    "test_autograd_registration": _test_autograd_registration,
    "test_faketensor": _test_faketensor,
}


def opcheck(
    op: OpOverload | OpOverloadPacket | str | Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any] | None = None,
    *,
    test_utils: str | tuple[str, ...] = DEFAULT_TESTS,
    raise_exception: bool = True,
) -> dict[str, str]:
    """Check an operator's registrations on one sample call.

    Returns ``{test name: "SUCCESS" or the failure message}``; with
    ``raise_exception`` the first failure raises ``OpCheckError``.
    """
    overload = getattr(op, "_opoverload", op)  # a CustomOpDef
    overload = resolve_op(overload)
    kwargs = kwargs or {}
    names = (test_utils,) if isinstance(test_utils, str) else tuple(test_utils)
    results: dict[str, str] = {}
    for name in names:
        test = _TESTS.get(name)
        if test is None:
            raise ValueError(f"opcheck: unknown test {name!r}; choose from {sorted(_TESTS)}")
        try:
            test(overload, args, kwargs)
        except OpCheckError as e:
            if raise_exception:
                raise
            results[name] = str(e)
        else:
            results[name] = "SUCCESS"
    return results

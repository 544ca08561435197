"""``opcheck``: test that an operator's registrations agree with each other (PyTorch's).

Imports: the standard library and sibling ``dispatch`` modules.

The checks use only what the tensor protocol offers beyond ``_dispatch_bits``:
``clone()``, ``detach()``, ``to(device)``, ``device.type``, ``shape``, ``dtype``,
``requires_grad``, ``==``, ``-``, ``abs()``, ``max()``, ``isclose()`` and ``all()`` (the
``tensor`` package's Tensor has them all), and, to know whether a CUDA device is
there, the ``cuda.is_available()`` of the package that defines the tensor type
(``tensor.cuda.is_available()``; ``torch.cuda`` has the same).  ``dispatch`` imports no
tensor package: that package is found in ``sys.modules``, where its tensors put it.

- ``test_schema``: the call returns what the schema says (count and tensor-ness);
  it changes exactly the arguments the schema marks mutable (``Tensor(a!)``); and
  its outputs share no memory with its inputs unless the schema says they may.
- ``test_faketensor``: the operator runs on meta copies of the arguments (its
  fake/Meta kernel) and gives the same shapes and dtypes as the real call.
- ``test_autograd_registration``: when an input requires grad, the operator has a
  kernel at its Autograd key (``register_autograd``) instead of the fallback.
- ``test_cuda``: when a CUDA device is available, the operator runs on CUDA copies of
  the tensor arguments and gives what it gives on CPU copies: outputs (and mutated
  arguments) on CUDA, with the same shapes, dtypes and values (to the default
  tolerances of ``torch.testing``; values are not compared for operators tagged
  ``nondeterministic_seeded``).  Without a CUDA device it does not run.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

from ._explain import resolve_op
from ._keys import DispatchKey
from ._operator import OpOverload, OpOverloadPacket

__all__ = ["OpCheckError", "opcheck"]

DEFAULT_TESTS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_cuda")
# (rtol, atol) per dtype for comparing CUDA results with CPU ones: torch.testing's defaults.
_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


class OpCheckError(Exception):
    """An ``opcheck`` test failed; the message says which and why."""


class _Skipped(Exception):
    """A test that cannot run for this call (no CUDA device); left out of the results."""


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


def _cuda_available(tensors: list[Any]) -> bool:
    """Whether the package that defines the tensors' type says a CUDA device is there."""
    for t in tensors:
        for cls in type(t).__mro__:
            package = sys.modules.get(cls.__module__.partition(".")[0])
            is_available = getattr(getattr(package, "cuda", None), "is_available", None)
            if callable(is_available):
                return bool(is_available())
    return False


def _test_cuda(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    tensors = [t for t in _flat((args, list(kwargs.values()))) if _is_tensor(t)]
    on_devices = all(t.device.type in ("cpu", "cuda") for t in tensors)
    if not tensors or not on_devices or not _cuda_available(tensors):
        raise _Skipped("no CUDA device")
    runs = {}
    for device in ("cpu", "cuda"):

        def copy(t: Any, device: str = device) -> Any:
            return t.detach().clone().to(device)

        call_args = _map(args, copy)
        call_kwargs = {k: _map(v, copy) for k, v in kwargs.items()}
        try:
            out = op(*call_args, **call_kwargs)
        except Exception as e:
            raise OpCheckError(
                f"{op.name}: the call failed on {device.upper()} copies of the inputs "
                f"({type(e).__name__}: {e}); register a kernel for it "
                f"(register_kernel('{op.name}', '{device}')) or a device-generic one"
            ) from e
        runs[device] = (out, op.schema.bind(call_args, call_kwargs, op_name=op.name))
    values = "nondeterministic_seeded" not in op.tags
    (expected, cpu_bound), (got, cuda_bound) = runs["cpu"], runs["cuda"]
    _compare(op, "output", expected, got, values)
    for name in op.schema.mutated_args:
        _compare(op, f"argument '{name}'", cpu_bound[name], cuda_bound[name], values)


def _compare(op: OpOverload, what: str, expected: Any, got: Any, values: bool) -> None:
    """CUDA results ``got`` against CPU results ``expected`` (``what``: their name)."""
    expected_flat, got_flat = _flat(expected), _flat(got)
    if len(expected_flat) != len(got_flat):
        raise OpCheckError(
            f"{op.name}: on CUDA the call gives {len(got_flat)} {what}(s), on the CPU "
            f"{len(expected_flat)}"
        )
    for i, (e, g) in enumerate(zip(expected_flat, got_flat, strict=True)):
        label = f"{what} {i}" if what == "output" else what
        if not _is_tensor(e):
            same = (
                math.isclose(e, g, rel_tol=1.3e-6, abs_tol=1e-5)
                if isinstance(e, float) and isinstance(g, float)
                else not _is_tensor(g) and e == g
            )
            if not same:
                raise OpCheckError(f"{op.name}: {label} is {g!r} on CUDA but {e!r} on the CPU")
            continue
        if not _is_tensor(g):
            raise OpCheckError(
                f"{op.name}: with CUDA inputs, {label} is a {type(g).__name__}, not a tensor"
            )
        if g.device.type != "cuda":
            raise OpCheckError(
                f"{op.name}: with CUDA inputs, {label} is on {g.device}, not on CUDA; a "
                f"kernel should return tensors on its inputs' device"
            )
        if tuple(g.shape) != tuple(e.shape) or g.dtype != e.dtype:
            raise OpCheckError(
                f"{op.name}: {label} has shape {tuple(g.shape)} and dtype {g.dtype} on CUDA, "
                f"but shape {tuple(e.shape)} and dtype {e.dtype} on the CPU; the CUDA and CPU "
                f"kernels disagree"
            )
        if values:
            mismatch = _mismatch(e, g.to("cpu"))
            if mismatch:
                raise OpCheckError(
                    f"{op.name}: {label} on CUDA differs from the CPU result ({mismatch}); "
                    f"the CUDA and CPU kernels disagree"
                )


def _mismatch(expected: Any, got: Any) -> str:
    """How two CPU tensors of one shape and dtype differ ("" if they agree)."""
    dt = expected.dtype
    if getattr(dt, "is_floating_point", False) or getattr(dt, "is_complex", False):
        rtol, atol = _TOLERANCES.get(getattr(dt, "name", ""), _TOLERANCES["float32"])
        if bool(expected.isclose(got, rtol=rtol, atol=atol, equal_nan=True).all()):
            return ""
        largest = float((expected - got).abs().max())
        return f"largest absolute difference {largest:g}, with rtol={rtol:g}, atol={atol:g}"
    if bool((expected == got).all()):
        return ""
    return "the values are not equal"


_TESTS = {
    "test_schema": _test_schema,
    "test_autograd_registration": _test_autograd_registration,
    "test_faketensor": _test_faketensor,
    "test_cuda": _test_cuda,
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

    Returns ``{test name: "SUCCESS" or the failure message}`` for the tests that ran
    (``test_cuda`` runs only where a CUDA device is available); with
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
        except _Skipped:
            continue
        except OpCheckError as e:
            if raise_exception:
                raise
            results[name] = str(e)
        else:
            results[name] = "SUCCESS"
    return results

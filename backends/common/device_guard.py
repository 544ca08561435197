"""The guard every kernel of a plug-in device runs under (Note [Plug-in devices] in
``backends.common.device``).

Imports: ``dispatch`` (the ops namespace, for schemas) and ``backends.common.errors``.

``guard`` checks the devices of the tensor arguments (an error naming both; 0-d CPU
tensors are moved to the device, as PyTorch does for CUDA), refuses in-place writes
that would leave views stale on a device whose views do not share memory, reports what
the library lacks as ``NotImplementedError`` naming the operator and the device, and
gives results of a lazy library their sizes (``known_shape``).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dispatch import ops

from . import errors
from .frontend import FrontEnd

if TYPE_CHECKING:  # for annotations only: device imports this module
    from .device import DeviceSpec

__all__ = ["guard"]


class _Schema:
    """What the guard needs of an operator's schema, looked up once per kernel."""

    def __init__(self, qualname: str) -> None:
        name, _, overload = qualname.partition(".")
        text = ""
        self.names: list[str] = []
        self.writes: tuple[int, ...] = ()
        self.returns_view = False
        try:  # the operators are defined by now
            op = getattr(getattr(ops.core, name), overload or "default")
            schema = op._schema
            text = str(op.schema)
        except AttributeError:
            schema = None
        if schema is not None:
            self.names = [a.name for a in schema.arguments]
            self.writes = tuple(i for i, a in enumerate(schema.arguments) if a.is_write)
            self.returns_view = any(
                r.alias_info is not None and not r.alias_info.is_write for r in schema.returns
            )
        self.text = text


# A library function called with arguments of the standard's signature it does not take
# (NumPy's argsort has no ``descending``): raised by C code, so no frame of its own.
_SIGNATURE = re.compile(
    r"unexpected keyword argument|positional argument|required (positional|keyword)"
)


def _library_error(e: BaseException, packages: tuple[str, ...]) -> bool:
    """Whether an error comes from the device's library (its innermost frame is there, or
    the library refused the call's signature), not from the shared kernel's own checks."""
    seen: BaseException | None = e
    for _ in range(4):  # the error, and what the shared kernel re-raised it from
        if seen is None:
            return False
        tb = seen.__traceback__
        if tb is not None:
            while tb.tb_next is not None:
                tb = tb.tb_next
            if tb.tb_frame.f_globals.get("__name__", "").partition(".")[0] in packages:
                return True
        if isinstance(seen, TypeError) and _SIGNATURE.search(str(seen)) is not None:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def guard(
    front: FrontEnd, spec: DeviceSpec, qualname: str, kernel: Callable[..., Any], shared: bool
) -> Callable[..., Any]:
    """``kernel`` checking devices, moving 0-d CPU tensors, refusing writes that would leave
    views stale (Note [Plug-in devices]) and reporting what the library lacks."""
    info = _Schema(qualname)
    name = spec.name
    op = qualname.partition(".")[0]
    packages = tuple(
        {getattr(m, "__name__", "").partition(".")[0] for m in (spec.lib, spec.namespace)} - {""}
    )
    tensor_type = front.Tensor
    writes = info.writes
    check_views = not shared and bool(writes)
    known_shape = spec.known_shape
    marks_views = not shared and info.returns_view

    def label(i: int) -> str:
        return info.names[i] if i < len(info.names) else f"#{i}"

    def scan(args: tuple[Any, ...]) -> tuple[Any, ...]:
        dev = first = None
        moved: list[Any] | None = None
        for i, a in enumerate(args):
            items = a if type(a) is list or type(a) is tuple else (a,)
            for t in items:
                d = getattr(t, "_device", None)
                if d is None or not isinstance(t, tensor_type):
                    continue
                if d.type == name:
                    if dev is None:
                        dev, first = d, i
                    elif d is not dev:
                        raise errors.device_mismatch(op, (label(first), dev), (label(i), d))
        for i, a in enumerate(args):
            if isinstance(a, tensor_type) and a._device.type != name:
                if a._device.type == "cpu" and a._array.ndim == 0 and dev is not None:
                    if moved is None:
                        moved = list(args)
                    out = front.make(spec.device_array(a._array), a._dtype, dev)
                    if a._wrapped_number:
                        out.__class__ = type(a)
                    moved[i] = out
                    continue
                there = (label(first), dev) if dev is not None else ("self", name)
                raise errors.device_mismatch(op, there, (label(i), a._device))
            if type(a) is list or type(a) is tuple:
                for t in a:
                    if isinstance(t, tensor_type) and t._device.type != name:
                        there = (label(first), dev) if dev is not None else ("self", name)
                        raise errors.device_mismatch(op, there, (label(i), t._device))
        return tuple(moved) if moved is not None else args

    def guarded(*args: Any, **kwargs: Any) -> Any:
        args = scan(args)
        if check_views:
            for i in writes:
                t = args[i] if i < len(args) else kwargs.get(label(i))
                if isinstance(t, tensor_type) and (t._base is not None or _live_views(t)):
                    raise NotImplementedError(
                        f"{qualname}(): device {name!r} cannot write in place into a view or "
                        f"into a tensor that has views (argument '{label(i)}'): its arrays do "
                        f"not share memory, so the other tensors would keep the old values. "
                        f"Use the out-of-place form ({op.rstrip('_')}), or .clone() first."
                    )
        try:
            out = kernel(*args, **kwargs)
        except NotImplementedError as e:
            if f"'{name}'" in str(e):
                raise
            raise NotImplementedError(
                f"{qualname}(): not implemented on device {name!r}: {e}"
            ) from e
        except AttributeError as e:
            raise _unsupported(qualname, info.text, spec, e) from e
        except (TypeError, ValueError, IndexError) as e:
            if _library_error(e, packages):
                raise _unsupported(qualname, info.text, spec, e) from e
            raise
        if known_shape is not None:
            out = _with_known_shapes(out, known_shape, tensor_type)
        if marks_views:
            base = args[0] if args and isinstance(args[0], tensor_type) else None
            if base is not None:
                root = base._base if base._base is not None else base
                views = root.__dict__.setdefault(_VIEWS, [])
                for t in out if type(out) is tuple or type(out) is list else (out,):
                    if isinstance(t, tensor_type):
                        views.append(weakref.ref(t))
        return out

    guarded.__name__ = getattr(kernel, "__name__", qualname)
    guarded.__qualname__ = getattr(kernel, "__qualname__", qualname)
    guarded.__module__ = getattr(kernel, "__module__", __name__)
    guarded.__wrapped__ = kernel  # type: ignore[attr-defined]
    return guarded


# A tensor's live views on a device whose views do not share memory: weak references, so
# the temporaries autograd makes (``w.T`` in a matmul's backward) do not pin the tensor.
_VIEWS = "_plugin_views"


def _live_views(t: Any) -> bool:
    views = t.__dict__.get(_VIEWS)
    if not views:
        return False
    views[:] = [r for r in views if r() is not None]
    return bool(views)


def _with_known_shapes(out: Any, known_shape: Callable[[Any], Any], tensor_type: type) -> Any:
    """``out`` with every unknown size of its tensors' arrays computed (NaN != NaN)."""
    for t in out if type(out) is tuple or type(out) is list else (out,):
        if isinstance(t, tensor_type):
            shape = getattr(t._array, "shape", ())
            if any(s != s for s in shape):
                t._array = known_shape(t._array)
    return out


def _unsupported(qualname: str, schema: str, spec: DeviceSpec, e: BaseException) -> Exception:
    lib = getattr(spec.lib, "__name__", repr(spec.lib))
    return NotImplementedError(
        f"{qualname}(): not implemented on device {spec.name!r}: the shared kernel needs "
        f"something {lib} does not have ({type(e).__name__}: {e}). Register a kernel for it "
        f"with impl({('core::' + qualname)!r}, {spec.name!r}), or compute on the CPU "
        f"(.to('cpu')).  Schema: {schema}"
    )

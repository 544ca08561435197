"""Device-independent kernels of the built-in operators: composites, factories' backend
selection, conversions.

Imports: ``dispatch`` and this package's family modules; what they need of the front end
comes in ``register(front)`` (Note [One-way imports] in ``backends.common.frontend``).

- BackendSelect kernels of the factories (``zeros``, ``rand`` ...): a factory has
  no tensor argument to dispatch on, so, as in PyTorch, its BackendSelect kernel
  reads ``device`` and redispatches to that device's backend key.
- CompositeExplicitAutograd kernels: ``_to_copy`` (moves and converts arrays for
  every backend pair), ``clone`` (its copy) and the ``*_like`` factories (which call
  the plain factory).
- CompositeImplicitAutograd kernels: ``max.other``/``min.other`` (and their out=
  forms) are ``maximum``/``minimum``; the composites of ``shape``, ``nn`` and
  ``variants`` (``linalg`` holds the decompositions autocast runs).
"""

from __future__ import annotations

from typing import Any

from numpy import ndarray

from dispatch import DispatchKeySet, Library, _tls, ops

from ..common import fastpaths
from ..common.frontend import FrontEnd
from . import nn, shape, variants

__all__ = ["LIB", "register", "to_copy_kernel"]

LIB: Library | None = None
_DEFAULT_SETS = (_tls.DEFAULT_INCLUDED, _tls.DEFAULT_KEEP)  # Note [Default key sets]

_BACKEND_KEYSETS: dict[Any, DispatchKeySet] = {}


def _backend_select(front: FrontEnd, op: Any) -> Any:
    device_type, canonical, to_device = front.device, front.canonical_device, front.to_device
    no_device = canonical(to_device(None))  # what a factory without ``device=`` makes: cpu

    def select(keyset: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        dev = kwargs.get("device")
        # CPU and meta device objects without an index are canonical already; "cpu:0"
        # becomes "cpu" (the factories' fast paths use the device they are given).
        if dev is None:
            dev = no_device
        elif type(dev) is not device_type or dev.index is not None or dev.type == "cuda":
            dev = canonical(to_device(dev))
        kwargs["device"] = dev
        ks = _BACKEND_KEYSETS.get(dev.backend_key)
        if ks is None:
            ks = _BACKEND_KEYSETS[dev.backend_key] = DispatchKeySet(dev.backend_key)
        # ``op.redispatch(ks, ...)`` without checking the call again: the entry that
        # reached this kernel checked it, and the device it now names is a device object.
        return op.below(ks.bits)(*args, **kwargs)

    select.__name__ = select.__qualname__ = f"{op.name.split('::')[-1]}_backend_select"
    return select


# Note [Copies keep the layout]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# PyTorch's ``clone``, ``to`` and ``_to_copy`` default to ``preserve_format``: a copy of a
# dense tensor has its strides (``x.t().clone()`` is not contiguous), and of any other
# the dense strides in the same order of dims (``infer_dense_strides``: the dims sorted
# by stride, a dim of stride 0 keeping its place; ``dense_order``).  ``contiguous_format``
# (what ``contiguous()`` asks for) is row-major; ``channels_last`` puts the dims (N, H,
# W, C) of a 4-D tensor in that memory order (``channels_last_3d``: N, D, H, W, C of a
# 5-D one).  A row-major source is copied as it is; any other goes into an empty array
# of its order (``laid_out``), the same way on the fast path and the general one.
_MEMORY_FORMATS = ("preserve_format", "contiguous_format", "channels_last", "channels_last_3d")


def dense_order(shape: tuple[int, ...], strides: tuple[int, ...]) -> list[int]:
    """PyTorch's ``infer_dense_strides`` order of the dims, outermost first: an insertion
    sort by stride (equal strides: the larger dim outer), a dim of stride 0 left where
    the row-major order has it."""
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))  # innermost first, as PyTorch sorts them

    def should_swap(d0: int, d1: int) -> int:
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if shape[d0] > shape[d1] else 0

    for i in range(1, ndim):
        dim1 = i
        for j in range(1, i + 1):
            dim0 = i - j
            c = should_swap(perm[dim0], perm[dim1])
            if c > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif c < 0:
                break
    return perm[::-1]


def memory_order(array: Any, memory_format: Any, op: str) -> list[int] | None:
    """The dims of a copy of ``array`` in memory order, outermost first, for
    ``memory_format`` (Note [Copies keep the layout]); None: row-major."""
    if memory_format is None or memory_format == "preserve_format":
        if array.flags.c_contiguous:
            return None
        order = dense_order(array.shape, tuple(s // array.itemsize for s in array.strides))
        return None if order == list(range(array.ndim)) else order
    if memory_format == "contiguous_format":
        return None
    if memory_format not in _MEMORY_FORMATS:
        raise RuntimeError(
            f"{op}(): memory_format must be one of {', '.join(_MEMORY_FORMATS)}, not "
            f"{memory_format!r}"
        )
    rank = 4 if memory_format == "channels_last" else 5
    if array.ndim != rank:
        raise RuntimeError(
            f"{op}(): required rank {rank} tensor to use {memory_format} format (got a "
            f"{array.ndim}-D tensor)"
        )
    return [0, *range(2, rank), 1]


def laid_out(values: Any, order: list[int] | None, dtype: Any = None) -> Any:
    """``values`` in the memory ``order`` (None: row-major) as ``dtype`` (None: theirs):
    ``values`` itself when they are a row-major copy already, else a new array of that
    order holding them (cast as ``astype`` casts)."""
    if order is None and dtype is None:
        return values if values.flags.c_contiguous else values.copy()
    if order is None:
        return values.astype(dtype, order="C")
    shape = values.shape
    buffer = type(values)(tuple(shape[d] for d in order), values.dtype if dtype is None else dtype)
    out = buffer.transpose([order.index(d) for d in range(len(shape))])
    out[...] = values
    return out


def to_copy_kernel(front: FrontEnd) -> Any:
    """``_to_copy``: a copy of ``self`` with another dtype and/or on another device."""
    to_dtype, canonical, to_device = front.to_dtype, front.canonical_device, front.to_device
    move_array, make = front.move_array, front.make
    cpu = canonical(to_device("cpu"))
    # Note [Copy fast path]: dtypes a CPU array reaches with a plain ``astype``: all but the
    # unsigned ones (``cast_array``'s float-to-unsigned rule).
    astype_targets = frozenset(
        d
        for d in (
            front.bool, front.int8, front.int16, front.int32, front.int64, front.float16,
            front.bfloat16, front.float32, front.float64, front.complex64, front.complex128,
        )
    )  # fmt: skip

    def to_copy(
        self: Any,
        *,
        dtype: Any = None,
        device: Any = None,
        non_blocking: bool = False,
        memory_format: Any = None,
    ) -> Any:
        # Note [Copy fast path]: a NumPy array of a CPU tensor copied or cast on the CPU
        # (``clone()``, autocast's casts): the copy or ``astype`` and the wrap, without
        # the argument conversions and move_array's device checks (~1 us a call); a
        # row-major one as it is, any other laid out as PyTorch's preserve_format lays it
        # (Note [Copies keep the layout]).
        array = self._array
        if (
            device is None
            and not non_blocking
            and self._device is cpu
            and type(array) is ndarray
            and fastpaths.ENABLED
        ):
            if memory_format is None or memory_format == "preserve_format":
                if dtype is None or dtype is self._dtype:
                    if array.flags.c_contiguous:
                        return make(array.copy(), self._dtype, cpu)
                    if 0 not in array.strides:  # NumPy's "K" order is PyTorch's here
                        return make(array.copy("K"), self._dtype, cpu)
                    out = laid_out(array, memory_order(array, None, "to"))
                    return make(out, self._dtype, cpu)
                if dtype in astype_targets:
                    if array.flags.c_contiguous or 0 not in array.strides:
                        return make(array.astype(dtype.numpy_dtype), dtype, cpu)
                    out = laid_out(array, memory_order(array, None, "to"), dtype.numpy_dtype)
                    return make(out, dtype, cpu)
            elif memory_format == "contiguous_format":
                if dtype is None or dtype is self._dtype:
                    return make(array.copy(), self._dtype, cpu)
                if dtype in astype_targets:
                    return make(array.astype(dtype.numpy_dtype, order="C"), dtype, cpu)
        dt = self._dtype if dtype is None else to_dtype(dtype, op="to")
        dev = self._device if device is None else canonical(to_device(device))
        if self._device.type == "meta" and dev.type != "meta":
            raise NotImplementedError(
                f"to(): Cannot copy out of meta tensor; no data! (moving a meta tensor to "
                f"{dev}). Meta tensors have shapes and dtypes only; create the tensor on {dev} "
                f"instead."
            )
        np_dtype = None if dt is self._dtype else dt.numpy_dtype
        source = self._array
        array = move_array(source, dev, np_dtype, copy=True, non_blocking=non_blocking)
        if dev == self._device and hasattr(source, "flags") and hasattr(array, "flags"):
            # A NumPy or CuPy copy on its own device: laid out as memory_format asks
            # (Note [Copies keep the layout]); moves between devices come row-major.
            array = laid_out(array, memory_order(source, memory_format, "to"))
        elif memory_format not in (None, *_MEMORY_FORMATS):
            memory_order(source, memory_format, "to")  # raises, naming the formats
        return make(array, dt, dev)

    to_copy.astype_copy = True  # type: ignore[attr-defined]  # Note [Autocast product fast path]
    return to_copy


def clone_kernel(front: FrontEnd) -> Any:
    """``clone``: ``_to_copy`` on the tensor's own device, in its dtype (called as an
    operator: a kernel registered for it at a backend key copies); a row-major CPU
    array copied here, as ``_to_copy``'s fast path would (Note [Copy fast path])."""
    make = front.make
    cpu = front.canonical_device(front.to_device("cpu"))

    def clone(self: Any, *, memory_format: Any = None) -> Any:
        if memory_format is None:
            array = self._array
            if (
                self._device is cpu
                and type(array) is ndarray
                and fastpaths.ENABLED
                and array.flags.c_contiguous
            ):
                return make(array.copy(), self._dtype, cpu)
            return ops.core._to_copy.default(self)
        return ops.core._to_copy.default(self, memory_format=memory_format)

    return clone


def _like(name: str) -> Any:
    factory = getattr(ops.core, name.removesuffix("_like")).default

    if name == "full_like":

        def full_like(self: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
            return factory(
                tuple(self._array.shape), fill_value,
                dtype=self._dtype if dtype is None else dtype,
                device=self._device if device is None else device,
            )  # fmt: skip

        return full_like

    def like(self: Any, *, dtype: Any = None, device: Any = None) -> Any:
        if dtype is None and device is None and fastpaths.ENABLED:
            dev = self._device
            # Note [Like fast path]: ``ones_like(x)`` (backward's root gradient, the
            # optimizers' zeros_like) is the factory's backend kernel on x's own device,
            # which is what the factory's BackendSelect kernel redispatches to for a
            # canonical device (no index, not CUDA: select leaves it as it is); the
            # factory's argument check has nothing to refuse.  Only with the default
            # thread state: a Python mode must see the factory call.
            if (
                dev.index is None
                and dev.type != "cuda"
                and (not _tls.NONDEFAULT[0] or _tls.state.sets == _DEFAULT_SETS)
            ):
                ks = _BACKEND_KEYSETS.get(dev.backend_key)
                if ks is None:
                    ks = _BACKEND_KEYSETS[dev.backend_key] = DispatchKeySet(dev.backend_key)
                return factory.below(ks.bits)(
                    tuple(self._array.shape), dtype=self._dtype, device=dev
                )
        return factory(
            tuple(self._array.shape),
            dtype=self._dtype if dtype is None else dtype,
            device=self._device if device is None else device,
        )

    like.__name__ = like.__qualname__ = name
    return like


def max_other(self: Any, other: Any) -> Any:
    return ops.core.maximum.default(self, other)  # type: ignore[no-any-return]


def min_other(self: Any, other: Any) -> Any:
    return ops.core.minimum.default(self, other)  # type: ignore[no-any-return]


def max_other_out(self: Any, other: Any, *, out: Any) -> Any:
    return ops.core.maximum.out(self, other, out=out)  # type: ignore[no-any-return]


def min_other_out(self: Any, other: Any, *, out: Any) -> Any:
    return ops.core.minimum.out(self, other, out=out)  # type: ignore[no-any-return]


def register(front: FrontEnd) -> None:
    """Register these kernels (once) into ``LIB``, an IMPL library of ``core``."""
    global LIB
    if LIB is not None:
        return
    lib = Library("core", "IMPL")
    # Factories dispatched by their `device` argument (normal.float_float has no tensors).
    for op in front.op_table:
        if op.family == "factory" and op.name != "normal":
            packet = getattr(ops.core, op.name)
            lib.impl(op.name, _backend_select(front, packet.default), "BackendSelect",
                     with_keyset=True)  # fmt: skip
    lib.impl(
        "normal.float_float",
        _backend_select(front, ops.core.normal.float_float),
        "BackendSelect",
        with_keyset=True,
    )
    lib.impl("_to_copy", to_copy_kernel(front), "CompositeExplicitAutograd")
    lib.impl("clone", clone_kernel(front), "CompositeExplicitAutograd")
    for op in front.op_table:
        if op.family == "like":
            lib.impl(op.name, _like(op.name), "CompositeExplicitAutograd")
    lib.impl("max.other", max_other, "CompositeImplicitAutograd")
    lib.impl("min.other", min_other, "CompositeImplicitAutograd")
    lib.impl("max.other_out", max_other_out, "CompositeImplicitAutograd")
    lib.impl("min.other_out", min_other_out, "CompositeImplicitAutograd")
    shape.register(lib)
    nn.register(lib)
    variants.register(lib)
    LIB = lib

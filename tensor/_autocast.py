"""Autocast: the ``autocast`` guard and PyTorch's per-operator casting policies.

Imports: the standard library, ``dispatch`` and ``tensor`` siblings (the policies
are in the operator table's rows: ``tensor.optable.AUTOCAST``).

State (per thread, SEMANTICS.md §8): enabled for a device type exactly when its
autocast key is not in the thread's exclude set; the guard clears that exclusion,
sets the lower-precision dtype, counts nesting and clears the cast cache when the
outermost region ends.  Kernels at AutocastCPU / AutocastCUDA exclude their own
key and call the operator again from the top with cast arguments, so autograd
records the casts.  Operators without a policy fall through (the dispatcher's
default fallthrough fallbacks), custom operators included unless they declare
one with ``dispatch.register_autocast``.  ``einsum`` and ``tensordot`` run PyTorch's
decomposition under CPU autocast (``DECOMPOSED``; Note [einsum and tensordot under
autocast] in ``backends.composite.linalg``).
"""

from __future__ import annotations

import functools
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import dispatch
from backends.common import fastpaths
from backends.composite import linalg as _composite_linalg
from dispatch import REQUIRES_GRAD_BIT, DispatchKey, DispatchKeySet, Library, ops
from dispatch._keys import keyset_from_bits
from dispatch._tls import state as _tls_state

from . import _dtype, cuda, optable
from ._dtype import dtype

__all__ = [
    "autocast",
    "custom_bwd",
    "custom_fwd",
    "get_autocast_dtype",
    "is_autocast_enabled",
    "register",
]

F = TypeVar("F", bound=Callable[..., Any])
_KEY = {"cpu": DispatchKey.AutocastCPU, "cuda": DispatchKey.AutocastCUDA}
_PLUGIN_KEY = DispatchKey.AutocastPrivateUse1

# Note [Autocast on plug-in devices]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# c10 has one autocast key for the PrivateUse backends, AutocastPrivateUse1, and
# PyTorch registers CUDA's policy lists at it.  We keep c10's keys: every plug-in
# device's tensors carry AutocastPrivateUse1 (devices at PrivateUse2 and 3 too:
# ``tensor._device.add_device_type``), its kernels are CUDA's policies, and which
# plug-in devices have autocast on is this thread's ``state.plugins`` (device type ->
# lower-precision dtype).  The key is excluded exactly when no plug-in device has
# autocast on; its kernel reads the device of the call's first tensor and applies the
# policy only if autocast is on for that device type (``autocast("two")`` casts
# nothing on "one"), else calls the operator again past the key.  So three devices
# share one key at the cost of one device lookup per call, and autocast on CPU or CUDA
# never reaches it.  A device's default lower-precision dtype is float16 where its
# namespace has it, bfloat16 else; one with neither, or asked for a dtype it lacks,
# raises naming the device (PyTorch refuses dtypes the device's AMP does not support).
_LOWER = ("float16", "bfloat16")


class _State(threading.local):
    def __init__(self) -> None:
        self.dtypes = {"cpu": _dtype.bfloat16, "cuda": _dtype.float16}
        # plug-in device type -> its autocast dtype, while autocast is on for it
        self.plugins: dict[str, dtype] = {}
        self.depth = 0
        self.cache_enabled = True
        # id(fp32 leaf) -> (weakref to it, its lower-precision copy)
        self.cache: dict[int, tuple[Any, Any]] = {}


state = _State()


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for ``device_type`` on this thread."""
    if _key(device_type) is _PLUGIN_KEY:
        return device_type in state.plugins
    return not dispatch.tls_is_dispatch_key_excluded(_key(device_type))


def get_autocast_dtype(device_type: str) -> dtype:
    _key(device_type)
    if device_type not in state.dtypes:  # a plug-in device: its default
        return _plugin_dtypes(device_type)[0]
    return state.dtypes[device_type]


def _key(device_type: str) -> DispatchKey:
    key = _KEY.get(device_type)
    if key is None:
        from . import _plugin

        if _plugin.get_device(device_type) is not None:
            return _PLUGIN_KEY
        raise ValueError(
            f"autocast: device_type must be 'cpu', 'cuda' or a registered plug-in device "
            f"({', '.join(sorted(_plugin.registered_devices())) or 'none registered'}), got "
            f"{device_type!r}"
        )
    return key


def _plugin_dtypes(device_type: str) -> tuple[dtype, ...]:
    """The lower-precision dtypes plug-in device ``device_type`` has, preferred first
    (Note [Autocast on plug-in devices]); raises naming the device if none."""
    from . import _plugin

    dev = _plugin.get_device(device_type)
    xp = dev.spec.namespace if dev is not None else None
    found = tuple(getattr(_dtype, n) for n in _LOWER if getattr(xp, n, None) is not None)
    if not found:
        raise RuntimeError(
            f"autocast: device {device_type!r} has no lower-precision dtype (its namespace "
            f"has neither float16 nor bfloat16), so autocast cannot run on it"
        )
    return found


def _set_plugin(device_type: str, dt: dtype | None) -> None:
    """Autocast on (``dt``) or off (None) for a plug-in device; the shared key is
    excluded exactly when it is off for all of them."""
    if dt is None:
        state.plugins.pop(device_type, None)
    else:
        state.plugins[device_type] = dt
    dispatch.tls_set_dispatch_key_excluded(_PLUGIN_KEY, not state.plugins)


class autocast:  # noqa: N801 - PyTorch's spelling
    """Run the region's eligible operators in lower precision, as PyTorch does.

    >>> import tensor as tt
    >>> a = tt.ones(2, 2)
    >>> with tt.autocast("cpu"):
    ...     (a @ a).dtype
    tensor.bfloat16
    """

    def __init__(
        self,
        device_type: str,
        dtype: dtype | None = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        self.device_type = device_type
        self.key = _key(device_type)
        self.enabled = bool(enabled)
        self.plugin = self.key is _PLUGIN_KEY
        if self.plugin:
            supported = _plugin_dtypes(device_type) if self.enabled else ()
            if self.enabled and dtype is not None and dtype not in supported:
                raise RuntimeError(
                    f"autocast: device {device_type!r} does not support {dtype} (its "
                    f"lower-precision dtypes: {', '.join(str(d) for d in supported)})"
                )
            dtype = dtype if dtype is not None else (supported[0] if supported else None)
        self.fast_dtype = dtype if dtype is not None else state.dtypes.get(device_type)
        self.cache_enabled = state.cache_enabled if cache_enabled is None else cache_enabled
        if (
            self.enabled
            and device_type == "cpu"
            and self.fast_dtype
            not in (
                _dtype.bfloat16,
                _dtype.float16,
            )
        ):
            warnings.warn(
                "In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                "CPU Autocast only supports dtype of torch.bfloat16, torch.float16 currently.",
                UserWarning,
                stacklevel=2,
            )
            self.enabled = False
        if self.enabled and device_type == "cuda" and not _cuda_available():
            warnings.warn(
                "User provided device_type of 'cuda', but CUDA is not available. Disabling",
                UserWarning,
                stacklevel=2,
            )
            self.enabled = False

    def __enter__(self) -> autocast:
        if self.plugin:
            self.prev = (state.plugins.get(self.device_type), None, state.cache_enabled)
            _set_plugin(self.device_type, self.fast_dtype if self.enabled else None)
            state.dtypes[self.device_type] = self.fast_dtype
            state.cache_enabled = self.cache_enabled
            state.depth += 1
            return self
        self.prev = (
            is_autocast_enabled(self.device_type),
            state.dtypes[self.device_type],
            state.cache_enabled,
        )
        dispatch.tls_set_dispatch_key_excluded(self.key, not self.enabled)
        state.dtypes[self.device_type] = self.fast_dtype
        state.cache_enabled = self.cache_enabled
        state.depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        state.depth -= 1
        if state.depth == 0:
            state.cache.clear()
        enabled, fast, cache_enabled = self.prev
        if self.plugin:
            _set_plugin(self.device_type, enabled)
            if enabled is not None:
                state.dtypes[self.device_type] = enabled
            state.cache_enabled = cache_enabled
            return
        dispatch.tls_set_dispatch_key_excluded(self.key, not enabled)
        state.dtypes[self.device_type] = fast
        state.cache_enabled = cache_enabled

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with autocast(self.device_type, self.fast_dtype, self.enabled, self.cache_enabled):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


def _cuda_available() -> bool:
    return bool(cuda.is_available())


# -- casting ------------------------------------------------------------------------------------
# Floating dtypes other than float64: the dtypes autocast may cast (SEMANTICS.md §8).
_ELIGIBLE_DTYPES = frozenset(
    d for d in _dtype.DTYPES if d.is_floating_point and d is not _dtype.float64
)


def _is_tensor(v: Any) -> bool:
    return getattr(v, "_dispatch_bits", None) is not None


def _eligible(v: Any, device_type: str) -> bool:
    """A floating tensor on the autocast device that is not float64 (SEMANTICS.md §8)."""
    return _is_tensor(v) and v.dtype in _ELIGIBLE_DTYPES and v.device.type == device_type


_to_copy = ops.core._to_copy.default
_RUNTIME_BITS = REQUIRES_GRAD_BIT - 1  # bits above: the tensor requires grad


def _cast(v: Any, device_type: str, to: dtype) -> Any:
    """``v`` cast to ``to`` if it is eligible; ``v`` itself otherwise (nothing allocated)."""
    bits = getattr(v, "_dispatch_bits", None)
    if bits is None:
        if isinstance(v, (list, tuple)):
            return type(v)(_cast(x, device_type, to) for x in v)
        return v
    dt = v._dtype
    if dt is to or dt not in _ELIGIBLE_DTYPES or v._device.type != device_type:
        return v
    if bits <= _RUNTIME_BITS and fastpaths.ENABLED:
        # Note [Autocast casts]: a tensor that does not require grad (no cache entry
        # either: the cache holds leaves that do) runs the kernel the call
        # ``_to_copy(v, dtype=to)`` would run, chosen as its call path chooses it (the
        # key set, then the slot), without the validation: the arguments are a tensor
        # and a dtype, valid by construction (~0.5 us a cast).
        included, keep = _tls_state.sets
        return _to_copy.below((bits | included) & keep & _to_copy._state.mask)(v, dtype=to)
    # The cache (PyTorch's cached_cast): the lower-precision copy of an fp32 leaf that
    # requires grad (a weight, not a view) is made once per region.
    cacheable = (
        state.cache_enabled
        and dt is _dtype.float32
        and to is state.dtypes[device_type]
        and v.requires_grad
        and v.is_leaf
        and getattr(v, "_base", None) is None
    )
    if cacheable:
        hit = state.cache.get(id(v))
        if hit is not None and hit[0]() is v:
            return hit[1]
    # ``v.to(to)`` without its argument parsing (~1.5 us a cast): dtype and device are
    # known here, and the dtype differs.  Still the operator, so autograd records it.
    out = _to_copy(v, dtype=to)
    if cacheable:
        state.cache[id(v)] = (weakref.ref(v), out)
    return out


# Note [Autocast product fast path]: the operators whose backend kernels (products in
# backends/common/linalg.py, linear in backends/composite/nn.py) cast and multiply in
# one step.
_FUSED_PRODUCTS = frozenset({"matmul", "mm", "bmm", "dot", "vdot", "outer", "linear"})


def _fused_kernel(op: Any, bits: int, first: Any, device_type: str) -> Any:
    """The kernel below autocast's fused product (its ``lower_precision``) for a call
    whose key set below autocast is ``bits`` and whose first tensor is ``first``, or
    None when the casts must run: ``first`` a tensor on the autocast device that does
    not require grad, no Python-layer key in ``bits``, nothing but autocast keys changed
    in this thread's sets (``beyond_autocast``: a function of them), and ``_cast`` would
    run the built-in copy kernel (Note [Copy fast path]: it marks itself
    ``astype_copy``) on ``first`` and on every tensor of its key bits (the fused
    products round their operands as it does; a copy kernel registered in its place
    must see the casts).  Depends on nothing but what the kernel's memo compares."""
    fbits = getattr(first, "_dispatch_bits", None)
    if fbits is None or fbits > _RUNTIME_BITS or first._device.type != device_type:
        return None
    if bits & _PYTHON_BITS or _tls_state.beyond_autocast:
        return None
    included, keep = _tls_state.sets
    copy = _to_copy.below((fbits | included) & keep & _to_copy._state.mask)
    if getattr(copy, "astype_copy", False) is not True:
        return None
    return getattr(op.below(bits), "lower_precision", None)


def _promote_type(op: Any, device_type: str, values: Any) -> dtype:
    """PyTorch's ``promote_type``/``prioritize``: start from the autocast dtype; an eligible
    float32 argument makes it float32; an eligible argument of another lower-precision
    dtype than the autocast one is an error (float64 and non-tensors are ignored)."""
    lower = state.dtypes[device_type]
    to = lower
    for v in values:
        for x in v if isinstance(v, (list, tuple)) else (v,):
            if not _eligible(x, device_type):
                continue
            if to is _dtype.float32 or x.dtype is _dtype.float32:
                to = _dtype.float32
            elif x.dtype is not lower:
                raise RuntimeError(
                    f"{op.name}: under autocast('{device_type}', dtype={lower}) an argument "
                    f"is {x.dtype}; promote-policy operators accept only {lower} and float32 "
                    f"arguments (PyTorch: 'Unexpected floating ScalarType in "
                    f"at::autocast::prioritize'). Cast it to {lower} or float32 first."
                )
    return to


def _cast_all(args: tuple[Any, ...], kwargs: dict[str, Any], device_type: str, to: dtype) -> Any:
    # A list comprehension, and no new dict when there are no keyword arguments: this
    # runs on every call of an autocast operator.
    return (
        tuple([_cast(a, device_type, to) for a in args]),
        {k: _cast(v, device_type, to) for k, v in kwargs.items()} if kwargs else kwargs,
    )


def _lower_precision_fp(op: Any, device_type: str, args: Any, kwargs: Any) -> Any:
    to = state.dtypes[device_type]
    if kwargs:
        return _cast_all(args, kwargs, device_type, to)
    return tuple([_cast(a, device_type, to) for a in args]), kwargs  # a frame less


def _fp32(op: Any, device_type: str, args: Any, kwargs: Any) -> Any:
    return _cast_all(args, kwargs, device_type, _dtype.float32)


def _fp32_set_opt_dtype(op: Any, device_type: str, args: Any, kwargs: Any) -> Any:
    """If the first argument is eligible, an unset ``dtype`` argument becomes float32 (a
    ``dtype`` the caller gave is kept); otherwise the call is unchanged."""
    if not (args and _eligible(args[0], device_type)):
        return args, kwargs
    pos = _DTYPE_POSITION.get(op)
    if pos is None:
        names = [a.name for a in op.schema.arguments]
        pos = _DTYPE_POSITION[op] = names.index("dtype")
    if pos < len(args):  # given positionally (softmax.int's dtype is not keyword-only)
        if args[pos] is None:
            args = (*args[:pos], _dtype.float32, *args[pos + 1 :])
    elif kwargs.get("dtype") is None:
        kwargs = {**kwargs, "dtype": _dtype.float32}
    return args, kwargs


# op -> index of its ``dtype`` argument in the schema (fp32_set_opt_dtype operators).
_DTYPE_POSITION: dict[Any, int] = {}


def _fp32_append_dtype(op: Any, device_type: str, args: Any, kwargs: Any) -> Any:
    """PyTorch calls the overload that takes a dtype, with float32 if the first argument
    is eligible and with that argument's own dtype if not (``type_from_firstarg``).  Our
    ``norm`` is one overload with an optional ``dtype``: its own dtype changes nothing,
    and a dtype the caller gave is kept (PyTorch's dtype overloads have no autocast
    kernel), so the rule is fp32_set_opt_dtype's."""
    return _fp32_set_opt_dtype(op, device_type, args, kwargs)


def _promote(op: Any, device_type: str, args: Any, kwargs: Any) -> Any:
    to = _promote_type(op, device_type, (*args, *kwargs.values()))
    return _cast_all(args, kwargs, device_type, to)


def _banned(op: Any, device_type: str, args: Any, kwargs: Any) -> Any:
    raise RuntimeError(
        f"{op.name} and torch.nn.BCELoss are unsafe to autocast: their gradient is not "
        f"numerically stable in lower precision. Use binary_cross_entropy_with_logits, or "
        f"disable autocast for this call."
    )


_POLICY_FUNCTIONS = {
    "lower_precision_fp": _lower_precision_fp,
    "fp32": _fp32,
    "fp32_set_opt_dtype": _fp32_set_opt_dtype,
    "fp32_append_dtype": _fp32_append_dtype,
    "promote": _promote,
    "banned": _banned,
}


def _kernel(op: dispatch.OpOverload, key: DispatchKey, device_type: str, policy: str) -> Any:
    """The autocast kernel of ``op`` for one device and policy (chosen here, once).

    Registered with the key set (Note [Autocast exclusion]).
    """
    own_keep = ~key.bit  # the keep set (complement of the exclude set) without the key
    below = DispatchKeySet.full_after(key).bits
    transform = _POLICY_FUNCTIONS[policy]
    # Decided here, once: the operators whose kernels below offer ``lower_precision``
    # (the products and linear); the others (conv2d, addmm, baddbmm...) never look.
    fuses = policy == "lower_precision_fp" and op.name.split("::")[-1] in _FUSED_PRODUCTS

    def kernel(keyset: DispatchKeySet, /, *args: Any, **kwargs: Any) -> Any:
        sets = _tls_state.sets
        _tls_state.sets = (sets[0], sets[1] & own_keep)
        try:
            args, kwargs = transform(op, device_type, args, kwargs)
            if fastpaths.ENABLED and not keyset._bits & _PYTHON_BITS:
                return op.below(keyset._bits & below)(*args, **kwargs)
            return op(*args, **kwargs)  # from the top: a mode or subclass may change the bits
        finally:
            _tls_state.sets = sets

    if fuses:
        kernel = _fused_product_kernel(op, kernel, below, device_type)
    kernel.__qualname__ = kernel.__name__ = f"autocast_{device_type}_{policy}"
    return kernel


# A parameter no caller passed (the fused product kernel's tensors).
_MISSING: Any = object()


def _fused_product_kernel(op: Any, general: Any, below: int, device_type: str) -> Any:
    """Note [Autocast product fast path]: ``general`` (the autocast kernel of a product,
    or ``linear``) with the step before it that calls the kernel below this key to
    cast and multiply at once, when it can: float32 operands of one key set that do not
    require grad, nothing but autocast in this thread's sets, the built-in copy.

    Whether it can is ``_fused_kernel``'s answer, kept for the next call with what it
    depends on (the key set, the first tensor's key bits and device, this thread's sets
    object, the operator's and _to_copy's tables): one tuple replaced whole, so threads
    race on it harmlessly (a thread with another sets object misses; one sharing the
    object has the same sets, and the answer depends on their values only).  The calls
    come from the two- and three-argument call paths as positional entries (Note
    [Positional entries]: the key bits and the tensors, no KeySet, ``*args`` or
    ``**kwargs``)."""
    memo: list[Any] = [(None, None, None, None, None, None, None)]

    def entry(bits: int, first: Any, second: Any, third: Any = _MISSING, /) -> Any:
        """The call with two or three positional arguments (``a @ b``, ``F.linear(x, w,
        b)``), as the two- and three-argument call paths make it."""
        if fastpaths.ENABLED:
            try:  # the call paths pass tensors: an attribute read, not getattr's call
                fbits = first._dispatch_bits
            except AttributeError:
                fbits = None
            m_bits, m_fbits, m_sets, m_device, m_op, m_copy, fused = memo[0]
            if not (
                bits == m_bits
                and fbits == m_fbits
                and _tls_state.sets is m_sets
                and first._device is m_device
                and op._state is m_op
                and _to_copy._state is m_copy
            ):
                fused = _fused_kernel(op, bits & below, first, device_type)
                if fbits is not None:
                    sets, device = _tls_state.sets, first._device
                    memo[0] = (bits, fbits, sets, device, op._state, _to_copy._state, fused)
            # The other tensors: the first one's key bits (linear's bias may be None).
            try:
                same = fused is not None and second._dispatch_bits == fbits
            except AttributeError:
                same = False
            if same:
                if third is _MISSING:
                    out = fused(bits & below, state.dtypes[device_type], first, second)
                    if out is not None:
                        return out
                elif third is None or getattr(third, "_dispatch_bits", None) == fbits:
                    out = fused(bits & below, state.dtypes[device_type], first, second, third)
                    if out is not None:
                        return out
        if third is _MISSING:
            return general(keyset_from_bits(bits), first, second)
        return general(keyset_from_bits(bits), first, second, third)

    def kernel(
        keyset: DispatchKeySet,
        first: Any = _MISSING,
        second: Any = _MISSING,
        third: Any = _MISSING,
        /,
        *rest: Any,
        **kwargs: Any,
    ) -> Any:
        if not kwargs and not rest and second is not _MISSING:
            return entry(keyset._bits, first, second, third)
        if third is not _MISSING:
            return general(keyset, first, second, third, *rest, **kwargs)
        if second is not _MISSING:
            return general(keyset, first, second, **kwargs)
        if first is not _MISSING:
            return general(keyset, first, **kwargs)
        return general(keyset, **kwargs)

    def one(bits: int, first: Any, /) -> Any:
        return general(keyset_from_bits(bits), first)

    kernel.positional = (one, entry, entry)  # type: ignore[attr-defined]
    return kernel


def _first_device_type(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    for v in (*args, *kwargs.values()):
        for x in v if isinstance(v, (list, tuple)) else (v,):
            d = getattr(x, "_device", None)
            if d is not None and getattr(x, "_dispatch_bits", None) is not None:
                return str(d.type)
    return None


def _plugin_kernel(op: dispatch.OpOverload, policy: str) -> Any:
    """The AutocastPrivateUse1 kernel of ``op``: the policy for the device of the call's
    first tensor where autocast is on for it (Note [Autocast on plug-in devices])."""
    own_key = DispatchKeySet(_PLUGIN_KEY)
    transform = _POLICY_FUNCTIONS[policy]

    def kernel(*args: Any, **kwargs: Any) -> Any:
        device_type = _first_device_type(args, kwargs)
        with dispatch.exclude_keys(own_key):
            if device_type in state.plugins:
                args, kwargs = transform(op, device_type, args, kwargs)
            return op(*args, **kwargs)  # from the top: autograd records the casts

    kernel.__qualname__ = kernel.__name__ = f"autocast_privateuse_{policy}"
    return kernel


# The Python-layer keys: with one in the key set, a mode or a tensor subclass answers the
# casts, and its results may carry other keys (another device, no Python key).
_PYTHON_BITS = (
    DispatchKey.Python.bit
    | DispatchKey.PythonTLSSnapshot.bit
    | DispatchKey.PreDispatch.bit
    | DispatchKey.PythonDispatcher.bit
)


# Note [Autocast exclusion]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# An autocast kernel runs its casts and the operator with its own key excluded, as
# PyTorch's (an ExcludeDispatchKeyGuard): the operator's kernels below, and every
# operator they call, see autocast off.  It writes the thread's sets directly
# (``exclude_keys`` without the guard object: ~1.5 us a call less) and puts back the
# ones it found, also when the call raises.  The write changes only an autocast key,
# to its default (excluded), so ``_tls.NONDEFAULT`` needs no update (Note [Default key
# sets] in dispatch/_tls.py): what ``_set_sets`` would do is nothing.  The operator is
# then called below the autocast key with the key set it was dispatched with, which is
# the key set a call from the top would compute under the exclusion: the casts keep
# each tensor's device and requires-grad bits, and no key above autocast is in the
# set (the call would have gone there).  Autograd, below, records the casts and the
# operator.  That holds for plain tensors only: with a Python-layer key in the set
# (a mode, a tensor subclass), whose casts may return tensors with other keys (a fake
# mode's meta tensors, a subclass's plain ones), and with the fast paths off (Note
# [Fast-path switch]), the operator is called from the top, as before.


# PyTorch 2.13's policies (SEMANTICS.md §8) for the operators this package does not
# define (yet): nothing to register them on.  They complete POLICIES, which
# tests/tensor/test_autocast.py checks against PyTorch's lists; the policy of an
# operator that we define is in its row (``autocast=``, ``tensor.optable``).
UNDEFINED_POLICIES: dict[str, dict[str, str]] = {
    "cpu": {"baddbmm": "lower_precision_fp", "cross_entropy": "fp32"},
    "cuda": {"baddbmm": "lower_precision_fp", "binary_cross_entropy": "banned"},
}

# Every policy by device type, then overload, named as ours are: one entry per overload.
# Where one of ours merges PyTorch's overloads (prod and prod.dim_int, sum and
# sum.dim_IntList, norm.Scalar and norm.ScalarOpt_dim), its entry stands for all of them.
POLICIES: dict[str, dict[str, str]] = {
    device_type: {**optable.AUTOCAST[device_type], **UNDEFINED_POLICIES[device_type]}
    for device_type in ("cpu", "cuda")
}

# Operators that PyTorch decomposes (CompositeImplicitAutograd) where ours have backend
# kernels: under CPU autocast they run PyTorch's decomposition, whose bmm/mm are the
# autocast operators (Note [einsum and tensordot under autocast]).  Not policies:
# PyTorch registers no AutocastCPU kernel for them.
DECOMPOSED: dict[str, dict[str, Callable[..., Any]]] = {
    "cpu": {"einsum": _composite_linalg.einsum, "tensordot": _composite_linalg.tensordot},
}


def _decomposed_kernel(
    op: dispatch.OpOverload, key: DispatchKey, device_type: str, decomposition: Callable[..., Any]
) -> Any:
    own_key = DispatchKeySet(key)
    bind = op.schema.bind

    def kernel(*args: Any, **kwargs: Any) -> Any:
        bound = bind(args, kwargs, op_name=op.name)
        values = list(bound.values())
        flat = [t for v in values for t in (v if isinstance(v, (list, tuple)) else (v,))]
        if any(_eligible(t, device_type) for t in flat):
            # Autocast stays on: the decomposition's bmm/mm cast, its mul/sum/dot do not.
            result = decomposition(*values)
            if result is not None:
                return result
        with dispatch.exclude_keys(own_key):  # nothing to cast, or malformed: the operator
            return op(*args, **kwargs)

    kernel.__qualname__ = kernel.__name__ = f"autocast_{device_type}_decompose"
    return kernel


_LIB: Library | None = None


def register() -> None:
    """Register the autocast kernels of the ``core`` operators that have a policy."""
    global _LIB
    if _LIB is not None:
        return
    _LIB = Library("core", "IMPL")
    for device_type, rows in optable.AUTOCAST.items():
        key = _KEY[device_type]
        for name, policy in rows.items():
            base, _, overload = name.partition(".")
            op = getattr(getattr(ops.core, base), overload or "default")
            _LIB.impl(op.name, _kernel(op, key, device_type, policy), key.name, with_keyset=True)
    # The plug-in devices: CUDA's lists, as PyTorch registers them for PrivateUse1.
    for name, policy in optable.AUTOCAST["cuda"].items():
        base, _, overload = name.partition(".")
        op = getattr(getattr(ops.core, base), overload or "default")
        _LIB.impl(op.name, _plugin_kernel(op, policy), _PLUGIN_KEY.name)
    for device_type, rows in DECOMPOSED.items():
        key = _KEY[device_type]
        for name, decomposition in rows.items():
            op = getattr(ops.core, name).default
            _LIB.impl(op.name, _decomposed_kernel(op, key, device_type, decomposition), key.name)


# -- custom_fwd / custom_bwd --------------------------------------------------------------------
def custom_fwd(fwd: F | None = None, *, device_type: str, cast_inputs: dtype | None = None) -> Any:
    """Decorate ``Function.forward``: with ``cast_inputs``, run it with autocast off and its
    floating inputs cast to that dtype (when autocast is on); remember the state for
    ``custom_bwd``."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
            ctx._fwd_autocast = (
                is_autocast_enabled(device_type),
                get_autocast_dtype(device_type),
            )
            if cast_inputs is not None and is_autocast_enabled(device_type):
                args = tuple(_cast(a, device_type, cast_inputs) for a in args)
                with autocast(device_type, enabled=False):
                    return fn(ctx, *args, **kwargs)
            return fn(ctx, *args, **kwargs)

        return forward  # type: ignore[return-value]

    return decorate(fwd) if fwd is not None else decorate


def custom_bwd(bwd: F | None = None, *, device_type: str) -> Any:
    """Decorate ``Function.backward``: run it under the autocast state of its forward."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def backward(ctx: Any, *grads: Any) -> Any:
            enabled, fast = getattr(ctx, "_fwd_autocast", (False, None))
            with autocast(device_type, fast, enabled):
                return fn(ctx, *grads)

        return backward  # type: ignore[return-value]

    return decorate(bwd) if bwd is not None else decorate

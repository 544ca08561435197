"""The Tensor class: an array-API array with its dtype, device and dispatch keys.

Imports: NumPy, ``dispatch`` and ``tensor``'s ``_dtype``, ``_device``, ``_convert``,
``_tensor_conversions``.  This module holds what a tensor *is*: its fields,
construction, autograd state and aliasing (``detach``, ``data``, views' version
counters).  How it turns into something else (``to``, ``float()``, ``item``,
``numpy``, ``__dlpack__``, pickling) is its base class ``TensorConversions``
(``tensor/_tensor_conversions.py``).  The operator methods (``__add__``, ``sum``,
``sin`` ...) are not written here either: ``tensor._definitions`` generates them from
the operator table and sets them on the class.

Two constructors: ``Tensor(data, dtype=..., device=...)`` is the friendly public
one; ``_make(array, dtype, device)`` is the private one kernels use.  It skips
validation and sets the slots directly (see Note [Fast construction]).
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from dispatch import REQUIRES_GRAD_BIT, DispatchKey, DispatchKeySet, ops

from . import _convert, _dtype, autograd
from ._convert import MetaArray
from ._device import CPU, META, canonical, device, to_device
from ._dtype import dtype
from ._tensor_conversions import TensorConversions
from ._tensor_conversions import _rebuild as _rebuild  # pickles made before the split name it here

# ``clone()``'s operator, looked up once (an operator object is never replaced: its
# handles stay valid) and called through ``call1``, the entry for exactly one
# positional tensor (Note [Specialised call paths]): ~0.5 us less than
# ``ops.core.clone.default(self)``.  tensor._definitions defined it before this
# module is imported.
_CLONE = ops.core.clone.default

__all__ = ["Size", "Tensor", "make", "make_meta", "shared_version_counter", "wrap_number"]

_new = object.__new__
# Keys a subclass with __dispatch__ adds (SEMANTICS.md §2: Python + PythonTLSSnapshot).
_PYTHON_BITS = DispatchKeySet([DispatchKey.Python, DispatchKey.PythonTLSSnapshot]).bits


class _HookHandle:
    """What ``register_hook`` returns: ``remove()`` takes the hook out again."""

    __slots__ = ("hook", "hooks")

    def __init__(self, hooks: list[Any], hook: Any) -> None:
        self.hooks, self.hook = hooks, hook

    def remove(self) -> None:
        # Removed already, perhaps by another thread between a membership test and this.
        with contextlib.suppress(ValueError):
            self.hooks.remove(self.hook)


class Size(tuple):  # type: ignore[type-arg]
    """A tensor's shape: a tuple of ints (``tt.Size([2, 3])``), as ``torch.Size``."""

    __slots__ = ()

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self) -> str:
        return f"tt.Size({list(self)})"


class Tensor(TensorConversions):
    """A multi-dimensional array on a device, whose operations go through the dispatcher.

    >>> import tensor as tt
    >>> x = tt.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x.shape, x.dtype, x.device
    (tt.Size([2, 2]), tensor.float32, device(type='cpu'))
    >>> (x + 1).tolist()
    [[2.0, 3.0], [4.0, 5.0]]
    >>> x.keys
    DispatchKeySet(AutocastCPU, AutogradCPU, ADInplaceOrView, CPU)
    """

    # Note [Tensor fields]: the fields every tensor sets are slots: its array, dtype,
    # device and key bits, and the three that autograd and views write on the hot paths,
    # stored as None by every constructor (``make``, ``_init``, ``detach``): ``grad_fn``
    # (every recorded output), ``_version_counter`` (every in-place write, every view, a
    # saved result's ``detach()``) and ``_base`` (every view).  As class-level defaults
    # they made each such tensor an instance __dict__ on the first write: a recorded tiny
    # ``sin`` 1.71 -> 1.59 us, ``exp`` (its result saved) 2.18 -> 1.87, ``relu`` 2.57 ->
    # 2.28, ``w.t()`` 0.82 -> 0.77; without grad unchanged (best of 60 rounds, one
    # process).  The fields most tensors never set (``grad``, a leaf's accumulator,
    # hooks) stay class-level defaults, in an instance __dict__ made on their first
    # write; reading a default costs a few ns more than reading a slot.
    __slots__ = (
        "__dict__",
        "__weakref__",
        "_array",
        "_device",
        "_dispatch_bits",
        "_dtype",
        "grad_fn",
        "_version_counter",
        "_base",
    )
    _array: Any
    _device: device
    _dispatch_bits: int
    _dtype: dtype
    grad: Tensor | None = None
    grad_fn: Any
    _base: Tensor | None  # the tensor a view was made from (its root), else None
    _version_counter: list[int] | None  # [count], shared with views; None until needed
    _output_nr = 0  # which output of its grad_fn this tensor is
    _grad_accumulator: Any = None  # a leaf's AccumulateGrad (Note [One accumulator a leaf])
    _grad_edge: tuple[Any, int] | None = None  # (_grad_accumulator, 0), made with it
    _hooks: list[Any] | None = None  # gradient hooks of a leaf, set by register_hook
    _retains_grad = False  # set by retain_grad on a non-leaf

    # Class-level facts, read per call without touching the instance.
    _wrapped_number = False  # True only for Python scalars wrapped for an operator
    _extra_bits = 0  # Python + PythonTLSSnapshot for subclasses that define __dispatch__
    # No Python-key handler; subclasses may define the classmethod.  Declared so that the
    # Python fallback's per-argument check finds an attribute instead of missing one (a
    # miss raises and catches an AttributeError: ~90 ns a moded call, ci/bench/layers.py).
    __dispatch__: Any = None
    __array_priority__ = 1000  # NumPy defers `ndarray + tensor` to Tensor.__radd__

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._extra_bits = _PYTHON_BITS if callable(getattr(cls, "__dispatch__", None)) else 0

    def __new__(
        cls,
        data: Any = None,
        *,
        dtype: dtype | str | None = None,
        device: device | str | None = None,
        requires_grad: bool = False,
    ) -> Tensor:
        """Build a tensor from data; the same as ``tt.tensor(data, dtype=..., ...)``."""
        if data is None:
            data = []
        dt = None if dtype is None else _dtype.to_dtype(dtype, op="Tensor")
        dev = _canonical_device(to_device(device))
        array, dt = _convert.array_from_data(data, dt, dev)
        t = _new(cls)
        _init(t, array, dt, dev)
        t._dispatch_bits |= cls._extra_bits
        if requires_grad:
            t.requires_grad = True
        return t

    # -- attributes -------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._array.shape)

    @property
    def dtype(self) -> dtype:
        return self._dtype

    @property
    def device(self) -> device:
        return self._device

    @property
    def ndim(self) -> int:
        return self._array.ndim

    @property
    def array(self) -> Any:
        """The wrapped NumPy/CuPy array (a shape-only ``MetaArray`` for meta tensors)."""
        return self._array

    @property
    def _version(self) -> int:
        """How often this tensor's data was modified in place; one count per storage.

        In-place operators bump it (their ADInplaceOrView kernels); a tensor and all its
        views share one counter (a one-element list, made when first shared or bumped),
        and autograd compares the counts it saved with the current ones.
        """
        counter = self._version_counter
        return 0 if counter is None else counter[0]

    @property
    def keys(self) -> DispatchKeySet:
        """The dispatch keys this tensor contributes to an operator call."""
        return DispatchKeySet.from_bits(self._dispatch_bits)

    @property
    def requires_grad(self) -> bool:
        # Kept as the dispatcher's REQUIRES_GRAD_BIT in _dispatch_bits (one source of truth;
        # dispatch's Note [Grad-only kernels]); the bit is not a key, so `keys` hides it.
        return bool(self._dispatch_bits & REQUIRES_GRAD_BIT)

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self.grad_fn is not None and not value:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if value and self._dtype.category < _dtype.FLOAT:
            raise RuntimeError(
                f"only Tensors of floating point and complex dtype can require gradients "
                f"(this tensor is {self._dtype}); convert it first, e.g. x.float()"
            )
        if value:
            self._dispatch_bits |= REQUIRES_GRAD_BIT
        else:
            self._dispatch_bits &= ~REQUIRES_GRAD_BIT

    # The autograd engine sets `_requires_grad` on outputs; it is the same bit.
    _requires_grad = requires_grad

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    # -- autograd -------------------------------------------------------------------------
    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        """Accumulate the gradient of this tensor into the leaves it depends on."""
        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> _HookHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a
        replacement.  Returns a handle whose ``remove()`` unregisters it."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is None:
            hooks = getattr(self, "_hooks", None)
            if hooks is None:
                hooks = self._hooks = []
            hooks.append(hook)
            return _HookHandle(hooks, hook)
        nr = self._output_nr

        def prehook(grads: tuple[Any, ...]) -> tuple[Any, ...] | None:
            if grads[nr] is None:
                return None
            new = hook(grads[nr])
            if new is None:
                return None
            return grads[:nr] + (new,) + grads[nr + 1 :]

        node = self.grad_fn
        node.register_prehook(prehook)
        return _HookHandle(node._pre_hooks, prehook)

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward."""
        if self.grad_fn is None:
            if not self.requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if getattr(self, "_retains_grad", False):
            return
        self_ref = weakref.ref(self)
        nr = self._output_nr
        # Threads running backward through a shared graph may reach this hook at once: the
        # read-add-store of .grad is one step (autograd's Note [Concurrent accumulation]).
        lock = threading.Lock()

        def keep(grads: tuple[Any, ...]) -> None:
            t = self_ref()
            if t is not None and grads[nr] is not None:
                g = grads[nr].detach()
                with lock:
                    t.grad = g if t.grad is None else t.grad + g

        node = self.grad_fn
        if node._retain_hooks is None:
            node._retain_hooks = []
        node._retain_hooks.append(keep)
        self._retains_grad = True

    @property
    def retains_grad(self) -> bool:
        return self.grad_fn is not None and getattr(self, "_retains_grad", False)

    def detach_(self) -> Tensor:
        """Cut this tensor from its history, in place."""
        self.grad_fn = None
        self._dispatch_bits &= ~REQUIRES_GRAD_BIT
        return self

    @property
    def is_cpu(self) -> bool:
        return self._device.type == "cpu"

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    @property
    def is_meta(self) -> bool:
        return self._device.type == "meta"

    def dim(self) -> int:
        return self._array.ndim

    def size(self, dim: int | None = None) -> Any:
        shape = self._array.shape
        if dim is None:
            return Size(shape)
        return shape[_wrap_dim(dim, len(shape), "size")]

    def numel(self) -> int:
        return int(self._array.size)

    nelement = numel

    def element_size(self) -> int:
        return self._dtype.itemsize

    def is_floating_point(self) -> bool:
        return self._dtype.is_floating_point

    def is_complex(self) -> bool:
        return self._dtype.is_complex

    def get_device(self) -> int:
        """The CUDA device index, or -1 for CPU tensors (as PyTorch)."""
        return self._device.index if self._device.type == "cuda" else -1  # type: ignore[return-value]

    def clone(self, *, memory_format: Any = None) -> Tensor:
        """A copy of this tensor with its own data (same dtype and device), laid out as
        PyTorch's ``preserve_format`` lays it (a transposed tensor's copy is transposed;
        ``memory_format="contiguous_format"``: row-major).

        The ``clone`` operator (its node CloneBackward0, as PyTorch's).
        """
        if memory_format is None:
            return _CLONE.call1(self)  # type: ignore[no-any-return]
        return _CLONE(self, memory_format=memory_format)  # type: ignore[no-any-return]

    def detach(self) -> Tensor:
        """A tensor sharing this one's data, cut from autograd history."""
        # _init and shared_version_counter inline: autograd saves every result a formula
        # reads through here (relu, sigmoid, softmax...), one call per recorded op.
        t = _new(type(self))
        t._array = self._array
        t._dtype = self._dtype
        t._device = self._device
        t._dispatch_bits = self._dispatch_bits & ~REQUIRES_GRAD_BIT
        t.grad_fn = t._base = None
        counter = self._version_counter
        if counter is None:
            counter = self._version_counter = [0]
        t._version_counter = counter  # same data, same version (PyTorch)
        return t

    # Note [Tensor.data]: PyTorch's legacy escape hatch, still in old training loops
    # (``w.data -= lr * w.grad``).  Unlike ``detach()``, the alias gets a version counter
    # of its own, so in-place changes through it are invisible to autograd's checks: a
    # saved tensor changed that way gives silently wrong gradients instead of an error,
    # which is why PyTorch recommends ``detach()`` and ``no_grad()`` instead.
    @property
    def data(self) -> Tensor:
        """This tensor's data, without history: shares memory, ``requires_grad=False``, and
        a version counter of its own (Note [Tensor.data]).  Setting it replaces the data
        (dtype, device and shape included) and keeps the history, grad and version.

        >>> import tensor as tt
        >>> w = tt.tensor([1.0, 2.0], requires_grad=True)
        >>> w.data -= 0.5
        >>> w
        tensor([0.5000, 1.5000], requires_grad=True)
        """
        t = _new(type(self))
        _init(t, self._array, self._dtype, self._device)
        t._dispatch_bits = self._dispatch_bits & ~REQUIRES_GRAD_BIT
        return t

    @data.setter
    def data(self, new: Tensor) -> None:
        if not isinstance(new, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(new).__name__}")
        if self.requires_grad and new._dtype.category < _dtype.FLOAT:
            raise RuntimeError(
                f"data set to a tensor that requires gradients must be floating point or complex "
                f"dtype (got {new._dtype}); convert it first, e.g. new.float()"
            )
        kept = self._dispatch_bits & ~self._device._bits  # requires_grad, subclass keys
        self._array = new._array
        self._dtype = new._dtype
        self._device = new._device
        self._dispatch_bits = kept | new._device._bits

    def as_subclass(self, cls: type[Tensor]) -> Tensor:
        """This tensor's data seen as an instance of ``cls`` (a Tensor subclass)."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(f"as_subclass(): cls must be a Tensor subclass, got {cls!r}")
        t = _new(cls)
        _init(t, self._array, self._dtype, self._device)
        t._dispatch_bits |= cls._extra_bits
        t.requires_grad = self.requires_grad
        return t

    # -- Python protocols -------------------------------------------------------------------
    def __len__(self) -> int:
        shape = self._array.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __iter__(self) -> Any:
        # Iterates over the first dimension, like unbind(0); rows share data with self.
        array = self._array
        if not array.shape:
            raise TypeError("iteration over a 0-d tensor")
        if type(array) is MetaArray:
            row = array.shape[1:]
            return (make_meta(row, self._dtype, self._device) for _ in range(array.shape[0]))
        return (make(array[i], self._dtype, self._device) for i in range(array.shape[0]))

    __hash__ = object.__hash__

    def __pos__(self) -> Tensor:
        """``+x``: PyTorch's ``positive`` (the tensor itself; bool tensors are refused)."""
        if self._dtype.category == 0:
            raise TypeError("unary +: bool tensors are not supported, use a numeric dtype")
        return self


builtins_bool = bool
builtins_float = float
builtins_int = int


# Note [Fast construction]
# Kernels make their outputs with make(): one object.__new__ and slot stores, no
# argument checks (the kernel already knows the dtype and device).  It is a module
# function rather than a classmethod to save the attribute lookup and bound-method
# call on the hot path; ci/bench/ops.py measures the tiny-op path it serves.
def make(array: Any, dtype: dtype, device: device = CPU) -> Tensor:
    """The private constructor kernels use: wrap ``array`` as-is."""
    t = _new(Tensor)
    t._array = array
    t._dtype = dtype
    t._device = device
    t._dispatch_bits = device._bits
    t.grad_fn = t._version_counter = t._base = None
    return t  # the rest keep their class defaults: Note [Tensor fields]


def shared_version_counter(t: Tensor) -> list[int]:
    """``t``'s version counter, made now if it has none yet, to share with a new alias."""
    counter = t._version_counter
    if counter is None:
        counter = t._version_counter = [0]
    return counter


def make_meta(shape: tuple[int, ...], dtype: dtype, device: device = META) -> Tensor:
    """A tensor without data (a meta kernel's output)."""
    return make(MetaArray(tuple(shape), dtype.numpy_dtype), dtype, device)


Tensor._make = staticmethod(make)  # type: ignore[attr-defined]
Tensor._make_meta = staticmethod(make_meta)  # type: ignore[attr-defined]


class _WrappedNumber(Tensor):
    """A Python number passed where an operator needs a Tensor (``2 / x``).

    Type promotion treats it as the number it came from (c10's "wrapped number"):
    it never makes a dimensioned tensor's dtype wider within a category.
    """

    __slots__ = ()
    _wrapped_number = True


_NUMBER_DTYPES = {
    builtins_bool: _dtype.bool,
    builtins_int: _dtype.int64,
    builtins_float: _dtype.float64,
    complex: _dtype.complex128,
}


def wrap_number(value: Any) -> Tensor:
    """A 0-d CPU tensor holding a Python number, marked as a wrapped number."""
    dt = _NUMBER_DTYPES.get(type(value))
    if dt is None:
        for kind, d in _NUMBER_DTYPES.items():
            if isinstance(value, kind):
                dt = d
                break
        else:
            raise TypeError(f"expected a Python number, got {type(value).__name__}")
    t = _new(_WrappedNumber)
    _init(t, np.asarray(value, dtype=dt.numpy_dtype), dt, CPU)
    return t


def _init(t: Tensor, array: Any, dt: dtype, dev: device) -> None:
    t._array = array
    t._dtype = dt
    t._device = dev
    t._dispatch_bits = dev._bits
    t.grad_fn = t._version_counter = t._base = None


# Tensors live on an indexed CUDA device ("cuda" means the current one).
_canonical_device = canonical


def _wrap_dim(dim: int, ndim: int, op: str) -> int:
    lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
    if not lo <= dim <= hi:
        raise IndexError(
            f"{op}(): Dimension out of range (expected to be in range of [{lo}, {hi}], but got "
            f"{dim}) for argument 'dim'"
        )
    return dim % ndim if ndim else 0

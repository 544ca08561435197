"""``FrontEnd``: everything a backend needs of the tensor front end, handed over in one object.

Imports: the standard library only.  Backends never import the front end (``tensor``);
it builds a ``FrontEnd`` and passes it when it registers them.

Note [One-way imports]
~~~~~~~~~~~~~~~~~~~~~~
Imports run one way: ``tensor`` → ``backends`` → ``dispatch``.  A kernel still needs
the front end's types and rules (the Tensor type and its private constructor, the
dtypes, the operator table, type promotion), so ``tensor`` gathers them in a
``FrontEnd`` and gives it to each backend's ``register(front)``; the backend hands it
to its kernel factories (``Namespace.front``), which bind what they use to locals
while they build a kernel, so a call looks nothing up.  ``backends`` itself then
imports nothing heavy (``import backends.common.shape_rules`` is a few pure functions),
and a third-party device backend registers through the same door.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["FrontEnd"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FrontEnd:
    """What the kernels of a backend use of the tensor front end, by name.

    ``tensor`` makes one and passes it to ``backends.cpu.register(front)``,
    ``backends.meta.register(front)`` and, when CUDA first initialises,
    ``backends.cuda.init(front)``.  A new device backend receives it the same way
    and finds here all it needs to build kernels for the built-in operators:

    Tensors
      ``Tensor``: the tensor type (for ``isinstance`` and ``type(x) is Tensor``
      checks).  A kernel reads a tensor's ``_array``, ``_dtype`` and ``_device``.
      ``make(array, dtype, device)``: the private constructor kernels make their
      results with (no checks: the kernel knows the dtype and device).
      ``make_meta(shape, dtype, device)``: a tensor without data (meta kernels).
      ``MetaArray(shape, numpy_dtype)``: the array type of meta tensors.
    dtypes
      ``dtype``: the dtype type; ``bool`` ... ``complex128``: the dtype objects
      (compare them with ``is``: they are unique).  A dtype has ``name``, ``kind``
      (0 bool, 1 integer, 2 floating, 3 complex), ``numpy_dtype``, ``itemsize``,
      ``is_floating_point``, ``is_complex`` and ``to_real()``.
      ``get_default_dtype()``: the current default float dtype.
    Type promotion
      ``result_type(*tensors_or_numbers)``, ``promote_types(a, b)``,
      ``can_cast(from_, to)``: PyTorch's rules.
      ``cast_array(array, numpy_dtype)``: ``array.astype`` with PyTorch's
      float-to-unsigned conversion.
    Devices
      ``device``: the device type (``device("cpu")``, ``device("cuda", 0)``: devices
      are interned, compare them with ``is``).
      ``canonical_device(d)``: the device a tensor made on ``d`` lives on (``cuda``
      is the current CUDA device).
    Operators
      ``op_table``: every built-in operator's row (an ``OpInfo``: ``name``,
      ``family``, ``schemas``, ``dtypes``, ``result_dtypes``, ``rule(dtype)``...);
      ``op_info(name)``: one row.
    Shapes
      ``infer_size(op, size, numel)``: a view's size with its one ``-1`` resolved.
    Random numbers
      ``Generator``: the generator type; ``default_generator(device)``: a device's
      default generator.  ``generator.engine(factory)`` gives the backend's engine.
    CUDA
      ``set_cuda_hooks(to_device, to_numpy, array_type, from_dlpack)``: how the CUDA
      backend teaches tensors to move arrays to and from the GPU.
    """

    # Tensors
    Tensor: type
    make: Callable[..., Any]
    make_meta: Callable[..., Any]
    MetaArray: type
    # dtypes
    dtype: type
    bool: Any
    uint8: Any
    int8: Any
    int16: Any
    int32: Any
    int64: Any
    float16: Any
    bfloat16: Any
    float32: Any
    float64: Any
    complex64: Any
    complex128: Any
    get_default_dtype: Callable[[], Any]
    # Type promotion
    result_type: Callable[..., Any]
    promote_types: Callable[[Any, Any], Any]
    can_cast: Callable[[Any, Any], Any]
    cast_array: Callable[[Any, Any], Any]
    to_dtype: Callable[..., Any]  # a dtype-like argument as a dtype (``op=`` names the caller)
    # Devices
    device: type
    canonical_device: Callable[[Any], Any]
    to_device: Callable[[Any], Any]  # a device-like argument (str, int, None = cpu) as a device
    move_array: Callable[..., Any]  # (array, device, numpy dtype, *, copy, non_blocking)
    # Operators
    op_table: Sequence[Any]
    op_info: Callable[[str], Any]
    # Shapes
    infer_size: Callable[..., tuple[int, ...]]
    # Random numbers
    Generator: type
    default_generator: Callable[[Any], Any]
    # CUDA
    set_cuda_hooks: Callable[..., None]

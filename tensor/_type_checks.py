"""Which values fit the schema types that this package defines (Note [Validating every call]).

Imports: ``dispatch``, ``tensor._device``, ``tensor._dtype`` and ``tensor._random``.

``dispatch`` checks ``int``, ``float``, ``Scalar``, lists and the rest itself, but a
``ScalarType``, ``Device``, ``MemoryFormat`` or ``Generator`` is this package's object,
so the checks are registered here, once, at import.  They accept what the kernels
accept (a ``tt.dtype``; ``to_device``: a device, a device string or a CUDA index) and
nothing else, so a misspelt dtype or device is
refused with the operator's name before any kernel runs.
"""

from __future__ import annotations

from dispatch import register_type_check

from ._device import device, to_device
from ._dtype import dtype
from ._random import Generator

__all__ = ["MEMORY_FORMATS"]

# PyTorch's memory formats, by name: nothing here lays data out other than contiguously,
# so these are accepted and the kernels say what they support.
MEMORY_FORMATS = frozenset(
    {"contiguous_format", "preserve_format", "channels_last", "channels_last_3d"}
)


def _is_dtype(value: object) -> bool:
    return type(value) is dtype  # as PyTorch: a dtype object, not its name or NumPy's


def _is_device(value: object) -> bool:
    if type(value) is device:
        return True
    if type(value) is bool or not isinstance(value, (str, int)):
        return False
    try:
        to_device(value)
    except (TypeError, ValueError, RuntimeError):
        return False
    return True


def _is_memory_format(value: object) -> bool:
    return str(value) in MEMORY_FORMATS  # a name, or the schema's bare-name default


def _is_generator(value: object) -> bool:
    return isinstance(value, Generator)


register_type_check("ScalarType", _is_dtype)
register_type_check("Device", _is_device)
register_type_check("MemoryFormat", _is_memory_format)
register_type_check("Generator", _is_generator)

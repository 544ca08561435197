"""``FRONT``: the front end the backends are registered with (Note [One-way imports]).

Imports: ``backends.common.frontend`` (the ``FrontEnd`` type, standard library only) and
``tensor``'s own modules.

``tensor`` passes ``FRONT`` to ``backends.cpu.register`` and ``backends.meta.register``
at the end of its import, and to ``backends.cuda.init`` when CUDA first initialises
(``tensor.cuda``); the backends import nothing of ``tensor``.
"""

from __future__ import annotations

from backends.common.frontend import FrontEnd

from . import _convert, _dtype, _promotion, _random
from ._device import canonical, device, to_device
from ._layout import infer_size
from ._tensor import Tensor
from .optable import OP_TABLE, by_name

__all__ = ["FRONT"]

FRONT = FrontEnd(
    Tensor=Tensor,
    make=Tensor._make,  # type: ignore[attr-defined]
    make_meta=Tensor._make_meta,  # type: ignore[attr-defined]
    MetaArray=_convert.MetaArray,
    dtype=_dtype.dtype,
    bool=_dtype.bool,
    uint8=_dtype.uint8,
    int8=_dtype.int8,
    int16=_dtype.int16,
    int32=_dtype.int32,
    int64=_dtype.int64,
    float16=_dtype.float16,
    bfloat16=_dtype.bfloat16,
    float32=_dtype.float32,
    float64=_dtype.float64,
    complex64=_dtype.complex64,
    complex128=_dtype.complex128,
    get_default_dtype=_dtype.get_default_dtype,
    result_type=_promotion.result_type,
    promote_types=_promotion.promote_types,
    can_cast=_promotion.can_cast,
    cast_array=_convert.cast_array,
    to_dtype=_dtype.to_dtype,
    device=device,
    canonical_device=canonical,
    to_device=to_device,
    move_array=_convert.move_array,
    op_table=OP_TABLE,
    op_info=by_name,
    infer_size=infer_size,
    Generator=_random.Generator,
    default_generator=_random.default_generator,
    set_cuda_hooks=_convert.set_cuda_hooks,
)

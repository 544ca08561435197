"""The front end ``tensor`` hands the backends (``tensor._frontend.FRONT``) is made of
``tensor``'s own public objects, and it is what the built-in backends were registered with."""

from __future__ import annotations

import dataclasses

import pytest

import backends
import backends.cpu
import tensor as tt
from backends import FrontEnd
from tensor._frontend import FRONT
from tensor._layout import infer_size

DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]


def test_the_front_end_is_tensors_public_objects() -> None:
    assert isinstance(FRONT, FrontEnd) and backends.FrontEnd is FrontEnd
    assert FRONT.Tensor is tt.Tensor and FRONT.MetaArray is tt.MetaArray
    assert FRONT.make is tt.Tensor._make and FRONT.make_meta is tt.Tensor._make_meta
    assert FRONT.dtype is tt.dtype
    for name in DTYPES:
        assert getattr(FRONT, name) is getattr(tt, name), name
    for name in ("result_type", "promote_types", "can_cast", "get_default_dtype"):
        assert getattr(FRONT, name) is getattr(tt, name), name
    assert FRONT.device is tt.device and FRONT.Generator is tt.Generator
    assert FRONT.default_generator is tt.default_generator
    assert FRONT.op_table is tt.OP_TABLE and FRONT.op_info is tt.op_info
    assert FRONT.infer_size is infer_size


def test_every_field_is_set_and_the_front_end_is_frozen() -> None:
    for field in dataclasses.fields(FrontEnd):
        assert getattr(FRONT, field.name) is not None, field.name
    with pytest.raises(dataclasses.FrozenInstanceError):
        FRONT.Tensor = object  # type: ignore[misc]


def test_the_built_in_kernels_make_front_end_tensors() -> None:
    x = tt.tensor([1.0, 2.0])
    assert type(x + x) is FRONT.Tensor and (x + x).dtype is FRONT.float32
    assert backends.cpu.LIB is not None  # registered by ``import tensor``, with FRONT

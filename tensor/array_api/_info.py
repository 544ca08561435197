"""``__array_namespace_info__()``: the standard's inspection object (devices, dtypes).

Imports: ``tensor``.
"""

from __future__ import annotations

from typing import Any

import tensor as tt

__all__ = ["__array_namespace_info__"]

_DTYPES = {
    "bool": "bool",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "float32": "float32",
    "float64": "float64",
    "complex64": "complex64",
    "complex128": "complex128",
}
_KINDS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8",),
    "integral": ("int8", "int16", "int32", "int64", "uint8"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
    "numeric": (
        "int8", "int16", "int32", "int64", "uint8", "float32", "float64", "complex64", "complex128",
    ),
}  # fmt: skip


class Info:
    """What ``tensor.array_api`` supports: every dtype on every device; the devices are the
    CPU and each CUDA device (``meta`` tensors hold no data, so the standard's functions
    cannot return values there)."""

    __module__ = "tensor.array_api"

    def capabilities(self) -> dict[str, Any]:
        return {
            "boolean indexing": True,
            "data-dependent shapes": True,
            "max dimensions": 64,
        }

    def default_device(self) -> Any:
        return tt.device("cpu")

    def devices(self) -> tuple[Any, ...]:
        out = [tt.device("cpu")]
        if tt.cuda.is_available():
            out += [tt.device("cuda", i) for i in range(tt.cuda.device_count())]
        return tuple(out)

    def default_dtypes(self, *, device: Any = None) -> dict[str, Any]:
        real = tt.get_default_dtype()
        return {
            "real floating": real,
            "complex floating": real.to_complex(),
            "integral": tt.int64,
            "indexing": tt.int64,
        }

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, Any]:
        if kind is None:
            names: tuple[str, ...] = tuple(_DTYPES)
        elif isinstance(kind, str):
            if kind not in _KINDS:
                raise ValueError(f"dtypes: unknown kind {kind!r}; expected one of {sorted(_KINDS)}")
            names = _KINDS[kind]
        elif isinstance(kind, tuple):
            names = tuple(n for n in _DTYPES if any(n in self.dtypes(kind=k) for k in kind))
        else:
            raise TypeError(f"dtypes: kind must be a string or a tuple, not {kind!r}")
        return {n: getattr(tt, n) for n in names}


def __array_namespace_info__() -> Info:  # noqa: N807
    return Info()

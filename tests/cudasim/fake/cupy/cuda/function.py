"""``cupy.cuda.function`` of the cudasim stand-in: a Function is a harness kernel, a Module
loads what the fake ``compile_using_nvrtc`` returned, and the argument classes launchers
may pass instead of NumPy scalars (Note [Prebuilt kernel arguments] in
backends/cuda/elementwise.py)."""

from __future__ import annotations

import json

from tests.cudasim import _modules
from tests.cudasim._launch import CIntptr, CPointer
from tests.cudasim._launch import Kernel as Function

from .compiler import LOWERED

__all__ = ["CIntptr", "CPointer", "Function", "Module"]


class Module:
    """``cupy.cuda.function.Module``: ``load(image)`` then ``get_function(lowered_name)``."""

    def __init__(self) -> None:
        self._image: dict | None = None

    def load(self, image: bytes) -> None:
        if not isinstance(image, bytes):
            raise TypeError(f"Module.load() takes bytes, not {type(image).__name__}")
        self._image = json.loads(image)

    def get_function(self, name: str) -> Function:
        image = self._image
        if image is None:
            raise RuntimeError("CUDA_ERROR_INVALID_HANDLE: no module loaded")
        expr = name[len(LOWERED) :] if name.startswith(LOWERED) else None
        if expr not in image["names"]:
            raise RuntimeError(f"CUDA_ERROR_NOT_FOUND: named symbol not found: {name}")
        return _modules._library(image["code"], tuple(image["options"]), expr).kernel(expr)

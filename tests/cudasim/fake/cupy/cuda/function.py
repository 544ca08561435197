"""``cupy.cuda.function`` of the cudasim stand-in: a Function is a harness kernel, and
the argument classes launchers may pass instead of NumPy scalars (Note [Prebuilt kernel
arguments] in backends/cuda/elementwise.py)."""

from tests.cudasim._launch import CIntptr, CPointer
from tests.cudasim._launch import Kernel as Function

__all__ = ["CIntptr", "CPointer", "Function"]

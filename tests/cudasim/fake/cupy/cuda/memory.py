"""``cupy.cuda.memory`` of the cudasim stand-in."""

from tests.cudasim._array import MemoryPointer

__all__ = ["MemoryPointer"]

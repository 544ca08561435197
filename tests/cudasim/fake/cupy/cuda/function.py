"""``cupy.cuda.function`` of the cudasim stand-in: a Function is a harness kernel."""

from tests.cudasim._launch import Kernel as Function

__all__ = ["Function"]

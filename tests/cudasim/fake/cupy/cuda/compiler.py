"""``cupy.cuda.compiler`` of the cudasim stand-in."""

from tests.cudasim._modules import CompileException

__all__ = ["CompileException"]

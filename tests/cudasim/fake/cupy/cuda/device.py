"""``cupy.cuda.device`` of the cudasim stand-in."""

from tests.cudasim._device import Device

__all__ = ["Device"]

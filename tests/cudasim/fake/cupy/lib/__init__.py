"""``cupy.lib`` of the cudasim stand-in."""

from . import stride_tricks

__all__ = ["stride_tricks"]

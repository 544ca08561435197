"""``cupy.cuda.nvrtc`` of the cudasim stand-in."""

__all__ = ["getVersion"]


def getVersion() -> tuple[int, int]:  # noqa: N802 - CuPy's name
    return (13, 0)

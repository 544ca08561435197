"""``cupy._core._scalar`` of the cudasim stand-in: ``CScalar``, a kernel argument holding
a NumPy scalar's value (CuPy's keeps its bytes; the harness checks its dtype)."""

from tests.cudasim._launch import CScalar

__all__ = ["CScalar"]

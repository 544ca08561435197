"""Code every backend shares: shape rules, error messages, and kernels written once
against the array namespace (NumPy on the CPU, CuPy on CUDA).

Imports: ``tensor`` (public names, and the private constructors ``Tensor._make`` /
``Tensor._make_meta`` that kernels use), NumPy-compatible namespaces passed in by
the backend that instantiates a kernel factory; never CuPy directly.
"""

from . import errors, shapes

__all__ = ["errors", "shapes"]

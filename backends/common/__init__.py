"""Code every backend shares: shape rules, error messages, and kernels written once
against the array namespace (NumPy on the CPU, CuPy on CUDA).

Imports: ``dispatch``, NumPy-compatible namespaces passed in by the backend that
instantiates a kernel factory (never CuPy directly), and the front end's types only
through the ``FrontEnd`` a factory is given (``Namespace.front``; Note [One-way
imports] in ``frontend``).
"""

from . import errors, frontend, shape_rules
from .frontend import FrontEnd

__all__ = ["FrontEnd", "errors", "frontend", "shape_rules"]

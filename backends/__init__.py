"""Kernels per device: ``backends.cpu`` (NumPy), ``backends.meta`` (shapes and dtypes
only), ``backends.cuda`` (CuPy, loaded on first use), and ``backends.common`` (what
they share).

Imports: ``tensor`` first.  The backends build on ``tensor``'s Tensor, dtypes and
operator table, and ``tensor`` imports the backends at the end of its own import
to have their kernels registered; importing ``tensor`` here first makes both
import orders work (``import backends.cpu`` before ``import tensor`` included).
"""

import tensor as _tensor  # noqa: F401  (see the docstring)

__all__: list[str] = []

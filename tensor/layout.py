"""``tensor.layout``: PyTorch's strided-layout rules, public for backends.

Imports: ``tensor._layout``.  Backends use these (e.g. ``infer_size`` for ``view`` and
``reshape``) so that every backend and the meta arrays agree on shapes and strides.
"""

from ._layout import basic_index, contiguous_strides, infer_size, is_contiguous, view_strides

__all__ = ["basic_index", "contiguous_strides", "infer_size", "is_contiguous", "view_strides"]

"""``tt.nn``: neural-network functions (``tt.nn.functional``, PyTorch's ``torch.nn.functional``).

Imports: ``tensor.nn.functional``.
"""

from . import functional

__all__ = ["functional"]

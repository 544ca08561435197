"""``tt.amp``: automatic mixed precision (PyTorch's ``torch.amp`` names).

Imports: ``tensor._autocast``.
"""

from ._autocast import autocast, custom_bwd, custom_fwd, get_autocast_dtype, is_autocast_enabled

__all__ = ["autocast", "custom_bwd", "custom_fwd", "get_autocast_dtype", "is_autocast_enabled"]

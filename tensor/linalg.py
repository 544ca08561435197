"""``tt.linalg``: linear-algebra functions (PyTorch's ``torch.linalg`` names).

Imports: ``tensor._generated`` (the functions are generated from the operator table).

>>> import tensor as tt
>>> tt.linalg.vector_norm(tt.tensor([3.0, 4.0])).item()
5.0
"""

from __future__ import annotations

from ._generated import FUNCTIONS

__all__ = ["vector_norm"]

vector_norm = FUNCTIONS["linalg.vector_norm"]

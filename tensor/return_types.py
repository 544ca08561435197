"""Named-tuple return types of operators with several named results (``torch.return_types``).

Imports: the standard library only.

>>> import tensor as tt
>>> r = tt.tensor([[1.0, 5.0], [7.0, 2.0]]).max(dim=1)
>>> r.values.tolist(), r.indices.tolist()
([5.0, 7.0], [1, 0])
>>> type(r).__name__
'max'
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

__all__ = ["get"]

_TYPES: dict[tuple[str, tuple[str, ...]], type] = {}


def get(name: str, fields: tuple[str, ...]) -> Any:
    """The named tuple type for operator ``name`` with these fields (made once)."""
    key = (name, fields)
    t = _TYPES.get(key)
    if t is None:
        t = namedtuple(name, fields)  # type: ignore[misc]  # noqa: PYI024
        t.__module__ = __name__
        _TYPES[key] = t
        globals().setdefault(name, t)
    return t

"""One switch for every fast path the kernels and the autograd engine take for speed.

Note [Fast-path switch]
~~~~~~~~~~~~~~~~~~~~~~~
Each special case taken for speed (Note [Elementwise fast path], [Tiny sums], [Product
fast path], [Cross-entropy fast path], [In-place fast path], [Stealing gradients], ...)
tests ``fastpaths.ENABLED`` in its guard, next to the conditions that choose it.  With
the switch off every call takes the general path, so a test can run the same call both
ways and compare (``tests/backends/fastpath_support.py``): the fast path must give the
general path's values, dtypes, shapes, signs of zero, views and errors, on both sides of
every guard.  A planted bug in a guard makes those tests fail.

The switch is process-wide, for tests and debugging only: ``disabled()`` is not meant
to run while other threads compute.  Reading it costs a global and an attribute lookup
(~20 ns) on the paths that test it.

>>> from backends.common import fastpaths
>>> with fastpaths.disabled():
...     fastpaths.ENABLED
False
>>> fastpaths.ENABLED
True
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["ENABLED", "disabled"]

ENABLED = True


@contextmanager
def disabled() -> Iterator[None]:
    """Turn every fast path off inside the block (the general path runs instead)."""
    global ENABLED
    previous = ENABLED
    ENABLED = False
    try:
        yield
    finally:
        ENABLED = previous

"""Defining a generated function: its source compiled once per body, the function named
as its own source would name it.

Imports: the standard library.

Note [Generated code cache]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
compile() was half of ``tensor._generated``'s import time.  Most generated functions
differ only in their name (``def sin(input): return _ov0(input)`` and ``cos``: 412
sources, 110 bodies; the autograd layer's recording kernels, 157 sources, 20 bodies).
So each source is compiled under a placeholder name, once per body, and the function's
code object gets its own name and file name back with ``code.replace``: the function is
the one compiling its own source would give, over its own globals (``env``).
"""

from __future__ import annotations

import linecache
from collections.abc import Callable
from types import CodeType
from typing import Any

__all__ = ["define"]


def define(
    source: str,
    name: str,
    filename: str,
    env: dict[str, Any],
    cache: dict[str, CodeType],
    generic_filename: str,
) -> Callable[..., Any]:
    """Run ``source`` (``def <name>(...)``) in ``env``; return the function it defines.
    ``cache`` maps bodies (the source with the placeholder name) to their code, compiled
    under ``generic_filename``; the function gets ``filename``, under which its own source
    is kept for the life of the process (as a module's is): ``inspect.getsource`` and
    tracebacks through it show the generated code."""
    generic = source.replace(f"def {name}(", "def _generated(", 1)
    code = cache.get(generic)
    if code is None:
        code = cache[generic] = compile(generic, generic_filename, "exec")
    exec(code, env)  # noqa: S102
    fn: Callable[..., Any] = env.pop("_generated")
    fn.__code__ = fn.__code__.replace(co_name=name, co_qualname=name, co_filename=filename)
    fn.__name__ = fn.__qualname__ = name
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return fn

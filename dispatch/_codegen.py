"""Defining a generated function: its source compiled once per body, the function named
as its own source would name it; the compiled bodies kept on disk from one import to
the next.

Imports: the standard library.

Note [Generated code cache]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
compile() was half of ``tensor._generated``'s import time.  Most generated functions
differ only in their name (``def sin(input): return _ov0(input)`` and ``cos``: 412
sources, 110 bodies; the autograd layer's recording kernels, 157 sources, 20 bodies).
So each source is compiled under a placeholder name, once per body, and the function's
code object gets its own name and file name back with ``code.replace``: the function is
the one compiling its own source would give, over its own globals (``env``).

Note [Compiled code on disk]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Even once per body, ``import tensor`` compiled ~200 generated sources (the wrappers, the
recording kernels, the call paths, the ADInplaceOrView factories): ~25 ms of ~250
(ci/bench/import_time.py).  Python keeps a module's bytecode in ``__pycache__``; we keep
the generated code the same way, next to this module's own ``.pyc`` (where
``importlib.util.cache_from_source`` puts it: ``sys.pycache_prefix`` respected), in one
file: ``importlib.util.MAGIC_NUMBER`` (the bytecode's format), then a ``marshal``-ed
dict from (file name, source) to code object.  ``compile_source`` looks a source up
there first, so a cached entry is what compiling that exact text under that name gives;
a changed generator makes new texts, which miss and compile.  ``save`` (at the end of
``import tensor``) writes the entries this process asked for, when one of them missed,
to a temporary file renamed into place (processes importing at once each write a whole
file); with ``sys.dont_write_bytecode`` (``PYTHONDONTWRITEBYTECODE``) or a read-only
folder nothing is written, and a file from another Python, damaged or not a dict of
code is ignored and compiled over.
"""

from __future__ import annotations

import importlib.util
import linecache
import marshal
import os
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import Any

__all__ = ["compile_source", "define", "save"]

# Note [Compiled code on disk]: (file name, source) -> code, as read from the file (None:
# not read yet); what this process asked for; whether any of it was compiled here.
_DISK: dict[tuple[str, str], CodeType] | None = None
_USED: dict[tuple[str, str], CodeType] = {}
_STATS = {"hits": 0, "misses": 0}
_LOCK = threading.Lock()


def cache_path() -> Path | None:
    """The file of Note [Compiled code on disk] (None: no place for bytecode caches)."""
    try:
        pyc = importlib.util.cache_from_source(__file__)
    except (NotImplementedError, ValueError):  # no cache tag, an unusual __file__
        return None
    return Path(pyc).with_name(f"_generated_code.{sys.implementation.cache_tag}.marshal")


def _read() -> dict[tuple[str, str], CodeType]:
    path = cache_path()
    if path is None:
        return {}
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    magic = importlib.util.MAGIC_NUMBER
    if not data.startswith(magic):
        return {}
    try:
        table = marshal.loads(data[len(magic) :])
    except (ValueError, EOFError, TypeError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {
        k: v
        for k, v in table.items()
        if type(k) is tuple and len(k) == 2 and type(v) is CodeType and v.co_filename == k[0]
    }


def compile_source(source: str, filename: str) -> CodeType:
    """``compile(source, filename, "exec")``, from the disk cache when it has it (Note
    [Compiled code on disk])."""
    global _DISK
    key = (filename, source)
    with _LOCK:
        if _DISK is None:
            _DISK = _read()
        code = _DISK.get(key)
        if code is not None:
            _STATS["hits"] += 1
            _USED[key] = code
            return code
    code = compile(source, filename, "exec")
    with _LOCK:
        _STATS["misses"] += 1
        _USED[key] = _DISK[key] = code
    return code


def save() -> bool:
    """Write the code this process compiled or read to the disk cache, if any of it was
    compiled here (Note [Compiled code on disk]); True when a file was written."""
    if sys.dont_write_bytecode or not _STATS["misses"]:
        return False
    path = cache_path()
    if path is None:
        return False
    with _LOCK:
        data = importlib.util.MAGIC_NUMBER + marshal.dumps(dict(_USED))
        _STATS["misses"] = 0
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    except OSError:
        return False  # a read-only install: compiled again next time
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        # As a .pyc's: the source's permissions, readable where it is (mkstemp's 0o600
        # would hide the file from the other users of a shared install).
        os.chmod(tmp, (os.stat(__file__).st_mode & 0o666) | 0o200)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
        return False
    return True


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
        code = cache[generic] = compile_source(generic, generic_filename)
    exec(code, env)  # noqa: S102
    fn: Callable[..., Any] = env.pop("_generated")
    fn.__code__ = fn.__code__.replace(co_name=name, co_qualname=name, co_filename=filename)
    fn.__name__ = fn.__qualname__ = name
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return fn

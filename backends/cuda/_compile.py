"""Compiling our CUDA sources with CuPy: lazily, once per (device, source, instance).

Imports: the standard library; CuPy lazily (only ``function`` touches it, and only
after ``backends.cuda.init()`` found a GPU).  Nothing compiles at import: the first
call of an operator for a dtype on a device compiles that one template instance
(NVRTC, through ``cupy.RawModule`` with ``name_expressions``; CuPy also caches the
binary on disk, so later processes only load it).

Note [Kernel cache]
``function`` is on every raw kernel launch, so its hit path is one dict lookup with
a tuple key.  The miss path takes a lock and looks again (two threads asking for the
same kernel compile it once), then compiles outside nothing else: holding the lock
while NVRTC runs is fine, compiles are rare and short.  The hottest launches (a tiny
``a + b``: 5 us of launch, our Python around it is the rest) hold an ``Instance``,
which on a one-GPU machine keeps its Function and skips even that lookup.
"""

from __future__ import annotations

import importlib
import threading
from pathlib import Path
from typing import Any

__all__ = ["INCLUDE", "SOURCES", "Instance", "function", "source_text"]

SOURCES = Path(__file__).resolve().parent
INCLUDE = SOURCES / "_include"
OPTIONS = ("-std=c++17", f"-I{INCLUDE}")

_CACHE: dict[tuple[int, str, str], Any] = {}
_LOCK = threading.Lock()
_TEXT: dict[str, str] = {}


def source_text(source: str) -> str:
    """The text of ``backends/cuda/<source>`` (read once)."""
    text = _TEXT.get(source)
    if text is None:
        text = _TEXT[source] = (SOURCES / source).read_text()
    return text


class _Lazy:
    get_device: Any = None  # cupy.cuda.runtime.getDevice, once CuPy is loaded
    single: bool | None = None  # one GPU visible (asked once, at the first compile)


class Instance:
    """A template instance a launcher calls on every launch: ``inst.fn or inst.get()``.

    ``get()`` is ``function(source, expression)``; on a machine with one GPU it also
    keeps the Function in ``fn``, so later launches skip the device lookup and the
    cache's tuple key (Note [Kernel cache]).  With several GPUs ``fn`` stays ``None``:
    the Function depends on the current device.
    """

    __slots__ = ("expression", "fn", "source")

    def __init__(self, source: str, expression: str) -> None:
        self.source, self.expression = source, expression
        self.fn: Any = None

    def get(self) -> Any:
        fn = function(self.source, self.expression)
        if _Lazy.single is None:
            cupy = importlib.import_module("cupy")
            _Lazy.single = cupy.cuda.runtime.getDeviceCount() == 1
        if _Lazy.single:
            self.fn = fn
        return fn


def function(source: str, expression: str) -> Any:
    """The compiled kernel ``expression`` (a template instance) of ``source`` on the current
    device, called as ``kernel(grid, block, args)`` with tuples for grid and block."""
    get_device = _Lazy.get_device
    if get_device is None:
        get_device = _Lazy.get_device = importlib.import_module("cupy").cuda.runtime.getDevice
    key = (get_device(), source, expression)
    kernel = _CACHE.get(key)
    if kernel is not None:
        return kernel
    cupy = importlib.import_module("cupy")
    with _LOCK:
        kernel = _CACHE.get(key)
        if kernel is None:
            module = cupy.RawModule(
                code=source_text(source), options=OPTIONS, name_expressions=[expression]
            )
            # The device's ``cupy.cuda.function.Function`` under the RawKernel: called as
            # ``f(grid, block, args)`` (tuples) it skips RawKernel's per-call device lookup
            # and keyword handling, ~1 us of a tiny op's launch (Note [Kernel cache]).
            raw = module.get_function(expression)
            kernel = _CACHE[key] = getattr(raw, "kernel", raw)
    return kernel

"""The fake CuPy's ``RawModule``/``RawKernel``: CUDA sources built by the harness, run on the CPU.

Imports: the standard library; ``_build`` and ``_launch``.

``RawModule(code=..., options=..., name_expressions=[...]).get_function(expr)`` returns a
``RawKernel`` whose ``kernel`` attribute (CuPy's ``Function``) and whose own call run
``expr`` through the harness (``_launch.Kernel``: ``f(grid, block, args)``).

Which library holds ``expr``: one ``plan``ned for the code (the test plugin plans every
source of ``backends/cuda`` with all the instances ``backends.cuda._tables.instances()``
lists, so each source is one build), else a library of the requested expressions alone,
built on demand and recorded in ``unplanned()`` (a launcher asking for an instance the
tables do not list: the NVRTC and nvcc checks would not have compiled it).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from typing import Any

from . import _build, _launch

__all__ = ["CompileException", "RawKernel", "RawModule", "libraries", "plan", "unplanned"]

_LOCK = threading.RLock()
_PLANS: dict[str, tuple[str, ...]] = {}  # code hash -> instances to build it with
_LOADED: dict[tuple[str, tuple[str, ...], tuple[str, ...]], _launch.Library] = {}
_UNPLANNED: list[str] = []
_BUILDS: list[_build.Built] = []


class CompileException(Exception):  # noqa: N818 - CuPy's name
    """``cupy.cuda.compiler.CompileException``: the host compiler's diagnostics."""


def _hash(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


def plan(code: str, instances: Sequence[str]) -> None:
    """Build ``code`` with all of ``instances`` when any of them is first asked for."""
    with _LOCK:
        _PLANS[_hash(code)] = tuple(instances)


def unplanned() -> list[str]:
    """Instances asked for that no plan listed (each built alone)."""
    with _LOCK:
        return list(_UNPLANNED)


def builds() -> list[_build.Built]:
    with _LOCK:
        return list(_BUILDS)


def libraries() -> list[_launch.Library]:
    return _launch.libraries()


def _library(code: str, options: tuple[str, ...], expr: str) -> _launch.Library:
    with _LOCK:
        h = _hash(code)
        for (ch, opts, _names), lib in _LOADED.items():
            if ch == h and opts == options and expr in lib.index:
                return lib
        names = _PLANS.get(h, ())
        if expr not in names:
            _UNPLANNED.append(expr)
            names = (expr,)
        try:
            built = _build.build(code, options, names)
        except _build.BuildError as e:
            raise CompileException(str(e)) from None
        _BUILDS.append(built)
        lib = _LOADED[(h, options, names)] = _launch.Library(built)
        return lib


class RawKernel:
    """``cupy.RawKernel`` of one instance: ``kernel(grid, block, args)``."""

    __module__ = "cupy"

    def __init__(self, kernel: _launch.Kernel) -> None:
        self.kernel = kernel  # CuPy's Function, which the backend caches and calls
        self.name = kernel.name

    def __call__(self, grid: Any, block: Any, args: Any, *, shared_mem: int = 0,
                 stream: Any = None, enable_cooperative_groups: bool = False) -> None:  # fmt: skip
        self.kernel(grid, block, args)


class RawModule:
    """``cupy.RawModule``: a CUDA source; ``get_function`` compiles (or loads) it."""

    __module__ = "cupy"

    def __init__(self, code: str | None = None, *, path: str | None = None,
                 options: Sequence[str] = (), backend: str = "nvrtc",
                 translate_cucomplex: bool = False, enable_cooperative_groups: bool = False,
                 name_expressions: Sequence[str] | None = None, jitify: bool = False) -> None:  # fmt: skip
        if (code is None) == (path is None):
            raise TypeError("RawModule: give one of code= and path=")
        if code is None:
            with open(path) as f:  # type: ignore[arg-type]
                code = f.read()
        self.code = code
        self.options = tuple(options)
        self.name_expressions = tuple(name_expressions or ())

    def get_function(self, name: str) -> RawKernel:
        if self.name_expressions and name not in self.name_expressions:
            # CuPy looks a name that is not a name expression up as a plain symbol.
            raise RuntimeError(f"CUDA_ERROR_NOT_FOUND: named symbol not found: {name}")
        lib = _library(self.code, self.options, name)
        return RawKernel(lib.kernel(name))

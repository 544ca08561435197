"""Compiling our CUDA sources with NVRTC: lazily, once per (device, source, instance).

Imports: the standard library; CuPy lazily (only ``function`` touches it, and only
after ``backends.cuda.init()`` found a GPU).  Nothing compiles at import: the first
call of an operator for a dtype on a device compiles that one template instance
(NVRTC through ``cupy.cuda.compiler.compile_using_nvrtc`` with the instance as a name
expression), loads it as a ``cupy.cuda.function.Module`` and keeps its Function.

Note [Subnormals]
PyTorch's CUDA kernels keep subnormal floats (nvcc's default, ``-ftz=false``): on an
H200, ``torch.tensor([1e-30], device='cuda') ** 1.5`` is 1.4e-45 and ``x * 1e-15``
keeps ``x = 1e-30``'s product.  CuPy's ``RawModule`` (and every kernel CuPy compiles)
appends ``-ftz=true`` after the caller's options, which flushes subnormal operands and
results of float32 arithmetic to zero: our kernels built that way gave 0 for both.  So
we call NVRTC through CuPy's lower ``compile_using_nvrtc``, which passes our options
as they are, and keep our own disk cache of the binaries (CuPy's cache lives in the
layer we skip).  CuPy functions we still call for some operators keep CuPy's flushing:
on the H200, float32 ``mean`` of three subnormals gave 0 and ``cumsum`` zeros where
PyTorch keeps them (``sum`` and ``matmul`` agreed).

Note [Kernel disk cache]
A compiled instance is stored as ``<sha256>.cubin`` under ``$ARRAYDISPATCH_CACHE_DIR``
(default ``~/.cache/arraydispatch/kernels``): the mangled name, a NUL, then the binary.
The key hashes everything the binary depends on: the source, every header of
``_include`` (CuPy's own cache key leaves included headers out, so an edited header
served stale binaries), the options, the instance, the device's compute capability,
and the versions of NVRTC and CuPy.  Writes go to a temporary file renamed into place
(two processes compiling the same instance both write whole files); a cache that cannot
be written is skipped, and an unreadable entry is compiled again.

Note [Kernel cache]
``function`` is on every raw kernel launch, so its hit path is one dict lookup with
a tuple key.  The miss path takes a lock and looks again (two threads asking for the
same kernel compile it once), then compiles outside nothing else: holding the lock
while NVRTC runs is fine, compiles are rare and short.  The hottest launches (a tiny
``a + b``: 5 us of launch, our Python around it is the rest) hold an ``Instance``,
which on a one-GPU machine keeps its Function and skips even that lookup.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

__all__ = ["INCLUDE", "SOURCES", "Instance", "cache_dir", "function", "source_text"]

SOURCES = Path(__file__).resolve().parent
INCLUDE = SOURCES / "_include"
# -ftz=false is NVRTC's default; said here since CuPy's own path says otherwise
# (Note [Subnormals]).
OPTIONS = ("-std=c++17", "-ftz=false", f"-I{INCLUDE}")

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
            kernel = _CACHE[key] = _load(cupy, source, expression)
    return kernel


def cache_dir() -> Path:
    """Where compiled instances are kept (Note [Kernel disk cache])."""
    root = os.environ.get("ARRAYDISPATCH_CACHE_DIR")
    return Path(root) if root else Path.home() / ".cache" / "arraydispatch" / "kernels"


def _headers() -> str:
    """The text of every header our sources can include, for the cache key (read once)."""
    text = _TEXT.get("<headers>")
    if text is None:
        parts = [f"{p.name}\0{p.read_text()}" for p in sorted(INCLUDE.glob("*")) if p.is_file()]
        text = _TEXT["<headers>"] = "\0".join(parts)
    return text


def _options(cupy: Any) -> tuple[str, ...]:
    """OPTIONS with the include folders CuPy's RawModule gives NVRTC (the CUDA toolkit's
    headers: ``cuda_fp16.h``...), from CuPy's own function for them where it has one."""
    core = getattr(getattr(cupy, "_core", None), "core", None)  # CuPy 14's, seen on the H200
    assemble = getattr(core, "assemble_cupy_compiler_options", None)
    if assemble is not None:
        return tuple(assemble(OPTIONS))
    get_cuda_path = getattr(cupy.cuda, "get_cuda_path", None)
    root = get_cuda_path() if get_cuda_path is not None else None
    return (*OPTIONS, f"-I{os.path.join(root, 'include')}") if root else OPTIONS


def _load(cupy: Any, source: str, expression: str) -> Any:
    """Compile (or read from the disk cache) and load one instance; its ``Function``."""
    code = source_text(source)
    options = _options(cupy)
    device = cupy.cuda.Device()
    toolchain = (cupy.__version__, str(cupy.cuda.nvrtc.getVersion()), device.compute_capability)
    digest = hashlib.sha256()
    for part in (*toolchain, *options, expression, code, _headers()):
        digest.update(part.encode())
        digest.update(b"\1")
    path = cache_dir() / f"{digest.hexdigest()}.cubin"
    entry = _read(path)
    if entry is None:
        image, mapping = cupy.cuda.compiler.compile_using_nvrtc(
            code, options, filename=source, name_expressions=[expression]
        )
        image = image if isinstance(image, bytes) else image.encode()
        entry = (mapping[expression], image)
        _write(path, entry)
    name, image = entry
    module = cupy.cuda.function.Module()
    module.load(image)
    # The Function is what a RawKernel wraps: called as ``f(grid, block, args)`` (tuples)
    # it skips RawKernel's per-call device lookup and keyword handling (~1 us of a tiny
    # op's launch, Note [Kernel cache]); it holds its module.
    return module.get_function(name)


def _read(path: Path) -> tuple[str, bytes] | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    name, sep, image = data.partition(b"\0")
    return (name.decode(), image) if sep and image else None


def _write(path: Path, entry: tuple[str, bytes]) -> None:
    name, image = entry
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    except OSError:
        return  # a read-only home: compile again next time
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(name.encode() + b"\0" + image)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)

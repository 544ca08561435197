"""Compiling a CUDA source as host C++ into a shared library of its kernel instances.

Imports: the standard library only (NumPy is ``_launch``'s business).

``build(code, options, instances)`` writes ``code`` (the text CuPy's ``RawModule`` would
get) beside generated translation units, each including ``include/cudasim_launch.h``
(the emulation header and the trampoline templates), then the source, then one
``ADSIM_INSTANCE(i, expr)`` per template instance: ``adsim_k<i>`` launches it through
``adsim::launch`` (which deduces the kernel's parameter types from its address and
unpacks CuPy-style ``void** args``) and counts the launch in ``adsim_counts[i]``;
``adsim_s<i>`` returns its parameter types as text (``p`` pointer to / ``v`` value of
``f4``, ``bf16``, ``s272`` ...) for the argument checks in ``_launch``.  Instances are
split over several translation units compiled in parallel, then linked with the
runtime (``include/cudasim_runtime.cpp``) into one ``.so``.

Note [Build cache]
A build is keyed by a hash of everything that can change its result: the code, the
headers it includes with quotes (found in the ``-I`` folders of ``options``,
transitively), the harness's own ``include/`` files, the instance list, the compiler's
identity (path and ``--version``), the flags and the toolkit's include folder.
The library lands in ``$ARRAYDISPATCH_CUDASIM_CACHE`` (default
``~/.cache/arraydispatch-cudasim``) under that hash, built in a temporary folder and
renamed into place under a file lock, so parallel test processes build it once and
reruns load it in milliseconds.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import fcntl
import functools
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BuildError", "Built", "build", "cache_dir", "compiler", "cuda_include"]

HERE = Path(__file__).resolve().parent
INCLUDE = HERE / "include"
# Bump when the generated code's shape changes in a way the hashed inputs do not show.
VERSION = "1"
FLAGS = (
    "-std=c++17", "-O1", "-fPIC", "-fvisibility=hidden", "-fno-strict-aliasing",
    "-Wno-unknown-pragmas", "-Wno-attributes",
)  # fmt: skip
# Instances per translation unit: small enough to spread over cores, large enough that
# the headers' parse (~1 s) is not repeated too often.
CHUNK = 160


class BuildError(RuntimeError):
    """The host compiler rejected a source (the message carries its diagnostics)."""


@dataclass(frozen=True)
class Built:
    """A built library: its path, its instances in index order, its ``__shared__``
    variables and how long it took."""

    path: Path
    instances: tuple[str, ...]
    # (name, address, size) of each __shared__ variable, addresses as linked; ``anchor``
    # is adsim_counts' linked address, to find the load offset.
    shared: tuple[tuple[str, int, int], ...]
    anchor: int
    seconds: float  # the compile (0.0 when it came from the cache)
    cached: bool


def compiler() -> str | None:
    """The host C++ compiler: ``$CXX``, else g++, else clang++ (None when none is found)."""
    for name in (os.environ.get("CXX"), "g++", "clang++"):
        if name and (path := shutil.which(name)):
            return path
    return None


def cuda_include() -> str | None:
    """A CUDA toolkit's include folder with cuda_fp16.h/cuda_bf16.h (host versions)."""
    roots = [os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"), "/usr/local/cuda"]
    roots += sorted(glob.glob("/usr/local/cuda-*"), reverse=True)
    for root in filter(None, roots):
        inc = Path(root) / "include"
        if (inc / "cuda_fp16.h").is_file() and (inc / "cuda_bf16.h").is_file():
            return str(inc)
    return None


def cache_dir() -> Path:
    """``$ARRAYDISPATCH_CUDASIM_CACHE``, else ``~/.cache/arraydispatch-cudasim``, else (a
    read-only home) a folder in the temporary directory."""
    chosen = os.environ.get("ARRAYDISPATCH_CUDASIM_CACHE")
    if chosen:
        return Path(chosen)
    default = Path.home() / ".cache" / "arraydispatch-cudasim"
    try:
        default.mkdir(parents=True, exist_ok=True)
        if os.access(default, os.W_OK):
            return default
    except OSError:
        pass
    return Path(tempfile.gettempdir()) / f"arraydispatch-cudasim-{os.getuid()}"


def include_dirs(options: Sequence[str]) -> list[str]:
    """The ``-I`` folders of CuPy-style compile options (``-Ifoo`` or ``-I foo``)."""
    out: list[str] = []
    it = iter(options)
    for opt in it:
        if opt == "-I":
            out.append(next(it, ""))
        elif opt.startswith("-I"):
            out.append(opt[2:])
        elif opt.startswith("--include-path="):
            out.append(opt.partition("=")[2])
    return [d for d in out if d]


def defines(options: Sequence[str]) -> list[str]:
    return [o for o in options if o.startswith("-D")]


@functools.cache
def _compiler_id(cxx: str) -> str:
    done = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=False)
    return f"{cxx}\n{done.stdout}"


def _key(code: str, options: Sequence[str], instances: Sequence[str], cxx: str, cuda: str) -> str:
    h = hashlib.sha256()
    # -I folders count by the contents of what they provide (below), not their paths: a
    # copy of the headers elsewhere builds the same library.
    flags = [o for o in options if o not in include_dirs(options) and not o.startswith("-I")]
    for part in (VERSION, code, "\0".join(flags), "\0".join(instances), _compiler_id(cxx),
                 " ".join(FLAGS), cuda):  # fmt: skip
        h.update(part.encode())
        h.update(b"\0")
    for path in sorted(INCLUDE.iterdir()):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    for path in _included(code, include_dirs(options)):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:24]


_INCLUDE_LINE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


def _included(code: str, folders: Sequence[str]) -> list[Path]:
    """The files ``code`` includes with quotes, found in ``folders``, transitively (so a
    change to one header rebuilds only the sources that include it)."""
    found: list[Path] = []
    todo = [code]
    while todo:
        for name in _INCLUDE_LINE.findall(todo.pop()):
            for folder in folders:
                path = (Path(folder) / name).resolve()
                if path.is_file():
                    if path not in found:
                        found.append(path)
                        todo.append(path.read_text())
                    break
    return found


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _unit(source: Path, start: int, names: Sequence[str]) -> str:
    lines = ['#include "cudasim_launch.h"', f'#include "{source}"', ""]
    lines += [f"ADSIM_INSTANCE({start + k}, {name})" for k, name in enumerate(names)]
    return "\n".join(lines) + "\n"


def _compile(cmd: list[str], what: str) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BuildError(f"{what}: host compile failed\n$ {' '.join(cmd)}\n{done.stderr[-8000:]}")


def build(
    code: str, options: Sequence[str], instances: Sequence[str], *, jobs: int | None = None
) -> Built:
    """The library of ``instances`` of CUDA source ``code`` (built, or from the cache)."""
    cxx, cuda = compiler(), cuda_include()
    if cxx is None:
        raise BuildError("no host C++ compiler (g++ or clang++, or $CXX) found on PATH")
    if cuda is None:
        raise BuildError("no CUDA toolkit include folder with cuda_fp16.h/cuda_bf16.h found")
    instances = tuple(instances)
    key = _key(code, options, instances, cxx, cuda)
    final = cache_dir() / key
    lib = final / "kernels.so"
    with _locked(cache_dir() / f"{key}.lock"):
        meta = final / "meta.json"
        if lib.is_file() and meta.is_file():
            found = json.loads(meta.read_text())
            os.utime(final)  # recently used: kept by _prune
            return Built(lib, instances, _shared(found), found["anchor"], 0.0, True)
        start = time.perf_counter()
        work = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=cache_dir()))
        try:
            _build_into(work, code, options, instances, cxx, cuda, jobs)
            found = _symbols(work / "kernels.so")
            (work / "meta.json").write_text(json.dumps({"instances": list(instances), **found}))
            for obj in work.glob("*.o"):
                obj.unlink()
            shutil.rmtree(final, ignore_errors=True)
            os.replace(work, final)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        _prune(keep=final)
        seconds = time.perf_counter() - start
        return Built(lib, instances, _shared(found), found["anchor"], seconds, False)


def _shared(found: dict) -> tuple[tuple[str, int, int], ...]:  # type: ignore[type-arg]
    return tuple((name, addr, size) for name, addr, size in found["shared"])


# Function-local statics of kernel code (nm -C: "reduce_rows<...>(...)::shared"), not of
# the harness's own functions or the C++ library's.
_LOCAL_STATIC = re.compile(r"^(?!guard variable|adsim::|std::|__gnu_cxx::).*\)::[A-Za-z_]\w*$")


def _symbols(lib: Path) -> dict:  # type: ignore[type-arg]
    """The library's __shared__ variables and its anchor symbol, from its symbol table."""
    nm = shutil.which("nm")
    if nm is None:
        raise BuildError("nm (binutils) not found: it lists the kernels' __shared__ variables")
    done = subprocess.run([nm, "-S", "--defined-only", "-C", str(lib)], capture_output=True,
                          text=True, check=True)  # fmt: skip
    shared, anchor = [], None
    for line in done.stdout.splitlines():
        parts = line.split(maxsplit=3)
        if len(parts) != 4:
            continue
        addr, size, kind, name = parts
        if name == "adsim_counts":
            anchor = int(addr, 16)
        elif kind in "bBdD" and _LOCAL_STATIC.match(name):
            shared.append((name, int(addr, 16), int(size, 16)))
    if anchor is None:
        raise BuildError(f"{lib}: no adsim_counts symbol")
    return {"shared": shared, "anchor": anchor}


def _prune(keep: Path, days: float = 14.0) -> None:
    """Drop cached builds unused for ``days`` (each build's folder is touched on use)."""
    cutoff = time.time() - days * 86400
    for entry in cache_dir().iterdir():
        if entry.is_dir() and entry != keep and entry.stat().st_mtime < cutoff:
            with contextlib.suppress(OSError):
                shutil.rmtree(entry)
                Path(f"{entry}.lock").unlink(missing_ok=True)


def _build_into(
    work: Path, code: str, options: Sequence[str], instances: tuple[str, ...], cxx: str,
    cuda: str, jobs: int | None,
) -> None:  # fmt: skip
    source = work / "source.cu"
    source.write_text(code)
    incs = [f"-I{INCLUDE}", f"-I{cuda}", *(f"-I{d}" for d in include_dirs(options))]
    base = [cxx, *FLAGS, *defines(options), *incs, "-x", "c++"]
    units: list[tuple[Path, Path]] = []
    for k, start in enumerate(range(0, len(instances), CHUNK)):
        unit = work / f"unit{k}.cpp"
        unit.write_text(_unit(source, start, instances[start : start + CHUNK]))
        units.append((unit, work / f"unit{k}.o"))
    index = work / "index.cpp"
    index.write_text(
        f'extern "C" __attribute__((visibility("default"))) unsigned long long '
        f"adsim_counts[{max(len(instances), 1)}] = {{0}};\n"
    )
    units.append((index, work / "index.o"))
    units.append((INCLUDE / "cudasim_runtime.cpp", work / "runtime.o"))
    workers = jobs or max(1, min(len(units), os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        futures = [
            pool.submit(_compile, [*base, "-c", str(src), "-o", str(obj)], src.name)
            for src, obj in units
        ]
        for f in futures:
            f.result()
    link = [cxx, "-shared", "-o", str(work / "kernels.so"), *(str(o) for _, o in units)]
    _compile([*link, "-lpthread"], "link")

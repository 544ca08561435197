"""Every CUDA kernel instance compiles with NVRTC, the compiler CuPy runs on the GPU machine.

``test_cuda_compile.py`` compiles the sources with ``nvcc``; NVRTC is another front end
with other rules: no host headers, no GCC builtins (``__builtin_memcpy`` compiled with
nvcc and failed the first GPU run under NVRTC).  This test calls NVRTC's C API
(``libnvrtc`` from the ``nvidia-cuda-nvrtc`` wheel of the test extra, or a CUDA
toolkit) through ctypes, no GPU needed: one program per source (and per chunk of
elementwise.cu's instances, so xdist spreads them), every instance the launchers can
ask for added as a name expression, our ``OPTIONS`` as CuPy passes them, plus the
CUDA include folder CuPy adds for ``cuda_fp16.h``/``cuda_bf16.h``.  Skipped, saying
so, without NVRTC or those headers.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import importlib.util
import os
from pathlib import Path

import pytest

import tensor
from backends.cuda import _compile, _tables

CHUNK = 350  # name expressions per program: ~25 s of NVRTC each on one core


def _find_nvrtc() -> str | None:
    spec = importlib.util.find_spec("nvidia")
    for root in spec.submodule_search_locations if spec else []:
        for found in sorted(glob.glob(os.path.join(root, "cu1*", "lib", "libnvrtc.so.*"))):
            if "builtins" not in found:
                return found
    return ctypes.util.find_library("nvrtc")


def _find_cuda_include() -> str | None:
    roots = [os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"), "/usr/local/cuda"]
    roots += sorted(glob.glob("/usr/local/cuda-*"), reverse=True)
    for root in filter(None, roots):
        if (Path(root) / "include" / "cuda_fp16.h").is_file():
            return str(Path(root) / "include")
    return None


def _programs() -> list[tuple[str, int, list[str]]]:
    out = []
    for source, names in _tables.instances(tensor.op_info).items():
        for start in range(0, len(names), CHUNK):
            out.append((source, start // CHUNK, names[start : start + CHUNK]))
    return out


PROGRAMS = _programs()


def _compile_with_nvrtc(lib: ctypes.CDLL, source: str, names: list[str], include: str) -> str:
    """NVRTC's log ('' on success; the log with the error code otherwise)."""
    prog = ctypes.c_void_p()
    text = _compile.source_text(source).encode()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), text, source.encode(), 0, None, None):
        return "nvrtcCreateProgram failed"
    try:
        for name in names:
            lib.nvrtcAddNameExpression(prog, name.encode())
        options = [o.encode() for o in (*_compile.OPTIONS, "-arch=compute_90", f"-I{include}")]
        code = lib.nvrtcCompileProgram(
            prog, len(options), (ctypes.c_char_p * len(options))(*options)
        )
        if code == 0:
            return ""
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        return f"NVRTC error {code}:\n{log.value.decode(errors='replace')[-6000:]}"
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


@pytest.mark.parametrize(
    ("source", "chunk", "names"), PROGRAMS, ids=[f"{s}-{c}" for s, c, _ in PROGRAMS]
)
def test_instances_compile_with_nvrtc(source: str, chunk: int, names: list[str]) -> None:
    path = _find_nvrtc()
    if path is None:
        pytest.skip("NVRTC not found: pip install nvidia-cuda-nvrtc (in the test extra)")
    include = _find_cuda_include()
    if include is None:
        pytest.skip("cuda_fp16.h not found: set CUDA_PATH to a CUDA toolkit")
    log = _compile_with_nvrtc(ctypes.CDLL(path), source, names, include)
    assert not log, f"{source} (instances {chunk * CHUNK}+) does not compile with NVRTC:\n{log}"


def test_the_programs_cover_every_instance() -> None:
    covered = {(s, n) for s, _, names in PROGRAMS for n in names}
    expected = {(s, n) for s, names in _tables.instances(tensor.op_info).items() for n in names}
    assert covered == expected

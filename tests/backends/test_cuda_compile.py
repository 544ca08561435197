"""Every CUDA kernel source compiles, for every template instance the launchers use.

Runs in the ordinary suite, without a GPU: for each ``.cu`` file of backends/cuda and
two architectures (sm_90, Hopper, and sm_75, Turing: the oldest with the bfloat16 and
16-bit atomics our kernels use through CUDA 13), a translation unit includes the
source and takes the address of every instance ``backends.cuda._tables.instances()``
lists (for the operator table of ``tensor``) (which instantiates each template for each dtype the Python launchers can ask
for), and ``nvcc`` compiles it to a cubin.  Skipped, saying so, without ``nvcc``.

The sources are compiled with the same flags CuPy's NVRTC gets (``-std=c++17`` and
our include folder); NVRTC-only differences (no host headers) are kept out by the
sources including nothing but CUDA's own headers.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import tensor
from backends.cuda import _tables

CUDA_DIR = Path(_tables.__file__).resolve().parent
SOURCES = sorted(p.name for p in CUDA_DIR.glob("*.cu"))
ARCHS = ["sm_90", "sm_75"]
NVCC = shutil.which("nvcc")


def test_every_source_has_instances_and_every_instance_a_source() -> None:
    instances = _tables.instances(tensor.op_info)
    assert sorted(instances) == SOURCES, "a .cu file without instances, or the reverse"
    for source, names in instances.items():
        assert names, f"{source}: no instances"


def test_every_raw_elementwise_op_is_an_operator_with_its_cpu_kernel() -> None:
    rows = {op.name for op in tensor.OP_TABLE if op.family in ("unary", "binary")}
    raw = set(_tables.UNARY) | set(_tables.UNARY_PARAMS) | set(_tables.BINARY)
    assert raw <= rows, f"raw CUDA kernels for unknown operators: {sorted(raw - rows)}"
    # The composed rows run the shared formula over CuPy (add/sub with alpha, isclose,
    # rsub); a row without a raw kernel (logaddexp) runs CuPy's function of its name
    # (Note [Default math]).
    composed = {"rsub", "isclose"}
    assert composed <= rows - raw, "rsub and isclose run the shared formula, not a raw kernel"
    assert raw - composed, "the raw kernels are gone"
    for name in raw:
        assert _tables.raw_dtypes(tensor.op_info(name)), f"{name}: no dtype reaches its raw kernel"


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("source", SOURCES)
def test_source_compiles(source: str, arch: str, tmp_path: Path) -> None:
    if NVCC is None:
        pytest.skip("nvcc not found on PATH: install the CUDA toolkit to compile-check kernels")
    names = _tables.instances(tensor.op_info)[source]
    unit = tmp_path / f"check_{source}"
    keep = ",\n    ".join(f"(const void*)&{name}" for name in names)
    unit.write_text(
        f'#include "{CUDA_DIR / source}"\n'
        f"// Taking each instance's address instantiates it.\n"
        f"const void* const ad_instances[] = {{\n    {keep}\n}};\n"
    )
    cmd = [
        NVCC, "-std=c++17", f"-arch={arch}", "-cubin", "-I", str(CUDA_DIR / "_include"),
        "-diag-suppress", "177", "-o", str(tmp_path / "out.cubin"), str(unit),
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, f"nvcc failed for {source} ({arch}):\n{done.stderr[-6000:]}"

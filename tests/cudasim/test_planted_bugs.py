"""The harness catches the bugs it is for: each planted in a copy, each failing a check.

Each case changes a copy of one file of backends/cuda (the source text, or a header in
a temporary include folder, or ``_launch.element_strides`` patched for one test: the
worktree is never touched), builds it (cached by content like every build), and runs
the same check as tests/cudasim/test_kernels.py on it, which must fail:
- a stride in bytes instead of elements in the Geometry (``_launch.py``): strided
  kernels read outside their operands (a fault or wrong values);
- no ``__syncthreads()`` between the warps' partials and their final reduction
  (``_include/ad_reduce.cuh``): thread 0 reads partials not yet written;
- scan off-by-ones (``reduce.cu``): ``>`` for ``>=`` in the Hillis-Steele step, the
  carry taken from the tile's second-to-last element, and a write one past each row.
The unmodified sources pass the same checks (test_kernels.py).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import tensor
from backends.cuda import _compile, _tables
from backends.cuda import _launch as geometry

from . import _build, _launch
from . import test_kernels as checks

pytestmark = pytest.mark.cudasim


def _mutant(tmp_path: Path, source: str, file: str, old: str, new: str) -> _launch.Library:
    """``source``'s library with ``old`` replaced by ``new`` in ``file`` (the source or a
    header of backends/cuda/_include), built from copies."""
    include = tmp_path / "include"
    shutil.copytree(_compile.INCLUDE, include)
    code = _compile.source_text(source)
    if file == source:
        assert old in code, f"{source} changed: the planted bug no longer applies"
        code = code.replace(old, new)
    else:
        text = (include / file).read_text()
        assert old in text, f"{file} changed: the planted bug no longer applies"
        (include / file).write_text(text.replace(old, new))
    names = _tables.instances(tensor.op_info)[source]
    return _launch.Library(_build.build(code, ("-std=c++17", f"-I{include}"), names))


def _fails(check: Callable[[], None]) -> str:
    """What made ``check`` fail (it must fail)."""
    try:
        check()
    except (AssertionError, _launch.KernelError) as e:
        return str(e)
    raise AssertionError("the planted bug went unnoticed")


def test_stride_in_bytes_is_caught(toolchain: None, monkeypatch: pytest.MonkeyPatch) -> None:
    ew = checks._library("elementwise.cu")

    def byte_strides(array: np.ndarray, shape: tuple[int, ...]) -> list[int]:
        pad = len(shape) - array.ndim
        sizes = zip(array.shape, array.strides, strict=True)
        return [0] * pad + [0 if n == 1 else s for n, s in sizes]  # bytes, not elements

    monkeypatch.setattr(geometry, "element_strides", byte_strides)
    check = checks.test_unary_strided_reads_through_the_strides
    for name, x in checks._layouts():
        assert _fails(lambda name=name, x=x: check(ew, name, x))


def test_missing_barrier_in_block_reduce_is_caught(toolchain: None, tmp_path: Path) -> None:
    red = _mutant(tmp_path, "reduce.cu", "ad_reduce.cuh",
                  "if (lane == 0) shared[warp] = v;\n    __syncthreads();",
                  "if (lane == 0) shared[warp] = v;")  # fmt: skip
    for shape in [(3, 5), (7, 300), (300, 33)]:
        assert _fails(lambda shape=shape: checks.test_reduce_rows_one_pass(red, shape))
    assert _fails(lambda: checks.test_reduce_flat_vector_loads_then_finished(red, 1 << 16))


SCAN_BUGS = {
    "step": ("threadIdx.x >= d ?", "threadIdx.x > d ?"),
    "carry": ("tile[blockDim.x - 1]", "tile[blockDim.x - 2]"),
    "row end": ("if (i < cols) dst[i]", "if (i <= cols) dst[i]"),
}


@pytest.mark.parametrize("bug", sorted(SCAN_BUGS))
def test_scan_off_by_one_is_caught(toolchain: None, tmp_path: Path, bug: str) -> None:
    old, new = SCAN_BUGS[bug]
    red = _mutant(tmp_path, "reduce.cu", "reduce.cu", old, new)
    why = _fails(lambda: checks.test_scan_rows_across_tiles(red, 1300))
    if bug == "row end":
        assert "past the end" in why  # the guarded copies report the write

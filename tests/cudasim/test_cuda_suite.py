"""The project's CUDA test files, run on the CPU: fake CuPy, our kernels as host code.

Why a subprocess: the fake ``cupy`` must be the only one any module of the session ever
imports, and the ordinary suite must keep its world (no CuPy: the CUDA tests skip,
``tt.cuda.is_available()`` is False, tests/backends/test_cuda.py checks that).  A
separate pytest session started with ``-p tests.cudasim.plugin`` gets the fake before
anything imports ``cupy``; this process never sees it.  One test runs the op database
on CUDA against the CPU (tests/ops/test_opdb_cuda.py: values, shapes, dtypes and errors,
float16 and bfloat16 included) with tests/backends/test_cuda.py and
test_cuda_kernels.py; another runs test_cuda.py again with two fake devices, for the
multi-GPU paths (device guards, moves between devices) that one GPU never takes.

The sessions report through the plugin's JSON: every test must pass, skips must be for
the reasons listed here, the launchers must have asked only for instances
``backends.cuda._tables`` lists, and many of those instances must have run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUITE = [
    "tests/ops/test_opdb_cuda.py",
    "tests/backends/test_cuda.py",
    "tests/backends/test_cuda_kernels.py",
]
# Skips the CUDA files may report under the harness, and why they are fine.
EXPECTED_SKIPS = {
    "a CUDA device is present": "the no-GPU checks, which the ordinary suite runs",
    "needs two CUDA devices": "covered by the two-device session",
    "PyTorch is not installed": "DLPack with PyTorch's CUDA build",
    "PyTorch has no CUDA here": "DLPack with PyTorch's CUDA build",
}

pytestmark = pytest.mark.cudasim


def _session(tmp_path: Path, files: list[str], devices: int, label: str) -> dict[str, Any]:
    stats, junit = tmp_path / f"{label}.json", tmp_path / f"{label}.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env.update(ARRAYDISPATCH_CUDASIM_STATS=str(stats),
               ARRAYDISPATCH_CUDASIM_DEVICES=str(devices))  # fmt: skip
    cmd = [sys.executable, "-m", "pytest", "-p", "tests.cudasim.plugin", "-p", "no:cacheprovider",
           "-q", "-rfEs", f"--junitxml={junit}", *files]  # fmt: skip
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    output = done.stdout[-12000:] + done.stderr[-4000:]
    assert done.returncode == 0, f"{label}: the CUDA tests failed under the harness:\n{output}"
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None, output
    skips = [s.get("message", "") for s in suite.iter("skipped")]
    unexpected = [m for m in skips if not any(reason in m for reason in EXPECTED_SKIPS)]
    assert not unexpected, f"{label}: skipped for reasons the harness should cover: {unexpected}"
    found = json.loads(stats.read_text())
    found["tests"] = int(suite.get("tests", 0))
    found["passed"] = found["tests"] - len(skips)
    found["skipped"] = len(skips)
    found["output"] = output
    return found


def _launched(found: dict[str, Any]) -> int:
    return sum(len(names) for names in found["executed"].values())


def test_cuda_suite_passes_on_the_cpu(toolchain: None, tmp_path: Path) -> None:
    found = _session(tmp_path, SUITE, 1, "one-device")
    assert found["passed"] > 5000, found["output"]
    assert not found["unplanned"], (
        f"launchers asked for instances backends.cuda._tables does not list: {found['unplanned']}"
    )
    ran = found["executed"]
    # Most instances the tables list are reached by the op database's dtypes and layouts
    # (the rest are combinations no sample takes: scalar-first or strided variants of some
    # dtypes, 8-bit inputs of reductions that widen them first).
    assert _launched(found) >= 800, {s: len(n) for s, n in ran.items()}
    for source in ("elementwise.cu", "reduce.cu", "scatter.cu", "search.cu"):
        assert ran.get(source), f"no kernel of {source} ran"
    print(
        f"\ncudasim: {found['passed']} CUDA tests passed ({found['skipped']} skipped), "
        f"{_launched(found)} kernel instances launched "
        + ", ".join(f"{s}: {len(n)}/{found['instances'][s]}" for s, n in ran.items())
    )


def test_cuda_tests_with_two_fake_devices(toolchain: None, tmp_path: Path) -> None:
    found = _session(tmp_path, ["tests/backends/test_cuda.py"], 2, "two-devices")
    assert found["passed"] >= found["tests"] - 3, found["output"]

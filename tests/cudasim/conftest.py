"""Fixtures of the cudasim tests: the harness's build prerequisites, or a skip saying why."""

from __future__ import annotations

import shutil

import pytest

from . import _build


@pytest.fixture(scope="session")
def toolchain() -> None:
    """Skip (with the reason) where the host compiler or the CUDA headers are missing."""
    if _build.compiler() is None:
        pytest.skip("g++ not found: install g++ or clang++ (or set $CXX) to run kernels on the CPU")
    if shutil.which("nm") is None:
        pytest.skip("nm (binutils) not found: the harness lists __shared__ variables with it")
    if _build.cuda_include() is None:
        pytest.skip(
            "no CUDA toolkit headers (cuda_fp16.h, cuda_bf16.h) under $CUDA_PATH, $CUDA_HOME "
            "or /usr/local/cuda*: install the toolkit to run kernels on the CPU"
        )

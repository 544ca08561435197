"""The CUDA backend's import surface: usable without CuPy or a GPU; GPU tests skip visibly."""

from __future__ import annotations

import pytest

import backends.cuda as cuda
import tensor as tt

needs_gpu = pytest.mark.skipif(
    not cuda.is_available(), reason=f"no CUDA device: {cuda.unavailable_reason()}"
)


def test_probe_answers_without_raising() -> None:
    assert isinstance(cuda.is_available(), bool)
    assert cuda.device_count() >= 0
    cuda.synchronize()  # a no-op without a GPU
    cuda.register()


@pytest.mark.skipif(cuda.is_available(), reason="a CUDA device is present")
def test_reason_without_gpu() -> None:
    assert cuda.unavailable_reason()
    assert tt.cuda.is_available() is False


@pytest.mark.cuda
@needs_gpu
def test_cuda_device_count_matches_tt() -> None:
    assert tt.cuda.device_count() == cuda.device_count() > 0

"""Shared fixtures for the tensor tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import tensor as tt

from .standin_cuda import standin_cuda


@pytest.fixture
def cuda_device(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A CUDA device for the test: the real one on a GPU machine (``"cuda"``), otherwise
    the stand-in of ``standin_cuda.py`` (``"stand-in"``).  Either way tensors get there
    with ``.to("cuda")`` and ``tt.autocast("cuda")`` is enabled."""
    if tt.cuda.is_available():
        yield "cuda"
        return
    with standin_cuda(monkeypatch):
        yield "stand-in"

"""The docstring examples of the tensor and backends packages run and print what they say."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import backends
import tensor

MODULES = sorted(
    m.name
    for package in (tensor, backends)
    for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
)


@pytest.mark.parametrize("name", ["tensor", "backends", *MODULES])
def test_docstring_examples(name: str) -> None:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as e:
        # backends.cuda's kernel modules import CuPy; they load only once a GPU was found.
        if e.name != "cupy" or not name.startswith("backends.cuda."):
            raise
        pytest.skip(f"{name} needs CuPy (not installed here)")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"

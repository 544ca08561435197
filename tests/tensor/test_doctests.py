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
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"

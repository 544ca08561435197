"""The docstring examples of the dispatch package run and print what they say."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import dispatch

MODULES = sorted(
    m.name
    for m in pkgutil.iter_modules(dispatch.__path__, "dispatch.")
    if m.name != "dispatch.__main__"
)


@pytest.mark.parametrize("name", ["dispatch", *MODULES])
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"

"""Shared fixtures for the dispatch tests: tensor stand-ins and scoped registrations.

Every test that registers gets a private namespace (unique per process and test)
and a Library that is destroyed after the test, also when the test fails, so
nothing leaks between tests and ``pytest -n auto`` is safe.  Backend fallbacks
are global: tests that register one use ``fallback_lib``, destroyed the same way.
"""

from __future__ import annotations

import itertools
import os
import uuid
from collections.abc import Iterator

import pytest

from dispatch import DispatchKey, DispatchKeySet, Library

__all__ = [
    "CPU_BITS",
    "CUDA_BITS",
    "META_BITS",
    "FakeTensor",
    "Registration",
    "table_row",
]

# The key sets PyTorch 2.13 gives its tensors (SEMANTICS.md §2).
CPU_BITS = DispatchKeySet(
    [DispatchKey.CPU, DispatchKey.ADInplaceOrView, DispatchKey.AutogradCPU, DispatchKey.AutocastCPU]
).bits
META_BITS = DispatchKeySet(
    [DispatchKey.Meta, DispatchKey.ADInplaceOrView, DispatchKey.AutogradMeta]
).bits
CUDA_BITS = DispatchKeySet(
    [
        DispatchKey.CUDA,
        DispatchKey.ADInplaceOrView,
        DispatchKey.AutogradCUDA,
        DispatchKey.AutocastCUDA,
    ]
).bits


class FakeTensor:
    """The smallest thing the dispatcher treats as a tensor: an int ``_dispatch_bits``."""

    def __init__(self, bits: int, name: str = "") -> None:
        self._dispatch_bits = bits
        self.name = name

    def __repr__(self) -> str:
        return f"FakeTensor({self.name or DispatchKeySet.from_bits(self._dispatch_bits)!r})"


_counter = itertools.count()
_RUN = uuid.uuid4().hex[:8]


def unique_namespace(prefix: str = "adt") -> str:
    """A namespace no other test (in this process or another xdist worker) uses."""
    return f"{prefix}_{_RUN}_{os.getpid()}_{next(_counter)}"


class Registration:
    """A fresh namespace and its DEF library; ``extra()`` makes more libraries in it."""

    def __init__(self, ns: str, lib: Library) -> None:
        self.ns = ns
        self.lib = lib
        self._extra: list[Library] = []

    def extra(self, kind: str, dispatch_key: str = "") -> Library:
        """Another Library for this namespace, destroyed with the fixture."""
        lib = Library(self.ns, kind, dispatch_key)
        self._extra.append(lib)
        return lib

    def track(self, lib: Library) -> Library:
        """Destroy ``lib`` with the fixture (for libraries made elsewhere)."""
        self._extra.append(lib)
        return lib

    def destroy(self) -> None:
        for lib in reversed(self._extra):
            lib.destroy()
        self.lib.destroy()


@pytest.fixture
def ns() -> str:
    """A fresh namespace name with nothing registered in it (make your own Library)."""
    return unique_namespace()


@pytest.fixture
def reg() -> Iterator[Registration]:
    """A fresh namespace with a live DEF library; everything is destroyed after the test."""
    name = unique_namespace()
    registration = Registration(name, Library(name, "DEF"))
    try:
        yield registration
    finally:
        registration.destroy()


@pytest.fixture
def lib(reg: Registration) -> Library:
    """The DEF library of ``reg`` (same namespace: ``lib.ns``)."""
    return reg.lib


@pytest.fixture
def fallback_lib() -> Iterator[Library]:
    """A ``Library("_", "IMPL")`` for backend fallbacks, destroyed after the test."""
    library = Library("_", "IMPL")
    try:
        yield library
    finally:
        library.destroy()


@pytest.fixture
def cpu() -> FakeTensor:
    return FakeTensor(CPU_BITS, "cpu")


@pytest.fixture
def meta() -> FakeTensor:
    return FakeTensor(META_BITS, "meta")


@pytest.fixture
def cuda() -> FakeTensor:
    return FakeTensor(CUDA_BITS, "cuda")


def table_row(op: object, key: DispatchKey | str) -> tuple[str, str]:
    """(kernel name, source) of ``key``'s line in ``dump_table(op)``."""
    from dispatch import dump_table

    name = DispatchKey.parse(key).name
    for line in dump_table(op).splitlines():  # type: ignore[arg-type]
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[0] == name and not line.lstrip().startswith("registered"):
            return parts[1], parts[2].strip()
    raise AssertionError(f"no line for {name} in dump_table({op!r})")

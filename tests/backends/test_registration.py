"""Every operator of the table has a CPU and a Meta kernel, named after its backend module."""

from __future__ import annotations

import pytest

import tensor as tt
from dispatch import dump_table, parse_schema


def _qualnames() -> list[str]:
    out = []
    for op in tt.OP_TABLE:
        for text in op.schemas:
            out.append(f"core::{parse_schema(text).qualified_name}")
    return out


def _entry(table: str, key: str) -> str:
    for line in table.splitlines():
        parts = line.split()
        if parts and parts[0] == key:
            return line
    raise AssertionError(f"no {key} line in\n{table}")


@pytest.mark.parametrize("qualname", _qualnames())
def test_cpu_and_meta_kernels(qualname: str) -> None:
    table = dump_table(qualname)
    cpu, meta = _entry(table, "CPU"), _entry(table, "Meta")
    assert "<missing>" not in cpu and "<missing>" not in meta, table
    composite = "Composite" in cpu
    assert composite or "backends.cpu." in cpu, cpu
    assert composite or "backends.meta." in meta, meta


def test_kernel_names_follow_the_module_and_overload() -> None:
    table = dump_table("core::add.Tensor")
    assert "backends.cpu.elementwise.add_tensor" in table
    assert "backends.meta.elementwise" in table
    assert "backends.cpu.reduction.sum" in dump_table("core::sum")


def test_factories_select_the_backend() -> None:
    table = dump_table("core::zeros")
    assert "zeros_backend_select" in _entry(table, "BackendSelect")

"""Table resolution matches PyTorch 2.13: recorded outcomes, and live when torch is installed.

See ``table_cases.py`` for the cases: every combination of up to three registrations
among CPU, CUDA, Meta, AutogradCPU, Autograd, the three Composite keys, fallthroughs
and a backend fallback, plus 80 larger random ones; nine probes each.
"""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest

import dispatch
from dispatch import DispatchKey, DispatchKeySet, Library

from . import table_cases

CPU_BITS = DispatchKeySet(
    [DispatchKey.CPU, DispatchKey.ADInplaceOrView, DispatchKey.AutogradCPU, DispatchKey.AutocastCPU]
).bits
META_BITS = DispatchKeySet(
    [DispatchKey.Meta, DispatchKey.ADInplaceOrView, DispatchKey.AutogradMeta]
).bits
AFTER_AUTOGRAD = DispatchKeySet.full_after(DispatchKey.AutogradOther)


class FakeTensor:
    __slots__ = ("__dict__", "_dispatch_bits")  # a slot, as Tensor has: infer_schema sees it

    def __init__(self, bits: int) -> None:
        self._dispatch_bits = bits


_counter = itertools.count()


class OurRunner(table_cases.Runner):
    cpu = FakeTensor(CPU_BITS)
    meta = FakeTensor(META_BITS)

    @contextlib.contextmanager
    def library(self, case: list[str], log: list[str]) -> Iterator[Any]:
        ns = f"adcase{next(_counter)}"
        libs = [Library(ns, "DEF")]
        libs[0].define("f(Tensor x) -> Tensor")
        op = getattr(dispatch.ops, ns).f.default

        def below(ks: DispatchKeySet, x: Any) -> Any:
            return op.redispatch(ks & AFTER_AUTOGRAD, x)

        try:
            for _atom, key, fn, with_keyset, is_fallback in table_cases._kernels(case, log, below):
                if is_fallback:
                    fb = Library("_", "IMPL")
                    libs.append(fb)
                    fb.fallback(fn, key)
                    continue
                libs[0].impl("f", fn or dispatch.fallthrough_kernel, key, with_keyset=with_keyset)
            yield op
        finally:
            for lib in reversed(libs):
                lib.destroy()

    def probe(self, op: Any, probe: str) -> None:
        if probe == "call_cpu":
            op(self.cpu)
        elif probe == "call_meta":
            op(self.meta)
        elif probe == "call_cpu_no_autograd":
            with dispatch.exclude_keys(DispatchKey.AutogradCPU):
                op(self.cpu)
        elif probe == "redispatch_empty":
            op.redispatch(DispatchKeySet(), self.cpu)
        else:
            op.redispatch(DispatchKeySet(probe.removeprefix("redispatch_")), self.cpu)


RECORDED: dict[str, dict[str, Any]] = json.loads(table_cases.DATA.read_text())
CASES = table_cases.generate_cases()


def test_recorded_cases_cover_every_generated_case() -> None:
    assert {table_cases.case_id(c) for c in CASES} == set(RECORDED)


@pytest.mark.parametrize("case", CASES, ids=table_cases.case_id)
def test_table_matches_recorded_torch(case: list[str]) -> None:
    assert OurRunner().run(case) == RECORDED[table_cases.case_id(case)]


@pytest.mark.torch
def test_table_matches_live_torch() -> None:
    pytest.importorskip("torch", reason="PyTorch not installed: live differential check skipped")
    from . import torch_runner

    theirs, ours = torch_runner.TorchRunner(), OurRunner()
    mismatches = [
        (table_cases.case_id(c), a, b) for c in CASES if (a := ours.run(c)) != (b := theirs.run(c))
    ]
    assert not mismatches, mismatches[:5]

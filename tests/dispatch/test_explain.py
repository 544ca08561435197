"""Golden-text tests for dump_table and explain, and the command line / trace front ends."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

from dispatch import (
    DispatchKey,
    DispatchKeySet,
    Library,
    dump_table,
    exclude_keys,
    explain,
    fallthrough_kernel,
    ops,
)
from dispatch._operator import FALLBACKS

from .test_tables import CPU_BITS, META_BITS, FakeTensor

HERE = os.path.dirname(os.path.abspath(__file__))


def normalise(text: str) -> str:
    """Locations of this file's kernels carry line numbers: fold them for the goldens."""
    return re.sub(r"[^\s(]*test_explain\.py:\d+", "test_explain.py:N", text)


def f_cpu(x: Any, *, n: int = 1) -> Any:
    return x


def f_meta(x: Any, *, n: int = 1) -> Any:
    return x


def f_autograd(ks: DispatchKeySet, x: Any, *, n: int = 1) -> Any:
    below = ks & DispatchKeySet.full_after("AutogradOther")
    return ops.golden.f.default.redispatch(below, x, n=n)


@pytest.fixture
def golden() -> Iterator[Library]:
    with Library("golden", "DEF") as lib:
        lib.define("f(Tensor x, *, int n=1) -> Tensor", tags=("pointwise",))
        lib.impl("f", f_cpu, "CPU")
        lib.impl("f", f_autograd, "AutogradCPU", with_keyset=True)
        lib.impl("f", f_meta, "Meta")
        lib.impl("f", fallthrough_kernel, "CUDA")
        yield lib


K = "tests.dispatch.test_explain."


def installed_fallback() -> str:
    """The autograd fallback installed now: dispatch's own, or the one ``import tensor``
    puts in its place (xdist may run these tests in a worker that imported tensor)."""
    return FALLBACKS[DispatchKey.AutogradCPU][-1].name


FALLBACK = "{FALLBACK}"

GOLDEN_TABLE_TEMPLATE = f"""\
golden::f: golden::f(Tensor x, *, int n=1) -> Tensor
  registered at AutogradCPU: {K}f_autograd (test_explain.py:N, active)
  registered at Meta: {K}f_meta (test_explain.py:N, active)
  registered at CUDA: fallthrough (test_explain.py:N, active)
  registered at CPU: {K}f_cpu (test_explain.py:N, active)
  key                   kernel                                          source
  PythonDispatcher      <missing>                                       missing
  PreDispatch           <missing>                                       missing
  PythonTLSSnapshot     dispatch._modes._snapshot_fallback              backend fallback
  AutocastPrivateUse1   fallthrough                                     backend fallback
  AutocastCUDA          fallthrough                                     backend fallback
  AutocastCPU           fallthrough                                     backend fallback
  AutogradMeta          {FALLBACK}backend fallback, grad-only
  AutogradPrivateUse3   {FALLBACK}backend fallback, grad-only
  AutogradPrivateUse2   {FALLBACK}backend fallback, grad-only
  AutogradPrivateUse1   {FALLBACK}backend fallback, grad-only
  AutogradCUDA          {FALLBACK}backend fallback, grad-only
  AutogradCPU           {K + "f_autograd":<48}direct
  AutogradOther         {FALLBACK}backend fallback, grad-only
  ADInplaceOrView       fallthrough                                     backend fallback
  Python                dispatch._modes._python_fallback                backend fallback
  BackendSelect         fallthrough                                     backend fallback
  Meta                  {K + "f_meta":<48}direct
  PrivateUse3           <missing>                                       missing
  PrivateUse2           <missing>                                       missing
  PrivateUse1           <missing>                                       missing
  CUDA                  fallthrough                                     direct
  CPU                   {K + "f_cpu":<48}direct
  Undefined             <missing>                                       missing"""


def test_dump_table_golden(golden: Library) -> None:
    golden_table = GOLDEN_TABLE_TEMPLATE.replace("{FALLBACK}", f"{installed_fallback():<48}")
    assert normalise(dump_table("golden::f")) == golden_table
    # The same table from the overload, the packet and the name with ".default".
    assert dump_table(ops.golden.f.default) == dump_table("golden::f")
    assert dump_table(ops.golden.f) == dump_table("golden::f.default")


def test_dump_table_shows_shadowed_registrations() -> None:
    with Library("golden2", "DEF") as lib, Library("golden2", "IMPL") as override:
        lib.define("g(Tensor x) -> Tensor")
        lib.impl("g", f_cpu, "CPU")
        override.impl("g", f_meta, "CPU", allow_override=True)
        text = normalise(dump_table("golden2::g"))
        assert f"registered at CPU: {K}f_meta (test_explain.py:N, active)" in text
        assert f"registered at CPU: {K}f_cpu (test_explain.py:N, shadowed)" in text
        override.destroy()
        assert "shadowed" not in dump_table("golden2::g")


def test_dump_table_unknown_operator() -> None:
    with pytest.raises(KeyError, match="no operator named 'golden::nope' is defined"):
        dump_table("golden::nope")


GOLDEN_EXPLAIN = f"""\
golden::f: golden::f(Tensor x, *, int n=1) -> Tensor
  tensor keys:   DispatchKeySet(AutocastCPU, AutogradCPU, ADInplaceOrView, CPU)
  TLS included:  DispatchKeySet(ADInplaceOrView, BackendSelect)
  TLS excluded:  DispatchKeySet(AutocastPrivateUse1, AutocastCUDA, AutocastCPU)
  call key set:  DispatchKeySet(AutogradCPU, CPU)
  skipped:       AutocastCPU (excluded by TLS), ADInplaceOrView (fallthrough, backend fallback), BackendSelect (fallthrough, backend fallback)
  layers:
    1. AutogradCPU          {K}f_autograd [direct] (test_explain.py:N)
    2. CPU                  {K}f_cpu [direct] (test_explain.py:N)"""

GOLDEN_EXPLAIN_EXCLUDED = """\
  call key set:  DispatchKeySet(CPU)
  skipped:       AutocastCPU (excluded by TLS), AutogradCPU (excluded by TLS), ADInplaceOrView (fallthrough, backend fallback), BackendSelect (fallthrough, backend fallback)
  layers:
    1. CPU                  tests.dispatch.test_explain.f_cpu [direct] (test_explain.py:N)"""

GOLDEN_EXPLAIN_META_TEMPLATE = f"""\
  tensor keys:   DispatchKeySet(AutogradMeta, ADInplaceOrView, Meta)
  TLS included:  DispatchKeySet(ADInplaceOrView, BackendSelect)
  TLS excluded:  DispatchKeySet(AutocastPrivateUse1, AutocastCUDA, AutocastCPU)
  call key set:  DispatchKeySet(Meta)
  skipped:       AutogradMeta (grad-only {FALLBACK}, backend fallback), ADInplaceOrView (fallthrough, backend fallback), BackendSelect (fallthrough, backend fallback)
  layers:
    1. Meta                 {K}f_meta [direct] (test_explain.py:N)"""


def test_explain_golden(golden: Library) -> None:
    x = FakeTensor(CPU_BITS)
    assert normalise(explain(ops.golden.f, x, n=2)) == GOLDEN_EXPLAIN
    with exclude_keys("AutogradCPU"):
        text = normalise(explain(ops.golden.f.default, x))
    assert text.endswith(GOLDEN_EXPLAIN_EXCLUDED)
    meta = GOLDEN_EXPLAIN_META_TEMPLATE.replace("{FALLBACK}", installed_fallback())
    assert normalise(explain("golden::f", FakeTensor(META_BITS))).endswith(meta)


def test_explain_runs_no_kernel_and_reports_missing_and_composites() -> None:
    ran: list[str] = []
    with Library("golden3", "DEF") as lib:
        lib.define("h(Tensor x) -> Tensor")
        lib.define("c(Tensor x) -> Tensor")
        lib.impl("h", lambda x: ran.append("h"), "Meta")
        lib.impl("c", lambda x: ran.append("c"), "CompositeImplicitAutograd")
        x = FakeTensor(CPU_BITS)
        assert explain(ops.golden3.h, x).endswith(
            "1. CPU                  <missing>: the call raises NotImplementedError"
        )
        text = explain(ops.golden3.c, x)
        assert re.search(r"1\. AutogradCPU +\S*<lambda> \[CompositeImplicitAutograd\]", text)
        assert text.endswith("(a composite kernel: the operators it calls dispatch anew)")
    assert ran == []


def test_explain_checks_the_call_against_the_schema(golden: Library) -> None:
    with pytest.raises(TypeError, match=r"argument 'x' \(position 1\) must be Tensor, not int"):
        explain(ops.golden.f, 3)


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=os.path.dirname(os.path.dirname(HERE)),
        timeout=60,
    )


TRACE_PROGRAM = """
    from dispatch import DispatchKey, DispatchKeySet, Library, ops
    class T:
        _dispatch_bits = DispatchKeySet([DispatchKey.CPU, DispatchKey.AutogradCPU]).bits
    lib = Library("traced", "DEF")
    lib.define("f(Tensor x) -> Tensor")
    def autograd(ks, x):
        return ops.traced.f.default.redispatch(ks & DispatchKeySet.full_after("AutogradOther"), x)
    lib.impl("f", autograd, "AutogradCPU", with_keyset=True)
    lib.impl("f", lambda x: 42, "CPU")
    print(ops.traced.f(T()))
"""


def test_dispatch_trace_logs_every_hop() -> None:
    result = _run(TRACE_PROGRAM, DISPATCH_TRACE="1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "42"
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2, result.stderr
    assert lines[0].startswith(
        "[dispatch] call       traced::f keys=DispatchKeySet(AutogradCPU, CPU)"
    )
    assert (
        lines[0].endswith("-> AutogradCPU: __main__.autograd [direct]")
        or "autograd [direct]" in lines[0]
    )
    assert "redispatch traced::f keys=DispatchKeySet(CPU) -> CPU: <lambda> [direct]" in lines[1]


def test_dispatch_trace_off_prints_nothing() -> None:
    result = _run(TRACE_PROGRAM, DISPATCH_TRACE="")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


def test_command_line_prints_tables() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "dispatch", "--import", "tests.dispatch.cli_ops", "cli::f"],
        capture_output=True,
        text=True,
        cwd=os.path.dirname(os.path.dirname(HERE)),
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("cli::f: cli::f(Tensor x) -> Tensor\n")
    assert "  CPU                   tests.dispatch.cli_ops.f_cpu" in result.stdout
    missing = subprocess.run(
        [sys.executable, "-m", "dispatch", "cli::nope"],
        capture_output=True,
        text=True,
        cwd=os.path.dirname(os.path.dirname(HERE)),
        timeout=60,
    )
    assert missing.returncode == 1
    assert "no operator named 'cli::nope' is defined" in missing.stderr

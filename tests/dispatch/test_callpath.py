"""``dispatch._callpath``: every entry is generated from its template and shows its source.

Note [Specialised call paths]: ``inspect.getsource`` and tracebacks read the generated
code through ``linecache``; DISPATCH_TRACE adds a step to every entry.
"""

from __future__ import annotations

import inspect
import linecache
import os
import subprocess
import sys
import textwrap
import traceback
from typing import Any

import pytest

from dispatch import Library, _callpath, _operator, ops

from .conftest import FakeTensor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OWNERS = {
    cls.__name__: cls
    for cls in (
        _operator.OpOverload,
        _operator._OneTensor,
        _operator._TwoTensors,
        _operator._ThreeTensors,
        _operator._FirstTensorList,
    )
}


def _entry_id(entry: _callpath.Entry) -> str:
    return f"{entry.owner}.{entry.method}"


@pytest.mark.parametrize("entry", _callpath.ENTRIES, ids=_entry_id)
def test_every_entry_is_its_template_with_its_own_steps(entry: _callpath.Entry) -> None:
    fn = getattr(OWNERS[entry.owner], entry.method)
    source = inspect.getsource(fn)
    assert fn.__qualname__ == _entry_id(entry)
    assert fn.__module__ == "dispatch._operator"
    assert fn.__code__.co_filename == f"<dispatch call path {_entry_id(entry)}>"
    assert source == "".join(linecache.getlines(fn.__code__.co_filename))
    assert source.startswith(f"def {entry.method}(self, ")
    assert entry.bits in source
    # The template's own lines (all but the placeholders) are the entry's, in order.
    steps = [line for line in entry.template.splitlines()[1:] if "{" not in line]
    lines = iter(source.splitlines())
    for step in steps:
        assert step in lines, step  # consumes the entry's lines up to the step


def test_getsource_of_an_operators_entry(lib: Library) -> None:
    lib.define("f(Tensor a, Tensor b) -> Tensor")
    op = getattr(ops, lib.ns).f.default
    source = inspect.getsource(op.call2)
    assert source.startswith("def call2(self, a, b, /):\n")
    assert "        return state.kernels[slot](a, b)\n" in source
    assert inspect.getdoc(op.call2) == (
        "``self(a, b)`` for two positional tensors and nothing else (``a + b``)."
    )


def test_a_traceback_through_an_entry_shows_its_lines(lib: Library, cpu: FakeTensor) -> None:
    lib.define("f(Tensor a, Tensor b) -> Tensor")

    def kernel(a: Any, b: Any) -> Any:
        raise ValueError("kernel failed")

    lib.impl("f", kernel, "CPU")
    with pytest.raises(ValueError) as info:
        getattr(ops, lib.ns).f.default.call2(cpu, cpu)
    frames = traceback.extract_tb(info.value.__traceback__)
    lines = [f.line for f in frames if f.filename == "<dispatch call path _TwoTensors.call2>"]
    assert lines == ["return state.kernels[slot](a, b)"]
    assert "return state.kernels[slot](a, b)" in "".join(traceback.format_exception(info.value))


TRACE_PROGRAM = """
    from dispatch import DispatchKey, DispatchKeySet, Library, ops
    class T:
        _dispatch_bits = DispatchKeySet(DispatchKey.CPU).bits
    lib = Library("traced_entries", "DEF")
    lib.define("one(Tensor x) -> Tensor")
    lib.define("two(Tensor x, Tensor y) -> Tensor")
    lib.define("cat(Tensor[] xs) -> Tensor")
    lib.impl("one", lambda x: 1, "CPU")
    lib.impl("two", lambda x, y: 2, "CPU")
    lib.impl("cat", lambda xs: 3, "CPU")
    t, f = T(), ops.traced_entries
    cpu = DispatchKeySet(DispatchKey.CPU).bits
    print(f.one.default.call1(t), f.two.default.call2(t, t), f.cat.default.call1([t, t]),
          f.one.default.below(cpu)(t))
"""


def test_dispatch_trace_logs_every_generated_entry() -> None:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(TRACE_PROGRAM)],
        capture_output=True,
        text=True,
        env={**os.environ, "DISPATCH_TRACE": "1"},
        cwd=ROOT,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1", "2", "3", "1"]
    hops = [line.split("keys=")[0].split() for line in result.stderr.splitlines()]
    assert hops == [
        ["[dispatch]", "call", "traced_entries::one"],
        ["[dispatch]", "call", "traced_entries::two"],
        ["[dispatch]", "call", "traced_entries::cat"],
        ["[dispatch]", "redispatch", "traced_entries::one"],
    ], result.stderr
    assert all(line.endswith("-> CPU: <lambda> [direct]") for line in result.stderr.splitlines())

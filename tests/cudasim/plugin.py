"""pytest plugin: the CUDA tests on the CPU, with the fake CuPy and our kernels as host code.

Use: ``python -m pytest -p tests.cudasim.plugin tests/ops/test_opdb_cuda.py ...`` from the
repository root (``tests/cudasim/test_cuda_suite.py`` does this in a subprocess).

``-p`` plugins are imported before conftest files and test modules, so putting
``tests/cudasim/fake`` first on ``sys.path`` here makes it the ``cupy`` every later
import finds (``PYTHONPATH`` too, for the session's own subprocesses).  At configure
time every ``.cu`` source of ``backends/cuda`` is planned with all its instances
(``backends.cuda._tables.instances(tensor.op_info)``), so each is one cached build.  At the end the
plugin prints what ran (libraries, build times, kernel instances launched) and, when
``ARRAYDISPATCH_CUDASIM_STATS`` names a file, writes it there as JSON.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

FAKE = Path(__file__).resolve().parent / "fake"

if "cupy" in sys.modules and not str(getattr(sys.modules["cupy"], "__file__", "")).startswith(
    str(FAKE)
):
    raise pytest.UsageError("tests.cudasim.plugin: a real CuPy was imported before the plugin")
sys.path.insert(0, str(FAKE))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(FAKE), os.environ.get("PYTHONPATH")]))

# Compiled kernels go to a folder of the session's own (Note [Kernel disk cache] in
# backends/cuda/_compile.py), shared with its subprocesses, never the user's cache.
_KERNELS = os.environ.get("ARRAYDISPATCH_CUDASIM_KERNELS")
if _KERNELS is None:
    _KERNELS = os.environ["ARRAYDISPATCH_CUDASIM_KERNELS"] = tempfile.mkdtemp(
        prefix="arraydispatch-cudasim-kernels-"
    )
    atexit.register(shutil.rmtree, _KERNELS, True)
os.environ["ARRAYDISPATCH_CACHE_DIR"] = _KERNELS

_START = time.perf_counter()


def pytest_configure(config: pytest.Config) -> None:
    import tensor
    from backends.cuda import _compile, _tables

    from . import _modules

    for source, names in _tables.instances(tensor.op_info).items():
        _modules.plan(_compile.source_text(source), names)


def stats() -> dict[str, Any]:
    """What the harness did in this process: builds, launches per instance, unplanned ones."""
    import tensor
    from backends.cuda import _compile, _tables

    from . import _modules

    sources = {_compile.source_text(s): s for s in _tables.instances(tensor.op_info)}
    executed: dict[str, dict[str, int]] = {}
    for lib in _modules.libraries():
        source = sources.get(Path(lib.built.path).parent.joinpath("source.cu").read_text(), "?")
        for name, n in lib.counts().items():
            if n:
                executed.setdefault(source, {})[name] = n
    return {
        "instances": {s: len(names) for s, names in _tables.instances(tensor.op_info).items()},
        "executed": executed,
        "unplanned": _modules.unplanned(),
        "builds": [
            {
                "path": str(b.path),
                "instances": len(b.instances),
                "seconds": b.seconds,
                "cached": b.cached,
            }  # fmt: skip
            for b in _modules.builds()
        ],
        "seconds": time.perf_counter() - _START,
    }


def pytest_terminal_summary(terminalreporter: Any) -> None:
    found = stats()
    out = os.environ.get("ARRAYDISPATCH_CUDASIM_STATS")
    if out:
        Path(out).write_text(json.dumps(found, indent=1))
    write = terminalreporter.write_line
    terminalreporter.section("cudasim: our CUDA kernels run on the CPU")
    for b in found["builds"]:
        how = "cached" if b["cached"] else f"built in {b['seconds']:.1f} s"
        write(f"library of {b['instances']} instances: {how} ({b['path']})")
    for source, total in found["instances"].items():
        ran = found["executed"].get(source, {})
        write(f"{source}: {len(ran)} of {total} instances launched, {sum(ran.values())} launches")
    if found["unplanned"]:
        write(f"instances not in backends.cuda._tables: {found['unplanned']}")

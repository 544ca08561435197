"""``import dispatch`` pulls in nothing but the standard library (DESIGN.md, STYLE.md §1)."""

from __future__ import annotations

import ast
import json
import pathlib
import subprocess
import sys

import dispatch


def test_import_dispatch_loads_no_array_library_and_no_sibling_package() -> None:
    code = "import sys, json, dispatch; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = set(json.loads(out.stdout))
    assert "dispatch" in loaded
    for forbidden in ("numpy", "cupy", "tensor", "backends", "torch", "array_api_compat"):
        assert not any(m == forbidden or m.startswith(forbidden + ".") for m in loaded), forbidden


def test_dispatch_sources_import_only_stdlib_and_themselves() -> None:
    allowed = set(sys.stdlib_module_names) | {"dispatch", "__future__"}
    for path in pathlib.Path(dispatch.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in allowed, f"{path.name} imports {name}"

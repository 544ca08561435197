"""Imports run one way, ``tensor`` → ``backends`` → ``dispatch`` (Note [One-way imports]
in backends/common/frontend.py): no backend module imports ``tensor``, in any form, and
importing a backend loads no ``tensor`` module; ``dispatch`` imports neither."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _loaded_after(module: str) -> set[str]:
    """The top-level packages in ``sys.modules`` after ``import module`` in a new process."""
    code = (
        f"import sys, {module}\nprint(' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return set(result.stdout.split())


@pytest.mark.parametrize(
    "module",
    [
        "backends",
        "backends.common",
        "backends.common.shape_rules",
        "backends.common.elementwise",
        "backends.cpu",
        "backends.meta",
        "backends.cuda",
        "backends.composite",
    ],
)
def test_importing_a_backend_loads_no_tensor_module(module: str) -> None:
    assert "tensor" not in _loaded_after(module)


def test_the_shape_rules_import_nothing_heavy() -> None:
    """``backends.common.shape_rules`` is pure functions: no front end, no array library."""
    loaded = _loaded_after("backends.common.shape_rules")
    assert not loaded & {"tensor", "dispatch", "numpy", "cupy", "array_api_compat"}, loaded


def _imported_modules(source: str, package: str) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in a module of ``package``: ``import
    x``, ``from x import y`` (relative ones resolved), and ``importlib.import_module("x")``
    / ``__import__("x")`` with a constant name, anywhere (functions included)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0]
                name = f"{base}.{node.module}" if node.module else base
            else:
                name = node.module or ""
            found.append((node.lineno, name))
        elif isinstance(node, ast.Call) and node.args:
            fn, first = node.func, node.args[0]
            called = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if called in ("import_module", "__import__") and isinstance(first, ast.Constant):
                found.append((node.lineno, str(first.value)))
    return found


def _imports_of(package: str, forbidden: tuple[str, ...]) -> list[str]:
    bad = []
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        for line, name in _imported_modules(path.read_text(), ".".join(parts[:-1])):
            if name.split(".")[0] in forbidden:
                bad.append(f"{path.relative_to(ROOT)}:{line}: imports {name}")
    return bad


def test_no_backend_module_imports_tensor() -> None:
    assert not _imports_of("backends", ("tensor",))


def test_dispatch_imports_neither_tensor_nor_backends() -> None:
    assert not _imports_of("dispatch", ("tensor", "backends"))


def test_the_scan_sees_every_form_of_import() -> None:
    """Module-level, relative, function-local and importlib imports are all found."""
    source = (
        "import tensor.layout\n"
        "from ..common import shapes\n"
        "from . import creation\n"
        "def f():\n"
        "    from tensor import Tensor\n"
        "    import importlib\n"
        "    return importlib.import_module('tensor._convert'), __import__('tensor')\n"
    )
    names = sorted(name for _, name in _imported_modules(source, "backends.cpu"))
    assert names == [
        "backends.common",
        "backends.cpu",
        "importlib",
        "tensor",
        "tensor",
        "tensor._convert",
        "tensor.layout",
    ]


def test_the_readme_shows_the_import_graph_of_the_code() -> None:
    """README's table is ``python ci/import_graph.py``'s output, and that has no edge
    against the direction (the script exits 1 on one)."""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(root / "ci" / "import_graph.py")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() in (root / "README.md").read_text(), (
        "README's import graph is stale: paste `python ci/import_graph.py` into it"
    )

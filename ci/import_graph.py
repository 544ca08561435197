"""The import graph between the top-level parts of the project, read from the code.

    python ci/import_graph.py          # a Markdown table and the edges, for the README

Parts are the packages and, inside ``backends``, each backend: ``dispatch``,
``backends.common``, ``backends.cpu``, ``backends.meta``, ``backends.cuda``,
``backends.composite`` (the device-independent kernels), ``tensor``.  An edge A -> B means some module of A imports a module of B (at the top
or inside a function: lazy imports count).  The README's graph is this script's
output; ``tests/backends/test_import_direction.py`` keeps the direction one-way.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Bottom to top: a part may import the parts before it only.
PARTS = (
    "dispatch",
    "backends.common",
    "backends.cpu",
    "backends.meta",
    "backends.cuda",
    "backends.composite",
    "backends",  # the package's own __init__
    "tensor",
)


def part_of(module: str) -> str | None:
    """The part a dotted module name belongs to (None outside the project)."""
    for part in sorted(PARTS, key=len, reverse=True):
        if module == part or module.startswith(part + "."):
            return part
    return None


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    names: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names.add(target)
            names.update(f"{target}.{a.name}" for a in node.names)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.add(node.args[0].value)
    return names


def edges() -> dict[tuple[str, str], list[str]]:
    """(from part, to part) -> the modules of the first part that import the second."""
    found: dict[tuple[str, str], list[str]] = {}
    for top in ("dispatch", "backends", "tensor"):
        for path in sorted((ROOT / top).rglob("*.py")):
            module = _module_name(path)
            source = part_of(module)
            if source is None:
                continue
            tree = ast.parse(path.read_text(), filename=str(path))
            for name in _imported(tree, module, path.name == "__init__.py"):
                target = part_of(name)
                if target is None or target == source:
                    continue
                found.setdefault((source, target), []).append(module)
    return found


def main() -> None:
    graph = edges()
    print("| from | imports |")
    print("|---|---|")
    for part in PARTS:
        targets = sorted({t for (s, t) in graph if s == part}, key=PARTS.index)
        print(f"| `{part}` | {', '.join(f'`{t}`' for t in targets) or '(the standard library)'} |")
    back = [(s, t) for (s, t) in graph if PARTS.index(t) > PARTS.index(s)]
    if back:
        print("\nEdges against the direction (a part importing one above it):", file=sys.stderr)
        for s, t in back:
            print(f"  {s} -> {t}: {', '.join(sorted(set(graph[s, t])))}", file=sys.stderr)
        raise SystemExit(1)


if __name__ == "__main__":
    main()

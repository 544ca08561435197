"""Note [Compiled code on disk] (dispatch/_codegen.py): generated sources compiled once and
kept next to the bytecode caches, read back by the next import."""

from __future__ import annotations

import importlib.util
import json
import marshal
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dispatch import _codegen

ROOT = Path(__file__).resolve().parents[2]

_SOURCE = "def _generated(x):\n    return x * 2 + 1\n"
_NAME = "<dispatch code cache test>"


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The module's cache state emptied and its file in ``tmp_path``; writes allowed."""
    path = tmp_path / "pycache" / "_generated_code.test.marshal"
    monkeypatch.setattr(_codegen, "cache_path", lambda: path)
    monkeypatch.setattr(_codegen, "_DISK", None)
    monkeypatch.setattr(_codegen, "_USED", {})
    monkeypatch.setattr(_codegen, "_STATS", {"hits": 0, "misses": 0})
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return path


def _run(code: Any) -> Any:
    env: dict[str, Any] = {}
    exec(code, env)  # noqa: S102
    return env["_generated"](20)


def _reset(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new process's state: nothing read, nothing asked for."""
    monkeypatch.setattr(_codegen, "_DISK", None)
    monkeypatch.setattr(_codegen, "_USED", {})
    monkeypatch.setattr(_codegen, "_STATS", {"hits": 0, "misses": 0})


def test_a_saved_source_is_read_back(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = _codegen.compile_source(_SOURCE, _NAME)
    assert _run(code) == 41 and _codegen._STATS["misses"] == 1
    assert _codegen.save() and fresh.read_bytes().startswith(importlib.util.MAGIC_NUMBER)
    assert not _codegen.save()  # nothing new compiled since
    _reset(monkeypatch)
    cached = _codegen.compile_source(_SOURCE, _NAME)
    assert _codegen._STATS == {"hits": 1, "misses": 0}
    assert cached.co_filename == _NAME and _run(cached) == 41
    # Another file name or text is another entry: compiled, never the cached one.
    other = _codegen.compile_source(_SOURCE.replace("+ 1", "+ 2"), _NAME)
    renamed = _codegen.compile_source(_SOURCE, "<another name>")
    assert _run(other) == 42 and renamed.co_filename == "<another name>"
    assert _codegen._STATS == {"hits": 1, "misses": 2}


def test_only_what_the_process_asked_for_is_kept(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Entries no import asks for any more (an edited generator's old texts) are dropped
    at the next write, so the file does not grow from version to version."""
    _codegen.compile_source(_SOURCE, _NAME)
    _codegen.save()
    _reset(monkeypatch)
    _codegen.compile_source(_SOURCE.replace("+ 1", "+ 3"), _NAME)
    assert _codegen.save()
    table = marshal.loads(fresh.read_bytes()[len(importlib.util.MAGIC_NUMBER) :])
    assert [source for _, source in table] == [_SOURCE.replace("+ 1", "+ 3")]


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not a cache at all",
        b"\0\0\0\0" + marshal.dumps({}),  # another Python's bytecode format
        importlib.util.MAGIC_NUMBER + b"\xff\x00garbage",
        importlib.util.MAGIC_NUMBER + marshal.dumps([1, 2, 3]),
        # An entry under a key its code was not compiled for.
        importlib.util.MAGIC_NUMBER
        + marshal.dumps(
            {(_NAME, _SOURCE): compile("def _generated(x):\n    return 0\n", "<x>", "exec")}
        ),
    ],
    ids=["empty", "text", "other-magic", "damaged", "not-a-dict", "wrong-key"],
)
def test_a_bad_file_is_compiled_over(
    fresh: Path, monkeypatch: pytest.MonkeyPatch, content: bytes
) -> None:
    fresh.parent.mkdir(parents=True)
    fresh.write_bytes(content)
    code = _codegen.compile_source(_SOURCE, _NAME)
    assert _run(code) == 41 and _codegen._STATS == {"hits": 0, "misses": 1}
    assert _codegen.save()
    _reset(monkeypatch)
    assert _run(_codegen.compile_source(_SOURCE, _NAME)) == 41
    assert _codegen._STATS == {"hits": 1, "misses": 0}


def test_nothing_is_written_without_bytecode_writes(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    _codegen.compile_source(_SOURCE, _NAME)
    assert not _codegen.save() and not fresh.exists()


def test_a_read_only_folder_is_skipped(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No temporary file can be made (a read-only install): nothing written, no error."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(_codegen.tempfile, "mkstemp", refuse)
    _codegen.compile_source(_SOURCE, _NAME)
    assert not _codegen.save() and not fresh.exists()


def test_a_failed_rename_leaves_no_temporary_file(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(_codegen.os, "replace", refuse)
    _codegen.compile_source(_SOURCE, _NAME)
    assert not _codegen.save()
    assert not fresh.exists() and not list(fresh.parent.iterdir())


def test_a_folder_that_cannot_be_made_is_skipped(
    fresh: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setattr(_codegen, "cache_path", lambda: blocker / "cache.marshal")
    _codegen.compile_source(_SOURCE, _NAME)
    assert not _codegen.save()


_CHILD = """
import json, tensor, dispatch._codegen as c
x = tensor.ones(3, requires_grad=True)
(tensor.sin(x) * x).sum().backward()
print(json.dumps({"stats": c._STATS, "asked": len(c._USED), "path": str(c.cache_path()),
                  "grad": x.grad.tolist()}))
"""


def _child(prefix: Path) -> dict[str, Any]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(prefix)
    out = subprocess.run(
        [sys.executable, "-c", _CHILD],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_the_second_import_compiles_nothing_it_generated(tmp_path: Path) -> None:
    """Two fresh processes over one (new) bytecode cache folder: the first compiles the
    generated code and writes it there (``save`` at the end of ``import tensor`` leaves
    its count of new entries at zero), the second reads every generated source of the
    import from it; both compute the same gradients."""
    first = _child(tmp_path)
    assert first["stats"]["hits"] == 0
    assert Path(first["path"]).is_file() and str(tmp_path) in first["path"]
    # The count of misses is what the calls after the import compiled (recording entries
    # made on first use, not saved): the same in both processes.
    imported = first["asked"] - first["stats"]["misses"]
    assert imported > 100  # the wrappers, recording kernels, call paths
    second = _child(tmp_path)
    assert second["stats"] == {"hits": imported, "misses": first["stats"]["misses"]}
    assert second["grad"] == first["grad"]

"""Note [Grad mode off somewhere] (dispatch/_tls.py): ``GRAD_OFF`` counts the threads
whose grad mode is off, and a call whose tensors require grad reads its own thread's
mode only while that count is not 0.  So every write of the mode must go through
``set_grad_mode``, and a thread with its mode off must be counted whatever the others do.
"""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import tensor as tt
from dispatch import _tls

ROOT = Path(__file__).resolve().parents[2]


def test_every_write_of_grad_mode_goes_through_set_grad_mode() -> None:
    """No source assigns ``grad_enabled`` but ``set_grad_mode`` itself."""
    writes = []
    for folder in ("dispatch", "tensor", "backends", "tests", "ci", "examples"):
        for path in (ROOT / folder).rglob("*.py"):
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                targets = []
                if isinstance(node, ast.Assign):
                    targets = node.targets
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                    targets = [node.target]
                for target in targets:
                    for t in ast.walk(target):
                        if isinstance(t, ast.Attribute) and t.attr == "grad_enabled":
                            writes.append(f"{path.relative_to(ROOT)}:{t.lineno}")
    assert writes == ["dispatch/_tls.py:" + str(n) for n in _set_grad_mode_lines()], writes


def _set_grad_mode_lines() -> list[int]:
    source = (ROOT / "dispatch" / "_tls.py").read_text()
    fn = next(n for n in ast.walk(ast.parse(source)) if getattr(n, "name", "") == "set_grad_mode")
    return sorted(
        t.lineno
        for n in ast.walk(fn)
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Attribute) and t.attr == "grad_enabled"
    )


def test_the_count_follows_the_guards() -> None:
    start = _tls.GRAD_OFF[0]
    x = tt.ones(2, requires_grad=True)
    with tt.no_grad():
        assert _tls.GRAD_OFF[0] == start + 1
        with tt.no_grad():  # already off: counted once
            assert _tls.GRAD_OFF[0] == start + 1
            with tt.enable_grad():
                assert _tls.GRAD_OFF[0] == start
                assert (x * 2).requires_grad
            assert not (x * 2).requires_grad
        with tt.inference_mode():
            assert _tls.GRAD_OFF[0] == start + 1
        tt.set_grad_enabled(True)
        assert _tls.GRAD_OFF[0] == start
        tt.set_grad_enabled(False)
    assert _tls.GRAD_OFF[0] == start
    (x * x).sum().backward()  # the engine turns it off and back on
    assert _tls.GRAD_OFF[0] == start and x.grad.tolist() == [2.0, 2.0]


def test_a_thread_with_grad_mode_off_records_nothing_while_others_record() -> None:
    """One thread inside no_grad, another recording: each call follows its own thread's
    mode, whichever thread changed the count last."""
    x = tt.ones(3, requires_grad=True)
    inside, release = threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def off() -> None:
        with tt.no_grad():
            inside.set()
            release.wait(5)
            seen["off"] = (x + x).requires_grad or tt.sin(x).requires_grad

    worker = threading.Thread(target=off)
    worker.start()
    assert inside.wait(5)
    assert _tls.GRAD_OFF[0] >= 1
    seen["on"] = (x + x).requires_grad and tt.sin(x).requires_grad  # this thread: on
    with tt.no_grad(), tt.enable_grad():
        seen["on again"] = (x + x).requires_grad
    release.set()
    worker.join()
    assert seen == {"off": False, "on": True, "on again": True}

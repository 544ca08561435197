"""The Array API conformance suite (array-api-tests, vendored) against ``tensor.array_api``.

One test per vendored test file, each a subprocess (``runner.run_file``), so
``pytest -n auto`` spreads them over the workers.  A file passes when nothing fails
outside the two lists (``skips.txt``: what we decide not to support; ``xfails.txt``:
known failures, each with its reason) and at least ``EXPECTED[file]`` tests pass: the
figures measured when the lists were last edited, so a regression shows as a failure
and an improvement as a prompt to raise the figure.  ``test_expected_pass_rate``
checks that the figures themselves add up to the issue's bar, 95% of collected tests.
"""

from __future__ import annotations

import importlib.util

import pytest

from .runner import FILES, run_file

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ndindex") is None,
    reason="array-api-tests needs ndindex (the test extra installs it)",
)

# file -> (collected, passed at least), measured with runner.py (--max-examples 20,
# derandomized, API 2025.12) on the CPU.
EXPECTED: dict[str, tuple[int, int]] = {}


@pytest.mark.parametrize("name", FILES)
def test_conformance_file(name: str) -> None:
    counts = run_file(name)
    assert counts.failed == 0, (
        f"{name}: {counts.failed} tests failed outside skips.txt/xfails.txt:\n  "
        + "\n  ".join(counts.failures)
        + "\n"
        + counts.output
    )
    collected, passed = EXPECTED[name]
    assert counts.collected == collected, (name, counts.collected, collected)
    assert counts.passed >= passed, (
        f"{name}: {counts.passed} passed, {passed} expected\n{counts.output}"
    )


def test_expected_pass_rate() -> None:
    assert sorted(EXPECTED) == FILES, "every vendored test file has its figures"
    collected = sum(c for c, _ in EXPECTED.values())
    passed = sum(p for _, p in EXPECTED.values())
    assert passed / collected >= 0.95, f"{passed}/{collected} = {passed / collected:.1%}"

"""Run the vendored array-api-tests against ``tensor.array_api``; count what happened.

Imports: the standard library only.  ``python -m tests.array_api.runner`` (from the
repository root) runs every file and prints the per-file table and the pass rate the
README quotes; ``test_conformance.py`` runs one file per test, so ``pytest -n auto``
spreads them over the workers.

The settings are the issue's: ``--max-examples 20``, hypothesis derandomized (the same
examples on every run), API version 2025.12, the skip list ``skips.txt`` (what we decide
not to support) and the known-failures list ``xfails.txt`` (what we do not pass yet),
each line with its reason.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENDOR = HERE / "vendor"
ROOT = HERE.parents[1]
SKIPS = HERE / "skips.txt"
XFAILS = HERE / "xfails.txt"
MAX_EXAMPLES = 20
FILES = sorted(p.name for p in (VENDOR / "array_api_tests").glob("test_*.py"))


@dataclass
class Counts:
    collected: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0  # the skip list, and extensions or versions that do not apply
    xfailed: int = 0  # the known-failures list
    seconds: float = 0.0
    failures: tuple[str, ...] = ()
    output: str = ""

    def add(self, other: Counts) -> None:
        for field in ("collected", "passed", "failed", "skipped", "xfailed", "seconds"):
            setattr(self, field, getattr(self, field) + getattr(other, field))
        self.failures += other.failures


def run_file(name: str, extra: tuple[str, ...] = ()) -> Counts:
    """One vendored test file in a fresh interpreter (its conftest is the vendored one)."""
    env = dict(os.environ)
    env["ARRAY_API_TESTS_MODULE"] = "tensor.array_api"
    env["ARRAY_API_TESTS_VERSION"] = "2025.12"
    # derandomized hypothesis draws the same examples only if the suite's strategies see
    # the same orders: some sample from sets of strings, whose order follows the hash seed
    env["PYTHONHASHSEED"] = "0"
    # this checkout's packages first (an editable install elsewhere must not win)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.xml"
        cmd = [
            # the vendored pytest.ini and rootdir, named: a path among the arguments
            # would otherwise make this repository's pyproject.toml the config
            sys.executable, "-m", "pytest", f"array_api_tests/{name}",
            "-c", "pytest.ini", "--rootdir", ".",
            "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:benchmark",
            "--max-examples", str(MAX_EXAMPLES), "--derandomize", "--disable-deadline",
            f"--skips-file={SKIPS}", f"--xfails-file={XFAILS}",
            "-q", "--tb=line", "-rN", "-W", "ignore", f"--junitxml={report}",
            *extra,
        ]  # fmt: skip
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=VENDOR, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if not report.exists():
            raise RuntimeError(f"array-api-tests {name} did not run:\n{proc.stdout}\n{proc.stderr}")
        counts = _parse(report)
    counts.seconds = seconds
    counts.output = proc.stdout[-6000:]
    return counts


def _parse(report: Path) -> Counts:
    c = Counts()
    failures = []
    for case in ET.parse(report).iter("testcase"):
        c.collected += 1
        kinds = {child.tag: child for child in case}
        if "failure" in kinds or "error" in kinds:
            c.failed += 1
            failures.append(f"{case.get('classname')}::{case.get('name')}")
        elif "skipped" in kinds:
            if kinds["skipped"].get("type") == "pytest.xfail":
                c.xfailed += 1
            else:
                c.skipped += 1
        else:
            c.passed += 1
    c.failures = tuple(failures)
    return c


def main() -> int:
    total = Counts()
    print(
        f"{'file':45} {'collected':>9} {'passed':>7} {'failed':>6} {'xfail':>6} {'skip':>5} {'s':>6}"
    )
    for name in FILES:
        c = run_file(name)
        total.add(c)
        print(
            f"{name:45} {c.collected:9} {c.passed:7} {c.failed:6} {c.xfailed:6} {c.skipped:5} "
            f"{c.seconds:6.1f}",
            flush=True,
        )
        for f in c.failures:
            print(f"    FAILED {f}")
    rate = total.passed / total.collected
    print(
        f"{'total':45} {total.collected:9} {total.passed:7} {total.failed:6} {total.xfailed:6} "
        f"{total.skipped:5} {total.seconds:6.1f}"
    )
    print(f"pass rate: {total.passed}/{total.collected} = {rate:.1%} of collected tests")
    return 0 if total.failed == 0 and rate >= 0.95 else 1


if __name__ == "__main__":
    raise SystemExit(main())

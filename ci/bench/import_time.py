"""Import time: ``import tensor`` vs ``import torch``, each in a fresh process.

    python ci/bench/import_time.py [--quick] [--rounds N] [--top N]

Each round starts one fresh interpreter per contender, in turn, so a noisy machine
slows both alike; each child times its own ``import`` statement (interpreter start-up
and ``site``, the same for both, are left out) and the medians over the rounds are
compared.  The children import this checkout's packages (they run from its root).

Both sides import from bytecode caches, as an installed package does (pip writes them
at install time; torch's are in site-packages): the children run without
``PYTHONDONTWRITEBYTECODE``, and a first, untimed round writes this checkout's
``__pycache__`` folders (git ignores them).  ``--top N`` also prints the N modules with
the largest self time under ``python -X importtime -c "import tensor"``.

Target (the speed issue): ``import tensor`` <= 0.25x ``import torch``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET = 0.25
# The child times the import statement alone and prints seconds.
_CHILD = "import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # read and write bytecode caches
    return env


def import_seconds(module: str) -> float:
    """Seconds ``import module`` takes in a fresh interpreter started at the checkout root."""
    out = subprocess.run(
        [sys.executable, "-c", _CHILD.format(module=module)],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return float(out.stdout.strip().splitlines()[-1])


def _importtime(code: str) -> list[tuple[int, int, str]]:
    """(self us, cumulative us, name) of every module ``python -X importtime -c code`` loads."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    rows = []
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative, name = line.removeprefix("import time:").split("|")
        rows.append((int(self_us), int(cumulative), name.strip()))
    return rows


def top_modules(module: str, n: int) -> list[tuple[int, int, str]]:
    """The ``n`` modules of ``import module`` with the largest self time (start-up's left out)."""
    startup = {name for _, _, name in _importtime("pass")}
    rows = [row for row in _importtime(f"import {module}") if row[2] not in startup]
    return sorted(rows, reverse=True)[:n]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="3 rounds (CI smoke run)")
    parser.add_argument("--rounds", type=int, default=None, help="timed rounds (default 15)")
    parser.add_argument("--top", type=int, default=0, help="print the N slowest modules")
    args = parser.parse_args()
    rounds = args.rounds or (3 if args.quick else 15)

    contenders = ["tensor"]
    if importlib.util.find_spec("torch") is not None:
        contenders.append("torch")
    else:
        print("torch is not installed: timing import tensor alone")
    for module in contenders:  # untimed: writes bytecode caches, warms the file cache
        import_seconds(module)
    times: dict[str, list[float]] = {m: [] for m in contenders}
    for _ in range(rounds):
        for module in contenders:
            times[module].append(import_seconds(module))

    print(f"fresh-process import time, {rounds} interleaved rounds ({sys.executable})")
    print(f"  {'module':<10}{'median':>10}{'min':>10}{'max':>10}")
    medians = {}
    for module, ts in times.items():
        medians[module] = statistics.median(ts)
        print(
            f"  {module:<10}{medians[module] * 1e3:>8.0f}ms{min(ts) * 1e3:>8.0f}ms"
            f"{max(ts) * 1e3:>8.0f}ms"
        )
    if "torch" in medians:
        ratio = medians["tensor"] / medians["torch"]
        verdict = "meets" if ratio <= TARGET else "misses"
        print(f"  import tensor / import torch = {ratio:.2f}x ({verdict} the {TARGET}x target)")
    if args.top:
        print(f"slowest modules of import tensor (-X importtime, one run), top {args.top}:")
        print(f"  {'self':>8}{'cumulative':>12}  module")
        for self_us, cumulative, name in top_modules("tensor", args.top):
            print(f"  {self_us / 1e3:>6.1f}ms{cumulative / 1e3:>10.1f}ms  {name}")


if __name__ == "__main__":
    main()

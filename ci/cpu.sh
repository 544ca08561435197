#!/usr/bin/env bash
# The CPU job, after the test suite: the tour (the README's main job) and quick runs of
# the benchmarks in ci/bench/, so they are known to work.  Quote figures from full runs.
set -euo pipefail
cd "$(dirname "$0")/.."

python examples/tour.py
for bench in ci/bench/*.py; do
  echo "== $bench --quick"
  python "$bench" --quick
done

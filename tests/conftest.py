"""Hypothesis profiles for the whole suite.

``ci`` (what ``.ci/run`` selects with ``HYPOTHESIS_PROFILE=ci``) derandomizes every
property test: each draws the same examples on every run, so a landing is judged on a
repeatable suite and a new falsifying example turns up here, during development, where
the default profile draws fresh random examples on each run.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("dev", print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

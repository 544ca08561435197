"""Real users of the Array API: SciPy's and scikit-learn's array-API paths on our tensors,
compared with the same calls on NumPy arrays (``interop_cases.py``, in a subprocess: see
there why).  Skipped with a reason where SciPy or scikit-learn is not installed (the
``interop`` extra installs them; the ``test`` extra includes it)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCIPY_CASES = [
    "scipy.special.erf", "scipy.special.gammaln", "scipy.special.expit", "scipy.special.logit",
    "scipy.special.xlogy", "scipy.special.entr", "scipy.special.ndtr", "scipy.special.logsumexp",
    "scipy.special.softmax", "scipy.stats.zscore", "scipy.stats.skew", "scipy.stats.kurtosis",
    "scipy.stats.moment", "scipy.stats.variation", "scipy.stats.gmean", "scipy.stats.hmean",
    "scipy.stats.sem", "scipy.stats.entropy", "scipy.stats.pearsonr", "scipy.stats.ttest_ind",
]  # fmt: skip
SKLEARN_CASES = [
    "sklearn.LinearDiscriminantAnalysis.fit",
    "sklearn.LinearDiscriminantAnalysis.predict",
    "sklearn.PCA.fit_transform",
    "sklearn.Ridge.fit",
    "sklearn.Ridge.predict",
]


@cache
def _results(which: str) -> dict[str, str]:
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("interop_cases.py")), which],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.skipif(importlib.util.find_spec("scipy") is None, reason="SciPy is not installed")
@pytest.mark.parametrize("case", SCIPY_CASES)
def test_scipy_matches_numpy(case: str) -> None:
    assert _results("scipy")[case] == "ok", _results("scipy")[case]


@pytest.mark.skipif(
    importlib.util.find_spec("sklearn") is None or importlib.util.find_spec("scipy") is None,
    reason="scikit-learn (and SciPy) are not installed",
)
@pytest.mark.parametrize("case", SKLEARN_CASES)
def test_sklearn_matches_numpy(case: str) -> None:
    # predict runs check_array(dtype="numeric"), which reads X.dtype.kind as NumPy's
    # letter (Note [dtype.kind is NumPy's letter]); every case compares with NumPy's.
    outcome = _results("sklearn")[case]
    assert outcome == "ok", outcome

"""SciPy and scikit-learn on our tensors, against the same calls on NumPy arrays.

Run by ``test_interop.py`` in a subprocess: SciPy reads ``SCIPY_ARRAY_API=1`` when it is
first imported, and scikit-learn's ``array_api_dispatch`` needs it, so the cases run in
a fresh interpreter that sets it before importing either (the test session may have
imported SciPy already, without it).  Prints one JSON object: case name -> "ok" or the
reason it did not match.
"""

from __future__ import annotations

import copy
import json
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

os.environ["SCIPY_ARRAY_API"] = "1"

import numpy as np  # noqa: E402

import tensor as tt  # noqa: E402

xp = tt.array_api
RNG = np.random.default_rng(0)
A_NP = RNG.uniform(0.1, 3.0, 40)
B_NP = RNG.uniform(0.1, 3.0, 40)
X_NP = RNG.standard_normal((80, 6))
Y_CLASS = (X_NP[:, 0] + 0.5 * X_NP[:, 1] + 0.3 * RNG.standard_normal(80) > 0).astype(np.int64)
Y_REG = X_NP @ RNG.standard_normal(6) + 0.1 * RNG.standard_normal(80)


def _check(result: Any, expected: Any, rtol: float = 1e-9, atol: float = 1e-12) -> str:
    results = result if isinstance(result, tuple) else (result,)
    expecteds = expected if isinstance(expected, tuple) else (expected,)
    for r, e in zip(results, expecteds, strict=True):
        if not isinstance(r, tt.Tensor):
            return f"returned {type(r).__name__}, not a tensor.Tensor"
        if not np.allclose(np.asarray(r), np.asarray(e), rtol=rtol, atol=atol):
            return f"values differ: {np.asarray(r)[:4]} vs {np.asarray(e)[:4]}"
    return "ok"


def scipy_cases() -> dict[str, Callable[[Any, Any, Any], Any]]:
    import scipy.special as sc
    import scipy.stats as st

    return {
        "scipy.special.erf": lambda a, b, m: sc.erf(a),
        "scipy.special.gammaln": lambda a, b, m: sc.gammaln(a),
        "scipy.special.expit": lambda a, b, m: sc.expit(a),
        "scipy.special.logit": lambda a, b, m: sc.logit(a / 4),
        "scipy.special.xlogy": lambda a, b, m: sc.xlogy(a, b),
        "scipy.special.entr": lambda a, b, m: sc.entr(a),
        "scipy.special.ndtr": lambda a, b, m: sc.ndtr(a),
        "scipy.special.logsumexp": lambda a, b, m: sc.logsumexp(a),
        "scipy.special.softmax": lambda a, b, m: sc.softmax(a),
        "scipy.stats.zscore": lambda a, b, m: st.zscore(a),
        "scipy.stats.skew": lambda a, b, m: st.skew(a),
        "scipy.stats.kurtosis": lambda a, b, m: st.kurtosis(a),
        "scipy.stats.moment": lambda a, b, m: st.moment(a, order=3),
        "scipy.stats.variation": lambda a, b, m: st.variation(a),
        "scipy.stats.gmean": lambda a, b, m: st.gmean(a),
        "scipy.stats.hmean": lambda a, b, m: st.hmean(a),
        "scipy.stats.sem": lambda a, b, m: st.sem(a),
        "scipy.stats.entropy": lambda a, b, m: st.entropy(a, b),
        "scipy.stats.pearsonr": lambda a, b, m: st.pearsonr(a, b).statistic,
        "scipy.stats.ttest_ind": lambda a, b, m: (
            st.ttest_ind(a, b).statistic,
            st.ttest_ind(a, b).pvalue,
        ),
    }


def run_scipy() -> dict[str, str]:
    out = {}
    for name, fn in scipy_cases().items():
        try:
            out[name] = _check(fn(xp.asarray(A_NP), xp.asarray(B_NP), xp), fn(A_NP, B_NP, np))
        except Exception as e:  # noqa: BLE001 - reported, the test names the case
            out[name] = f"raised {type(e).__name__}: {e}"
    return out


def run_sklearn() -> dict[str, str]:
    import sklearn
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import Ridge

    sklearn.set_config(array_api_dispatch=True)
    X, Xn = xp.asarray(X_NP), X_NP
    out = {}

    def case(name: str, fn: Callable[[Any, Any, Any], Any], tol: float = 1e-8) -> None:
        try:
            got = fn(X, xp.asarray(Y_CLASS), xp.asarray(Y_REG))
            want = fn(Xn, Y_CLASS, Y_REG)
            out[name] = _check(got, want, rtol=tol, atol=tol)
        except Exception as e:  # noqa: BLE001
            out[name] = f"raised {type(e).__name__}: {e}"

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lda = LinearDiscriminantAnalysis(solver="svd")
        case(
            "sklearn.LinearDiscriminantAnalysis.fit",
            lambda x, yc, yr: (lambda m: (m.coef_, m.intercept_, m.scalings_, m.means_))(
                copy.deepcopy(lda).fit(x, yc)
            ),
        )
        case(
            "sklearn.LinearDiscriminantAnalysis.predict",
            lambda x, yc, yr: copy.deepcopy(lda).fit(x, yc).predict(x),
        )
        pca = PCA(n_components=3, svd_solver="full")
        case(
            "sklearn.PCA.fit_transform",
            lambda x, yc, yr: (lambda m: (m.transform(x), m.explained_variance_))(
                copy.deepcopy(pca).fit(x)
            ),
            1e-7,
        )
        ridge = Ridge(alpha=1.0, solver="svd")
        case(
            "sklearn.Ridge.fit",
            lambda x, yc, yr: (lambda m: (m.coef_, m.intercept_))(copy.deepcopy(ridge).fit(x, yr)),
        )
        case(
            "sklearn.Ridge.predict",
            lambda x, yc, yr: copy.deepcopy(ridge).fit(x, yr).predict(x),
        )
    return out


if __name__ == "__main__":
    which = sys.argv[1]
    print(json.dumps(run_scipy() if which == "scipy" else run_sklearn()))

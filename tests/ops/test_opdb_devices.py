"""Every operator of the op database on the plug-in devices ``strict`` and ``dask``,
against the same call on the CPU.

For each entry, dtype and sample, one of:
- *match*: both raise the same exception type, or the device gives results on the
  device, of the CPU results' dtypes and shapes, with values equal within the dtype's
  tolerance (dask computes them here);
- *refused*: the device raises ``NotImplementedError`` naming its device (the shared
  kernel needs something the library lacks, Note [Plug-in devices] in
  ``backends.common.device``), and the test is skipped with that message;
anything else (a wrong value, another exception, a result on the wrong device) fails.
Never a wrong answer: that is the contract these tests hold the devices to.

``python -m tests.ops.test_opdb_devices [strict|dask]`` prints the per-family counts
the README quotes.  Skipped, with the reason, where array_api_strict or dask is missing.
"""

from __future__ import annotations

import collections
import importlib.util
import sys
import warnings
from typing import Any

import numpy as np
import pytest

import tensor as tt

from .opdb import OPDB
from .runner import assert_values, numpy_of, outputs, result_dtype_name, run, seed_of

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::UserWarning")

LIBRARIES = {"strict": "array_api_strict", "dask": "dask"}
# Two implementations of the same math (dask's chunked reductions sum in another order).
SCALE = 4.0
# Dask runs every sample through its scheduler: CI runs the dtypes that cover each kind.
DTYPES = {
    "strict": None,  # all
    "dask": ("bool", "int64", "float32", "float64", "complex64"),
}


def _cases(device: str) -> list[Any]:
    keep = DTYPES[device]
    marks = [getattr(pytest.mark, device)]
    return [
        pytest.param(e, d, id=f"{e.id}-{d}", marks=marks)
        for e in OPDB
        for d in e.dtypes
        if keep is None or d in keep
    ]


def _needs(device: str) -> None:
    if importlib.util.find_spec(LIBRARIES[device]) is None:
        pytest.skip(f"{LIBRARIES[device]} is not installed (pip install -e '.[{device}]')")


def _shares_views(device: str) -> bool:
    dev = tt._plugin.get_device(device)
    return dev is not None and dev.views_share_memory


def check(entry: Any, dtype: str, device: str) -> str:
    """Run every sample of ``entry`` at ``dtype`` on ``device``; returns "match" or the
    refusal message (raises AssertionError on a wrong answer)."""
    refused = ""
    rng = np.random.default_rng(seed_of(entry.id, dtype))
    for sample in entry.samples(dtype, rng):
        where = f"{entry.id}[{sample.name}] on {device}"
        cpu, cpu_error = run(entry, tt, sample, "cpu")
        try:
            dev, dev_error = run(entry, tt, sample, device)
        except NotImplementedError as e:  # the inputs: a dtype the device cannot hold
            assert f"'{device}'" in str(e), f"{where}: refusal does not name the device"
            return str(e)
        if isinstance(dev_error, NotImplementedError) and not isinstance(
            cpu_error, NotImplementedError
        ):
            assert f"'{device}'" in str(dev_error), f"{where}: refusal does not name the device"
            refused = refused or str(dev_error)
            continue
        if cpu_error is not None and dev_error is None:
            if "view size is not compatible" in str(cpu_error) and not _shares_views(device):
                continue  # no strides on the device: any reshape is its "view" (README)
            if sample.data_error:
                continue  # data-dependent checks (index ranges) a lazy device may defer
            # A lazy device (dask) finds some errors only when it computes: it must then.
            try:
                for g in outputs(dev):
                    numpy_of(g)
            except Exception:  # noqa: BLE001 - deferred, but raised
                continue
            raise AssertionError(f"{where}: CPU raised {cpu_error!r}, {device} computed a value")
        if cpu_error is not None or dev_error is not None:
            assert cpu_error is not None and dev_error is not None, (
                f"{where}: CPU raised {cpu_error!r} but {device} raised {dev_error!r}"
            )
            assert type(dev_error) is type(cpu_error), f"{where}: {cpu_error!r} vs {dev_error!r}"
            continue
        cpu_out, dev_out = outputs(cpu), outputs(dev)
        assert len(cpu_out) == len(dev_out), where
        for c, g in zip(cpu_out, dev_out, strict=True):
            assert isinstance(g, tt.Tensor), f"{where}: got {type(g).__name__}"
            assert g.device.type == device, f"{where}: result on {g.device}"
            assert tuple(g.shape) == tuple(c.shape), f"{where}: shape {g.shape} != {c.shape}"
            assert g.dtype is c.dtype, f"{where}: dtype {g.dtype} != CPU dtype {c.dtype}"
        if entry.random:
            continue
        name = result_dtype_name(cpu_out)
        for i, (c, g) in enumerate(zip(cpu_out, dev_out, strict=True)):
            try:
                got = numpy_of(g)
            except NotImplementedError as e:  # computing the lazy graph hit a refusal
                refused = refused or str(e)
                break
            except Exception as e:  # noqa: BLE001 - the CPU computed a value
                raise AssertionError(f"{where}: computing output {i} raised {e!r}") from e
            assert_values(got, numpy_of(c), name, entry.tol * SCALE, what=f"{where} output {i}: ")
    return refused or "match"


@pytest.mark.parametrize(("entry", "dtype"), _cases("strict"))
def test_strict_matches_cpu(entry: Any, dtype: str) -> None:
    _needs("strict")
    outcome = check(entry, dtype, "strict")
    if outcome != "match":
        pytest.skip(f"strict refuses: {outcome[:200]}")


@pytest.mark.parametrize(("entry", "dtype"), _cases("dask"))
def test_dask_matches_cpu(entry: Any, dtype: str) -> None:
    _needs("dask")
    outcome = check(entry, dtype, "dask")
    if outcome != "match":
        pytest.skip(f"dask refuses: {outcome[:200]}")


def census(device: str) -> None:
    """Print per-family counts (match / refused / failed) for the README."""
    counts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    reasons: collections.Counter[str] = collections.Counter()
    keep = DTYPES[device]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for e in OPDB:
            family = tt.op_info(e.op).family
            for d in e.dtypes:
                if keep is not None and d not in keep:
                    continue
                try:
                    outcome = check(e, d, device)
                except AssertionError:
                    counts[family]["failed"] += 1
                    continue
                if outcome == "match":
                    counts[family]["match"] += 1
                else:
                    counts[family]["refused"] += 1
                    reasons[outcome.split(":", 2)[-1].strip()[:90]] += 1
    total: collections.Counter[str] = collections.Counter()
    print(f"| family ({device}) | match | refused | failed |\n|---|---|---|---|")
    for family in sorted(counts):
        c = counts[family]
        total.update(c)
        print(f"| {family} | {c['match']} | {c['refused']} | {c['failed']} |")
    print(f"| all | {total['match']} | {total['refused']} | {total['failed']} |")
    print("\nmost common refusals:")
    for reason, n in reasons.most_common(12):
        print(f"  {n:5d}  {reason}")


if __name__ == "__main__":
    for name in sys.argv[1:] or ["strict", "dask"]:
        census(name)

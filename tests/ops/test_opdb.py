"""Every operator of the op database, on CPU and Meta, for every dtype.

- CPU results match the NumPy reference (values, shapes), or the call raises
  because the operator's table row rejects the dtype;
- Meta results have the CPU results' shapes and dtypes (and raise when they raise);
- against PyTorch, where installed: the same calls succeed or raise, with equal
  dtypes, shapes and values (test_opdb_torch.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import tensor as tt

from .opdb import OPDB, OpEntry
from .runner import (
    assert_values,
    check_consistent,
    outputs,
    result_dtype_name,
    run,
    seed_of,
)

# NumPy warns at special values (inf, nan), in the references and in our kernels (whose
# own filter, set by `import tensor`, is undone by pytest's per-test warning capture).
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning:(tests|backends|tensor)")

CASES = [pytest.param(e, d, id=f"{e.id}-{d}") for e in OPDB for d in e.dtypes]


def _supported(entry: OpEntry, dtype: str) -> bool:
    if entry.supported is not None:
        return dtype in entry.supported
    return getattr(tt, dtype) in tt.op_info(entry.support or entry.op).dtypes


@pytest.mark.cpu
@pytest.mark.parametrize(("entry", "dtype"), CASES)
def test_cpu_matches_numpy(entry: OpEntry, dtype: str) -> None:
    rng = np.random.default_rng(seed_of(entry.id, dtype))
    for sample in entry.samples(dtype, rng):
        result, error = run(entry, tt, sample, "cpu")
        if isinstance(error, ZeroDivisionError):
            continue  # integer division by zero: data-dependent, PyTorch raises too
        if error is not None:
            assert not (_supported(entry, dtype) and sample.plain), (
                f"{entry.id}[{sample.name}] raised for a supported dtype: {error!r}"
            )
            assert isinstance(error, (RuntimeError, TypeError, IndexError, ValueError)), repr(error)
            continue
        results = outputs(result)
        for r in results:
            check_consistent(r, "cpu")
        if entry.random or entry.ref is None:
            continue
        expected = entry.ref(*sample.args, **sample.kwargs)
        expected = list(expected) if isinstance(expected, tuple) else [expected]
        name = result_dtype_name(results)
        for i, (r, e) in enumerate(zip(results, expected, strict=True)):
            assert_values(r, e, name, entry.tol, what=f"{entry.id}[{sample.name}] output {i}: ")


@pytest.mark.meta
@pytest.mark.parametrize(("entry", "dtype"), CASES)
def test_meta_matches_cpu(entry: OpEntry, dtype: str) -> None:
    for sample in entry.samples(dtype, np.random.default_rng(seed_of(entry.id, dtype))):
        cpu, cpu_error = run(entry, tt, sample, "cpu")
        meta, meta_error = run(entry, tt, sample, "meta")
        where = f"{entry.id}[{sample.name}]"
        if sample.meta_raises and cpu_error is None:
            assert isinstance(meta_error, NotImplementedError), (
                f"{where}: a data-dependent shape must raise NotImplementedError on meta, got "
                f"{meta_error!r}"
            )
            continue
        if sample.data_error and cpu_error is not None and meta_error is None:
            continue
        if isinstance(cpu_error, ZeroDivisionError) and meta_error is None:
            continue  # depends on the data, which meta tensors do not have
        if cpu_error is not None or meta_error is not None:
            assert cpu_error is not None and meta_error is not None, (
                f"{where}: CPU raised {cpu_error!r} but Meta raised {meta_error!r}"
            )
            assert type(meta_error) is type(cpu_error), f"{where}: {cpu_error!r} vs {meta_error!r}"
            continue
        cpu_out, meta_out = outputs(cpu), outputs(meta)
        assert len(cpu_out) == len(meta_out)
        for c, m in zip(cpu_out, meta_out, strict=True):
            check_consistent(m, "meta")
            assert m.shape == c.shape, f"{where}: meta shape {m.shape} != cpu shape {c.shape}"
            assert m.dtype is c.dtype, f"{where}: meta dtype {m.dtype} != cpu dtype {c.dtype}"


def test_every_table_row_is_in_the_database() -> None:
    covered = {e.op for e in OPDB}
    missing = [op.name for op in tt.OP_TABLE if op.name not in covered]
    assert not missing, f"operators without op-database entries: {missing}"

"""View operators of the op database share memory with their input, on CPU and Meta.

For every sample of an ``aliases`` entry (``view``, ``transpose``, ``select``,
``diagonal``, ``split``, ...) that succeeds: each result is a view of the input
(``_base`` is the input, the version counter is shared); writing zeros through
the result changes the input, so applying the operator again reads zeros; and
that write bumps the input's version.  Meta results are views of the meta input
with the CPU's shapes and strides.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensor as tt

from .opdb import OPDB, OpEntry
from .opdb_shape import ALIASES
from .runner import outputs, run, seed_of

ENTRIES = [pytest.param(e, id=e.id) for e in OPDB if e.id in ALIASES]
DTYPES = ("float32", "int64", "bool", "complex64")


@pytest.mark.cpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("entry", ENTRIES)
def test_writes_reach_the_base(entry: OpEntry, dtype: str) -> None:
    rng = np.random.default_rng(seed_of(entry.id, dtype, "views"))
    for sample in entry.samples(dtype, rng):
        args = [tt.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in sample.args]
        x = args[0]
        try:
            result = entry.call(tt, *args, **sample.kwargs)
        except (RuntimeError, IndexError, ValueError, TypeError):
            continue
        where = f"{entry.id}[{sample.name}]"
        before = x._version
        if (
            entry.op == "reshape"
            and result.numel()
            and not np.shares_memory(result.numpy(), x.numpy())
        ):
            assert result._base is None, f"{where}: a copy marked as a view"
            continue  # reshape copies when no view can have the new shape
        for r in outputs(result):
            assert r._base is (x._base if x._base is not None else x), f"{where}: not a view"
            assert r._version_counter is x._version_counter, f"{where}: counter not shared"
            if r.numel() and not r.array.flags.writeable:
                continue  # expanded views are read-only, as PyTorch refuses to write them
            r.zero_()
        if all(r.numel() == 0 or not r.array.flags.writeable for r in outputs(result)):
            continue
        assert x._version > before, f"{where}: writing through the view did not bump the base"
        again = entry.call(tt, *args, **sample.kwargs)
        for r in outputs(again):
            assert not np.any(r.numpy()), f"{where}: the write did not reach the base"


@pytest.mark.meta
@pytest.mark.parametrize("entry", ENTRIES)
def test_meta_views_have_the_cpu_layout(entry: OpEntry) -> None:
    rng = np.random.default_rng(seed_of(entry.id, "meta-views"))
    for sample in entry.samples("float32", rng):
        cpu, cpu_error = run(entry, tt, sample, "cpu")
        meta, meta_error = run(entry, tt, sample, "meta")
        if cpu_error is not None:
            assert meta_error is not None, f"{entry.id}[{sample.name}]: only the CPU raised"
            continue
        for c, m in zip(outputs(cpu), outputs(meta), strict=True):
            assert (m._base is None) == (c._base is None), f"{entry.id}[{sample.name}]: view-ness"
            if c._base is None:
                continue  # reshape copied, on both
            assert m._base is not None, f"{entry.id}[{sample.name}]: meta result is not a view"
            assert m.stride() == c.stride() or 1 in m.shape or 0 in m.shape, (
                f"{entry.id}[{sample.name}]: meta strides {m.stride()} != cpu {c.stride()}"
            )
            assert m.storage_offset() == c.storage_offset(), f"{entry.id}[{sample.name}]"

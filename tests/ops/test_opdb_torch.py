"""Every operator of the op database against PyTorch (skipped when torch is not installed).

For every dtype, supported or not, each sample either raises in both libraries or
succeeds in both, with the same result dtypes and shapes and close values (random
operators: dtypes and shapes only).
"""

from __future__ import annotations

import numpy as np
import pytest

import tensor as tt

from .opdb import OPDB, OpEntry
from .runner import assert_values, outputs, result_dtype_name, run, seed_of

torch = pytest.importorskip("torch", reason="PyTorch is not installed: differential tests need it")

pytestmark = [
    pytest.mark.torch,
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::RuntimeWarning:(tests|backends|tensor)"),
]

CASES = [pytest.param(e, d, id=f"{e.id}-{d}") for e in OPDB for d in e.dtypes]


@pytest.fixture(autouse=True, scope="module")
def _one_thread() -> None:
    torch.set_num_threads(1)


def _torch_dtype_name(t: object) -> str:
    return str(t.dtype).rsplit(".", 1)[-1]  # type: ignore[attr-defined]


@pytest.mark.parametrize(("entry", "dtype"), CASES)
def test_matches_torch(entry: OpEntry, dtype: str) -> None:
    rng = np.random.default_rng(seed_of(entry.id, dtype))
    for sample in entry.samples(dtype, rng):
        ours, our_error = run(entry, tt, sample, "cpu")
        theirs, their_error = run(entry, torch, sample)
        where = f"{entry.id}[{sample.name}]"
        if sample.degenerate and isinstance(our_error, NotImplementedError) and their_error is None:
            continue  # PyTorch skips this dtype check for empty/one-element inputs
        if our_error is not None or their_error is not None:
            assert our_error is not None and their_error is not None, (
                f"{where}: tensor raised {our_error!r}, torch raised {their_error!r}"
            )
            continue
        mine, reference = outputs(ours), outputs(theirs)
        assert len(mine) == len(reference), where
        for i, (a, b) in enumerate(zip(mine, reference, strict=True)):
            assert a.dtype.name == _torch_dtype_name(b), (
                f"{where} output {i}: dtype {a.dtype.name}, torch gives {_torch_dtype_name(b)}"
            )
            assert tuple(a.shape) == tuple(b.shape), (
                f"{where} output {i}: shape {tuple(a.shape)}, torch gives {tuple(b.shape)}"
            )
        if entry.random or not sample.torch_values or dtype not in entry.torch_values_for:
            continue
        name = result_dtype_name(mine)
        for i, (a, b) in enumerate(zip(mine, reference, strict=True)):
            if (
                entry.op.removesuffix(".out") in ("argmax", "argmin", "max", "min", "topk")
                and i == 1
                and a.dtype is tt.int64
            ):
                _check_indices(entry, sample, mine, reference, where)
                continue
            assert_values(a, b, name, entry.tol * 2, what=f"{where} output {i}: ")


def _check_indices(entry: OpEntry, sample: object, mine: list, reference: list, where: str) -> None:
    # Ties may pick different indices; the values at them must agree.
    a, b = mine[1].numpy(), reference[1].numpy()
    if not np.array_equal(a, b):
        assert_values(mine[0], reference[0], result_dtype_name(mine), what=f"{where} values: ")

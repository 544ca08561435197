"""Every operator of the op database on CUDA, against the same call on the CPU.

For each entry, dtype and sample: the CUDA call raises exactly when the CPU call
raises (same exception type), and otherwise gives results on the CUDA device, of
the CPU results' dtypes and shapes, with values equal within the dtype's
tolerance (CUDA's math library and reduction order differ from NumPy's in the
last bits; float16/bfloat16 are computed in float32 on both).

Skipped, with the reason, where CuPy or a GPU is missing; ci/gpu.sh runs it.
"""

from __future__ import annotations

import numpy as np
import pytest

import backends.cuda
import tensor as tt

from .opdb import OPDB
from .runner import (
    assert_values,
    check_consistent,
    numpy_of,
    outputs,
    result_dtype_name,
    run,
    seed_of,
)

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.filterwarnings("ignore::RuntimeWarning:(tests|backends|tensor)"),
]

CASES = [pytest.param(e, d, id=f"{e.id}-{d}") for e in OPDB for d in e.dtypes]

# Larger than the CPU-vs-NumPy tolerances by this factor: two implementations of the
# same math (CUDA's libdevice vs NumPy's libm, tree vs pairwise reductions).
CUDA_SCALE = 4.0


@pytest.fixture(autouse=True)
def _needs_gpu() -> None:
    if not backends.cuda.is_available():
        pytest.skip(f"no CUDA device: {backends.cuda.unavailable_reason()}")


@pytest.mark.parametrize(("entry", "dtype"), CASES)
def test_cuda_matches_cpu(entry, dtype: str) -> None:  # type: ignore[no-untyped-def]
    for sample in entry.samples(dtype, np.random.default_rng(seed_of(entry.id, dtype))):
        where = f"{entry.id}[{sample.name}]"
        cpu, cpu_error = run(entry, tt, sample, "cpu")
        cuda, cuda_error = run(entry, tt, sample, "cuda")
        if isinstance(cpu_error, ZeroDivisionError):
            continue  # integer division by zero: CUDA, like PyTorch's, does not check the data
        if sample.data_error and cpu_error is not None and cuda_error is None:
            continue  # data-dependent checks (index ranges) that CUDA may defer
        if cpu_error is not None or cuda_error is not None:
            assert cpu_error is not None and cuda_error is not None, (
                f"{where}: CPU raised {cpu_error!r} but CUDA raised {cuda_error!r}"
            )
            assert type(cuda_error) is type(cpu_error), f"{where}: {cpu_error!r} vs {cuda_error!r}"
            continue
        cpu_out, cuda_out = outputs(cpu), outputs(cuda)
        assert len(cpu_out) == len(cuda_out), where
        for c, g in zip(cpu_out, cuda_out, strict=True):
            check_consistent(g, "cuda")
            assert g.shape == c.shape, f"{where}: CUDA shape {g.shape} != CPU shape {c.shape}"
            assert g.dtype is c.dtype, f"{where}: CUDA dtype {g.dtype} != CPU dtype {c.dtype}"
        if entry.random:
            continue  # different engines: only shapes and dtypes can agree
        name = result_dtype_name(cpu_out)
        finite = _finite_inputs(sample, dtype)
        for i, (c, g) in enumerate(zip(cpu_out, cuda_out, strict=True)):
            if finite is not None and tuple(c.shape) == finite.shape:
                c, g = numpy_of(c)[finite], numpy_of(g)[finite]
            assert_values(g, c, name, entry.tol * CUDA_SCALE, what=f"{where} output {i}: ")


def _finite_inputs(sample, dtype: str):  # type: ignore[no-untyped-def]
    """Where a complex special-values sample's first input is finite, or None.

    Complex functions at infinities and NaNs differ between CuPy (thrust's, as in
    PyTorch's CUDA build) and NumPy (C99 Annex G), e.g. tanh(-0+nan j); PyTorch's own
    OpInfo tests skip complex extremal values on CUDA too.  The finite elements of
    such a sample are still compared; real dtypes compare every element.
    """
    if not dtype.startswith("complex") or sample.name != "special" or not sample.args:
        return None
    first = sample.args[0]
    if not isinstance(first, np.ndarray):
        return None
    return np.isfinite(first.real) & np.isfinite(first.imag)

"""Running op-database samples on a device, and comparing results.

Imports: NumPy and ``tensor``; torch only inside ``to_torch``/``torch_values``,
whose callers skip when it is missing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

import tensor as tt

from .opdb import OpEntry
from .samples import DEVICE, Sample

# (rtol, atol) per dtype, for results compared with a float64 reference or with PyTorch.
TOLERANCE = {
    "float16": (2e-3, 2e-3),
    "bfloat16": (1.6e-2, 1.6e-2),
    "float32": (1e-5, 1e-5),
    "float64": (1e-10, 1e-10),
    "complex64": (1e-5, 1e-5),
    "complex128": (1e-10, 1e-10),
}


def seed_of(*parts: str) -> int:
    """A stable seed per test case (the same under ``-n auto`` in any worker)."""
    return int.from_bytes(hashlib.sha256("/".join(parts).encode()).digest()[:4], "little")


def to_tt(value: Any, device: str) -> Any:
    """A sample value made ready for ``tensor``: arrays become tensors on ``device``."""
    if isinstance(value, np.ndarray):
        if device == "cpu":
            return tt.from_numpy(value)  # keeps the strides of non-contiguous samples
        if device == "meta" and not value.flags.c_contiguous and value.ndim:
            # A meta tensor with the sample's strides, so views fail where the CPU's do.
            dt = tt.from_numpy(value).dtype
            meta = tt.MetaArray(value.shape, dt.numpy_dtype, value.strides)
            return tt.Tensor._make(meta, dt, tt.device("meta"))
        return tt.tensor(value, device=device)
    if value is DEVICE:
        return device
    if isinstance(value, tuple):
        return tuple(to_tt(v, device) for v in value)
    if isinstance(value, list):
        return [to_tt(v, device) for v in value]
    if isinstance(value, dict):
        return {k: to_tt(v, device) for k, v in value.items()}
    return value


def to_torch(value: Any) -> Any:
    import torch

    if isinstance(value, np.ndarray):
        if value.dtype == ml_dtypes.bfloat16:
            return torch.from_numpy(value.astype(np.float32)).to(torch.bfloat16)
        return torch.from_numpy(value)
    if value is DEVICE:
        return "cpu"
    if isinstance(value, tt.dtype):
        return getattr(torch, value.name)
    if isinstance(value, tuple):
        return tuple(to_torch(v) for v in value)
    if isinstance(value, list):
        return [to_torch(v) for v in value]
    if isinstance(value, dict):
        return {k: to_torch(v) for k, v in value.items()}
    return value


def run(
    entry: OpEntry, lib: Any, sample: Sample, device: str = "cpu"
) -> tuple[Any, BaseException | None]:
    """(result, None) or (None, exception) of one sample."""
    if lib is tt:
        args, kwargs = to_tt(sample.args, device), to_tt(sample.kwargs, device)
        call = entry.call
    else:
        args, kwargs = to_torch(sample.args), to_torch(sample.kwargs)
        call = entry.torch_call or entry.call
    try:
        return call(lib, *args, **kwargs), None
    except Exception as e:  # compared by the caller
        return None, e


def outputs(result: Any) -> list[Any]:
    """The tensors of a result (a tensor, or a tuple of them such as max's (values, indices))."""
    if isinstance(result, tuple):
        return list(result)
    return [result]


def check_consistent(t: Any, device: str) -> None:
    """A tensor's metadata agrees with its array (what the kernels' fast paths rely on)."""
    assert isinstance(t, tt.Tensor), f"expected a Tensor, got {type(t).__name__}"
    assert t.device.type == device, f"result on {t.device}, expected {device}"
    if device == "cpu":
        assert type(t.array) is np.ndarray, f"CPU result wraps {type(t.array).__name__}"
    elif device == "cuda":
        kind = type(t.array).__module__.partition(".")[0]
        assert kind == "cupy", f"CUDA result wraps {type(t.array).__name__}"
    else:
        assert isinstance(t.array, tt.MetaArray), f"meta result wraps {type(t.array).__name__}"
    assert t.array.dtype == t.dtype.numpy_dtype, (
        f"array dtype {t.array.dtype} does not match the tensor's dtype {t.dtype}"
    )


def numpy_of(value: Any) -> np.ndarray:
    """Our tensor, a torch tensor, or a reference value as a float64/complex128/bool/int array."""
    if isinstance(value, tt.Tensor):
        arr = value.cpu().numpy()
    elif type(value).__module__.startswith("torch"):
        import torch

        v = value.detach().resolve_conj()  # PyTorch's lazy conjugates (its ifft of reals)
        if v.dtype is torch.bfloat16:
            v = v.float()
        arr = v.numpy()
    else:
        arr = np.asarray(value)
    if arr.dtype == ml_dtypes.bfloat16 or arr.dtype.kind == "f":
        return arr.astype(np.float64)
    if arr.dtype.kind == "c":
        return arr.astype(np.complex128)
    return arr


def assert_values(
    actual: Any, expected: Any, dtype_name: str, scale: float = 1.0, what: str = ""
) -> None:
    a, e = numpy_of(actual), numpy_of(expected)
    assert a.shape == e.shape, f"{what}shape {a.shape} != expected {e.shape}"
    rtol, atol = TOLERANCE.get(dtype_name, (0, 0))
    if a.dtype.kind in "iu" and e.dtype.kind == "f" and np.all(e == np.trunc(e)):
        e = e.astype(np.int64)  # a whole-number reference of an integer result: compare as ints
    if a.dtype.kind == "c" or e.dtype.kind == "c":
        # Real and imaginary parts separately: assert_allclose mishandles complex infinities.
        a, e = a.astype(np.complex128), e.astype(np.complex128)
        for part, x, y in (("real", a.real, e.real), ("imag", a.imag, e.imag)):
            np.testing.assert_allclose(
                x,
                y,
                rtol=rtol * scale,
                atol=atol * scale,
                equal_nan=True,
                err_msg=f"{what}({part})",
            )
    elif a.dtype.kind == "f" or e.dtype.kind == "f":
        np.testing.assert_allclose(
            a.astype(np.float64),
            e,
            rtol=rtol * scale,
            atol=atol * scale,
            equal_nan=True,
            err_msg=what,
        )
    else:
        if a.dtype.kind in "iu" and e.dtype.kind in "iub":
            e = e.astype(a.dtype)  # integer results wrap around, as in C and PyTorch
        np.testing.assert_array_equal(a, e, err_msg=what)


def result_dtype_name(results: Sequence[Any]) -> str:
    """The dtype name that decides the tolerance: the first floating result's, if any."""
    for r in results:
        name = str(r.dtype).rsplit(".", 1)[-1]
        if name in TOLERANCE:
            return name
    return str(results[0].dtype).rsplit(".", 1)[-1]

"""Sample inputs for the op database: values per dtype, and sample generators per family.

Imports: NumPy, ml_dtypes and ``tensor``.

A sample's arguments are NumPy arrays (made tensors on the device under test by the
runner), Python numbers, or ``DEVICE`` where a factory takes the device.  Samples
cover broadcasting, 0-d, empty and non-contiguous inputs and, for floats, special
values (0, -0, +-1, +-inf, nan).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np

import tensor as tt

DTYPE_NAMES = tuple(d.name for d in tt._dtype.DTYPES)
FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")
COMPLEX_NAMES = ("complex64", "complex128")
INT_NAMES = ("uint8", "int8", "int16", "int32", "int64")
NP_DTYPES = {d.name: d.numpy_dtype for d in tt._dtype.DTYPES}


class _Device:
    def __repr__(self) -> str:
        return "DEVICE"


DEVICE: Any = _Device()  # stands for the device under test in factory samples


@dataclass
class Sample:
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    name: str = ""
    plain: bool = False  # tensors of the dtype under test only (used for dtype-support parity)
    # Empty or one-element inputs, where PyTorch's kernels skip some dtype checks: a dtype
    # error of ours without one of PyTorch's is accepted there.
    degenerate: bool = False
    torch_values: bool = True  # False where PyTorch's values are its own quirk (see notes)
    # The result's shape depends on the data: meta kernels raise NotImplementedError.
    meta_raises: bool = False
    # The CPU error comes from the values (an index out of range), which meta cannot see.
    data_error: bool = False


# -- values ---------------------------------------------------------------------------------
def values(
    dtype: str, shape: tuple[int, ...], rng: np.random.Generator, lo: float = -3, hi: float = 3
) -> np.ndarray:
    """Random values of ``dtype`` in [lo, hi] (integers: rounded; bool: coin flips)."""
    np_dtype = NP_DTYPES[dtype]
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype in INT_NAMES:
        low = max(int(math.ceil(lo)), 0) if dtype == "uint8" else int(math.ceil(lo))
        high = max(int(math.floor(hi)), low)
        return np.asarray(rng.integers(low, high + 1, shape)).astype(np_dtype)
    out = rng.uniform(lo, hi, shape)
    if dtype in COMPLEX_NAMES:
        out = out + 1j * rng.uniform(lo, hi, shape)
    return np.asarray(out).astype(np_dtype)


def special(dtype: str) -> np.ndarray:
    vals = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 0.5]
    arr = np.array(vals, dtype=np.float64)
    if dtype in COMPLEX_NAMES:
        out = np.empty(arr.shape, dtype=np.complex128)
        out.real, out.imag = arr, arr[::-1]
        arr = out
    return arr.astype(NP_DTYPES[dtype])


def noncontig(dtype: str, rng: np.random.Generator, **kw: Any) -> np.ndarray:
    return values(dtype, (4, 3), rng, **kw).T  # a transposed (strided) view


def up(x: Any) -> Any:
    """Inputs widened for the NumPy reference (floats to float64, complex to complex128)."""
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "c":
            return x.astype(np.complex128)
        if x.dtype.kind == "f" or x.dtype == ml_dtypes.bfloat16:
            return x.astype(np.float64)
    return x


def upf(x: Any) -> Any:
    """Inputs as float64 (complex128) for references of float-valued functions."""
    if isinstance(x, np.ndarray) and x.dtype.kind != "c":
        return x.astype(np.float64)
    return up(x)


def is_float(dtype: str) -> bool:
    return dtype in FLOAT_NAMES or dtype in COMPLEX_NAMES


# -- samples per family ------------------------------------------------------------------------------
def unary_samples(
    lo: float = -3, hi: float = 3, special_torch: bool = True
) -> Callable[[str, np.random.Generator], list[Sample]]:
    def samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
        out = [
            Sample((values(dtype, (3, 4), rng, lo, hi),), name="3x4", plain=True),
            Sample((values(dtype, (), rng, lo, hi),), name="0-d"),
            Sample((values(dtype, (0, 3), rng, lo, hi),), name="empty", degenerate=True),
            Sample((noncontig(dtype, rng, lo=lo, hi=hi),), name="noncontig"),
        ]
        if is_float(dtype):  # gelu(inf) is nan in PyTorch's vectorized kernel: not compared
            out.append(Sample((special(dtype),), name="special", torch_values=special_torch))
        return out

    return samples


def scalar_for(dtype: str, lo: float, hi: float) -> Any:
    if dtype == "bool":
        return True
    if dtype in INT_NAMES or dtype == "bool":
        return max(int(hi) - 1, 1)
    return 1.5


def binary_samples(
    lo: float = -3,
    hi: float = 3,
    other_lo: float | None = None,
    other_hi: float | None = None,
    scalars: bool = True,
    int_scalar_for_float: bool = True,
    bool_scalar: bool = True,
) -> Callable[[str, np.random.Generator], list[Sample]]:
    olo = lo if other_lo is None else other_lo
    ohi = hi if other_hi is None else other_hi

    def samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
        def a(shape: tuple[int, ...]) -> np.ndarray:
            return values(dtype, shape, rng, lo, hi)

        def b(shape: tuple[int, ...]) -> np.ndarray:
            return values(dtype, shape, rng, olo, ohi)

        out = [
            Sample((a((3, 4)), b((3, 4))), name="same", plain=True),
            Sample((a((3, 4)), b((4,))), name="broadcast-row"),
            Sample((a((3, 1)), b((1, 4))), name="broadcast-outer"),
            Sample((a(()), b((3,))), name="0-d-self"),
            Sample((a((0, 4)), b((4,))), name="empty", degenerate=True),
            Sample((noncontig(dtype, rng, lo=lo, hi=hi), b((3, 4))), name="noncontig"),
        ]
        if scalars and (bool_scalar or dtype != "bool"):
            out.append(Sample((a((2, 3)), scalar_for(dtype, olo, ohi)), name="scalar"))
            if int_scalar_for_float and is_float(dtype) and ohi >= 2:
                out.append(Sample((a((2, 3)), 2), name="int-scalar"))
        # a 0-d tensor of another dtype: does not widen a dimensioned tensor's dtype
        other = "int64" if dtype in INT_NAMES or dtype == "bool" else "float64"
        out.append(
            Sample(
                (a((2, 3)), values(other, (), rng, olo if olo > 0 else 1, ohi)),
                name="0-d-other-dtype",
            )
        )
        if is_float(dtype) and not (lo > -math.inf and lo >= 0.1):
            # PyTorch's complex kernels multiply by alpha=1+0j (inf * 0 = nan): not compared.
            out.append(
                Sample(
                    (special(dtype), special(dtype)[::-1].copy()),
                    name="special",
                    torch_values=dtype not in COMPLEX_NAMES,
                )
            )
        return out

    return samples


def reduction_samples(
    dims: tuple[Any, ...] = (None, 0, -1, (0, 1)),
    keepdim: bool = True,
    empty_dim: Any = 1,
    extra: dict[str, Any] | None = None,
    whole_only: bool = False,
) -> Callable[[str, np.random.Generator], list[Sample]]:
    kw = extra or {}

    def samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
        x = values(dtype, (3, 4), rng)
        if whole_only:
            return [
                Sample((x,), dict(kw), name="whole", plain=True),
                Sample((values(dtype, (), rng),), dict(kw), name="0-d"),
                Sample((noncontig(dtype, rng),), dict(kw), name="noncontig"),
            ]
        out = [
            Sample(
                (x,),
                {"dim": d, **kw} if d is not None else dict(kw),
                name=f"dim={d}",
                plain=d is None,
            )
            for d in dims
        ]
        if keepdim:
            out.append(Sample((x,), {"dim": dims[1], "keepdim": True, **kw}, name="keepdim"))
        zero_d = dict(kw) if None in dims else {"dim": 0, **kw}
        out.append(Sample((values(dtype, (), rng),), zero_d, name="0-d"))
        out.append(
            Sample(
                (noncontig(dtype, rng),),
                {"dim": dims[1], **kw} if dims[1] is not None else dict(kw),
                name="noncontig",
            )
        )
        if empty_dim is not None:
            out.append(
                Sample(
                    (values(dtype, (0, 3), rng),),
                    {"dim": empty_dim, **kw},
                    name="empty",
                    degenerate=True,
                )
            )
        return out

    return samples


def isclose_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = values(dtype, (3, 4), rng)
    noise = values(dtype, (3, 4), rng, 0, 1)
    out = [
        Sample((x, x), name="same", plain=True),
        Sample((x, noise), name="different"),
        Sample((x, values(dtype, (4,), rng)), {"rtol": 0.1, "atol": 0.5}, name="tolerances"),
    ]
    if is_float(dtype):
        out.append(Sample((special(dtype), special(dtype)), {"equal_nan": True}, name="equal_nan"))
        out.append(Sample((special(dtype), special(dtype)), name="nan"))
    return out


def where_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    c = rng.random((3, 4)) < 0.5
    return [
        Sample(
            (c, values(dtype, (3, 4), rng), values(dtype, (3, 4), rng)), name="same", plain=True
        ),
        Sample((c[:, :1], values(dtype, (4,), rng), values(dtype, (3, 1), rng)), name="broadcast"),
        Sample((c, values(dtype, (3, 4), rng), scalar_for(dtype, 0, 3)), name="scalar-other"),
        Sample(
            (np.array(True), values(dtype, (0, 4), rng), values(dtype, (4,), rng)),
            name="empty",
            degenerate=True,
        ),
    ]


def lerp_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    a, b = values(dtype, (3, 4), rng), values(dtype, (3, 4), rng)
    return [
        Sample((a, b, 0.3), name="scalar-weight", plain=True),
        Sample((a, b, 0.8), name="scalar-weight-high"),
        Sample(
            (a, values(dtype, (4,), rng), values(dtype, (3, 1), rng, 0, 1)), name="tensor-weight"
        ),
    ]


def addc_samples(divide: bool) -> Callable[[str, np.random.Generator], list[Sample]]:
    """addcmul/addcdiv: (self, tensor1, tensor2) and ``value``; addcdiv's divisors stay
    away from zero (integer dtypes are refused by both libraries)."""
    lo2 = 0.5 if divide else -3

    def samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
        integral = dtype == "bool" or dtype in INT_NAMES
        v: Any = True if dtype == "bool" else 2 if integral else 0.5
        a, b = values(dtype, (3, 4), rng), values(dtype, (3, 4), rng)
        c = values(dtype, (3, 4), rng, lo2, 3)
        out = [
            Sample((a, b, c), name="same", plain=True),
            Sample((a, b, c), {"value": v}, name="value"),
            Sample(
                (
                    values(dtype, (3, 1), rng),
                    values(dtype, (4,), rng),
                    values(dtype, (2, 1, 1), rng, lo2, 3),
                ),
                {"value": v},
                name="broadcast",
            ),
            Sample(
                (
                    values(dtype, (0, 4), rng),
                    values(dtype, (4,), rng),
                    values(dtype, (4,), rng, lo2, 3),
                ),
                name="empty",
                degenerate=True,
            ),
        ]
        if integral and dtype != "bool":
            # A float value with integer tensors: converted to the dtype (2.5 is 2).
            out.append(Sample((a, b, c), {"value": 2.5}, name="float-value"))
            # A value outside the dtype: PyTorch's "value cannot be converted" error.
            out.append(Sample((a, b, c), {"value": 2**40}, name="value-overflows"))
        if dtype in COMPLEX_NAMES:
            out.append(Sample((a, b, c), {"value": 0.5 - 1j}, name="complex-value"))
        elif not integral:
            out.append(Sample((a, b, c), {"value": 1j}, name="complex-value-refused"))
        return out

    return samples


def clamp_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = values(dtype, (3, 4), rng, -5, 5)
    lo, hi = (-2, 2) if dtype != "uint8" else (1, 3)
    out = [
        Sample((x,), {"min": lo, "max": hi}, name="both", plain=True),
        Sample((x,), {"min": lo}, name="min"),
        Sample((x,), {"max": hi}, name="max"),
        Sample(
            (x, values(dtype, (4,), rng, -1, 0), values(dtype, (3, 1), rng, 1, 2)), name="tensors"
        ),
    ]
    if is_float(dtype):
        out.append(Sample((x,), {"min": -0.5, "max": 1.5}, name="float-bounds"))
    return out


def matmul_pairs(
    dtype: str,
    rng: np.random.Generator,
    pairs: list[tuple[tuple[int, ...], tuple[int, ...]]],
    **kw: Any,
) -> list[Sample]:
    return [
        Sample(
            (values(dtype, a, rng, -2, 2), values(dtype, b, rng, -2, 2)),
            dict(kw),
            name=f"{a}@{b}",
            plain=i == 0,
            degenerate=0 in a or 0 in b,
        )
        for i, (a, b) in enumerate(pairs)
    ]


def linalg(name: str) -> Callable[[str, np.random.Generator], list[Sample]]:
    pairs = {
        "matmul": [
            ((2, 3), (3, 4)),
            ((3,), (3,)),
            ((3,), (3, 4)),
            ((2, 3), (3,)),
            ((5, 2, 3), (3, 4)),
            ((2, 1, 2, 3), (5, 3, 2)),
            ((0, 3), (3, 2)),
        ],
        "mm": [((2, 3), (3, 4)), ((0, 3), (3, 2)), ((1, 1), (1, 5))],
        "bmm": [((2, 3, 4), (2, 4, 5)), ((0, 2, 3), (0, 3, 1))],
        "dot": [((5,), (5,)), ((0,), (0,))],
        "vdot": [((5,), (5,)), ((1,), (1,))],
        "outer": [((3,), (4,)), ((0,), (2,))],
    }[name]

    def samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
        out = matmul_pairs(dtype, rng, pairs)
        if name in ("matmul", "mm"):
            out.append(
                Sample(
                    (values(dtype, (3, 2), rng, -2, 2).T, values(dtype, (3, 4), rng, -2, 2)),
                    name="noncontig",
                )
            )
        return out

    return samples


def addmm_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    def v(*shape: int) -> np.ndarray:
        return values(dtype, shape, rng, -2, 2)

    return [
        Sample((v(2, 4), v(2, 3), v(3, 4)), name="plain", plain=True),
        Sample((v(4), v(2, 3), v(3, 4)), {"beta": 2, "alpha": 3}, name="broadcast-beta-alpha"),
        Sample((v(2, 4), v(2, 3), v(3, 4)), {"beta": 0}, name="beta0"),
    ]


def einsum_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    def v(*shape: int) -> np.ndarray:
        return values(dtype, shape, rng, -2, 2)

    return [
        Sample(("ij,jk->ik", v(2, 3), v(3, 4)), name="mm", plain=True),
        Sample(("bij,bjk->bik", v(2, 2, 3), v(2, 3, 4)), name="bmm"),
        Sample(("i,i->", v(5), v(5)), name="dot"),
        Sample(("ij->j", v(3, 4)), name="sum"),
        Sample(("ii->i", v(3, 3)), name="diagonal"),
        Sample(("...ij->...ji", v(2, 3, 4)), name="ellipsis"),
        Sample(("ij,kj", v(2, 3), v(4, 3)), name="implicit"),
    ]


def tensordot_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    def v(*shape: int) -> np.ndarray:
        return values(dtype, shape, rng, -2, 2)

    return [
        Sample((v(2, 3), v(3, 4)), {"dims": 1}, name="dims=1", plain=True),
        Sample((v(2, 3, 4), v(3, 4, 5)), {"dims": 2}, name="dims=2"),
        Sample((v(3, 2), v(3, 4)), {"dims": ([0], [0])}, name="lists"),
    ]


def factory_samples(name: str) -> Callable[[str, np.random.Generator], list[Sample]]:
    def samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
        dt = getattr(tt, dtype)
        kw = {"dtype": dt, "device": DEVICE}
        sized = {
            "empty": [((2, 3),), ((0,),)],
            "zeros": [((2, 3),), ((),), ((0, 2),)],
            "ones": [((2, 3),), ((4,),)],
            "rand": [((2, 3),), ((0,),)],
            "randn": [((2, 3),), ((5,),)],
            "full": [((2, 3), 1), ((3,), True)],
            # (0, 3, 0.5) with an integer dtype: PyTorch gives zeros for int16 and raises
            # for int64; we raise for every integer dtype.
            "arange": [(5,), (0, 3, 0.5) if is_float(dtype) else (0, 3, 2), (10, 0, -3)],
            "linspace": [(0, 1, 5), (-1, 1, 1), (2, 10, 4)],
            "eye": [(3,), (2, 4)],
            "randint": [(0, 5, (2, 3)), (3, 4, (4,))] if dtype != "bool" else [(0, 2, (2, 3))],
        }[name]
        out = [
            Sample(
                args,
                dict(kw),
                name=f"{args}",
                plain=i == 0,
                degenerate=name == "linspace" and args[2] <= 1,
            )
            for i, args in enumerate(sized)
        ]
        if name in ("zeros", "ones", "full", "arange", "linspace", "eye"):
            out.append(Sample(sized[0], {"device": DEVICE}, name="default-dtype"))
        return out

    return samples


def normal_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    return [
        Sample(
            (0.0, 1.0, (2, 3)),
            {"dtype": getattr(tt, dtype), "device": DEVICE},
            name="floats",
            plain=True,
        ),
        Sample((values(dtype, (2, 3), rng), values(dtype, (2, 3), rng, 0, 1)), name="tensors"),
        Sample((values(dtype, (2, 3), rng), 0.5), name="tensor-mean"),
        Sample((1.0, values(dtype, (3,), rng, 0, 1)), name="tensor-std"),
    ]


def like_samples(name: str) -> Callable[[str, np.random.Generator], list[Sample]]:
    def samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
        x = values(dtype, (2, 3), rng)
        extra = (1,) if name == "full_like" else ()
        return [
            Sample((x, *extra), name="same", plain=True),
            Sample((values(dtype, (0, 2), rng), *extra), name="empty", degenerate=True),
            Sample((x, *extra), {"dtype": tt.float64}, name="dtype"),
        ]

    return samples


def to_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = values(dtype, (2, 3), rng, -3, 3)
    return [
        Sample((x, getattr(tt, target)), name=f"to-{target}", plain=target == dtype)
        for target in DTYPE_NAMES
    ]

"""The operator database: one entry per operator variant, driving every per-op test.

Imports: NumPy, ``tensor`` and the sibling ``samples``/``references`` modules (never
torch: the torch tests convert).

An ``OpEntry`` names the table row it exercises, how to call it (``call(lib, *args,
**kwargs)`` with ``lib`` the ``tensor`` module or ``torch``, so one lambda serves
both), a NumPy reference (``ref``, on the inputs' NumPy arrays; None where only the
shape/dtype is checked, as for random numbers), and ``samples(dtype_name, rng)``
(see ``samples.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from . import opdb_linalg, opdb_nn, opdb_search, opdb_shape, opdb_variants
from . import references as R
from . import samples as S
from .opentry import OpEntry, _core, _fn
from .samples import DTYPE_NAMES, FLOAT_NAMES, INT_NAMES, up, upf


def _addc_ref(divide: bool) -> Callable[..., Any]:
    """``self + value * tensor1 * tensor2`` (or ``/ tensor2``), ``value`` converted to the
    integer dtype first where the three are integers (PyTorch truncates 2.5 to 2)."""

    def reference(x: Any, t1: Any, t2: Any, value: Any = 1) -> Any:
        if all(a.dtype.kind in "iu" for a in (x, t1, t2)):
            value = int(value)
        a, b = up(t1), up(t2)
        return up(x) + (value * a / b if divide else value * a * b)

    return reference


# Unary: name -> (NumPy reference, input domain).
UNARY: dict[str, tuple[Callable[..., Any], tuple[float, float]]] = {
    "neg": (lambda x: np.negative(up(x)), (-3, 3)),
    "abs": (lambda x: np.abs(up(x)), (-3, 3)),
    # PyTorch's sign is (0 < x) - (x < 0): sign(nan) is 0
    "sign": (lambda x: np.nan_to_num(np.sign(up(x)), nan=0.0) if x.dtype != bool else x, (-3, 3)),
    "exp": (lambda x: np.exp(upf(x)), (-3, 3)),
    "exp2": (lambda x: np.exp2(upf(x)), (-3, 3)),
    "expm1": (lambda x: np.expm1(upf(x)), (-3, 3)),
    "log": (lambda x: np.log(upf(x)), (0.1, 5)),
    "log2": (lambda x: np.log2(upf(x)), (0.1, 5)),
    "log10": (lambda x: np.log10(upf(x)), (0.1, 5)),
    "log1p": (lambda x: np.log1p(upf(x)), (-0.9, 5)),
    "sqrt": (lambda x: np.sqrt(upf(x)), (0.1, 5)),
    "rsqrt": (lambda x: 1 / np.sqrt(upf(x)), (0.1, 5)),
    "square": (lambda x: np.square(up(x).astype(np.int64) if x.dtype == bool else up(x)), (-3, 3)),
    "reciprocal": (
        lambda x: np.reciprocal(up(x).astype(np.float64) if x.dtype.kind in "biu" else up(x)),
        (0.5, 5),
    ),
    "sin": (lambda x: np.sin(upf(x)), (-3, 3)),
    "cos": (lambda x: np.cos(upf(x)), (-3, 3)),
    "tan": (lambda x: np.tan(upf(x)), (-1.2, 1.2)),
    "asin": (lambda x: np.arcsin(upf(x)), (-0.95, 0.95)),
    "acos": (lambda x: np.arccos(upf(x)), (-0.95, 0.95)),
    "atan": (lambda x: np.arctan(upf(x)), (-3, 3)),
    "sinh": (lambda x: np.sinh(upf(x)), (-3, 3)),
    "cosh": (lambda x: np.cosh(upf(x)), (-3, 3)),
    "tanh": (lambda x: np.tanh(upf(x)), (-3, 3)),
    "asinh": (lambda x: np.arcsinh(upf(x)), (-3, 3)),
    "acosh": (lambda x: np.arccosh(upf(x)), (1.1, 5)),
    "atanh": (lambda x: np.arctanh(upf(x)), (-0.9, 0.9)),
    "sigmoid": (R.sigmoid, (-3, 3)),
    "relu": (lambda x: np.maximum(up(x), 0), (-3, 3)),
    "erf": (R.erf, (-3, 3)),
    "erfc": (R.erfc, (-3, 3)),
    "floor": (
        lambda x: np.floor(up(x)) if x.dtype.kind == "f" or x.dtype == ml_dtypes.bfloat16 else x,
        (-3, 3),
    ),
    "ceil": (
        lambda x: np.ceil(up(x)) if x.dtype.kind == "f" or x.dtype == ml_dtypes.bfloat16 else x,
        (-3, 3),
    ),
    "trunc": (
        lambda x: np.trunc(up(x)) if x.dtype.kind == "f" or x.dtype == ml_dtypes.bfloat16 else x,
        (-3, 3),
    ),
    "frac": (lambda x: up(x) - np.trunc(up(x)), (-3, 3)),
    "round": (R.np_round, (-3, 3)),
    "logical_not": (np.logical_not, (-3, 3)),
    "bitwise_not": (np.invert, (-3, 3)),
    "isnan": (np.isnan, (-3, 3)),
    "isinf": (np.isinf, (-3, 3)),
    "isfinite": (np.isfinite, (-3, 3)),
    "signbit": (np.signbit, (-3, 3)),
    "real": (lambda x: np.real(up(x)), (-3, 3)),
    "imag": (lambda x: np.imag(up(x)), (-3, 3)),
    "conj": (lambda x: np.conj(up(x)), (-3, 3)),
    "nan_to_num": (R.nan_to_num, (-3, 3)),
}
# PyTorch keeps these in torch.nn.functional; we test our ops.core.<name> against them.
NN_UNARY = {
    "gelu": (R.gelu, (-3, 3)),
    "silu": (lambda x: up(x) * R.sigmoid(x), (-3, 3)),
    "softplus": (lambda x: np.log1p(np.exp(up(x))), (-3, 3)),
}

# Binary: name -> (reference, samples).
BINARY: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "add": (lambda x, y: np.add(up(x), up(y)), S.binary_samples()),
    "sub": (lambda x, y: np.subtract(up(x), up(y)), S.binary_samples()),
    "mul": (lambda x, y: np.multiply(up(x), up(y)), S.binary_samples()),
    "div": (lambda x, y: np.true_divide(upf(x), upf(y)), S.binary_samples(other_lo=1, other_hi=4)),
    "floor_divide": (
        lambda x, y: np.floor_divide(up(x), up(y)),
        S.binary_samples(other_lo=1, other_hi=4),
    ),
    "remainder": (
        lambda x, y: np.remainder(up(x), up(y)),
        S.binary_samples(other_lo=1, other_hi=4),
    ),
    "fmod": (lambda x, y: np.fmod(up(x), up(y)), S.binary_samples(other_lo=1, other_hi=4)),
    # bool ** True: PyTorch short-cuts exponents 0 and 1 before checking the dtype.
    "pow": (R.pow, S.binary_samples(lo=0.5, hi=3, other_lo=0, other_hi=3, bool_scalar=False)),
    "maximum": (lambda x, y: np.maximum(up(x), up(y)), S.binary_samples(scalars=False)),
    "minimum": (lambda x, y: np.minimum(up(x), up(y)), S.binary_samples(scalars=False)),
    "atan2": (lambda x, y: np.arctan2(upf(x), upf(y)), S.binary_samples(scalars=False)),
    "hypot": (lambda x, y: np.hypot(upf(x), upf(y)), S.binary_samples(scalars=False)),
    "logaddexp": (R.logaddexp, S.binary_samples(scalars=False)),
    "logaddexp2": (lambda x, y: np.logaddexp2(upf(x), upf(y)), S.binary_samples(scalars=False)),
    "copysign": (lambda x, y: np.copysign(upf(x), upf(y)), S.binary_samples()),
    "nextafter": (lambda x, y: np.nextafter(x, y), S.binary_samples(scalars=False)),
    "eq": (
        lambda x, y: np.equal(up(x), up(y)),
        S.binary_samples(lo=0, hi=2, other_lo=0, other_hi=2),
    ),
    "ne": (
        lambda x, y: np.not_equal(up(x), up(y)),
        S.binary_samples(lo=0, hi=2, other_lo=0, other_hi=2),
    ),
    "lt": (lambda x, y: np.less(up(x), up(y)), S.binary_samples()),
    "le": (
        lambda x, y: np.less_equal(up(x), up(y)),
        S.binary_samples(lo=0, hi=2, other_lo=0, other_hi=2),
    ),
    "gt": (lambda x, y: np.greater(up(x), up(y)), S.binary_samples()),
    "ge": (
        lambda x, y: np.greater_equal(up(x), up(y)),
        S.binary_samples(lo=0, hi=2, other_lo=0, other_hi=2),
    ),
    "logical_and": (np.logical_and, S.binary_samples(lo=0, hi=2, scalars=False)),
    "logical_or": (np.logical_or, S.binary_samples(lo=0, hi=2, scalars=False)),
    "logical_xor": (np.logical_xor, S.binary_samples(lo=0, hi=2, scalars=False)),
    "bitwise_and": (lambda x, y: np.bitwise_and(x, y), S.binary_samples(lo=0, hi=9)),
    "bitwise_or": (lambda x, y: np.bitwise_or(x, y), S.binary_samples(lo=0, hi=9)),
    "bitwise_xor": (lambda x, y: np.bitwise_xor(x, y), S.binary_samples(lo=0, hi=9)),
    "bitwise_left_shift": (
        lambda x, y: np.left_shift(x, y),
        S.binary_samples(lo=0, hi=9, other_lo=0, other_hi=3),
    ),
    "bitwise_right_shift": (
        lambda x, y: np.right_shift(x, y),
        S.binary_samples(lo=0, hi=60, other_lo=0, other_hi=3),
    ),
}


def _normal_call(lib: Any, *args: Any, **kwargs: Any) -> Any:
    return lib.normal(*args, **kwargs)


def _to_call(lib: Any, x: Any, target: Any) -> Any:
    return x.to(target)


def _build() -> list[OpEntry]:
    db: list[OpEntry] = []
    for name, (ref, (lo, hi)) in UNARY.items():
        db.append(
            OpEntry(
                name,
                name,
                _fn(name),
                ref,
                # signbit of a bfloat16 NaN: PyTorch's NaN constant has the sign bit set.
                S.unary_samples(lo, hi, special_torch=name != "signbit"),
                # PyTorch's conj is a lazy view (its conjugate bit); conj_physical computes.
                torch_call=(lambda lib, x: lib.conj_physical(x)) if name == "conj" else None,
            )
        )
    db.append(
        OpEntry(
            "round_decimals",
            "round",
            lambda lib, x: lib.round(x, decimals=1),
            lambda x: R.np_round(x, 1),
            S.unary_samples(),
            supported=FLOAT_NAMES,
        )
    )
    for name, (ref, (lo, hi)) in NN_UNARY.items():
        db.append(
            OpEntry(
                name,
                name,
                _core(name),
                ref,
                S.unary_samples(lo, hi, special_torch=name != "gelu"),
                torch_call=lambda lib, *a, _n=name, **k: getattr(lib.nn.functional, _n)(*a, **k),
            )
        )
    db.append(
        OpEntry(
            "gelu_tanh",
            "gelu",
            lambda lib, x: _core("gelu")(lib, x, approximate="tanh"),
            lambda x: R.gelu(x, "tanh"),
            S.unary_samples(),
            torch_call=lambda lib, x: lib.nn.functional.gelu(x, approximate="tanh"),
        )
    )
    for name, (ref, samples) in BINARY.items():
        db.append(OpEntry(name, name, _fn(name), ref, samples))
    # Python operators and method forms
    db.append(
        OpEntry(
            "__add__",
            "add",
            lambda lib, x, y: x + y,
            lambda x, y: np.add(up(x), up(y)),
            S.binary_samples(),
        )
    )
    db.append(
        OpEntry(
            "__rsub__",
            "rsub",
            lambda lib, x, y: 2 - x,
            lambda x, y: 2 - up(x),
            S.binary_samples(scalars=False),
        )
    )
    db.append(
        OpEntry(
            "__rtruediv__",
            "div",
            lambda lib, x, y: 3 / x,
            lambda x, y: 3 / upf(x),
            S.binary_samples(lo=1, hi=4, scalars=False),
        )
    )
    db.append(
        OpEntry(
            "__rpow__",
            "pow",
            lambda lib, x, y: 2**x,
            lambda x, y: np.power(2.0, up(x)),
            S.binary_samples(lo=0, hi=3, scalars=False),
        )
    )
    db.append(
        OpEntry(
            "__rmod__",
            "remainder",
            lambda lib, x, y: 7 % x,
            lambda x, y: np.remainder(7, up(x)),
            S.binary_samples(lo=1, hi=4, scalars=False),
        )
    )
    db.append(
        OpEntry(
            "__rfloordiv__",
            "floor_divide",
            lambda lib, x, y: 7 // x,
            lambda x, y: np.floor_divide(7, up(x)),
            S.binary_samples(lo=1, hi=4, scalars=False),
        )
    )
    db.append(
        OpEntry(
            "add_alpha",
            "add",
            lambda lib, x, y: lib.add(x, y, alpha=2),
            R.add_alpha2,
            S.binary_samples(),
        )
    )
    db.append(
        OpEntry(
            "sub_alpha",
            "sub",
            lambda lib, x, y: x.sub(y, alpha=2),
            lambda x, y: np.subtract(up(x), 2 * up(y)),
            S.binary_samples(),
        )
    )
    db.append(
        OpEntry(
            "div_trunc",
            "div",
            lambda lib, x, y: lib.div(x, y, rounding_mode="trunc"),
            R.trunc_div,
            S.binary_samples(other_lo=1, other_hi=4),
            support="floor_divide",
        )
    )
    db.append(
        OpEntry(
            "div_floor",
            "div",
            lambda lib, x, y: lib.div(x, y, rounding_mode="floor"),
            lambda x, y: np.floor_divide(up(x), up(y)),
            S.binary_samples(other_lo=1, other_hi=4),
            support="floor_divide",
        )
    )
    db.append(
        OpEntry(
            "isclose",
            "isclose",
            _fn("isclose"),
            lambda x, y, **k: np.isclose(up(x), up(y), **{"rtol": 1e-5, "atol": 1e-8, **k}),
            S.isclose_samples,
        )
    )
    db.append(
        OpEntry(
            "where",
            "where",
            _fn("where"),
            lambda c, x, y: np.where(c, up(x), up(y)),
            S.where_samples,
        )
    )
    db.append(
        OpEntry(
            "lerp",
            "lerp",
            _fn("lerp"),
            lambda a, b, w: up(a) + up(w) * (up(b) - up(a)),
            S.lerp_samples,
        )
    )
    for name, divide in (("addcmul", False), ("addcdiv", True)):
        db.append(OpEntry(name, name, _fn(name), _addc_ref(divide), S.addc_samples(divide)))
    db.append(
        OpEntry(
            "clamp",
            "clamp",
            _fn("clamp"),
            lambda x, lo=None, hi=None, **k: np.clip(
                up(x), up(k.get("min", lo)), up(k.get("max", hi))
            ),
            S.clamp_samples,
        )
    )
    # reductions
    db.append(OpEntry("sum", "sum", _fn("sum"), R.sum, S.reduction_samples()))
    db.append(
        OpEntry(
            "sum_method",
            "sum",
            lambda lib, x, **k: x.sum(**k),
            R.sum,
            S.reduction_samples(dims=(None, 1)),
        )
    )
    db.append(
        OpEntry(
            "sum_dtype",
            "sum",
            lambda lib, x, **k: lib.sum(x, dtype=lib.float64, **k),
            lambda x, **k: R.sum(up(x).real if x.dtype.kind == "c" else x, **k),
            S.reduction_samples(dims=(None, 0)),
        )
    )
    db.append(
        OpEntry(
            "mean",
            "mean",
            _fn("mean"),
            lambda x, dim=None, keepdim=False: np.mean(up(x), axis=R.axis(dim), keepdims=keepdim),
            S.reduction_samples(),
        )
    )
    db.append(
        OpEntry(
            "prod",
            "prod",
            _fn("prod"),
            lambda x, dim=None, keepdim=False: np.prod(up(x), axis=dim, keepdims=keepdim),
            S.reduction_samples(dims=(None, 0, -1)),
            tol=10,
        )
    )
    for name in ("amax", "amin"):
        npf = np.max if name == "amax" else np.min
        db.append(
            OpEntry(
                name,
                name,
                _fn(name),
                lambda x, dim=(), keepdim=False, f=npf: f(
                    up(x), axis=R.axis(dim) if dim != () else None, keepdims=keepdim
                ),
                S.reduction_samples(),
            )
        )
    db.append(
        OpEntry(
            "max", "max", _fn("max"), lambda x: np.max(up(x)), S.reduction_samples(whole_only=True)
        )
    )
    db.append(
        OpEntry(
            "min", "min", _fn("min"), lambda x: np.min(up(x)), S.reduction_samples(whole_only=True)
        )
    )
    db.append(
        OpEntry(
            "max_dim",
            "max",
            lambda lib, x, **k: lib.max(x, **k),
            lambda x, dim, keepdim=False: R.max_dim(x, dim, keepdim),
            S.reduction_samples(dims=(0, 1, -1), empty_dim=1),
        )
    )
    db.append(
        OpEntry(
            "min_dim",
            "min",
            lambda lib, x, **k: x.min(**k),
            lambda x, dim, keepdim=False: R.min_dim(x, dim, keepdim),
            S.reduction_samples(dims=(0, 1, -1), empty_dim=1),
        )
    )
    db.append(
        OpEntry(
            "max_other",
            "max",
            lambda lib, x, y: lib.max(x, y),
            lambda x, y: np.maximum(up(x), up(y)),
            S.binary_samples(scalars=False),
        )
    )
    for name in ("argmax", "argmin"):
        npf = np.argmax if name == "argmax" else np.argmin
        db.append(
            OpEntry(
                name,
                name,
                _fn(name),
                lambda x, dim=None, keepdim=False, f=npf: f(up(x), axis=dim, keepdims=keepdim),
                S.reduction_samples(dims=(None, 0, -1)),
            )
        )
    db.append(OpEntry("var", "var", _fn("var"), R.var, S.reduction_samples()))
    db.append(
        OpEntry(
            "var_correction0",
            "var",
            _fn("var"),
            R.var,
            S.reduction_samples(dims=(None, 1), extra={"correction": 0}),
        )
    )
    db.append(
        OpEntry(
            "std",
            "std",
            _fn("std"),
            lambda x, dim=None, keepdim=False: np.sqrt(R.var(x, dim, 1, keepdim)),
            S.reduction_samples(),
        )
    )
    db.append(
        OpEntry(
            "all",
            "all",
            _fn("all"),
            lambda x, dim=None, keepdim=False: np.all(x, axis=dim, keepdims=keepdim),
            S.reduction_samples(dims=(None, 1, -1)),
        )
    )
    db.append(
        OpEntry(
            "any",
            "any",
            _fn("any"),
            lambda x, dim=None, keepdim=False: np.any(x, axis=dim, keepdims=keepdim),
            S.reduction_samples(dims=(None, 1, -1)),
        )
    )
    # complex logsumexp: the imaginary part is defined modulo 2*pi; PyTorch picks another branch
    db.append(
        OpEntry(
            "logsumexp",
            "logsumexp",
            _fn("logsumexp"),
            R.logsumexp,
            S.reduction_samples(dims=(1, 0, (0, 1)), empty_dim=1),
            torch_values_for=FLOAT_NAMES + INT_NAMES + ("bool",),
        )
    )
    for name in ("cumsum", "cumprod"):
        npf = np.cumsum if name == "cumsum" else np.cumprod
        db.append(
            OpEntry(
                name,
                name,
                _fn(name),
                lambda x, dim, f=npf: f(up(x), axis=dim) if np.ndim(x) else up(x),
                S.reduction_samples(dims=(0, 1, -1), keepdim=False, empty_dim=0),
            )
        )
    db.append(
        OpEntry("norm", "norm", _fn("norm"), R.norm, S.reduction_samples(dims=(None, 1, (0, 1))))
    )
    db.append(
        OpEntry(
            "norm_p1",
            "norm",
            lambda lib, x, **k: lib.norm(x, p=1, **k),
            lambda x, **k: R.norm(x, 1, **k),
            S.reduction_samples(dims=(None, 1)),
        )
    )
    db.append(
        OpEntry(
            "norm_inf",
            "norm",
            lambda lib, x, **k: lib.norm(x, p=math.inf, **k),
            lambda x, **k: R.norm(x, math.inf, **k),
            S.reduction_samples(dims=(None, 1)),
        )
    )
    db.append(
        OpEntry(
            "vector_norm",
            "linalg_vector_norm",
            _fn("linalg.vector_norm"),
            R.norm,
            S.reduction_samples(dims=(None, 1, (0, 1))),
        )
    )
    db.append(
        OpEntry(
            "count_nonzero",
            "count_nonzero",
            _fn("count_nonzero"),
            lambda x, dim=None: np.count_nonzero(x, axis=R.axis(dim)),
            S.reduction_samples(dims=(None, 0, (0, 1)), keepdim=False),
        )
    )
    # linear algebra
    for name in ("matmul", "mm", "bmm", "dot", "vdot", "outer"):
        ref = {
            "matmul": np.matmul,
            "mm": np.matmul,
            "bmm": np.matmul,
            "dot": np.dot,
            "vdot": np.vdot,
            "outer": np.outer,
        }[name]
        db.append(
            OpEntry(name, name, _fn(name), lambda x, y, f=ref: f(up(x), up(y)), S.linalg(name))
        )
    db.append(
        OpEntry(
            "__matmul__",
            "matmul",
            lambda lib, x, y: x @ y,
            lambda x, y: np.matmul(up(x), up(y)),
            S.linalg("matmul"),
        )
    )
    db.append(
        OpEntry(
            "addmm",
            "addmm",
            _fn("addmm"),
            lambda s, a, b, beta=1, alpha=1: (
                beta * up(s) + alpha * np.matmul(up(a), up(b))
                if beta
                else alpha * np.matmul(up(a), up(b))
            ),
            S.addmm_samples,
        )
    )
    # bool: one-operand equations only (two bool operands need a product PyTorch lacks)
    db.append(
        OpEntry(
            "einsum",
            "einsum",
            _fn("einsum"),
            lambda eq, *xs: np.einsum(
                eq, *[up(x) if x.dtype != bool else x.astype(np.int64) for x in xs]
            ),
            S.einsum_samples,
            supported=tuple(d for d in DTYPE_NAMES if d != "bool"),
        )
    )
    db.append(
        OpEntry(
            "tensordot",
            "tensordot",
            _fn("tensordot"),
            lambda a, b, dims: np.tensordot(up(a), up(b), dims),
            S.tensordot_samples,
        )
    )
    # conversions and creation
    db.append(
        OpEntry(
            "to", "_to_copy", _to_call, lambda x, target: x.astype(target.numpy_dtype), S.to_samples
        )
    )
    for name in (
        "empty",
        "zeros",
        "ones",
        "full",
        "arange",
        "linspace",
        "eye",
        "rand",
        "randn",
        "randint",
    ):
        ref = {
            "zeros": lambda *s, **k: np.zeros(s[0]),
            "ones": lambda *s, **k: np.ones(s[0]),
            "full": lambda s, v, **k: np.full(s, v),
            "arange": R.arange_ref,
            "linspace": R.linspace_ref,
            "eye": lambda *a, **k: np.eye(*a),
        }.get(name)
        db.append(OpEntry(name, name, _fn(name), ref, S.factory_samples(name), random=ref is None))
    db.append(OpEntry("normal", "normal", _normal_call, None, S.normal_samples, random=True))
    for name in ("empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like"):
        ref = {
            "zeros_like": lambda x, **k: np.zeros_like(up(x)),
            "ones_like": lambda x, **k: np.ones_like(up(x)),
            "full_like": lambda x, v, **k: np.full_like(up(x), v),
        }.get(name)
        db.append(OpEntry(name, name, _fn(name), ref, S.like_samples(name), random=ref is None))
    db.extend(opdb_shape.entries())
    db.extend(opdb_nn.entries())
    db.extend(opdb_linalg.entries())
    db.extend(opdb_search.entries())
    db.extend(opdb_variants.entries(db))  # add_, add.out, ... from the entries above
    return db


OPDB: list[OpEntry] = _build()

"""The operator table: every built-in operator of this package, defined once.

Imports: ``tensor._dtype``, ``_opinfo`` and the row modules ``_optable_shape`` (shapes,
views, indexing, sorting), ``_optable_nn`` (nn functions) and ``_optable_variants``
(in-place and out= rows, generated).  ``tensor._ops`` reads the table to define the
schemas in the ``core`` namespace and to generate ``tt.<name>`` functions and
Tensor methods; the backends read it for their dtype rules; the op database in
``tests/ops`` checks itself against it.

A row (``OpInfo``) holds:
- ``schemas``: ATen-style schemas, one per overload; the first gives the Python
  signature (with ``self`` spelled ``input`` in the function form).
- ``dtypes``: the dtypes the op accepts, after type promotion of its inputs, and
  ``rule``: maps that dtype to (compute dtype, result dtype).  One table, so CPU,
  CUDA and Meta kernels agree by construction.
- how it appears in Python: ``function`` (``"linalg.vector_norm"``, or None),
  ``method``, Python operators (``dunders``; ``rdunders`` for reflected forms).
"""

from __future__ import annotations

from . import _dtype, _optable_nn, _optable_shape, _optable_variants
from ._dtype import dtype
from ._opinfo import (
    ALL,
    FLOATS,
    INEXACT,
    INT_BOOL,
    INTS,
    NO_BOOL,
    REAL,
    REAL_NO_BOOL,
    OpInfo,
    Rule,
    all_any,
    bool_to_int64,
    float_to_real,
    int_to_int64,
    same,
    to_bool,
    to_float,
    to_int64,
    to_real,
)

__all__ = ["OP_TABLE", "OpInfo", "by_name"]


def _unary(
    name: str, dtypes: frozenset[dtype] = ALL, rule: Rule = to_float, **kw: object
) -> OpInfo:
    return OpInfo(name, (f"{name}(Tensor self) -> Tensor",), "unary", dtypes, rule, **kw)  # type: ignore[arg-type]


def _binary(
    name: str,
    dtypes: frozenset[dtype] = ALL,
    rule: Rule = same,
    *,
    scalar: bool = True,
    extra: str = "",
    **kw: object,
) -> OpInfo:
    schemas = [f"{name}.Tensor(Tensor self, Tensor other{extra}) -> Tensor"]
    if scalar:
        schemas.append(f"{name}.Scalar(Tensor self, Scalar other{extra}) -> Tensor")
    return OpInfo(name, tuple(schemas), "binary", dtypes, rule, **kw)  # type: ignore[arg-type]


def _tensor_only(name: str, dtypes: frozenset[dtype], rule: Rule = same, **kw: object) -> OpInfo:
    return OpInfo(
        name,
        (f"{name}(Tensor self, Tensor other) -> Tensor",),
        "binary",
        dtypes,
        rule,
        **kw,  # type: ignore[arg-type]
    )


_ALPHA = ", *, Scalar alpha=1"
_DIMS = "int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None"
_FACTORY = "ScalarType? dtype=None, Device? device=None"
_RANDOM = "Generator? generator=None, ScalarType? dtype=None, Device? device=None"

_BASE_ROWS: tuple[OpInfo, ...] = (
    # -- elementwise, binary --------------------------------------------------------------
    _binary("add", extra=_ALPHA, dunders=("__add__",), rdunders=("__radd__",)),
    _binary("sub", NO_BOOL, extra=_ALPHA, dunders=("__sub__",)),
    _binary("rsub", NO_BOOL, extra=_ALPHA, function=None, method=False, rdunders=("__rsub__",)),
    _binary("mul", dunders=("__mul__",), rdunders=("__rmul__",)),
    _binary(
        "div", rule=to_float, extra=", *, str? rounding_mode=None",
        dunders=("__truediv__",), rdunders=("__rtruediv__",),
    ),
    _binary("floor_divide", REAL_NO_BOOL, dunders=("__floordiv__",), rdunders=("__rfloordiv__",)),
    OpInfo(
        "remainder",
        (
            "remainder.Tensor(Tensor self, Tensor other) -> Tensor",
            "remainder.Scalar(Tensor self, Scalar other) -> Tensor",
            "remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor",
        ),
        "binary", REAL_NO_BOOL, dunders=("__mod__",), rdunders=("__rmod__",),
    ),
    _binary("fmod", REAL_NO_BOOL),
    OpInfo(
        "pow",
        (
            "pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
            "pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
            "pow.Scalar(Scalar self, Tensor exponent) -> Tensor",
        ),
        "binary", NO_BOOL, dunders=("__pow__",), rdunders=("__rpow__",),
    ),
    _tensor_only("maximum", REAL),
    _tensor_only("minimum", REAL),
    _tensor_only("atan2", REAL, to_float),
    _tensor_only("hypot", FLOATS),
    _binary("eq", rule=to_bool, dunders=("__eq__",)),
    _binary("ne", rule=to_bool, dunders=("__ne__",)),
    _binary("lt", REAL, to_bool, dunders=("__lt__",)),
    _binary("le", REAL, to_bool, dunders=("__le__",)),
    _binary("gt", REAL, to_bool, dunders=("__gt__",)),
    _binary("ge", REAL, to_bool, dunders=("__ge__",)),
    _tensor_only("logical_and", ALL, to_bool),
    _tensor_only("logical_or", ALL, to_bool),
    _tensor_only("logical_xor", ALL, to_bool),
    _binary("bitwise_and", INT_BOOL, dunders=("__and__",), rdunders=("__rand__",)),
    _binary("bitwise_or", INT_BOOL, dunders=("__or__",), rdunders=("__ror__",)),
    _binary("bitwise_xor", INT_BOOL, dunders=("__xor__",), rdunders=("__rxor__",)),
    OpInfo(
        "bitwise_left_shift",
        (
            "bitwise_left_shift.Tensor(Tensor self, Tensor other) -> Tensor",
            "bitwise_left_shift.Tensor_Scalar(Tensor self, Scalar other) -> Tensor",
        ),
        "binary", INTS, dunders=("__lshift__",),
    ),
    OpInfo(
        "bitwise_right_shift",
        (
            "bitwise_right_shift.Tensor(Tensor self, Tensor other) -> Tensor",
            "bitwise_right_shift.Tensor_Scalar(Tensor self, Scalar other) -> Tensor",
        ),
        "binary", INTS, dunders=("__rshift__",),
    ),
    OpInfo(
        "isclose",
        (
            "isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, "
            "bool equal_nan=False) -> Tensor",
        ),
        "binary", ALL, to_bool,
    ),
    OpInfo(
        "where",
        (
            "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
            "where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor",
            "where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor",
            "where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor",
        ),
        "ternary", ALL, py="where",
    ),
    OpInfo(
        "lerp",
        (
            "lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor",
            "lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor",
        ),
        "ternary", INEXACT,
    ),
    OpInfo(
        "clamp",
        (
            "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
            "clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
        ),
        "ternary", REAL_NO_BOOL,
    ),
    OpInfo(
        "addcmul",
        ("addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",),
        "ternary", NO_BOOL,
    ),
    OpInfo(
        "addcdiv",
        ("addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",),
        # Integer results are refused before (PyTorch: "Integer division with addcdiv ...").
        "ternary", INEXACT,
    ),
    # -- elementwise, unary ----------------------------------------------------------------
    _unary("neg", NO_BOOL, same, dunders=("__neg__",)),
    _unary("abs", NO_BOOL, to_real, dunders=("__abs__",)),
    _unary("sign", REAL, same),
    _unary("exp"),
    _unary("exp2"),
    _unary("expm1"),
    _unary("log"),
    _unary("log2"),
    _unary("log10"),
    _unary("log1p"),
    _unary("sqrt"),
    _unary("rsqrt"),
    _unary("square", ALL, bool_to_int64),
    _unary("reciprocal"),
    _unary("sin"),
    _unary("cos"),
    _unary("tan"),
    _unary("asin"),
    _unary("acos"),
    _unary("atan"),
    _unary("sinh"),
    _unary("cosh"),
    _unary("tanh"),
    _unary("asinh"),
    _unary("acosh"),
    _unary("atanh"),
    _unary("sigmoid"),
    _unary("relu", REAL_NO_BOOL, same),
    _unary("erf", REAL),
    _unary("erfc", REAL),
    _unary("floor", REAL_NO_BOOL, same),
    _unary("ceil", REAL_NO_BOOL, same),
    _unary("trunc", REAL_NO_BOOL, same),
    _unary("frac", FLOATS, same),
    _unary("logical_not", ALL, to_bool),
    _unary("bitwise_not", INT_BOOL, same, dunders=("__invert__",)),
    _unary("isnan", ALL, to_bool),
    _unary("isinf", ALL, to_bool),
    _unary("isfinite", ALL, to_bool),
    _unary("silu", INEXACT, same, function="nn.functional.silu", method=False),
    OpInfo("round", ("round(Tensor self, *, int decimals=0) -> Tensor",), "unary", REAL_NO_BOOL),
    OpInfo(
        "gelu", ("gelu(Tensor self, *, str approximate='none') -> Tensor",), "unary", FLOATS,
        function="nn.functional.gelu", method=False,
    ),
    OpInfo(
        "softplus", ("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor",),
        "unary", FLOATS, function="nn.functional.softplus", method=False,
    ),
    OpInfo(
        "nan_to_num",
        ("nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor",),
        "unary", ALL,
    ),
    # -- reductions and scans ----------------------------------------------------------------
    OpInfo("sum", (f"sum(Tensor self, {_DIMS}) -> Tensor",), "reduction", ALL, int_to_int64),
    OpInfo("mean", (f"mean(Tensor self, {_DIMS}) -> Tensor",), "reduction", INEXACT),
    OpInfo(
        "prod",
        ("prod(Tensor self, int? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",),
        "reduction", ALL, int_to_int64,
    ),
    OpInfo("amax", ("amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",), "reduction", REAL),
    OpInfo("amin", ("amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",), "reduction", REAL),
    OpInfo(
        "max",
        (
            "max(Tensor self) -> Tensor",
            "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
            "max.other(Tensor self, Tensor other) -> Tensor",
        ),
        "reduction", REAL, py="max",
    ),
    OpInfo(
        "min",
        (
            "min(Tensor self) -> Tensor",
            "min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
            "min.other(Tensor self, Tensor other) -> Tensor",
        ),
        "reduction", REAL, py="min",
    ),
    OpInfo(
        "argmax", ("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",),
        "reduction", REAL_NO_BOOL, to_int64,
    ),
    OpInfo(
        "argmin", ("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",),
        "reduction", REAL_NO_BOOL, to_int64,
    ),
    OpInfo(
        "var",
        ("var(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",),
        "reduction", INEXACT, float_to_real,
    ),
    OpInfo(
        "std",
        ("std(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",),
        "reduction", INEXACT, float_to_real,
    ),
    OpInfo("all", ("all(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor",), "reduction", ALL, all_any),
    OpInfo("any", ("any(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor",), "reduction", ALL, all_any),
    OpInfo(
        "logsumexp", ("logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",),
        "reduction", ALL, to_float,
    ),
    OpInfo(
        "cumsum", ("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",),
        "scan", ALL, int_to_int64,
    ),
    OpInfo(
        "cumprod", ("cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",),
        "scan", ALL, int_to_int64,
    ),
    OpInfo(
        "norm",
        ("norm(Tensor self, Scalar? p=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",),
        "reduction", INEXACT, float_to_real, py="norm",
    ),
    OpInfo(
        "count_nonzero", ("count_nonzero(Tensor self, int[1]? dim=None) -> Tensor",),
        "reduction", ALL, to_int64,
    ),
    # -- linear algebra ------------------------------------------------------------------------
    OpInfo(
        "matmul", ("matmul(Tensor self, Tensor other) -> Tensor",), "linalg", NO_BOOL,
        dunders=("__matmul__",),
    ),
    OpInfo("mm", ("mm(Tensor self, Tensor mat2) -> Tensor",), "linalg", NO_BOOL),
    OpInfo("bmm", ("bmm(Tensor self, Tensor mat2) -> Tensor",), "linalg", NO_BOOL),
    OpInfo(
        "addmm",
        ("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",),
        "linalg", NO_BOOL,
    ),
    OpInfo("dot", ("dot(Tensor self, Tensor tensor) -> Tensor",), "linalg", NO_BOOL),
    OpInfo("vdot", ("vdot(Tensor self, Tensor other) -> Tensor",), "linalg", NO_BOOL),
    OpInfo("outer", ("outer(Tensor self, Tensor vec2) -> Tensor",), "linalg", ALL),
    OpInfo(
        "einsum", ("einsum(str equation, Tensor[] tensors) -> Tensor",), "linalg", ALL,
        method=False, py="einsum",
    ),
    OpInfo(
        "tensordot",
        ("tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor",),
        "linalg", NO_BOOL, method=False, py="tensordot",
    ),
    OpInfo(
        "linalg_vector_norm",
        (
            "linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, "
            "*, ScalarType? dtype=None) -> Tensor",
        ),
        "reduction", INEXACT, float_to_real, function="linalg.vector_norm", method=False,
    ),
    # -- conversions and creation ----------------------------------------------------------------
    OpInfo(
        "_to_copy",
        ("_to_copy(Tensor self, *, ScalarType? dtype=None, Device? device=None, bool non_blocking=False) -> Tensor",),
        "conversion", function=None, method=False,
    ),
    OpInfo("empty", (f"empty(SymInt[] size, *, {_FACTORY}) -> Tensor",), "factory", py="empty", method=False),
    OpInfo("zeros", (f"zeros(SymInt[] size, *, {_FACTORY}) -> Tensor",), "factory", py="zeros", method=False),
    OpInfo("ones", (f"ones(SymInt[] size, *, {_FACTORY}) -> Tensor",), "factory", py="ones", method=False),
    OpInfo(
        "full", (f"full(SymInt[] size, Scalar fill_value, *, {_FACTORY}) -> Tensor",), "factory",
        py="full", method=False,
    ),
    OpInfo(
        "arange", (f"arange(Scalar start, Scalar end, Scalar step=1, *, {_FACTORY}) -> Tensor",),
        "factory", REAL_NO_BOOL, py="arange", method=False,
    ),
    OpInfo(
        "linspace", (f"linspace(Scalar start, Scalar end, int steps, *, {_FACTORY}) -> Tensor",),
        "factory", NO_BOOL, py="linspace", method=False,
    ),
    OpInfo("eye", (f"eye(SymInt n, SymInt? m=None, *, {_FACTORY}) -> Tensor",), "factory", py="eye", method=False),
    OpInfo("rand", (f"rand(SymInt[] size, *, {_RANDOM}) -> Tensor",), "factory", INEXACT, py="rand", method=False),
    OpInfo("randn", (f"randn(SymInt[] size, *, {_RANDOM}) -> Tensor",), "factory", INEXACT, py="randn", method=False),
    OpInfo(
        "randint", (f"randint(SymInt low, SymInt high, SymInt[] size, *, {_RANDOM}) -> Tensor",),
        "factory", REAL, py="randint", method=False,
    ),
    OpInfo(
        "normal",
        (
            "normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None) -> Tensor",
            "normal.Tensor_float(Tensor mean, float std=1, *, Generator? generator=None) -> Tensor",
            "normal.float_Tensor(float mean, Tensor std, *, Generator? generator=None) -> Tensor",
            f"normal.float_float(float mean, float std, SymInt[] size, *, {_RANDOM}) -> Tensor",
        ),
        "factory", INEXACT, py="normal", method=False,
    ),
    OpInfo("empty_like", (f"empty_like(Tensor self, *, {_FACTORY}) -> Tensor",), "like", py="like", method=False),
    OpInfo("zeros_like", (f"zeros_like(Tensor self, *, {_FACTORY}) -> Tensor",), "like", py="like", method=False),
    OpInfo("ones_like", (f"ones_like(Tensor self, *, {_FACTORY}) -> Tensor",), "like", py="like", method=False),
    OpInfo(
        "full_like", (f"full_like(Tensor self, Scalar fill_value, *, {_FACTORY}) -> Tensor",), "like",
        py="like", method=False,
    ),
    OpInfo("rand_like", (f"rand_like(Tensor self, *, {_FACTORY}) -> Tensor",), "like", INEXACT, py="like", method=False),
    OpInfo("randn_like", (f"randn_like(Tensor self, *, {_FACTORY}) -> Tensor",), "like", INEXACT, py="like", method=False),
)  # fmt: skip

OP_TABLE: tuple[OpInfo, ...] = _optable_variants.with_variants(
    _BASE_ROWS + _optable_shape.ROWS + _optable_nn.ROWS
)

_BY_NAME = {op.name: op for op in OP_TABLE}


def by_name(name: str) -> OpInfo:
    """The table row of an operator (``KeyError`` if it is not built in)."""
    return _BY_NAME[name]


def refresh_all() -> None:
    for op in OP_TABLE:
        op.refresh()


refresh_all()
_dtype.on_default_dtype_change(refresh_all)

"""Which operators run our raw CUDA kernels, and with which functor: the one table of them.

Imports: the standard library only, never CuPy: the compile check
(tests/backends/test_cuda_compile.py) reads this on machines without a GPU to
instantiate every kernel the launchers can ask for.

A new elementwise operator is one row here (its functor's struct name in
``_include/ad_functors.cuh``) plus the functor; its dtypes come from the operator's
row in the front end's operator table (``op``, an ``OpInfo``; ``op_info(name)`` looks
one up: ``FrontEnd.op_info``).  Complex dtypes, and the rows' ``fallback_dtypes``, run
CuPy's own kernels instead (``backends.cuda.elementwise``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

__all__ = [
    "ALPHA_DTYPES",
    "ALPHA_FUNCTOR",
    "BINARY",
    "CTYPES",
    "OPMATH",
    "ISIN_TYPES",
    "REDUCTIONS",
    "SCANS",
    "SEARCH_TYPES",
    "UNARY",
    "UNARY_PARAMS",
    "alpha_dtypes",
    "elementwise_instances",
    "raw_dtypes",
    "reduction_instances",
    "search_instances",
]

# dtype name -> CUDA C type of its storage.
CTYPES: dict[str, str] = {
    "bool": "bool",
    "uint8": "unsigned char",
    "int8": "signed char",
    "int16": "short",
    "int32": "int",
    "int64": "long long",
    "float16": "__half",
    "bfloat16": "__nv_bfloat16",
    "float32": "float",
    "float64": "double",
}
# The compute ("opmath") type of a storage type: half precision computes in float.
OPMATH: dict[str, str] = {"float16": "float32", "bfloat16": "float32"}

# Operators whose math is one functor (operator name -> functor).
UNARY: dict[str, str] = {
    "neg": "Neg", "abs": "Abs", "sign": "Sign", "exp": "Exp", "exp2": "Exp2",
    "expm1": "Expm1", "log": "Log", "log2": "Log2", "log10": "Log10", "log1p": "Log1p",
    "sqrt": "Sqrt", "rsqrt": "Rsqrt", "square": "Square", "reciprocal": "Reciprocal",
    "sin": "Sin", "cos": "Cos", "tan": "Tan", "asin": "Asin", "acos": "Acos", "atan": "Atan",
    "sinh": "Sinh", "cosh": "Cosh", "tanh": "Tanh", "asinh": "Asinh", "acosh": "Acosh",
    "atanh": "Atanh", "sigmoid": "Sigmoid", "relu": "Relu", "silu": "Silu", "erf": "Erf",
    "erfc": "Erfc", "floor": "Floor", "ceil": "Ceil", "trunc": "Trunc", "frac": "Frac",
    "logical_not": "LogicalNot", "bitwise_not": "BitwiseNot", "isnan": "IsNan",
    "isinf": "IsInf", "isfinite": "IsFinite",
}  # fmt: skip
# One-tensor operators with arguments, which become the functor's parameters.
UNARY_PARAMS: dict[str, str] = {
    "round": "Round", "gelu": "Gelu", "softplus": "Softplus", "nan_to_num": "NanToNum",
}  # fmt: skip
BINARY: dict[str, str] = {
    "add": "Add", "sub": "Sub", "mul": "Mul", "div": "TrueDiv",
    "floor_divide": "FloorDivide", "remainder": "Remainder", "fmod": "Fmod", "pow": "Pow",
    "maximum": "Maximum", "minimum": "Minimum", "atan2": "Atan2", "hypot": "Hypot",
    "eq": "Eq", "ne": "Ne", "lt": "Lt", "le": "Le", "gt": "Gt", "ge": "Ge",
    "logical_and": "LogicalAnd", "logical_or": "LogicalOr", "logical_xor": "LogicalXor",
    "bitwise_and": "BitwiseAnd", "bitwise_or": "BitwiseOr", "bitwise_xor": "BitwiseXor",
    "bitwise_left_shift": "ShiftLeft", "bitwise_right_shift": "ShiftRight",
    "nextafter": "NextAfter",
}  # fmt: skip
# add/sub with an alpha other than 1 (``AddAlpha``: fused, alpha the functor's p0): the
# floating dtypes of add's row (integers compute exactly in the shared formula).
ALPHA_FUNCTOR = "AddAlpha"
ALPHA_DTYPES = ("float16", "bfloat16", "float32", "float64")
# Functors that compute in the storage type, half precision included (no opmath): the
# neighbour of a float16 is found on float16's own bits.
STORAGE_COMPUTE = frozenset({"NextAfter"})
# Rows whose raw kernel serves floating dtypes only (PyTorch's integer pow rules for
# negative exponents live in the shared formula, run with CuPy's kernels).
FLOAT_ONLY = frozenset({"pow"})

# Reductions over rows (reduce.cu's operator structs) and scans.
REDUCTIONS: dict[str, str] = {
    "sum": "SumOp", "mean": "SumOp", "prod": "ProdOp", "amax": "MaxOp", "amin": "MinOp",
    "max": "MaxOp", "min": "MinOp", "all": "AllOp", "any": "AnyOp",
}  # fmt: skip
SCANS: dict[str, str] = {"cumsum": "SumOp", "cumprod": "ProdOp"}
# Accumulation types of the reductions: half precision in float, integer sums in int64.
_ACC = {"float16": "float32", "bfloat16": "float32"}
_ACCUMULATING = frozenset({"sum", "mean", "prod", "cumsum", "cumprod"})


def raw_dtypes(op: Any) -> list[tuple[str, str]]:
    """(compute dtype, result dtype) names of operator ``op`` (its table row) that raw
    kernels serve."""
    name = op.name
    pairs = set()
    for d in op.dtypes:
        rule = op.rule(d)
        if rule is None:
            continue
        cdt, odt = rule
        if cdt.name not in CTYPES or odt.name not in CTYPES:
            continue  # complex: CuPy's kernels
        if name in FLOAT_ONLY and not cdt.is_floating_point:
            continue
        pairs.add((cdt.name, odt.name))
    return sorted(pairs)


def ctype(dtype_name: str) -> str:
    return CTYPES[dtype_name]


def compute_ctype(dtype_name: str) -> str:
    return CTYPES[OPMATH.get(dtype_name, dtype_name)]


def unary_expressions(functor: str, cdt: str, odt: str) -> dict[str, str]:
    args = f"ad::{functor}, {ctype(odt)}, {compute_ctype(cdt)}, {ctype(cdt)}"
    return {"contig": f"unary_contig<{args}>", "strided": f"unary_strided<{args}>"}


def binary_compute(functor: str, cdt: str) -> str:
    """The compute dtype name of binary ``functor`` on storage dtype ``cdt``."""
    return cdt if functor in STORAGE_COMPUTE else OPMATH.get(cdt, cdt)


def binary_expressions(functor: str, cdt: str, odt: str) -> dict[str, str]:
    r, c, a = ctype(odt), ctype(binary_compute(functor, cdt)), ctype(cdt)
    return {
        "contig": f"binary_contig<ad::{functor}, {r}, {c}, {a}, {a}>",
        "strided": f"binary_strided<ad::{functor}, {r}, {c}, {a}, {a}>",
        "scalar": f"binary_scalar<ad::{functor}, {r}, {c}, {a}>",
        "scalar_contig": f"binary_scalar_contig<ad::{functor}, {r}, {c}, {a}>",
    }


def reduction_types(name: str, dtype_name: str) -> tuple[str, str, str]:
    """(input, accumulation, output) dtype names of reduction/scan ``name`` on ``dtype_name``
    (the compute dtype the shared reduction code hands the kernel)."""
    if name in ("all", "any"):
        return dtype_name, "bool", "bool"
    if dtype_name in _ACC:
        return dtype_name, _ACC[dtype_name], dtype_name
    if name in _ACCUMULATING and dtype_name in ("bool", "uint8", "int8", "int16", "int32"):
        return dtype_name, "int64", dtype_name
    return dtype_name, dtype_name, dtype_name


def reduction_expressions(name: str, dtype_name: str) -> dict[str, str]:
    i, acc, out = reduction_types(name, dtype_name)
    ci, cacc, cout = ctype(i), ctype(acc), ctype(out)
    if name in SCANS:
        return {"scan": f"scan_rows<ad::{SCANS[name]}, {ci}, {cacc}, {cout}>"}
    op = REDUCTIONS[name]
    return {
        "rows": f"reduce_rows<ad::{op}, {ci}, {cacc}, {cout}>",
        "partial": f"reduce_rows<ad::{op}, {ci}, {cacc}, {cacc}>",
        "finish": f"reduce_rows<ad::{op}, {cacc}, {cacc}, {cout}>",
        "flat": f"reduce_flat<ad::{op}, {ci}, {cacc}, {cacc}>",
    }


def reduction_dtypes(op: Any) -> list[str]:
    """The compute dtype names of reduction or scan ``op`` (its table row) that raw kernels
    serve (half precision accumulates in float32)."""
    out = set()
    for d in op.dtypes:
        rule = op.rule(d)
        if rule is None:
            continue
        cdt = rule[0].name
        if op.name in _ACCUMULATING:
            cdt = _ACC.get(cdt, cdt)
        if cdt in CTYPES:
            out.add(cdt)
    return sorted(out)


def elementwise_instances(op_info: Callable[[str], Any]) -> Iterator[str]:
    """Every name expression of elementwise.cu the launchers can request."""
    for table, expressions in ((UNARY, unary_expressions), (UNARY_PARAMS, unary_expressions)):
        for name, functor in table.items():
            for cdt, odt in raw_dtypes(op_info(name)):
                yield from expressions(functor, cdt, odt).values()
    for name, functor in BINARY.items():
        for cdt, odt in raw_dtypes(op_info(name)):
            yield from binary_expressions(functor, cdt, odt).values()
    for cdt, odt in alpha_dtypes(op_info):
        yield from binary_expressions(ALPHA_FUNCTOR, cdt, odt).values()


def alpha_dtypes(op_info: Callable[[str], Any]) -> list[tuple[str, str]]:
    """(compute, result) dtype names ``AddAlpha`` serves: add's floating ones."""
    return [(c, o) for c, o in raw_dtypes(op_info("add")) if c in ALPHA_DTYPES]


def reduction_instances(op_info: Callable[[str], Any]) -> Iterator[str]:
    """Every name expression of reduce.cu the launchers can request."""
    seen: set[str] = set()
    for name in (*REDUCTIONS, *SCANS):
        for dt in reduction_dtypes(op_info(name)):
            for expr in reduction_expressions(name, dt).values():
                if expr not in seen:
                    seen.add(expr)
                    yield expr


def scatter_instances() -> Iterator[str]:
    """scatter.cu's instances (backends.cuda.shape's scatter-multiply)."""
    for name in ("bool", "uint8", "int8", "int16", "int32", "int64"):
        yield f"scatter_mul<{CTYPES[name]}>"
    for name in ("float16", "bfloat16", "float32", "float64"):
        yield f"scatter_mul<{CTYPES[name]}>"


# search.cu's value types: searchsorted's every dtype it takes (its rows' REAL_NO_BOOL);
# isin's are those CuPy sorts, half precision being searched as float32 copies.
SEARCH_TYPES = ("uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
                "float64")  # fmt: skip
ISIN_TYPES = ("uint8", "int8", "int16", "int32", "int64", "float32", "float64")


def search_instances() -> Iterator[str]:
    """search.cu's instances (backends.cuda.shape's searchsorted and isin)."""
    for name in SEARCH_TYPES:
        for out in ("int32", "int64"):
            yield f"searchsorted_rows<{CTYPES[name]}, {CTYPES[out]}>"
    for name in ISIN_TYPES:
        yield f"isin_sorted<{CTYPES[name]}>"


def instances(op_info: Callable[[str], Any]) -> dict[str, list[str]]:
    """source file name -> every template instance the Python launchers can ask for, for
    the operators ``op_info(name)`` describes (the front end's table rows)."""
    return {
        "elementwise.cu": sorted(set(elementwise_instances(op_info))),
        "reduce.cu": list(reduction_instances(op_info)),
        "scatter.cu": list(scatter_instances()),
        "search.cu": list(search_instances()),
    }

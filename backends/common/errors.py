"""Error messages of operator kernels, built in one place (STYLE.md §22).

Imports: the standard library only.

Every message names the operator, the argument, what was expected and what was
given; they follow PyTorch's wording where PyTorch has a message, so users can
search for them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = [
    "C10_NAMES",
    "bad_dtype",
    "cannot_cast",
    "index_error",
    "value_error",
    "bool_subtraction",
    "broadcast",
    "device_mismatch",
    "dim_out_of_range",
    "IntegerDivisionByZero",
    "dtype_mismatch",
    "shape_mismatch",
    "unsupported_dtype",
    "zero_division",
]


# PyTorch's own words for the bool cases that have them.
_BOOL_MESSAGES = {
    "neg": "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
    "invert a mask, use the `~` or `logical_not()` operator instead.",
    "sub": "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
    "or `logical_xor()` operator instead.",
    "rsub": "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
    "or `logical_xor()` operator instead.",
}


# PyTorch's own words for operators that take complex tensors only.
_COMPLEX_ONLY = {"imag": "imag is not implemented for tensors with non-complex dtypes."}
# The dtype a conversion hint names: the first of these the operator supports.
_HINTS = ("float32", "complex64", "int64", "bool")


def unsupported_dtype(
    op: str, dtype: Any, arg: str = "self", supported: Iterable[Any] | None = None
) -> Exception:
    """An operator has no kernel for a dtype (PyTorch: '"abs_cpu" not implemented for 'Bool'').

    ``supported``, the dtypes it has kernels for, picks the dtype the hint suggests (a
    float32 tensor is not told to convert to float32); without it the hint says float32.
    """
    if dtype.name == "bool" and op in _BOOL_MESSAGES:
        return RuntimeError(f"{op}(): {_BOOL_MESSAGES[op]} (argument '{arg}')")
    names = ["float32"] if supported is None else [d.name for d in supported]
    hint = next((h for h in _HINTS if h in names and h != dtype.name), None)
    if op in _COMPLEX_ONLY and "complex64" in names and dtype.name != "complex64":
        hint = "complex64"
    words = f"{_COMPLEX_ONLY[op]} " if op in _COMPLEX_ONLY else ""
    convert = f"; convert it first, e.g. x.to(tt.{hint})" if hint else ""
    return NotImplementedError(
        f"{words}\"{op}\" not implemented for '{dtype.name}' (argument '{arg}' has dtype "
        f"{dtype.name}, after type promotion){convert}"
    )


def bool_subtraction(op: str, arg: str) -> RuntimeError:
    return RuntimeError(
        f"{op}(): Subtraction, the `-` operator, with a bool tensor is not supported. If you "
        f"are trying to invert a mask, use the `~` or `logical_not()` operator instead. "
        f"(argument '{arg}' is bool)"
    )


def bad_dtype(op: str, message: str) -> RuntimeError:
    return RuntimeError(f"{op}(): {message}")


def dtype_mismatch(op: str, names: tuple[str, str], dtypes: tuple[Any, Any]) -> RuntimeError:
    return RuntimeError(
        f"{op}(): expected both arguments to have the same dtype, but argument '{names[0]}' is "
        f"{dtypes[0].name} and argument '{names[1]}' is {dtypes[1].name}; convert one with .to()"
    )


def broadcast(
    op: str, shapes: tuple[tuple[int, ...], tuple[int, ...]], dim: int, names: tuple[str, str]
) -> RuntimeError:
    a, b = shapes
    size_a = a[len(a) - 1 - dim] if dim < len(a) else 1
    size_b = b[len(b) - 1 - dim] if dim < len(b) else 1
    return RuntimeError(
        f"{op}(): The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) at "
        f"non-singleton dimension {max(len(a), len(b)) - 1 - dim} (argument '{names[0]}' has "
        f"shape {list(a)}, argument '{names[1]}' has shape {list(b)})"
    )


def dim_out_of_range(op: str, dim: Any, ndim: int, arg: str = "dim") -> IndexError:
    lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
    return IndexError(
        f"{op}(): Dimension out of range (expected to be in range of [{lo}, {hi}], but got "
        f"{dim}) for argument '{arg}'"
    )


def shape_mismatch(op: str, message: str) -> RuntimeError:
    return RuntimeError(f"{op}(): {message}")


def device_mismatch(op: str, first: tuple[str, Any], second: tuple[str, Any]) -> RuntimeError:
    return RuntimeError(
        f"{op}(): Expected all tensors to be on the same device, but found at least two "
        f"devices, {first[1]} (argument '{first[0]}') and {second[1]} (argument '{second[0]}')! "
        f"Move them to one device with .to(device)."
    )


class IntegerDivisionByZero(RuntimeError, ZeroDivisionError):
    """PyTorch raises RuntimeError("ZeroDivisionError"); this is both, so either catch works."""


def zero_division(op: str, arg: str = "other") -> IntegerDivisionByZero:
    return IntegerDivisionByZero(
        f"{op}(): integer division by zero (argument '{arg}' has a zero element); "
        f"use floating point tensors to get inf/nan instead"
    )


# c10's names of the dtypes, which PyTorch's cast errors use ("result type Float ...").
C10_NAMES = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
    "int64": "Long", "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
    "float64": "Double", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}  # fmt: skip


def cannot_cast(op: str, result: Any, target: Any, arg: str = "self") -> RuntimeError:
    """An in-place or out= result whose dtype the written tensor cannot hold."""
    return RuntimeError(
        f"{op}(): result type {C10_NAMES[result.name]} can't be cast to the desired output type "
        f"{C10_NAMES[target.name]} (argument '{arg}' is {target.name}); compute out of place, "
        f"or convert '{arg}' first, e.g. x = x.to(tt.{result.name})"
    )


def index_error(op: str, message: str) -> IndexError:
    return IndexError(f"{op}(): {message}")


def value_error(op: str, message: str) -> ValueError:
    return ValueError(f"{op}(): {message}")

"""Matrix products (matmul, mm, bmm, addmm, dot, vdot, outer, einsum, tensordot,
linalg_vecdot), written once.

Imports: ``backends.common``.

``result_*`` functions check dtypes and shapes and give the result's shape and
dtypes; the Meta kernels stop there, the data kernels (``kernels(ns, fns)``) then
call the namespace's product functions.  Like PyTorch, the products require one
dtype for their operands (no promotion); ``outer`` is a broadcast multiply and
promotes.  Half-precision products accumulate in float32.  ``linalg_vecdot`` is
``sum(conj(x) * y, dim)`` over the broadcast operands, as PyTorch's composite is (one
multiply and one sum of the namespace: no library has it as one call for every rank).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as _numpy
from numpy import ndarray as _np_ndarray

from . import errors, fastpaths, shape_rules
from .elementwise import Namespace, rename
from .frontend import FrontEnd
from .numbers import NUMBER_KIND as _NUMBER_KIND
from .numbers import check_fits

# NumPy's dot without its ``__array_function__`` dispatcher (a Python frame, ~0.23 us of
# a 4x4 product): the products below call it on plain ndarrays only, which that protocol
# leaves to this very function.
_np_dot = getattr(_numpy.dot, "_implementation", _numpy.dot)

__all__ = [
    "accumulation",
    "kernels",
    "result_binary",
    "result_einsum",
    "result_tensordot",
    "result_addmm",
    "scalars_addmm",
    "result_vecdot",
]


def accumulation(front: FrontEnd) -> dict[Any, Any]:
    """dtype -> the dtype its products compute in: half precision in float32."""
    return {front.float16: front.float32, front.bfloat16: front.float32}


_MESSAGES = {
    "dot": "dot : expected both vectors to have same dtype, but found {a} and {b}",
    "vdot": "dot : expected both vectors to have same dtype, but found {a} and {b}",
    "tensordot": "both inputs should have same dtype, but got {a} and {b}",
    "einsum": "expected scalar type {a} but found {b}",
}


def _shape(t: Any) -> tuple[int, ...]:
    return tuple(t._array.shape)


def _check_tensor(front: FrontEnd, op: str, arg: str, value: Any) -> None:
    if not isinstance(value, front.Tensor):
        raise TypeError(f"{op}(): argument '{arg}' must be a Tensor, not {type(value).__name__}")


def _same_dtype(op: Any, a: Any, b: Any, names: tuple[str, str]) -> tuple[Any, Any]:
    if a._dtype is not b._dtype:
        msg = _MESSAGES.get(op.name)
        if msg is None:
            msg = "expected m1 and m2 to have the same dtype, but got: {a} != {b}"
        raise RuntimeError(
            f"{op.name}(): "
            + msg.format(a=a._dtype.name, b=b._dtype.name)
            + f" (arguments '{names[0]}' and '{names[1]}'); convert one with .to()"
        )
    entry = op.result_dtypes.get(a._dtype)
    if entry is None:
        raise errors.unsupported_dtype(op.name, a._dtype)
    return entry


def _device(op: str, tensors: list[tuple[str, Any]]) -> Any:
    first = tensors[0]
    for name, t in tensors[1:]:
        if t._device != first[1]._device:
            raise errors.device_mismatch(op, (first[0], first[1]._device), (name, t._device))
    return first[1]._device


_SECOND = {
    "mm": "mat2",
    "bmm": "mat2",
    "dot": "tensor",
    "vdot": "other",
    "outer": "vec2",
    "matmul": "other",
}


def result_binary(
    front: FrontEnd, op: Any, a: Any, b: Any
) -> tuple[tuple[int, ...], Any, Any, Any]:
    """(shape, compute dtype, result dtype, device) of matmul/mm/bmm/dot/vdot/outer."""
    names = ("self", _SECOND[op.name])
    _check_tensor(front, op.name, names[1], b)
    dev = _device(op.name, [(names[0], a), (names[1], b)])
    if op.name == "outer":
        dt = front.result_type(a, b)
        entry = op.result_dtypes.get(dt)
        if entry is None:
            raise errors.unsupported_dtype(op.name, dt)
    else:
        entry = _same_dtype(op, a, b, names)
    shape = shape_rules.linalg_shape(op.name, _shape(a), _shape(b))
    return shape, entry[0], entry[1], dev


_WRAPPED_NAMES = {1: "Long", 2: "Float", 3: "ComplexFloat"}  # the number as a 0-d tensor


def result_addmm(
    op: Any, self: Any, m1: Any, m2: Any, beta: Any = 1, alpha: Any = 1
) -> tuple[tuple[int, ...], Any, Any, Any]:
    dev = _device("addmm", [("self", self), ("mat1", m1), ("mat2", m2)])
    if m1._dtype is not m2._dtype or self._dtype is not m1._dtype:
        bad = m2 if m1._dtype is not m2._dtype else self
        raise RuntimeError(
            f"addmm(): self and mat2 must have the same dtype, but got {bad._dtype.name} and "
            f"{m1._dtype.name} (arguments 'self', 'mat1', 'mat2' must share one dtype)"
        )
    entry = op.result_dtypes.get(m1._dtype)
    if entry is None:
        raise errors.unsupported_dtype("addmm", m1._dtype)
    shape = shape_rules.linalg_shape("mm", _shape(m1), _shape(m2))
    s = _shape(self)
    if shape_rules.broadcast_shapes("addmm", s, shape, ("self", "mat1 @ mat2")) != shape:
        raise RuntimeError(
            f"addmm(): The expanded size of the tensor must match: argument 'self' has shape "
            f"{list(s)}, which does not broadcast to the product's shape {list(shape)}"
        )
    dt = m1._dtype
    if _shape(m1)[1:] != (0,):
        # PyTorch converts beta and alpha to the dtype first (c10's checked conversion):
        # a complex number with an imaginary part, or a number out of an integer dtype's
        # range, is refused (Note [Numbers that overflow]); ``scalars_addmm`` then
        # truncates them for an integer dtype.  (A float dtype's range is left alone:
        # PyTorch checks half precision against its compute dtype.)
        if dt.category <= 1 or type(beta) is complex or type(alpha) is complex:
            check_fits("addmm", beta, dt, "beta")
            check_fits("addmm", alpha, dt, "alpha")
    elif beta != 0 and 0 not in shape and _NUMBER_KIND.get(type(beta), 0) > dt.category:
        # An empty product (mat1 [n, 0]) into a non-empty result: PyTorch writes ``self *
        # beta`` into a result of the matrices' dtype, and refuses a beta of a higher kind
        # as that multiplication's cast would (with a non-empty product it rounds beta).
        kind = _NUMBER_KIND[type(beta)]
        wrapped = "ComplexHalf" if kind == 3 and dt.name == "float16" else _WRAPPED_NAMES[kind]
        raise RuntimeError(
            f"addmm(): result type {wrapped} can't be cast to the desired output type "
            f"{errors.C10_NAMES[dt.name]} (mat1 has no columns, so the result is "
            f"self * beta, and beta={beta!r} is of a higher kind than {dt.name})"
        )
    return shape, entry[0], entry[1], dev


def scalars_addmm(dt: Any, beta: Any, alpha: Any) -> tuple[Any, Any]:
    """beta and alpha as PyTorch's addmm uses them: converted to the matrices' dtype, so
    truncated toward zero for an integer dtype (``beta=1.7`` is 1; ``result_addmm`` has
    refused what does not fit) and made bool for bool; a complex number's real part for a
    real dtype (its imaginary part is zero there)."""
    if type(beta) is complex and not dt.is_complex:
        beta = beta.real
    if type(alpha) is complex and not dt.is_complex:
        alpha = alpha.real
    if dt.category == 1:
        return int(beta), int(alpha)
    if dt.category == 0:
        return bool(beta), bool(alpha)
    return beta, alpha


def result_einsum(
    front: FrontEnd, op: Any, equation: str, operands: list[Any]
) -> tuple[tuple[int, ...], Any, Any, Any]:
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    for i, t in enumerate(operands):
        _check_tensor(front, "einsum", f"tensors[{i}]", t)
    dev = _device("einsum", [(f"tensors[{i}]", t) for i, t in enumerate(operands)])
    for i, t in enumerate(operands[1:], 1):
        _same_dtype(op, operands[0], t, ("tensors[0]", f"tensors[{i}]"))
    dt = operands[0]._dtype
    shape = shape_rules.einsum_shape("einsum", equation, [_shape(t) for t in operands])
    if len(operands) == 1:
        # One operand: a permutation, a diagonal or a sum.  Sums follow sum's dtype rule
        # (integers and bool accumulate in int64), as PyTorch's einsum does.
        lhs, _, rhs = equation.replace(" ", "").partition("->")
        labels = {c for c in lhs if c.isalpha()}
        kept = (
            {c for c in rhs if c.isalpha()}
            if rhs or "->" in equation
            else {c for c in labels if lhs.count(c) == 1}
        )
        if labels - kept and dt.category <= 1:
            return shape, front.int64, front.int64, dev
        return shape, dt, dt, dev
    if dt is front.bool:
        raise errors.unsupported_dtype("einsum", dt, "tensors")
    return shape, dt, dt, dev


def result_tensordot(
    op: Any, a: Any, b: Any, dims_a: Any, dims_b: Any
) -> tuple[tuple[int, ...], Any, Any, Any]:
    dev = _device("tensordot", [("self", a), ("other", b)])
    entry = _same_dtype(op, a, b, ("self", "other"))
    shape = shape_rules.tensordot_shape("tensordot", _shape(a), _shape(b), dims_a, dims_b)
    return shape, entry[0], entry[1], dev


def result_vecdot(
    front: FrontEnd, op: Any, x: Any, y: Any, dim: int
) -> tuple[tuple[int, ...], int, Any, Any, Any]:
    """(result shape, reduced dim of the broadcast shape, compute dtype, result dtype,
    device) of ``linalg_vecdot``, with PyTorch's checks in its order."""
    _check_tensor(front, "linalg.vecdot", "y", y)
    dev = _device("linalg.vecdot", [("x", x), ("y", y)])
    if not (x._dtype.is_floating_point or x._dtype.is_complex):
        raise RuntimeError(
            "linalg.vecdot: Expected a floating point or complex tensor as input. Got "
            f"{x._dtype.name} (argument 'x'); convert it first, e.g. x.to(tt.float32)"
        )
    if x._dtype is not y._dtype:
        raise RuntimeError(
            "linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
            f"{x._dtype.name} and y of type {y._dtype.name} instead; convert one with .to()"
        )
    entry = op.result_dtypes.get(x._dtype)
    if entry is None:
        raise errors.unsupported_dtype("linalg.vecdot", x._dtype, "x")
    shape = shape_rules.broadcast_shapes("linalg.vecdot", _shape(x), _shape(y), ("x", "y"))
    d = shape_rules.normalize_dim("linalg.vecdot", dim, len(shape))
    out = shape[:d] + shape[d + 1 :] if shape else ()
    return out, d, entry[0], entry[1], dev


# Note [Products of widened copies]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Half-precision products compute in float32 on copies of their operands (Note [Product
# fast path]), as autocast's fused products do (Note [Autocast product fast path]).  On
# 2-D operands NumPy's ``dot`` is its ``matmul`` without the generalized ufunc's setup
# (0.35 us less on an 8x8 product): on C- or F-contiguous ones the same BLAS gemm call,
# equal bit for bit (tests/backends/test_products_dot.py compares the two over shapes,
# float32 and float64, both orders, zeros, infinities and NaNs).  On other strides they
# differ: ``dot`` copies them and calls gemm, ``matmul`` runs its own loop.  So every
# product of two float32 or float64 NumPy matrices, on every path, is ``dot``'s
# (``_dot_2d``): the fast path needs no contiguity test (two ``flags`` reads, 0.02-0.04
# us of a 1.37 us ``tt.mm`` of 4x4), and a strided operand is multiplied as PyTorch
# does, by gemm on a contiguous copy.  One exception: where either operand has one element,
# ``dot`` scales the other by it instead of gemm's sum from +0, which differs from
# ``matmul`` and PyTorch (``[[0.]] @ [[-1.]]``: dot -0.0, PyTorch +0.0; ``[[0.]] @
# [[inf, 1.]]``: dot [0, 0], PyTorch [nan, 0]), so those take ``matmul``.
def _dot_2d(matmul: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``matmul`` whose products of two NumPy matrices are ``dot``'s (Note [Products of
    widened copies])."""

    def product(a: Any, b: Any) -> Any:
        if (
            type(a) is _np_ndarray is type(b)
            and a.ndim == 2
            and b.ndim == 2
            and a.size != 1
            and b.size != 1
        ):
            return _np_dot(a, b)
        return matmul(a, b)

    return product


# NumPy's product of two matrices as the CPU's mm computes it (the backward lanes').
matrix_product = _dot_2d(_numpy.matmul)


# Note [Small bfloat16 products]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A bfloat16 matrix product computes in float32 and rounds once to bfloat16 (Note
# [Products of widened copies]): on NumPy two widening copies, OpenBLAS's sgemm and the
# rounding copy, ~1.8 us however small the matrices.  ml_dtypes' own ``dot`` for
# bfloat16 arrays computes each element the same way, the exact products of bfloat16
# numbers summed in float32 in order and the sum rounded once, in one loop without
# copies: 0.7 us for 4x4, 1.3 us for 8x8, as fast as the copies at ~1,000
# multiply-adds (8x16x8: 1.77 against 1.82 us) and slower past them (16x16x16: 5.1
# against 2.0).  So matmul and mm of two bfloat16 matrices of at most ``_SMALL_BF16``
# multiply-adds (M*K*N) on NumPy call it, on every path that computes them (the general
# kernel, its fast path, autocast's fused product), so which path runs changes no bit.
# tests/backends/test_small_bf16_products.py checks each path against that sum made step
# by step in NumPy.  (The widened product gave the same bits on 3,000 random shapes of
# this size here: OpenBLAS sums small matrices in order too.)  Autocast's 8x8 matmul
# (ci/bench/layers.py): 3.85 -> 3.6-3.7 us.
_SMALL_BF16 = 1024


def _small_bf16(a: Any, b: Any) -> Any:
    """The product of two bfloat16 NumPy arrays by ml_dtypes' ``dot`` when both are
    matrices of at most ``_SMALL_BF16`` multiply-adds (Note [Small bfloat16 products]);
    None otherwise, and for shapes that do not multiply (the caller explains them)."""
    if type(a) is not _np_ndarray or type(b) is not _np_ndarray or a.ndim != 2 or b.ndim != 2:
        return None
    m, k = a.shape
    if k != b.shape[0] or m * k * b.shape[1] > _SMALL_BF16:
        return None
    return _np_dot(a, b)


# Note [Small batches against a row-major weight]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# F.linear's product is ``x @ w.t()`` (addmm's ``mat2``, or mm's without a bias; users
# write ``x @ w.T``): ``x`` [M, K] and the weight [N, K] both row-major, K contiguous in
# both.  OpenBLAS computes it as its transposed
# gemm with the N output features as the dimension it packs by a transposing gather,
# and for a small batch that costs more than the product: on the development machine
# (OpenBLAS 0.3.31, one thread) batch 8, 256 -> 256 took 64 us against PyTorch's 19.
# The same gemm with the two exchanged, ``w @ x.T`` (an [N, M] product, M the packed
# dimension), then transposed into place with the bias added in the same pass, took
# (time over the direct call's; ci/bench/ops.py shows F.linear at batches 2-64):
# - batches of 2-32, K >= 64, M * N >= 2048, and N or K at least 128: 0.34-0.91x
#   (batch 2, 1024 -> 1024: 0.34x; batch 8, 256 -> 256: 0.54x; batch 32, 256 -> 64:
#   0.88x; batch 32, 64 -> 64, left out: 1.00-1.03x);
# - batches of 33-64, N >= 128 and K >= 256: 0.65-0.95x (batch 64, 256 -> 256: 0.93x);
# and lost elsewhere: batch 1 (equal), K of 4-16 (up to 1.65x: the transposing copy
# outweighs a short product), batch 64 with K = 128 (1.02x), batches of 96-128 (0.87-
# 1.29x).  Since Note [Linear by gemm] (backends/cpu/_blas.py) F.linear with a bias has
# a second way, gemm writing the row-major result with the bias in its pass, 0.72-0.93x
# the direct call, which also beats the turn on part of the table above (time over the
# direct call's, turned / by gemm): batches of 17-32 with K < 256 and N < 512 (batch 32,
# 128 -> 128: 0.87 / 0.82x; 64 -> 256: 0.90 / 0.77x), batches of 33-64 with K and N
# below 512 (batch 64, 256 -> 256: 0.94-0.95 / 0.87-0.90x).  So a product with a bias
# turns only where it beats both (``_turns(..., against_gemm=True)``: batches of 17-32
# also need K >= 256 or N >= 512, batches of 33-64 N or K >= 512), and gemm takes the
# rest; a product without one (mm, ``x @ w.T``) keeps the bounds above, gemm's edge
# being mostly the bias (without it 0.9-1.1x the direct call).  Each element of the
# turned product is the same dot product summed in the same order, so the two give the
# same bits (tests/backends/test_small_batch_linear.py compares them, and the
# fast path with the general one, which takes the same turn; float32 and float64 only:
# half-precision products multiply widened copies, unturned on both paths).  addmm,
# and mm and matmul of two matrices, whose fast path tests the turn only for an
# F-contiguous right operand (a plain mm goes straight to ``dot``): a tiny bias-free
# F.linear, whose transposed weight is one, pays ~0.1 us for it.
_BATCH_MIN_N = 64  # N below it never turns (the one test tiny products pay)
_BLAS_FLOATS = (_numpy.dtype(_numpy.float32), _numpy.dtype(_numpy.float64))


def _turns(m: int, k: int, n: int, against_gemm: bool = False) -> bool:
    """Whether an [m, k] @ [k, n] product against a row-major weight is computed turned
    (Note [Small batches against a row-major weight]): against NumPy's direct product,
    or (``against_gemm``, F.linear with a bias) against gemm's (Note [Linear by gemm])."""
    if k < 64 or not 2 <= m <= 64 or m * n < 2048:
        return False
    if m <= 32:
        return (n >= 128 or k >= 128) and (not against_gemm or m <= 16 or k >= 256 or n >= 512)
    return n >= 128 and k >= 256 and (not against_gemm or n >= 512 or k >= 512)


def _small_batch_product(a: Any, b: Any, against_gemm: bool = False) -> Any:
    """Note [Small batches against a row-major weight]: for NumPy matrices ``a`` [M, K]
    (C-contiguous, float32 or float64) and ``b`` [K, N] (F-contiguous: a row-major
    [N, K] matrix transposed) of one dtype whose shapes ``_turns``, the [N, M] product
    ``b.T @ a.T``, whose transpose is ``a @ b``; None otherwise (and for shapes that do
    not multiply: the caller's product explains them)."""
    if type(a) is not _np_ndarray or type(b) is not _np_ndarray or a.ndim != 2 or b.ndim != 2:
        return None
    m, k = a.shape
    if k != b.shape[0] or not _turns(m, k, b.shape[1], against_gemm):
        return None
    if (
        a.dtype not in _BLAS_FLOATS
        or b.dtype != a.dtype
        or not a.flags.c_contiguous
        or not b.flags.f_contiguous
    ):
        return None
    return _np_dot(b.T, a.T)


def _weight_product(a: Any, b: Any, bias: Any, gemm: Callable[..., Any]) -> Any:
    """``a @ b + bias`` for NumPy arrays ``a`` [M, K] and ``b`` [K, N] against a
    row-major weight, C-contiguous: turned (Note [Small batches against a row-major
    weight]) where that beats gemm, else by ``gemm`` (Note [Linear by gemm]), else (gemm
    declined: K >= 1024, Note [Two BLAS thread pools]) turned where that beats NumPy's
    product; None where none applies (the caller's product and sum: the same bits as
    the turned one).  A bias that does not broadcast raises NumPy's ValueError on the
    turned ways."""
    wide = b.ndim == 2 and b.shape[1] >= _BATCH_MIN_N  # N >= 64 first: the test tiny pay
    turned = _small_batch_product(a, b, True) if wide else None
    if turned is None:
        prod = gemm(a, b, bias)
        if prod is not None or not wide:
            return prod
        turned = _small_batch_product(a, b)
        if turned is None:
            return None
    prod = _numpy.empty(turned.shape[::-1], turned.dtype)
    _numpy.add(turned.T, bias, out=prod)
    return prod


def kernels(
    ns: Namespace,
    fns: dict[str, Callable[..., Any]],
    accumulate: dict[Any, Any] | None = None,
) -> dict[str, Any]:
    """Data kernels: ``fns`` gives the namespace's matmul, dot, vdot, einsum, tensordot.

    ``accumulate`` maps a dtype to the one its products are computed in (by default
    ``accumulation(front)``: NumPy's float16 products are slow and accumulate in float16,
    so the CPU computes them in float32; cuBLAS accumulates float16 GEMMs in float32 on
    its own, on tensor cores).
    """
    front = ns.front
    make, tensor_type, op_info = front.make, front.Tensor, front.op_info
    wide = accumulation(front) if accumulate is None else accumulate

    def _cast(t: Any, cdt: Any) -> Any:
        cdt = wide.get(cdt, cdt)
        return t._array if t._dtype is cdt else ns.astype(t._array, cdt)

    def _fast_dtypes(op: Any) -> tuple[frozenset[Any], frozenset[Any]]:
        """Note [Product fast path]'s dtypes of ``op``: those it computes in and returns
        unchanged, computed directly or (half precision) in their ``wide`` dtype."""
        same = frozenset(d for d, (c, o) in op.result_dtypes.items() if c is d and o is d)
        return same - wide.keys(), same & wide.keys()

    xp, finish = ns.xp, ns.finish
    f32, bf16 = front.float32, front.bfloat16
    matmul, dot, vdot = fns["matmul"], fns["dot"], fns["vdot"]
    einsum, tensordot = fns["einsum"], fns["tensordot"]
    out: dict[str, Any] = {}

    ndarray, asarray = ns.ndarray, ns.asarray
    numpy_arrays = ndarray is _np_ndarray
    # Note [Linear by gemm]: BLAS gemm into a row-major result, on NumPy (None elsewhere).
    gemm = fns.get("gemm") if numpy_arrays else None

    def product(name: str, fn: Callable[[Any, Any], Any], ndims: tuple[int, int] | None) -> None:
        op = op_info(name)
        # Note [Product fast path]: operands of one dtype the op computes in directly, on
        # one device object, with the ranks the op takes (``ndims``; None: matmul, any
        # rank of at least 1, NumPy's broadcasting being PyTorch's): the library call and
        # the wrap, nothing else (~1.5 us less on small matrices, ci/bench/autograd.py).
        # Shape errors (the library's ValueError) and everything else go the general way,
        # which raises PyTorch's messages.
        # Half-precision operands (``widened``: computed in their ``accumulate`` dtype)
        # take it too: cast up, the call, and ``finish``'s
        # rounding to the dtype, as the general path computes them (autocast's bfloat16
        # products, ci/bench/layers.py).
        direct, widened = _fast_dtypes(op)
        any_rank = ndims is None
        rank_a, rank_b = ndims if ndims is not None else (0, 0)
        batched = name == "bmm"

        def kernel(self: Any, other: Any) -> Any:
            dt = self._dtype
            if (  # Note [Products of widened copies]: two float matrices, contiguous
                dt in dot_dtypes
                and type(other) is tensor_type
                and other._dtype is dt
                and self._device is other._device
                and fastpaths.ENABLED
            ):
                a, b = self._array, other._array
                if (
                    type(a) is _np_ndarray is type(b)
                    and a.ndim == 2
                    and b.ndim == 2
                    and a.size != 1  # one element: ``dot`` scales, gemm sums
                    and (b_size := b.size) != 1
                ):
                    try:
                        if (  # Note [Small batches against a row-major weight]
                            b_size >= _BATCH_MIN_N  # the shape's tuple only past it
                            and b.shape[1] >= _BATCH_MIN_N
                            and (turned := _small_batch_product(a, b)) is not None
                        ):
                            return make(_numpy.ascontiguousarray(turned.T), dt, self._device)
                        return make(_np_dot(a, b), dt, self._device)
                    except ValueError:  # shapes: the general path says why
                        pass
            is_direct = dt in direct
            if (
                (is_direct or dt in widened)
                and fastpaths.ENABLED
                and type(other) is tensor_type
                and other._dtype is dt
                and self._device is other._device
            ):
                a, b = self._array, other._array
                if (a.ndim and b.ndim) if any_rank else (a.ndim == rank_a and b.ndim == rank_b):
                    try:
                        if is_direct:
                            result = fn(a, b)
                        elif (  # Note [Small bfloat16 products]
                            dt is bf16
                            and small_bf16 is not None
                            and (small := small_bf16(a, b)) is not None
                        ):
                            return make(small, dt, self._device)
                        else:  # copies: Note [Products of widened copies]
                            result = fn(_cast(self, dt), _cast(other, dt))
                    except (ValueError, TypeError):  # shapes: the general path says why
                        result = None
                    if result is not None and (not batched or a.shape[0] == b.shape[0]):
                        if not is_direct:  # finish's rounding: astype, for a float dtype
                            if type(result) is ndarray:
                                return make(result.astype(dt.numpy_dtype), dt, self._device)
                            return make(finish(result, dt), dt, self._device)
                        if type(result) is not ndarray:
                            result = asarray(result)
                        return make(result, dt, self._device)
            _, cdt, odt, dev = result_binary(front, op, self, other)
            if cdt is bf16 and small_bf16 is not None and odt is bf16:
                out = small_bf16(self._array, other._array)
                if out is not None:  # Note [Small bfloat16 products]
                    return make(out, odt, dev)
            a, b = _cast(self, cdt), _cast(other, cdt)
            if cdt in dot_dtypes and (turned := _small_batch_product(a, b)) is not None:
                # Note [Small batches against a row-major weight]
                return make(finish(_numpy.ascontiguousarray(turned.T), odt), odt, dev)
            return make(finish(fn(a, b), odt), odt, dev)

        def lower_precision(bits: int, to: Any, self: Any, other: Any) -> Any:
            """Note [Autocast product fast path]: ``kernel(_to_copy(self, dtype=to),
            _to_copy(other, dtype=to))`` for float32 NumPy operands and a half-precision
            ``to``, without the two intermediate tensors: each operand rounded to ``to``
            (the copy kernel's ``astype``), widened back for the product (the fast
            path's ``_cast``), the product rounded to ``to`` once; small bfloat16
            matrices by ml_dtypes' ``dot`` (Note [Small bfloat16 products]).  None: the
            caller takes the general way.  Its one caller, autocast's fused product,
            has read ``fastpaths.ENABLED``."""
            if not (
                type(self) is tensor_type is type(other)
                and self._dtype is f32 is other._dtype
                and self._device is other._device
            ):
                return None
            a, b = self._array, other._array
            if not type(a) is ndarray is type(b):
                return None
            if (  # Note [Small bfloat16 products]
                numpy_gemm
                and a.ndim == 2 == b.ndim
                and to is bf16
                and small_products
                and a.size * b.shape[1] <= _SMALL_BF16
            ):
                try:
                    result = _np_dot(a.astype(bf16_np), b.astype(bf16_np))
                except ValueError:  # shapes: the general path says why
                    return None
                return make(result, to, self._device)
            pair = halves.get(to)  # (its NumPy dtype, its wide one's); None: not widened
            if pair is None:
                return None
            half, wide_np = pair
            if not ((a.ndim and b.ndim) if any_rank else (a.ndim == rank_a and b.ndim == rank_b)):
                return None
            try:  # ``fn``: dot's product of two matrices (Note [Products of widened copies])
                result = fn(a.astype(half).astype(wide_np), b.astype(half).astype(wide_np))
            except (ValueError, TypeError):  # shapes: the general path says why
                return None
            if type(result) is not ndarray or (batched and a.shape[0] != b.shape[0]):
                return None
            return make(result.astype(half), to, self._device)

        halves = {to: (to.numpy_dtype, wide[to].numpy_dtype) for to in widened}
        # Note [Products of widened copies]: matmul and mm on NumPy.
        numpy_gemm = ndarray is _np_ndarray and name in ("matmul", "mm")
        small_bf16 = _small_bf16 if numpy_gemm and bf16 in widened else None
        small_products = small_bf16 is not None  # Note [Small bfloat16 products]
        bf16_np = bf16.numpy_dtype
        if numpy_gemm:  # Note [Products of widened copies]: every 2-D product is dot's
            fn = _dot_2d(fn)
        dot_dtypes = {front.float32, front.float64} if numpy_gemm else set()
        kernel = rename(kernel, name, ns)
        if ndarray is _np_ndarray and f32 in direct:
            kernel.lower_precision = lower_precision  # type: ignore[attr-defined]
        out[name] = kernel

    fn_matmul = matmul
    product("matmul", matmul, None)
    product("mm", matmul, (2, 2))
    product("bmm", matmul, (3, 3))
    product("dot", dot, (1, 1))
    product("vdot", vdot, (1, 1))
    product("outer", lambda x, y: xp.multiply(x[:, None], y[None, :]), (1, 1))

    # The product of addmm's float32 copies (Note [Products of widened copies]).
    copies_product = _dot_2d(fn_matmul) if ndarray is _np_ndarray else fn_matmul
    blas_floats = (front.float32, front.float64)
    addmm_op = op_info("addmm")
    addmm_direct, addmm_widened = _fast_dtypes(addmm_op)

    def addmm(self: Any, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        # Note [Product fast path], for F.linear's addmm(bias, x, w.t()): beta and alpha
        # the int 1 (the defaults), three matrices of one direct dtype on one device
        # object: the product, and the bias added into it in place (NumPy refuses a bias
        # that does not broadcast to the product, which the general path then explains).
        # Half precision computes in its ``widened`` dtype and rounds once, at the end.
        dt = mat1._dtype
        is_direct = dt in addmm_direct
        if (
            (is_direct or dt in addmm_widened)
            and fastpaths.ENABLED
            and type(beta) is int
            and type(alpha) is int
            and beta == 1
            and alpha == 1
            and type(mat2) is tensor_type
            and type(self) is tensor_type
            and mat2._dtype is dt
            and self._dtype is dt
            and mat1._device is mat2._device
            and self._device is mat1._device
        ):
            a, b, bias = mat1._array, mat2._array, self._array
            if a.ndim == 2 and b.ndim == 2:
                if not is_direct:
                    a, b, bias = _cast(mat1, dt), _cast(mat2, dt), _cast(self, dt)
                try:
                    prod = None
                    if is_direct and gemm is not None:  # Note [Linear by gemm]
                        prod = _weight_product(a, b, bias, gemm)
                    if prod is None:
                        prod = fn_matmul(a, b) if is_direct else copies_product(a, b)
                        prod += bias
                except (ValueError, TypeError):  # shapes: the general path says why
                    prod = None
                if type(prod) is ndarray:
                    if not is_direct:  # finish's rounding: astype, for a float dtype
                        prod = prod.astype(dt.numpy_dtype)
                    return make(prod, dt, mat1._device)
        _, cdt, odt, dev = result_addmm(addmm_op, self, mat1, mat2, beta, alpha)
        if mat1._array.shape[1:] != (0,):  # an empty product ignores them: as PyTorch's
            beta, alpha = scalars_addmm(mat1._dtype, beta, alpha)
        a, b = _cast(mat1, cdt), _cast(mat2, cdt)
        # As the fast path: float32 and float64, not the widened copies; the bias in the
        # product's pass when alpha and beta are 1, as there (Note [Linear by gemm]),
        # which tries the turn itself.
        turned = None
        if gemm is not None and cdt in blas_floats:
            if alpha == 1 and beta == 1:
                try:
                    prod = _weight_product(a, b, _cast(self, cdt), gemm)
                except ValueError:  # a bias that does not broadcast: explained below
                    prod = None
                if prod is not None:
                    return make(finish(prod, odt), odt, dev)
            else:
                turned = _small_batch_product(a, b)
        if turned is not None:  # Note [Small batches against a row-major weight]
            prod = _numpy.ascontiguousarray(turned.T)
        else:
            prod = matmul(a, b)
        if alpha != 1:
            prod = prod * alpha
        if beta != 0:  # beta == 0 ignores self, NaNs included (PyTorch's rule)
            base = _cast(self, cdt)
            prod = prod + (base if beta == 1 else base * beta)
        return make(finish(prod, odt), odt, dev)

    def linear_lower_precision(self: Any, mat1: Any, weight: Any, to: Any) -> Any:
        """Note [Autocast product fast path] for ``linear``: ``addmm(self, mat1,
        t(weight))`` with the three cast to ``to`` first, for float32 NumPy matrices and
        a half-precision ``to``: each rounded to ``to`` and widened back as the fast path
        above computes, ``weight`` transposed as a view; None: the general way."""
        if (
            type(self) is not tensor_type
            or type(mat1) is not tensor_type
            or type(weight) is not tensor_type
            or mat1._dtype is not f32
            or weight._dtype is not f32
            or self._dtype is not f32
            or weight._device is not mat1._device
            or self._device is not mat1._device
            or to not in addmm_widened
            or not fastpaths.ENABLED
        ):
            return None
        a, w, bias = mat1._array, weight._array, self._array
        if type(a) is not ndarray or type(w) is not ndarray or type(bias) is not ndarray:
            return None
        if a.ndim != 2 or w.ndim != 2:
            return None
        half, wide_np = to.numpy_dtype, wide[to].numpy_dtype
        try:
            # Copies: Note [Products of widened copies].
            prod = copies_product(a.astype(half).astype(wide_np), w.astype(half).T.astype(wide_np))
            prod += bias.astype(half).astype(wide_np)
        except (ValueError, TypeError):
            return None
        return make(prod.astype(half), to, mat1._device) if type(prod) is ndarray else None

    addmm = rename(addmm, "addmm", ns)
    if ndarray is _np_ndarray and f32 in addmm_direct:
        addmm.linear_lower_precision = linear_lower_precision  # type: ignore[attr-defined]
    out["addmm"] = addmm

    einsum_op = op_info("einsum")

    def einsum_kernel(equation: str, tensors: list[Any]) -> Any:
        _, cdt, odt, dev = result_einsum(front, einsum_op, equation, tensors)
        return make(finish(einsum(equation, *[_cast(t, cdt) for t in tensors]), odt), odt, dev)

    out["einsum"] = rename(einsum_kernel, "einsum", ns)

    tensordot_op = op_info("tensordot")

    def tensordot_kernel(self: Any, other: Any, dims_self: Any, dims_other: Any) -> Any:
        _, cdt, odt, dev = result_tensordot(tensordot_op, self, other, dims_self, dims_other)
        axes = (list(dims_self), list(dims_other))
        res = tensordot(_cast(self, cdt), _cast(other, cdt), axes=axes)
        return make(finish(res, odt), odt, dev)

    out["tensordot"] = rename(tensordot_kernel, "tensordot", ns)

    vecdot_op = op_info("linalg_vecdot")

    def linalg_vecdot(x: Any, y: Any, *, dim: int = -1) -> Any:
        shape, d, cdt, odt, dev = result_vecdot(front, vecdot_op, x, y, dim)
        a, b = _cast(x, cdt), _cast(y, cdt)
        if x._dtype.is_complex:
            a = xp.conj(a)
        prod = a * b
        res = xp.sum(prod, axis=d) if prod.ndim else prod
        return make(finish(res, odt), odt, dev)

    out["linalg_vecdot"] = rename(linalg_vecdot, "linalg_vecdot", ns)
    return out

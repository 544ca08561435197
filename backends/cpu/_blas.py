"""``y + alpha * x`` rounded once, by BLAS ``axpy`` (Note [Fused add with alpha]); ``x @
w.T + b`` written by ``gemm`` straight into a row-major result (Note [Linear by gemm]).

Imports: NumPy; SciPy's BLAS wrappers on first use (``scipy.linalg.blas``, ~0.3 s the
first time, so not at ``import tensor``), and its OpenBLAS's thread count through
``ctypes`` (Note [Two BLAS thread pools]).

Note [Fused add with alpha]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
PyTorch's CPU ``add``/``sub`` with an ``alpha`` compute ``self + alpha * other`` with a
fused multiply-add (ATen's vectorized ``fmadd``): the product is not rounded before the
sum.  NumPy has no fused multiply-add, and ``x + y * alpha`` rounds twice: on random
float32 data about 2% of the elements then differ from PyTorch's in the last bit.  BLAS
``saxpy``/``daxpy`` compute ``y += a * x`` with the same fused instruction on every CPU
that has one (OpenBLAS's kernels for Haswell and later, and for ARM), in one pass where
NumPy needs two: ``p.add_(g, alpha=-lr)`` on 65,536 float32 elements 10.4 us against
21.3 for ``p += g * -lr`` and 16.8 for PyTorch's.  So the CPU kernels of ``add``,
``sub`` and ``rsub`` with an ``alpha`` other than 1, for float32 and float64 (and the
half-precision dtypes, which compute in float32 and round once at the end, as
PyTorch's do), compute through ``axpy``: out of place on a copy of ``self``, in place
on ``self`` itself (``p.add_(g, alpha=-lr)``, torch.optim.SGD's update).  ``alpha``
is rounded to the dtype first, as PyTorch's ``alpha.to<scalar_t>()``; a number
``other`` (the Scalar overloads) is wrapped in the tensor's dtype, as PyTorch wraps it.
Half precision: NumPy's float16 (and ml_dtypes' bfloat16) arithmetic rounds the
product, then the sum, to the dtype (2-27% of elements off PyTorch's); the kernels
widen to float32 instead, axpy there, and round once (``backends/cpu/elementwise.py``,
``_fused``).  PyTorch itself is not consistent for half precision: its vectorized
loop rounds ``alpha`` to float16/bfloat16, its scalar loop (tensors smaller than a
vector, some broadcasts) keeps it in float32; ours is the vectorized loop's rule.  Nor
for a number or 0-d ``other`` (a CPU scalar to PyTorch) in float32: its vectorized loop
rounds once, but in a tensor of a few elements, and in parts of a long one's remainder
(elements 33-36 of 40), it rounds ``alpha * other`` first (``1 + 0.01 * 33`` gives
1.33000004 one way, 1.32999992 the other); ours rounds once everywhere, the vectorized
loop's rule again (tests/backends/test_fastpath_inplace_alpha.py).  A zero ``alpha``
keeps NumPy's spelling: BLAS skips the product then, and PyTorch's ``0 * inf`` is NaN.  Without SciPy
(or where an array is not one BLAS can take) the kernels keep the two-step NumPy
spelling, and the results can differ from PyTorch's by that last bit.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

__all__ = ["axpy", "axpy_checked", "blas_threads", "fused_add", "gemm"]

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_LOCK = threading.Lock()
_FUNCTIONS: dict[np.dtype, Any] | None = None  # dtype -> ?axpy; {} without SciPy
_SGEMM: Any = None  # SciPy's sgemm and dgemm, set with _FUNCTIONS (None without SciPy)
_DGEMM: Any = None


# Note [Two BLAS thread pools]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# SciPy's wheels bundle their own OpenBLAS, apart from NumPy's, and each keeps its own
# pool of worker threads; after a call run on several threads OpenBLAS's workers spin,
# waiting for more work, for a long while before they sleep.  So a large call through
# SciPy's BLAS followed by NumPy's (a forward's product after ``p.add_(g, alpha=-lr)``
# on a big parameter) finds the cores taken by the other pool's spinning threads:
# measured on the development machine (2 cores, both pools at their default 2 threads),
# ``saxpy`` of 10,001 float32 elements then a 256x256 NumPy matmul took 9,361 us a
# round against 214 us for 10,000 elements (OpenBLAS runs an axpy of at most 10,000
# elements, and a gemm of at most 65536 * 4 multiply-adds, on the calling thread), and
# a 64x256x256 gemm then the matmul 13,307 us against 454 for the two alone.  So the
# calls here stay on the calling thread unless SciPy's OpenBLAS runs one thread anyway
# (``OPENBLAS_NUM_THREADS=1``, threadpoolctl's limits; read per call from the library,
# ~0.2 us, and only for a call that large): an axpy past 10,000 elements goes in pieces
# of 10,000 (elementwise, so the same bits), a gemm past 262,144 multiply-adds goes back
# to NumPy (``gemm`` returns None).  Where SciPy's OpenBLAS cannot be found (another
# build: MKL, a system BLAS), it is taken as threaded.  tests/backends/test_blas_pools.py.
_AXPY_ONE_THREAD = 10_000  # OpenBLAS's interface/axpy.c: n <= 10000 runs on one thread
_GEMM_ONE_THREAD = 65536 * 4  # interface/gemm.c: SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD
_THREADS: Any = None  # SciPy's OpenBLAS's get_num_threads (ctypes); False: not found


def _find_threads() -> Any:
    """SciPy's bundled OpenBLAS's ``get_num_threads`` through ctypes, or False."""
    global _THREADS
    found: Any = False
    try:
        import ctypes
        import glob
        import os

        import scipy

        base = os.path.dirname(scipy.__file__)
        paths = glob.glob(os.path.join(base, os.pardir, "scipy.libs", "*openblas*"))
        paths += glob.glob(os.path.join(base, ".dylibs", "*openblas*"))  # macOS wheels
        for path in paths:
            lib = ctypes.CDLL(path)  # the library SciPy loaded: the same handle
            for name in (
                "scipy_openblas_get_num_threads",
                "scipy_openblas_get_num_threads64_",
                "openblas_get_num_threads",
                "openblas_get_num_threads64_",
            ):
                fn = getattr(lib, name, None)
                if fn is not None:
                    fn.restype, fn.argtypes = ctypes.c_int, []
                    found = fn
                    break
            if found:
                break
    except Exception:  # noqa: BLE001 - any failure: taken as threaded
        found = False
    _THREADS = found
    return found


def blas_threads() -> int:
    """How many threads SciPy's OpenBLAS runs a large call on; 0 where it cannot be
    read (Note [Two BLAS thread pools])."""
    fn = _THREADS if _THREADS is not None else _find_threads()
    return int(fn()) if fn else 0


def _functions() -> dict[np.dtype, Any]:
    global _FUNCTIONS, _SGEMM, _DGEMM
    with _LOCK:
        if _FUNCTIONS is None:
            try:
                from scipy.linalg import blas
            except ImportError:
                _FUNCTIONS = {}
            else:
                _SGEMM, _DGEMM = blas.sgemm, blas.dgemm
                _FUNCTIONS = {_F32: blas.saxpy, _F64: blas.daxpy}
    return _FUNCTIONS


def axpy(y: np.ndarray, x: np.ndarray, alpha: Any) -> bool:
    """``y += alpha * x`` in place, each element rounded once; False (``y`` untouched)
    when BLAS cannot take the arrays: ``y`` and ``x`` of one dtype (float32 or float64)
    and one shape, ``y`` C-contiguous and writeable, a nonzero ``alpha`` (an int or a
    float, rounded to the dtype by the wrapper as C rounds a double to a float), and
    SciPy present.  ``x`` may be ``y`` itself; a partial overlap is the caller's to
    refuse."""
    if not alpha:  # BLAS returns at once for a zero alpha: inf * 0 would give no NaN
        return False
    functions = _FUNCTIONS if _FUNCTIONS is not None else _functions()
    fn = functions.get(y.dtype)
    # SciPy's wrappers write into a read-only array as readily as into any other.
    if fn is None or x.dtype != y.dtype or x.shape != y.shape or not y.flags.writeable:
        return False
    n = y.size
    if n:
        # The wrappers take a rank-1 argument as the Fortran-order elements of whatever
        # array they get, in place when it is Fortran-contiguous: ``y.T`` of a
        # C-contiguous ``y`` is, and ``x.T``'s Fortran order is ``x``'s C order, so the
        # elements pair up (a non-contiguous ``x`` is copied that way first).  A
        # non-contiguous ``y`` is copied too, and the copy written: then nothing
        # happened to ``y``.  Positional arguments: keywords cost ~0.3 us to parse.
        return _run_axpy(fn, y, x, n, alpha if type(alpha) is float else float(alpha))
    return True


def _run_axpy(fn: Any, y: np.ndarray, x: np.ndarray, n: int, alpha: float) -> bool:
    """``fn`` (?axpy) over ``y``'s and ``x``'s elements in C order, into ``y``: one call,
    or pieces that keep it on this thread (Note [Two BLAS thread pools]).  False: ``y``
    untouched (not contiguous: the wrapper would have written a copy)."""
    if n <= _AXPY_ONE_THREAD or blas_threads() == 1:
        if y.ndim < 2:  # a vector is its own Fortran order (``y.T``: a new view, ~70 ns)
            return fn(x, y, n, alpha) is y  # type: ignore[no-any-return]
        yt = y.T
        return fn(x.T, yt, n, alpha) is yt  # type: ignore[no-any-return]
    if not y.flags.c_contiguous:
        return False
    ys, xs = y.reshape(-1), x.reshape(-1)  # a view of y; x's C order (a copy if strided)
    step = _AXPY_ONE_THREAD
    for i in range(0, n, step):
        yi = ys[i : i + step]
        fn(xs[i : i + step], yi, yi.size, alpha)  # contiguous: written in place
    return True


def axpy_checked(y: np.ndarray, x: np.ndarray, alpha: float) -> bool:
    """``axpy`` for a caller that has checked what it checks of its arguments: ``x`` and
    ``y`` NumPy arrays of one dtype and one shape, ``y`` writeable, ``alpha`` a Python
    float that is not zero (``lerp_``'s in-place kernel, on every Adam step).  False:
    ``y`` untouched (no BLAS for the dtype, a non-contiguous ``y``)."""
    functions = _FUNCTIONS if _FUNCTIONS is not None else _functions()
    fn = functions.get(y.dtype)
    if fn is None:
        return False
    n = y.size
    return _run_axpy(fn, y, x, n, alpha) if n else True


def fused_add(x: Any, y: Any, alpha: Any) -> Any:
    """``x + alpha * y`` as a new array, each element rounded once (arrays of one float32
    or float64 dtype that broadcast together); None when ``axpy`` cannot run."""
    if type(x) is not np.ndarray or type(y) is not np.ndarray or x.dtype != y.dtype or not alpha:
        return None
    if x.dtype not in (_F32, _F64) or not (_FUNCTIONS if _FUNCTIONS is not None else _functions()):
        return None
    try:
        shape = np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return None  # the caller's formula raises the shape error
    out = np.empty(shape, x.dtype)
    out[...] = x
    if y.shape != shape:  # axpy copies any other layout of ``y`` itself
        y = np.broadcast_to(y, shape)
    return out if axpy(out, y, alpha) else None


# Note [Linear by gemm]
# ~~~~~~~~~~~~~~~~~~~~~
# F.linear with a bias, ``addmm(b, x, w.t())``, pairs a row-major [M, K] ``x`` with a
# row-major [N, K] weight.  NumPy computes the product with BLAS and then adds the bias
# in a second pass over the result.  BLAS ``?gemm`` computes ``C = alpha * op(A) op(B)
# + beta * C`` into a column-major ``C``, and the transpose of a row-major [M, N] result is one: so the result is allocated,
# the bias broadcast into it, and gemm adds ``w @ x.T`` (the transposed weight ``w.T``
# given transposed, ``x.T`` as it is) into its transpose with ``beta = 1``, the bias
# taken in the product's pass, as PyTorch's CPU addmm does (it copies ``self`` into the
# result and calls gemm with ``beta``).  On the development machine (OpenBLAS, one
# thread) that took 0.60-0.93x NumPy's ``x @ w.T + b`` for every batch of 1-256 with K
# below 1024 (the SciPy wrapper: ~1.1 us for a 3x4 by 4x5, NumPy's two calls 1.8-2.0);
# with K of 1024 it took 1.1-1.5x, so K >= 1024 is left to NumPy; the small batches of
# Note [Small batches against a row-major weight] (in backends/common/linalg.py) take
# that turn instead, where it is faster still.  Without a bias (mm, ``x @ w.T``) gemm
# measured 0.9-1.1x NumPy's product, slower for a short K (a backward's ``g @ w`` with
# K of 10: 2.25 against 2.02 us), so those keep NumPy's ``dot`` and the turn, and the
# backward lanes their ``matmul``.  The bias in the sum changes where it is rounded
# in: with it, each element is ``bias + p1 + p2`` over the product's K blocks
# (OpenBLAS splits K above 256-384), without it ``(p1 + p2) + bias``; and NumPy computes
# a one-row or one-column product as a matrix-vector product, in another order.  Both
# are the product correctly summed, as PyTorch's (MKL's order, a third one) is; the fast
# and the general path both call ``gemm``, so they agree bit for bit
# (tests/backends/test_linear_gemm.py).
def gemm(a: np.ndarray, b: np.ndarray, bias: Any) -> np.ndarray | None:
    """``a @ b + bias`` as a new C-contiguous array (its own memory), by
    BLAS ``?gemm`` (Note [Linear by gemm]); None where it does not apply: ``a`` a
    C-contiguous [M, K] and ``b`` an F-contiguous [K, N] (a row-major weight
    transposed) of one dtype, float32 or float64, none of M, K, N zero and K below
    1024, ``bias`` an array of that dtype of at most two dimensions that broadcasts to
    [M, N] (the caller's path explains one that does not), and SciPy present."""
    if type(a) is not np.ndarray or type(b) is not np.ndarray or a.ndim != 2 or b.ndim != 2:
        return None
    m, k = a.shape
    kb, n = b.shape
    if not 0 < k < 1024 or not m or not n or kb != k:
        return None
    if m * n * k > _GEMM_ONE_THREAD and blas_threads() != 1:  # Note [Two BLAS thread pools]
        return None
    if _FUNCTIONS is None:
        _functions()
    # The dtypes by identity (NumPy's native float32 and float64 are single objects; any
    # other spelling, a byte-swapped one, goes NumPy's way): no dtype hash or comparison.
    dt = a.dtype
    fn = _SGEMM if dt is _F32 else _DGEMM if dt is _F64 else None
    if fn is None or b.dtype is not dt or not a.flags.c_contiguous:
        return None
    b_flags = b.flags  # N or K 1 (C-contiguous too): the product kernels' plain ``dot``
    if not b_flags.f_contiguous or b_flags.c_contiguous:
        return None
    if type(bias) is not np.ndarray or bias.dtype is not dt or bias.ndim > 2:
        return None
    c = np.empty((m, n), dt)
    try:
        c[...] = bias
    except ValueError:  # a bias that does not broadcast
        return None
    ct = c.T
    # Positional: alpha, a, b, beta, c, trans_a, trans_b, overwrite_c (keywords cost
    # ~0.3 us to parse).  The wrapper writes into ``ct`` itself: it is column-major.
    if fn(1.0, b, a.T, 1.0, ct, 1, 0, 1) is not ct:  # pragma: no cover - it always is
        return None
    return c

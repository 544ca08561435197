"""``y + alpha * x`` rounded once, by BLAS ``axpy`` (Note [Fused add with alpha]).

Imports: NumPy; SciPy's BLAS wrappers on first use (``scipy.linalg.blas``, ~0.3 s the
first time, so not at ``import tensor``).

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

__all__ = ["axpy", "fused_add"]

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_LOCK = threading.Lock()
_FUNCTIONS: dict[np.dtype, Any] | None = None  # dtype -> ?axpy; {} without SciPy


def _functions() -> dict[np.dtype, Any]:
    global _FUNCTIONS
    with _LOCK:
        if _FUNCTIONS is None:
            try:
                from scipy.linalg import blas
            except ImportError:
                _FUNCTIONS = {}
            else:
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
        yt = y.T
        if fn(x.T, yt, n, alpha if type(alpha) is float else float(alpha)) is not yt:
            return False
    return True


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

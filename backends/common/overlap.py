"""PyTorch's check that an elementwise write does not partly overlap what it reads.

Imports: NumPy (its bounds test for its own arrays); otherwise nothing but the arrays it
is given (NumPy or CuPy; both have ``base``, ``strides``, ``size`` and a data pointer).

Note [Overlapping writes]
~~~~~~~~~~~~~~~~~~~~~~~~~
An in-place or ``out=`` elementwise call (``x.add_(y)``, ``tt.sin(y, out=x)``) whose
written tensor shares some, but not all, of its memory with an input is refused by
PyTorch (TensorIterator's ``compute_mem_overlaps``): ``x.add_(x.T)`` or
``x[1:].add_(x[:-1])`` would read elements already written, so the answer would depend
on the loop order.  Writing into exactly the input (``x.add_(x)``: same memory, same
strides) is allowed.  PyTorch's rule, ``get_overlap_status``, which this copies:
- the same array, or an empty one: no conflict;
- either not "non-overlapping and dense" (a strided slice, an expansion): too hard to
  tell, allowed;
- the same byte range: full overlap when the strides agree (allowed), else partial;
- byte ranges that intersect: partial (refused).
NumPy computes such calls as if the inputs were read first, so without this check
we would return an answer where PyTorch raises.

The common call (``p -= lr * g``: arrays that own their memory, neither a view) costs
two attribute reads: two arrays that each own their memory cannot share it.  A view
among NumPy arrays (AccumulateGrad adding a transposed weight gradient into ``.grad``,
``x[1:] += y``) first takes NumPy's ``may_share_memory``, a byte-range test in C
(~0.2 us): ranges apart cannot overlap, which is the rule's last step anyway, so only
arrays whose ranges meet take the rule's Python steps (~5.7 us).
tests/tensor/test_wrong_answers_elementwise.py compares the two.
"""

from __future__ import annotations

from typing import Any

import numpy as _np

__all__ = ["PARTIAL_OVERLAP", "check_in_place", "partial_overlap"]

PARTIAL_OVERLAP = (
    "unsupported operation: some elements of the input tensor and the written-to tensor "
    "refer to a single memory location. Please clone() the tensor before performing the "
    "operation."
)


def _dense(a: Any) -> bool:
    """Whether ``a``'s elements fill its byte range exactly once (any order of dims)."""
    expected = a.itemsize
    for stride, size in sorted((s, n) for s, n in zip(a.strides, a.shape, strict=False) if n != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def _start(a: Any) -> int:
    iface = getattr(a, "__array_interface__", None)
    if iface is None:  # CuPy
        iface = a.__cuda_array_interface__
    return int(iface["data"][0])


def partial_overlap(written: Any, read: Any) -> bool:
    """PyTorch's ``get_overlap_status(written, read) == Partial`` (Note [Overlapping
    writes])."""
    if written is read or (written.base is None and read.base is None):
        return False
    if type(written) is _ndarray and type(read) is _ndarray and not _may_share(written, read):
        return False  # byte ranges apart (NumPy's bounds test, in C)
    return _overlap_rule(written, read)


_ndarray = _np.ndarray
_may_share = _np.may_share_memory


def _overlap_rule(written: Any, read: Any) -> bool:
    """``partial_overlap``'s rule past its quick exits (PyTorch's get_overlap_status)."""
    if not written.size or not read.size or not _dense(written) or not _dense(read):
        return False
    if min(written.strides, default=0) < 0 or min(read.strides, default=0) < 0:
        return False  # PyTorch has no negative strides; leave NumPy's views alone
    a0, b0 = _start(written), _start(read)
    a1, b1 = a0 + written.nbytes, b0 + read.nbytes
    if a0 == b0 and a1 == b1:
        return written.strides != read.strides
    return a0 < b1 and b0 < a1


def check_in_place(op: str, written: Any, *read: Any) -> None:
    """Raise PyTorch's RuntimeError when ``written`` partly overlaps one of the ``read``
    arrays (Note [Overlapping writes]); ``read`` may hold non-arrays (numbers, None)."""
    if not hasattr(written, "base"):  # MetaArray: no memory to share
        return
    for r in read:
        if type(r) is type(written) and partial_overlap(written, r):
            raise RuntimeError(f"{op}(): {PARTIAL_OVERLAP} (the written-to tensor and an input)")

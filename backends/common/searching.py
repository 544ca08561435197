"""searchsorted and isin: the argument checks, type promotion and shapes, written once;
the searches themselves are each backend's (``fns``).

Imports: ``backends.common``.

Note [Searching operators]
~~~~~~~~~~~~~~~~~~~~~~~~~~
Both are binary searches, O((n + m) log n) time and O(n + m) memory, where the
compositions they replace compared every pair (O(n m) memory).  ``searchsorted`` is
PyTorch's search exactly (``cus_lower_bound``/``cus_upper_bound`` in ATen's
Bucketization.cpp): halve ``[start, end)`` with ``mid = start + (end - start) // 2`` and go
right while ``!(b[mid] >= v)`` (``>`` for ``right``).  With that comparison a NaN value
goes past every element (NaNs sort last), and a NaN *boundary* sends the search right
too, so where boundaries hold NaNs the result depends on the path the halving takes
(``[1, nan, nan]`` puts 0.5 at 3); NumPy's search orders NaN last instead and gives 0.
The backends reproduce PyTorch's path: the CPU's general search is the same halving,
vectorised over the values (``log2(n) + 1`` NumPy steps), with ``np.searchsorted`` as a
fast path where the two agree (1-D boundaries without NaN); CUDA runs it one thread per
value (``backends/cuda/search.cu``).

``isin`` sorts the test elements once and searches each element among them (CUDA), or
is ``np.isin`` (the CPU, which sorts too): a NaN is never in, as in PyTorch (it never
compares equal).  Both promote their two arguments to one dtype first (a number is a
wrapped number, as in binary operators), as PyTorch does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from . import errors
from .elementwise import MetaNamespace, Namespace

__all__ = ["bisect", "kernels", "namespace_fns"]


def _sizes(shape: Any) -> str:
    return "[" + ", ".join(str(int(n)) for n in shape) + "]"


def bisect(xp: Any, bd: Any, v: Any, sorter: Any, side: str) -> Any:
    """Binary searches of every value at once, written against the array namespace ``xp``:
    ``bd``'s last dim holds the sorted rows (1-D, or with ``v``'s leading dims), ``sorter``
    (``bd``'s shape, or None) orders each row.  ``side`` "left"/"right": PyTorch's search
    (Note [Searching operators]); "sorted": the first position whose element is not less
    than the value, in a row sorted with NaNs last (``isin``).  int64 positions, ``v``'s
    shape; ``log2(n) + 1`` vectorised steps."""
    shape = tuple(v.shape)
    n = bd.shape[-1]
    flat_bd = xp.reshape(bd, (-1,))
    vals = xp.reshape(v, (-1,))
    m = vals.shape[0]
    start = xp.zeros((m,), dtype=xp.int64)
    end = xp.full((m,), n, dtype=xp.int64)
    if n == 0 or m == 0:
        return xp.reshape(start, shape)
    if bd.ndim == 1:
        base = start
    else:  # each value's row start
        base = (xp.arange(m, dtype=xp.int64) // shape[-1]) * n
    flat_sorter = None if sorter is None else xp.reshape(sorter, (-1,))
    active = start < end
    while bool(xp.any(active)):
        mid = start + (end - start) // 2
        # finished values (start == end == n) read a valid slot, and ignore it
        at = base + xp.minimum(mid, n - 1)
        if flat_sorter is not None:
            at = base + xp.take(flat_sorter, at)
        b = xp.take(flat_bd, at)
        if side == "sorted":
            go_right = b < vals
        else:
            go_right = ~(b > vals) if side == "right" else ~(b >= vals)
        go_right = go_right & active
        start = xp.where(go_right, mid + 1, start)
        end = xp.where(active & ~go_right, mid, end)
        active = start < end
    return xp.reshape(start, shape)


def namespace_fns(ns: Namespace) -> dict[str, Callable[..., Any]]:
    """The searches written against the array namespace: any device's (``bisect``, and
    ``isin`` as a sort of the test elements then a search of each element)."""
    xp, int32 = ns.xp, ns.front.int32

    def searchsorted(bd: Any, v: Any, sorter: Any, right: bool, out_int32: bool) -> Any:
        out = bisect(xp, bd, v, sorter, "right" if right else "left")
        return ns.astype(out, int32) if out_int32 else out

    def isin(x: Any, t: Any, assume_unique: bool, invert: bool) -> Any:
        t = xp.sort(xp.reshape(t, (-1,)))
        m = t.shape[0]
        if m == 0:
            hit = xp.zeros(tuple(x.shape), dtype=xp.bool)
        else:
            flat = xp.reshape(x, (-1,))
            at = bisect(xp, t, flat, None, "sorted")
            # a NaN element never equals the element found
            hit = (at < m) & (xp.take(t, xp.minimum(at, m - 1)) == flat)
            hit = xp.reshape(hit, tuple(x.shape))
        return ~hit if invert else hit

    return {"searchsorted": searchsorted, "isin": isin}


def kernels(ns: Namespace, fns: Mapping[str, Callable[..., Any]]) -> dict[str, Any]:
    """The searching kernels of one backend.  ``fns["searchsorted"](boundaries, values,
    sorter, right, out_int32)`` (int64 positions, int32 with ``out_int32``) and
    ``fns["isin"](elements, test_elements, assume_unique, invert)`` take arrays already
    promoted to one dtype (``sorter`` may be None) and return the result array; ``ns`` is
    a ``MetaNamespace`` for meta (no ``fns``)."""
    meta = isinstance(ns, MetaNamespace)
    front = ns.front
    Tensor, make, make_meta = front.Tensor, front.make, front.make_meta  # noqa: N806
    int32, int64, bool_ = front.int32, front.int64, front.bool
    ss_op, isin_op = front.op_info("searchsorted"), front.op_info("isin")
    as_array = ns.asarray if not meta else None

    def _operand(value: Any, dt: Any) -> Any:
        """``value`` (a tensor or a number) as an array of ``dt``."""
        if isinstance(value, Tensor):
            a = value._array
            return a if value._dtype is dt else ns.astype(a, dt)
        return ns.astype(ns.xp.asarray(value), dt)

    def _check_searchsorted(bd: Any, value: Any, right: bool, side: Any, sorter: Any) -> bool:
        """PyTorch's searchsorted_pre_check, in its order; returns whether to search right."""
        if side is not None:
            if side not in ("left", "right"):
                raise RuntimeError(
                    f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}"
                )
            if right and side != "right":
                raise RuntimeError(
                    f"torch.searchsorted(): side and right can't be set to opposites, got side "
                    f"of {side} while right was True"
                )
            right = side == "right"
        dev = bd._device
        if isinstance(value, Tensor) and value._device is not dev:
            raise errors.device_mismatch(
                "searchsorted", ("sorted_sequence", dev), ("self", value._device)
            )
        bshape = tuple(bd._array.shape)
        if sorter is not None:
            if sorter._device is not dev:
                raise errors.device_mismatch(
                    "searchsorted", ("sorted_sequence", dev), ("sorter", sorter._device)
                )
            if tuple(sorter._array.shape) != bshape:
                raise RuntimeError(
                    "torch.searchsorted(): boundary and sorter must have the same size, but got "
                    f"boundary tensor {_sizes(bshape)}and got sorter tensor "
                    f"{_sizes(sorter._array.shape)}"
                )
            if sorter._dtype is not int64:
                raise RuntimeError(
                    "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                    f"{sorter._dtype.name} (argument 'sorter'); convert it with .long()"
                )
            if not meta and sorter._array.size:
                s = sorter._array
                if int(ns.xp.max(s)) >= bshape[-1] or int(ns.xp.min(s)) < 0:
                    raise RuntimeError("torch.searchsorted(): sorter index out of range")
        vshape = tuple(value._array.shape) if isinstance(value, Tensor) else ()
        if not vshape and len(bshape) != 1:
            raise RuntimeError(
                "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
                f"dimension is 1, but we got boundaries tensor dim({len(bshape)}) and input "
                f"value's dim(0) numel(1)"
            )
        if not bshape:
            raise RuntimeError(
                "torch.searchsorted(): boundaries tensor should have positive dimension, but "
                "got 0 dimension"
            )
        if len(bshape) != 1 and (len(vshape) != len(bshape) or vshape[:-1] != bshape[:-1]):
            raise RuntimeError(
                "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                "dimensions of boundaries tensor and input value tensor must match, but we got "
                f"boundaries tensor {_sizes(bshape)} and input value tensor {_sizes(vshape)}"
            )
        return right

    def _searchsorted(
        sorted_sequence: Any, value: Any, out_int32: bool, right: bool, side: Any, sorter: Any
    ) -> Any:
        right = _check_searchsorted(sorted_sequence, value, right, side, sorter)
        dt = front.result_type(sorted_sequence, value)
        if dt not in ss_op.result_dtypes:
            raise errors.unsupported_dtype("searchsorted", dt, "sorted_sequence")
        odt = int32 if out_int32 else int64
        dev = sorted_sequence._device
        shape = tuple(value._array.shape) if isinstance(value, Tensor) else ()
        if meta:
            return make_meta(shape, odt, dev)
        bd = _operand(sorted_sequence, dt)
        v = _operand(value, dt)
        s = None if sorter is None else sorter._array
        out = fns["searchsorted"](bd, v, s, right, out_int32)
        return make(as_array(out), odt, dev)

    def searchsorted_tensor(
        sorted_sequence: Any, self: Any, *, out_int32: bool = False, right: bool = False,
        side: Any = None, sorter: Any = None,
    ) -> Any:  # fmt: skip
        return _searchsorted(sorted_sequence, self, out_int32, right, side, sorter)

    def searchsorted_scalar(
        sorted_sequence: Any, self: Any, *, out_int32: bool = False, right: bool = False,
        side: Any = None, sorter: Any = None,
    ) -> Any:  # fmt: skip
        return _searchsorted(sorted_sequence, self, out_int32, right, side, sorter)

    def _isin(elements: Any, test: Any, assume_unique: bool, invert: bool) -> Any:
        first = elements if isinstance(elements, Tensor) else test
        dev = first._device
        if isinstance(elements, Tensor) and isinstance(test, Tensor) and test._device is not dev:
            raise errors.device_mismatch("isin", ("elements", dev), ("test_elements", test._device))
        # PyTorch checks each operand's own dtype, before promoting them to one.
        for arg, v in (("elements", elements), ("test_elements", test)):
            own = v._dtype if isinstance(v, Tensor) else front.result_type(v)
            if own not in isin_op.result_dtypes:
                raise RuntimeError(
                    f"isin(): Unsupported input type encountered for isin(): {own.name} "
                    f"(argument '{arg}'); convert it first, e.g. x.to(tt.int64)"
                )
        dt = front.result_type(elements, test)
        shape = tuple(elements._array.shape) if isinstance(elements, Tensor) else ()
        if meta:
            return make_meta(shape, bool_, dev)
        x = _operand(elements, dt)
        t = _operand(test, dt)
        return make(as_array(fns["isin"](x, t, assume_unique, invert)), bool_, dev)

    def isin_tensor_tensor(
        elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False
    ) -> Any:
        return _isin(elements, test_elements, assume_unique, invert)

    def isin_tensor_scalar(
        elements: Any, test_element: Any, *, assume_unique: bool = False, invert: bool = False
    ) -> Any:
        return _isin(elements, test_element, assume_unique, invert)

    def isin_scalar_tensor(
        element: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False
    ) -> Any:
        return _isin(element, test_elements, assume_unique, invert)

    return {
        "searchsorted.Tensor": searchsorted_tensor,
        "searchsorted.Scalar": searchsorted_scalar,
        "isin.Tensor_Tensor": isin_tensor_tensor,
        "isin.Tensor_Scalar": isin_tensor_scalar,
        "isin.Scalar_Tensor": isin_scalar_tensor,
    }

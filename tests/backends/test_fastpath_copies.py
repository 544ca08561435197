"""Note [Copy fast path] (``clone()`` and ``_to_copy`` casts of CPU tensors) and the
half-precision branch of Note [Product fast path] against the general path (Note
[Fast-path switch]) and PyTorch, driven across both sides of their guards by hypothesis.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
import tensor.nn.functional as F
from backends.common import fastpaths
from dispatch import ops
from tests.backends.fastpath_support import ALL_DTYPES, same_both_ways, tensors, torch

# None: no dtype argument (clone); uint8 leaves the fast path (float-to-unsigned rule);
# a dtype given as a Python type or a string is not a dtype object: general path.
_TARGETS = [None, *ALL_DTYPES, float, int, bool]


def _torch_dtype(d: Any) -> Any:
    return getattr(torch, d.name) if isinstance(d, tt.dtype) else d


@settings(max_examples=300, deadline=None)
@given(x=tensors(requires_grad=None), to=st.sampled_from(_TARGETS))
def test_to_copy(x: Any, to: Any) -> None:
    def call(x: Any) -> Any:
        if isinstance(x, tt.Tensor):
            out = ops.core._to_copy.default(x, dtype=to)
            return out, out._array.flags.c_contiguous, np.shares_memory(out._array, x._array)
        return x.to(dtype=_torch_dtype(to), copy=True) if to is not None else x.clone()

    out = same_both_ways(call, x)
    if torch is not None and out.error is None and (to is None or isinstance(to, tt.dtype)):
        # PyTorch's values (the copy's layout is checked against the general path above).
        same_both_ways(lambda x: call(x)[0], x, torch_call=call)


@settings(max_examples=150, deadline=None)
@given(x=tensors(requires_grad=None))
def test_clone(x: Any) -> None:
    same_both_ways(lambda x: x.clone(), x, torch_call=lambda x: x.clone())


def test_copy_fast_path_guards() -> None:
    """The cases the guard sends the general way still copy as it does."""
    x = tt.tensor([-1.5, 2.0, 300.0])
    for args in ({"dtype": tt.uint8}, {"device": "cpu"}, {"dtype": "float16"}):
        same_both_ways(lambda x, a=args: ops.core._to_copy.default(x, **a), x)
    same_both_ways(lambda x: ops.core._to_copy.default(x, non_blocking=True), x)
    m = tt.ones(2, 3, device="meta")  # not a NumPy array: the general path
    out = ops.core._to_copy.default(m, dtype=tt.float16)
    assert (out.device.type, out.dtype, tuple(out.shape)) == ("meta", tt.float16, (2, 3))
    # A clone is never the input's memory, also for a view with offset and strides.
    v = tt.arange(12.0).reshape(3, 4).t()[1:]
    c = v.clone()
    assert not np.shares_memory(c._array, v._array)
    assert c.tolist() == v.tolist()
    # clone keeps autograd: a requires-grad input's clone has a grad_fn (general way).
    w = tt.ones(2, requires_grad=True)
    assert w.clone().grad_fn is not None


def test_unsigned_targets_keep_the_wrapping_rule(monkeypatch: Any) -> None:
    """A uint8 target leaves the fast path for ``cast_array`` (PyTorch's float-to-unsigned
    wrapping, which x86 NumPy happens to share, so values alone cannot tell)."""
    import tensor._convert as convert

    calls: list[Any] = []
    real = convert.cast_array
    monkeypatch.setattr(convert, "cast_array", lambda a, d: calls.append(d) or real(a, d))
    x = tt.tensor([-1.5, 300.0])
    assert x.to(tt.uint8).tolist() == [255, 44] and calls
    calls.clear()
    assert x.to(tt.float16).tolist() == [-1.5, 300.0] and not calls  # the fast path
    with fastpaths.disabled():
        assert x.to(tt.float16).tolist() == [-1.5, 300.0] and calls


# -- the half-precision branch of Note [Product fast path] ------------------------------------
_HALF = (tt.bfloat16, tt.float16)
_RANKS = [(1, 1), (2, 2), (2, 1), (1, 2), (3, 3), (3, 2)]


@st.composite
def half_operands(draw: st.DrawFn, ranks: Any = _RANKS) -> tuple[Any, Any]:
    """Half-precision operands with non-integral values (rounding matters), usually of one
    dtype and matching shapes, sometimes not (the guard's other side)."""
    dt = draw(st.sampled_from(_HALF))
    dt2 = dt if draw(st.booleans()) else draw(st.sampled_from((*_HALF, tt.float32)))
    m, k, n = (draw(st.sampled_from([1, 2, 5, 8])) for _ in range(3))
    k2 = k if draw(st.integers(0, 4)) else k + 1
    ra, rb = draw(st.sampled_from(ranks))
    shape_a = {1: (k,), 2: (m, k), 3: (2, m, k)}[ra]
    shape_b = {1: (k2,), 2: (k2, n), 3: (2, k2, n)}[rb]
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    a = tt.tensor(rng.standard_normal(shape_a).astype(np.float32)).to(dt)
    b = tt.tensor(rng.standard_normal(shape_b).astype(np.float32)).to(dt2)
    if draw(st.booleans()) and b.ndim == 2:
        b = b.t().contiguous().t()  # a transposed view: other strides, same values
    return a, b


@settings(max_examples=200, deadline=None)
@given(ab=half_operands(), op=st.sampled_from(["matmul", "mm", "bmm", "dot", "vdot", "outer"]))
def test_half_products_round_once(ab: tuple[Any, Any], op: str) -> None:
    def call(a: Any, b: Any) -> Any:
        return getattr(a, op)(b)

    # Exact against the general path (computed in float32, rounded once); PyTorch's CPU
    # kernels accumulate in float32 too, in another order: within a rounding step.
    same_both_ways(call, *ab)
    same_both_ways(call, *ab, rtol=2e-2, torch_call=call)


@settings(max_examples=100, deadline=None)
@given(ab=half_operands(ranks=[(2, 2)]), bias=st.sampled_from(["none", "row", "full", "bad"]))
def test_half_linear_and_addmm(ab: tuple[Any, Any], bias: str) -> None:
    x, w = ab
    shape = {
        "row": (w.shape[1],),
        "full": (x.shape[0], w.shape[1]),
        "bad": (w.shape[1] + 1,),
    }.get(bias)
    if shape is None:
        same_both_ways(lambda x, w: x @ w, x, w, rtol=2e-2, torch_call=lambda x, w: x @ w)
        return
    c = tt.tensor(np.linspace(-1.5, 1.5, int(np.prod(shape))).reshape(shape)).to(x.dtype)

    def addmm(c: Any, x: Any, w: Any) -> Any:
        lib = tt if isinstance(x, tt.Tensor) else torch
        return lib.addmm(c, x, w)

    same_both_ways(addmm, c, x, w)
    same_both_ways(addmm, c, x, w, rtol=2e-2, torch_call=addmm)
    if bias != "full":  # F.linear(x, weight, bias) is addmm(bias, x, weight.t())

        def linear(x: Any, w: Any, c: Any) -> Any:
            f = F.linear if isinstance(x, tt.Tensor) else torch.nn.functional.linear
            return f(x, w.t(), c)

        same_both_ways(linear, x, w, c, rtol=2e-2, torch_call=linear)


def test_takes_device_reads_what_inspect_signature_reads() -> None:
    """backends.common.variants._takes_device (the out kernels' factory test) against
    ``inspect.signature``, on every CPU kernel and on callables it must leave to it."""
    import functools
    import inspect

    from backends.common.variants import _takes_device
    from backends.cpu import elementwise, linalg, nn, reduction, shape
    from tensor._frontend import FRONT

    def plain(x: Any, device: Any = None) -> None: ...
    def kwonly(x: Any, *, device: Any = None) -> None: ...
    def other(x: Any, *args: Any, **device: Any) -> None: ...

    @functools.wraps(plain)
    def wrapped(*args: Any, **kwargs: Any) -> None: ...

    class Call:
        def __call__(self, x: Any, device: Any = None) -> None: ...

    candidates: list[Any] = [plain, kwonly, other, wrapped, Call(), functools.partial(plain, 1)]
    candidates += [Call().__call__, max]
    for module in (elementwise, reduction, linalg, shape, nn):
        candidates += list(module.kernels(FRONT).values())
    checked = 0
    for fn in candidates:
        try:
            expected = "device" in inspect.signature(fn).parameters
        except ValueError:  # a builtin without a signature: not asked of either
            continue
        assert _takes_device(fn) == expected, fn
        checked += 1
    assert checked > 200

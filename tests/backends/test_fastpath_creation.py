"""Property tests of the factories' fast paths (backends/common/creation.py: ``empty``,
``zeros``, ``ones`` with a dtype and a device object, ``arange(n)``; the ``*_like``
composites that call them): the general path's answer and PyTorch's, on both sides of
each guard (dtype None or given, device None / "cpu" / "cpu:0" / device objects, sizes
as ints, tuples, lists, varargs, empty; requires_grad; arange with and without start,
step, floats, big sizes)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from tests.backends.fastpath_support import ALL_DTYPES, numbers, same_both_ways, tensors, torch

FEW = settings(deadline=None, max_examples=60)
SIZES = [0, 3, (), [], (0,), (2, 3), [2, 3], (1, 0, 2), (4,), "varargs"]
DEVICES = [None, "cpu", "cpu:0", "device:cpu", "device:cpu:0"]
DTYPES = [None, *ALL_DTYPES]


def _device(module, d):
    if isinstance(d, str) and d.startswith("device:"):
        return module.device(d.removeprefix("device:"))
    return d


def _dtype(module, dt):
    return None if dt is None else getattr(module, dt.name)


def _call(module, name, size, **kw):
    fn = getattr(module, name)
    if size == "varargs":
        return fn(2, 3, **kw)
    return fn(size, **kw)


def _metadata(t):
    """What an uninitialised tensor can be compared by."""
    return (str(t.dtype).rpartition(".")[2], tuple(t.shape), str(t.device), t.requires_grad)


@FEW
@given(
    name=st.sampled_from(["zeros", "ones", "empty"]),
    size=st.sampled_from(SIZES),
    dtype=st.sampled_from(DTYPES),
    device=st.sampled_from(DEVICES),
    grad=st.booleans(),
)
def test_filled(name, size, dtype, device, grad):
    def run(module):
        kw = {"dtype": _dtype(module, dtype), "device": _device(module, device)}
        if grad:
            kw["requires_grad"] = True
        t = _call(module, name, size, **kw)
        return _metadata(t) if name == "empty" else t

    same_both_ways(lambda: run(tt), torch_call=lambda: run(torch))


@FEW
@given(
    x=tensors(requires_grad=None),
    name=st.sampled_from(["zeros_like", "ones_like", "empty_like", "full_like"]),
    dtype=st.sampled_from(DTYPES),
    device=st.sampled_from(DEVICES),
    fill=numbers("bif"),
)
def test_like(x, name, dtype, device, fill):
    def run(module, a):
        kw = {"dtype": _dtype(module, dtype), "device": _device(module, device)}
        args = (fill,) if name == "full_like" else ()
        t = getattr(module, name)(a, *args, **kw)
        return _metadata(t) if name == "empty_like" else t

    same_both_ways(lambda a: run(tt, a), x, torch_call=lambda a: run(torch, a))


@FEW
@given(
    size=st.sampled_from(SIZES),
    fill=numbers(),
    dtype=st.sampled_from(DTYPES),
    device=st.sampled_from(DEVICES),
)
def test_full(size, fill, dtype, device):
    if type(fill) is complex and dtype is tt.float16:
        return  # complex32 in PyTorch

    def run(module):
        kw = {"dtype": _dtype(module, dtype), "device": _device(module, device)}
        if size == "varargs":
            return module.full((2, 3), fill, **kw)
        return module.full(size, fill, **kw)

    # PyTorch refuses an int size for full (a tuple is needed); we take it (left alone).
    tcall = None if type(size) is int else lambda: run(torch)
    same_both_ways(lambda: run(tt), torch_call=tcall)


_ENDS = st.sampled_from([0, 1, 5, -3, 2**20, 2**62, 2**63 - 1, True, 2.5, -0.0, 1e-3])
_STEPS = st.sampled_from([1, 2, -1, 3, 0, 0.5, -0.25, True])


@FEW
@given(
    start=st.none() | st.sampled_from([0, 1, -2, 0.0, 0.5, True]),
    end=_ENDS,
    step=st.none() | _STEPS,
    dtype=st.sampled_from([None, tt.int64, tt.int32, tt.uint8, tt.float32, tt.float64]),
    device=st.sampled_from(DEVICES),
    grad=st.booleans(),
)
def test_arange(start, end, step, dtype, device, grad):
    big = abs(float(end)) > 2**24 or abs(float(start or 0)) > 2**24
    if big and (step is None or abs(step) < 1 or start is not None):
        return  # a huge tensor that PyTorch would make too: only the refused sizes run
    if big and dtype is not None and dtype.itemsize < 8:
        return

    def run(module):
        kw = {"dtype": _dtype(module, dtype), "device": _device(module, device)}
        if grad:
            kw["requires_grad"] = True
        if start is None:
            return module.arange(end, **kw)
        if step is None:
            return module.arange(start, end, **kw)
        return module.arange(start, end, step, **kw)

    same_both_ways(lambda: run(tt), torch_call=lambda: run(torch))


@FEW
@given(n=st.integers(0, 40), device=st.sampled_from(DEVICES))
def test_arange_index_vector(n, device):
    """The fast path's own call, ``arange(n)``, for many ``n``."""
    same_both_ways(
        lambda: tt.arange(n, device=_device(tt, device)),
        torch_call=lambda: torch.arange(n, device=_device(torch, device)),
    )


@FEW
@given(
    name=st.sampled_from(["zeros", "ones", "empty", "arange"]),
    dtype=st.sampled_from(["float32", float, 1, tt.float32.numpy_dtype]),
)
def test_dtype_that_is_not_a_dtype(name, dtype):
    """The fast path takes the dtype it is given only when it is one of the op's dtypes."""
    same_both_ways(lambda: _metadata(getattr(tt, name)(3, dtype=dtype)))


@pytest.mark.parametrize("step", [None, 1, 2, -1])
@pytest.mark.parametrize("start", [-2, 0, 1, 3])
@pytest.mark.parametrize("end", [-3, 0, 2, 5])
def test_arange_int_bounds(start, end, step):
    """Every int start, end and step next to ``arange(n)``'s guard (start 0, step 1)."""
    args = (start, end) if step is None else (start, end, step)
    same_both_ways(lambda: tt.arange(*args), torch_call=lambda: torch.arange(*args))


_INT_LIMITS = [(tt.uint8, 0, 255), (tt.int8, -128, 127), (tt.int16, -(2**15), 2**15 - 1),
               (tt.int32, -(2**31), 2**31 - 1), (tt.int64, -(2**63), 2**63 - 1)]  # fmt: skip


@pytest.mark.parametrize(("dt", "lo", "hi"), _INT_LIMITS)
@pytest.mark.parametrize("which", ["lo", "hi", "below", "above", "float_hi", "float_lo"])
@pytest.mark.parametrize("how", ["full", "fill_", "where", "clamp", "masked_fill"])
def test_numbers_at_the_limits(dt, lo, hi, which, how):
    """Note [Numbers that overflow]: the largest and smallest numbers that fit, and the
    next ones, as PyTorch (backends/common/numbers.py)."""
    value = {"lo": lo, "hi": hi, "below": lo - 1, "above": hi + 1}.get(which)
    if value is None:
        value = float(hi) if which == "float_hi" else float(lo)
        if dt is tt.int64:
            return  # 2**63 as a double is above int64's max; PyTorch's own check differs
    _store(how, dt, value)


@pytest.mark.parametrize("dt", [tt.float32, tt.float16, tt.bfloat16, tt.int32, tt.complex64])
@pytest.mark.parametrize("value", [1 + 0j, 2 - 1j, 0j, -1.5j, complex(3e38, 0), 1e39, -7e4])
@pytest.mark.parametrize("how", ["full", "fill_", "masked_fill"])
def test_complex_and_big_numbers(dt, value, how):
    _store(how, dt, value)


def _store(how, dt, value):
    tdt = None if torch is None else getattr(torch, dt.name)

    def run(module, d):
        x = module.zeros(2, dtype=d)
        if how == "full":
            return module.full((2,), value, dtype=d)
        if how == "fill_":
            return x.fill_(value)
        if how == "where":
            return module.where(module.tensor([True, False]), x, value)
        if how == "clamp":
            return module.clamp(x, max=value)
        return x.masked_fill(module.tensor([True, False]), value)

    same_both_ways(lambda: run(tt, dt), torch_call=lambda: run(torch, tdt))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (1, 0, 2), (5, 1, 4)])
def test_ones_by_fill_is_numpys_ones(dtype, shape):
    """The CPU's ``ones`` is ``empty`` then ``fill(1)``: NumPy's ``ones``, byte for byte."""
    import numpy as np

    from backends.common.creation import ones_by_fill

    expected = np.ones(shape, dtype.numpy_dtype)
    got = ones_by_fill(shape, dtype=dtype.numpy_dtype)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes() and got.flags.c_contiguous
    assert tt.ones(*shape, dtype=dtype).numpy().tobytes() == expected.tobytes()


@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
def test_sizes_the_wrapper_passes_as_they_are_are_checked_as_before(name):
    """The wrappers pass a varargs size of plain non-negative ints as it is; anything else
    (bools, floats, negatives, index objects) goes through the size check with its
    message."""
    import numpy as np

    fn = getattr(tt, name)
    assert fn(2, 3).shape == fn((2, 3)).shape == fn([2, 3]).shape == (2, 3)
    assert fn(np.int64(2), 3).shape == (2, 3)
    with pytest.raises(TypeError, match=f"{name}\\(\\): argument 'size'"):
        fn(True, 2)
    with pytest.raises(TypeError, match="element 0 is float"):
        fn(2.0, 3)
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        fn(2, -1)

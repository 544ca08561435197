"""Property tests of Note [Optimizer fast paths] (``backends/common/ternary.py``): lerp,
addcmul and addcdiv, functional and in place, give the general path's answer bit for bit
and PyTorch's, on both sides of the guard: dtypes (float32/float64/complex against half
precision, integers, bool and mixed), the weight or ``value`` (Python int or float against
bool, complex, a tensor weight, numbers that overflow the dtype), broadcasting shapes,
0-d tensors, views, NaN/inf/-0.0."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from tests.backends.fastpath_support import ALL_DTYPES, numbers, same_both_ways, tensors, torch

FEW = settings(deadline=None, max_examples=60)
GUARDED = (tt.float32, tt.float64, tt.complex64)
DTYPES = st.sampled_from([GUARDED, ALL_DTYPES])
SHAPES = [(3,), (2, 3), (1, 3), (), (2, 1)]
WEIGHTS = numbers("bifc") | st.sampled_from([0.1, 0.5, 0.9, -0.5, 1e39, 2**40])


def _finite_small(*values: object) -> bool:
    """Inputs whose results PyTorch's vectorised loops round as ours do (no overflow, NaN
    or inf: PyTorch's lerp and addc* use fused multiply-adds in places)."""
    for v in values:
        if isinstance(v, tt.Tensor):
            a = v.numpy()
            if a.dtype.kind in "fc" and (~np.isfinite(a) | (np.abs(a) > 1e3)).any():
                return False
        elif isinstance(v, (int, float, complex)) and abs(v) > 1e3:
            return False
    return True


@FEW
@given(
    dtypes=DTYPES,
    data=st.data(),
    weight=WEIGHTS,
    in_place=st.booleans(),
)
def test_lerp(dtypes, data, weight, in_place):
    x = data.draw(tensors(dtypes=dtypes, shapes=SHAPES))
    end = data.draw(tensors(dtypes=dtypes, shapes=SHAPES))
    if in_place:
        call = lambda a, b: a.lerp_(b, weight)  # noqa: E731
    else:
        call = lambda a, b: a.lerp(b, weight)  # noqa: E731
    same_both_ways(call, x, end)
    # Left out of the PyTorch comparison, found here and left alone (no fast path takes
    # part; the general path differs): a 0-d ``end`` of another dtype and a complex weight
    # on real tensors are accepted here and refused by PyTorch.
    same = x.dtype is end.dtype and not isinstance(weight, complex)
    if torch is not None and same and x.dtype.is_floating_point and _finite_small(x, end, weight):
        same_both_ways(call, x, end, rtol=1e-5, torch_call=call)


@FEW
@given(
    dtypes=DTYPES,
    data=st.data(),
    value=WEIGHTS,
    op=st.sampled_from(["addcmul", "addcdiv"]),
    in_place=st.booleans(),
)
def test_addcmul_addcdiv(dtypes, data, value, op, in_place):
    x = data.draw(tensors(dtypes=dtypes, shapes=SHAPES))
    a = data.draw(tensors(dtypes=dtypes, shapes=SHAPES))
    b = data.draw(tensors(dtypes=dtypes, shapes=SHAPES))
    name = op + "_" if in_place else op
    call = lambda s, t1, t2: getattr(s, name)(t1, t2, value=value)  # noqa: E731
    same_both_ways(call, x, a, b)
    floating = all(t.dtype.is_floating_point for t in (x, a, b))
    if torch is not None and floating and _finite_small(x, a, b, value):
        same_both_ways(call, x, a, b, rtol=1e-5, torch_call=call)


@FEW
@given(x=tensors(dtypes=(tt.float32,), shapes=[(300,)], views=False), w=st.floats(-2, 2))
def test_lerp_both_branches(x, w):
    """A weight on each side of 0.5 (the formula's two branches), 300 elements a draw."""
    end = tt.ones(300) * 3.0
    same_both_ways(lambda a, b: a.lerp(b, w), x, end)


def test_adam_update_takes_the_fast_path():
    """Adam's single-tensor spelling: m.lerp_, v.mul_().addcmul_, p.addcdiv_ on float32
    tensors of one device; the guarded side runs (results agree with the general path)."""
    p, g = tt.ones(4, 4), tt.full((4, 4), 0.5)
    m, v = tt.zeros(4, 4), tt.zeros(4, 4)
    m.lerp_(g, 0.1)
    v.mul_(0.999).addcmul_(g, g, value=0.001)
    p.addcdiv_(m, v.sqrt().add_(1e-8), value=-0.01)
    assert np.allclose(p.numpy(), 1 - 0.01 * 0.05 / (np.sqrt(0.00025) + 1e-8))


# Note [Fused lerp] (backends/common/ternary.py): float32/float64 with a number weight.
@FEW
@given(
    x=tensors(dtypes=(tt.float32, tt.float64), shapes=[(3,), (2, 3), (300,)]),
    weight=st.sampled_from([0.1, 0.9, -0.3, 0.5, 1.0, 0.0, 2.5]) | st.floats(-2, 2, width=32),
    in_place=st.booleans(),
    data=st.data(),
)
def test_lerp_rounds_as_pytorchs_fused_multiply_add(x, weight, in_place, data):
    """Both paths agree, and equal PyTorch's bit for bit (compare_with_torch allows
    float32 a relative 1e-5, which the last bit's difference hides)."""
    end = data.draw(tensors(dtypes=(x.dtype,), shapes=[x.shape, x.shape[-1:], ()]))
    call = (lambda a, b: a.lerp_(b, weight)) if in_place else (lambda a, b: a.lerp(b, weight))
    ours = same_both_ways(call, x, end)
    if torch is None or ours.error is not None or not _finite_small(x, end):
        return
    from tests.backends.fastpath_support import to_torch

    theirs = call(to_torch(x), to_torch(end)).detach().numpy()
    np.testing.assert_array_equal(ours.value.numpy(), theirs)


@FEW
@given(
    x=tensors(dtypes=(tt.float32, tt.float64), shapes=[(3,), (2, 3), (300,)]),
    weight=st.sampled_from(
        [0.49, 0.4899999, 0.4900001, 0.49999999999, 0.5, -0.49, -0.4900001]
        + [1e-300, -1e-300, 1e-30, 1.0000001e-30, -1.0000001e-30, 1e-40, 1e-45]
    )
    | st.floats(-0.6, 0.6),
    data=st.data(),
)
def test_lerp_in_place_double_weights(x, weight, data):
    """``lerp_``'s lane for a Python float weight inside +-0.49, passed to BLAS as it is
    (not rounded by NumPy first): weights of full double precision on both sides of its
    bounds, some that round to 0.5, to a subnormal or to 0 in float32 (a zero alpha BLAS
    would skip, where ``0 * inf`` is NaN), against the general path and PyTorch."""
    end = data.draw(tensors(dtypes=(x.dtype,), shapes=[x.shape]))
    ours = same_both_ways(lambda a, b: a.lerp_(b, weight), x, end)
    if torch is None or ours.error is not None or not _finite_small(x, end):
        return
    from tests.backends.fastpath_support import to_torch

    theirs = to_torch(x).lerp_(to_torch(end), weight).detach().numpy()
    np.testing.assert_array_equal(ours.value.numpy(), theirs)


def test_lerp_two_step_formula_would_miss():
    """The data of the test above is not one where rounding twice happens to agree: the
    two-step ``x + w * (e - x)`` misses PyTorch's (and ours) on a tenth of 4,096 random
    float32 elements; ours matches the single rounding (float64 sums of exact products)."""
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((2, 4096), dtype=np.float32)
    w = np.float32(0.1)
    exact = (a.astype(np.float64) + np.float64(w) * (b - a).astype(np.float64)).astype(np.float32)
    assert ((a + w * (b - a)) != exact).mean() > 0.05
    np.testing.assert_array_equal(tt.lerp(tt.tensor(a), tt.tensor(b), 0.1).numpy(), exact)
    m = tt.tensor(a)
    m.lerp_(tt.tensor(b), 0.1)
    np.testing.assert_array_equal(m.numpy(), exact)


def test_read_only_self_is_left_alone() -> None:
    """A read-only ``self`` (``from_numpy`` of a read-only array): the in-place kernels
    write nothing and raise the general path's error (addcmul_/addcdiv_ learn it from
    the last write, which NumPy refuses before writing)."""
    import warnings

    from backends.common import fastpaths

    g = tt.tensor(np.linspace(-1, 1, 6, dtype=np.float32))
    calls = {
        "addcmul_": lambda v: v.addcmul_(g, g, value=0.5),
        "addcdiv_": lambda v: v.addcdiv_(g, g + 2, value=0.5),
        "lerp_": lambda v: v.lerp_(g, 0.1),
    }
    for name, call in calls.items():
        errors = []
        for disabled in (False, True):
            a = np.arange(6, dtype=np.float32)
            a.flags.writeable = False
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # from_numpy's warning about read-only arrays
                v = tt.from_numpy(a)
            with fastpaths.disabled() if disabled else warnings.catch_warnings():
                try:
                    call(v)
                except (RuntimeError, ValueError) as e:
                    errors.append((type(e), str(e)))
                else:
                    errors.append(None)
            np.testing.assert_array_equal(a, np.arange(6, dtype=np.float32))
        assert errors[0] is not None and errors[0] == errors[1], (name, errors)


@pytest.mark.parametrize("dtype", [tt.float32, tt.float64])
@pytest.mark.parametrize("op", ["addcmul_", "addcdiv_"])
@pytest.mark.parametrize("value", [0, 0.5, -2])
def test_in_place_on_0d_tensors(dtype, op, value):
    """0-d operands (a scalar parameter's Adam step): NumPy's product of two 0-d arrays is a
    scalar, which the fast path's ``out=`` refused with a TypeError; they go the general
    way, as every other shape of theirs agrees with."""

    def call(s, t1, t2):
        return getattr(s, op)(t1, t2, value=value)

    x, a, b = (tt.tensor(v, dtype=dtype) for v in (1.5, 2.0, 4.0))
    out = same_both_ways(call, x, a, b, rtol=1e-6, torch_call=call)
    assert out.error is None and out.value.shape == ()

"""Running one call with the fast paths on and off, and comparing the two (Note [Fast-path
switch]); hypothesis strategies for the inputs that sit on both sides of the guards.

A test writes the call once, as a function of its inputs::

    @given(x=tensors(), y=numbers())
    def test_add_scalar(x, y):
        same_both_ways(lambda: x + y)

``same_both_ways`` runs it with the fast paths on, then inside ``fastpaths.disabled()``,
and asserts the same outcome: the same exception class, or results with the same type,
dtype, shape, device, values (NaN where NaN, the same sign of zero) and the same
view-ness (a fast path that returns a copy where the general path returns a view, or the
reverse, is a wrong answer too).  In-place calls get fresh copies of their inputs on each
run (``fresh``), and the mutated inputs are compared as well.  With ``torch`` given (the
same call spelled for PyTorch, when PyTorch is installed), the fast result is also
compared with PyTorch's.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st

import tensor as tt
from backends.common import fastpaths

try:  # PyTorch is optional: compared with when installed.
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

__all__ = [
    "ALL_DTYPES",
    "FLOAT_DTYPES",
    "Outcome",
    "assert_same",
    "fresh",
    "numbers",
    "outcome",
    "same_both_ways",
    "special_floats",
    "tensors",
    "to_torch",
    "torch",
    "torch_quirk",
]

FLOAT_DTYPES = (tt.float16, tt.bfloat16, tt.float32, tt.float64)
INT_DTYPES = (tt.uint8, tt.int8, tt.int16, tt.int32, tt.int64)
ALL_DTYPES = (tt.bool, *INT_DTYPES, *FLOAT_DTYPES, tt.complex64, tt.complex128)

special_floats = st.sampled_from(
    [0.0, -0.0, 1.0, -1.5, 1e-3, 7e4, 1e38, float("inf"), -float("inf"), float("nan")]
)


class Outcome:
    """What a call did: returned ``value`` or raised ``error``; ``inputs`` are the
    tensors it was given, after the call (in-place ops change them)."""

    def __init__(
        self, value: Any = None, error: BaseException | None = None, inputs: Sequence[Any] = ()
    ) -> None:
        self.value, self.error, self.inputs = value, error, tuple(inputs)

    def __repr__(self) -> str:
        return f"Outcome(error={self.error!r})" if self.error else f"Outcome({self.value!r})"


# How each view the strategies made was made: id -> (weakref to it, its base, the view op),
# so ``fresh`` can make the same view of a copy of the base.
_VIEWS: dict[int, tuple[Any, Any, Callable[[Any], Any]]] = {}


def _remember_view(view: Any, base: Any, make: Callable[[Any], Any]) -> Any:
    _VIEWS[id(view)] = (weakref.ref(view), base, make)
    return view


def fresh(*xs: Any) -> list[Any]:
    """Copies of tensors, each a view made the same way when it was a view the strategies
    made (same shape, strides, offset), with its requires_grad; other values unchanged."""
    out = []
    for x in xs:
        if not isinstance(x, tt.Tensor):
            out.append(x)
            continue
        entry = _VIEWS.get(id(x))
        if entry is not None and entry[0]() is x:
            _, base, make = entry
            c = make(base.detach().clone())
        else:
            c = x.detach().clone()
        if x.requires_grad:
            c = c.requires_grad_()
        out.append(c)
    return out


def outcome(call: Callable[..., Any], *inputs: Any) -> Outcome:
    """Run ``call(*fresh(inputs))``; what it returned or raised, and the inputs after it."""
    args = fresh(*inputs)
    try:
        value = call(*args)
    except Exception as e:  # noqa: BLE001 - the error is the outcome
        return Outcome(error=e, inputs=args)
    return Outcome(value=value, inputs=args)


def _as_numpy(t: Any) -> np.ndarray:
    a = np.asarray(t.detach()._array if isinstance(t, tt.Tensor) else t)
    if a.dtype.name == "bfloat16":
        a = a.astype(np.float32)
    return a


def _same_values(a: np.ndarray, b: np.ndarray, rtol: float, what: str) -> None:
    assert a.shape == b.shape, f"{what}: shapes {a.shape} != {b.shape}"
    if a.dtype.kind in "fc":
        nan_a, nan_b = np.isnan(a), np.isnan(b)
        assert np.array_equal(nan_a, nan_b), f"{what}: NaN at different places\n{a}\n{b}"
        a2, b2 = np.where(nan_a, 0, a), np.where(nan_b, 0, b)
        if rtol == 0:
            assert np.array_equal(a2, b2), f"{what}: values differ\n{a}\n{b}"
        else:
            np.testing.assert_allclose(a2, b2, rtol=rtol, atol=rtol, err_msg=what)
        if a.dtype.kind == "f":  # signs of zero are exact whatever the tolerance
            exact_zero = (a2 == 0) & (b2 == 0)
            assert np.array_equal(np.signbit(a2)[exact_zero], np.signbit(b2)[exact_zero]), (
                f"{what}: signs of zero differ\n{a}\n{b}"
            )
    else:
        assert np.array_equal(a, b), f"{what}: values differ\n{a}\n{b}"


def assert_same(fast: Any, general: Any, *, rtol: float = 0.0, what: str = "result") -> None:
    """The same result: type, dtype, shape, device, values, view-ness (recursively for
    tuples and lists)."""
    if isinstance(general, (tuple, list)):
        assert type(fast) is type(general) and len(fast) == len(general), (
            f"{what}: {type(fast).__name__}[{len(fast)}] != {type(general).__name__}"
            f"[{len(general)}]"
        )
        for i, (f, g) in enumerate(zip(fast, general, strict=True)):
            assert_same(f, g, rtol=rtol, what=f"{what}[{i}]")
        return
    if not isinstance(general, tt.Tensor):
        assert type(fast) is type(general), f"{what}: {type(fast)} != {type(general)}"
        if isinstance(general, float) and general != general:
            assert fast != fast, f"{what}: {fast} != nan"
        else:
            assert fast == general, f"{what}: {fast!r} != {general!r}"
        return
    assert isinstance(fast, tt.Tensor), f"{what}: {type(fast)} is not a Tensor"
    assert fast.dtype is general.dtype, f"{what}: dtype {fast.dtype} != {general.dtype}"
    assert fast.shape == general.shape, f"{what}: shape {fast.shape} != {general.shape}"
    fa, ga = getattr(fast._array, "dtype", None), getattr(general._array, "dtype", None)
    assert fa == ga, f"{what}: the arrays' dtypes {fa} != {ga} (a mislabelled array)"
    assert str(fast.device) == str(general.device), f"{what}: {fast.device} != {general.device}"
    assert fast.requires_grad == general.requires_grad, f"{what}: requires_grad differs"
    for t, side in ((fast, "fast"), (general, "general")):
        array_dt = getattr(t.detach()._array, "dtype", None)
        assert array_dt == t.dtype.numpy_dtype, f"{what}: {side} array {array_dt} for {t.dtype}"
    assert (fast._base is None) == (general._base is None), (
        f"{what}: one is a view and the other is not"
    )
    _same_values(_as_numpy(fast), _as_numpy(general), rtol, what)


def same_both_ways(
    call: Callable[..., Any],
    *inputs: Any,
    rtol: float = 0.0,
    torch_call: Callable[..., Any] | None = None,
) -> Outcome:
    """``call(*inputs)`` with the fast paths on and off gives the same outcome (and, with
    ``torch_call``, PyTorch's where PyTorch is installed).  Returns the fast outcome."""
    fast = outcome(call, *inputs)
    with fastpaths.disabled():
        general = outcome(call, *inputs)
    if general.error is not None or fast.error is not None:
        assert type(fast.error) is type(general.error), (
            f"fast path: {fast!r}; general path: {general!r}"
        )
    else:
        assert_same(fast.value, general.value, rtol=rtol)
    for i, (f, g) in enumerate(zip(fast.inputs, general.inputs, strict=True)):
        if isinstance(g, tt.Tensor):
            assert_same(f, g, rtol=rtol, what=f"input {i} after the call")
    if torch_call is not None and torch is not None:
        compare_with_torch(fast, torch_call, *inputs, rtol=rtol)
    return fast


_ALPHA_OPS = frozenset({"add", "sub", "rsub", "+", "-", "add_", "sub_"})


def torch_quirk(op: str, *inputs: Any) -> bool:
    """Whether PyTorch's answer is known to differ for reasons no fast path is part of,
    so only the two paths are compared: PyTorch's add and sub multiply ``other`` by
    ``alpha`` even when it is 1, so a complex infinity gains a NaN imaginary part
    (``0 * inf``; ``(0+0j) + inf`` is ``inf+nanj`` there, ``inf+0j`` here); PyTorch's
    complex pow of two tensors computes ``exp(y * log(x))``, so ``0j ** 0`` is NaN there
    and 1 here (NumPy's); PyTorch's remainder of a huge float by a small one (the
    quotient overflows) is NaN in its vectorised loop and a number in its scalar loop,
    so the answer depends on the element's position (ours is the scalar loop's)."""
    if op in ("remainder", "%"):
        for x in inputs:
            a = _as_numpy(x)
            if a.dtype.kind == "f" and (np.abs(a[np.isfinite(a)]) > 1e30).any():
                return True
        return False
    if op not in _ALPHA_OPS and op not in ("pow", "**"):
        return False
    ts = [x for x in inputs if isinstance(x, tt.Tensor)]
    if not any(t.dtype.is_complex for t in ts) and not any(type(x) is complex for x in inputs):
        return False
    if op in ("pow", "**"):
        return True
    for x in inputs:
        a = _as_numpy(x)
        if a.dtype.kind in "fc" and np.isinf(a).any():
            return True
        if type(x) in (float, complex) and np.isinf(x):
            return True
    return False


def to_torch(x: Any) -> Any:
    """A tensor's copy in PyTorch (same dtype, values, view and requires_grad)."""
    if not isinstance(x, tt.Tensor):
        return x
    entry = _VIEWS.get(id(x))
    if entry is not None and entry[0]() is x:
        _, base, make = entry
        return make(to_torch(base.detach()))
    dt = getattr(torch, str(x.dtype).rpartition(".")[2])
    t = torch.from_numpy(np.array(_as_numpy(x.detach()), copy=True)).to(dt)
    if x.requires_grad:
        t.requires_grad_()
    return t


def compare_with_torch(
    ours: Outcome, torch_call: Callable[..., Any], *inputs: Any, rtol: float = 0.0
) -> None:
    """Our outcome against PyTorch's for the same inputs: both raise, or both return the
    same dtype, shape and values (within ``rtol``, or rounding for low precision)."""
    args = [to_torch(x) for x in inputs]
    try:
        expected = torch_call(*args)
    except Exception as e:  # noqa: BLE001
        if "ComplexHalf" in str(e):
            # float16 with a complex 0-d tensor computes in complex32 there, which has few
            # kernels ("div_cpu" not implemented for 'ComplexHalf'); we have no complex32
            # and compute in complex64 (as _same_as_torch skips complex32 results).
            return
        assert ours.error is not None, f"PyTorch raises {e!r}; we return {ours.value!r}"
        return
    assert ours.error is None, f"we raise {ours.error!r}; PyTorch returns {expected!r}"
    _same_as_torch(ours.value, expected, rtol)


def _same_as_torch(ours: Any, expected: Any, rtol: float) -> None:
    if isinstance(expected, (tuple, list)):
        for o, e in zip(ours, expected, strict=True):
            _same_as_torch(o, e, rtol)
        return
    if not isinstance(expected, torch.Tensor):
        assert ours == expected or (ours != ours and expected != expected), (ours, expected)
        return
    if expected.dtype == torch.complex32:
        return  # float16 with a complex number or 0-d tensor: a dtype we do not have
    assert str(ours.dtype).rpartition(".")[2] == str(expected.dtype).rpartition(".")[2], (
        ours.dtype,
        expected.dtype,
    )
    assert tuple(ours.shape) == tuple(expected.shape)
    assert str(ours.device) == str(expected.device), (ours.device, expected.device)
    e = expected.detach()
    if e.dtype == torch.bfloat16:
        e = e.float()
    low = ours.dtype in (tt.float16, tt.bfloat16)
    tol = max(rtol, 1e-2 if low else 1e-5 if ours.dtype in (tt.float32, tt.complex64) else 1e-12)
    a = _as_numpy(ours)
    b = e.resolve_conj().numpy()
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol, equal_nan=True)
    else:
        assert np.array_equal(a, b), (a, b)


# -- strategies -------------------------------------------------------------------------------
def numbers(kinds: str = "bifc") -> st.SearchStrategy[Any]:
    """Python numbers of the kinds asked for (b bool, i int, f float, c complex), with the
    values that cross guards: 0, -0.0, 1, True, big ints, inf, NaN."""
    options = []
    if "b" in kinds:
        options.append(st.booleans())
    if "i" in kinds:
        options.append(st.sampled_from([0, 1, -1, 2, 3, 255, 256, -129, 2**31, 2**40]))
    if "f" in kinds:
        options.append(special_floats | st.floats(-1e3, 1e3, width=32))
    if "c" in kinds:
        options.append(st.sampled_from([1 + 0j, 0j, 2 - 1j]))
    return st.one_of(options)


@st.composite
def tensors(
    draw: st.DrawFn,
    dtypes: Sequence[tt.dtype] = ALL_DTYPES,
    shapes: Sequence[tuple[int, ...]] | None = None,
    views: bool = True,
    requires_grad: bool | None = False,
) -> tt.Tensor:
    """A tensor of one of ``dtypes``: 0-d, empty, small or larger; contiguous or (with
    ``views``) transposed, expanded or sliced; values with -0.0, inf and NaN for floats.
    ``requires_grad=None`` draws it (float dtypes only)."""
    dtype = draw(st.sampled_from(list(dtypes)))
    shape = (
        draw(st.sampled_from(list(shapes)))
        if shapes is not None
        else draw(
            st.sampled_from(
                [(), (0,), (1,), (3,), (2, 3), (3, 1), (0, 2), (4, 5), (300,), (2, 3, 4)]
            )
        )
    )
    n = int(np.prod(shape)) if shape else 1
    np_dt = dtype.numpy_dtype
    if dtype is tt.bool:
        data = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    elif dtype.is_floating_point or dtype.is_complex:
        vals = draw(
            st.lists(special_floats | st.floats(-100, 100, width=16), min_size=n, max_size=n)
        )
        data = np.array(vals, dtype=np.float64).astype(np_dt)
    else:
        info = np.iinfo(np_dt)
        small = st.integers(max(-3, int(info.min)), 3)
        vals = draw(
            st.lists(st.integers(int(info.min), int(info.max)) | small, min_size=n, max_size=n)
        )
        data = np.array(vals, dtype=np_dt)
    x = tt.tensor(data.reshape(shape))
    if views and len(shape) >= 1:
        kind = draw(st.sampled_from(["plain", "transposed", "expanded", "sliced"]))
        if kind == "transposed" and len(shape) >= 2:
            base = tt.tensor(data.reshape(shape[::-1]))
            x = _remember_view(
                base.permute(*range(len(shape) - 1, -1, -1)),
                base,
                lambda b: b.permute(*range(b.ndim - 1, -1, -1)),
            )
        elif kind == "expanded" and shape[0] == 1:
            x = _remember_view(x.expand(3, *shape[1:]), x, lambda b: b.expand(3, *b.shape[1:]))
        elif kind == "sliced" and shape[0] >= 2:
            base = tt.cat([x, x])
            x = _remember_view(base[::2], base, lambda b: b[::2])
    grad = requires_grad if requires_grad is not None else draw(st.booleans())
    if grad and (dtype.is_floating_point or dtype.is_complex) and x._base is None:
        x = x.requires_grad_()
    return x

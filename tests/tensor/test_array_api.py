"""``tensor.array_api`` and the pieces issue #18 added to the ``tensor`` namespace, checked
against NumPy (and PyTorch where installed).  The conformance suite itself runs in
``tests/array_api``; these are the properties it does not pin down or that we rely on:
the standard's semantics living in the standard namespace only, negative-step writes
reaching their base, the decompositions' and FFTs' values and Meta shapes.
"""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

import tensor as tt

xp = tt.array_api
HAS_TORCH = importlib.util.find_spec("torch") is not None


def test_namespace_is_returned_and_versions_checked() -> None:
    x = tt.tensor([1.0])
    assert x.__array_namespace__() is xp
    assert x.__array_namespace__(api_version="2024.12") is xp
    with pytest.raises(ValueError, match="api_version '1999.01'"):
        x.__array_namespace__(api_version="1999.01")
    assert xp.__array_api_version__ == "2025.12"


def test_zero_d_promotion_only_in_the_standard_namespace() -> None:
    a = tt.tensor([1, 2], dtype=tt.int8)
    b = tt.tensor(3, dtype=tt.int64)
    assert (a + b).dtype is tt.int8  # PyTorch: a 0-d tensor is weak
    assert tt.add(a, b).dtype is tt.int8
    assert xp.add(a, b).dtype is tt.int64  # the standard: 0-d counts in full
    assert xp.add(a, 1).dtype is tt.int8  # Python scalars stay weak in both


def test_empty_axis_tuple_reduces_nothing() -> None:
    x = tt.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert xp.sum(x, axis=()).tolist() == x.tolist()
    assert tt.sum(x, dim=()).item() == 10.0  # PyTorch: dim=() is every dim
    assert xp.std(x).item() == pytest.approx(np.std(x.numpy()))  # correction=0


@pytest.mark.parametrize(
    "key",
    [np.s_[::-1], np.s_[8:2:-2], np.s_[2:8:-1], np.s_[::-3], np.s_[-2::-4], np.s_[1, ::-1]],
    ids=str,
)
def test_negative_steps_read_and_write_like_numpy(key: object) -> None:
    base = (
        np.arange(30.0).reshape(10, 3) if isinstance(key, slice) else np.arange(30.0).reshape(3, 10)
    )
    x = tt.tensor(base)
    np.testing.assert_array_equal(x[key].numpy(), base[key])
    expected = base.copy()
    expected[key] = -np.arange(expected[key].size).reshape(expected[key].shape)
    x[key] = tt.tensor(
        -np.arange(expected[key].size).reshape(expected[key].shape), dtype=tt.float64
    )
    np.testing.assert_array_equal(x.numpy(), expected)  # the write reached the base
    x[key] = 7.0
    expected[key] = 7.0
    np.testing.assert_array_equal(x.numpy(), expected)


def test_new_elementwise_operators_against_numpy() -> None:
    v = np.array([-2.5, -0.0, 0.0, 1.5, np.inf, -np.inf], dtype=np.float32)
    w = np.array([1.0, -1.0, 2.0, -3.0, 0.5, np.nan], dtype=np.float32)
    np.testing.assert_array_equal(tt.signbit(tt.tensor(v)).numpy(), np.signbit(v))
    np.testing.assert_array_equal(
        tt.copysign(tt.tensor(v), tt.tensor(w)).numpy(), np.copysign(v, w)
    )
    np.testing.assert_array_equal(
        tt.nextafter(tt.tensor(v), tt.tensor(w)).numpy(), np.nextafter(v, w)
    )
    z = np.array([1 + 2j, -3.5j], dtype=np.complex64)
    np.testing.assert_array_equal(tt.real(tt.tensor(z)).numpy(), z.real)
    np.testing.assert_array_equal(tt.imag(tt.tensor(z)).numpy(), z.imag)
    np.testing.assert_array_equal(tt.conj(tt.tensor(z)).numpy(), z.conj())
    t = tt.tensor(z)
    r = tt.real(t)
    r += 1  # a copy (Note [real, imag and conj are copies])
    assert t.numpy()[0] == z[0]


def test_copysign_gradient() -> None:
    x = tt.tensor([1.0, -2.0, 0.0], requires_grad=True)
    tt.copysign(x, tt.tensor([-1.0, -1.0, 1.0])).sum().backward()
    assert x.grad.tolist() == [-1.0, 1.0, 0.0]


def test_compositions_against_numpy() -> None:
    a = tt.tensor([[1, 5, 3], [2, 2, 9]])
    np.testing.assert_array_equal(tt.isin(a, tt.tensor([2, 3])).numpy(), np.isin(a.numpy(), [2, 3]))
    seq = tt.tensor([1.0, 2.0, 2.0, 4.0, 6.0])
    vals = tt.tensor([0.0, 2.0, 3.0, 5.0, math.nan])
    for side in ("left", "right"):
        np.testing.assert_array_equal(
            tt.searchsorted(seq, vals, side=side).numpy(),
            np.searchsorted(seq.numpy(), vals.numpy(), side=side),
        )
    # A NaN boundary: PyTorch's search, not NumPy's order (Note [Searching operators]).
    seq = tt.tensor([1.0, 2.0, 2.0, 4.0, math.nan])
    assert tt.searchsorted(seq, vals).tolist() == [0, 1, 5, 5, 5]
    assert tt.searchsorted(seq, vals, side="right").tolist() == [0, 5, 5, 5, 5]
    np.testing.assert_array_equal(
        tt.diff(a, n=2, dim=1, prepend=tt.tensor([[0], [0]])).numpy(),
        np.diff(a.numpy(), n=2, axis=1, prepend=0),
    )
    np.testing.assert_array_equal(
        tt.repeat_interleave(a, tt.tensor([2, 0, 1]), dim=1).numpy(),
        np.repeat(a.numpy(), [2, 0, 1], axis=1),
    )
    gx, gy = xp.meshgrid(tt.arange(3), tt.arange(2))
    nx, ny = np.meshgrid(np.arange(3), np.arange(2))
    np.testing.assert_array_equal(gx.numpy(), nx)
    np.testing.assert_array_equal(gy.numpy(), ny)
    assert tt.moveaxis(tt.zeros(2, 3, 4), [0, 1], [-1, 0]).shape == (3, 4, 2)
    assert tuple(tt.broadcast_shapes((2, 1), (3,))) == (2, 3)


def test_finfo_iinfo_asarray() -> None:
    assert tt.finfo(tt.float32).eps == float(np.finfo(np.float32).eps)
    assert tt.finfo(tt.complex128).bits == 64
    assert tt.iinfo(tt.int16).max == 32767
    assert xp.finfo(tt.complex64).dtype is tt.float32  # the standard's: a dtype object
    arr = np.arange(3.0)
    shared = tt.asarray(arr)
    arr[0] = 9.0
    assert shared[0].item() == 9.0  # no copy
    with pytest.raises(ValueError, match="copy=False"):
        tt.asarray([1, 2], copy=False)
    t = tt.tensor([1.0])
    assert tt.asarray(t) is t and tt.asarray(t, copy=True) is not t


RNG = np.random.default_rng(7)
SPD = (lambda m: m @ m.T + 4 * np.eye(4))(RNG.standard_normal((4, 4)))


@pytest.mark.parametrize(
    ("name", "ours", "ref"),
    [
        ("inv", lambda a: tt.linalg.inv(a), np.linalg.inv),
        ("det", lambda a: tt.linalg.det(a), np.linalg.det),
        ("cholesky", lambda a: tt.linalg.cholesky(a), np.linalg.cholesky),
        ("eigvalsh", lambda a: tt.linalg.eigvalsh(a), np.linalg.eigvalsh),
        ("svdvals", lambda a: tt.linalg.svdvals(a), lambda a: np.linalg.svd(a, compute_uv=False)),
        ("slogdet", lambda a: tt.linalg.slogdet(a).logabsdet, lambda a: np.linalg.slogdet(a)[1]),
        ("solve", lambda a: tt.linalg.solve(a, a[:, :2]), lambda a: np.linalg.solve(a, a[:, :2])),
        ("pinv", lambda a: tt.linalg.pinv(a), np.linalg.pinv),
        (
            "matrix_power",
            lambda a: tt.linalg.matrix_power(a, -3),
            lambda a: np.linalg.matrix_power(a, -3),
        ),
        ("qr_r", lambda a: abs(tt.linalg.qr(a).R), lambda a: abs(np.linalg.qr(a)[1])),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_linalg_against_numpy(name: str, ours: object, ref: object) -> None:
    np.testing.assert_allclose(ours(tt.tensor(SPD)).numpy(), ref(SPD), rtol=1e-10, atol=1e-12)  # type: ignore[operator]


def test_linalg_errors_and_meta_shapes() -> None:
    with pytest.raises(RuntimeError, match="linalg.inv"):
        tt.linalg.inv(tt.zeros(2, 2))  # singular
    with pytest.raises(RuntimeError, match="square matrices"):
        tt.linalg.det(tt.zeros(2, 3))
    with pytest.raises(RuntimeError, match="linalg.inv: Expected a floating point"):
        tt.linalg.inv(tt.zeros(2, 2, dtype=tt.int64))  # PyTorch's error
    m = tt.empty(5, 4, 3, device="meta")
    u, s, vh = tt.linalg.svd(m, full_matrices=False)
    assert (u.shape, s.shape, vh.shape) == ((5, 4, 3), (5, 3), (5, 3, 3))
    q, r = tt.linalg.qr(m, mode="complete")
    assert (q.shape, r.shape) == ((5, 4, 4), (5, 4, 3))
    assert tt.linalg.solve(tt.empty(2, 3, 3, device="meta"), tt.empty(3, device="meta")).shape == (
        2,
        3,
    )
    assert tt.fft.rfft(m, n=10).shape == (5, 4, 6)
    assert tt.fft.irfftn(m.to(tt.complex64), dim=(0, 2)).dtype is tt.float32
    assert tt.fft.irfftn(m.to(tt.complex64), dim=(0, 2)).shape == (5, 4, 4)


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_fft_against_numpy(norm: str | None) -> None:
    x = RNG.standard_normal((4, 6)) + 1j * RNG.standard_normal((4, 6))
    r = x.real.copy()
    t, tr = tt.tensor(x), tt.tensor(r)
    checks = [
        (tt.fft.fft(t, n=8, norm=norm), np.fft.fft(x, n=8, norm=norm)),
        (tt.fft.ifft(t, dim=0, norm=norm), np.fft.ifft(x, axis=0, norm=norm)),
        (tt.fft.rfft(tr, norm=norm), np.fft.rfft(r, norm=norm)),
        (tt.fft.irfft(t, n=7, norm=norm), np.fft.irfft(x, n=7, norm=norm)),
        (tt.fft.hfft(t, norm=norm), np.fft.hfft(x, norm=norm)),
        (tt.fft.fftn(t, s=(3, 5), norm=norm), np.fft.fftn(x, s=(3, 5), axes=(0, 1), norm=norm)),
        (tt.fft.irfftn(t, norm=norm), np.fft.irfftn(x, norm=norm)),
    ]
    for got, want in checks:
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(tt.fft.fftfreq(7, 0.5).numpy(), np.fft.fftfreq(7, 0.5), rtol=1e-6)
    np.testing.assert_array_equal(
        tt.fft.ifftshift(tt.arange(7)).numpy(), np.fft.ifftshift(np.arange(7))
    )


def test_unique_keeps_nans_distinct() -> None:
    values, indices, inverse, counts = xp.unique_all(tt.tensor([3.0, math.nan, 1.0, 3.0, math.nan]))
    assert values[:2].tolist() == [1.0, 3.0] and math.isnan(values[2].item())
    assert values.shape == (4,) and counts.tolist() == [1, 2, 1, 1]
    assert indices.tolist() == [2, 0, 1, 4]
    assert inverse.tolist() == [1, 2, 0, 1, 3]


@pytest.mark.torch
@pytest.mark.skipif(not HAS_TORCH, reason="PyTorch is not installed")
def test_torch_names_match_torch() -> None:
    import torch

    a = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], dtype=np.float32)
    ours, theirs = tt.tensor(a), torch.tensor(a)
    pairs = [
        (tt.clip(ours, -1, 2), torch.clip(theirs, -1, 2)),
        (tt.multiply(ours, 2), torch.multiply(theirs, 2)),
        (tt.concat([ours, ours], 1), torch.concat([theirs, theirs], 1)),
        (tt.moveaxis(ours, 0, 1), torch.moveaxis(theirs, 0, 1)),
        (tt.diff(ours, dim=0), torch.diff(theirs, dim=0)),
        (tt.signbit(ours), torch.signbit(theirs)),
        (tt.copysign(ours, -1.0), torch.copysign(theirs, -1.0)),
        (
            tt.searchsorted(tt.tensor([1.0, 3.0]), ours),
            torch.searchsorted(torch.tensor([1.0, 3.0]), theirs),
        ),
    ]
    for got, want in pairs:
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert tt.finfo(tt.bfloat16).eps == torch.finfo(torch.bfloat16).eps
    assert tt.finfo(tt.float16).tiny == torch.finfo(torch.float16).tiny
    assert tt.iinfo(tt.uint8).max == torch.iinfo(torch.uint8).max

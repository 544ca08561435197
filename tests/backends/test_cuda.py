"""The CUDA backend: devices, transfers, streams, interop, mixed devices, autograd, autocast.

The first tests run everywhere (the import surface without CuPy or a GPU); the rest
need a GPU and are skipped, with the reason, where there is none.  The per-operator
CUDA tests are in tests/ops/test_opdb_cuda.py.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import backends.cuda as cuda
import tensor as tt
from tensor._frontend import FRONT

needs_gpu = pytest.mark.skipif(
    not cuda.is_available(), reason=f"no CUDA device: {cuda.unavailable_reason()}"
)
needs_two_gpus = pytest.mark.skipif(
    cuda.device_count() < 2, reason=f"needs two CUDA devices ({cuda.device_count()} visible)"
)

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64"]
DTYPES += ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]


# -- without a GPU ------------------------------------------------------------------------------
def test_probe_answers_without_raising() -> None:
    assert isinstance(cuda.is_available(), bool)
    assert cuda.device_count() >= 0
    cuda.synchronize()  # a no-op without a GPU
    cuda.register(FRONT)  # a no-op without a GPU, once with one


@pytest.mark.skipif(cuda.is_available(), reason="a CUDA device is present")
def test_without_gpu_every_entry_point_says_why() -> None:
    assert cuda.unavailable_reason()
    assert tt.cuda.is_available() is False and tt.cuda.device_count() == 0
    for make in (
        lambda: tt.zeros(2, device="cuda"),
        lambda: tt.ones(2).cuda(),
        lambda: tt.ones(2).to("cuda:0"),
        lambda: tt.tensor([1.0], device="cuda"),
        tt.cuda.current_device,
        tt.cuda.Stream,
    ):
        with pytest.raises(RuntimeError, match=r"CUDA is not available.*arraydispatch\[cuda\]"):
            make()


@pytest.mark.skipif(cuda.is_available(), reason="a CUDA device is present")
def test_without_gpu_cupy_is_not_imported() -> None:
    import subprocess
    import sys

    code = (
        "import sys, tensor as tt\n"
        "try:\n    tt.zeros(1, device='cuda')\nexcept RuntimeError:\n    pass\n"
        "tt.cuda.is_available(); print('cupy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    has_cupy = importlib.util.find_spec("cupy") is not None
    # Without CuPy installed nothing can import it; with CuPy but no GPU, probing may.
    assert out.stdout.strip() == ("True" if has_cupy else "False")


# -- devices ------------------------------------------------------------------------------------


@pytest.mark.cuda
@needs_gpu
def test_device_count_and_current() -> None:
    assert tt.cuda.device_count() == cuda.device_count() > 0
    assert tt.cuda.current_device() == 0
    t = tt.zeros(2, device="cuda")
    assert t.device == tt.device("cuda:0") and t.is_cuda and t.get_device() == 0
    assert isinstance(tt.cuda.get_device_name(), str)
    assert tt.cuda.get_device_capability()[0] >= 3


@pytest.mark.cuda
@needs_gpu
def test_launchers_pass_prebuilt_arguments() -> None:
    # Note [Prebuilt kernel arguments]: the element count as CuPy's CIntptr and the unused
    # functor parameters as one CScalar, which CuPy's launch takes as they are.  A CuPy
    # that moved either class would leave the launchers on NumPy scalars (correct, ~0.9 us
    # slower a tiny op): this says so.
    from cupy.cuda import function

    from backends.cuda import elementwise as cew

    assert cew._COUNT is function.CIntptr
    assert isinstance(cew._ZERO, function.CPointer)
    a = tt.tensor([1.0, 2.0, 3.0], device="cuda")
    big = tt.arange(1000, dtype=tt.float32, device="cuda")  # more than one block
    np.testing.assert_array_equal((a + a).cpu().numpy(), [2.0, 4.0, 6.0])
    np.testing.assert_array_equal((big * 2).cpu().numpy(), np.arange(1000) * 2.0)
    np.testing.assert_allclose(tt.sin(big).cpu().numpy(), np.sin(np.arange(1000.0)), rtol=1e-6)


@pytest.mark.cuda
@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_subnormals_survive_our_kernels(dtype: str) -> None:
    # PyTorch's CUDA kernels keep subnormal operands and results (nvcc's -ftz=false);
    # CuPy compiles its kernels with -ftz=true, which gave (1e-30f) ** 1.5 and
    # 1e-30f * 1e-15 as 0 and read a subnormal operand as 0 (Note [Subnormals] in
    # backends/cuda/_compile.py).  Our kernels agree with the CPU to the bit here.
    tiny = float(np.finfo(getattr(np, dtype)).smallest_subnormal)
    values = np.array([tiny, 3 * tiny, -5 * tiny, 1e-30, 2.5e-30, 1.0], dtype=dtype)
    x = tt.tensor(values)
    g = x.cuda()
    cases = {
        "x * 1": (lambda t: t * 1.0),
        "x + 0": (lambda t: t + 0.0),
        "x * 1e-15": (lambda t: t * 1e-15),
        "x / 4": (lambda t: t / 4.0),
        "-x": (lambda t: -t),
        "abs": tt.abs,
        "x + x": (lambda t: t + t),
        "maximum(x, 0)": (lambda t: tt.maximum(t, tt.zeros_like(t))),
        "where(x > 0, x, 0)": (lambda t: tt.where(t > 0, t, tt.zeros_like(t))),
        "copysign(x, -1)": (lambda t: tt.copysign(t, -tt.ones_like(t))),
    }
    for name, f in cases.items():
        np.testing.assert_array_equal(f(g).cpu().numpy(), f(x).numpy(), err_msg=name)
    assert (g * 1.0 != 0).all().item()
    if dtype == "float32":
        assert (g[3:4] ** 1.5).item() == (x[3:4] ** 1.5).item() > 0


@pytest.mark.cuda
@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("exponent", [3, -0.5, -2, 2, 0.5, 1.5])
def test_pow_by_a_number_matches_the_cpu(dtype: str, exponent: float) -> None:
    # PyTorch computes x ** 3, x ** -0.5 and x ** -2 as x * x * x, 1 / sqrt(x) and
    # 1 / (x * x) on both devices (POWERS_AS_PRODUCTS in backends/common/formulas.py):
    # (-0.0) ** -0.5 is -inf, (-inf) ** -0.5 NaN.  Values and the signs of zeros and
    # infinities as the CPU gives them (libm and CUDA's pow agree to the last place
    # elsewhere only roughly: 4 ulps, which below the normal range are 4 subnormal steps:
    # CUDA's powf gives (1e-30f) ** 1.5 as 0, libm the smallest subnormal).
    values = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -2.5, 3.3, 1e-30])
    x = tt.tensor(values).to(getattr(tt, dtype))
    with np.errstate(all="ignore"):
        cpu = (x**exponent).numpy()
    gpu = (x.cuda() ** exponent).cpu().numpy()
    info = np.finfo(getattr(np, dtype))
    rtol, atol = 4 * float(info.eps), 4 * float(info.smallest_subnormal)
    np.testing.assert_allclose(gpu, cpu, rtol=rtol, atol=atol, equal_nan=True)
    special = ~np.isfinite(cpu) | (cpu == 0)
    assert (
        np.signbit(gpu[special & ~np.isnan(cpu)]) == np.signbit(cpu[special & ~np.isnan(cpu)])
    ).all()


@pytest.mark.cuda
@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_add_with_alpha_rounds_once(dtype: str) -> None:
    # The AddAlpha kernel (Note [Fused add with alpha]): x + alpha * y rounded once in the
    # compute type (float for half precision, alpha rounded to it, as PyTorch's CUDA
    # AddFunctor), for add/sub/add_, tensors, broadcasts and numbers.
    rng = np.random.default_rng(4)
    x32, y32 = rng.standard_normal((2, 64, 64), dtype=np.float32)
    dt = getattr(tt, dtype)
    x, y = tt.tensor(x32).to(dt), tt.tensor(y32).to(dt)
    xs, ys = x.float().numpy().astype(np.float64), y.float().numpy().astype(np.float64)
    a = -0.0137

    def want(xv: np.ndarray, yv: np.ndarray, alpha: float) -> np.ndarray:
        if dtype == "float64":  # exact products need more than float64: the CPU's daxpy
            return tt.add(tt.tensor(xv), tt.tensor(yv), alpha=alpha).numpy()
        one = (xv + np.float64(np.float32(alpha)) * yv).astype(np.float32)
        return one if dtype == "float32" else tt.tensor(one).to(dt).float().numpy()

    def got(t: tt.Tensor) -> np.ndarray:
        return t.cpu().float().numpy() if dtype != "float64" else t.cpu().numpy()

    cx, cy = x.cuda(), y.cuda()
    np.testing.assert_array_equal(got(tt.add(cx, cy, alpha=a)), want(xs, ys, a))
    np.testing.assert_array_equal(got(tt.sub(cx, cy, alpha=-a)), want(xs, ys, a))
    np.testing.assert_array_equal(got(tt.add(cx, cy[0], alpha=a)), want(xs, ys[0], a))
    np.testing.assert_array_equal(got(tt.add(cx, 2.5, alpha=a)), want(xs, np.float64(2.5), a))
    p = cx.clone()
    p.add_(cy, alpha=a)
    np.testing.assert_array_equal(got(p), want(xs, ys, a))
    if dtype == "float32":  # the two-step product-then-sum misses this data
        two = (x32.astype(np.float32) + y32 * np.float32(a)).astype(np.float32)
        assert (two != want(xs, ys, a)).any()
    if importlib.util.find_spec("torch") is not None:
        import torch

        if torch.cuda.is_available():
            tx = torch.from_numpy(x.float().numpy()).to(getattr(torch, dtype)).cuda()
            ty = torch.from_numpy(y.float().numpy()).to(getattr(torch, dtype)).cuda()
            theirs = torch.add(tx, ty, alpha=a).cpu()
            theirs = theirs.float().numpy() if dtype != "float64" else theirs.numpy()
            np.testing.assert_array_equal(got(tt.add(cx, cy, alpha=a)), theirs)


@pytest.mark.cuda
@needs_gpu
def test_bad_device_index_is_an_error() -> None:
    n = tt.cuda.device_count()
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        tt.zeros(1, device=f"cuda:{n}")


@pytest.mark.cuda
@needs_gpu
@needs_two_gpus
def test_device_context_selects_and_restores() -> None:
    with tt.cuda.device(1):
        assert tt.cuda.current_device() == 1
        t = tt.ones(3, device="cuda")
        assert t.device == tt.device("cuda:1")
    assert tt.cuda.current_device() == 0
    u = t + 1  # runs on cuda:1 although cuda:0 is current (device guard)
    assert u.device == tt.device("cuda:1")
    moved = u.to("cuda:0")
    assert moved.device == tt.device("cuda:0")
    assert moved.cpu().tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match=r"cuda:1.*cuda:0|cuda:0.*cuda:1"):
        _ = u + moved


# -- transfers ----------------------------------------------------------------------------------
@pytest.mark.cuda
@needs_gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_keeps_values_and_dtype(dtype: str) -> None:
    dt = getattr(tt, dtype)
    host = (tt.arange(12) % 5 - 2).to(dt).reshape(3, 4)
    dev = host.to("cuda")
    assert dev.dtype is dt and dev.device.type == "cuda" and dev.shape == (3, 4)
    back = dev.cpu()
    assert back.device.type == "cpu" and back.dtype is dt
    assert bool((back == host).all())


@pytest.mark.cuda
@needs_gpu
def test_to_casts_on_the_device_and_non_contiguous_sources() -> None:
    x = tt.arange(20, dtype=tt.float32).reshape(4, 5).t()  # non-contiguous
    g = x.to("cuda", tt.float16)
    assert g.dtype is tt.float16 and g.device.type == "cuda"
    np.testing.assert_array_equal(g.cpu().float().numpy(), x.numpy())
    h = g.to(tt.float64)  # a cast between CUDA tensors stays on the device
    assert h.device == g.device and h.dtype is tt.float64


@pytest.mark.cuda
@needs_gpu
def test_non_blocking_copies_arrive_after_synchronize() -> None:
    host = tt.randn(1 << 20)
    dev = host.to("cuda", non_blocking=True)
    back = dev.to("cpu", non_blocking=True)
    tt.cuda.synchronize()
    np.testing.assert_array_equal(back.numpy(), host.numpy())


@pytest.mark.cuda
@needs_gpu
def test_numpy_of_a_cuda_tensor_needs_cpu_first() -> None:
    t = tt.ones(2, device="cuda")
    with pytest.raises(TypeError, match="cpu"):
        t.numpy()
    with pytest.raises(TypeError, match="cpu"):
        np.asarray(t)
    assert t.numpy(force=True).tolist() == [1.0, 1.0]


# -- mixed devices ------------------------------------------------------------------------------
@pytest.mark.cuda
@needs_gpu
def test_mixing_devices_names_both() -> None:
    a, b = tt.ones(3, device="cuda"), tt.ones(3)
    with pytest.raises(RuntimeError, match=r"same device.*cuda:0.*cpu|same device.*cpu.*cuda:0"):
        _ = a + b
    with pytest.raises(RuntimeError, match="same device"):
        tt.mm(tt.ones(2, 2), tt.ones(2, 2, device="cuda"))
    with pytest.raises(RuntimeError, match="same device"):
        tt.cat([a, b])


@pytest.mark.cuda
@needs_gpu
def test_zero_dim_cpu_tensors_mix_with_cuda_as_in_pytorch() -> None:
    a = tt.arange(3, dtype=tt.float32, device="cuda")
    out = a * tt.tensor(2.0)
    assert out.device.type == "cuda" and out.dtype is tt.float32
    assert out.cpu().tolist() == [0.0, 2.0, 4.0]
    # A 0-d tensor does not promote a dimensioned one's category: float32 stays.
    assert (a + tt.tensor(1, dtype=tt.float64)).dtype is tt.float32


# -- streams and events -------------------------------------------------------------------------
@pytest.mark.cuda
@needs_gpu
def test_stream_context_makes_the_stream_current() -> None:
    s = tt.cuda.Stream()
    before = tt.cuda.current_stream()
    with tt.cuda.stream(s):
        assert tt.cuda.current_stream() == s
        x = tt.ones(1 << 16, device="cuda") * 3
    assert tt.cuda.current_stream() == before
    s.synchronize()
    assert s.query()
    assert float(x.sum().item()) == 3.0 * (1 << 16)


@pytest.mark.cuda
@needs_gpu
def test_stream_context_restores_on_error() -> None:
    s = tt.cuda.Stream()
    before = tt.cuda.current_stream()
    with pytest.raises(ZeroDivisionError), tt.cuda.stream(s):
        raise ZeroDivisionError
    assert tt.cuda.current_stream() == before
    with tt.cuda.stream(None):  # a no-op, as in PyTorch
        assert tt.cuda.current_stream() == before


@pytest.mark.cuda
@needs_gpu
def test_events_order_streams_and_time_them() -> None:
    a, b = tt.cuda.Stream(), tt.cuda.Stream()
    start, end = tt.cuda.Event(enable_timing=True), tt.cuda.Event(enable_timing=True)
    with tt.cuda.stream(a):
        start.record()
        x = tt.ones(1 << 20, device="cuda")
        y = x * 2
        end.record()
    b.wait_stream(a)
    with tt.cuda.stream(b):
        z = y + 1
    b.synchronize()
    assert float(z.sum().item()) == 3.0 * (1 << 20)
    end.synchronize()
    assert start.elapsed_time(end) >= 0.0


# -- random numbers -----------------------------------------------------------------------------
@pytest.mark.cuda
@needs_gpu
def test_manual_seed_makes_cuda_random_reproducible() -> None:
    tt.manual_seed(123)
    a = tt.randn(1000, device="cuda")
    tt.manual_seed(123)
    b = tt.randn(1000, device="cuda")
    assert bool((a == b).all())
    assert abs(float(a.mean().item())) < 0.2 and 0.8 < float(a.std().item()) < 1.2
    tt.cuda.manual_seed(7)
    c = tt.rand(10, device="cuda")
    tt.cuda.manual_seed_all(7)
    assert bool((tt.rand(10, device="cuda") == c).all())


# -- interop ------------------------------------------------------------------------------------
@pytest.mark.cuda
@needs_gpu
def test_dlpack_and_cuda_array_interface_share_memory_with_cupy() -> None:
    import cupy

    t = tt.arange(6, dtype=tt.float32, device="cuda")
    c = cupy.from_dlpack(t)
    c[0] = 42.0
    assert float(t[0].item()) == 42.0
    assert t.__dlpack_device__() == (2, 0)
    via_cai = cupy.asarray(t)  # __cuda_array_interface__
    assert via_cai.data.ptr == t.data_ptr()
    back = tt.from_dlpack(cupy.arange(4, dtype=cupy.int32))
    assert back.device.type == "cuda" and back.dtype is tt.int32
    assert back.cpu().tolist() == [0, 1, 2, 3]
    with pytest.raises(AttributeError):
        _ = tt.ones(1).__cuda_array_interface__


@pytest.mark.cuda
@needs_gpu
def test_dlpack_round_trip_with_pytorch_cuda() -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA here (CPU build)")
    p = torch.arange(5, dtype=torch.float32, device="cuda")
    t = tt.from_dlpack(p)
    assert t.data_ptr() == p.data_ptr()
    q = torch.from_dlpack(t)
    q[1] = -1
    assert float(t[1].item()) == -1.0


# -- autograd and autocast ----------------------------------------------------------------------
@pytest.mark.cuda
@needs_gpu
def test_autograd_on_cuda_matches_cpu() -> None:
    rng = np.random.default_rng(0)
    data = [rng.standard_normal(s).astype(np.float32) for s in ((8, 5), (5, 3), (3,))]
    grads = {}
    for dev in ("cpu", "cuda"):
        x, w, b = (tt.tensor(d, device=dev) for d in data)
        w.requires_grad_(True)
        b.requires_grad_(True)
        loss = tt.nn.functional.cross_entropy(
            (x @ w + b).relu(), tt.tensor([0, 1, 2, 0, 1, 2, 0, 1], device=dev)
        )
        loss.backward()
        assert w.grad is not None and w.grad.device.type == dev
        grads[dev] = (w.grad.cpu().numpy(), b.grad.cpu().numpy())
    for c, g in zip(grads["cpu"], grads["cuda"], strict=True):
        np.testing.assert_allclose(g, c, rtol=1e-5, atol=1e-6)


@pytest.mark.cuda
@needs_gpu
def test_autocast_cuda_policies() -> None:
    a = tt.randn(4, 4, device="cuda")
    with tt.autocast("cuda"):
        assert tt.mm(a, a).dtype is tt.float16  # lower-precision op
        assert tt.exp(a.half()).dtype is tt.float32  # fp32 op
        assert (a + a).dtype is tt.float32  # not listed: runs as is
    with tt.autocast("cuda", dtype=tt.bfloat16):
        assert tt.mm(a, a).dtype is tt.bfloat16
    assert tt.mm(a, a).dtype is tt.float32

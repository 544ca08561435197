"""A device written by a user, outside ``backends/``, through ``tt.register_device`` alone.

"mydev" keeps its data in NumPy arrays but is a device of its own: its own dispatch key
(a PrivateUse key), its own kernels (the shared ones, built for its namespace), its own
tensors that refuse to mix with CPU ones.  Values and gradients are compared with the
same calls on the CPU; a user kernel registered with ``impl(qualname, "mydev")`` runs
for it; what it cannot run raises ``NotImplementedError`` naming operator and device.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import dispatch
import tensor as tt
from dispatch import DispatchKey, Library, ops

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def mydev() -> Iterator[tt.PluginDevice]:
    xp = pytest.importorskip("array_api_compat.numpy", reason="array_api_compat is a dependency")
    dev = tt.register_device(
        "mydev",
        array_type=np.ndarray,
        namespace=xp,  # NumPy through array_api_compat: the standard's signatures
        library=np,
        to_cpu=np.asarray,
        from_cpu=lambda a, index=None: np.array(a, copy=True),
        engine=lambda seed: np.random.Generator(np.random.PCG64(seed)),
    )
    yield dev
    dev.destroy()


def _cpu(t: tt.Tensor) -> np.ndarray:
    return t.to("cpu").numpy()


def test_the_device_is_a_device(mydev: tt.PluginDevice) -> None:
    assert mydev.key in (DispatchKey.PrivateUse1, DispatchKey.PrivateUse2, DispatchKey.PrivateUse3)
    assert tt.device("mydev").type == "mydev"
    assert tt.device("mydev:1").index == 1
    x = tt.tensor([1.0, 2.0], device="mydev")
    assert x.device == tt.device("mydev")
    assert DispatchKey.parse(mydev.key.name) in x.keys
    assert DispatchKey.parse(f"Autograd{mydev.key.name}") in x.keys
    assert dispatch.key_for_type("mydev") is mydev.key
    assert "mydev" in repr(x)
    # Factories, moves both ways, dtype conversions on the device.
    assert tt.zeros(2, 3, device="mydev").device.type == "mydev"
    assert tt.arange(4, device="mydev").to("cpu").tolist() == [0, 1, 2, 3]
    assert tt.randn(3, device="mydev").shape == (3,)
    y = tt.ones(2).to("mydev")
    assert y.device.type == "mydev" and y.to("cpu").device.type == "cpu"
    assert x.to(tt.float64).dtype is tt.float64 and x.to(tt.float64).device.type == "mydev"


def test_ops_match_the_cpu(mydev: tt.PluginDevice) -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((3, 5))
    cases = [
        lambda m, n: tt.sin(m) @ n + 1,
        lambda m, n: (m * 2 - m.exp()).sum(dim=1),
        lambda m, n: tt.softmax(m, dim=-1),
        lambda m, n: m.T.reshape(12)[3:9],
        lambda m, n: tt.cat([m, m]).amax(0),
        lambda m, n: tt.where(m > 0, m, n.T[:4, :3]),
        lambda m, n: m.sort(dim=1).values,
    ]
    for i, f in enumerate(cases):
        on_cpu = f(tt.tensor(a), tt.tensor(b))
        on_dev = f(tt.tensor(a, device="mydev"), tt.tensor(b, device="mydev"))
        assert on_dev.device.type == "mydev", i
        np.testing.assert_allclose(_cpu(on_dev), on_cpu.numpy(), rtol=1e-12, err_msg=str(i))


def test_autograd_over_the_device(mydev: tt.PluginDevice) -> None:
    data = [[0.5, -1.0], [2.0, 0.25]]
    grads = []
    for device in ("cpu", "mydev"):
        w = tt.tensor(data, device=device, requires_grad=True)
        x = tt.tensor([[1.0, 2.0]], device=device)
        loss = tt.nn.functional.gelu(x @ w).sum() + (w * w).mean()
        loss.backward()
        assert w.grad is not None and w.grad.device.type == device
        grads.append(_cpu(w.grad))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


def test_a_user_kernel_for_the_device(mydev: tt.PluginDevice) -> None:
    with Library("mydevtest", "DEF") as lib:
        lib.define("double(Tensor x) -> Tensor")
        seen = []

        @dispatch.impl("mydevtest::double", "mydev", lib=lib)
        def double_mydev(x: tt.Tensor) -> tt.Tensor:
            seen.append(x.device.type)
            return x + x

        out = ops.mydevtest.double(tt.tensor([1.0, 3.0], device="mydev"))
        assert out.to("cpu").tolist() == [2.0, 6.0] and seen == ["mydev"]
        assert "double_mydev" in dispatch.dump_table("mydevtest::double")
        # No CPU kernel: the CPU call names the CPU backend, not the device.
        with pytest.raises(NotImplementedError, match="CPU"):
            ops.mydevtest.double(tt.tensor([1.0]))


def test_what_it_cannot_run_raises(mydev: tt.PluginDevice) -> None:
    # The standard has no unbuffered add (NumPy's add.at), and the device's spec gives
    # none: scatter_add needs one.
    assert "add_at" in mydev.missing
    x = tt.zeros(4, device="mydev")
    index = tt.tensor([0, 0, 1], device="mydev")
    with pytest.raises(NotImplementedError, match=r"scatter_add.*'mydev'"):
        x.scatter_add(0, index, tt.ones(3, device="mydev"))


@pytest.mark.parametrize(
    ("shape", "kernel", "stride", "padding", "dilation"),
    [((2, 3, 7, 6), (4, 3, 3, 2), 1, 0, 1), ((1, 2, 9, 8), (3, 2, 2, 3), 2, 1, 2),
     ((2, 4, 5, 5), (2, 4, 1, 1), 1, 0, 1), ((5, 6, 7), (3, 5, 6, 1), 1, 0, 1)],
)  # fmt: skip
def test_conv_and_pools_from_slices(
    mydev: tt.PluginDevice, shape: tuple[int, ...], kernel: tuple[int, ...], stride: int,
    padding: int, dilation: int,
) -> None:  # fmt: skip
    # NumPy's namespace has no sliding_window_view (np.lib.stride_tricks has): the
    # kernels take windows stacked from slices (backends.common.conv.sliding_windows),
    # which must give what the CPU's strided windows give.
    assert "sliding_window_view" not in mydev.missing
    rng = np.random.default_rng(0)
    x, w, b = (
        rng.standard_normal(shape),
        rng.standard_normal(kernel),
        rng.standard_normal(kernel[0]),
    )
    F = tt.nn.functional
    for call in (
        lambda d: F.conv2d(*(tt.tensor(a, device=d) for a in (x, w, b)), stride=stride,
                           padding=padding, dilation=dilation),
        lambda d: F.max_pool2d(tt.tensor(x, device=d), 2, stride, min(padding, 1), dilation),
        lambda d: F.avg_pool2d(tt.tensor(x, device=d), 2, stride, min(padding, 1)),
    ):  # fmt: skip
        np.testing.assert_allclose(_cpu(call("mydev")), _cpu(call("cpu")), rtol=1e-12)
    ints = tt.tensor(rng.integers(-9, 9, shape), device="mydev")
    got, want = F.avg_pool2d(ints, 2), F.avg_pool2d(ints.to("cpu"), 2)
    assert got.dtype is want.dtype is tt.int64
    np.testing.assert_array_equal(_cpu(got), _cpu(want))


def test_linalg_from_the_namespace(mydev: tt.PluginDevice) -> None:
    # The namespace's linalg extension makes the device's linalg_* kernels (Note
    # [Standard linalg for plug-in devices]): eigh reads the triangle UPLO names, qr's
    # mode="r" is the reduced R, as on the CPU.
    for name in ("linalg_inv", "linalg_eigh", "linalg_qr", "linalg_svd", "linalg_solve"):
        assert name in mydev.registered
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 4, 4))
    b = rng.standard_normal((2, 4, 3))
    L = tt.linalg
    for call in (
        lambda d: L.inv(tt.tensor(a, device=d)),
        lambda d: L.eigvalsh(tt.tensor(a, device=d), UPLO="U"),
        lambda d: L.eigvalsh(tt.tensor(a, device=d), UPLO="L"),
        lambda d: L.qr(tt.tensor(a, device=d), mode="r")[1],
        lambda d: L.svdvals(tt.tensor(a, device=d)),
        lambda d: L.solve(tt.tensor(a, device=d), tt.tensor(b, device=d)),
        lambda d: L.det(tt.tensor(a, device=d)),
    ):
        got, want = call("mydev"), call("cpu")
        assert got.device.type == "mydev" and got.dtype is want.dtype
        np.testing.assert_allclose(_cpu(got), _cpu(want), rtol=1e-10, atol=1e-12)
    with pytest.raises(RuntimeError, match="linalg.inv"):  # singular: PyTorch's error
        L.inv(tt.zeros(3, 3, device="mydev"))


def test_autocast_on_the_device(mydev: tt.PluginDevice) -> None:
    # Note [Autocast on plug-in devices]: CUDA's policies, float16 (the namespace has
    # it), on this device only; autograd records the casts.
    a = tt.randn(3, 4, device="mydev", requires_grad=True)
    b = tt.randn(4, 2, device="mydev")
    c = tt.randn(4, 2)
    assert not tt.is_autocast_enabled("mydev")
    with tt.autocast("mydev"):
        assert tt.is_autocast_enabled("mydev") and not tt.is_autocast_enabled("cpu")
        assert tt.get_autocast_dtype("mydev") is tt.float16
        out = a @ b
        assert out.dtype is tt.float16 and out.device.type == "mydev"  # lower_precision_fp
        assert tt.exp(a).dtype is tt.float32  # no policy: falls through
        assert tt.softmax(out, 0).dtype is tt.float32  # fp32
        assert (c.T @ c).dtype is tt.float32  # CPU tensors: autocast("mydev") is not theirs
        with tt.autocast("mydev", enabled=False):
            assert (a @ b).dtype is tt.float32
        assert (a @ b).dtype is tt.float16
    assert not tt.is_autocast_enabled("mydev") and (a @ b).dtype is tt.float32
    with tt.autocast("mydev"):
        loss = (a @ b).float().sum()
    loss.backward()
    assert a.grad is not None and a.grad.dtype is tt.float32 and a.grad.device.type == "mydev"
    # The product ran in float16: its gradient is b's float16 row sums (b rounded to
    # float16 first), not float32's; compared with those, as a relative tolerance around
    # a sum that cancels near zero failed one seed in eight.
    b16 = _cpu(b).astype(np.float16).astype(np.float32)
    expected = b16.sum(1).astype(np.float16).astype(np.float32)
    np.testing.assert_allclose(_cpu(a.grad), np.tile(expected, (3, 1)), rtol=2e-3, atol=1e-6)
    with tt.autocast("cpu"):  # CPU autocast leaves the device alone
        assert (a @ b).dtype is tt.float32
    with pytest.raises(RuntimeError, match=r"'mydev' does not support tensor.bfloat16"):
        tt.autocast("mydev", dtype=tt.bfloat16)
    with pytest.raises(ValueError, match="registered plug-in device"):
        tt.autocast("nodev")


def test_autocast_needs_a_lower_precision_dtype() -> None:
    xp = pytest.importorskip("array_api_strict", reason="the strict extra")
    dev = tt._plugin.get_device("strict")
    assert dev is not None and getattr(xp, "float16", None) is None
    with pytest.raises(RuntimeError, match=r"device 'strict' has no lower-precision dtype"):
        tt.autocast("strict")


def test_mixed_devices_name_both(mydev: tt.PluginDevice) -> None:
    x = tt.ones(2, device="mydev")
    with pytest.raises(RuntimeError, match=r"mydev.*cpu|cpu.*mydev"):
        x + tt.ones(2)
    with pytest.raises(RuntimeError, match=r"mydev.*cpu|cpu.*mydev"):
        tt.ones(2) * x
    # A 0-d CPU tensor joins the device's op, as in PyTorch.
    assert (x + tt.tensor(1.0)).device.type == "mydev"


def test_register_device_refuses_bad_names(mydev: tt.PluginDevice) -> None:
    for name in ("cpu", "mydev"):
        with pytest.raises(RuntimeError, match="exists already"):
            tt.register_device(name, array_type=np.ndarray, namespace=np)
    with pytest.raises(ValueError, match="lower-case"):
        tt.register_device("My Dev", array_type=np.ndarray, namespace=np)


def test_destroy_forgets_the_device() -> None:
    dev = tt.register_device("gone", array_type=np.ndarray, namespace=np)
    assert tt.zeros(1, device="gone").device.type == "gone"
    dev.destroy()
    with pytest.raises(RuntimeError, match="device type"):
        tt.device("gone")
    with pytest.raises(RuntimeError):
        dispatch.key_for_type("gone")


def test_three_devices_at_once() -> None:
    # In a fresh process: other tests of this worker may hold PrivateUse keys.
    code = textwrap.dedent(
        """
        import numpy as np, tensor as tt
        devs = [tt.register_device(n, array_type=np.ndarray, namespace=np)
                for n in ("one", "two", "three")]
        assert len({d.key for d in devs}) == 3
        for n in ("one", "two", "three"):
            assert (tt.ones(2, device=n) * 3).sum().to("cpu").item() == 6.0
        # One autocast key for the three (Note [Autocast on plug-in devices]): on for
        # "three" only, it casts on "three" only.
        with tt.autocast("three"):
            for n in ("one", "two", "three"):
                m = tt.ones(2, 2, device=n)
                assert (m @ m).dtype is (tt.float16 if n == "three" else tt.float32), n
            with tt.autocast("one"):
                m = tt.ones(2, 2, device="one")
                assert (m @ m).dtype is tt.float16
            assert (m @ m).dtype is tt.float32
        assert not tt.is_autocast_enabled("three")
        try:
            tt.ones(1, device="one") + tt.ones(1, device="two")
        except RuntimeError as e:
            assert "one" in str(e) and "two" in str(e), e
        else:
            raise AssertionError("mixed plug-in devices did not raise")
        try:
            tt.register_device("four", array_type=np.ndarray, namespace=np)
        except RuntimeError as e:
            assert "PrivateUse" in str(e)
        else:
            raise AssertionError("a fourth device found a key")
        devs[1].destroy()
        tt.register_device("four", array_type=np.ndarray, namespace=np)
        print("ok")
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr

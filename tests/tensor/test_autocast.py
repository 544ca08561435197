"""Autocast: state, PyTorch's CPU policies, the cast cache, custom ops, and layer order."""

from __future__ import annotations

import threading
import warnings
from typing import Any

import pytest

import dispatch
import tensor as tt
from dispatch import DispatchKey, DispatchMode


def test_guard_toggles_the_key_nests_and_restores_on_error() -> None:
    assert not tt.is_autocast_enabled("cpu")
    assert DispatchKey.AutocastCPU in dispatch.tls_local_exclude_set()
    with tt.autocast("cpu"):
        assert tt.is_autocast_enabled("cpu")
        assert tt.get_autocast_dtype("cpu") is tt.bfloat16
        with tt.autocast("cpu", enabled=False):
            assert not tt.is_autocast_enabled("cpu")
        with tt.autocast("cpu", dtype=tt.float16):
            assert tt.get_autocast_dtype("cpu") is tt.float16
        assert tt.is_autocast_enabled("cpu") and tt.get_autocast_dtype("cpu") is tt.bfloat16
    with pytest.raises(ZeroDivisionError), tt.autocast("cpu"):
        1 / 0  # noqa: B018
    assert not tt.is_autocast_enabled("cpu")
    assert DispatchKey.AutocastCPU in dispatch.tls_local_exclude_set()


def test_state_is_per_thread() -> None:
    seen = {}
    with tt.autocast("cpu"):
        t = threading.Thread(target=lambda: seen.setdefault("cpu", tt.is_autocast_enabled("cpu")))
        t.start()
        t.join()
    assert seen == {"cpu": False}


def test_unsupported_settings_warn_and_disable() -> None:
    with pytest.warns(UserWarning, match="CPU autocast, but the target dtype is not supported"):
        region = tt.autocast("cpu", dtype=tt.float64)
    with region:
        assert not tt.is_autocast_enabled("cpu")
    if not tt.cuda.is_available():
        with (
            pytest.warns(UserWarning, match="CUDA is not available. Disabling"),
            tt.autocast("cuda"),
        ):
            assert not tt.is_autocast_enabled("cuda")
    with pytest.raises(ValueError, match="device_type must be 'cpu' or 'cuda'"):
        tt.autocast("tpu")


def test_cpu_policies_match_pytorch() -> None:
    a, b = tt.ones(2, 2), tt.ones(2, 2)
    with tt.autocast("cpu"):
        assert (a @ b).dtype is tt.bfloat16  # lower_precision_fp
        assert tt.mm(a, b).dtype is tt.bfloat16
        assert tt.exp(a).dtype is tt.float32  # not an autocast op on CPU
        assert tt.prod(a.to(tt.bfloat16)).dtype is tt.float32  # fp32
        assert tt.mm(a.double(), b.double()).dtype is tt.float64  # float64 is not eligible
        assert tt.mm(tt.ones(2, 2, dtype=tt.int64), tt.ones(2, 2, dtype=tt.int64)).dtype is tt.int64
    assert (a @ b).dtype is tt.float32


def test_cpu_policies_against_torch() -> None:
    torch = pytest.importorskip("torch", reason="PyTorch not installed: differential check skipped")
    cases = [
        ("mm", lambda m, x, y: m.mm(x, y)),
        ("matmul", lambda m, x, y: m.matmul(x, y)),
        ("exp", lambda m, x, y: m.exp(x)),
        ("prod", lambda m, x, y: m.prod(x.to(m.bfloat16))),
        ("add", lambda m, x, y: m.add(x, y)),
    ]
    for name, fn in cases:
        with tt.autocast("cpu"):
            ours = fn(tt, tt.ones(2, 2), tt.ones(2, 2)).dtype
        with torch.autocast("cpu"):
            theirs = fn(torch, torch.ones(2, 2), torch.ones(2, 2)).dtype
        assert ours.name == str(theirs).removeprefix("torch."), name


def test_cast_cache_reuses_the_copy_of_a_leaf_within_a_region() -> None:
    w = tt.ones(2, 2, requires_grad=True)
    casts: list[Any] = []

    class Count(DispatchMode):
        def __dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            if func.name == "core::_to_copy":
                casts.append(func)
            return func(*args, **(kwargs or {}))

    x = tt.ones(2, 2)
    with Count(), tt.autocast("cpu"):
        tt.mm(x, w)
        tt.mm(x, w)
    # w (a leaf requiring grad) is cast once; x (no grad) once per call.
    assert len(casts) == 3
    casts.clear()
    with Count(), tt.autocast("cpu", cache_enabled=False):
        tt.mm(x, w)
        tt.mm(x, w)
    assert len(casts) == 4


def test_layer_order_with_a_mode_is_autocast_autograd_mode_backend() -> None:
    order: list[str] = []

    class Log(DispatchMode):
        def __dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            order.append(func.name)
            return func(*args, **(kwargs or {}))

    a = tt.ones(2, 2, requires_grad=True)
    with tt.autocast("cpu"), Log():
        out = tt.mm(a, tt.ones(2, 2))
    # The mode sees the casts (made by the autocast kernel) and then mm in bfloat16.
    assert order[-1] == "core::mm" and order.count("core::_to_copy") == 2
    assert out.dtype is tt.bfloat16 and out.requires_grad


def test_decorator() -> None:
    @tt.autocast("cpu")
    def run(x: tt.Tensor) -> tt.Tensor:
        return x @ x

    assert run(tt.ones(2, 2)).dtype is tt.bfloat16
    assert not tt.is_autocast_enabled("cpu")


def test_custom_op_register_autocast() -> None:
    @dispatch.custom_op("test_autocast::twice", mutates_args=())
    def twice(x: tt.Tensor) -> tt.Tensor:
        return x * 2

    try:
        with tt.autocast("cpu"):
            assert twice(tt.ones(2)).dtype is tt.float32  # no policy: falls through
        twice.register_autocast("cpu", tt.float16)
        with tt.autocast("cpu"):
            assert twice(tt.ones(2)).dtype is tt.float16
            assert twice(tt.ones(2, dtype=tt.float64)).dtype is tt.float64
        assert twice(tt.ones(2)).dtype is tt.float32
        with pytest.raises(ValueError, match="device_type must be 'cpu' or 'cuda'"):
            dispatch.register_autocast(twice, "tpu", tt.float16)
    finally:
        twice._destroy()


def test_custom_fwd_and_bwd() -> None:
    class Mul(tt.autograd.Function):
        @staticmethod
        @tt.amp.custom_fwd(device_type="cpu", cast_inputs=tt.float32)
        def forward(ctx: Any, x: tt.Tensor) -> tt.Tensor:
            ctx.seen = (x.dtype, tt.is_autocast_enabled("cpu"))
            return x * 2

        @staticmethod
        @tt.amp.custom_bwd(device_type="cpu")
        def backward(ctx: Any, g: tt.Tensor) -> tt.Tensor:
            ctx.back = tt.is_autocast_enabled("cpu")
            return g * 2

    x = tt.ones(2, dtype=tt.bfloat16, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tt.autocast("cpu"):
            y = Mul.apply(x)
    assert y.grad_fn.ctx.seen == (tt.float32, False)
    y.backward(tt.ones(2, dtype=tt.float32))
    assert y.grad_fn is not None

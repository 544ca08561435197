"""Autocast: state, PyTorch's CPU policies, the cast cache, custom ops, and layer order."""

from __future__ import annotations

import threading
import warnings
from typing import Any

import pytest

import dispatch
import tensor as tt
from dispatch import DispatchKey, DispatchKeySet, DispatchMode
from tensor import _autocast


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
    with pytest.raises(ValueError, match="device_type must be 'cpu', 'cuda' or a registered"):
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


# -- PyTorch 2.13's policy lists (SEMANTICS.md §8; names checked against torch below) ------------
TORCH_POLICIES = {
    "cpu": {
        "lower_precision_fp": """conv1d conv1d.padding conv2d conv2d.padding conv3d
            conv3d.padding bmm mm linalg_vecdot baddbmm addmm _addmm_activation addbmm linear
            _convolution.deprecated matmul conv_tbc mkldnn_rnn_layer conv_transpose1d
            conv_transpose2d.input conv_transpose3d.input prelu scaled_dot_product_attention
            _native_multi_head_attention""",
        "fp32": """avg_pool3d binary_cross_entropy grid_sampler polar prod prod.dim_int quantile
            quantile.scalar nanquantile nanquantile.scalar stft stft.center cdist
            grid_sampler_2d _grid_sampler_2d_cpu_fallback grid_sampler_3d trace view_as_complex
            cholesky cholesky_inverse cholesky_solve inverse lu_solve orgqr ormqr pinverse
            max_pool3d max_unpool2d max_unpool3d adaptive_avg_pool3d reflection_pad1d
            reflection_pad2d replication_pad1d replication_pad2d replication_pad3d mse_loss
            cosine_embedding_loss nll_loss nll_loss2d hinge_embedding_loss poisson_nll_loss
            smooth_l1_loss cross_entropy_loss l1_loss huber_loss margin_ranking_loss
            soft_margin_loss triplet_margin_loss multi_margin_loss ctc_loss.IntList
            ctc_loss.Tensor kl_div multilabel_margin_loss binary_cross_entropy_with_logits
            fft_fft fft_ifft fft_fft2 fft_ifft2 fft_fftn fft_ifftn fft_rfft fft_irfft fft_rfft2
            fft_irfft2 fft_rfftn fft_irfftn fft_hfft fft_ihfft linalg_cond linalg_cond.p_str
            linalg_matrix_rank linalg_matrix_rank.tol_tensor linalg_matrix_rank.atol_rtol_tensor
            linalg_matrix_rank.atol_rtol_float linalg_solve linalg_cholesky linalg_svdvals
            linalg_eigvals linalg_eigvalsh linalg_inv linalg_householder_product
            linalg_tensorinv linalg_tensorsolve fake_quantize_per_tensor_affine geqrf
            _lu_with_info qr svd triangular_solve fractional_max_pool2d fractional_max_pool3d
            adaptive_max_pool3d multilabel_margin_loss_forward linalg_qr linalg_cholesky_ex
            linalg_svd linalg_eig linalg_eigh linalg_lstsq linalg_inv_ex""",
        "promote": "stack cat index_copy",
    },
    "cuda": {
        "lower_precision_fp": """_convolution.deprecated _convolution conv1d conv2d conv3d
            conv_tbc conv_transpose1d conv_transpose2d.input conv_transpose3d.input convolution
            prelu addmm addmv addr matmul einsum mm mv linalg_vecdot linear addbmm baddbmm bmm
            chain_matmul linalg_multi_dot _thnn_fused_lstm_cell _thnn_fused_gru_cell lstm_cell
            gru_cell rnn_tanh_cell rnn_relu_cell _scaled_dot_product_flash_attention
            scaled_dot_product_attention cudnn_convolution cudnn_convolution_transpose""",
        "fp32": """acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh
            tan pow.Tensor_Scalar pow.Tensor_Tensor pow.Scalar softplus layer_norm
            native_layer_norm rms_norm group_norm frobenius_norm.dim nuclear_norm
            nuclear_norm.dim cosine_similarity poisson_nll_loss cosine_embedding_loss nll_loss
            nll_loss2d hinge_embedding_loss kl_div l1_loss smooth_l1_loss huber_loss mse_loss
            margin_ranking_loss multilabel_margin_loss soft_margin_loss triplet_margin_loss
            multi_margin_loss binary_cross_entropy_with_logits dist pdist cdist renorm logsumexp
            upsample_nearest1d _upsample_nearest_exact1d upsample_nearest2d
            _upsample_nearest_exact2d upsample_nearest3d _upsample_nearest_exact3d
            upsample_linear1d upsample_bilinear2d _upsample_bilinear2d_aa upsample_trilinear3d
            upsample_bicubic2d _upsample_bicubic2d_aa""",
        "fp32_set_opt_dtype": """prod prod.dim_int softmax.int log_softmax.int cumprod cumsum
            linalg_vector_norm linalg_matrix_norm linalg_matrix_norm.str_ord sum
            sum.dim_IntList""",
        "fp32_append_dtype": "norm.Scalar norm.ScalarOpt_dim",
        "promote": """addcdiv addcmul atan2 bilinear cross dot vdot grid_sampler index_put
            tensordot scatter_add""",
        "banned": "binary_cross_entropy",
    },
}
TORCH_POLICY_OF = {
    device: {name: policy for policy, names in lists.items() for name in names.split()}
    for device, lists in TORCH_POLICIES.items()
}


def _ours(name: str) -> Any:
    """Our overload for one of PyTorch's names: the same overload, or the one overload of
    ours that merges PyTorch's (``sum`` for ``sum.dim_IntList``); None if we lack it."""
    base, _, overload = name.partition(".")
    packet = getattr(dispatch.ops.core, base, None)
    if packet is None:
        return None
    overloads = packet.overloads()
    if overload in overloads or (not overload and "default" in overloads):
        return getattr(packet, overload or "default")
    plain = [o for o in overloads if o not in ("out",) and not o.endswith("_out")]
    assert plain == ["default"], f"{name}: no overload of ours stands for it ({overloads})"
    return packet.default


def _kernel_at(op: Any, key: str) -> str:
    """The kernel ``dump_table`` shows for ``key``."""
    for line in dispatch.dump_table(op.name).splitlines():
        cells = line.split()
        if cells and cells[0] == key:
            return cells[1]
    raise AssertionError(f"no {key} row in the table of {op.name}")


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_policy_tables_follow_pytorchs_lists(device: str) -> None:
    key = f"Autocast{device.upper()}"
    covered = set()
    for name, policy in TORCH_POLICY_OF[device].items():
        op = _ours(name)
        if op is None:
            continue  # an operator this package does not define
        covered.add(op.name)
        assert _kernel_at(op, key) == f"tensor._autocast.autocast_{device}_{policy}", name
    # The other way: every operator with a kernel at the key is on PyTorch's list.
    for row in _autocast.POLICIES[device]:
        op = _ours(row)
        if op is not None and _kernel_at(op, key) != "fallthrough":
            assert op.name in covered, f"{row} has an {key} kernel but is not on PyTorch's list"
    assert _kernel_at(dispatch.ops.core.sin.default, key) == "fallthrough"


@pytest.mark.torch
def test_pytorch_lists_are_the_registrations_of_torch() -> None:
    torch = pytest.importorskip("torch", reason="PyTorch not installed: lists as recorded")
    if not torch.__version__.startswith("2.13."):
        pytest.skip(f"the lists are PyTorch 2.13's; torch {torch.__version__} is installed")
    for device in ("cpu", "cuda"):
        key = f"Autocast{device.upper()}"
        registered = torch._C._dispatch_get_registrations_for_dispatch_key(key)
        assert {name.removeprefix("aten::") for name in registered} == set(TORCH_POLICY_OF[device])


def test_cuda_policies(cuda_device: str) -> None:
    """The dtype each AutocastCUDA policy gives (PyTorch 2.13's rules, SEMANTICS.md §8), on
    a GPU or on the stand-in CUDA device (tests/tensor/standin_cuda.py)."""
    F = tt.nn.functional
    x = tt.randn(4, 4).to("cuda")
    h = x.half()
    with tt.autocast("cuda"):
        assert tt.is_autocast_enabled("cuda") and tt.get_autocast_dtype("cuda") is tt.float16
        # lower_precision_fp: float16 by default on CUDA, whatever the floating inputs.
        for out in (
            tt.mm(x, x),
            x @ x,
            tt.bmm(x[None], x[None]),
            tt.addmm(x, x, x),
            F.linear(x, x),
            tt.einsum("ij,jk->ik", x, h),
            F.conv2d(x[None, None], x[None, None, :2, :2]),
        ):
            assert out.dtype is tt.float16 and out.device.type == "cuda"
        assert tt.mm(x.double(), x.double()).dtype is tt.float64  # float64 is not eligible
        # fp32: run in float32.
        for out in (
            tt.exp(h),
            tt.log(h.abs()),
            h.pow(2),
            F.softplus(h),
            F.layer_norm(h, (4,)),
            F.mse_loss(h, h),
            F.binary_cross_entropy_with_logits(h, h.sigmoid()),
            tt.logsumexp(h, 1),
        ):
            assert out.dtype is tt.float32
        # fp32_set_opt_dtype: an unset dtype becomes float32; a given one is kept.
        for out in (
            tt.sum(h),
            tt.prod(h, 1),
            tt.cumsum(h, 0),
            tt.softmax(h, 1),  # dtype is positional in softmax.int's schema
            tt.log_softmax(h, 1),
            tt.linalg.vector_norm(h),
        ):
            assert out.dtype is tt.float32
        assert tt.softmax(h, 1, dtype=tt.float16).dtype is tt.float16
        assert tt.sum(h, dtype=tt.float16).dtype is tt.float16
        assert tt.sum(tt.ones(3, dtype=tt.int32).to("cuda")).dtype is tt.int64  # ineligible
        # fp32_append_dtype (norm.Scalar, norm.ScalarOpt_dim): float32.
        assert tt.norm(h).dtype is tt.float32 and tt.norm(h, dim=1).dtype is tt.float32
        # promote: the widest eligible type; float32 wins over float16.
        assert tt.atan2(h, x).dtype is tt.float32
        assert tt.dot(h[0], h[0]).dtype is tt.float16
        assert tt.tensordot(h, x, ([1], [0])).dtype is tt.float32
        # No AutocastCUDA kernel: the inputs' dtypes, as without autocast.
        assert (h + h).dtype is tt.float16 and tt.sin(h).dtype is tt.float16
        assert tt.cat([h, x]).dtype is tt.float32  # cat promotes only on CPU
    with tt.autocast("cuda", dtype=tt.bfloat16):
        assert tt.mm(x, x).dtype is tt.bfloat16
        with pytest.raises(RuntimeError, match="Unexpected floating ScalarType"):
            tt.atan2(h, h)  # float16 under a bfloat16 region: PyTorch's prioritize raises
    assert tt.mm(x, x).dtype is tt.float32


def test_cuda_policy_through_redispatch_with_explicit_keys(cuda_device: str) -> None:
    """``redispatch`` runs the AutocastCUDA kernel whatever the thread's state, and it casts
    to the CUDA autocast dtype, which a disabled region still sets (as in PyTorch)."""
    x = tt.randn(2, 2).to("cuda")
    keys = DispatchKeySet([DispatchKey.AutocastCUDA, DispatchKey.CUDA])
    mm, exp = dispatch.ops.core.mm.default, dispatch.ops.core.exp.default
    assert not tt.is_autocast_enabled("cuda")
    assert mm.redispatch(keys, x, x).dtype is tt.float16
    assert exp.redispatch(keys, x.half()).dtype is tt.float32
    with tt.autocast("cuda", dtype=tt.bfloat16, enabled=False):
        assert not tt.is_autocast_enabled("cuda")
        assert mm(x, x).dtype is tt.float32
        out = mm.redispatch(keys, x, x)
        assert out.dtype is tt.bfloat16 and out.device.type == "cuda"


def _cpu_through_autocast_cuda(lib: Any, keys: Any) -> list[str]:
    """Dtypes of CPU calls redispatched to AutocastCUDA, for ``tt`` or ``torch``."""
    core = lib.ops.aten if lib.__name__ == "torch" else dispatch.ops.core
    x = lib.ones(2, 2)
    b = x.to(lib.bfloat16)
    calls = [
        core.mm.default.redispatch(keys, x, x),  # lower_precision_fp
        core.exp.default.redispatch(keys, b),  # fp32
        core.softmax.int.redispatch(keys, b, 1),  # fp32_set_opt_dtype
        core.atan2.default.redispatch(keys, b, x),  # promote
    ]
    return [str(out.dtype).split(".")[-1] for out in calls]


def test_cpu_tensors_pass_autocast_cuda_unchanged_as_in_pytorch() -> None:
    """CPU tensors are not eligible for CUDA autocast: redispatched through AutocastCUDA,
    each policy leaves them as they are and the call continues on the CPU."""
    keys = DispatchKeySet([DispatchKey.AutocastCUDA, DispatchKey.CPU])
    ours = _cpu_through_autocast_cuda(tt, keys)
    assert ours == ["float32", "bfloat16", "bfloat16", "float32"]
    torch = pytest.importorskip("torch", reason="PyTorch not installed: recorded dtypes only")
    theirs = _cpu_through_autocast_cuda(
        torch,
        torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCUDA)
        | torch._C.DispatchKeySet(torch._C.DispatchKey.CPU),
    )
    assert ours == theirs


def test_cpu_promote_matches_pytorch() -> None:
    """cat/stack under autocast("cpu"): PyTorch's prioritize, errors included."""
    cases = [
        ("float16", "float16"),
        ("bfloat16", "bfloat16"),
        ("bfloat16", "float32"),
        ("float16", "float32"),
        ("float32", "float32"),
        ("bfloat16", "float64"),
        ("float16", "float64"),
        ("int64", "int64"),
    ]

    def run(lib: Any) -> list[str]:
        seen = []
        for a, b in cases:
            xs = [lib.ones(2, dtype=getattr(lib, a)), lib.ones(2, dtype=getattr(lib, b))]
            with lib.autocast("cpu"):
                try:
                    seen.append(str(lib.cat(xs).dtype).split(".")[-1])
                except RuntimeError as e:
                    assert "Unexpected floating ScalarType" in str(e)
                    seen.append("error")
        return seen

    ours = run(tt)
    assert ours == [
        "error",
        "bfloat16",
        "float32",
        "error",
        "float32",
        "float64",  # float64 is ignored by the promotion, then cat promotes as usual
        "error",
        "int64",
    ]
    torch = pytest.importorskip("torch", reason="PyTorch not installed: recorded dtypes only")
    assert ours == run(torch)


def test_autocast_cuda_without_a_gpu_sets_its_dtype_but_stays_off_like_pytorch() -> None:
    if tt.cuda.is_available():
        pytest.skip("a CUDA device is present: autocast('cuda') is enabled there")
    with pytest.warns(UserWarning, match="CUDA is not available"):
        region = tt.autocast("cuda", dtype=tt.bfloat16)
    with region:
        assert not tt.is_autocast_enabled("cuda")
        assert tt.get_autocast_dtype("cuda") is tt.bfloat16
        assert tt.mm(tt.ones(2, 2), tt.ones(2, 2)).dtype is tt.float32
    assert tt.get_autocast_dtype("cuda") is tt.float16
    torch = pytest.importorskip("torch", reason="PyTorch not installed")
    if torch.cuda.is_available():  # pragma: no cover - a CUDA build with a GPU
        return
    with pytest.warns(UserWarning, match="CUDA is not available"):
        torch_region = torch.autocast("cuda", dtype=torch.bfloat16)
    with torch_region:
        assert not torch.is_autocast_enabled("cuda")
        assert torch.get_autocast_dtype("cuda") is torch.bfloat16

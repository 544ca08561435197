"""Operator rows: the neural-network functions (``tt.nn.functional``).

Imports: ``tensor._opinfo`` only.  ``tensor._optable`` adds these rows to the table.

ATen's names and schemas (``cross_entropy_loss``, ``max_pool2d_with_indices``,
``native_dropout``; ``reduction`` is ATen's int: 0 none, 1 mean, 2 sum).  The
``nn`` family has kernels per backend (``backends.*.nn``); ``composite`` rows are
CompositeImplicitAutograd kernels written with other operators
(``tensor._composite_nn``), so autograd differentiates their decomposition.
``tt.nn.functional`` wraps them with PyTorch's Python signatures.
"""

from __future__ import annotations

from ._dtype import int64
from ._opinfo import ALL, FLOATS, NO_BOOL, REAL_NO_BOOL, OpInfo

__all__ = ["ROWS"]


def _nn(name: str, *schemas: str, **kw: object) -> OpInfo:
    kw.setdefault("method", False)
    kw.setdefault("dtypes", FLOATS)
    return OpInfo(name, schemas, "nn", **kw)  # type: ignore[arg-type]


def _composite(name: str, *schemas: str, **kw: object) -> OpInfo:
    kw.setdefault("method", False)
    kw.setdefault("dtypes", FLOATS)
    return OpInfo(name, schemas, "composite", **kw)  # type: ignore[arg-type]


_POOL = "int[2] kernel_size, int[2] stride=[], int[2] padding=0"
_CONV = "Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1"

ROWS: tuple[OpInfo, ...] = (
    _nn("softmax", "softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
        method=True),
    _nn("log_softmax", "log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
        method=True),
    _nn(
        "layer_norm",
        "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
        "Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
    ),
    _nn("native_dropout", "native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)",
        function=None),
    _composite("dropout", "dropout(Tensor input, float p, bool train) -> Tensor", dtypes=ALL),
    _composite("dropout_", "dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)",
               dtypes=ALL),
    OpInfo(
        "embedding",
        ("embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, "
         "bool scale_grad_by_freq=False, bool sparse=False) -> Tensor",),
        "nn", method=False,
    ),
    _nn(
        "cross_entropy_loss",
        "cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
        "SymInt ignore_index=-100, float label_smoothing=0.0) -> Tensor",
        function=None,
    ),
    # The input gradient of cross_entropy_loss with class targets, without weights or
    # label smoothing, in one kernel (PyTorch splits it into nll_loss_backward and
    # _log_softmax_backward_data).  cross_entropy's formula calls it when the backward
    # records no graph; with create_graph it differentiates a composite instead.
    _nn(
        "_cross_entropy_backward",
        "_cross_entropy_backward(Tensor grad_output, Tensor self, Tensor target, "
        "int reduction=1, SymInt ignore_index=-100) -> Tensor",
        function=None,
    ),
    _composite("mse_loss", "mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
               function=None),
    _composite(
        "binary_cross_entropy_with_logits",
        "binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, "
        "Tensor? pos_weight=None, int reduction=1) -> Tensor",
        py="binary_cross_entropy_with_logits",  # Note [binary_cross_entropy_with_logits defaults]
    ),
    _composite("linear", "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
               function=None, dtypes=NO_BOOL),
    _nn(
        "conv2d",
        f"conv2d({_CONV}, SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor",
        f"conv2d.padding({_CONV}, str padding=\"valid\", SymInt[2] dilation=1, SymInt groups=1) "
        "-> Tensor",
        py="conv2d", dtypes=NO_BOOL,
    ),
    _nn(
        "max_pool2d_with_indices",
        f"max_pool2d_with_indices(Tensor self, {_POOL}, int[2] dilation=1, bool ceil_mode=False) "
        "-> (Tensor, Tensor)",
        function=None, dtypes=REAL_NO_BOOL,
    ),
    _composite(
        "max_pool2d",
        f"max_pool2d(Tensor self, {_POOL}, int[2] dilation=1, bool ceil_mode=False) -> Tensor",
        dtypes=REAL_NO_BOOL,
    ),
    _nn(
        "avg_pool2d",
        f"avg_pool2d(Tensor self, {_POOL}, bool ceil_mode=False, bool count_include_pad=True, "
        "int? divisor_override=None) -> Tensor",
        function=None, dtypes=FLOATS | {int64},
    ),
)  # fmt: skip

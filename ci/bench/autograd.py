"""Autograd costs as PyTorch users write the code, side by side in one process, one thread.

    python ci/bench/autograd.py [--quick] [--only SUBSTRING] [--process-time] [--per-call]
                                [--blas-threads N]

Every row runs the same code on both libraries (our API is PyTorch's, so each workload
is written once, given ``tt`` or ``torch``), in interleaved rounds; figures are medians.

- recorded ops: a tiny op with an input that requires grad, ours over PyTorch's
  (target <= 1.0), and what recording adds to the op without grad, in us (target
  <= 1.0 us);
- training steps of an MLP (forward, relu, cross_entropy, backward, update, grads set to
  None) at batch 64, 256->256->10 and batch 32, 64->64->10, in every spelling users
  write: ``x @ w + b`` or ``F.linear`` with ``[out, in]`` weights; updates as
  ``p -= lr * g``, as ``torch.optim.SGD`` does them (``p.add_(g, alpha=-lr)``), with
  momentum (``buf.mul_(m).add_(g)``), and as Adam's single-tensor path does them
  (``lerp_``, ``mul_``, ``addcmul_``, ``sqrt``, ``div_``, ``add_``, ``addcdiv_``)
  (target <= 1.0 PyTorch eager).  The ``NumPy`` columns are each spelling written by
  hand in NumPy (forward, analytic backward, update) and its ratio to PyTorch: the floor
  any dispatcher over NumPy adds its costs to.  Checked at start: each computes the
  parameters ours does.

BLAS runs one thread unless ``--blas-threads N`` (every BLAS library N threads; PyTorch
keeps one): the machine's default is several, and SciPy's OpenBLAS (our axpy and
gemm) keeps a thread pool apart from NumPy's, which one thread hides (Note [Two BLAS
thread pools] in backends/cpu/_blas.py).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _blas_threads_argument() -> str:
    """``--blas-threads``'s value (``N`` or ``=N``), read before NumPy loads OpenBLAS,
    which takes its thread count from the environment; argparse checks it later."""
    for i, arg in enumerate(sys.argv):
        if arg.startswith("--blas-threads="):
            return arg.partition("=")[2]
        if arg == "--blas-threads" and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
    return "1"


_BLAS_THREADS = _blas_threads_argument()
os.environ.setdefault("OMP_NUM_THREADS", _BLAS_THREADS)
os.environ.setdefault("OPENBLAS_NUM_THREADS", _BLAS_THREADS)
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

import tensor as tt  # noqa: E402

LR, MOMENTUM, BETAS, EPS = 0.01, 0.9, (0.9, 0.999), 1e-8


TIMER = time.perf_counter  # --process-time: this process's CPU time (a shared machine)
PER_CALL = False  # --per-call: the 10th percentile of single calls (see interleaved)


def interleaved(fns: list[Callable[[], Any]], number: int, rounds: int) -> list[float]:
    """Median seconds per call of each function, timed in alternating rounds.

    With ``--per-call``: each call timed alone, in alternating blocks of ten, and the 10th
    percentile of each function's times.  On a shared host whose speed changes within a
    round (the development machine: the same row moves by 0.2 between runs), the
    fastest tenth is what the code costs when it runs undisturbed; the median of rounds
    mixes in whatever slowed them."""
    times: list[list[float]] = [[] for _ in fns]
    if PER_CALL:
        clock = TIMER
        for _ in range(rounds * max(number // 10, 1)):
            for i, fn in enumerate(fns):
                for _ in range(10):
                    start = clock()
                    fn()
                    times[i].append(clock() - start)
        return [sorted(t)[len(t) // 10] for t in times]
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            times[i].append(timeit.Timer(fn, timer=TIMER).timeit(number=number) / number)
    return [statistics.median(t) for t in times]


# -- recorded ops -----------------------------------------------------------------------------
def recorded_ops(lib: Any) -> dict[str, tuple[Callable[[], Any], Callable[[], Any]]]:
    """name -> (the op with an input that requires grad, the same op without)."""
    a, b = lib.ones(16), lib.ones(16)
    ag = lib.ones(16, requires_grad=True)
    m, mg = lib.ones(4, 4), lib.ones(4, 4, requires_grad=True)
    return {
        "a + b, a requires grad": (lambda: ag + b, lambda: a + b),
        "sin(a), a requires grad": (lambda: lib.sin(ag), lambda: lib.sin(a)),
        "mm(4x4), one requires grad": (lambda: lib.mm(mg, m), lambda: lib.mm(m, m)),
    }


# -- training steps ---------------------------------------------------------------------------
def mlp_data(batch: int, width_in: int, hidden: int, classes: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "x": rng.standard_normal((batch, width_in), dtype=np.float32),
        "y": rng.integers(0, classes, batch),
        "w1": (rng.standard_normal((width_in, hidden)) * 0.05).astype(np.float32),
        "b1": np.zeros(hidden, np.float32),
        "w2": (rng.standard_normal((hidden, classes)) * 0.05).astype(np.float32),
        "b2": np.zeros(classes, np.float32),
    }


def _sgd_sub(params: list[Any], state: dict[str, Any]) -> None:
    for p in params:
        p -= LR * p.grad


def _sgd_add_alpha(params: list[Any], state: dict[str, Any]) -> None:
    for p in params:
        p.add_(p.grad, alpha=-LR)


def _sgd_momentum(params: list[Any], state: dict[str, Any]) -> None:
    for p, buf in zip(params, state["momentum"], strict=True):
        buf.mul_(MOMENTUM).add_(p.grad)
        p.add_(buf, alpha=-LR)


def _adam(params: list[Any], state: dict[str, Any]) -> None:
    # torch.optim.Adam's _single_tensor_adam (no weight decay, no amsgrad).
    state["step"] += 1
    step = state["step"]
    beta1, beta2 = BETAS
    bias_correction1 = 1 - beta1**step
    bias_correction2_sqrt = (1 - beta2**step) ** 0.5
    step_size = LR / bias_correction1
    for p, m, v in zip(params, state["exp_avg"], state["exp_avg_sq"], strict=True):
        g = p.grad
        m.lerp_(g, 1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        denom = (v.sqrt() / bias_correction2_sqrt).add_(EPS)
        p.addcdiv_(m, denom, value=-step_size)


UPDATES: dict[str, Callable[[list[Any], dict[str, Any]], None]] = {
    "p -= lr * g": _sgd_sub,
    "p.add_(g, alpha=-lr)": _sgd_add_alpha,
    "SGD momentum": _sgd_momentum,
    "Adam": _adam,
}
# Methods an update spelling calls that not every tree has yet.
NEEDS = {"Adam": ("lerp_", "addcmul_", "addcdiv_")}
SPELLINGS = [  # (forward, update)
    ("x @ w + b", "p -= lr * g"),
    ("F.linear", "p.add_(g, alpha=-lr)"),
    ("x @ w + b", "p.add_(g, alpha=-lr)"),
    ("F.linear", "p -= lr * g"),
    ("F.linear", "SGD momentum"),
    ("F.linear", "Adam"),
]


def _arrays(d: dict[str, np.ndarray], forward: str) -> list[np.ndarray]:
    """The parameters' arrays (copies) in the forward's layout: F.linear's weights are
    nn.Linear's ``[out, in]``."""
    if forward == "F.linear":
        return [d["w1"].T.copy(), d["b1"].copy(), d["w2"].T.copy(), d["b2"].copy()]
    return [d[k].copy() for k in ("w1", "b1", "w2", "b2")]


def _optimizer_state(params: list[Any], zeros_like: Callable[[Any], Any]) -> dict[str, Any]:
    return {
        "momentum": [zeros_like(p) for p in params],
        "exp_avg": [zeros_like(p) for p in params],
        "exp_avg_sq": [zeros_like(p) for p in params],
        "step": 0,
    }


def make_step(lib: Any, d: dict[str, np.ndarray], forward: str, update: str) -> Callable[[], None]:
    """One training step written once for ``tt`` and ``torch``."""
    functional = lib.nn.functional
    as_tensor = (lambda a: lib.from_numpy(a.copy())) if lib is not tt else tt.tensor
    x, y = as_tensor(d["x"]), as_tensor(d["y"])
    params = [as_tensor(a).requires_grad_() for a in _arrays(d, forward)]
    state = _optimizer_state(params, lib.zeros_like)
    apply_update = UPDATES[update]
    linear = functional.linear
    cross_entropy = functional.cross_entropy
    relu = lib.relu

    if forward == "F.linear":

        def logits() -> Any:
            w1, b1, w2, b2 = params
            return linear(relu(linear(x, w1, b1)), w2, b2)
    else:

        def logits() -> Any:
            w1, b1, w2, b2 = params
            return relu(x @ w1 + b1) @ w2 + b2

    def step() -> None:
        cross_entropy(logits(), y).backward()
        with lib.no_grad():
            apply_update(params, state)
        for p in params:
            p.grad = None

    step.params = params  # type: ignore[attr-defined]
    return step


# -- the floor: each spelling written by hand in NumPy ------------------------------------------
# The same step as make_step's, forward, the analytic backward and the update, in the
# fastest NumPy spellings we know (what our kernels use: relu and its backward by the
# ufuncs of Note [Maximum against zeros] and Note [Masking by bits]; ``np.where(h > 0,
# g, 0)`` costs ~90 us on [64, 256] float32, 7x the masking).  No dispatcher adds less to
# NumPy than nothing, so a row whose floor is above PyTorch cannot reach 1.0 over NumPy.
def _np_sgd_sub(params: list[Any], grads: tuple[Any, ...], state: dict[str, Any]) -> None:
    for p, g in zip(params, grads, strict=True):
        p -= LR * g


def _np_sgd_add_alpha(params: list[Any], grads: tuple[Any, ...], state: dict[str, Any]) -> None:
    for p, g in zip(params, grads, strict=True):
        p += g * -LR  # NumPy has no fused axpy: a product, then the sum


def _np_sgd_momentum(params: list[Any], grads: tuple[Any, ...], state: dict[str, Any]) -> None:
    for p, g, buf in zip(params, grads, state["momentum"], strict=True):
        buf *= MOMENTUM
        buf += g
        p += buf * -LR


def _np_adam(params: list[Any], grads: tuple[Any, ...], state: dict[str, Any]) -> None:
    state["step"] += 1
    step = state["step"]
    beta1, beta2 = BETAS
    bias_correction2_sqrt = (1 - beta2**step) ** 0.5
    step_size = LR / (1 - beta1**step)
    for p, g, m, v in zip(params, grads, state["exp_avg"], state["exp_avg_sq"], strict=True):
        m += (g - m) * (1 - beta1)  # lerp_
        v *= beta2
        v += g * g * (1 - beta2)  # addcmul_
        denom = np.sqrt(v)
        denom /= bias_correction2_sqrt
        denom += EPS
        p += m / denom * -step_size  # addcdiv_


NUMPY_UPDATES = {
    "p -= lr * g": _np_sgd_sub,
    "p.add_(g, alpha=-lr)": _np_sgd_add_alpha,
    "SGD momentum": _np_sgd_momentum,
    "Adam": _np_adam,
}


def numpy_step(d: dict[str, np.ndarray], forward: str, update: str) -> Callable[[], None]:
    """``make_step``'s step written by hand in NumPy; ``step.params`` its parameters."""
    from backends.common.linalg import _weight_product
    from backends.common.ternary import zero_mask_fn  # Note [Masking by bits]
    from backends.cpu._blas import gemm

    def linear_by_hand(a: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``a @ w.T + b``, row-major, as our kernels compute it where that is faster
        than NumPy's spelling: turned (Note [Small batches against a row-major
        weight]) or by gemm into the result (Note [Linear by gemm])."""
        out = _weight_product(a, w.T, b, gemm)
        return a @ w.T + b if out is None else out

    x, y = d["x"], d["y"]
    linear = forward == "F.linear"
    params = _arrays(d, forward)
    state = _optimizer_state(params, np.zeros_like)
    apply_update = NUMPY_UPDATES[update]
    n = x.shape[0]
    rows = np.arange(n)
    hidden = params[1].shape[0]
    zeros = np.zeros((n, hidden), x.dtype)  # Note [Maximum against zeros]
    unsigned = np.dtype(f"u{x.dtype.itemsize}")

    def step() -> None:
        w1, b1, w2, b2 = params
        h = linear_by_hand(x, w1, b1) if linear else x @ w1 + b1
        r = np.maximum(h, zeros)
        z = linear_by_hand(r, w2, b2) if linear else r @ w2 + b2
        e = np.exp(z - z.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
        p[rows, y] -= 1
        gz = p / n
        gr = gz @ w2 if linear else gz @ w2.T
        gh = zero_mask_fn(h <= 0, gr, unsigned)  # relu's backward: where(h <= 0, 0, gr)
        if linear:
            grads = (gh.T @ x, gh.sum(0), gz.T @ r, gz.sum(0))
        else:
            grads = (x.T @ gh, gh.sum(0), r.T @ gz, gz.sum(0))
        apply_update(params, grads, state)

    step.params = params  # type: ignore[attr-defined]
    return step


# -- where batch 64 is lost: single calls on the step's first layer --------------------------
# The calls of batch 64's step that cost us more than PyTorch, on the [256, 256] weight:
# Adam's three ternary updates and F.linear's forward.  Each next to its fewest NumPy
# passes written by hand (what our kernels do, without the dispatcher), so the table
# shows what no dispatcher over NumPy can win back: PyTorch makes each update one fused
# loop, NumPy two or three passes, and OpenBLAS's ``x @ W.T`` is slower than MKL's.
def first_layer_calls(lib: Any) -> dict[str, Callable[[], Any]]:
    """name -> a call on the batch-64 step's first layer, written once for ``tt`` and
    ``torch`` (``lib`` None: by hand in NumPy).  ``lerp_`` moves toward two ends in
    turn: toward one end only, the difference would shrink into subnormals."""
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((256, 256), dtype=np.float32) for _ in range(4)]
    x_np = rng.standard_normal((64, 256), dtype=np.float32)
    b_np = rng.standard_normal(256, dtype=np.float32)
    if lib is None:
        from backends.cpu._blas import axpy, gemm  # BLAS saxpy: lerp_'s fused product and sum

        m, g, p, v = arrays
        denom = np.abs(v) + 1
        w = np.float32(0.1)

        def lerp_() -> None:
            axpy(m, g - m, w)
            axpy(m, p - m, w)

        def addcmul_() -> None:
            t = g * 0.001
            t *= g
            np.add(v, t, out=v)

        def addcdiv_() -> None:
            t = m * -0.001
            t /= denom
            np.add(p, t, out=p)

        return {
            "m.lerp_(g, 0.1), two calls": lerp_,
            "v.addcmul_(g, g, value=1e-3)": addcmul_,
            "p.addcdiv_(m, denom, value=-1e-3)": addcdiv_,
            # Note [Linear by gemm]: the bias in gemm's pass, into the row-major result.
            "F.linear(x, w, b), x [64, 256], no grad": lambda: gemm(x_np, p.T, b_np),
        }
    as_tensor = tt.tensor if lib is tt else (lambda a: lib.from_numpy(a.copy()))
    m, g, p, v = (as_tensor(a.copy()) for a in arrays)
    denom = v.abs() + 1
    x, b = as_tensor(x_np), as_tensor(b_np)
    linear = lib.nn.functional.linear
    no_grad = lib.no_grad

    def lerp() -> None:
        with no_grad():
            m.lerp_(g, 0.1)
            m.lerp_(p, 0.1)

    def addcmul() -> None:
        with no_grad():
            v.addcmul_(g, g, value=1e-3)

    def addcdiv() -> None:
        with no_grad():
            p.addcdiv_(m, denom, value=-1e-3)

    def forward() -> None:
        with no_grad():
            linear(x, p, b)

    return {
        "m.lerp_(g, 0.1), two calls": lerp,
        "v.addcmul_(g, g, value=1e-3)": addcmul,
        "p.addcdiv_(m, denom, value=-1e-3)": addcdiv,
        "F.linear(x, w, b), x [64, 256], no grad": forward,
    }


# -- other activations and losses ------------------------------------------------------------
# The step with the activation or the loss users pick instead of relu and cross_entropy
# (a regression's mean squared error written three ways), F.linear and SGD's update; and
# the relu step with a layer norm before the activation, dropout after it, or SGD's weight
# decay (``g.add(p, alpha=wd)`` before the update, as torch.optim.SGD spells it).
ACTIVATIONS = ("relu", "tanh", "sigmoid", "gelu")
LOSSES = ("F.mse_loss", "((out - y) ** 2).mean()", "(out - y).abs().sum()")
VARIANTS = [("gelu", "cross_entropy")] + [(a, "F.mse_loss") for a in ACTIVATIONS[1:]]
VARIANTS += [("relu", loss) for loss in LOSSES]
VARIANTS += [("layer_norm, relu", "cross_entropy"), ("relu, dropout", "cross_entropy")]
VARIANTS += [("relu", "cross_entropy, weight decay")]
VARIANTS += [
    ("relu", "cross_entropy, label_smoothing=0.1"),
    ("relu", "cross_entropy, probabilities"),
]
WEIGHT_DECAY = 1e-4


def variant_step(lib: Any, d: dict[str, np.ndarray], activation: str, loss: str) -> Any:
    """A step of ``make_step``'s F.linear model with another activation or loss."""
    functional = lib.nn.functional
    as_tensor = (lambda a: lib.from_numpy(a.copy())) if lib is not tt else tt.tensor
    x = as_tensor(d["x"])
    classes = d["w2"].shape[1]
    if loss == "cross_entropy, probabilities":  # soft targets (distillation, mixup)
        soft = np.random.default_rng(1).random((len(d["y"]), classes), dtype=np.float32)
        y = as_tensor(soft / soft.sum(1, keepdims=True))
    elif loss.startswith("cross_entropy"):  # class indices
        y = as_tensor(d["y"])
    else:  # a regression target of the output's shape
        y = as_tensor(np.eye(classes, dtype=np.float32)[d["y"]])
    params = [as_tensor(a).requires_grad_() for a in _arrays(d, "F.linear")]
    hidden = d["b1"].shape[0]
    norm = [as_tensor(np.ones(hidden, np.float32)), as_tensor(np.zeros(hidden, np.float32))]
    if activation.startswith("layer_norm"):
        params += [t.requires_grad_() for t in norm]
    act = {
        "relu": lib.relu,
        "tanh": lib.tanh,
        "sigmoid": lib.sigmoid,
        "gelu": functional.gelu,
        "layer_norm, relu": lambda h: lib.relu(functional.layer_norm(h, [hidden], *norm)),
        "relu, dropout": lambda h: functional.dropout(lib.relu(h), 0.1, True),
    }[activation]
    linear = functional.linear
    decay = loss.endswith("weight decay")
    smoothing = 0.1 if loss.endswith("label_smoothing=0.1") else 0.0

    def step() -> None:
        w1, b1, w2, b2 = params[:4]
        out = linear(act(linear(x, w1, b1)), w2, b2)
        if loss.startswith("cross_entropy"):
            value = functional.cross_entropy(out, y, label_smoothing=smoothing)
        elif loss == "F.mse_loss":
            value = functional.mse_loss(out, y)
        elif loss == "((out - y) ** 2).mean()":
            value = ((out - y) ** 2).mean()
        else:
            value = (out - y).abs().sum()
        value.backward()
        with lib.no_grad():
            for p in params:
                g = p.grad.add(p, alpha=WEIGHT_DECAY) if decay else p.grad
                p.add_(g, alpha=-LR)
        for p in params:
            p.grad = None

    return step


# -- single ops' forward and backward ---------------------------------------------------------
# The ops users put into a model besides linear layers and the loss, each as
# ``op(x).sum().backward()`` on a [32, 64] float32 input that requires grad: what a step
# pays for them, forward and backward together.
def layer_ops(lib: Any) -> dict[str, Callable[[], Any]]:
    rng = np.random.default_rng(3)
    as_tensor = (lambda a: lib.from_numpy(a.copy())) if lib is not tt else tt.tensor
    x = as_tensor(rng.standard_normal((32, 64), dtype=np.float32)).requires_grad_()
    table = as_tensor(rng.standard_normal((1000, 64), dtype=np.float32)).requires_grad_()
    tokens = as_tensor(rng.integers(0, 1000, (32, 16)))
    logits = as_tensor(rng.standard_normal((32, 10), dtype=np.float32)).requires_grad_()
    classes = as_tensor(rng.integers(0, 10, 32))
    soft = rng.random((32, 10), dtype=np.float32)
    probabilities = as_tensor(soft / soft.sum(1, keepdims=True))
    images = as_tensor(rng.standard_normal((8, 3, 32, 32), dtype=np.float32))
    maps = as_tensor(rng.standard_normal((8, 16, 16, 16), dtype=np.float32)).requires_grad_()
    kernels = as_tensor(rng.standard_normal((16, 3, 3, 3), dtype=np.float32)).requires_grad_()
    kernels2 = as_tensor(rng.standard_normal((16, 16, 3, 3), dtype=np.float32)).requires_grad_()
    functional = lib.nn.functional

    def run(fn: Callable[[], Any], *leaves: Any) -> Callable[[], None]:
        def call() -> None:
            fn().sum().backward()
            for leaf in leaves:
                leaf.grad = None

        return call

    return {
        "F.embedding(tokens [32, 16], table [1000, 64])": run(
            lambda: functional.embedding(tokens, table), table
        ),
        "x[:, :32]": run(lambda: x[:, :32], x),
        "x[:, 0]": run(lambda: x[:, 0], x),
        "F.softmax(x, 1)": run(lambda: functional.softmax(x, 1), x),
        "F.log_softmax(x, 1)": run(lambda: functional.log_softmax(x, 1), x),
        "F.silu(x)": run(lambda: functional.silu(x), x),
        "F.softplus(x)": run(lambda: functional.softplus(x), x),
        "x.max(1).values": run(lambda: x.max(1).values, x),
        "F.cross_entropy(logits, y, label_smoothing=0.1)": run(
            lambda: functional.cross_entropy(logits, classes, label_smoothing=0.1), logits
        ),
        "F.cross_entropy(logits, probabilities)": run(
            lambda: functional.cross_entropy(logits, probabilities), logits
        ),
        "F.conv2d(images [8, 3, 32, 32], [16, 3, 3, 3], padding=1)": run(
            lambda: functional.conv2d(images, kernels, padding=1), kernels
        ),
        "F.conv2d(maps [8, 16, 16, 16], [16, 16, 3, 3], padding=1)": run(
            lambda: functional.conv2d(maps, kernels2, padding=1), maps, kernels2
        ),
        "F.max_pool2d(maps [8, 16, 16, 16], 2)": run(lambda: functional.max_pool2d(maps, 2), maps),
    }


def check_numpy_steps() -> None:
    """Each hand-written step computes what ours does: parameters after three steps agree
    (a floor that skipped work would not be a floor)."""
    d = mlp_data(8, 6, 5, 3)
    for forward, update in SPELLINGS:
        ours, floor = make_step(tt, d, forward, update), numpy_step(d, forward, update)
        for _ in range(3):
            ours()
            floor()
        for a, b in zip(floor.params, ours.params, strict=True):  # type: ignore[attr-defined]
            np.testing.assert_allclose(a, b.numpy(), rtol=1e-4, atol=1e-6, err_msg=update)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (CI smoke run)")
    parser.add_argument("--only", default="", help="run the rows whose name contains this")
    parser.add_argument(
        "--rounds",
        type=int,
        default=0,
        help="interleaved rounds a row (default 7, 3 with --quick): more rounds narrow the "
        "medians on a noisy host",
    )
    parser.add_argument(
        "--blas-threads",
        default="1",
        help="threads of every BLAS library (read at import, before NumPy; PyTorch keeps one)",
    )
    parser.add_argument(
        "--process-time",
        action="store_true",
        help="time with this process's CPU time instead of the wall clock: on a machine "
        "shared with other work, time spent descheduled is not counted",
    )
    parser.add_argument(
        "--per-call",
        action="store_true",
        help="time single calls and report their 10th percentile instead of the median of "
        "rounds (a host whose speed changes within a round)",
    )
    args = parser.parse_args()
    global TIMER, PER_CALL
    if args.process_time:
        TIMER = time.process_time
    PER_CALL = args.per_call
    number, rounds = (10, 3) if args.quick else (100, 7)
    if args.rounds > 0:
        rounds = args.rounds
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        torch = None
    check_numpy_steps()
    print(f"{'case':<58}{'ours':>10}{'torch':>10}{'ratio':>8}{'rec. ours':>11}{'rec. torch':>11}")
    ours_ops = recorded_ops(tt)
    theirs_ops = recorded_ops(torch) if torch is not None else {}
    for name, (graph, plain) in ours_ops.items():
        if args.only not in name:
            continue
        fns = [graph, plain]
        if torch is not None:
            fns += list(theirs_ops[name])
        t = interleaved(fns, number * 100, rounds)
        row = f"{name:<58}{t[0] * 1e6:>8.2f}us"
        if torch is not None:
            row += f"{t[2] * 1e6:>8.2f}us{t[0] / t[2]:>8.2f}"
        else:
            row += f"{'-':>10}{'-':>8}"
        row += f"{(t[0] - t[1]) * 1e6:>9.2f}us"
        if torch is not None:
            row += f"{(t[2] - t[3]) * 1e6:>9.2f}us"
        print(row)
    print(f"\n{'step':<58}{'ours':>10}{'torch':>10}{'ratio':>8}{'NumPy':>11}{'NumPy/torch':>12}")
    for size, shape in (
        ("64x256->256->10", (64, 256, 256, 10)),
        ("32x64->64->10", (32, 64, 64, 10)),
    ):
        d = mlp_data(*shape)
        for forward, update in SPELLINGS:
            name = f"step {size}: {forward}, {update}"
            if args.only not in name:
                continue
            missing = [m for m in NEEDS.get(update, ()) if not hasattr(tt.Tensor, m)]
            if missing:  # a spelling we cannot run yet is reported, not skipped silently
                print(f"{name:<58}  not run: needs Tensor.{', Tensor.'.join(missing)}")
                continue
            fns = [make_step(tt, d, forward, update), numpy_step(d, forward, update)]
            if torch is not None:
                fns.append(make_step(torch, d, forward, update))
            t = interleaved(fns, number, rounds)
            row = f"{name:<58}{t[0] * 1e6:>8.0f}us"
            if torch is not None:
                row += f"{t[2] * 1e6:>8.0f}us{t[0] / t[2]:>8.2f}"
                row += f"{t[1] * 1e6:>9.0f}us{t[1] / t[2]:>12.2f}"
            else:
                row += f"{'-':>10}{'-':>8}{t[1] * 1e6:>9.0f}us{'-':>12}"
            print(row)
    print(
        f"\n{'other activations and losses, F.linear, add_':<58}{'ours':>10}{'torch':>10}{'ratio':>8}"
    )
    for size, shape in (
        ("64x256->256->10", (64, 256, 256, 10)),
        ("32x64->64->10", (32, 64, 64, 10)),
    ):
        d = mlp_data(*shape)
        for activation, loss in VARIANTS:
            name = f"step {size}: {activation}, {loss}"
            if args.only not in name:
                continue
            fns = [variant_step(tt, d, activation, loss)]
            if torch is not None:
                fns.append(variant_step(torch, d, activation, loss))
            t = interleaved(fns, number, rounds)
            row = f"{name:<58}{t[0] * 1e6:>8.0f}us"
            row += f"{t[1] * 1e6:>8.0f}us{t[0] / t[1]:>8.2f}" if torch is not None else ""
            print(row)
    print(
        f"\n{'first layer of batch 64, [256, 256]':<58}{'ours':>10}{'torch':>10}{'ratio':>8}"
        f"{'NumPy':>11}{'NumPy/torch':>12}"
    )
    ours_calls, numpy_calls = first_layer_calls(tt), first_layer_calls(None)
    theirs_calls = first_layer_calls(torch) if torch is not None else {}
    for name, fn in ours_calls.items():
        if args.only not in name:
            continue
        fns = [fn, numpy_calls[name]]
        if torch is not None:
            fns.append(theirs_calls[name])
        t = interleaved(fns, number * 2, rounds)
        row = f"{name:<58}{t[0] * 1e6:>8.1f}us"
        if torch is not None:
            row += (
                f"{t[2] * 1e6:>8.1f}us{t[0] / t[2]:>8.2f}{t[1] * 1e6:>9.1f}us{t[1] / t[2]:>12.2f}"
            )
        else:
            row += f"{'-':>10}{'-':>8}{t[1] * 1e6:>9.1f}us{'-':>12}"
        print(row)
    print(
        f"\n{'one op, forward and backward ([32, 64] unless named)':<58}{'ours':>10}{'torch':>10}"
        f"{'ratio':>8}"
    )
    ours_ops = layer_ops(tt)
    theirs_ops = layer_ops(torch) if torch is not None else {}
    for name, fn in ours_ops.items():
        if args.only not in name:
            continue
        fns = [fn] + ([theirs_ops[name]] if torch is not None else [])
        t = interleaved(fns, number * 2, rounds)
        row = f"{name:<58}{t[0] * 1e6:>8.1f}us"
        row += f"{t[1] * 1e6:>8.1f}us{t[0] / t[1]:>8.2f}" if torch is not None else ""
        print(row)
    print(
        "\nsteps: ours, PyTorch's, their ratio, the spelling by hand in NumPy, its ratio to"
        " PyTorch's (the floor: no dispatcher over NumPy gets below it)"
        "\nfirst layer: single calls that cost batch 64's steps more than PyTorch's, by hand in"
        " NumPy in the fewest passes (one fused loop each in PyTorch)"
        "\ntargets: recorded ops <= 1.00x PyTorch and recording <= 1.0 us per op;"
        " training steps <= 1.00x PyTorch eager in every spelling"
    )


if __name__ == "__main__":
    main()

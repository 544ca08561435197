"""A short tour of arraydispatch: run it with ``python examples/tour.py``.

1. Operators on CPU tensors (NumPy underneath), as in PyTorch.
2. A new operator with a user kernel registered with ``impl(..., "cpu")``.
3. Its dispatch table (``dump_table``) and how one call dispatches (``explain``).
4. Shape and dtype computation on "meta" tensors, which have no data.
5. The same on CUDA when a GPU is present (one line saying it was skipped when not).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runs from a checkout, too

import numpy as np  # noqa: E402

import backends.cuda  # noqa: E402
import tensor as tt  # noqa: E402
from dispatch import Library, dump_table, explain, impl, ops  # noqa: E402


def section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 66 - len(title)))


def cpu_ops() -> None:
    section("1. operators on CPU tensors")
    x = tt.tensor([[1.0, 2.0], [3.0, 4.0]])
    print("x =", x)
    print("tt.sin(x) @ x + 1 =", tt.sin(x) @ x + 1)
    print("x.sum(dim=1) =", x.sum(dim=1), "  x.mean() =", x.mean())
    r = x.max(dim=0)
    print("x.max(dim=0) ->", "values", r.values, "indices", r.indices)
    i = tt.tensor([1, 2, 3])
    print("int / int ->", i / 2, "  int // int ->", i // 2, "  int8 + 1000 ->",
          tt.tensor([1], dtype=tt.int8) + 1000)  # fmt: skip
    tt.manual_seed(0)
    print("seeded tt.randn(3) =", tt.randn(3))
    try:
        tt.tensor([True]) - tt.tensor([False])
    except RuntimeError as e:
        print("bool - bool raises, as in PyTorch:", str(e).splitlines()[0])


# A new operator: one DEF library for the namespace, kernels per device type.
LIB = Library("tour", "DEF")
LIB.define("scaled_residual(Tensor x, Tensor y, float alpha=0.5) -> Tensor")


@impl("tour::scaled_residual", "cpu")
def scaled_residual_cpu(x: tt.Tensor, y: tt.Tensor, alpha: float = 0.5) -> tt.Tensor:
    """CPU kernel: plain NumPy on the tensors' arrays."""
    out = x.numpy() + alpha * np.tanh(y.numpy())
    return tt.from_numpy(out.astype(x.numpy().dtype))


@impl("tour::scaled_residual", "meta")
def scaled_residual_meta(x: tt.Tensor, y: tt.Tensor, alpha: float = 0.5) -> tt.Tensor:
    """Meta kernel: the result's shape and dtype only (shape rules via a meta add)."""
    return x + y


def user_kernel() -> None:
    section("2. a user operator with a CPU kernel")
    x, y = tt.tensor([1.0, 2.0]), tt.tensor([0.0, 10.0])
    print("ops.tour.scaled_residual(x, y) =", ops.tour.scaled_residual(x, y))
    print("alpha=2.0                    =", ops.tour.scaled_residual(x, y, alpha=2.0))

    section("3. its dispatch table, and how a call dispatches")
    print(dump_table("tour::scaled_residual"))
    print()
    print(explain(ops.tour.scaled_residual.default, x, y))


def meta_shapes() -> None:
    section("4. shapes on 'meta' tensors (no data is allocated or computed)")
    batch = tt.zeros(4096, 784, device="meta")
    w1, w2 = tt.zeros(784, 1024, device="meta"), tt.zeros(1024, 10, device="meta")
    hidden = tt.relu(batch @ w1)
    logits = hidden @ w2
    print("batch @ w1 ->", tuple(hidden.shape), " logits ->", tuple(logits.shape), logits.dtype)
    print("logits.logsumexp(1) ->", logits.logsumexp(1))
    print("argmax(1) ->", logits.argmax(1))
    print("user op on meta ->", ops.tour.scaled_residual(batch, batch))
    try:
        batch @ tt.zeros(10, 10, device="meta")
    except RuntimeError as e:
        print("bad shapes are caught without data:", str(e).splitlines()[0])


def on_cuda() -> None:
    section("5. CUDA")
    if not backends.cuda.is_available():
        print(f"CUDA: skipped ({backends.cuda.unavailable_reason()}).")
        return
    x = tt.tensor([[1.0, 2.0], [3.0, 4.0]], device="cuda")
    print("x on", x.device, "->", (tt.sin(x) @ x + 1).cpu())
    w = tt.randn(2, 2, device="cuda", requires_grad=True)
    loss = (x @ w).relu().sum()
    loss.backward()
    print("a gradient computed on", w.grad.device, "of shape", tuple(w.grad.shape))
    s = tt.cuda.Stream()
    with tt.cuda.stream(s):
        y = (x.half() @ x.half()).float()
    s.synchronize()
    print("float16 matmul on a side stream:", y.cpu().tolist())
    with tt.autocast("cuda"):
        print("under autocast('cuda') mm gives", tt.mm(x, x).dtype)


def main() -> None:
    cpu_ops()
    user_kernel()
    meta_shapes()
    on_cuda()


if __name__ == "__main__":
    main()

"""The floor of this design in pure Python: a training step through the smallest
dispatcher that has its parts, side by side with ours and PyTorch's, in one process.

    python ci/bench/floor.py [--quick]

The prototype below has what the project's call path has in kind and nothing else: a
tensor with an int key set, one kernel table per operator indexed by the highest key,
a grad-only Autograd kernel that records a node and calls the kernel below itself, a
dependency-counting engine, and AccumulateGrad.  It has none of what the project adds
per call: schema validation, version counters, views, hooks, modes, thread safety,
dtype promotion, error messages.  Its time is what a pure-Python dispatcher of this
design costs at least; the gap between it and ours is what those features and our
layering cost (issue #19: "build the smallest prototype of the floor and measure it").
The step is ci/bench/autograd.py's first spelling (``x @ w + b``, ``p -= lr * g``).
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import os
import statistics
import sys
import time
import timeit
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

from backends.common.ternary import zero_mask_fn  # noqa: E402  (Note [Masking by bits])

_UNSIGNED = {np.dtype(np.float32): np.dtype(np.uint32), np.dtype(np.float64): np.dtype(np.uint64)}

CPU, AUTOGRAD = 1, 2  # key bits: the highest set bit picks the kernel
GRAD_ENABLED = [True]
_seq = itertools.count()


class T:
    """A tensor: an array, key bits, and the autograd fields."""

    __slots__ = ("a", "bits", "grad", "grad_fn", "acc")

    def __init__(self, a: np.ndarray, requires_grad: bool = False) -> None:
        self.a, self.bits = a, CPU | (AUTOGRAD if requires_grad else 0)
        self.grad = self.grad_fn = self.acc = None

    def __matmul__(self, o: T) -> T:
        return call(MM, self, o)

    def __add__(self, o: T) -> T:
        return call(ADD, self, o)

    def __rmul__(self, k: float) -> T:
        return call(MULS, self, k)

    def __isub__(self, o: T) -> T:
        self.a -= o.a  # under no_grad only (the update)
        return self


def call(op: list[Any], a: Any, b: Any = None) -> Any:
    bits = a.bits | (b.bits if type(b) is T else 0)
    if not GRAD_ENABLED[0]:
        bits &= CPU
    return op[bits.bit_length()](a, b)


class Node:
    __slots__ = ("fn", "saved", "edges", "seq")


class Acc:
    __slots__ = ("var", "seq", "edges")


def edge(t: Any) -> Any:
    if type(t) is not T or not t.bits & AUTOGRAD:
        return None
    if t.grad_fn is not None:
        return t.grad_fn
    acc = t.acc
    if acc is None:
        acc = t.acc = Acc()
        acc.var, acc.seq, acc.edges = t, next(_seq), ()
    return acc


def autograd(kernel: Any, formula: Any) -> Any:
    def record(a: Any, b: Any) -> T:
        out = kernel(a, b)
        node = Node()
        node.fn, node.saved, node.edges, node.seq = (
            formula,
            (a, b, out),
            (edge(a), edge(b)),
            next(_seq),
        )
        out.grad_fn, out.bits = node, out.bits | AUTOGRAD
        return out

    return record


_ZEROS: dict[tuple[Any, ...], np.ndarray] = {}


def _zeros(a: np.ndarray) -> np.ndarray:
    """Zeros of ``a``'s shape and dtype, kept: relu's maximum against an array rather than
    a scalar, NumPy's fastest spelling (Note [Maximum against zeros])."""
    key = (a.shape, a.dtype)
    z = _ZEROS.get(key)
    if z is None:
        z = _ZEROS[key] = np.zeros(a.shape, a.dtype)
    return z


def table(kernel: Any, formula: Any) -> list[Any]:
    return [None, kernel, autograd(kernel, formula)]


def sum_to(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return g.sum(0) if g.shape != shape else g


# Formulas get the node's edges: a product computes only the gradients that flow
# somewhere (``x @ w1``'s input gradient is a [64, 256] x [256, 256] product nobody reads).
MM = table(
    lambda a, b: T(a.a @ b.a),
    lambda g, a, b, out, edges: (
        None if edges[0] is None else g @ b.a.T,
        None if edges[1] is None else a.a.T @ g,
    ),
)
ADD = table(
    lambda a, b: T(a.a + b.a),
    lambda g, a, b, out, edges: (sum_to(g, a.a.shape), sum_to(g, b.a.shape)),
)
MULS = table(lambda a, k: T(a.a * k), None)
RELU = table(
    lambda a, _: T(np.maximum(a.a, _zeros(a.a))),
    lambda g, a, _, out, edges: (zero_mask_fn(out.a <= 0, g, _UNSIGNED[g.dtype]), None),
)


def _ce(x: T, y: T) -> T:
    z = x.a - x.a.max(1, keepdims=True)
    e = np.exp(z)
    s = e.sum(1, keepdims=True)
    rows = np.arange(z.shape[0])
    return T(np.asarray((np.log(s[:, 0]) - z[rows, y.a]).mean(), dtype=z.dtype))


def _ce_grad(g: np.ndarray, x: T, y: T, out: T, edges: Any) -> tuple[Any, None]:
    e = np.exp(x.a - x.a.max(1, keepdims=True))
    p = e / e.sum(1, keepdims=True)
    p[np.arange(p.shape[0]), y.a] -= 1
    return p * (g / p.shape[0]), None


CE = table(_ce, _ce_grad)


def backward(loss: T) -> None:
    root = loss.grad_fn
    deps: dict[Any, int] = {root: 0}
    stack = [root]
    while stack:
        n = stack.pop()
        for nxt in n.edges:
            if nxt is not None:
                if nxt in deps:
                    deps[nxt] += 1
                else:
                    deps[nxt] = 1
                    stack.append(nxt)
    buffers: dict[Any, Any] = {root: np.ones((), loss.a.dtype)}
    ready = [(-root.seq, root)]
    GRAD_ENABLED[0] = False
    try:
        while ready:
            node = heapq.heappop(ready)[1]
            g = buffers.pop(node)
            if type(node) is Acc:
                var = node.var
                var.grad = T(g) if var.grad is None else T(var.grad.a + g)
                continue
            a, b, out = node.saved
            grads = node.fn(g, a, b, out, node.edges)
            node.saved = None
            for nxt, gi in zip(node.edges, grads, strict=True):
                if nxt is None:
                    continue
                if gi is not None:
                    buffers[nxt] = buffers[nxt] + gi if nxt in buffers else gi
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    heapq.heappush(ready, (-nxt.seq, nxt))
    finally:
        GRAD_ENABLED[0] = True


def floor_step(d: dict[str, np.ndarray], params: list[T] | None = None) -> Any:
    x, y = T(d["x"]), T(d["y"])
    if params is None:
        params = [T(d[k].copy(), requires_grad=True) for k in ("w1", "b1", "w2", "b2")]

    def step() -> None:
        w1, b1, w2, b2 = params
        h = call(RELU, x @ w1 + b1)
        loss = call(CE, h @ w2 + b2, y)
        backward(loss)
        GRAD_ENABLED[0] = False
        for p in params:
            p -= 0.01 * p.grad
        GRAD_ENABLED[0] = True
        for p in params:
            p.grad = None
            p.acc = None  # PyTorch's accumulator dies with its graph too

    return step


def check_same_step(bench: Any, tt: Any) -> None:
    """The prototype's step computes what ours does: parameters after three steps agree."""
    d = bench.mlp_data(8, 6, 5, 3)
    params = [T(d[k].copy(), requires_grad=True) for k in ("w1", "b1", "w2", "b2")]
    step = floor_step(d, params)
    x, y = tt.tensor(d["x"]), tt.tensor(d["y"])
    ours = [tt.tensor(d[k].copy()).requires_grad_() for k in ("w1", "b1", "w2", "b2")]
    for _ in range(3):
        step()
        w1, b1, w2, b2 = ours
        tt.nn.functional.cross_entropy(tt.relu(x @ w1 + b1) @ w2 + b2, y).backward()
        with tt.no_grad():
            for p in ours:
                p -= 0.01 * p.grad
                p.grad = None
    for a, b in zip(params, ours, strict=True):
        np.testing.assert_allclose(a.a, b.numpy(), rtol=1e-5, atol=1e-6)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    import tensor as tt
    from ci.bench import autograd as bench  # the same data, our step and PyTorch's

    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        torch = None
    number, rounds = (10, 3) if args.quick else (100, 7)
    print(f"{'step (x @ w + b, p -= lr * g)':<34}{'floor':>9}{'ours':>9}{'torch':>9}"
          f"{'floor/torch':>13}{'ours/floor':>12}")  # fmt: skip
    check_same_step(bench, tt)
    for size, shape in (
        ("64x256->256->10", (64, 256, 256, 10)),
        ("32x64->64->10", (32, 64, 64, 10)),
    ):
        d = bench.mlp_data(*shape)
        fns = [floor_step(d), bench.make_step(tt, d, "x @ w + b", "p -= lr * g")]
        if torch is not None:
            fns.append(bench.make_step(torch, d, "x @ w + b", "p -= lr * g"))
        times = [[] for _ in fns]
        for _ in range(rounds):
            for i, fn in enumerate(fns):
                times[i].append(timeit.Timer(fn, timer=time.process_time).timeit(number) / number)
        t = [statistics.median(x) * 1e6 for x in times]
        row = f"{size:<34}{t[0]:>7.0f}us{t[1]:>7.0f}us"
        row += f"{t[2]:>7.0f}us{t[0] / t[2]:>13.2f}" if torch is not None else f"{'-':>9}{'-':>13}"
        print(row + f"{t[1] / t[0]:>12.2f}")
    recorded_op_floor(tt, torch, number * 500, rounds)


def recorded_op_floor(tt: Any, torch: Any, number: int, rounds: int) -> None:
    """``a + b`` on 16 float32 elements, plain and with ``a`` requiring grad, through the
    prototype, ours and PyTorch's, and what recording adds to each (ci/bench/autograd.py's
    "rec." columns): the prototype's node is four fields and two edges, with none of the
    checks ours makes on the way (grad mode, keywords, views and their versions, the
    result's dtype, a tensor output)."""
    ones = np.ones(16, np.float32)
    a, ag, b = T(ones.copy()), T(ones.copy(), requires_grad=True), T(ones.copy())
    oa, oag, ob = tt.ones(16), tt.ones(16, requires_grad=True), tt.ones(16)
    fns = [lambda: a + b, lambda: ag + b, lambda: oa + ob, lambda: oag + ob]
    if torch is not None:
        ta, tag, tb = torch.ones(16), torch.ones(16, requires_grad=True), torch.ones(16)
        fns += [lambda: ta + tb, lambda: tag + tb]
    times = [[] for _ in fns]
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            times[i].append(timeit.timeit(fn, number=number) / number)
    t = [min(x) * 1e6 for x in times]  # the fastest round: tiny calls, a noisy host
    print(
        f"\n{'a + b, 16 float32 (fastest round)':<34}{'plain':>9}{'recorded':>10}{'recording':>11}"
    )
    names = ["prototype", "ours", "torch"]
    for k in range(len(fns) // 2):
        plain, recorded = t[2 * k], t[2 * k + 1]
        print(f"{names[k]:<34}{plain:>7.2f}us{recorded:>8.2f}us{recorded - plain:>9.2f}us")


if __name__ == "__main__":
    main()

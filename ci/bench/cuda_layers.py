"""Where a tiny CUDA op spends its host time, layer by layer, beside CuPy's own call.

    python ci/bench/cuda_layers.py [--quick]

For ``a + b`` on one float32 element: CuPy's allocation, a raw launch of our add
kernel, CuPy's ``cp.add``, our launcher (``backends.cuda.elementwise.binary``), the
operator called directly (``ops.core.add.Tensor``) and ``a + b`` on tensors; the same
for ``sin`` and ``sum`` end to end.  Best of several repeats, the queue drained after
each; microseconds, to read the gaps between layers (``ci/bench/cuda.py`` holds the
ratio targets).  Without a GPU the script says so and exits 0.
"""

from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)  # see ci/bench/cuda.py: keep `cuda` importable
sys.path[:] = [p for p in sys.path if str(Path(p or ".").resolve()) != _HERE]
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

import backends.cuda  # noqa: E402
import tensor as tt  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer calls (smoke run)")
    quick = parser.parse_args().quick
    if not backends.cuda.is_available():
        print(
            f"ci/bench/cuda_layers.py: skipped: no CUDA device ({backends.cuda.unavailable_reason()})"
        )
        return
    import cupy as cp

    from backends.cuda import _compile, _tables
    from backends.cuda import elementwise as cew
    from dispatch import ops

    a = tt.ones(1, device="cuda")
    x = a.array
    sync = cp.cuda.Device().synchronize
    add_row = tt.op_info("add")
    launcher = cew.binary(add_row, _tables.BINARY["add"], cp.add)
    contig = _tables.binary_expressions(_tables.BINARY["add"], "float32", "float32")["contig"]
    kernel = _compile.function("elementwise.cu", contig)
    out = cp.empty((1,), np.float32)
    args = (x, x, out, np.int64(1), np.float64(0), np.float64(0), np.float64(0))
    add = ops.core.add.Tensor
    number, repeat = (2000, 3) if quick else (20000, 5)

    def best(fn: object) -> float:
        t = float("inf")
        for _ in range(repeat):
            sync()
            t = min(t, timeit.timeit(fn, number=number) / number)  # type: ignore[arg-type]
            sync()
        return t * 1e6

    rows = [
        ("cp.empty((1,), float32)", lambda: cp.empty((1,), np.float32)),
        ("raw launch of our add kernel", lambda: kernel((1,), (256,), args)),
        ("cp.add(x, x) (CuPy's whole call)", lambda: cp.add(x, x)),
        ("our launcher: binary(add)(x, x)", lambda: launcher(x, x)),
        ("ops.core.add.Tensor(a, a)", lambda: add(a, a)),
        ("a + a", lambda: a + a),
        ("cp.sin(x)", lambda: cp.sin(x)),
        ("tt.sin(a)", lambda: tt.sin(a)),
        ("x.sum()", lambda: x.sum()),
        ("a.sum()", lambda: a.sum()),
    ]
    for _, fn in rows:
        fn()  # compile and warm up
    print(f"{'layer':36s} {'us':>7s}")
    for name, fn in rows:
        print(f"{name:36s} {best(fn):7.2f}")


if __name__ == "__main__":
    main()

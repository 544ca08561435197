"""Run table cases (see ``table_cases.py``) on PyTorch 2.13; imported only where torch is."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from typing import Any

import torch

try:
    from . import table_cases
except ImportError:  # run as a script from this folder
    import table_cases  # type: ignore[no-redef]

_counter = itertools.count()


class TorchRunner(table_cases.Runner):
    def __init__(self) -> None:
        self.cpu = torch.ones(1)
        self.meta = torch.ones(1, device="meta")

    @contextlib.contextmanager
    def library(self, case: list[str], log: list[str]) -> Iterator[Any]:
        ns = f"adcase{next(_counter)}"
        libs = [torch.library.Library(ns, "DEF")]
        libs[0].define("f(Tensor x) -> Tensor")
        op = getattr(torch.ops, ns).f.default
        after_autograd = torch._C._after_autograd_keyset

        def below(ks: Any, x: Any) -> Any:
            return op.redispatch(ks & after_autograd, x)

        try:
            for _atom, key, fn, with_keyset, is_fallback in table_cases._kernels(case, log, below):
                if is_fallback:
                    fb = torch.library.Library("_", "IMPL")
                    libs.append(fb)
                    fb.fallback(fn, key)
                    continue
                if fn is None:
                    fn = torch.library.fallthrough_kernel
                libs[0].impl("f", fn, key, with_keyset=with_keyset)
            yield op
        finally:
            for lib in reversed(libs):
                lib._destroy()

    def probe(self, op: Any, probe: str) -> None:
        K, KS = torch._C.DispatchKey, torch._C.DispatchKeySet
        if probe == "call_cpu":
            op(self.cpu)
        elif probe == "call_meta":
            op(self.meta)
        elif probe == "call_cpu_no_autograd":
            with torch._C._ExcludeDispatchKeyGuard(KS(K.AutogradCPU)):
                op(self.cpu)
        elif probe == "redispatch_empty":
            op.redispatch(KS(K.CPU) - KS(K.CPU), self.cpu)
        else:
            key = probe.removeprefix("redispatch_")
            op.redispatch(KS(getattr(K, key)), self.cpu)

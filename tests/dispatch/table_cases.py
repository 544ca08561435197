"""Table-resolution cases, run against arraydispatch and (when installed) PyTorch 2.13.

A case is a set of registrations for one fresh operator ``f(Tensor x) -> Tensor``;
each registered kernel appends its name to a log.  Layer kernels (at AutogradCPU
and the Autograd alias) are with_keyset kernels that redispatch below autograd,
as real autograd kernels do.  Every probe (a call or a redispatch) yields the
list of kernels that ran, or the type of the error raised.

``python tests/dispatch/table_cases.py`` (with torch 2.13 installed) rewrites
``data/table_cases.json``, the recorded PyTorch outcomes the tests compare with.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

DATA = Path(__file__).with_name("data") / "table_cases.json"

# name -> (key, is_fallthrough).  Order matters for PyTorch only: Meta before CIA
# (torch.library refuses a Meta kernel once a CIA one exists) and CEA before CIA
# (torch leaves a stale autograd slot otherwise; SEMANTICS.md §4).
ATOMS: dict[str, tuple[str, bool]] = {
    "Meta": ("Meta", False),
    "CPU": ("CPU", False),
    "CUDA": ("CUDA", False),
    "CPU=ft": ("CPU", True),
    "CEA": ("CompositeExplicitAutograd", False),
    "CEA=ft": ("CompositeExplicitAutograd", True),
    "CEANF": ("CompositeExplicitAutogradNonFunctional", False),
    "AutogradCPU": ("AutogradCPU", False),
    "AutogradCPU=ft": ("AutogradCPU", True),
    "Autograd": ("Autograd", False),
    "CIA": ("CompositeImplicitAutograd", False),
    "CIA=ft": ("CompositeImplicitAutograd", True),
    "fallback:CPU": ("CPU", False),  # a backend fallback, for every operator
}
LAYER_KEYS = {"AutogradCPU", "Autograd"}
PROBES = (
    "call_cpu",
    "call_meta",
    "call_cpu_no_autograd",
    "redispatch_CPU",
    "redispatch_CUDA",
    "redispatch_Meta",
    "redispatch_AutogradCPU",
    "redispatch_AutogradCUDA",
    "redispatch_empty",
)


def generate_cases() -> list[list[str]]:
    names = list(ATOMS)

    def ok(combo: tuple[str, ...]) -> bool:
        keys = [ATOMS[n][0] for n in combo if not n.startswith("fallback:")]
        return len(keys) == len(set(keys))

    cases = [list(c) for r in range(4) for c in itertools.combinations(names, r) if ok(c)]
    rng = random.Random(2013)
    seen = {tuple(c) for c in cases}
    target = len(cases) + 80
    while len(cases) < target:
        combo = tuple(n for n in names if rng.random() < 0.45)
        if ok(combo) and combo not in seen:
            seen.add(combo)
            cases.append(list(combo))
    return cases


def case_id(case: list[str]) -> str:
    return "+".join(case) or "nothing"


class Runner:
    """What each dispatcher provides to run a case; see the two subclasses."""

    def run(self, case: list[str]) -> dict[str, Any]:
        log: list[str] = []
        with self.library(case, log) as op:
            results = {}
            for probe in PROBES:
                log.clear()
                try:
                    self.probe(op, probe)
                except Exception as e:  # the outcome is the error's type
                    results[probe] = f"error:{type(e).__name__}"
                else:
                    results[probe] = list(log)
            return results

    def library(self, case: list[str], log: list[str]) -> Any:
        raise NotImplementedError

    def probe(self, op: Any, probe: str) -> None:
        raise NotImplementedError


def _kernels(
    case: list[str], log: list[str], redispatch_below: Callable[..., Any]
) -> Iterator[tuple[str, str, Callable[..., Any], bool, bool]]:
    """(atom, key, fn, with_keyset, is_fallback) for each registration of a case."""
    for atom in case:
        key, is_ft = ATOMS[atom]
        if atom.startswith("fallback:"):

            def fallback(op: Any, x: Any, _name: str = atom) -> Any:
                log.append(_name)
                return x

            yield atom, key, fallback, False, True
        elif is_ft:
            yield atom, key, None, False, False  # the runner substitutes its fallthrough
        elif atom in LAYER_KEYS:

            def layer(ks: Any, x: Any, _name: str = atom) -> Any:
                log.append(_name)
                return redispatch_below(ks, x)

            yield atom, key, layer, True, False
        else:

            def plain(x: Any, _name: str = atom) -> Any:
                log.append(_name)
                return x

            yield atom, key, plain, False, False


if __name__ == "__main__":
    import torch_runner  # type: ignore[import-not-found]

    runner = torch_runner.TorchRunner()
    cases = generate_cases()
    recorded = {case_id(c): runner.run(c) for c in cases}
    DATA.parent.mkdir(exist_ok=True)
    DATA.write_text(json.dumps(recorded, indent=0, sort_keys=True) + "\n")
    print(f"recorded {len(recorded)} cases from torch into {DATA}")

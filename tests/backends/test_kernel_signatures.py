"""Every backend kernel takes its schema's defaults: the generated ``tt.<name>`` functions
and methods call an operator with only its tensor when every other argument is at its
default (``x.sum()`` passes ``(x,)``), as PyTorch's dispatch drops trailing defaults.
CUDA's kernels are checked in test_cuda_kernels.py (building them needs CuPy)."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import pytest

from dispatch import ops
from tensor._frontend import FRONT

FAMILIES = ["elementwise", "reduction", "shape", "nn", "linalg"]


def check_defaults(kernels: dict[str, Any]) -> None:
    bad = []
    for qualname, kernel in kernels.items():
        name, _, overload = qualname.partition(".")
        op = getattr(getattr(ops.core, name), overload or "default")
        required = [a for a in op.schema.arguments if not a.has_default]
        positional = [a for a in required if not a.kwarg_only]
        keywords = {a.name: 0 for a in required if a.kwarg_only}
        try:
            inspect.signature(kernel).bind(*range(len(positional)), **keywords)
        except TypeError as e:
            bad.append(f"{qualname}: {e}")
        except ValueError:  # no signature (a builtin): nothing to check
            continue
    assert not bad, "kernels that need arguments the schema defaults:\n" + "\n".join(bad)


@pytest.mark.parametrize("backend", ["cpu", "meta"])
@pytest.mark.parametrize("family", FAMILIES)
def test_kernels_take_omitted_defaults(backend: str, family: str) -> None:
    module = importlib.import_module(f"backends.{backend}.{family}")
    if not hasattr(module, "kernels"):
        pytest.skip(f"backends.{backend}.{family} registers no kernel table")
    check_defaults(module.kernels(FRONT))


def test_every_registered_core_kernel_takes_omitted_defaults() -> None:
    """The same for whatever is registered now at any key (composites, autograd, autocast,
    ADInplaceOrView...): what a call with the defaults left out reaches."""
    from dispatch._operator import OPERATORS

    bad = []
    for qualname, op in OPERATORS.items():
        if not qualname.startswith("core::") or not op.is_defined:
            continue
        required = [a for a in op.schema.arguments if not a.has_default]
        positional = [a for a in required if not a.kwarg_only]
        keywords = {a.name: 0 for a in required if a.kwarg_only}
        for key, stack in op._kernels.items():
            for k in stack:
                if k.is_fallthrough:
                    continue
                try:
                    sig = inspect.signature(k.fn)
                except (TypeError, ValueError):
                    continue
                try:
                    sig.bind(*range(len(positional) + k.with_keyset), **keywords)
                except TypeError as e:
                    bad.append(f"{qualname} at {key.name}: {e}")
    assert not bad, "kernels that need arguments the schema defaults:\n" + "\n".join(bad)

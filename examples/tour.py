"""A short tour of arraydispatch (the README's main job).

Registers an operator with a CPU kernel and an autograd-style layer, calls it,
and prints its dispatch table and an explanation of a call.
"""

from __future__ import annotations

import dispatch
from dispatch import DispatchKey, DispatchKeySet, Library, explain, impl, ops


class Box:
    """Any object with ``_dispatch_bits`` is a tensor to the dispatcher."""

    _dispatch_bits = DispatchKeySet(
        [DispatchKey.CPU, DispatchKey.AutogradCPU, DispatchKey.ADInplaceOrView]
    ).bits

    def __init__(self, value: float) -> None:
        self.value = value


lib = Library("tour", "DEF")
lib.define("double(Tensor x) -> Tensor")


@impl("tour::double", "cpu")
def double_cpu(x: Box) -> Box:
    return Box(2 * x.value)


print("tour::double(Box(21)) =", ops.tour.double(Box(21)).value)
print(dispatch.dump_table("tour::double"))
print(explain(ops.tour.double, Box(1)))

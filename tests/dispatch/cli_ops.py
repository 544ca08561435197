"""An operator for the ``python -m dispatch`` test to import."""

from typing import Any

from dispatch import Library

lib = Library("cli", "DEF")
lib.define("f(Tensor x) -> Tensor")


def f_cpu(x: Any) -> Any:
    return x


lib.impl("f", f_cpu, "CPU")

"""Registration under concurrent calls: a call sees the old table or the new one."""

from __future__ import annotations

import threading
from typing import Any

from dispatch import Library, ops

from .test_tables import CPU_BITS, FakeTensor


def test_calls_see_old_or_new_kernel_while_another_thread_registers() -> None:
    with Library("conc", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: "old", "CPU")
        op = ops.conc.f.default
        x = FakeTensor(CPU_BITS)
        stop = threading.Event()
        seen: set[Any] = set()
        errors: list[BaseException] = []

        def caller() -> None:
            try:
                while not stop.is_set():
                    seen.add(op(x))
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=caller) for _ in range(4)]
        for t in threads:
            t.start()
        try:
            for i in range(300):
                override = Library("conc", "IMPL")
                override.impl("f", lambda x: "new", "CPU", allow_override=True)
                if i % 2:
                    # Also flip the autograd layer so the mask changes with the kernels.
                    override.impl("f", lambda x: "autograd", "AutogradCPU")
                override.destroy()
        finally:
            stop.set()
            for t in threads:
                t.join()
        assert not errors, errors[:1]
        assert seen <= {"old", "new", "autograd"}
        assert "old" in seen
        assert op(x) == "old"

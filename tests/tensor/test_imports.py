"""Import boundaries: importing ``tensor`` or a backend first both work, CuPy stays unloaded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import array_api_compat.numpy
import numpy as np
import pytest

from backends.common.elementwise import namespace_of

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_import_tensor_leaves_cupy_unloaded() -> None:
    out = _run("import sys, tensor; print('cupy' in sys.modules, 'torch' in sys.modules)")
    assert out == "False False"


def test_import_tensor_leaves_the_array_namespace_unloaded_until_a_kernel_uses_it() -> None:
    """Note [Lazy array namespace]: array_api_compat.numpy (and the NumPy submodules it
    pulls in) load on the first kernel call that reads ``xp``, not at import."""
    code = (
        "import sys, tensor as tt\n"
        "heavy = ('array_api_compat.numpy', 'numpy.f2py', 'numpy.testing', 'numpy.ma')\n"
        "print([m for m in heavy if m in sys.modules])\n"
        "print(tt.sort(tt.tensor([3.0, 1.0, 2.0]), descending=True).values.tolist())\n"
        "print('array_api_compat.numpy' in sys.modules)\n"
    )
    assert _run(code).splitlines() == ["[]", "[3.0, 2.0, 1.0]", "True"]


def test_the_lazy_namespace_is_the_array_api_compat_namespace() -> None:
    xp = namespace_of(np.ndarray)
    assert xp.argsort is array_api_compat.numpy.argsort  # loads it, if nothing has yet
    assert vars(xp).keys() == vars(array_api_compat.numpy).keys()
    assert all(getattr(xp, n) is v for n, v in vars(array_api_compat.numpy).items())
    # What kernels bind while they are built comes from ns.lib (NumPy), not xp: the same
    # objects, so the kernels are the ones xp would have made.
    for name in ("where", "exp", "log", "tril", "triu"):
        assert getattr(array_api_compat.numpy, name) is getattr(np, name), name


@pytest.mark.parametrize("first", ["backends.cpu", "backends.meta", "backends.cuda", "backends"])
def test_either_import_order_registers_kernels(first: str) -> None:
    code = (
        f"import {first}\n"
        "import tensor as tt\n"
        "from dispatch import dump_table\n"
        "table = dump_table('core::add.Tensor')\n"
        "assert 'backends.cpu.elementwise.add_tensor' in table, table\n"
        "print((tt.tensor([1.0]) + 1).tolist(), tt.zeros(2, device='meta').shape)\n"
    )
    assert _run(code) == "[2.0] tt.Size([2])"


def test_backends_cuda_imports_without_a_gpu() -> None:
    out = _run(
        "import backends.cuda as c; print(type(c.is_available()).__name__, c.device_count() >= 0)"
    )
    assert out == "bool True"


# Every operator's table and masks after ``import tensor``, as JSON; with "immediate",
# bulk_registration is made a no-op first, so every registration rebuilds at once.
_TABLES = """\
import contextlib, json, sys
import dispatch
if sys.argv[1] == "immediate":
    dispatch.bulk_registration = contextlib.nullcontext
import tensor
from dispatch._operator import OPERATORS
print(json.dumps({
    name: [dispatch.dump_table(op), op._state.mask, op._state.with_keyset, op._state.grad_mask, type(op).__name__]
    for name, op in sorted(OPERATORS.items())
}))
"""


def test_bulk_registration_leaves_the_tables_immediate_rebuilds_leave() -> None:
    """Note [Bulk registration]: import tensor's tables, with and without the blocks."""
    tables = {}
    for how in ("bulk", "immediate"):
        result = subprocess.run(
            [sys.executable, "-c", _TABLES, how],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        tables[how] = json.loads(result.stdout)
    assert len(tables["bulk"]) > 400
    assert "backends.cpu.elementwise.add_tensor" in tables["bulk"]["core::add.Tensor"][0]
    for name, immediate in tables["immediate"].items():
        assert tables["bulk"][name] == immediate, name
    assert tables["bulk"].keys() == tables["immediate"].keys()


def test_array_api_and_plugin_devices_load_on_first_use() -> None:
    """Note [Lazy submodules]: neither loads at ``import tensor``; each loads when used,
    and then behaves as it did when it loaded with the package."""
    code = (
        "import sys, tensor as tt\n"
        "lazy = ('tensor.array_api', 'tensor._plugin', 'backends.common.device',\n"
        "        'backends.devices.strict')\n"
        "print([m for m in lazy if m in sys.modules])\n"
        "print(tt.ones(2).__array_namespace__() is tt.array_api is sys.modules['tensor.array_api'])\n"
        "print('tensor._plugin' in sys.modules)\n"
        "x = tt.ones(2, device='strict')\n"  # a known plug-in device: registered when named
        "print(x.device, tt._plugin.get_device('strict').name, 'tensor._plugin' in sys.modules)\n"
        "print(tt.register_device is sys.modules['tensor._plugin'].register_device)\n"
        "print(all(hasattr(tt, n) for n in tt.__all__), 'array_api' in dir(tt))\n"
    )
    assert _run(code).splitlines() == [
        "[]",
        "True",
        "False",
        "strict strict True",
        "True",
        "True True",
    ]


def test_an_unknown_device_type_still_fails_with_its_message() -> None:
    code = (
        "import tensor as tt\n"
        "try:\n    tt.device('tpu')\nexcept RuntimeError as e:\n    print(e)\n"
        "import tensor._plugin\nprint(tt._plugin.get_device('tpu'))\n"
    )
    out = _run(code).splitlines()
    assert out[0].startswith("Expected one of cpu") and "'tpu'" in out[0]
    assert out[1] == "None"


@pytest.mark.parametrize("disabled_before", [False, True])
def test_import_leaves_the_cyclic_gc_as_it_found_it(disabled_before: bool) -> None:
    """Note [Importing without the cyclic GC]: off during the import only."""
    code = f"import gc\nif {disabled_before}: gc.disable()\nimport tensor\nprint(gc.isenabled())\n"
    assert _run(code) == str(not disabled_before)


def test_import_leaves_no_young_objects_for_the_collector() -> None:
    """Note [Importing without the cyclic GC]: the import's objects go to the oldest
    generation, so the first young collection after it walks almost nothing."""
    code = (
        "import gc\nimport tensor\n"
        "print(len(gc.get_objects(0)) < 1000, len(gc.get_objects(2)) > 50000)\n"
    )
    assert _run(code) == "True True"


def test_import_keeps_the_programs_frozen_objects_frozen() -> None:
    """A program that froze objects before the import (``gc.freeze()`` before a fork)
    finds them still frozen, and the import's own objects not frozen."""
    code = (
        "import gc\nkeep = [[i] for i in range(1000)]\ngc.freeze()\n"
        "before = gc.get_freeze_count()\nimport tensor\n"
        "after = gc.get_freeze_count()\n"  # a few frozen objects die during the import
        "print(0.9 * before < after <= before, gc.isenabled())\n"
    )
    assert _run(code) == "True True"

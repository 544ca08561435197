"""``tensor``: the Tensor, its dtypes and devices, factories, and the built-in operators.

Imports: ``dispatch``, NumPy, ml_dtypes; at the end, ``backends``, whose CPU and Meta
kernels are registered with this package's ``FrontEnd`` (``tensor._frontend``; CUDA
kernels load on first use, and array_api_compat on the first call of a kernel that
needs it).  Imports run one way: ``backends`` never imports ``tensor``.

    >>> import tensor as tt
    >>> x = tt.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> (tt.sin(x) @ x + 1).shape
    tt.Size([2, 2])
    >>> x.sum(dim=1).tolist()
    [3.0, 7.0]

Every ``tt.<name>`` operator function and Tensor method is generated from the
operator table (``tensor.optable``) and calls ``ops.core.<name>.<overload>``.
"""

from __future__ import annotations

import builtins as _builtins
import gc as _gc
import importlib as _importlib
import warnings as _warnings
from collections.abc import Iterator as _Iterator
from contextlib import contextmanager as _contextmanager
from typing import TYPE_CHECKING as _TYPE_CHECKING

from dispatch import _codegen
from dispatch import bulk_registration as _bulk_registration


@_contextmanager
def _without_cyclic_gc() -> _Iterator[None]:
    """Note [Importing without the cyclic GC]: the collector off for the block, then
    back as it was (also when the block raises)."""
    enabled = _gc.isenabled()
    frozen = _gc.get_freeze_count()
    _gc.disable()
    try:
        yield
    finally:
        if enabled:
            if not frozen and not _gc.get_freeze_count():
                # Everything young to the oldest generation, untraversed: freeze() moves
                # every tracked object into the permanent generation, unfreeze() hands
                # them all to the oldest one (the program froze nothing: checked).
                _gc.freeze()
                _gc.unfreeze()
            _gc.enable()


# Note [Importing without the cyclic GC]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The import below allocates ~10^5 containers (schemas, rows, kernels, tables) that all
# live as long as the process; the cyclic collector, run every 700 allocations, walked
# them ~160 times, ~13% of ``import tensor`` (ci/bench/import_time.py).  It is off while
# they are made: nothing here makes cyclic garbage worth collecting.  Turned back on,
# its first young collection would walk all of them at once (~15-30 ms here, then ~10
# more when they pass through the middle generation), so they go to the oldest
# generation without a walk first, as ``gc.freeze()`` then ``gc.unfreeze()`` move every
# tracked object (the program's young objects too: their cycles, if any, wait for the
# next full collection instead of a young one; nothing is lost).  A program that has
# frozen objects itself (a server about to fork) keeps them frozen: then the import
# skips the move and the young collection walks them as before.  A collector the
# program had turned off stays off, and its objects where they were.
#
# Importing defines ~500 operators (tensor._definitions) and registers ~1,600 kernels into
# them (the backends, autograd, autocast...): each table is built once, when this
# block ends (Note [Bulk registration]).  Nothing here calls an operator.
with _without_cyclic_gc(), _bulk_registration():
    from . import _generated, autograd, nn, return_types
    from . import _type_checks as _type_checks  # registers the dtype and device checks
    from ._convert import MetaArray
    from ._device import device
    from ._dtype import ALIASES as _ALIASES
    from ._dtype import (
        bfloat16,
        bool,
        complex64,
        complex128,
        dtype,
        float16,
        float32,
        float64,
        get_default_dtype,
        int8,
        int16,
        int32,
        int64,
        set_default_dtype,
        uint8,
    )
    from ._factories import as_tensor, from_dlpack, from_numpy, tensor
    from ._promotion import can_cast, promote_types, result_type
    from ._random import Generator, default_generator, initial_seed, manual_seed, seed
    from ._standard import *  # noqa: F403  (asarray, finfo, multiply, ...)
    from ._standard import __all__ as _STANDARD
    from ._tensor import Size, Tensor
    from .autograd import (
        enable_grad,
        inference_mode,
        is_grad_enabled,
        is_inference_mode_enabled,
        no_grad,
        set_grad_enabled,
    )
    from .optable import OP_TABLE, OpInfo
    from .optable import by_name as op_info

    half, float, double = _ALIASES["half"], _ALIASES["float"], _ALIASES["double"]  # noqa: A001
    short, int, long = _ALIASES["short"], _ALIASES["int"], _ALIASES["long"]  # noqa: A001
    cfloat, cdouble = _ALIASES["cfloat"], _ALIASES["cdouble"]

    # tt.add, tt.sin, tt.sum, ... (generated; see tensor._generated).  Dotted names go to their
    # namespaces (tt.linalg.vector_norm, tt.nn.functional.gelu).
    _GENERATED = {name: fn for name, fn in _generated.FUNCTIONS.items() if "." not in name}
    globals().update(_GENERATED)

    # Last: the backends register their kernels, built from the front end (the names
    # above) that ``_frontend.FRONT`` hands them.
    import backends.composite as _composite
    import backends.cpu as _cpu
    import backends.meta as _meta

    from . import _inplace_or_view, cuda, fft, linalg
    from ._frontend import FRONT as _FRONT

    _composite.register(_FRONT)
    _inplace_or_view.register()
    _cpu.register(_FRONT)
    _meta.register(_FRONT)
    autograd.register()

    from . import _autocast, amp
    from ._autocast import autocast, get_autocast_dtype, is_autocast_enabled

    _autocast.register()

    from . import _device, higher_order, modes
    from .higher_order import cond

    # Note [Lazy submodules]: the plug-in devices' module loads when a device type
    # this package does not know is first named (``tt.device("strict")``, which then
    # registers it, as before) or one of its names is read.
    def _resolve_plugin(name: str) -> _builtins.bool:
        from . import _plugin  # its import replaces this hook with its own

        return _plugin._resolve(name)

    _device.PluginHooks.resolve = _resolve_plugin

# Note [Compiled code on disk] (dispatch/_codegen.py): what this import compiled, kept
# for the next one.
_codegen.save()

__all__ = [
    "OP_TABLE",
    "Generator",
    "MetaArray",
    "OpInfo",
    "PluginDevice",
    "Size",
    "Tensor",
    "amp",
    "array_api",
    "as_tensor",
    "autocast",
    "autograd",
    "bfloat16",
    "bool",
    "can_cast",
    "cdouble",
    "cfloat",
    "cond",
    "complex64",
    "complex128",
    "cuda",
    "default_generator",
    "device",
    "double",
    "dtype",
    "enable_grad",
    "fft",
    "float",
    "float16",
    "float32",
    "float64",
    "from_dlpack",
    "from_numpy",
    "get_autocast_dtype",
    "get_default_dtype",
    "half",
    "higher_order",
    "inference_mode",
    "is_autocast_enabled",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "initial_seed",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "linalg",
    "long",
    "manual_seed",
    "modes",
    "nn",
    "no_grad",
    "op_info",
    "promote_types",
    "register_device",
    "result_type",
    "return_types",
    "seed",
    "set_default_dtype",
    "set_grad_enabled",
    "short",
    "tensor",
    "uint8",
    *sorted(_GENERATED),
    *_STANDARD,
]

# Note [Lazy submodules]
# ~~~~~~~~~~~~~~~~~~~~~~
# ``tt.array_api`` (the Array API namespace, ``Tensor.__array_namespace__()``) and the
# plug-in devices' module (``tt.register_device``, ``tt.PluginDevice``) are imported on
# first use, through this module ``__getattr__`` (PEP 562), not by ``import tensor``
# (~8 ms of it; ci/bench/import_time.py).  Neither registers anything at import that
# an operator call could miss: the namespace only calls operators, and plug-in devices
# register when named or asked for.  Once imported, a submodule is an attribute of this
# package, so the hook runs once per name.
if _TYPE_CHECKING:
    from . import _plugin as _plugin
    from . import array_api
    from ._plugin import PluginDevice, register_device

_LAZY = {
    "array_api": ("tensor.array_api", None),
    "_plugin": ("tensor._plugin", None),
    "PluginDevice": ("tensor._plugin", "PluginDevice"),
    "register_device": ("tensor._plugin", "register_device"),
}


def __getattr__(name: str) -> object:
    entry = _LAZY.get(name)
    if entry is None:
        raise AttributeError(f"module 'tensor' has no attribute {name!r}")
    module = _importlib.import_module(entry[0])
    value = module if entry[1] is None else getattr(module, entry[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


# NumPy warns about inf/nan results (log(0), 0/0, overflow); PyTorch does not.  Ignore
# those RuntimeWarnings when they come from this package's or the backends' own code
# (the filter matches the module that called NumPy), and only those.
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"(tensor|backends)(\.|$)")

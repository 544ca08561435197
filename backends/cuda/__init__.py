"""The CUDA backend (CuPy).  Importing it never fails and never imports CuPy.

Imports: the standard library; CuPy only when ``is_available()`` is first asked,
through ``importlib``, so machines without CuPy or a GPU import this package fine.

CUDA initialises lazily, as in PyTorch: the first CUDA device a user asks for
(``tt.zeros(2, device="cuda")``, ``t.cuda()``, ``tt.cuda.current_device()``) makes
``tensor`` call ``init(front)`` with its ``FrontEnd``, which loads CuPy, teaches the
front end to move arrays to and from the GPU (``_runtime``) and registers every CUDA
kernel at the ``CUDA`` key.  Without CuPy or a GPU, ``init()`` raises an error saying
so and how to install the ``cuda`` extra; nothing else changes.

Kernels: ``elementwise`` and ``reduction`` launch our own CUDA C kernels
(``*.cu``, compiled lazily by ``_compile``); ``linalg`` calls cuBLAS through CuPy;
``shape``, ``nn`` and ``creation`` use the shared kernels of ``backends.common``
with CuPy's library functions (each module says which and why).
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from typing import Any

from ..common.frontend import FrontEnd

__all__ = [
    "INSTALL_HINT",
    "current_device",
    "current_device_if_initialized",
    "cupy_module",
    "device_count",
    "init",
    "is_available",
    "register",
    "synchronize",
    "unavailable_reason",
]

INSTALL_HINT = (
    "install the GPU extra on a machine with an NVIDIA GPU and driver: "
    "pip install 'arraydispatch[cuda]' (CuPy for CUDA 13)"
)


class _State:
    lock = threading.Lock()
    init_lock = threading.RLock()
    initialized = False
    lib: Any = None  # the CUDA kernels' IMPL library, once registered
    probed = False
    cupy: Any = None  # the module, once probed and usable
    count = 0
    reason = "not probed yet"


def _probe() -> None:
    with _State.lock:
        if _State.probed:
            return
        _State.probed = True
        if importlib.util.find_spec("cupy") is None:
            _State.reason = "CuPy is not installed"
            return
        try:
            cupy = importlib.import_module("cupy")
            count = int(cupy.cuda.runtime.getDeviceCount())
        except Exception as e:  # no driver, no device, broken install: all mean "no CUDA"
            _State.reason = f"CuPy could not reach a GPU ({type(e).__name__}: {e})"
            return
        if count <= 0:
            _State.reason = "no CUDA device is visible"
            return
        _State.cupy, _State.count, _State.reason = cupy, count, ""


def is_available() -> bool:
    """True when CuPy is installed and at least one CUDA device is visible."""
    _probe()
    return _State.count > 0


def device_count() -> int:
    """The number of visible CUDA devices (0 without CuPy or a GPU)."""
    _probe()
    return _State.count


def unavailable_reason() -> str:
    """Why CUDA cannot be used ("" when it can), for skip messages."""
    _probe()
    return _State.reason


def synchronize(device: int | None = None) -> None:
    """Wait for the work queued on a device (every device when None); no-op without CUDA."""
    if not is_available():
        return
    cupy = _State.cupy
    if device is None:
        for i in range(_State.count):
            with cupy.cuda.Device(i):
                cupy.cuda.runtime.deviceSynchronize()
    else:
        with cupy.cuda.Device(device):
            cupy.cuda.runtime.deviceSynchronize()


def _require() -> Any:
    """The CuPy module, or the error saying why CUDA cannot be used and what to do."""
    _probe()
    if _State.count <= 0:
        raise RuntimeError(
            f"CUDA is not available: {_State.reason}. To use device='cuda', {INSTALL_HINT}; "
            f"otherwise use device='cpu' (tt.cuda.is_available() says which you have)."
        )
    return _State.cupy


def init(front: FrontEnd) -> None:
    """Initialise CUDA (once) for ``front``: CuPy, transfers, and every CUDA kernel; raises
    without a GPU."""
    if _State.initialized:
        return
    _require()
    with _State.init_lock:
        if _State.initialized:
            return
        from . import _runtime  # imports CuPy: only once a GPU was found

        front.set_cuda_hooks(*_runtime.transfer_hooks(front))
        register(front)
        _State.initialized = True


def current_device() -> int:
    """The current CUDA device index (raises without CUDA; registers no kernels)."""
    return int(_require().cuda.runtime.getDevice())


def current_device_if_initialized() -> int:
    """The current CUDA device index, or 0 before CUDA is initialised (never initialises)."""
    if not _State.initialized:
        return 0
    return int(_State.cupy.cuda.runtime.getDevice())


def cupy_module() -> Any:
    """The CuPy module (raises without CUDA)."""
    return _require()


def register(front: FrontEnd) -> None:
    """Register every CUDA kernel for ``front`` at the CUDA key (once); a no-op without CUDA.

    Called by ``init()``; each kernel is wrapped in a device guard (Note [Device guards]
    in ``_runtime``).
    """
    if not is_available() or _State.lib is not None:
        return
    with _State.init_lock:
        if _State.lib is not None:
            return
        # The kernel modules import CuPy: only once a GPU was found.
        from ..common.registration import register_backend
        from . import _runtime, creation, elementwise, linalg, nn, reduction, shape

        multi = _State.count > 1

        def wrap(qualname: str, kernel: Any) -> Any:
            return _runtime.guard(front, kernel, qualname, multi)

        _State.lib = register_backend(
            "CUDA",
            (elementwise, reduction, linalg, shape, nn),
            creation,
            __name__,
            front,
            wrap=wrap,
        )

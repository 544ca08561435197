"""Launching a harness library's kernels with CuPy-style arguments.

Imports: NumPy, ctypes and the standard library; ``_build`` for the libraries.

``Library(built).kernel(expr)`` is a ``Kernel``: ``kernel(grid, block, args)`` as CuPy's
``Function`` is called.  Each argument is checked against the kernel's parameter
types (which the library reports, ``_build``): an array must meet a pointer to its
own dtype, aligned to it; a NumPy scalar must have the parameter's type exactly (a
``np.int32`` for a ``long long`` is an error here, where CuPy would pass 4 bytes for
8 and the GPU would read garbage); a structured scalar (the ``ad::Geometry``) must have
the struct's size.  Python numbers become what CuPy makes of them (bool, int64,
float64).

Note [Guarded copies]
Host memory does not fault where a GPU's would: a kernel reading past the end of a
NumPy buffer reads its neighbour.  So each launch copies the memory each array argument
spans (its own elements' byte range, not its base's: a kernel has no business outside
the view it was given; overlapping ranges are merged, so aliasing survives) into fresh
pages with an inaccessible page on each side, the data 16 to 271 bytes below the upper
one, at the same address modulo 256 as the original (so the alignment the launcher
computed still holds).  The bytes between the data and the guard pages are 0xff: an
out-of-bounds read gets NaN or -1, an out-of-bounds write is reported when the launch
ends, and a wild access faults, which the runtime reports as an error.  After the
launch the ranges are copied back.  ``ARRAYDISPATCH_CUDASIM_MEMCHECK=0`` turns this off
(the kernels then run on the arrays' own memory).
"""

from __future__ import annotations

import ctypes
import os
import threading
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _build

__all__ = [
    "ORDERS", "CIntptr", "CPointer", "CScalar", "Kernel", "KernelError", "Library", "dtype_code",
    "libraries",
]  # fmt: skip

# Thread orders within a block: forward, reverse, or a seeded shuffle every round.
ORDERS = {"forward": 0, "reverse": 1, "shuffle": 2}
_PAGE = os.sysconf("SC_PAGE_SIZE")
_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.mmap.restype = ctypes.c_void_p
_LIBC.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                       ctypes.c_int, ctypes.c_long]  # fmt: skip
_LIBC.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_LIBC.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_PROT_NONE, _PROT_RW = 0, 3
_SLACK = 16  # at least this many 0xff bytes after each guarded copy
_MAP_PRIVATE_ANON = 0x02 | 0x20
_LOCK = threading.Lock()  # one launch at a time (the runtime holds one scheduler)
_LIBRARIES: list[Library] = []


class CPointer:
    """CuPy's ``cupy.cuda.function.CPointer``: a kernel argument CuPy passes as it is (the
    address of its value).  Here it holds the NumPy scalar it stands for, which a launch
    checks against the parameter's type as it checks a scalar argument."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class CIntptr(CPointer):
    """``cupy.cuda.function.CIntptr``: an intptr_t, i.e. a ``long long`` parameter."""

    __slots__ = ()

    def __init__(self, v: int) -> None:
        super().__init__(np.int64(v))  # OverflowError past intptr_t, as Cython's conversion


class CScalar(CPointer):
    """``cupy._core._scalar.CScalar``: a scalar's value (of its own dtype)."""

    __slots__ = ()

    def __init__(self, v: Any) -> None:
        if not isinstance(v, np.generic):
            raise TypeError(f"CScalar of a {type(v).__name__}: the stand-in takes NumPy scalars")
        super().__init__(v)


class KernelError(RuntimeError):
    """A kernel failed under the harness: a bad argument, a deadlock, a fault, an overrun."""


class Config(ctypes.Structure):
    _fields_ = [
        ("grid", ctypes.c_uint * 3),
        ("block", ctypes.c_uint * 3),
        ("order", ctypes.c_int),
        ("seed", ctypes.c_ulonglong),
    ]


def dtype_code(dt: np.dtype) -> str:
    """The runtime's type code of a NumPy dtype (``cudasim_launch.h``'s TypeCode)."""
    if dt.name == "bfloat16":
        return "bf16"
    if dt.kind == "b":
        return "b1"
    if dt.kind in "iufc":
        return f"{dt.kind}{dt.itemsize}"
    if dt.kind == "V":
        return f"s{dt.itemsize}"
    return f"?{dt.str}"


_C_NAMES = {
    "b1": "bool", "i1": "signed char", "u1": "unsigned char", "i2": "short",
    "u2": "unsigned short", "i4": "int", "u4": "unsigned int", "i8": "long long",
    "u8": "unsigned long long", "f2": "__half", "bf16": "__nv_bfloat16", "f4": "float",
    "f8": "double",
}  # fmt: skip


def _c_name(code: str) -> str:
    return _C_NAMES.get(code, f"a {code[1:]}-byte struct" if code.startswith("s") else code)


def _dims(d: Any) -> tuple[int, int, int]:
    t = (d,) if isinstance(d, int | np.integer) else tuple(d)
    if not 1 <= len(t) <= 3:
        raise KernelError(f"grid and block take 1 to 3 dimensions, not {d!r}")
    return tuple(int(v) for v in t) + (1,) * (3 - len(t))  # type: ignore[return-value]


def _order() -> int:
    name = os.environ.get("ARRAYDISPATCH_CUDASIM_ORDER", "shuffle")
    if name not in ORDERS:
        raise KernelError(f"ARRAYDISPATCH_CUDASIM_ORDER={name!r}: use one of {sorted(ORDERS)}")
    return ORDERS[name]


def _memcheck() -> bool:
    return os.environ.get("ARRAYDISPATCH_CUDASIM_MEMCHECK", "1") != "0"


class Library:
    """A loaded harness library (``_build.Built``): its kernels by instance name."""

    def __init__(self, built: _build.Built) -> None:
        self.built = built
        self.lib = ctypes.CDLL(str(built.path))
        self.index = {name: i for i, name in enumerate(built.instances)}
        n = max(len(built.instances), 1)
        self._counts = (ctypes.c_ulonglong * n).in_dll(self.lib, "adsim_counts")
        # __shared__ variables at their loaded addresses, for the runtime to refill.
        offset = ctypes.addressof(self._counts) - built.anchor
        self.shared = {name: (offset + addr, size) for name, addr, size in built.shared}
        k = len(self.shared)
        addrs = (ctypes.c_void_p * max(k, 1))(*(a for a, _ in self.shared.values()))
        sizes = (ctypes.c_size_t * max(k, 1))(*(z for _, z in self.shared.values()))
        self.lib.adsim_set_shared(addrs, sizes, ctypes.c_int(k))
        self._kernels: dict[str, Kernel] = {}
        with _LOCK:
            _LIBRARIES.append(self)

    def kernel(self, name: str) -> Kernel:
        k = self._kernels.get(name)
        if k is None:
            i = self.index.get(name)
            if i is None:
                raise KernelError(f"{name}: not an instance of this library")
            k = self._kernels[name] = Kernel(self, name, i)
        return k

    def counts(self) -> dict[str, int]:
        """Launches per instance so far (the trampolines' counters)."""
        return {name: int(self._counts[i]) for name, i in self.index.items()}


def libraries() -> list[Library]:
    with _LOCK:
        return list(_LIBRARIES)


class Kernel:
    """One instance of a harness library, launched as ``kernel(grid, block, args)``."""

    def __init__(self, library: Library, name: str, index: int) -> None:
        self.library, self.name = library, name
        self._fn = getattr(library.lib, f"adsim_k{index}")
        self._fn.restype = ctypes.c_int
        self._fn.argtypes = [ctypes.POINTER(Config), ctypes.c_void_p, ctypes.c_char_p,
                             ctypes.c_int]  # fmt: skip
        sig = getattr(library.lib, f"adsim_s{index}")
        sig.restype = ctypes.c_char_p
        text = sig().decode()
        self.params: list[tuple[str, str]] = [(p[0], p[1:]) for p in text.split(",") if p]
        self._seed = zlib.crc32(name.encode())

    def __call__(self, grid: Any, block: Any, args: Sequence[Any], **_: Any) -> None:
        if len(args) != len(self.params):
            raise KernelError(
                f"{self.name}: takes {len(self.params)} arguments, {len(args)} were given"
            )
        g, b = _dims(grid), _dims(block)
        arrays: list[tuple[int, np.ndarray]] = []
        values: list[Any] = []
        for k, (arg, (kind, code)) in enumerate(zip(args, self.params, strict=True)):
            if isinstance(arg, np.ndarray):
                self._check_array(k, arg, kind, code)
                arrays.append((k, arg))
                values.append(None)
            else:
                values.append(self._value(k, arg, kind, code))
        cfg = Config((ctypes.c_uint * 3)(*g), (ctypes.c_uint * 3)(*b), _order(),
                     self._seed ^ zlib.crc32(repr((g, b)).encode()))  # fmt: skip
        err = ctypes.create_string_buffer(2048)
        with _LOCK:
            guarded = _Guarded(arrays) if _memcheck() and arrays else None
            try:
                for k, a in arrays:
                    ptr = a.__array_interface__["data"][0]
                    values[k] = ctypes.c_void_p(guarded.translate(ptr) if guarded else ptr)
                argv = (ctypes.c_void_p * max(len(values), 1))(
                    *(ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in values)
                )
                rc = self._fn(ctypes.byref(cfg), argv, err, len(err))
            finally:
                overrun = guarded.finish() if guarded else ""
        if rc:
            raise KernelError(f"{self.name}: {err.value.decode(errors='replace')}")
        if overrun:
            raise KernelError(f"{self.name}: {overrun}")

    def _check_array(self, k: int, a: np.ndarray, kind: str, code: str) -> None:
        have = dtype_code(a.dtype)
        if kind != "p":
            raise KernelError(
                f"{self.name}: argument {k} is a {_c_name(code)} value but an array "
                f"({a.dtype}) was given"
            )
        if have != code:
            raise KernelError(
                f"{self.name}: argument {k} is a {_c_name(code)}* but an array of {a.dtype} "
                f"({_c_name(have)}) was given"
            )
        ptr = a.__array_interface__["data"][0]
        if a.size and ptr % a.dtype.alignment:
            raise KernelError(
                f"{self.name}: argument {k} ({a.dtype}) is misaligned: address {ptr:#x}"
            )

    def _value(self, k: int, v: Any, kind: str, code: str) -> Any:
        if isinstance(v, CPointer):
            v = v.value
        elif isinstance(v, bool):
            v = np.bool_(v)
        elif isinstance(v, int):
            v = np.int64(v)
        elif isinstance(v, float):
            v = np.float64(v)
        if not isinstance(v, np.generic):
            raise KernelError(
                f"{self.name}: argument {k} of type {type(v).__name__} cannot be passed to a "
                f"kernel (arrays, NumPy scalars and Python numbers can)"
            )
        have = dtype_code(v.dtype)
        if kind != "v" or have != code:
            want = f"{_c_name(code)}{'*' if kind == 'p' else ''}"
            raise KernelError(
                f"{self.name}: argument {k} is a {want} but a {v.dtype} scalar "
                f"({_c_name(have)}) was given"
            )
        buf = ctypes.create_string_buffer(v.tobytes(), max(v.dtype.itemsize, 8))
        return buf


class _Guarded:
    """The guarded copies of one launch's array arguments (Note [Guarded copies])."""

    def __init__(self, arrays: list[tuple[int, np.ndarray]]) -> None:
        spans: list[list[int]] = []
        for _, a in arrays:
            lo, hi = np.lib.array_utils.byte_bounds(a)
            spans.append([lo, hi])
        spans.sort()
        merged: list[list[int]] = []
        for lo, hi in spans:
            if merged and lo <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], hi)
            else:
                merged.append([lo, hi])
        self.regions: list[tuple[int, int, int, int, int]] = []  # lo, size, base, total, copy
        try:
            for lo, hi in merged:
                self.regions.append(self._map(lo, hi - lo))
        except BaseException:
            self.finish()
            raise

    @staticmethod
    def _map(lo: int, size: int) -> tuple[int, int, int, int, int]:
        data_pages = (size + _SLACK + 256 + _PAGE - 1) // _PAGE
        total = (data_pages + 2) * _PAGE
        base = _LIBC.mmap(None, total, _PROT_RW, _MAP_PRIVATE_ANON, -1, 0)
        if base in (None, ctypes.c_void_p(-1).value):
            raise KernelError(f"could not map {total} bytes for a guarded copy")
        ctypes.memset(base + _PAGE, 0xFF, data_pages * _PAGE)
        _LIBC.mprotect(base, _PAGE, _PROT_NONE)
        _LIBC.mprotect(base + (data_pages + 1) * _PAGE, _PAGE, _PROT_NONE)
        upper = base + (data_pages + 1) * _PAGE
        copy = upper - size - _SLACK
        copy -= (copy - lo) % 256  # same address modulo 256 as the original
        ctypes.memmove(copy, lo, size)
        return lo, size, base, total, copy

    def translate(self, ptr: int) -> int:
        for lo, size, _, _, copy in self.regions:
            if lo <= ptr <= lo + size:
                return copy + (ptr - lo)
        raise KernelError(f"internal: address {ptr:#x} is in no guarded region")

    def finish(self) -> str:
        """Copy back, unmap, and say whether a kernel wrote next to an array ('' if not)."""
        problems = []
        for lo, size, base, total, copy in self.regions:
            ctypes.memmove(lo, copy, size)
            below = ctypes.string_at(base + _PAGE, copy - base - _PAGE)
            above = ctypes.string_at(copy + size, base + total - _PAGE - copy - size)
            for side, data in (("before the start", below), ("past the end", above)):
                bad = len(data) - data.count(0xFF)
                if bad:
                    problems.append(
                        f"wrote {bad} byte(s) {side} of the {size}-byte memory of an array "
                        f"argument (at {lo:#x})"
                    )
            _LIBC.munmap(base, total)
        self.regions = []
        return "; ".join(problems)

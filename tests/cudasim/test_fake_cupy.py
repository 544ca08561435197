"""The fake CuPy's rules (_array.py, _device.py), checked in-process without installing it.

The fake keeps device and host arrays apart as CuPy does, gives 0-d views where NumPy
gives scalars, poisons fresh memory, and defers non-blocking device-to-host copies until
a synchronisation; ``sys.modules["cupy"]`` is never touched here.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from . import _array, _device

pytestmark = pytest.mark.cudasim

add = _array.ufunc(np.add)
concatenate = _array.wrap(np.concatenate, "concatenate")


def _dev(values: object, dtype: object = np.float32) -> _array.ndarray:
    return _array.device_view(np.array(values, dtype=dtype))


def test_device_and_host_arrays_do_not_mix() -> None:
    x = _dev([1, 2, 3])
    assert type(x + 1) is _array.ndarray and type(np.exp(x)) is _array.ndarray
    assert type(add(x, x)) is _array.ndarray
    with pytest.raises(TypeError, match=r"cupy.add\(\).*host arrays"):
        _ = x + np.ones(3, np.float32)
    with pytest.raises(TypeError, match=r"cupy.concatenate\(\)"):
        concatenate([x, np.ones(3, np.float32)])
    with pytest.raises(TypeError, match="numpy.ndarray"):
        np.concatenate([x, np.ones(3, np.float32)])  # NumPy's function: __array_function__
    # This process's cupy, if any, is the real one: the fake lives only in plugin sessions.
    assert "cudasim" not in str(getattr(sys.modules.get("cupy"), "__file__", ""))


def test_elements_and_reductions_are_0d_device_arrays() -> None:
    x = _dev([[1, 2], [3, 4]])
    total, first = x.sum(), x[1, 0]
    assert type(total) is _array.ndarray and total.shape == () and float(total) == 10.0
    assert type(first) is _array.ndarray and first.shape == ()
    first[...] = 9  # a view, as CuPy's x[1, 0] is
    assert x[1, 0] == 9
    assert [type(row) for row in x] == [_array.ndarray, _array.ndarray]


def test_fresh_memory_is_poisoned_and_aligned() -> None:
    f, i = _array.alloc((5,), np.float32), _array.alloc((3, 2), np.int16)
    assert np.isnan(f).all() and (i == -1).all()
    assert f.__array_interface__["data"][0] % 256 == 0
    assert f._c_contiguous and f.device.id == 0


def test_non_blocking_copies_land_at_synchronisation() -> None:
    x = _dev([1.5, 2.5])
    out = np.full(2, np.nan)
    x.get(out=out, blocking=False)
    x[...] = 7  # later work on the stream: the copy reads the values queued with it
    assert np.isnan(out).all()  # not there before the stream is synchronised
    _device.get_current_stream().synchronize()
    np.testing.assert_array_equal(out, [1.5, 2.5])
    y = np.full(2, np.nan)
    x.get(out=y, blocking=False)
    event = _device.Event()
    event.record()
    assert event.done and (y == 7).all()


def test_devices_and_streams_follow_cuda() -> None:
    with pytest.raises(_device.CUDARuntimeError, match="invalid device ordinal"):
        _device.set_current(_device.count())
    s = _device.Stream()
    assert _device.get_current_stream() == _device.Stream.null
    with s:
        assert _device.get_current_stream() is s
    assert _device.get_current_stream() == _device.Stream.null
    start, end = _device.Event(), _device.Event()
    start.record()
    end.record()
    assert _device.get_elapsed_time(start, end) >= 0.0
    with pytest.raises(_device.CUDARuntimeError):
        _device.get_elapsed_time(start, _device.Event(disable_timing=True))

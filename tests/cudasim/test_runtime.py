"""The emulation's CUDA semantics (include/cudasim.h, include/cudasim_runtime.cpp, _launch.py).

Small kernels of this file's own, built once (cached) with the harness: real barriers
(a missing one shows, a divergent one is an error), warp shuffles by CUDA's rules,
atomics that interleave, per-block shared memory, the index variables, and the checks
on arguments, launch shapes and memory.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import pytest

from . import _build, _launch

SOURCE = r"""
// Each thread writes its slot, then reads its neighbour's: needs the barrier.
template <bool Sync>
__global__ void rotate(const int* x, int* out) {
    __shared__ int s[1024];
    s[threadIdx.x] = x[threadIdx.x];
    if (Sync) __syncthreads();
    out[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];
}

__global__ void divergent_barrier(int* out) {
    if (threadIdx.x < 16) {
        __syncthreads();
    } else {
        __syncthreads();
    }
    out[threadIdx.x] = 1;
}

// The first half of the warp exits; the rest shuffle with a full mask: no lane answers.
__global__ void shuffle_after_exit(int* out) {
    if (threadIdx.x < 16) return;
    out[threadIdx.x] = __shfl_down_sync(0xffffffffu, (int)threadIdx.x, 1);
}

__global__ void shuffle_outside_mask(int* out) {
    out[threadIdx.x] = __shfl_down_sync(0x0000ffffu, (int)threadIdx.x, 1);
}

// mode 0 idx, 1 up, 2 down, 3 xor; each lane's value is 100 * lane + 0.5.
__global__ void shuffles(double* out, int mode, int arg, int width) {
    const double v = 100.0 * threadIdx.x + 0.5;
    double r = 0;
    if (mode == 0) r = __shfl_sync(0xffffffffu, v, arg, width);
    if (mode == 1) r = __shfl_up_sync(0xffffffffu, v, (unsigned)arg, width);
    if (mode == 2) r = __shfl_down_sync(0xffffffffu, v, (unsigned)arg, width);
    if (mode == 3) r = __shfl_xor_sync(0xffffffffu, v, arg, width);
    out[threadIdx.x] = r;
}

// Every thread adds 1 to one counter with a compare-and-swap loop, counting its retries.
__global__ void cas_counter(unsigned int* counter, unsigned int* retries) {
    unsigned int old = *counter, assumed;
    do {
        assumed = old;
        old = atomicCAS(counter, assumed, assumed + 1u);
        if (old != assumed) atomicAdd(retries, 1u);
    } while (old != assumed);
}

__global__ void indices(int* out) {
    const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const int b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const int per = blockDim.x * blockDim.y * blockDim.z;
    out[4 * (b * per + t) + 0] = threadIdx.x + 10 * threadIdx.y + 100 * threadIdx.z;
    out[4 * (b * per + t) + 1] = blockIdx.x + 10 * blockIdx.y + 100 * blockIdx.z;
    out[4 * (b * per + t) + 2] = blockDim.x + 10 * blockDim.y + 100 * blockDim.z;
    out[4 * (b * per + t) + 3] = gridDim.x + 10 * gridDim.y + 100 * gridDim.z;
}

// Block 0 writes shared memory; block 1 reads it before writing: a block's shared
// memory starts undefined (0xff bytes here), never with another block's values.
__global__ void shared_per_block(int* out) {
    __shared__ int s[32];
    if (blockIdx.x == 0) s[threadIdx.x] = 7;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = s[threadIdx.x];
}

__global__ void write_at(float* x, long long i) {
    if (threadIdx.x == 0 && blockIdx.x == 0) x[i] = 1.0f;
}

__global__ void scale(const float* x, float* out, long long n, float a) {
    for (long long i = threadIdx.x; i < n; i += blockDim.x) out[i] = a * x[i];
}
"""

INSTANCES = [
    "rotate<true>", "rotate<false>", "divergent_barrier", "shuffle_after_exit",
    "shuffle_outside_mask", "shuffles", "cas_counter", "indices", "shared_per_block",
    "write_at", "scale",
]  # fmt: skip
ORDERS = sorted(_launch.ORDERS)
pytestmark = pytest.mark.cudasim


@pytest.fixture(scope="module")
def lib(toolchain: None) -> _launch.Library:
    return _launch.Library(_build.build(SOURCE, ["-std=c++17"], INSTANCES))


@pytest.fixture
def order(request: pytest.FixtureRequest) -> Iterator[str]:
    old = os.environ.get("ARRAYDISPATCH_CUDASIM_ORDER")
    os.environ["ARRAYDISPATCH_CUDASIM_ORDER"] = request.param
    yield request.param
    if old is None:
        del os.environ["ARRAYDISPATCH_CUDASIM_ORDER"]
    else:
        os.environ["ARRAYDISPATCH_CUDASIM_ORDER"] = old


@pytest.mark.parametrize("order", ORDERS, indirect=True)
def test_barrier_orders_shared_memory(lib: _launch.Library, order: str) -> None:
    x = np.arange(256, dtype=np.int32) * 3
    out = np.zeros(256, np.int32)
    lib.kernel("rotate<true>")((1,), (256,), (x, out))
    np.testing.assert_array_equal(out, np.roll(x, -1))


@pytest.mark.parametrize("order", ORDERS, indirect=True)
def test_missing_barrier_shows(lib: _launch.Library, order: str) -> None:
    # Without the barrier some thread reads its neighbour's slot before it is written
    # (in any order the scheduler runs them: every thread runs until it waits or exits).
    x = np.arange(256, dtype=np.int32) * 3
    out = np.zeros(256, np.int32)
    lib.kernel("rotate<false>")((1,), (256,), (x, out))
    assert not np.array_equal(out, np.roll(x, -1))
    assert (out == -1).any()  # the unwritten slots read 0xff bytes


def test_divergent_barrier_is_an_error(lib: _launch.Library) -> None:
    with pytest.raises(_launch.KernelError, match=r"divergent __syncthreads\(\).*:\d+"):
        lib.kernel("divergent_barrier")((1,), (32,), (np.zeros(32, np.int32),))


def test_shuffle_waiting_for_exited_lanes_is_a_deadlock(lib: _launch.Library) -> None:
    with pytest.raises(_launch.KernelError, match="deadlock.*16 of 32 threads exited"):
        lib.kernel("shuffle_after_exit")((1,), (32,), (np.zeros(32, np.int32),))


def test_shuffle_by_a_lane_outside_its_mask_is_an_error(lib: _launch.Library) -> None:
    with pytest.raises(
        _launch.KernelError, match=r"__shfl_down_sync.*lane \d+.*not in its mask 0x0000ffff"
    ):
        lib.kernel("shuffle_outside_mask")((1,), (32,), (np.zeros(32, np.int32),))


def _expected_shuffle(mode: int, arg: int, width: int) -> np.ndarray:
    lanes = np.arange(32)
    seg, pos = lanes & ~(width - 1), lanes & (width - 1)
    if mode == 0:
        src = seg + (arg & (width - 1))
    elif mode == 1:
        src = np.where(pos < arg, lanes, lanes - arg)
    elif mode == 2:
        src = np.where(pos + arg >= width, lanes, lanes + arg)
    else:
        src = np.where((lanes ^ arg) >= seg + width, lanes, lanes ^ arg)
    return 100.0 * src + 0.5


@pytest.mark.parametrize("width", [32, 8])
@pytest.mark.parametrize(("mode", "arg"), [(0, 5), (1, 3), (2, 3), (2, 16), (3, 1), (3, 4)])
def test_shuffles_follow_cuda(lib: _launch.Library, mode: int, arg: int, width: int) -> None:
    out = np.zeros(64, np.float64)
    lib.kernel("shuffles")((1,), (64,), (out, np.int32(mode), np.int32(arg), np.int32(width)))
    expected = _expected_shuffle(mode, arg, width)
    np.testing.assert_array_equal(out[:32], expected)
    np.testing.assert_array_equal(out[32:], expected + 3200.0)  # the second warp


def test_atomics_interleave_and_stay_exact(lib: _launch.Library) -> None:
    counter, retries = np.zeros(1, np.uint32), np.zeros(1, np.uint32)
    lib.kernel("cas_counter")((3,), (128,), (counter, retries))
    assert counter[0] == 3 * 128
    assert retries[0] > 0  # other threads ran between a load and its compare-and-swap


def test_index_variables_in_three_dimensions(lib: _launch.Library) -> None:
    grid, block = (2, 3, 1), (4, 2, 3)
    per, blocks = 4 * 2 * 3, 2 * 3
    out = np.full(4 * per * blocks, -7, np.int32)
    lib.kernel("indices")(grid, block, (out,))
    got = out.reshape(blocks, per, 4)
    tz, ty, tx = np.meshgrid(range(3), range(2), range(4), indexing="ij")
    np.testing.assert_array_equal(got[:, :, 0], np.tile((tx + 10 * ty + 100 * tz).ravel(), (6, 1)))
    bz, by, bx = np.meshgrid(range(1), range(3), range(2), indexing="ij")
    np.testing.assert_array_equal(got[:, :, 1], np.repeat((bx + 10 * by).ravel()[:, None], 24, 1))
    assert (got[:, :, 2] == 4 + 20 + 300).all() and (got[:, :, 3] == 2 + 30 + 100).all()


def test_shared_memory_is_per_block(lib: _launch.Library) -> None:
    out = np.zeros(64, np.int32)
    lib.kernel("shared_per_block")((2,), (32,), (out,))
    assert (out[:32] == 7).all() and (out[32:] == -1).all()


def test_writes_past_an_array_are_reported(lib: _launch.Library) -> None:
    x = np.zeros(10, np.float32)
    with pytest.raises(_launch.KernelError, match=r"wrote 4 byte\(s\) past the end of the 40-byte"):
        lib.kernel("write_at")((1,), (32,), (x, np.int64(10)))
    with pytest.raises(_launch.KernelError, match="segmentation fault.*outside every array"):
        lib.kernel("write_at")((1,), (32,), (x, np.int64(1 << 44)))  # non-canonical
    # A view's own elements are all a kernel may touch, not the rest of its base array.
    with pytest.raises(_launch.KernelError, match=r"wrote 4 byte\(s\) before the start"):
        lib.kernel("write_at")((1,), (32,), (x[4:], np.int64(-1)))
    with pytest.raises(_launch.KernelError, match=r"wrote 4 byte\(s\) past the end of the 8-byte"):
        lib.kernel("write_at")((1,), (32,), (x[4:6], np.int64(2)))
    lib.kernel("write_at")((1,), (32,), (x[::-3], np.int64(-9)))  # x[0], by a negative stride
    assert x[0] == 1.0 and x.sum() == 1.0


def test_arguments_are_checked_against_the_kernel(lib: _launch.Library) -> None:
    scale = lib.kernel("scale")
    x, out = np.arange(5, dtype=np.float32), np.zeros(5, np.float32)
    scale((1,), (32,), (x, out, 5, np.float32(2)))  # a Python int is CuPy's int64
    np.testing.assert_array_equal(out, 2 * x)
    with pytest.raises(
        _launch.KernelError, match=r"argument 0 is a float\* but an array of float64"
    ):
        scale((1,), (32,), (x.astype(np.float64), out, 5, np.float32(2)))
    with pytest.raises(_launch.KernelError, match="argument 3 is a float but a float64 scalar"):
        scale((1,), (32,), (x, out, 5, 2.0))
    with pytest.raises(_launch.KernelError, match="takes 4 arguments, 3 were given"):
        scale((1,), (32,), (x, out, 5))
    with pytest.raises(_launch.KernelError, match="argument 2 is a long long value but an array"):
        scale((1,), (32,), (x, out, out, np.float32(2)))
    # CuPy's prebuilt arguments (Note [Prebuilt kernel arguments]) are checked by the
    # value they hold, as the scalars they replace.
    out[:] = 0
    scale((1,), (32,), (x, out, _launch.CIntptr(5), _launch.CScalar(np.float32(3))))
    np.testing.assert_array_equal(out, 3 * x)
    with pytest.raises(_launch.KernelError, match="argument 3 is a float but a float64 scalar"):
        scale((1,), (32,), (x, out, 5, _launch.CScalar(np.float64(3))))
    with pytest.raises(_launch.KernelError, match="argument 3 is a float but a int64 scalar"):
        scale((1,), (32,), (x, out, 5, _launch.CIntptr(3)))


@pytest.mark.parametrize("block", [(2048,), (32, 32, 2), (1, 1, 65)])
def test_invalid_launch_shapes_are_errors(lib: _launch.Library, block: tuple[int, ...]) -> None:
    x = np.zeros(5, np.float32)
    with pytest.raises(_launch.KernelError, match="invalid launch configuration"):
        lib.kernel("scale")((1,), block, (x, x, 5, np.float32(1)))


def test_launches_are_counted(lib: _launch.Library) -> None:
    before = lib.counts()["scale"]
    x = np.zeros(5, np.float32)
    lib.kernel("scale")((1,), (32,), (x, x, 5, np.float32(1)))
    assert lib.counts()["scale"] == before + 1

// Reduction operators and block-wide reduction helpers.
//
// A reduction operator has an identity, a combine and a finishing cast; values are
// accumulated in the accumulation type Acc (float for float16/bfloat16/float32 inputs,
// double for float64, long long for integer sums and products, as PyTorch's CUDA
// kernels do).  Max/Min propagate NaN, as PyTorch's max/amax do.
#pragma once

#include "ad_types.cuh"

namespace ad {

template <typename T> __device__ __forceinline__ bool nan_of(T x) { return x != x; }

struct SumOp {
    template <typename T> static __device__ T identity() { return T(0); }
    template <typename T> static __device__ __forceinline__ T combine(T a, T b) { return a + b; }
};
struct ProdOp {
    template <typename T> static __device__ T identity() { return T(1); }
    template <typename T> static __device__ __forceinline__ T combine(T a, T b) { return a * b; }
};
struct MaxOp {
    template <typename T> static __device__ T identity() { return Limits<T>::lowest(); }
    template <typename T> static __device__ __forceinline__ T combine(T a, T b) {
        return nan_of(a) ? a : (nan_of(b) ? b : (a > b ? a : b));
    }
};
struct MinOp {
    template <typename T> static __device__ T identity() { return Limits<T>::highest(); }
    template <typename T> static __device__ __forceinline__ T combine(T a, T b) {
        return nan_of(a) ? a : (nan_of(b) ? b : (a < b ? a : b));
    }
};
// all/any accumulate in bool: the input is tested for non-zero when loaded.
struct AllOp {
    template <typename T> static __device__ T identity() { return T(true); }
    template <typename T> static __device__ __forceinline__ T combine(T a, T b) { return a && b; }
};
struct AnyOp {
    template <typename T> static __device__ T identity() { return T(false); }
    template <typename T> static __device__ __forceinline__ T combine(T a, T b) { return a || b; }
};

// Shuffle that also moves bool and 64-bit values (through int / long long).
template <typename T> __device__ __forceinline__ T shfl_down(T v, int delta) {
    return __shfl_down_sync(0xffffffffu, v, delta);
}
__device__ __forceinline__ bool shfl_down(bool v, int delta) {
    return __shfl_down_sync(0xffffffffu, static_cast<int>(v), delta) != 0;
}

// Reduce v over the block; the result is valid in thread 0.  blockDim.x must be a
// multiple of 32 and at most 1024.  `shared` holds 32 values.
template <typename Op, typename T>
__device__ __forceinline__ T block_reduce(T v, T* shared) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v = Op::combine(v, shfl_down(v, d));
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    const int warps = blockDim.x >> 5;
    v = threadIdx.x < warps ? shared[threadIdx.x] : Op::template identity<T>();
    if (warp == 0) {
#pragma unroll
        for (int d = 16; d > 0; d >>= 1) v = Op::combine(v, shfl_down(v, d));
    }
    __syncthreads();  // shared may be reused by the caller's next row
    return v;
}

}  // namespace ad

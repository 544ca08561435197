// The shape and per-operand strides of a strided/broadcast elementwise launch.
//
// Passed to kernels by value.  The Python side (backends/cuda/_launch.py, GEOMETRY)
// builds a NumPy structured scalar with exactly this layout: n (8 bytes), ndim and a
// pad (4 + 4), shape[8] and strides[3][8] (in elements; 0 for a broadcast dimension;
// operand 0 and 1 are inputs, 2 a third input).  The output is always a fresh
// C-contiguous array, so output element i is at offset i.  Dimensions are collapsed
// before the launch; more than AD_MAX_DIMS after collapsing are made contiguous first.
#pragma once

#define AD_MAX_DIMS 8
#define AD_MAX_OPERANDS 3

namespace ad {

struct Geometry {
    long long n;
    int ndim;
    int pad;
    long long shape[AD_MAX_DIMS];
    long long strides[AD_MAX_OPERANDS][AD_MAX_DIMS];
};

// Element offsets of output element i in operands 0..K-1: peel dimensions from the
// last (fastest) one.  64-bit throughout: tensors may exceed 2^31 elements.
template <int K>
__device__ __forceinline__ void offsets(const Geometry& g, long long i, long long (&off)[K]) {
#pragma unroll
    for (int k = 0; k < K; ++k) off[k] = 0;
    for (int d = g.ndim - 1; d >= 0; --d) {
        const long long size = g.shape[d];
        const long long idx = i % size;
        i /= size;
#pragma unroll
        for (int k = 0; k < K; ++k) off[k] += idx * g.strides[k][d];
    }
}

// Grid-stride loop bounds (64-bit).
__device__ __forceinline__ long long first_index() {
    return static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ long long grid_stride() {
    return static_cast<long long>(blockDim.x) * gridDim.x;
}

}  // namespace ad

// Reductions over rows and scans along rows.
//
// The Python side (backends/cuda/reduction.py) moves the reduced axes last and makes
// the operand C-contiguous, so the input is a [rows, cols] matrix (PyTorch reduces
// strided inputs in place; the copy costs one extra pass for non-last axes).
//
// reduce_rows<Op, In, Acc, Out>(x, out, rows, cols, chunk):
//   grid (gx, chunks): block (bx, c) reduces columns [c*chunk, min((c+1)*chunk, cols))
//   of rows bx, bx + gx, ... into out[row * chunks + c].  With one chunk this is the
//   whole reduction; with several (few long rows: a full sum) the launcher runs it
//   again on the [rows, chunks] partials (In = Acc) - a two-pass grid reduction that
//   keeps every SM busy.
// reduce_flat<Op, In, Acc, Out>(x, partial, n): the first pass of a whole-array
//   reduction of a contiguous, 16-byte aligned array with 4-element vector loads
//   (bandwidth: a sum over 256M float32 must run near the memory's read speed); its
//   per-block partials are finished by reduce_rows.
//
// scan_rows<Op, In, Acc, Out>(x, out, rows, cols): one block per row (grid-stride over
//   rows), the row in tiles of blockDim.x elements: each tile is scanned in shared
//   memory (Hillis-Steele, log2(blockDim) steps) and offset by the running carry.
//
// Launch: blockDim.x = 256 (reduce) or 512 (scan), multiples of 32; shared memory
// is static.

#include "ad_types.cuh"
#include "ad_reduce.cuh"

template <typename Op, typename In, typename Acc, typename Out>
__global__ void reduce_rows(const In* __restrict__ x, Out* __restrict__ out, long long rows,
                            long long cols, long long chunk) {
    __shared__ Acc shared[32];
    const long long chunks = gridDim.y;
    const long long c = blockIdx.y;
    const long long begin = c * chunk;
    const long long end = begin + chunk < cols ? begin + chunk : cols;
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const In* base = x + row * cols;
        Acc acc = Op::template identity<Acc>();
        for (long long i = begin + threadIdx.x; i < end; i += blockDim.x) {
            acc = Op::combine(acc, ad::cast<Acc>(base[i]));
        }
        acc = ad::block_reduce<Op>(acc, shared);
        if (threadIdx.x == 0) out[row * chunks + c] = ad::cast<Out>(acc);
    }
}

// Contiguous whole-array reduction's first pass with 16-byte vector loads: each block
// covers a contiguous span; the caller guarantees x is 16-byte aligned and
// sizeof(In) * 4 <= 16 (float32 and smaller: 4 elements per load via a struct).
template <typename T> struct alignas(4 * sizeof(T)) Vec4 { T v[4]; };

template <typename Op, typename In, typename Acc, typename Out>
__global__ void reduce_flat(const In* __restrict__ x, Out* __restrict__ partial, long long n) {
    __shared__ Acc shared[32];
    Acc acc = Op::template identity<Acc>();
    const long long n4 = n / 4;
    const Vec4<In>* x4 = reinterpret_cast<const Vec4<In>*>(x);
    const long long stride = static_cast<long long>(blockDim.x) * gridDim.x;
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4;
         i += stride) {
        const Vec4<In> v = x4[i];
#pragma unroll
        for (int k = 0; k < 4; ++k) acc = Op::combine(acc, ad::cast<Acc>(v.v[k]));
    }
    // The tail (n % 4 elements), by the first threads of block 0.
    if (blockIdx.x == 0 && threadIdx.x < n - n4 * 4) {
        acc = Op::combine(acc, ad::cast<Acc>(x[n4 * 4 + threadIdx.x]));
    }
    acc = ad::block_reduce<Op>(acc, shared);
    if (threadIdx.x == 0) partial[blockIdx.x] = ad::cast<Out>(acc);
}

template <typename Op, typename In, typename Acc, typename Out>
__global__ void scan_rows(const In* __restrict__ x, Out* __restrict__ out, long long rows,
                          long long cols) {
    __shared__ Acc tile[512];
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const In* src = x + row * cols;
        Out* dst = out + row * cols;
        Acc carry = Op::template identity<Acc>();
        for (long long start = 0; start < cols; start += blockDim.x) {
            const long long i = start + threadIdx.x;
            tile[threadIdx.x] = i < cols ? ad::cast<Acc>(src[i]) : Op::template identity<Acc>();
            __syncthreads();
            for (unsigned int d = 1; d < blockDim.x; d <<= 1) {
                const Acc add = threadIdx.x >= d ? tile[threadIdx.x - d] : Op::template identity<Acc>();
                __syncthreads();
                tile[threadIdx.x] = Op::combine(tile[threadIdx.x], add);
                __syncthreads();
            }
            const Acc value = Op::combine(carry, tile[threadIdx.x]);
            if (i < cols) dst[i] = ad::cast<Out>(value);
            carry = Op::combine(carry, tile[blockDim.x - 1]);
            __syncthreads();  // every thread read tile[last] before the next tile is loaded
        }
    }
}

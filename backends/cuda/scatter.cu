// scatter_(reduce="multiply"): x[offsets[i]] *= values[i] for every i, repeated offsets included.
//
// CUDA has no atomic multiply, so each update is a compare-and-swap loop on the word
// holding the element: the element's own word for 4- and 8-byte types, the enclosing
// aligned 32-bit word for 1- and 2-byte types (bool, int8, uint8, int16, half,
// bfloat16), changing only the element's bits.  The order in which repeated offsets
// are applied is unspecified, as in PyTorch (products of floats may differ in the
// last bits between runs).
//
// Launch: a grid-stride loop over n updates; any grid size works.

#include <cuda_fp16.h>
#include <cuda_bf16.h>

namespace scatter_detail {

template <typename To, typename From>
__device__ __forceinline__ To bit_cast(const From& from) {
    static_assert(sizeof(To) == sizeof(From), "bit_cast needs types of one size");
    // Byte by byte (NVRTC has neither __builtin_memcpy nor <cstring>); compiles to a move.
    To to;
    const unsigned char* src = reinterpret_cast<const unsigned char*>(&from);
    unsigned char* dst = reinterpret_cast<unsigned char*>(&to);
    for (int i = 0; i < static_cast<int>(sizeof(To)); ++i) dst[i] = src[i];
    return to;
}

// The unsigned integer of a size (no <type_traits>: NVRTC has no host standard library).
template <int Size> struct UnsignedOf;
template <> struct UnsignedOf<1> { using type = unsigned char; };
template <> struct UnsignedOf<2> { using type = unsigned short; };

template <typename T>
__device__ __forceinline__ T times(T a, T b) { return a * b; }
template <>
__device__ __forceinline__ bool times<bool>(bool a, bool b) { return a && b; }
template <>
__device__ __forceinline__ __half times<__half>(__half a, __half b) {
    return __float2half(__half2float(a) * __half2float(b));  // computed in float, as PyTorch
}
template <>
__device__ __forceinline__ __nv_bfloat16 times<__nv_bfloat16>(__nv_bfloat16 a, __nv_bfloat16 b) {
    return __float2bfloat16(__bfloat162float(a) * __bfloat162float(b));
}

template <typename T>
__device__ void atomic_mul(T* address, T value) {
    if constexpr (sizeof(T) == 8) {
        unsigned long long* word = reinterpret_cast<unsigned long long*>(address);
        unsigned long long old = *word, assumed;
        do {
            assumed = old;
            T next = times(bit_cast<T>(assumed), value);
            old = atomicCAS(word, assumed, bit_cast<unsigned long long>(next));
        } while (assumed != old);
    } else if constexpr (sizeof(T) == 4) {
        unsigned int* word = reinterpret_cast<unsigned int*>(address);
        unsigned int old = *word, assumed;
        do {
            assumed = old;
            T next = times(bit_cast<T>(assumed), value);
            old = atomicCAS(word, assumed, bit_cast<unsigned int>(next));
        } while (assumed != old);
    } else {
        // 1- or 2-byte element inside an aligned 32-bit word (a 2-byte element is 2-byte
        // aligned, so it never straddles two words).
        using Bits = typename UnsignedOf<sizeof(T)>::type;
        const size_t addr = reinterpret_cast<size_t>(address);
        unsigned int* word = reinterpret_cast<unsigned int*>(addr & ~static_cast<size_t>(3));
        const unsigned int shift = static_cast<unsigned int>(addr & 3) * 8;
        const unsigned int mask = ((1u << (sizeof(T) * 8)) - 1u) << shift;
        unsigned int old = *word, assumed;
        do {
            assumed = old;
            const Bits mine = static_cast<Bits>((assumed & mask) >> shift);
            const T next = times(bit_cast<T>(mine), value);
            const unsigned int bits = static_cast<unsigned int>(bit_cast<Bits>(next)) << shift;
            old = atomicCAS(word, assumed, (assumed & ~mask) | (bits & mask));
        } while (assumed != old);
    }
}

}  // namespace scatter_detail

template <typename T>
__global__ void scatter_mul(T* x, const long long* offsets, const T* values, long long n) {
    const long long stride = static_cast<long long>(blockDim.x) * gridDim.x;
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        scatter_detail::atomic_mul(x + offsets[i], values[i]);
    }
}

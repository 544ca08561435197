// cudasim.h: what a CUDA C++ source needs to compile as host C++ and run on the CPU.
//
// Force-included (g++ -include cudasim.h) before each of backends/cuda's sources by
// tests/cudasim/_build.py; the runtime behind it is cudasim_runtime.cpp.  Every CUDA
// thread of a block is a fiber of its own (its own stack and registers), scheduled
// cooperatively on one OS thread, one block after another:
//   - __syncthreads() is a real barrier: a thread waits there until every live thread
//     of its block has arrived (at the same call site: a divergent barrier is an error);
//   - __shfl_*_sync() is a rendezvous of the lanes named by the mask of one warp
//     (32 consecutive threads): each lane deposits its value, the last one to arrive
//     computes what each lane reads, and all go on;
//   - atomics yield to the scheduler before they act, so the other threads of the
//     block run between a thread's plain load and its compare-and-swap;
//   - __shared__ variables are function statics, which the runtime fills with 0xff
//     bytes (NaN, -1) before each block, so no block sees another's values.
// threadIdx, blockIdx, blockDim and gridDim read the running fiber's and block's state.
#pragma once

#include <cuda_fp16.h>  // host versions: the toolkit's headers work without nvcc
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

// The toolkit's host_defines.h makes these empty or plain attributes for a host compiler;
// give them the meaning the emulation needs.
#undef __global__
#undef __device__
#undef __host__
#undef __shared__
#undef __forceinline__
#undef __noinline__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
// One static per declaration.  The build lists these statics from the library's symbol
// table (tests/cudasim/_build.py) and the runtime refills them with 0xff before each
// block: GCC ignores section attributes on statics of templates, so no section can
// gather them.
#define __shared__ static __attribute__((aligned(16)))

namespace adsim {

struct Index3 {
    unsigned int x, y, z;
};

// The running CUDA thread (a fiber) and its block: only ever read by the running fiber.
struct ThreadState {
    Index3 idx;
};
struct BlockState {
    Index3 block_idx, block_dim, grid_dim;
};
extern ThreadState* current_thread;
extern BlockState current_block;

void syncthreads(const char* file, int line);
void syncwarp(const char* file, int line, unsigned int mask = 0xffffffffu);
void yield();
// mode: 0 idx, 1 up, 2 down, 3 xor (CUDA's __shfl_sync family); value as raw bits.
unsigned long long shuffle(unsigned int mask, unsigned long long bits, int size, int mode,
                           int arg, int width, const char* file, int line);
[[noreturn]] void trap(const char* what);

template <typename T>
inline T shuffle_value(unsigned int mask, T v, int mode, int arg, int width, const char* file,
                       int line) {
    static_assert(sizeof(T) <= 8, "shuffles move at most 8 bytes");
    unsigned long long bits = 0;
    memcpy(&bits, &v, sizeof(T));
    bits = shuffle(mask, bits, static_cast<int>(sizeof(T)), mode, arg, width, file, line);
    T out;
    memcpy(&out, &bits, sizeof(T));
    return out;
}

}  // namespace adsim

#define threadIdx (::adsim::current_thread->idx)
#define blockIdx (::adsim::current_block.block_idx)
#define blockDim (::adsim::current_block.block_dim)
#define gridDim (::adsim::current_block.grid_dim)
#define warpSize 32
#define __syncthreads() ::adsim::syncthreads(__FILE__, __LINE__)
#define __syncwarp(...) ::adsim::syncwarp(__FILE__, __LINE__, ##__VA_ARGS__)
#define __trap() ::adsim::trap("__trap() called")

// Shuffles: CUDA's overload set (so a bool or a struct fails to compile here as there),
// each a warp rendezvous; the macros add the call site for error messages.
#define ADSIM_SHUFFLE_OVERLOADS(T)                                                         \
    inline T adsim_shfl(const char* f, int l, int mode, unsigned int mask, T v, int arg,  \
                        int width = 32) {                                                 \
        return ::adsim::shuffle_value<T>(mask, v, mode, arg, width, f, l);              \
    }
ADSIM_SHUFFLE_OVERLOADS(int)
ADSIM_SHUFFLE_OVERLOADS(unsigned int)
ADSIM_SHUFFLE_OVERLOADS(long)
ADSIM_SHUFFLE_OVERLOADS(unsigned long)
ADSIM_SHUFFLE_OVERLOADS(long long)
ADSIM_SHUFFLE_OVERLOADS(unsigned long long)
ADSIM_SHUFFLE_OVERLOADS(float)
ADSIM_SHUFFLE_OVERLOADS(double)
ADSIM_SHUFFLE_OVERLOADS(__half)
ADSIM_SHUFFLE_OVERLOADS(__nv_bfloat16)
#undef ADSIM_SHUFFLE_OVERLOADS
#define __shfl_sync(...) adsim_shfl(__FILE__, __LINE__, 0, __VA_ARGS__)
#define __shfl_up_sync(...) adsim_shfl(__FILE__, __LINE__, 1, __VA_ARGS__)
#define __shfl_down_sync(...) adsim_shfl(__FILE__, __LINE__, 2, __VA_ARGS__)
#define __shfl_xor_sync(...) adsim_shfl(__FILE__, __LINE__, 3, __VA_ARGS__)

// Atomics: CUDA's signatures; each first lets the other threads of the block run.
inline unsigned int atomicCAS(unsigned int* a, unsigned int compare, unsigned int value) {
    ::adsim::yield();
    const unsigned int old = *a;
    if (old == compare) *a = value;
    return old;
}
inline int atomicCAS(int* a, int compare, int value) {
    ::adsim::yield();
    const int old = *a;
    if (old == compare) *a = value;
    return old;
}
inline unsigned long long atomicCAS(unsigned long long* a, unsigned long long compare,
                                    unsigned long long value) {
    ::adsim::yield();
    const unsigned long long old = *a;
    if (old == compare) *a = value;
    return old;
}
inline unsigned short atomicCAS(unsigned short* a, unsigned short compare,
                                unsigned short value) {
    ::adsim::yield();
    const unsigned short old = *a;
    if (old == compare) *a = value;
    return old;
}
#define ADSIM_ATOMIC_RMW(name, T, expr) \
    inline T name(T* a, T v) {          \
        ::adsim::yield();               \
        const T old = *a;               \
        *a = (expr);                    \
        return old;                     \
    }
ADSIM_ATOMIC_RMW(atomicAdd, int, old + v)
ADSIM_ATOMIC_RMW(atomicAdd, unsigned int, old + v)
ADSIM_ATOMIC_RMW(atomicAdd, unsigned long long, old + v)
ADSIM_ATOMIC_RMW(atomicAdd, float, old + v)
ADSIM_ATOMIC_RMW(atomicAdd, double, old + v)
ADSIM_ATOMIC_RMW(atomicExch, int, v)
ADSIM_ATOMIC_RMW(atomicExch, unsigned int, v)
ADSIM_ATOMIC_RMW(atomicExch, unsigned long long, v)
ADSIM_ATOMIC_RMW(atomicExch, float, v)
ADSIM_ATOMIC_RMW(atomicMax, int, old > v ? old : v)
ADSIM_ATOMIC_RMW(atomicMax, unsigned int, old > v ? old : v)
ADSIM_ATOMIC_RMW(atomicMax, long long, old > v ? old : v)
ADSIM_ATOMIC_RMW(atomicMax, unsigned long long, old > v ? old : v)
ADSIM_ATOMIC_RMW(atomicMin, int, old < v ? old : v)
ADSIM_ATOMIC_RMW(atomicMin, unsigned int, old < v ? old : v)
ADSIM_ATOMIC_RMW(atomicMin, long long, old < v ? old : v)
ADSIM_ATOMIC_RMW(atomicMin, unsigned long long, old < v ? old : v)
#undef ADSIM_ATOMIC_RMW

// Reinterpreting intrinsics (device-only in the toolkit's headers).
inline float __int_as_float(int x) { float f; memcpy(&f, &x, 4); return f; }
inline int __float_as_int(float x) { int i; memcpy(&i, &x, 4); return i; }
inline float __uint_as_float(unsigned int x) { float f; memcpy(&f, &x, 4); return f; }
inline unsigned int __float_as_uint(float x) { unsigned int i; memcpy(&i, &x, 4); return i; }
inline double __longlong_as_double(long long x) { double d; memcpy(&d, &x, 8); return d; }
inline long long __double_as_longlong(double x) { long long i; memcpy(&i, &x, 8); return i; }

// Device math the C library lacks (host libm otherwise: CUDA's libdevice may differ in
// the last bits, which only the GPU run checks).
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }

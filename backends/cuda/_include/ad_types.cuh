// Scalar types of arraydispatch's CUDA kernels: conversions and the "opmath" compute type.
//
// Kernels load an element of its storage type, convert it to the compute type, do the
// math, and convert the result to the output's storage type.  float16 and bfloat16 are
// computed in float, as PyTorch's opmath_type does; everything else in itself.
// No host standard-library headers: NVRTC (which CuPy compiles with) has none.
#pragma once

#include <cuda_fp16.h>
#include <cuda_bf16.h>

// Scalar math is host-and-device, so tests can run it on the host (no GPU needed).
#define AD_HD __host__ __device__

namespace ad {

// The type arithmetic happens in.
template <typename T> struct OpMath { using type = T; };
template <> struct OpMath<__half> { using type = float; };
template <> struct OpMath<__nv_bfloat16> { using type = float; };
template <typename T> using opmath_t = typename OpMath<T>::type;

// Any scalar as float or double (half and bfloat16 through their intrinsics).
template <typename T> AD_HD __forceinline__ float to_float(T x) { return static_cast<float>(x); }
template <> AD_HD __forceinline__ float to_float<__half>(__half x) { return __half2float(x); }
template <> AD_HD __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 x) {
    return __bfloat162float(x);
}

// cast<To>(x): C++ conversion rules, except that half/bfloat16 go through float and
// conversions to bool test for non-zero (as PyTorch's static_cast_with_inter_type).
template <typename To> struct Cast {
    template <typename From> static AD_HD __forceinline__ To from(From x) {
        return static_cast<To>(x);
    }
    static AD_HD __forceinline__ To from(__half x) { return static_cast<To>(__half2float(x)); }
    static AD_HD __forceinline__ To from(__nv_bfloat16 x) {
        return static_cast<To>(__bfloat162float(x));
    }
};
template <> struct Cast<bool> {
    template <typename From> static AD_HD __forceinline__ bool from(From x) {
        return x != From(0);
    }
    static AD_HD __forceinline__ bool from(bool x) { return x; }
    static AD_HD __forceinline__ bool from(__half x) { return __half2float(x) != 0.0f; }
    static AD_HD __forceinline__ bool from(__nv_bfloat16 x) {
        return __bfloat162float(x) != 0.0f;
    }
};
template <> struct Cast<__half> {
    template <typename From> static AD_HD __forceinline__ __half from(From x) {
        return __float2half_rn(static_cast<float>(x));
    }
    static AD_HD __forceinline__ __half from(double x) { return __double2half(x); }
    static AD_HD __forceinline__ __half from(__half x) { return x; }
    static AD_HD __forceinline__ __half from(__nv_bfloat16 x) {
        return __float2half_rn(__bfloat162float(x));
    }
};
template <> struct Cast<__nv_bfloat16> {
    template <typename From> static AD_HD __forceinline__ __nv_bfloat16 from(From x) {
        return __float2bfloat16_rn(static_cast<float>(x));
    }
    static AD_HD __forceinline__ __nv_bfloat16 from(double x) { return __double2bfloat16(x); }
    static AD_HD __forceinline__ __nv_bfloat16 from(__nv_bfloat16 x) { return x; }
    static AD_HD __forceinline__ __nv_bfloat16 from(__half x) {
        return __float2bfloat16_rn(__half2float(x));
    }
};

template <typename To, typename From> AD_HD __forceinline__ To cast(From x) {
    return Cast<To>::from(x);
}

// The bits of a float or double and back, on host and device (the __float_as_uint family
// is device-only in nvcc's host pass; NVRTC compiles device code only and never sees the
// host branch, which g++ and nvcc's host compiler accept).
template <typename To, typename From> AD_HD __forceinline__ To bit_cast(From x) {
    static_assert(sizeof(To) == sizeof(From), "bit_cast: sizes differ");
#ifdef __CUDA_ARCH__
    union { From from; To to; } u = {x};
    return u.to;
#else
    To to;
    __builtin_memcpy(&to, &x, sizeof to);
    return to;
#endif
}

// Extremes used as reduction identities.
template <typename T> struct Limits;
template <> struct Limits<bool> {
    static __device__ bool lowest() { return false; } static __device__ bool highest() { return true; }
};
template <> struct Limits<unsigned char> {
    static __device__ unsigned char lowest() { return 0; }
    static __device__ unsigned char highest() { return 255; }
};
template <> struct Limits<signed char> {
    static __device__ signed char lowest() { return -128; }
    static __device__ signed char highest() { return 127; }
};
template <> struct Limits<short> {
    static __device__ short lowest() { return -32768; }
    static __device__ short highest() { return 32767; }
};
template <> struct Limits<int> {
    static __device__ int lowest() { return -2147483647 - 1; }
    static __device__ int highest() { return 2147483647; }
};
template <> struct Limits<long long> {
    static __device__ long long lowest() { return -9223372036854775807LL - 1; }
    static __device__ long long highest() { return 9223372036854775807LL; }
};
template <> struct Limits<float> {
    static __device__ float lowest() { return -__int_as_float(0x7f800000); }  // -inf
    static __device__ float highest() { return __int_as_float(0x7f800000); }  // +inf
};
template <> struct Limits<double> {
    static __device__ double lowest() { return -__longlong_as_double(0x7ff0000000000000LL); }
    static __device__ double highest() { return __longlong_as_double(0x7ff0000000000000LL); }
};

}  // namespace ad

// The math of every raw elementwise operator: one small struct per operator.
//
// A functor is built from three double parameters (round's decimals, softplus's beta
// and threshold, ...; unused ones are 0) and called on values of the compute type
// (ad::opmath_t of the storage type: float for float16/bfloat16).  It returns the
// compute type, or bool for predicates and comparisons.  Semantics are PyTorch's where
// they differ from C's: NaN propagates through maximum/minimum/relu, sign(nan) = 0,
// shifts by the type's width or more give 0 (or -1 for negative right shifts), round
// is half-to-even, integer division by zero gives 0 instead of trapping (the CPU
// backend raises; PyTorch's CUDA kernels do not check either).
#pragma once

#include "ad_types.cuh"

namespace ad {

// float/double overloads of the math library (device code has both spellings; these
// pick by type so one functor template serves both).
#define AD_MATH1(name)                                                                  \
    AD_HD __forceinline__ float name##_(float x) { return ::name##f(x); }           \
    AD_HD __forceinline__ double name##_(double x) { return ::name(x); }
AD_MATH1(exp) AD_MATH1(exp2) AD_MATH1(expm1) AD_MATH1(log) AD_MATH1(log2) AD_MATH1(log10)
AD_MATH1(log1p) AD_MATH1(sqrt) AD_MATH1(rsqrt) AD_MATH1(sin) AD_MATH1(cos) AD_MATH1(tan)
AD_MATH1(asin) AD_MATH1(acos) AD_MATH1(atan) AD_MATH1(sinh) AD_MATH1(cosh) AD_MATH1(tanh)
AD_MATH1(asinh) AD_MATH1(acosh) AD_MATH1(atanh) AD_MATH1(erf) AD_MATH1(erfc) AD_MATH1(floor)
AD_MATH1(ceil) AD_MATH1(trunc) AD_MATH1(rint) AD_MATH1(fabs)
#undef AD_MATH1
#define AD_MATH2(name)                                                                   \
    AD_HD __forceinline__ float name##_(float x, float y) { return ::name##f(x, y); } \
    AD_HD __forceinline__ double name##_(double x, double y) { return ::name(x, y); }
AD_MATH2(pow) AD_MATH2(atan2) AD_MATH2(hypot) AD_MATH2(fmod) AD_MATH2(copysign)
#undef AD_MATH2

template <typename T> AD_HD __forceinline__ bool is_nan(T x) { return x != x; }
template <typename T> AD_HD __forceinline__ bool is_inf(T) { return false; }
AD_HD __forceinline__ bool is_inf(float x) { return ::isinf(x); }
AD_HD __forceinline__ bool is_inf(double x) { return ::isinf(x); }

template <typename T> AD_HD __forceinline__ T floor_(T x) { return x; }  // integers
template <typename T> AD_HD __forceinline__ T ceil_(T x) { return x; }
template <typename T> AD_HD __forceinline__ T trunc_(T x) { return x; }
template <typename T> AD_HD __forceinline__ T rint_(T x) { return x; }

struct Params {
    double p0, p1, p2;
};

#define AD_UNARY(Name, expr)                                                   \
    struct Name {                                                              \
        Params p;                                                              \
        AD_HD Name(double a, double b, double c) : p{a, b, c} {}          \
        template <typename T> AD_HD __forceinline__ auto operator()(T x) const { return (expr); } \
    };
#define AD_BINARY(Name, expr)                                                  \
    struct Name {                                                              \
        Params p;                                                              \
        AD_HD Name(double a, double b, double c) : p{a, b, c} {}          \
        template <typename T> AD_HD __forceinline__ auto operator()(T a, T b) const { return (expr); } \
    };

// -- unary -------------------------------------------------------------------------------------
AD_UNARY(Neg, T(-x))
AD_UNARY(Abs, T(x < T(0) ? T(-x) : x))
AD_UNARY(Sign, T((T(0) < x) - (x < T(0))))
AD_UNARY(Exp, exp_(x))
AD_UNARY(Exp2, exp2_(x))
AD_UNARY(Expm1, expm1_(x))
AD_UNARY(Log, log_(x))
AD_UNARY(Log2, log2_(x))
AD_UNARY(Log10, log10_(x))
AD_UNARY(Log1p, log1p_(x))
AD_UNARY(Sqrt, sqrt_(x))
AD_UNARY(Rsqrt, T(T(1) / sqrt_(x)))  // not rsqrtf: PyTorch's CUDA rsqrt is exact to 1 ulp
AD_UNARY(Square, T(x * x))
AD_UNARY(Reciprocal, T(T(1) / x))
AD_UNARY(Sin, sin_(x))
AD_UNARY(Cos, cos_(x))
AD_UNARY(Tan, tan_(x))
AD_UNARY(Asin, asin_(x))
AD_UNARY(Acos, acos_(x))
AD_UNARY(Atan, atan_(x))
AD_UNARY(Sinh, sinh_(x))
AD_UNARY(Cosh, cosh_(x))
AD_UNARY(Tanh, tanh_(x))
AD_UNARY(Asinh, asinh_(x))
AD_UNARY(Acosh, acosh_(x))
AD_UNARY(Atanh, atanh_(x))
AD_UNARY(Sigmoid, T(T(1) / (T(1) + exp_(T(-x)))))
AD_UNARY(Relu, T((is_nan(x) || x > T(0)) ? x : T(0)))
AD_UNARY(Silu, T(x / (T(1) + exp_(T(-x)))))
AD_UNARY(Erf, erf_(x))
AD_UNARY(Erfc, erfc_(x))
AD_UNARY(Floor, floor_(x))
AD_UNARY(Ceil, ceil_(x))
AD_UNARY(Trunc, trunc_(x))
AD_UNARY(Frac, T(x - trunc_(x)))
AD_UNARY(LogicalNot, bool(!cast<bool>(x)))
AD_UNARY(IsNan, bool(is_nan(x)))
AD_UNARY(IsInf, bool(is_inf(x)))
AD_UNARY(IsFinite, bool(!is_nan(x) && !is_inf(x)))

template <typename T> AD_HD __forceinline__ T bitwise_not(T x) { return T(~x); }
AD_HD __forceinline__ bool bitwise_not(bool x) { return !x; }
AD_UNARY(BitwiseNot, bitwise_not(x))

// round(decimals=p0): half-to-even, scaled as PyTorch does (x * 10^d for d > 0,
// x / 10^-d for d < 0, so the scale is exact for the common small d).
template <typename T> AD_HD __forceinline__ T round_decimals(T x, double d) {
    if (d == 0) return rint_(x);
    const bool neg = d < 0;
    const T scale = T(::pow(10.0, neg ? -d : d));
    return neg ? T(rint_(T(x / scale)) * scale) : T(rint_(T(x * scale)) / scale);
}
AD_UNARY(Round, round_decimals(x, p.p0))

// gelu: p0 = 0 exact (erf), 1 tanh approximation.
template <typename T> AD_HD __forceinline__ T gelu(T x, double approximate) {
    if (approximate == 0) return T(T(0.5) * x * (T(1) + erf_(T(x * T(0.70710678118654752440)))));
    const T inner = T(0.79788456080286535588) * (x + T(0.044715) * x * x * x);
    return T(T(0.5) * x * (T(1) + tanh_(inner)));
}
AD_UNARY(Gelu, gelu(x, p.p0))

// softplus(beta=p0, threshold=p1): x where beta * x > threshold (linear region).
template <typename T> AD_HD __forceinline__ T softplus(T x, double beta, double threshold) {
    const T bx = T(x * T(beta));
    return bx > T(threshold) ? x : T(log1p_(exp_(bx)) / T(beta));
}
AD_UNARY(Softplus, softplus(x, p.p0, p.p1))

// nan_to_num(nan=p0, posinf=p1, neginf=p2): the caller fills in the dtype's defaults.
template <typename T> AD_HD __forceinline__ T nan_to_num(T x, double nan, double pos, double neg) {
    if (is_nan(x)) return T(nan);
    if (is_inf(x)) return x > T(0) ? T(pos) : T(neg);
    return x;
}
AD_UNARY(NanToNum, nan_to_num(x, p.p0, p.p1, p.p2))

// -- binary ------------------------------------------------------------------------------------
AD_BINARY(Add, T(a + b))
// add/sub with an alpha (p0; sub passes -alpha): ``a + alpha * b`` rounded once, as
// PyTorch's CUDA AddFunctor computes its opmath ``a + alpha * b`` (contracted to a fused
// multiply-add); alpha is rounded to the compute type first (float for half precision).
AD_HD __forceinline__ float add_alpha(float a, float b, double alpha) {
    return ::fmaf(static_cast<float>(alpha), b, a);
}
AD_HD __forceinline__ double add_alpha(double a, double b, double alpha) {
    return ::fma(alpha, b, a);
}
AD_BINARY(AddAlpha, add_alpha(a, b, p.p0))
AD_BINARY(Sub, T(a - b))
AD_BINARY(Mul, T(a * b))
AD_BINARY(TrueDiv, T(a / b))

template <typename T> AD_HD __forceinline__ T max_nan(T a, T b) {
    return is_nan(a) ? a : (is_nan(b) ? b : (a > b ? a : b));
}
template <typename T> AD_HD __forceinline__ T min_nan(T a, T b) {
    return is_nan(a) ? a : (is_nan(b) ? b : (a < b ? a : b));
}
AD_BINARY(Maximum, max_nan(a, b))
AD_BINARY(Minimum, min_nan(a, b))

// Python's floor division and remainder (the result takes the divisor's sign).
template <typename T> AD_HD __forceinline__ T floor_div(T a, T b) {
    if (b == T(0)) return T(0);
    T q = a / b;
    if ((a % b != T(0)) && ((a < T(0)) != (b < T(0)))) q = T(q - T(1));
    return q;
}
// Floats: CPython's float floor division (what NumPy and PyTorch follow), exactly.
template <typename F> AD_HD __forceinline__ F floor_div_float(F a, F b) {
    if (b == F(0)) return a / b;
    const F mod = fmod_(a, b);
    F div = (a - mod) / b;
    if (mod != F(0) && ((b < F(0)) != (mod < F(0)))) div -= F(1);
    if (div == F(0)) return copysign_(F(0), a / b);
    F floordiv = floor_(div);
    if (div - floordiv > F(0.5)) floordiv += F(1);
    return floordiv;
}
AD_HD __forceinline__ float floor_div(float a, float b) { return floor_div_float(a, b); }
AD_HD __forceinline__ double floor_div(double a, double b) { return floor_div_float(a, b); }
template <typename T> AD_HD __forceinline__ T py_mod(T a, T b) {
    if (b == T(0)) return T(0);
    T r = a % b;
    if (r != T(0) && ((r < T(0)) != (b < T(0)))) r = T(r + b);
    return r;
}
// Floats: PyTorch's remainder, fmod moved by the divisor where the signs differ; a zero
// keeps fmod's sign, the dividend's (Python and NumPy give it the divisor's).
template <typename F> AD_HD __forceinline__ F py_mod_float(F a, F b) {
    F r = fmod_(a, b);
    if (r != F(0) && ((r < F(0)) != (b < F(0)))) r += b;
    return r;
}
AD_HD __forceinline__ float py_mod(float a, float b) { return py_mod_float(a, b); }
AD_HD __forceinline__ double py_mod(double a, double b) { return py_mod_float(a, b); }
template <typename T> AD_HD __forceinline__ T c_mod(T a, T b) { return b == T(0) ? T(0) : T(a % b); }
AD_HD __forceinline__ float c_mod(float a, float b) { return ::fmodf(a, b); }
AD_HD __forceinline__ double c_mod(double a, double b) { return ::fmod(a, b); }
AD_BINARY(FloorDivide, floor_div(a, b))
AD_BINARY(Remainder, py_mod(a, b))
AD_BINARY(Fmod, c_mod(a, b))
AD_BINARY(Pow, pow_(a, b))
AD_BINARY(Atan2, atan2_(a, b))
AD_BINARY(Hypot, hypot_(a, b))

// nextafter in the storage type itself (NextAfter is instantiated with C = the storage type,
// _tables.STORAGE_COMPUTE): the neighbour of a half is a half, not a float's.  On the bit
// patterns, as c10::nextafter (and musl) do: NaN if either is NaN, `to` when they are
// equal, the smallest subnormal of `to`'s sign from a zero, else one step of the
// magnitude, which carries through infinity to the largest finite (inf -> 0 is 65504).
template <typename U> AD_HD __forceinline__ U next_bits(U from, U to, U sign) {
    const U abs_from = from & U(~sign), abs_to = to & U(~sign);
    if (abs_from == 0) return abs_to == 0 ? to : U((to & sign) | U(1));
    if (from == to) return to;
    return (abs_from > abs_to || ((from ^ to) & sign)) ? U(from - 1) : U(from + 1);
}
AD_HD __forceinline__ float nextafter_(float a, float b) {
    if (a != a || b != b) return a + b;
    const unsigned int r = next_bits(bit_cast<unsigned int>(a), bit_cast<unsigned int>(b), 0x80000000u);
    return bit_cast<float>(r);
}
AD_HD __forceinline__ double nextafter_(double a, double b) {
    if (a != a || b != b) return a + b;
    const unsigned long long r = next_bits(
        bit_cast<unsigned long long>(a), bit_cast<unsigned long long>(b), 0x8000000000000000ull);
    return bit_cast<double>(r);
}
template <typename T, typename Raw> AD_HD __forceinline__ T nextafter_16(T a, T b) {
    const float fa = to_float(a), fb = to_float(b);
    if (fa != fa || fb != fb) return cast<T>(fa + fb);
    Raw ra = a, rb = b;
    ra.x = next_bits<unsigned short>(ra.x, rb.x, 0x8000u);
    return T(ra);
}
AD_HD __forceinline__ __half nextafter_(__half a, __half b) {
    return nextafter_16<__half, __half_raw>(a, b);
}
AD_HD __forceinline__ __nv_bfloat16 nextafter_(__nv_bfloat16 a, __nv_bfloat16 b) {
    return nextafter_16<__nv_bfloat16, __nv_bfloat16_raw>(a, b);
}
AD_BINARY(NextAfter, nextafter_(a, b))

AD_BINARY(Eq, bool(a == b))
AD_BINARY(Ne, bool(a != b))
AD_BINARY(Lt, bool(a < b))
AD_BINARY(Le, bool(a <= b))
AD_BINARY(Gt, bool(a > b))
AD_BINARY(Ge, bool(a >= b))
AD_BINARY(LogicalAnd, bool(cast<bool>(a) && cast<bool>(b)))
AD_BINARY(LogicalOr, bool(cast<bool>(a) || cast<bool>(b)))
AD_BINARY(LogicalXor, bool(cast<bool>(a) != cast<bool>(b)))
AD_BINARY(BitwiseAnd, T(a & b))
AD_BINARY(BitwiseOr, T(a | b))
AD_BINARY(BitwiseXor, T(a ^ b))

template <typename T> AD_HD __forceinline__ T shift_left(T a, T b) {
    const long long bits = sizeof(T) * 8;
    if (b < T(0) || static_cast<long long>(b) >= bits) return T(0);
    return T(static_cast<unsigned long long>(a) << static_cast<long long>(b));
}
template <typename T> AD_HD __forceinline__ T shift_right(T a, T b) {
    const long long bits = sizeof(T) * 8;
    if (b < T(0) || static_cast<long long>(b) >= bits) return a < T(0) ? T(-1) : T(0);
    return T(a >> static_cast<long long>(b));
}
AD_BINARY(ShiftLeft, shift_left(a, b))
AD_BINARY(ShiftRight, shift_right(a, b))

#undef AD_UNARY
#undef AD_BINARY

}  // namespace ad

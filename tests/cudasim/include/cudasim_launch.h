// cudasim_launch.h: what the generated trampolines need (tests/cudasim/_build.py): unpack
// CuPy-style kernel arguments (an array of pointers to each argument's bytes) into the
// kernel's own parameter types, found by template deduction on the kernel's address, and
// run the grid; and describe those parameter types so Python can check each argument.
#pragma once

#include <stddef.h>
#include <string.h>

#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "cudasim.h"

#define ADSIM_EXPORT extern "C" __attribute__((visibility("default")))

namespace adsim {

struct Config {
    unsigned grid[3];
    unsigned block[3];
    int order;  // 0 forward, 1 reverse, 2 a seeded shuffle each round
    unsigned long long seed;
};

int run_grid(const Config* c, void (*body)(void*), void* ctx, char* err, int errlen);

// Type codes Python matches against NumPy dtypes: b1 i1 u1 ... f8, f2 (half), bf16, and
// s<size> for a struct passed by value (the Geometry).
template <typename T> struct TypeCode {
    static std::string get() {
        return (std::is_class<T>::value ? "s" : "?") + std::to_string(sizeof(T));
    }
};
#define ADSIM_CODE(T, c) \
    template <> struct TypeCode<T> { static std::string get() { return c; } };
ADSIM_CODE(bool, "b1")
ADSIM_CODE(signed char, "i1")
ADSIM_CODE(unsigned char, "u1")
ADSIM_CODE(char, "i1")
ADSIM_CODE(short, "i2")
ADSIM_CODE(unsigned short, "u2")
ADSIM_CODE(int, "i4")
ADSIM_CODE(unsigned int, "u4")
ADSIM_CODE(long, "i8")
ADSIM_CODE(unsigned long, "u8")
ADSIM_CODE(long long, "i8")
ADSIM_CODE(unsigned long long, "u8")
ADSIM_CODE(float, "f4")
ADSIM_CODE(double, "f8")
ADSIM_CODE(__half, "f2")
ADSIM_CODE(__nv_bfloat16, "bf16")
#undef ADSIM_CODE

template <typename T> std::string describe() {
    using U = std::remove_cv_t<T>;
    if constexpr (std::is_pointer<U>::value) {
        return "p" + TypeCode<std::remove_cv_t<std::remove_pointer_t<U>>>::get();
    } else {
        return "v" + TypeCode<U>::get();
    }
}

template <typename... P> const char* signature(void (*)(P...)) {
    static const std::string text = [] {
        std::string out;
        ((out += describe<P>() + ","), ...);
        if (!out.empty()) out.pop_back();
        return out;
    }();
    return text.c_str();
}

template <typename T> T load(void* p) {
    T v;
    memcpy(static_cast<void*>(&v), p, sizeof(T));
    return v;
}

template <typename... P> struct Call {
    void (*kernel)(P...);
    std::tuple<std::remove_cv_t<P>...> args;
    // Each CUDA thread gets its own copy of the arguments, as each GPU thread reads them.
    static void body(void* self) {
        Call* c = static_cast<Call*>(self);
        std::apply(c->kernel, c->args);
    }
};

template <typename... P, size_t... I>
int launch_with(void (*kernel)(P...), const Config* c, void** args, char* err, int errlen,
                std::index_sequence<I...>) {
    Call<P...> call{kernel, std::tuple<std::remove_cv_t<P>...>(
                                load<std::remove_cv_t<P>>(args[I])...)};
    return run_grid(c, &Call<P...>::body, &call, err, errlen);
}

template <typename... P>
int launch(void (*kernel)(P...), const Config* c, void** args, char* err, int errlen) {
    return launch_with(kernel, c, args, err, errlen, std::index_sequence_for<P...>{});
}

}  // namespace adsim

extern "C" unsigned long long adsim_counts[];

// One instance: adsim_k<i> runs it (counting the launch), adsim_s<i> describes its
// parameters.  The instance is the variadic part: template arguments hold commas.
#define ADSIM_INSTANCE(i, ...)                                                            \
    ADSIM_EXPORT int adsim_k##i(const ::adsim::Config* c, void** args, char* err,         \
                                int errlen) {                                             \
        ++adsim_counts[i];                                                                \
        return ::adsim::launch(&__VA_ARGS__, c, args, err, errlen);                       \
    }                                                                                     \
    ADSIM_EXPORT const char* adsim_s##i() { return ::adsim::signature(&__VA_ARGS__); }

// Elementwise kernels: one template per arity and layout, instantiated per
// (functor, output type, compute type, input type...).
//
//   unary_contig  <Op, R, C, A>     out[i] = R(Op(C(x[i])))
//   unary_strided <Op, R, C, A>     the same through a Geometry (strides, broadcasting)
//   binary_contig <Op, R, C, A, B>  out[i] = R(Op(C(x[i]), C(y[i])))
//   binary_strided<Op, R, C, A, B>
//   binary_scalar <Op, R, C, A>     out[i] = R(Op(C(x[i]), s)), s a kernel argument of type C
//   binary_scalar_contig: binary_scalar for a contiguous x
//
// C is the compute type (float for float16/bfloat16, the type itself otherwise).  Every
// kernel takes the functor's three double parameters.  Launch: 1-D grid, grid-stride
// loop, any grid size (the launcher caps it); outputs are fresh C-contiguous arrays.

#include "ad_types.cuh"
#include "ad_functors.cuh"
#include "ad_geometry.cuh"

template <typename Op, typename R, typename C, typename A>
__global__ void unary_contig(const A* __restrict__ x, R* __restrict__ out, long long n,
                             double p0, double p1, double p2) {
    const Op op(p0, p1, p2);
    for (long long i = ad::first_index(); i < n; i += ad::grid_stride()) {
        out[i] = ad::cast<R>(op(ad::cast<C>(x[i])));
    }
}

template <typename Op, typename R, typename C, typename A>
__global__ void unary_strided(const A* __restrict__ x, R* __restrict__ out, ad::Geometry g,
                              double p0, double p1, double p2) {
    const Op op(p0, p1, p2);
    for (long long i = ad::first_index(); i < g.n; i += ad::grid_stride()) {
        long long off[1];
        ad::offsets<1>(g, i, off);
        out[i] = ad::cast<R>(op(ad::cast<C>(x[off[0]])));
    }
}

template <typename Op, typename R, typename C, typename A, typename B>
__global__ void binary_contig(const A* __restrict__ x, const B* __restrict__ y,
                              R* __restrict__ out, long long n, double p0, double p1, double p2) {
    const Op op(p0, p1, p2);
    for (long long i = ad::first_index(); i < n; i += ad::grid_stride()) {
        out[i] = ad::cast<R>(op(ad::cast<C>(x[i]), ad::cast<C>(y[i])));
    }
}

template <typename Op, typename R, typename C, typename A, typename B>
__global__ void binary_strided(const A* __restrict__ x, const B* __restrict__ y,
                               R* __restrict__ out, ad::Geometry g, double p0, double p1,
                               double p2) {
    const Op op(p0, p1, p2);
    for (long long i = ad::first_index(); i < g.n; i += ad::grid_stride()) {
        long long off[2];
        ad::offsets<2>(g, i, off);
        out[i] = ad::cast<R>(op(ad::cast<C>(x[off[0]]), ad::cast<C>(y[off[1]])));
    }
}

// Tensor op scalar.  x may be strided: g describes x's layout (operand 0).
template <typename Op, typename R, typename C, typename A>
__global__ void binary_scalar(const A* __restrict__ x, C s, R* __restrict__ out, ad::Geometry g,
                              double p0, double p1, double p2) {
    const Op op(p0, p1, p2);
    for (long long i = ad::first_index(); i < g.n; i += ad::grid_stride()) {
        long long off[1];
        ad::offsets<1>(g, i, off);
        out[i] = ad::cast<R>(op(ad::cast<C>(x[off[0]]), s));
    }
}

template <typename Op, typename R, typename C, typename A>
__global__ void binary_scalar_contig(const A* __restrict__ x, C s, R* __restrict__ out,
                                     long long n, double p0, double p1, double p2) {
    const Op op(p0, p1, p2);
    for (long long i = ad::first_index(); i < n; i += ad::grid_stride()) {
        out[i] = ad::cast<R>(op(ad::cast<C>(x[i]), s));
    }
}

// Binary searches, one thread per value (Note [Searching operators] in
// backends/common/searching.py).
//
// searchsorted_rows<T, Out>(bd, sorter, values, out, n_values, per_row, n, batched, right,
//   has_sorter): out[i] = the position of values[i] in its row of the sorted boundaries
//   bd: row i / per_row of a [rows, n] matrix when batched, else the one row.  PyTorch's
//   search (ATen's cus_lower_bound / cus_upper_bound), comparisons included: go right
//   while !(b >= v) (left) or !(b > v) (right), so a NaN value goes past every element
//   and NaN boundaries send the search right, as in PyTorch.  With has_sorter, the row's
//   k-th element is bd[row_start + sorter[row_start + k]].
// isin_sorted<T>(elements, sorted, out, n, m, invert): out[i] = whether elements[i] is
//   among the m test elements, sorted ascending with NaNs last (CuPy's sort): the first
//   position not less than the element, then an equality test (a NaN never equals).
//
// All arrays are contiguous; half and bfloat16 compare in float (exact).  Launch: a
// grid-stride loop over the values; any grid size works.

#include "ad_types.cuh"

template <typename T, typename Out>
__global__ void searchsorted_rows(const T* __restrict__ bd, const long long* __restrict__ sorter,
                                  const T* __restrict__ values, Out* __restrict__ out,
                                  long long n_values, long long per_row, long long n,
                                  int batched, int right, int has_sorter) {
    using M = ad::opmath_t<T>;
    const long long stride = static_cast<long long>(blockDim.x) * gridDim.x;
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
         i < n_values; i += stride) {
        const M v = ad::cast<M>(values[i]);
        const long long base = batched ? (i / per_row) * n : 0;
        long long start = 0, end = n;
        while (start < end) {
            const long long mid = start + ((end - start) >> 1);
            const long long at = has_sorter ? sorter[base + mid] : mid;
            const M b = ad::cast<M>(bd[base + at]);
            const bool go_right = right ? !(b > v) : !(b >= v);
            if (go_right) {
                start = mid + 1;
            } else {
                end = mid;
            }
        }
        out[i] = static_cast<Out>(start);
    }
}

template <typename T>
__global__ void isin_sorted(const T* __restrict__ elements, const T* __restrict__ sorted,
                            bool* __restrict__ out, long long n, long long m, int invert) {
    using M = ad::opmath_t<T>;
    const long long stride = static_cast<long long>(blockDim.x) * gridDim.x;
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        const M v = ad::cast<M>(elements[i]);
        long long start = 0, end = m;
        while (start < end) {
            const long long mid = start + ((end - start) >> 1);
            if (ad::cast<M>(sorted[mid]) < v) {  // NaNs (last) are not less: go left
                start = mid + 1;
            } else {
                end = mid;
            }
        }
        const bool hit = start < m && ad::cast<M>(sorted[start]) == v;
        out[i] = hit != (invert != 0);
    }
}

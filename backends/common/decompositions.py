"""Kernels of the decompositions, solvers and FFTs (``linalg_*``, ``fft_*``), every backend.

Imports: ``backends.common`` only.  The data kernels call the library's ``linalg`` and
``fft`` modules (NumPy's LAPACK and pocketfft on the CPU, CuPy's cuSOLVER and cuFFT on
CUDA), given as arguments: one factory serves both.  The Meta kernels compute the same
shapes and dtypes from the shape rules below, without data.

Note [Library decompositions]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Writing our own LAPACK would only lose to it, so these are library calls by choice, as
the matrix products are (``backends.cuda.linalg``).  What is ours: PyTorch's argument
rules and shapes (``solve``'s vector right-hand side, ``qr``'s modes, ``svd``'s
``full_matrices``, an FFT's ``n``/``s`` and ``dim``), result dtypes read off the
operator's row, and the errors: the library's ``LinAlgError`` (singular, not positive
definite) becomes the ``RuntimeError`` PyTorch raises, naming the operator.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from .elementwise import Namespace, rename, rename_all
from .frontend import FrontEnd

__all__ = ["LINALG", "FFT", "kernels", "meta_kernels", "standard_linalg"]

# name -> the outputs' dtypes ("same": the input's, "real": its real dtype,
# "complex": its complex dtype)
LINALG: dict[str, tuple[str, ...]] = {
    "linalg_cholesky": ("same",),
    "linalg_det": ("same",),
    "linalg_eig": ("complex", "complex"),
    "linalg_eigvals": ("complex",),
    "linalg_eigh": ("real", "same"),
    "linalg_eigvalsh": ("real",),
    "linalg_inv": ("same",),
    "linalg_qr": ("same", "same"),
    "linalg_slogdet": ("same", "real"),
    "linalg_solve": ("same",),
    "linalg_svd": ("same", "real", "same"),
    "linalg_svdvals": ("real",),
}
FFT: dict[str, str] = {
    "fft_fft": "complex", "fft_ifft": "complex", "fft_rfft": "complex", "fft_ihfft": "complex",
    "fft_irfft": "real", "fft_hfft": "real",
    "fft_fftn": "complex", "fft_ifftn": "complex", "fft_rfftn": "complex", "fft_irfftn": "real",
}  # fmt: skip


def _out_dtype(dt: Any, kind: str) -> Any:
    if kind == "real":
        return dt.to_real()
    if kind == "complex":
        return dt if dt.is_complex else dt.to_complex()
    return dt


def _square(name: str, shape: tuple[int, ...], arg: str = "A") -> None:
    if len(shape) < 2:
        raise RuntimeError(
            f"{name}: The input tensor {arg} must have at least 2 dimensions, got {len(shape)}"
        )
    if shape[-1] != shape[-2]:
        raise RuntimeError(
            f"{name}: {arg} must be batches of square matrices, but they are "
            f"{shape[-2]} by {shape[-1]} matrices"
        )


def _matrix(name: str, shape: tuple[int, ...], arg: str = "A") -> None:
    if len(shape) < 2:
        raise RuntimeError(
            f"{name}: The input tensor {arg} must have at least 2 dimensions, got {len(shape)}"
        )


def _broadcast(a: tuple[int, ...], b: tuple[int, ...], name: str) -> tuple[int, ...]:
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(a, b, strict=True):
        if x != y and 1 not in (x, y):
            raise RuntimeError(f"{name}: the batch dimensions {a} and {b} do not broadcast")
        out.append(max(x, y) if 0 not in (x, y) else 0)
    return tuple(out)


def _solve_vector(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """PyTorch's rule: ``B`` is a (batch of) vector(s) when it is 1-D, or has one dim
    fewer than ``A`` and matches ``A``'s leading dims."""
    return len(b) == 1 or (len(b) == len(a) - 1 and b == a[:-1])


def shapes(name: str, shape: tuple[int, ...], *args: Any, **kw: Any) -> tuple[tuple[int, ...], ...]:
    """The output shapes of ``name`` for an input of ``shape`` (and its other arguments)."""
    op = "linalg." + name.removeprefix("linalg_")
    if name in ("linalg_cholesky", "linalg_inv"):
        _square(op, shape)
        return (shape,)
    if name in ("linalg_det", "linalg_slogdet"):
        _square(op, shape)
        return (shape[:-2],) * len(LINALG[name])
    if name in ("linalg_eigh", "linalg_eigvalsh", "linalg_eig", "linalg_eigvals"):
        _square(op, shape)
        return (shape[:-1], shape) if name in ("linalg_eigh", "linalg_eig") else (shape[:-1],)
    if name == "linalg_qr":
        _matrix(op, shape)
        mode = args[0] if args else kw.get("mode", "reduced")
        if mode not in ("reduced", "complete", "r"):
            raise RuntimeError(f"{op}: qr received unrecognized mode '{mode}'")
        m, n = shape[-2:]
        k = min(m, n)
        if mode == "r":
            return (0,), (*shape[:-2], k, n)
        q = m if mode == "complete" else k
        return (*shape[:-2], m, q), (*shape[:-2], q, n)
    if name in ("linalg_svd", "linalg_svdvals"):
        _matrix(op, shape)
        m, n = shape[-2:]
        k = min(m, n)
        if name == "linalg_svdvals":
            return ((*shape[:-2], k),)
        full = args[0] if args else kw.get("full_matrices", True)
        return (
            (*shape[:-2], m, m if full else k),
            (*shape[:-2], k),
            (*shape[:-2], n if full else k, n),
        )
    raise KeyError(name)


def solve_shape(a: tuple[int, ...], b: tuple[int, ...], left: bool = True) -> tuple[int, ...]:
    _square("linalg.solve", a)
    if _solve_vector(a, b):
        if b[-1] != a[-1]:
            raise RuntimeError(
                f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                f"({a[-2]}x{a[-1]} and {b[-1]}x1)"
            )
        return (*_broadcast(a[:-2], b[:-1], "linalg.solve"), b[-1])
    if len(b) < 2:
        raise RuntimeError("linalg.solve: B must have at least 1 dimension")
    rows = b[-2] if left else b[-1]
    if rows != a[-1]:
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({a[-2]}x{a[-1]} and {b[-2]}x{b[-1]})"
        )
    return (*_broadcast(a[:-2], b[:-2], "linalg.solve"), *b[-2:])


def _norm(norm: Any, name: str) -> Any:
    if norm not in (None, "backward", "ortho", "forward"):
        raise RuntimeError(f"{name}: Invalid normalization mode: {norm}")
    return norm


def fft_shape(name: str, shape: tuple[int, ...], n: Any, dim: Any) -> tuple[int, ...]:
    """Output shape of a one- or n-dimensional FFT (``n``: ``n`` or ``s``; ``dim``: one
    dim or several), PyTorch's defaults: every dim for the n-dimensional forms, the last
    ``len(s)`` when only ``s`` is given."""
    op = "fft." + name.removeprefix("fft_")
    nd = name.endswith("n")
    ndim = len(shape)
    if nd:
        if dim is None:
            dims = list(range(ndim)) if n is None else list(range(ndim - len(n), ndim))
        else:
            dims = [dim] if isinstance(dim, int) else list(dim)
        if n is not None and len(n) != len(dims):
            raise RuntimeError(
                f"{op}: When given, dim and shape arguments must have the same length"
            )
        sizes = list(n) if n is not None else [None] * len(dims)
    else:
        dims, sizes = [dim], [n]
    if ndim == 0 or not dims and nd is False:
        raise IndexError(f"{op}: Dimension specified as {dim} but tensor has no dimensions")
    norm_dims = []
    for d in dims:
        if not -ndim <= d < ndim:
            raise IndexError(
                f"{op}: Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                f"but got {d})"
            )
        norm_dims.append(d % ndim)
    if len(set(norm_dims)) != len(norm_dims):
        raise RuntimeError(f"{op}: FFT dims must be unique")
    out = list(shape)
    half_in = name in ("fft_irfft", "fft_hfft", "fft_irfftn")
    half_out = name in ("fft_rfft", "fft_ihfft", "fft_rfftn")
    for i, (d, size) in enumerate(zip(norm_dims, sizes, strict=True)):
        last = i == len(norm_dims) - 1
        if size is not None and size < 1:
            raise RuntimeError(f"{op}: Invalid number of data points ({size}) specified")
        if half_in and last:
            size = 2 * (shape[d] - 1) if size is None else size
            if size < 1:
                raise RuntimeError(f"{op}: Invalid number of data points ({size}) specified")
            out[d] = size
        elif half_out and last:
            length = shape[d] if size is None else size
            if length < 1:
                raise RuntimeError(f"{op}: Invalid number of data points ({length}) specified")
            out[d] = length // 2 + 1
        else:
            length = shape[d] if size is None else size
            if length < 1:
                raise RuntimeError(f"{op}: Invalid number of data points ({length}) specified")
            out[d] = length
    return tuple(out)


def _dtype_of(front: FrontEnd, op: Any, t: Any) -> tuple[Any, Any]:
    """(compute dtype, result dtype) of ``t`` by the row's rule, or PyTorch's error."""
    entry = op.result_dtypes.get(t._dtype)
    if entry is None:
        raise RuntimeError(
            f"{op.name.replace('_', '.', 1)}: Expected a floating point or complex tensor as "
            f"input. Got {t._dtype.name}"
        )
    return entry


def _solve_dtypes(front: FrontEnd, op: Any, A: Any, B: Any) -> tuple[Any, Any]:  # noqa: N803
    """linalg_solve's (compute, result) dtypes for ``A`` and ``B``, or PyTorch's error."""
    promoted = front.promote_types(A._dtype, B._dtype)
    entry = op.result_dtypes.get(promoted)
    if entry is None:
        raise RuntimeError(
            f"linalg.solve: Expected a floating point or complex tensor as input. "
            f"Got {promoted.name}"
        )
    return entry  # type: ignore[no-any-return]


# Note [Standard linalg for plug-in devices]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A plug-in device whose namespace has the standard's ``linalg`` extension gets these
# kernels too, through ``standard_linalg``: NumPy's ``linalg`` calls that ``kernels``
# makes, in the standard's terms.  The standard's ``eigh``/``eigvalsh`` take no
# ``UPLO`` (they read a Hermitian matrix): the matrix is first made Hermitian from the
# triangle PyTorch reads, as LAPACK would.  ``qr`` has no ``mode="r"``: the reduced
# ``R``.  ``svd(compute_uv=False)`` is ``svdvals``.  Functions the extension lacks (dask's
# has no ``det``, ``eigh``, ``slogdet``) make no kernel: the dispatcher's error names
# the operator and the device.  The library's own errors (array_api_strict raises
# NumPy's ``LinAlgError``) come as ``errors``, and become PyTorch's ``RuntimeError``.
# The standard's FFTs take ``norm="backward"`` for NumPy's ``None``, and complex input
# where a complex transform is asked of a real tensor.
def standard_linalg(xp: Any, errors: tuple[type[BaseException], ...]) -> Any:
    """NumPy's ``linalg`` API, as ``kernels`` calls it, over the standard's extension
    ``xp.linalg``, holding only what the extension has: Note [Standard linalg for
    plug-in devices]."""
    lin = xp.linalg
    fns: dict[str, Any] = {}

    def hermitian(a: Any, uplo: str) -> Any:
        if uplo == "U":
            return xp.triu(a) + xp.conj(xp.matrix_transpose(xp.triu(a, k=1)))
        return xp.tril(a) + xp.conj(xp.matrix_transpose(xp.tril(a, k=-1)))

    def eigh(a: Any, UPLO: str = "L") -> Any:  # noqa: N803
        return tuple(lin.eigh(hermitian(a, UPLO)))

    def eigvalsh(a: Any, UPLO: str = "L") -> Any:  # noqa: N803
        return lin.eigvalsh(hermitian(a, UPLO))

    def qr(a: Any, mode: str = "reduced") -> Any:
        if mode == "r":
            return lin.qr(a, mode="reduced")[1]
        return tuple(lin.qr(a, mode=mode))

    def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True) -> Any:
        if not compute_uv:
            return lin.svdvals(a)
        return tuple(lin.svd(a, full_matrices=full_matrices))

    for name in ("cholesky", "det", "inv", "slogdet", "solve", "eig"):
        if getattr(lin, name, None) is not None:
            fns[name] = getattr(lin, name)
    wrapped = {"eigh": eigh, "eigvalsh": eigvalsh, "qr": qr, "svd": svd}
    for name, fn in wrapped.items():
        if getattr(lin, name, None) is not None and (name != "svd" or hasattr(lin, "svdvals")):
            fns[name] = fn
    return types.SimpleNamespace(
        __name__=f"{getattr(xp, '__name__', 'xp')}.linalg", LinAlgError=errors, **fns
    )


def kernels(ns: Namespace, linalg: Any, fft: Any) -> dict[str, Any]:
    """Data kernels over the library's ``linalg`` and ``fft`` modules (either None for
    none; a function one of them lacks makes no kernel)."""
    front = ns.front
    make, op_info, xp = front.make, front.op_info, ns.xp
    out: dict[str, Any] = {}

    def cast(t: Any, cdt: Any) -> Any:
        return t._array if t._dtype is cdt else ns.astype(t._array, cdt)

    def has(name: str) -> bool:
        return linalg is not None and hasattr(linalg, name)

    def wrap(name: str, arrays: tuple[Any, ...], dt: Any, dev: Any) -> Any:
        kinds = LINALG[name]
        results = []
        for a, kind in zip(arrays, kinds, strict=True):
            odt = _out_dtype(dt, kind)
            results.append(make(ns.finish(xp.asarray(a), odt), odt, dev))
        return results[0] if len(results) == 1 else tuple(results)

    def linalg_kernel(name: str, compute: Callable[..., tuple[Any, ...]], *needs: str) -> None:
        if not all(has(n) for n in needs or (name.removeprefix("linalg_"),)):
            return
        op = op_info(name)

        def kernel(A: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N803
            cdt, _ = _dtype_of(front, op, A)
            shapes(name, tuple(A._array.shape), *args, **kwargs)  # PyTorch's checks
            try:
                arrays = compute(cast(A, cdt), *args, **kwargs)
            except linalg.LinAlgError as e:
                raise RuntimeError(f"linalg.{name.removeprefix('linalg_')}: {e}") from None
            return wrap(name, arrays, cdt, A._device)

        out[name] = rename(kernel, name, ns)

    def mT(a: Any) -> Any:  # noqa: N802
        return xp.matrix_transpose(a)

    def cholesky(a: Any, *, upper: bool = False) -> tuple[Any, ...]:
        low = linalg.cholesky(a)
        return (xp.conj(mT(low)) if upper else low,)

    def eigh(a: Any, UPLO: str = "L") -> tuple[Any, ...]:  # noqa: N803
        w, v = linalg.eigh(a, UPLO=UPLO)
        return w, v

    def qr(a: Any, mode: str = "reduced") -> tuple[Any, ...]:
        if mode == "r":
            r = linalg.qr(a, mode="r")
            return xp.empty((0,), dtype=a.dtype), r
        q, r = linalg.qr(a, mode=mode)
        return q, r

    def slogdet(a: Any) -> tuple[Any, ...]:
        sign, logabs = linalg.slogdet(a)
        return sign, logabs

    def svd(a: Any, full_matrices: bool = True, *, driver: Any = None) -> tuple[Any, ...]:
        m, n = a.shape[-2:]
        if a.size == 0:  # LAPACK refuses empty matrices; PyTorch gives identities
            k = min(m, n)
            um, vn = (m, n) if full_matrices else (k, k)
            u = ns.copy(xp.broadcast_to(xp.eye(m, um, dtype=a.dtype), (*a.shape[:-2], m, um)))
            vh = ns.copy(xp.broadcast_to(xp.eye(vn, n, dtype=a.dtype), (*a.shape[:-2], vn, n)))
            return u, xp.zeros((*a.shape[:-2], k), dtype=xp.real(a).dtype), vh
        u, s, vh = linalg.svd(a, full_matrices=full_matrices)
        return u, s, vh

    def svdvals(a: Any, *, driver: Any = None) -> tuple[Any, ...]:
        if a.size == 0:
            return (xp.zeros((*a.shape[:-2], min(a.shape[-2:])), dtype=xp.real(a).dtype),)
        return (linalg.svd(a, compute_uv=False),)

    linalg_kernel("linalg_cholesky", cholesky)
    linalg_kernel("linalg_det", lambda a: (linalg.det(a),))

    def eig(a: Any) -> tuple[Any, ...]:
        w, v = linalg.eig(a)  # real when every eigenvalue is: made complex by ``wrap``
        return w, v

    linalg_kernel("linalg_eig", eig)
    linalg_kernel("linalg_eigvals", lambda a: (eig(a)[0],), "eig")
    linalg_kernel("linalg_eigh", eigh)
    linalg_kernel("linalg_eigvalsh", lambda a, UPLO="L": (linalg.eigvalsh(a, UPLO=UPLO),))
    linalg_kernel("linalg_inv", lambda a: (linalg.inv(a),))
    linalg_kernel("linalg_qr", qr)
    linalg_kernel("linalg_slogdet", slogdet)
    linalg_kernel("linalg_svd", svd)
    linalg_kernel("linalg_svdvals", svdvals, "svd")
    if has("solve"):
        _solve_kernel(ns, linalg, out, cast, mT)
    if fft is not None:
        _fft_kernels(ns, fft, out, cast)
    return out


def _solve_kernel(ns: Namespace, linalg: Any, out: dict[str, Any], cast: Any, mT: Any) -> None:  # noqa: N803
    front, xp = ns.front, ns.xp
    make, op_info = front.make, front.op_info
    solve_op = op_info("linalg_solve")

    def solve(A: Any, B: Any, *, left: bool = True) -> Any:  # noqa: N803
        entry = _solve_dtypes(front, solve_op, A, B)
        cdt = entry[0]
        a_shape, b_shape = tuple(A._array.shape), tuple(B._array.shape)
        shape = solve_shape(a_shape, b_shape, left)
        a, b = cast(A, cdt), cast(B, cdt)
        vector = _solve_vector(a_shape, b_shape)
        if vector:
            b = b[..., None]
        # Batch dimensions broadcast here: NumPy's solve broadcasts them, CuPy's does not.
        batch = shape[:-1] if vector else shape[:-2]
        if a.shape[:-2] != batch:
            a = xp.broadcast_to(a, (*batch, *a.shape[-2:]))
        if b.shape[:-2] != batch:
            b = xp.broadcast_to(b, (*batch, *b.shape[-2:]))
        try:
            if vector:
                res = linalg.solve(a, b)[..., 0]
            elif left:
                res = linalg.solve(a, b)
            else:  # X A = B: A^T X^T = B^T
                res = mT(linalg.solve(mT(a), mT(b)))
        except linalg.LinAlgError as e:
            raise RuntimeError(f"linalg.solve: {e}") from None
        res = xp.broadcast_to(res, shape)
        return make(ns.finish(xp.asarray(res), cdt), cdt, A._device)

    out["linalg_solve"] = rename(solve, "linalg_solve", ns)


# The transforms whose input is complex in the standard (NumPy's take real input too).
_COMPLEX_IN = frozenset(
    {"fft_fft", "fft_ifft", "fft_fftn", "fft_ifftn", "fft_hfft", "fft_irfft", "fft_irfftn"}
)


def _fft_kernels(ns: Namespace, fft: Any, out: dict[str, Any], cast: Any) -> None:
    front, xp = ns.front, ns.xp
    make, op_info = front.make, front.op_info
    standard = ns.standard

    def fft_kernel(name: str) -> None:
        fn = getattr(fft, name.removeprefix("fft_"), None)
        if fn is None:
            return
        op = op_info(name)
        nd = name.endswith("n")
        complex_in = standard and name in _COMPLEX_IN

        def kernel(x: Any, n: Any = None, dim: Any = None if nd else -1, norm: Any = None) -> Any:
            cdt, odt = _dtype_of(front, op, x)
            _norm(norm, "fft." + name.removeprefix("fft_"))
            shape = fft_shape(name, tuple(x._array.shape), n, dim)
            a = cast(x, cdt)
            if standard:  # Note [Standard linalg for plug-in devices]
                norm = "backward" if norm is None else norm
                if complex_in and not cdt.is_complex:
                    a = ns.astype(a, cdt.to_complex())
            if nd:
                axes = None if dim is None else ([dim] if isinstance(dim, int) else list(dim))
                if axes is None and n is not None:
                    axes = list(range(a.ndim - len(n), a.ndim))
                res = fn(a, s=None if n is None else list(n), axes=axes, norm=norm)
            else:
                res = fn(a, n=n, axis=dim, norm=norm)
            res = xp.asarray(res)
            assert tuple(res.shape) == shape, (name, res.shape, shape)
            return make(ns.finish(res, odt), odt, x._device)

        out[name] = rename(kernel, name, ns)

    for name in FFT:
        fft_kernel(name)


def meta_kernels(front: FrontEnd, module: str) -> dict[str, Any]:
    """Meta kernels: the data kernels' checks, shapes and dtypes, without data (named
    after the backend ``module`` registering them)."""
    make_meta, op_info = front.make_meta, front.op_info
    out: dict[str, Any] = {}

    def linalg_kernel(name: str) -> None:
        op = op_info(name)

        def kernel(A: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N803
            cdt, _ = _dtype_of(front, op, A)
            result = [
                make_meta(s, _out_dtype(cdt, kind), A._device)
                for s, kind in zip(
                    shapes(name, tuple(A._array.shape), *args, **kwargs), LINALG[name], strict=True
                )
            ]
            return result[0] if len(result) == 1 else tuple(result)

        kernel.__name__ = kernel.__qualname__ = name
        out[name] = kernel

    for name in LINALG:
        if name != "linalg_solve":
            linalg_kernel(name)
    solve_op = op_info("linalg_solve")

    def solve(A: Any, B: Any, *, left: bool = True) -> Any:  # noqa: N803
        entry = _solve_dtypes(front, solve_op, A, B)
        shape = solve_shape(tuple(A._array.shape), tuple(B._array.shape), left)
        return make_meta(shape, entry[0], A._device)

    out["linalg_solve"] = solve

    def fft_kernel(name: str) -> None:
        op = op_info(name)
        nd = name.endswith("n")

        def kernel(x: Any, n: Any = None, dim: Any = None if nd else -1, norm: Any = None) -> Any:
            _, odt = _dtype_of(front, op, x)
            _norm(norm, "fft." + name.removeprefix("fft_"))
            return make_meta(fft_shape(name, tuple(x._array.shape), n, dim), odt, x._device)

        kernel.__name__ = kernel.__qualname__ = name
        out[name] = kernel

    for name in FFT:
        fft_kernel(name)
    return rename_all(out, module)

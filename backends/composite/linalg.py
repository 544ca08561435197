"""``einsum`` and ``tensordot`` as PyTorch computes them: permutes, sums, ``mul`` and ``bmm``.

Imports: ``dispatch`` only.

Note [einsum and tensordot under autocast]
PyTorch's ``einsum`` and ``tensordot`` are CompositeImplicitAutograd: they run as a
decomposition, and under ``autocast("cpu")`` only the decomposition's ``bmm``/``mm``
are autocast operators.  So a contraction comes out in bfloat16, while a call that
needs no matrix product (``"ij->ji"``, an outer product ``"i,j->ij"``, a full
contraction of vectors, which PyTorch 2.13 computes with ``dot``) stays float32, and a
three-operand ``einsum`` whose last step is a ``mul`` promotes back to float32.  Ours
are backend kernels (NumPy's einsum, cuBLAS); under CPU autocast their AutocastCPU
kernels (``tensor._autocast``) run these decompositions instead, so result dtypes and
values follow PyTorch's.  The algorithm is PyTorch's (``aten/src/ATen/native/Linear.cpp``):
operands are aligned to one dimension order (output dims, then contracted ones),
diagonals taken for repeated labels, and contracted left to right in pairs, each pair
a ``bmm`` over its shared summed dims (a ``mul`` when there are none).

``plan_einsum``/``tensordot`` return None for calls they cannot plan (a malformed
equation, mismatched sizes): the caller then runs the operator itself, whose error
names the problem.
"""

from __future__ import annotations

from typing import Any

from dispatch import ops

__all__ = ["einsum", "tensordot"]

core = ops.core
_ELL = "..."


def _labels(term: str) -> list[str] | None:
    """``"i...j"`` -> ``["i", "...", "j"]``; None if malformed."""
    out: list[str] = []
    i = 0
    while i < len(term):
        c = term[i]
        if c == ".":
            if term[i : i + 3] != _ELL or _ELL in out:
                return None
            out.append(_ELL)
            i += 3
            continue
        if not c.isalpha() or not c.isascii():
            return None
        out.append(c)
        i += 1
    return out


def _order(label: str) -> tuple[bool, str]:
    return (label.islower(), label)  # PyTorch's subscript order: A-Z, then a-z


def einsum(equation: str, operands: list[Any]) -> Any | None:
    """PyTorch's einsum decomposition, or None if the call is malformed."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = [_labels(t) for t in lhs.split(",")]
    if not operands or len(terms) != len(operands) or any(t is None for t in terms):
        return None
    op_labels: list[list[str]] = terms  # type: ignore[assignment]
    count: dict[str, int] = {}
    ell_num_dim = 0
    for labels, x in zip(op_labels, operands, strict=True):
        n = len(labels) - (_ELL in labels)
        if (_ELL in labels and n > x.ndim) or (_ELL not in labels and n != x.ndim):
            return None
        if _ELL in labels:
            ell_num_dim = max(ell_num_dim, x.ndim - n)
        for c in labels:
            if c != _ELL:
                count[c] = count.get(c, 0) + 1
    # Where each label goes in the aligned order: output dims first, then contracted ones.
    perm_index: dict[str, int] = {}
    position = 0
    ell_index, ell_in_output = 0, False
    if not arrow:
        position, ell_in_output = ell_num_dim, True
        for c in sorted((c for c in count if count[c] == 1), key=_order):
            perm_index[c] = position
            position += 1
    else:
        out_labels = _labels(rhs)
        if out_labels is None:
            return None
        for c in out_labels:
            if c == _ELL:
                ell_index, ell_in_output = position, True
                position += ell_num_dim
            elif c not in count or c in perm_index:
                return None
            else:
                perm_index[c] = position
                position += 1
    out_num_dim = position
    if not ell_in_output:
        ell_index = position
        position += ell_num_dim
    for c in sorted(count, key=_order):
        if c not in perm_index:
            perm_index[c] = position
            position += 1
    total = position
    # Align each operand: diagonals of repeated labels, size-1 dims for missing ones.
    label_size: dict[str, int] = {}
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * total
    aligned: list[Any] = []
    for labels, x in zip(op_labels, operands, strict=True):
        permutation = [-1] * total
        dim = 0
        for c in labels:
            if c == _ELL:
                covered = x.ndim - (len(labels) - 1)
                for j in range(ell_num_dim - covered, ell_num_dim):
                    size = x.shape[dim]
                    if size != 1:
                        if ell_sizes[j] not in (1, size):
                            return None
                        ell_sizes[j] = size
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[perm_index[c]] == -1:
                size = x.shape[dim]
                if size != 1:
                    if label_size.get(c, 1) not in (1, size):
                        return None
                    label_size[c] = size
                    dim_counts[perm_index[c]] += 1
                permutation[perm_index[c]] = dim
                dim += 1
            else:  # a repeated label: its diagonal, moved to the first occurrence's place
                prev = permutation[perm_index[c]]
                if x.shape[dim] != x.shape[prev]:
                    return None
                x = core.diagonal.default(x, 0, prev, dim)
                order = list(range(x.ndim - 1))
                order.insert(prev, x.ndim - 1)
                x = core.permute.default(x, order)
        for k, value in enumerate(permutation):
            if value == -1:
                x = core.unsqueeze.default(x, dim)
                permutation[k] = dim
                dim += 1
        aligned.append(core.permute.default(x, permutation))
    # Contract left to right; each result goes back to the front.
    while len(aligned) > 1:
        a, b = aligned.pop(0), aligned.pop(0)
        sum_dims: list[int] = []
        a_sums: list[int] = []
        b_sums: list[int] = []
        for d in range(out_num_dim, total):
            if a.shape[d] != 1 and b.shape[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if a.shape[d] != 1:
                    a_sums.append(d)
                    dim_counts[d] = 0
                elif b.shape[d] != 1:
                    b_sums.append(d)
                    dim_counts[d] = 0
        if a_sums:
            a = core.sum.default(a, a_sums, True)
        if b_sums:
            b = core.sum.default(b, b_sums, True)
        aligned.insert(0, _sumproduct_pair(a, b, sum_dims))
    result = aligned[0]
    if total > out_num_dim:
        if len(operands) > 1:  # the contracted dims are all 1 now
            return core.reshape.default(result, list(result.shape[:out_num_dim]))
        return core.sum.default(result, list(range(out_num_dim, total)))
    return result


def _sumproduct_pair(left: Any, right: Any, sum_dims: list[int]) -> Any:
    """``(left * right).sum(sum_dims, keepdim=True)`` as one ``bmm``."""
    if not sum_dims:
        return core.mul.Tensor(left, right)
    lro: list[int] = []
    lo: list[int] = []
    ro: list[int] = []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(left.ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                sum_size *= left.shape[i]
            elif sl:
                left = core.sum.default(left, [i], True)
            elif sr:
                right = core.sum.default(right, [i], True)
        elif sl and sr:
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    out_size = (
        [left.shape[d] for d in lro + lo] + [1] * len(sum_dims) + [right.shape[d] for d in ro]
    )
    order = lro + lo + sum_dims + ro
    back = [0] * len(order)
    for i, d in enumerate(order):
        back[d] = i
    lhs = core.reshape.default(
        core.permute.default(left, lro + lo + sum_dims + ro), [lro_size, lo_size, sum_size]
    )
    rhs = core.reshape.default(
        core.permute.default(right, lro + sum_dims + ro + lo), [lro_size, sum_size, ro_size]
    )
    product = core.bmm.default(lhs, rhs)
    return core.permute.default(core.view.default(product, out_size), back)


def tensordot(a: Any, b: Any, dims_a: list[int], dims_b: list[int]) -> Any | None:
    """PyTorch 2.13's tensordot decomposition (``dot`` when both kept sizes are 1, else
    ``mm``), or None if the call is malformed."""
    if len(dims_a) != len(dims_b) or a.dtype is not b.dtype:
        return None
    if any(not -a.ndim <= d < a.ndim for d in dims_a) or any(
        not -b.ndim <= d < b.ndim for d in dims_b
    ):
        return None
    dims_a = [d % a.ndim for d in dims_a]
    dims_b = [d % b.ndim for d in dims_b]
    if len(set(dims_a)) != len(dims_a) or len(set(dims_b)) != len(dims_b):
        return None
    t1, t2 = a, b
    csize = 1
    for da, db in zip(dims_a, dims_b, strict=True):
        s1, s2 = a.shape[da], b.shape[db]
        if s2 == 1:  # broadcast dims are summed right away
            t1 = core.sum.default(t1, [da], True)
        elif s1 == 1:
            t2 = core.sum.default(t2, [db], True)
        elif s1 != s2:
            return None
        else:
            csize *= s1
    kept_a = [i for i in range(a.ndim) if i not in dims_a]
    kept_b = [i for i in range(b.ndim) if i not in dims_b]
    size1 = size2 = 1
    for i in kept_a:
        size1 *= t1.shape[i]
    for i in kept_b:
        size2 *= t2.shape[i]
    sizes = [t1.shape[i] for i in kept_a] + [t2.shape[i] for i in kept_b]
    t1 = core.reshape.default(core.permute.default(t1, kept_a + dims_a), [size1, csize])
    t2 = core.reshape.default(core.permute.default(t2, dims_b + kept_b), [csize, size2])
    if size1 == 1 and size2 == 1:
        product = core.dot.default(core.reshape.default(t1, [-1]), core.reshape.default(t2, [-1]))
    else:
        product = core.mm.default(t1, t2)
    return core.reshape.default(product, sizes)

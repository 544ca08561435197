"""The shared shape rules (backends.common.shape_rules), which Meta kernels are built from."""

from __future__ import annotations

import numpy as np
import pytest

from backends.common import shape_rules


@pytest.mark.parametrize(("a", "b"), [((3, 4), (4,)), ((3, 1), (1, 4)), ((), (2, 3)), ((0, 4), (4,)),
                                      ((2, 1, 3), (5, 1)), ((1,), (0,))])  # fmt: skip
def test_broadcast_matches_numpy(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    assert shape_rules.broadcast_shapes("op", a, b) == np.broadcast_shapes(a, b)


def test_broadcast_error_names_op_and_arguments() -> None:
    with pytest.raises(
        RuntimeError,
        match=r"add\(\): The size of tensor a \(3\) must match .* "
        r"\(4\) at non-singleton dimension 1",
    ):
        shape_rules.broadcast_shapes("add", (2, 3), (4,))


def test_normalize_dims() -> None:
    assert shape_rules.normalize_dims("sum", None, 3) is None
    assert shape_rules.normalize_dims("sum", [], 3) is None
    assert shape_rules.normalize_dims("sum", -1, 3) == (2,)
    assert shape_rules.normalize_dims("sum", (2, 0), 3) == (0, 2)
    assert shape_rules.normalize_dims("sum", 0, 0) == (0,)  # a 0-d tensor has dims 0 and -1
    with pytest.raises(IndexError, match=r"range of \[-3, 2\], but got 3\) for argument 'dim'"):
        shape_rules.normalize_dims("sum", 3, 3)
    with pytest.raises(RuntimeError, match="appears multiple times"):
        shape_rules.normalize_dims("sum", (1, -2), 3)


def test_reduced_shape() -> None:
    assert shape_rules.reduced_shape((2, 3, 4), (1,), False) == (2, 4)
    assert shape_rules.reduced_shape((2, 3, 4), (1,), True) == (2, 1, 4)
    assert shape_rules.reduced_shape((2, 3), None, True) == (1, 1)
    assert shape_rules.reduced_shape((), None, False) == ()


@pytest.mark.parametrize(("a", "b"), [((3,), (3,)), ((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)),
                                      ((5, 2, 3), (3, 4)), ((2, 1, 2, 3), (5, 3, 2)), ((0, 3), (3, 2))])  # fmt: skip
def test_matmul_shape_matches_numpy(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    assert shape_rules.linalg_shape("matmul", a, b) == np.matmul(np.zeros(a), np.zeros(b)).shape


@pytest.mark.parametrize(("eq", "ins"), [("ij,jk->ik", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]),
                                         ("...ij->...ji", [(5, 2, 3)]), ("ij,kj", [(2, 3), (4, 3)]),
                                         ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]), ("i,i->", [(4,), (4,)])])  # fmt: skip
def test_einsum_shape_matches_numpy(eq: str, ins: list[tuple[int, ...]]) -> None:
    expected = np.einsum(eq, *[np.zeros(s) for s in ins]).shape
    assert shape_rules.einsum_shape("einsum", eq, ins) == expected


def test_tensordot_shape() -> None:
    assert shape_rules.tensordot_shape("tensordot", (2, 3, 4), (3, 4, 5), [1, 2], [0, 1]) == (2, 5)
    with pytest.raises(RuntimeError, match="contracted dimensions need to match"):
        shape_rules.tensordot_shape("tensordot", (2, 3), (4, 5), [1], [0])

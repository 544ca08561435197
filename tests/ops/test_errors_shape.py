"""Errors of the shape, indexing, joining and in-place operators name the operator.

Bad dims, bad indices (out of range, wrong dtype), shape mismatches in
cat/stack/view/expand, negative slice steps and in-place results that cannot be
cast, on CPU and on Meta (the checks are shared), with PyTorch's wording.
"""

from __future__ import annotations

import re

import pytest

import tensor as tt

DEVICES = ["cpu", "meta"]


def _raises(exc: type[BaseException], *fragments: str):  # type: ignore[no-untyped-def]
    return pytest.raises(exc, match="(?s)" + "".join(f"(?=.*{re.escape(f)})" for f in fragments))


@pytest.mark.parametrize("device", DEVICES)
def test_bad_dims(device: str) -> None:
    x = tt.zeros(2, 3, device=device)
    with _raises(IndexError, "transpose()", "Dimension out of range", "got 2", "'dim1'"):
        x.transpose(0, 2)
    with _raises(IndexError, "unsqueeze()", "[-3, 2]", "got 3"):
        x.unsqueeze(3)
    with _raises(IndexError, "cat()", "Dimension out of range"):
        tt.cat([x, x], 2)
    with _raises(IndexError, "select()", "index 2 out of range", "dimension 0"):
        x.select(0, 2)
    with _raises(RuntimeError, "permute()", "input.dim() = 2 is not equal to len(dims) = 3"):
        x.permute(0, 1, 2)
    with _raises(RuntimeError, "permute()", "repeated dim"):
        x.permute(1, 1)
    with _raises(RuntimeError, "diagonal()", "diagonal dimensions cannot be identical"):
        x.diagonal(0, 1, 1)
    with _raises(RuntimeError, "flip()", "dim 0 appears multiple times"):
        x.flip(0, 0)
    with _raises(RuntimeError, "t()", "<= 2 dimensions", "3D"):
        tt.zeros(1, 2, 3, device=device).t()


@pytest.mark.parametrize("device", DEVICES)
def test_shape_mismatches(device: str) -> None:
    x = tt.zeros(2, 3, device=device)
    with _raises(RuntimeError, "view()", "shape '[4]' is invalid for input of size 6"):
        x.view(4)
    with _raises(RuntimeError, "view()", "only one dimension can be inferred"):
        x.view(-1, -1)
    with _raises(RuntimeError, "view()", "view size is not compatible", "Use .reshape(...)"):
        x.T.view(6)
    assert x.T.reshape(6).shape == (6,)  # reshape copies where view cannot
    with _raises(RuntimeError, "expand()", "expanded size of the tensor (4) must match", "(3)"):
        x.expand(2, 4)
    with _raises(RuntimeError, "expand()", "number of sizes provided (1)", "(2)"):
        x.expand(3)
    with _raises(
        RuntimeError,
        "cat()",
        "Sizes of tensors must match except in dimension 0",
        "Expected size 3 but got size 4 for tensor number 1",
    ):
        tt.cat([x, tt.zeros(1, 4, device=device)])
    with _raises(RuntimeError, "cat()", "same number of dimensions"):
        tt.cat([x, tt.zeros(3, device=device)])
    with _raises(RuntimeError, "cat()", "zero-dimensional tensor (at position 0)"):
        tt.cat([tt.zeros((), device=device)])
    with _raises(NotImplementedError, "no tensor arguments", "core::cat"):  # the dispatcher's
        tt.cat([])
    with _raises(RuntimeError, "stack()", "equal size", "[2, 3] at entry 0", "[3] at entry 1"):
        tt.stack([x, tt.zeros(3, device=device)])
    with _raises(RuntimeError, "split_with_sizes()", "sum exactly to 3"):
        x.split([1, 1], 1)
    with _raises(RuntimeError, "narrow()", "start (2) + length (2) exceeds dimension size (3)"):
        x.narrow(1, 2, 2)
    with _raises(RuntimeError, "repeat()", "can not be smaller than number of dimensions"):
        x.repeat(2)
    with _raises(RuntimeError, "unflatten()", "don't multiply up to the size of dim 1 (3)"):
        x.unflatten(1, (2, 2))
    with _raises(RuntimeError, "copy_()", "doesn't match the broadcast shape"):
        tt.zeros(3, device=device).copy_(x)


@pytest.mark.parametrize("device", DEVICES)
def test_bad_indices(device: str) -> None:
    x = tt.zeros(3, 4, device=device)
    # Negative steps are taken, as NumPy and the Array API standard do (PyTorch refuses
    # them; issue #18): tests/tensor/test_array_api.py checks their values.
    assert tuple(x[::-1].shape) == (3, 4)
    with _raises(ValueError, "step must be greater than zero"):
        x[:, ::0]
    with _raises(IndexError, "select()", "index 3 out of range"):
        x[3]
    with _raises(IndexError, "too many indices for tensor of dimension 2"):
        x[0, 0, 0]
    with _raises(IndexError, "tensors used as indices must be long, int, byte or bool"):
        x[tt.tensor([0.5], device=device)]
    with _raises(IndexError, "The shape of the mask [2] at index 0 does not match", "[3, 4]"):
        x[tt.tensor([True, False], device=device)]
    with _raises(IndexError, "an index can only have a single ellipsis"):
        x[..., ...]
    with _raises(RuntimeError, "gather()", "Expected dtype int64 or int32", "'index'"):
        x.gather(0, tt.zeros(1, 4, device=device))
    with _raises(RuntimeError, "masked_fill_()", "boolean masks"):
        x.masked_fill_(tt.zeros(3, 4, device=device), 1.0)
    with _raises(RuntimeError, "masked_fill_()", "0-dimensional value tensor"):
        x.masked_fill_(tt.zeros(3, 4, dtype=tt.bool, device=device), tt.zeros(2, device=device))


def test_bad_index_values_on_cpu() -> None:
    x = tt.zeros(3, 4)
    with _raises(IndexError, "index()", "index 5 is out of bounds for dimension 0 with size 3"):
        x[tt.tensor([5])]
    with _raises(RuntimeError, "gather()", "index 4 is out of bounds for dimension 1 with size 4"):
        x.gather(1, tt.tensor([[4]]))
    with _raises(IndexError, "index_select()", "index out of range in self"):
        x.index_select(0, tt.tensor([3]))
    with _raises(RuntimeError, "scatter_()", "index 3 is out of bounds for dimension 0"):
        x.scatter_(0, tt.tensor([[3]]), 1.0)


@pytest.mark.parametrize("device", DEVICES)
def test_uncastable_in_place_results(device: str) -> None:
    i = tt.zeros(3, dtype=tt.int64, device=device)
    with _raises(
        RuntimeError,
        "add_()",
        "result type Float can't be cast to the desired output type Long",
        "'self'",
    ):
        i += 0.5
    with _raises(RuntimeError, "sin_()", "result type Float can't be cast", "Long"):
        i.sin_()
    with _raises(RuntimeError, "div_()", "result type Float", "Long"):
        i /= 2
    with _raises(RuntimeError, "mul_()", "result type ComplexFloat", "Float"):
        tt.zeros(2, device=device).mul_(tt.zeros(2, dtype=tt.complex64, device=device))
    with _raises(
        RuntimeError, "add_()", "output with shape [3] doesn't match the broadcast shape [2, 3]"
    ):
        tt.zeros(3, device=device).add_(tt.zeros(2, 3, device=device))
    with _raises(RuntimeError, "add()", "result type Float can't be cast", "'out'"):
        tt.add(tt.zeros(2, device=device), 1, out=tt.empty(0, dtype=tt.int64, device=device))


def test_writes_into_expanded_tensors_are_refused() -> None:
    e = tt.zeros(3, 1).expand(3, 4)
    with _raises(RuntimeError, "add_()", "more than one element of the written-to tensor"):
        e.add_(1)

"""Generated functions, methods and operators show their source (linecache): what
``inspect.getsource`` and tracebacks print is the code that runs."""

from __future__ import annotations

import inspect
import linecache
import traceback

import pytest

import tensor as tt


@pytest.mark.parametrize(
    ("fn", "first_line"),
    [
        (tt.sin, "def sin(input, *, out=None):"),
        (tt.Tensor.sin, "def sin(self):"),
        (tt.Tensor.sum, "def sum(self, dim=_d_dim, keepdim=_d_keepdim, *, dtype=_d_dtype):"),
        (tt.Tensor.__add__, "def __add__(self, other):"),
        (tt.Tensor.__rsub__, "def __rsub__(self, other):"),
    ],
)
def test_getsource_shows_the_generated_code(fn: object, first_line: str) -> None:
    source = inspect.getsource(fn)  # type: ignore[arg-type]
    assert source.splitlines()[0] == first_line


def test_function_and_method_of_one_row_keep_their_own_sources() -> None:
    assert inspect.getsource(tt.exp) != inspect.getsource(tt.Tensor.exp)
    assert "input" in inspect.getsource(tt.exp) and "input" not in inspect.getsource(tt.Tensor.exp)


def test_a_traceback_through_generated_code_prints_its_line() -> None:
    try:
        tt.add(tt.ones(2), "x")
    except TypeError as e:
        frames = traceback.extract_tb(e.__traceback__)
    generated = [f for f in frames if f.filename == "<tensor generated: add>"]
    assert generated, [f.filename for f in frames]
    # tt.add(x, "x"): not a tensor, alpha omitted -> the Scalar overload's two-value entry,
    # which hands what it does not take to the general entry, whose check raises.
    assert generated[0].line == "return _ov1_n(input, other)"


def test_keywords_at_their_defaults_take_the_positional_entry() -> None:
    """Note [Specialised call paths]: ``p.add_(g)`` (alpha omitted) calls the two-tensor
    entry, ``tt.addmm(b, x, w)`` the three-tensor one; given keywords take the general
    entry.  Each computes what the general call computes."""
    from dispatch import ops

    add_ = tt.Tensor.add_
    assert add_.__globals__["_ov0_n"] == ops.core.add_.Tensor.call2
    assert add_.__globals__["_ov1_n"] == ops.core.add_.Scalar.call2
    assert tt.addmm.__globals__["_ov0_n"] == ops.core.addmm.default.call3
    assert "return _ov0_n(self, other)" in inspect.getsource(add_)
    a, b = tt.tensor([1.0, 2.0]), tt.tensor([3.0, 5.0])
    assert a.clone().add_(b).tolist() == [4.0, 7.0]
    assert a.clone().add_(b, alpha=2).tolist() == [7.0, 12.0]
    assert a.clone().add_(2).tolist() == [3.0, 4.0]
    m = tt.eye(2)
    assert tt.addmm(a, m, m).tolist() == [[2.0, 2.0], [1.0, 3.0]]
    assert tt.addmm(a, m, m, beta=0).tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_given_keywords_take_the_keyword_entries() -> None:
    """Note [Specialised call paths]: the optimizers' spellings, ``p.add_(g, alpha=-lr)``,
    ``v.addcmul_(g, g, value=...)``, ``m.lerp_(g, 0.1)``, enter through ``call2k``,
    ``call3k`` and the two-tensor class's ``call3``; a value the entry does not take (a
    Scalar overload's number, a string) reaches the general entry and its error."""
    from dispatch import ops

    assert tt.Tensor.add_.__globals__["_ov0_k"] == ops.core.add_.Tensor.call2k
    assert "return _ov0_k(self, other, {'alpha': alpha})" in inspect.getsource(tt.Tensor.add_)
    assert tt.Tensor.addcmul_.__globals__["_ov0_k"] == ops.core.addcmul_.default.call3k
    assert tt.Tensor.lerp_.__globals__["_ov0"] == ops.core.lerp_.Scalar.call3
    a, b = tt.tensor([1.0, 2.0]), tt.tensor([3.0, 5.0])
    assert a.clone().add_(b, alpha=2).tolist() == [7.0, 12.0]
    assert a.clone().sub_(b, alpha=0.5).tolist() == [-0.5, -0.5]
    assert a.clone().add_(2, alpha=3).tolist() == [7.0, 8.0]  # add_.Scalar: the general entry
    assert a.clone().addcmul_(b, b, value=2).tolist() == [19.0, 52.0]
    assert a.clone().addcdiv_(b, b, value=-1).tolist() == [0.0, 1.0]
    assert a.clone().lerp_(b, 0.5).tolist() == [2.0, 3.5]
    with pytest.raises(TypeError, match="alpha"):
        a.clone().add_(b, alpha="2")
    with pytest.raises(TypeError, match="weight"):
        a.clone().lerp_(b, "w")


def test_a_backend_kernel_is_registered_at_its_row() -> None:
    """dump_table's site of a kernel made from a table row is the row's line, not the
    registration loop's (issue #15: visible code)."""
    import dispatch

    path, _, line = tt.op_info("sin").defined_at.rpartition(":")
    assert path.endswith("tensor/optable/elementwise.py")
    assert '_unary("sin"' in linecache.getline(path, int(line))
    table = dispatch.dump_table("core::sin")
    assert f"registered at CPU: backends.cpu.elementwise.sin ({path}:{line}, active)" in table
    # Generated forms keep their base row's site.
    assert tt.op_info("sin_").defined_at == tt.op_info("sin").defined_at

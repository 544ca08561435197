"""The autograd engine's and the generated API's fast paths against their general paths:
Note [Stealing gradients] (with the switch of Note [Fast-path switch] off every first
gradient is copied) and Note [Forwarding defaults] (arguments left at their defaults
are not forwarded: omitting them, passing them by position and by keyword agree, and
agree with PyTorch).  The fixed-arity call entries (Note [Specialised call paths]) have
their property test in tests/dispatch/test_validation.py.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from backends.common import fastpaths
from tests.backends.fastpath_support import (
    Outcome,
    assert_same,
    compare_with_torch,
    outcome,
    tensors,
    torch,
)

# -- Note [Stealing gradients] ----------------------------------------------------------------
_STEPS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "add",
                "mul",
                "neg",
                "mm",
                "sum_to",
                "expand",
                "keep",
                "same",
                "linear",
                "mmT",
                "Tmm",
                "mmT_kept",
            ]
        ),
        st.integers(0, 9),
        st.integers(0, 9),
    ),
    min_size=1,
    max_size=6,
)


def _run(
    program: list[tuple[str, int, int]], seed: str, hook: str, create_graph: bool
) -> tuple[list[Any], list[Any], list[Any]]:
    """Build the program over three (2, 2) leaves, run backward; the leaves, the tensors
    the user can see besides their .grad (the gradient passed in, what hooks kept or
    returned), and the leaves' .grad."""
    leaves = [tt.tensor(np.full((2, 2), float(i + 1)), requires_grad=True) for i in range(3)]
    visible: list[Any] = []
    if hook == "keep":  # a hook that keeps the gradient it sees
        leaves[0].register_hook(lambda g: visible.append(g))
    elif hook == "return":  # a hook that returns a tensor the user holds
        mine = tt.full((2, 2), 5.0, dtype=tt.float64)
        visible.append(mine)
        leaves[1].register_hook(lambda g: mine)
    elif hook == "return_new":
        leaves[1].register_hook(lambda g: g * 2)
    elif hook == "return_detached":  # a new Tensor over the array of one the user keeps
        leaves[2].register_hook(lambda g: (visible.append(g), g.detach())[1])
    values: list[Any] = list(leaves)
    for name, i, j in program:
        a, b = values[i % len(values)], values[j % len(values)]
        if name == "add":
            values.append(a + b)
        elif name == "mul":
            values.append(a * b)
        elif name == "neg":
            values.append(-a)
        elif name == "mm":
            values.append(a @ b)
        elif name == "linear":  # addmm(bias, a, b.t()): b's gradient is stolen whole (a base)
            values.append(tt.nn.functional.linear(a, b, a[0]))
        elif name == "mmT":  # mm with a transposed second operand
            values.append(a @ b.t())
        elif name == "Tmm":  # and a transposed first one
            values.append(a.t() @ b)
        elif name == "mmT_kept":  # a hook keeps b.t()'s gradient, a view of b's own
            bt = b.t()
            if bt.requires_grad:
                bt.register_hook(lambda g: visible.append(g))
            values.append(a @ bt)
        elif name == "sum_to":  # a gradient reduced back to a broadcast input
            values.append(a.sum(0, keepdim=True) + b)
        elif name == "expand":  # an expanded (stride-0) gradient
            values.append(a[:1].expand(2, 2) * 1.0)
        elif name == "same":  # add passes one tensor to both inputs
            values.append(a + a)
        else:
            values.append(a * 1.0)
    out = values[-1] + sum(values[3:], tt.zeros(2, 2, dtype=tt.float64))
    if seed == "gradient":  # backward(gradient=g): the user's g
        g = tt.ones(2, 2, dtype=tt.float64)
        visible.append(g)
        out.backward(g, create_graph=create_graph)
    elif seed == "expanded":  # the gradient passed in is itself an expansion
        g = tt.ones(1, 2, dtype=tt.float64).expand(2, 2)
        visible.append(g)
        out.backward(g, create_graph=create_graph)
    else:
        out.sum().backward(create_graph=create_graph)
    return leaves, visible, [t.grad for t in leaves]


@settings(max_examples=120, deadline=None)
@given(
    program=_STEPS,
    seed=st.sampled_from(["sum", "gradient", "expanded"]),
    hook=st.sampled_from(["none", "keep", "return", "return_new", "return_detached"]),
    create_graph=st.booleans(),
)
def test_stealing_gives_the_copying_paths_gradients(
    program: list[tuple[str, int, int]], seed: str, hook: str, create_graph: bool
) -> None:
    """With stealing on and off: the same .grad values, dtypes, shapes and view-ness."""
    _, _, stolen = _run(program, seed, hook, create_graph)
    with fastpaths.disabled():
        _, _, copied = _run(program, seed, hook, create_graph)
    for k, (s, c) in enumerate(zip(stolen, copied, strict=True)):
        assert (s is None) == (c is None), k
        if c is not None:
            assert_same(s, c, what=f"leaf {k}'s .grad")  # requires_grad too (create_graph)


@settings(max_examples=120, deadline=None)
@given(
    program=_STEPS,
    seed=st.sampled_from(["sum", "gradient", "expanded"]),
    hook=st.sampled_from(["none", "keep", "return", "return_new", "return_detached"]),
    create_graph=st.booleans(),
)
def test_a_stolen_gradient_aliases_nothing_visible(
    program: list[tuple[str, int, int]], seed: str, hook: str, create_graph: bool
) -> None:
    """Writing into any .grad changes no other .grad and no tensor the user holds (the
    gradient passed to backward, what a hook kept or returned); writing into those
    changes no .grad."""
    leaves, visible, grads = _run(program, seed, hook, create_graph)
    grads = [g for g in grads if g is not None]
    everything = grads + [v for v in visible if not v.is_contiguous() or v.stride()[0]]
    snapshot = [v.detach().numpy().copy() for v in everything]
    for k, v in enumerate(everything):
        if k >= len(grads) and v._base is not None:
            continue  # an expansion of the user's: read-only
        with tt.no_grad():
            v.fill_(-7.0)
        for m, (w, before) in enumerate(zip(everything, snapshot, strict=True)):
            # Tensors the user holds may alias each other (the gradient passed in reaches a
            # hook unchanged); what must not alias them, or each other, is a .grad.
            if k >= len(grads) and m >= len(grads):
                continue
            if m != k and not any(w is x for x in everything[:m]):
                assert np.array_equal(w.detach().numpy(), before), (program, k, m)
        with tt.no_grad():
            v.copy_(tt.tensor(snapshot[k]))


@settings(max_examples=40, deadline=None)
@given(
    shapes=st.sampled_from([(3, 4, 5), (1, 4, 5), (3, 1, 5), (3, 4, 1), (2, 2, 2)]),
    bias=st.booleans(),
    dtype=st.sampled_from([tt.float32, tt.float64]),
    how=st.sampled_from(["linear", "mmT", "Tmm", "mmT_kept"]),
)
def test_transposed_products_gradients(shapes, bias, dtype, how):
    """Note [Transposed products' gradients]: the gradient of a transposed operand is
    computed transposed and stolen whole; values, strides and view-ness are the copying
    path's and PyTorch's."""
    n, k, p = shapes
    rng = np.random.default_rng(n * 100 + k * 10 + p)
    arrays = [rng.standard_normal(s) for s in ((n, k), (p, k), (p,))]

    def run(lib: Any) -> list[Any]:
        make = (
            (lambda a: torch.tensor(a, dtype=getattr(torch, dtype.name)))
            if lib is torch
            else (lambda a: tt.tensor(a, dtype=dtype))
        )
        x, w, b = (make(a).requires_grad_() for a in arrays)
        if how == "linear":
            out = lib.nn.functional.linear(x, w, b if bias else None)
        elif how == "mmT":
            out = x @ w.t()
        else:
            out = x.t().t() @ w.t() if bias else w @ x.t()
        (out * out).sum().backward()
        return [x.grad, w.grad, b.grad]

    fast = run(tt)
    with fastpaths.disabled():
        general = run(tt)
    for f, g in zip(fast, general, strict=True):
        assert (f is None) == (g is None)
        if g is not None:
            assert_same(f, g, rtol=1e-12 if dtype is tt.float64 else 1e-6)
            assert f.stride() == g.stride() and f._base is None
    if torch is not None:
        for f, t in zip(fast, run(torch), strict=True):
            assert (f is None) == (t is None)
            if t is not None:
                np.testing.assert_allclose(f.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)
                assert f.stride() == t.stride()


# -- Note [Forwarding defaults] ---------------------------------------------------------------
def _required(name: str, other: Any) -> dict[str, Any]:
    """The arguments without defaults each case needs (besides the input)."""
    return {
        "cumsum": {"dim": 0},
        "cumprod": {"dim": 0},
        "logsumexp": {"dim": 0},
        "softmax": {"dim": 0},
        "log_softmax": {"dim": 0},
        "add": {"other": other},
        "sub": {"other": other},
        "div": {"other": other},
        "topk": {"k": 1},
        "roll": {"shifts": 1},
    }.get(name, {})


_CASES = [
    "sum", "mean", "std", "var", "prod", "argmax", "amax", "count_nonzero", "cumsum",
    "cumprod", "logsumexp", "flatten", "add", "sub", "div", "topk", "clamp", "diagonal",
    "tril", "roll", "softmax", "log_softmax", "round",
]  # fmt: skip


def _copy(value: Any) -> Any:
    """An equal value that is not the default object where Python allows (floats)."""
    return float(repr(value)) if type(value) is float else value


@settings(max_examples=250, deadline=None)
@given(
    name=st.sampled_from(_CASES),
    x=tensors(dtypes=(tt.float32, tt.float64), shapes=[(2, 3), (3,), (2, 3, 4)], views=True),
    method=st.booleans(),
    data=st.data(),
)
def test_defaults_omitted_passed_or_named_agree(
    name: str, x: Any, method: bool, data: st.DataObject
) -> None:
    fn: Callable[..., Any] = getattr(tt, name)
    other = tt.full((), 2.0, dtype=x.dtype)
    required = _required(name, other)
    params = [
        p
        for p in list(inspect.signature(fn).parameters.values())[1:]
        if p.name != "out" and p.default is not inspect.Parameter.empty
    ]
    assert params, name
    if method and hasattr(x, name):

        def call(a: Any, kw: dict[str, Any], pos: tuple[Any, ...] = ()) -> Any:
            return getattr(a, name)(*pos, **kw)
    else:

        def call(a: Any, kw: dict[str, Any], pos: tuple[Any, ...] = ()) -> Any:
            return fn(a, *pos, **kw)

    omitted = outcome(lambda a: call(a, required), x)
    # By keyword, each at its default or an equal copy, or left out.
    kw = dict(required)
    for p in params:
        how = data.draw(st.sampled_from(["omit", "default", "copy"]), label=p.name)
        if how != "omit":
            kw[p.name] = p.default if how == "default" else _copy(p.default)
    named = outcome(lambda a: call(a, kw), x)
    # By position: the required ones and every default before the first keyword-only one.
    sig = list(inspect.signature(fn).parameters.values())[1:]
    pos = []
    for p in sig:
        if p.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD:
            break
        pos.append(required.get(p.name, p.default))
    rest = {k: v for k, v in required.items() if k not in {p.name for p in sig[: len(pos)]}}
    positional = outcome(lambda a: call(a, rest, tuple(pos)), x)
    for what, o in (("by keyword", named), ("by position", positional)):
        assert (o.error is None) == (omitted.error is None), (what, o, omitted)
        if o.error is None:
            assert_same(o.value, omitted.value, what=f"{name} {what} {kw}")
        else:
            assert type(o.error) is type(omitted.error), (what, o, omitted)
    if torch is not None:
        tfn = getattr(torch, name)

        def torch_call(a: Any) -> Any:
            req = _required(name, torch.full((), 2.0, dtype=a.dtype))
            if name in ("std", "var") and x.ndim:  # PyTorch's dim=None overload
                return tfn(a, dim=None, **req)
            return tfn(a, **req)

        if name == "topk":  # which of tied elements is picked is unspecified: values only
            if omitted.error is None:
                omitted = Outcome(value=omitted.value.values)
            compare_with_torch(omitted, lambda a: torch_call(a).values, x)
        else:
            compare_with_torch(omitted, torch_call, x)


# Values other than the defaults, for each case: a call that passes them must not take
# the branch for omitted defaults (Note [Forwarding defaults]: the ``is`` test).
_OTHER_VALUES: dict[str, dict[str, Any]] = {
    "sum": {"dim": 0, "keepdim": True, "dtype": tt.float64},
    "mean": {"dim": -1, "keepdim": True},
    "std": {"dim": 0, "correction": 0, "keepdim": True},
    "var": {"dim": 0, "correction": 2},
    "prod": {"dim": 0, "keepdim": True},
    "argmax": {"dim": 0, "keepdim": True},
    "amax": {"dim": 0, "keepdim": True},
    "count_nonzero": {"dim": 0},
    "cumsum": {"dtype": tt.float64},
    "logsumexp": {"keepdim": True},
    "flatten": {"start_dim": 1, "end_dim": 1},
    "add": {"alpha": 3},
    "sub": {"alpha": 0.5},
    "div": {"rounding_mode": "floor"},
    "topk": {"largest": False},
    "clamp": {"min": 0.5, "max": 1.0},
    "diagonal": {"offset": 1, "dim1": 1, "dim2": 0},
    "tril": {"diagonal": -1},
    "roll": {"dims": 0},
    "softmax": {"dtype": tt.float64},
    "round": {"decimals": 1},
}


def _to_torch_value(v: Any) -> Any:
    return getattr(torch, str(v).rpartition(".")[2]) if isinstance(v, tt.dtype) else v


@settings(max_examples=150, deadline=None)
@given(
    name=st.sampled_from(sorted(_OTHER_VALUES)),
    x=tensors(dtypes=(tt.float32, tt.float64), shapes=[(2, 3), (2, 3, 4)], views=True),
    method=st.booleans(),
    data=st.data(),
)
def test_values_other_than_the_defaults_are_forwarded(
    name: str, x: Any, method: bool, data: st.DataObject
) -> None:
    """Each non-default value reaches the kernel, alone or with others, as PyTorch's."""
    other = _OTHER_VALUES[name]
    chosen = data.draw(st.lists(st.sampled_from(sorted(other)), min_size=1, unique=True))
    kw = {k: other[k] for k in chosen}
    if "keepdim" in kw and "dim" in other:  # PyTorch's keepdim= needs a dim= (listed)
        kw["dim"] = other["dim"]
    fn = getattr(tt, name)

    def call(a: Any) -> Any:
        req = _required(name, tt.full((), 2.0, dtype=a.dtype))
        if method and hasattr(a, name):
            return getattr(a, name)(**req, **kw)
        return fn(a, **req, **kw)

    ours = outcome(call, x)
    if torch is not None:
        tkw = {k: _to_torch_value(v) for k, v in kw.items()}

        def torch_call(a: Any) -> Any:
            req = _required(name, torch.full((), 2.0, dtype=a.dtype))
            out = getattr(torch, name)(a, **req, **tkw)
            return out.values if name == "topk" else out

        if name == "topk" and ours.error is None:
            ours = Outcome(value=ours.value.values)
        compare_with_torch(ours, torch_call, x)

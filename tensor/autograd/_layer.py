"""The autograd layer: kernels at the Autograd keys that record graph nodes.

Imports: the standard library, ``dispatch`` and sibling autograd modules (edges and
the view-history nodes are ``_views``).

Every operator with a formula gets one kernel, made once by ``autograd_kernel``
and registered at the ``Autograd`` alias key (so every backend shares it) as a
grad-only kernel (Note [Grad-only kernels] in ``dispatch/_operator.py``): a call
where no argument requires grad never enters it.  When one does, the kernel runs
the operator below autograd, and if grad mode is on, binds the call to the
schema (defaults filled), saves what the formula needs with the tensors'
versions, and makes the floating-point outputs require grad with an ``OpNode``
as their ``grad_fn``.

Operators without a formula get PyTorch's default "warn" autograd fallback
(Note [Autograd fallback]): outputs keep the history their kernel recorded and warn
when a gradient reaches them; outputs without history get a node that warns at
backward and passes no gradient on.

What a node checks at backward: the versions of the values its formula reads
(``formula.saved``: argument names and ``"result"``; every tensor argument when a
formula does not say), so a saved tensor modified in place raises as in PyTorch
and an unsaved one does not.

In-place operators (``add_``, ``copy_``...) share their functional formula.  Their
kernel refuses a leaf that requires grad (or a view of one), keeps a copy of
``self``'s old value when the formula reads it, and rebases history: ``self`` gets
the new node, whose edge for ``self`` is its old ``grad_fn``.  When ``self`` is a
view, the base's history is rebased instead (PyTorch's ``CopySlices``): the base
gets a node that routes the gradient of the written elements through the formula
and passes the rest on, and the view gets a node that reads its elements back
from the base (``AsStridedBackward0``).  Which elements of the base a view holds
comes from its strides and storage offset, so this works for any view.

``out=`` variants of operators with a formula refuse inputs that require grad, as
PyTorch does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import CodeType
from typing import Any

from backends.common import fastpaths
from dispatch import (
    REQUIRES_GRAD_BIT,
    DispatchKey,
    DispatchKeySet,
    OpOverload,
    _callpath,
    _tls,
    ops,
)
from dispatch._codegen import define
from dispatch._keys import keyset_from_bits

from . import _grad_mode
from ._graph import Node, new_seq
from ._views import (
    _FLOAT_KIND,
    _NO_EDGE,
    CopySlices,
    _edge,
    _is_differentiable,
    _outputs,
    _rebase_view,
    edges_of,
    mark_requires_grad,
)

__all__ = [
    "CopySlices",
    "OpNode",
    "autograd_kernel",
    "mark_requires_grad",
    "zeros_like",
]

AFTER_AUTOGRAD = DispatchKeySet.full_after(DispatchKey.AutogradOther)
_DEFAULT_SETS = (_tls.DEFAULT_INCLUDED, _tls.DEFAULT_KEEP)  # Note [Default key sets]
_AFTER_BITS = AFTER_AUTOGRAD.bits
_new = object.__new__
Formula = Callable[[Any, dict[str, Any], Any], Sequence[Any]]


def _collect(schema: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The tensor arguments in schema order, lists flattened (None kept for Tensor?)."""
    found: list[Any] = []
    for index, name, kind in schema.tensor_arg_indices:
        value = args[index] if index < len(args) else kwargs.get(name)
        if kind == "tensor_list":
            found.extend(value or ())
        else:
            found.append(value)
    return found


class OpNode(Node):
    """The backward of one operator call: its formula applied to the saved call.

    Each operator with a formula has a subclass of its own (``node_class``: PyTorch's
    ``AddBackward0``), which holds the operator and its formula as class attributes.
    """

    # Note [Node fields]: what every recorded call sets is a slot; the operator and its
    # formula are the class's, and the call bound to the schema, its keywords and the
    # saved result are None at the class until a node sets them (in its ``__dict__``,
    # made then: at backward, when the call is bound, or by a formula that reads its
    # result).  A recorded call stores four values instead of nine (Note [Recording cost]).
    __slots__ = ("_args", "versions")

    op: OpOverload
    formula: Formula
    _bound: dict[str, Any] | None = None
    _kwargs: dict[str, Any] | None = None
    out: Any = None
    # Note [Nodes numbered by the call]: PyTorch's node of ``x.sum()`` is SumBackward0 and
    # of ``x.sum(0)`` SumBackward1 (two overloads there, one here).  For such an operator
    # (``_NUMBERED_BY``): the position, name and default of the argument whose value
    # makes the node the second when it is not the default, which ``name()`` reads from
    # the call while the node still has it and keeps (binding the call and releasing the
    # node decide it first).  PyTorch decides by the overload its parser picked, so an
    # explicit default (``x.sum(dim=None)``, ``x.round(decimals=0)``) is its second and
    # our first: our wrappers pass defaults as they are, and the call cannot tell.  Or a
    # function of the node and the call's positional arguments (the bound call instead,
    # where there is one) naming the node PyTorch's call records on top (``_NAMED_BY``).
    _numbered: tuple[int, str, Any] | Callable[[Any, Any], str] | None = None

    def name(self) -> str:
        if self._numbered is None:
            return type(self).__name__
        name = self.__dict__.get("_name")
        return name if name is not None else self._decide_name(self._args, self._kwargs)

    def _decide_name(self, args: Any, kwargs: Any) -> str:
        numbered = self._numbered
        if type(numbered) is not tuple:  # a function (_NAMED_BY)
            name = numbered(self, args)
            if name is None:
                return type(self).__name__
            self.__dict__["_name"] = name
            return name
        base = type(self).__name__
        name = base
        if args is not None:
            position, arg, default = numbered
            if len(args) > position:
                value = args[position]
            else:
                value = default if kwargs is None else kwargs.get(arg, default)
            if value is not default and value != default:
                name = base[: -len("0")] + "1"
        self.__dict__["_name"] = name
        return name

    def __init__(
        self,
        bound: dict[str, Any] | None,
        out: Any,
        inputs: Sequence[Any],
        saved: list[Any] | None = None,
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
        keep_out: bool = True,
    ) -> None:
        """``bound``: the call bound to the schema, or None with the call's ``args`` and
        ``kwargs`` to bind when the formula first asks (Note [Recording cost]).
        ``keep_out=False``: the formula does not read the result, which is not saved."""
        # Node's fields, set here rather than through super().__init__: every recorded
        # call makes one of these (Note [Recording cost]).
        self.next_functions = edges_of(inputs)
        self.seq = new_seq()
        if bound is not None:
            self._bound = bound
        self._args = args
        if kwargs:
            self._kwargs = kwargs
        # Saved without their grad_fn (this node), so node and outputs form no reference
        # cycle; ``_unpack`` re-attaches the node for double backward (PyTorch's
        # SavedVariable does the same).  The tensors whose values the formula reads are
        # kept with their versions now; an output is checked through its saved copy (same
        # data, same version counter), never held itself: that would be the cycle.
        versions = []
        if not keep_out:  # a single tensor output the formula does not read
            for t in inputs if saved is None else saved:
                if t is not None:
                    counter = t._version_counter
                    versions.append((t, 0 if counter is None else counter[0]))
        elif type(out) is tuple or type(out) is list or not _is_tensor(out):
            self.out = saved_out = _save_outputs(out)
            self._num_outputs = len(_outputs(out))
            copies = {id(o): c for o, c in zip(_outputs(out), _outputs(saved_out), strict=True)}
            for t in inputs if saved is None else saved:
                if t is not None:
                    t = copies.get(id(t), t)
                    versions.append((t, t._version))
        else:
            self.out = saved_out = out.detach()
            for t in inputs if saved is None else saved:
                if t is not None:
                    if t is out:
                        t = saved_out
                    counter = t._version_counter
                    versions.append((t, 0 if counter is None else counter[0]))
        self.versions = versions

    @property
    def bound(self) -> dict[str, Any] | None:
        """The call bound to the schema (defaults filled), as the formula reads it."""
        bound = self._bound
        if bound is None:
            # Threads may ask at once (two backward passes through a retained graph): the
            # winner writes _bound before it clears the call, so a snapshot of the call
            # taken while _bound is still None is whole (Note [Recording cost]).
            args, kwargs = self._args, self._kwargs
            bound = self._bound
            if bound is None and args is not None:
                if self._numbered is not None and "_name" not in self.__dict__:
                    self._decide_name(args, kwargs)  # Note [Nodes numbered by the call]
                bound = self.op.schema.bind_trusted(args, kwargs or {})
                self._bound = bound
                self._args = self._kwargs = None
        return bound

    @bound.setter
    def bound(self, value: dict[str, Any] | None) -> None:
        self._bound = value
        self._args = self._kwargs = None

    def apply(self, grads: list[Any]) -> Sequence[Any]:
        versions = self.versions
        if versions is None:  # _freed, inline
            self.check_not_freed()
        for t, version in versions:
            counter = t._version_counter  # t._version, inline
            if (0 if counter is None else counter[0]) != version:
                raise RuntimeError(
                    f"one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: [{t.dtype.name} tensor of shape {list(t.shape)}], "
                    f"which is saved by {self.name()} ({self.op.name}), is at version "
                    f"{t._version}; expected version {version} instead. Hint: the operation "
                    f"that modified it came after this one; clone() the tensor before "
                    f"modifying it in place."
                )
        if _grad_mode.state.grad_enabled:
            out = self._unpack()
        else:
            out = self.out
            lane = getattr(self.formula, "lane", None)  # Note [Backward lanes]
            if (
                lane is not None
                and self._args is not None
                and fastpaths.ENABLED
                and (not _tls.NONDEFAULT[0] or _tls.state.sets == _DEFAULT_SETS)
                and (self._num_outputs == 1 or getattr(lane, "all_outputs", False))
            ):  # a lane of several outputs takes every output's gradient
                result = lane(grads[0] if self._num_outputs == 1 else grads, self._args, out)
                if result is not None:
                    return result  # type: ignore[no-any-return]
        if self._num_outputs == 1:
            grad = grads[0]
        else:
            # Outputs that got no gradient contribute zeros (PyTorch materializes them).
            grad = tuple(
                g if g is not None or not _is_differentiable(o) else zeros_like(o)
                for g, o in zip(grads, _outputs(out), strict=True)
            )
        return self.formula(grad, self.bound, out)

    def _unpack(self) -> Any:
        """The saved outputs, as outputs of this node again (for create_graph)."""
        if self.out is None:  # not saved: the formula does not read it
            return None
        restored = []
        for nr, t in enumerate(_outputs(self.out)):
            if _is_differentiable(t):
                t = t.detach()
                t.grad_fn = self
                t._output_nr = nr
                t._dispatch_bits |= REQUIRES_GRAD_BIT
            restored.append(t)
        if isinstance(self.out, (tuple, list)):
            return (
                type(self.out)(restored)
                if not hasattr(self.out, "_fields")
                else type(self.out)(*restored)
            )
        return restored[0]

    @property
    def _freed(self) -> bool:  # type: ignore[override]
        """Released: ``versions`` is gone (a flag of its own would make the node's
        ``__dict__`` on every backward)."""
        return self.versions is None

    def release(self) -> None:
        # apply() raises from now on (``_freed``); nothing below is read again.  The
        # fields at their class default stay there (no ``__dict__`` made to clear them).
        numbered = self._numbered
        if numbered is not None:  # Note [Nodes numbered by the call]
            if type(numbered) is tuple:
                if "_name" not in self.__dict__:
                    self._decide_name(self._args, self._kwargs)
            elif numbered.reads_call and (self._args is not None or self._bound is not None):
                name = numbered(self, self._args)
                if name is not None:  # None: the class's name (no __dict__ made)
                    self.__dict__["_name"] = name
        self._args = self.versions = None
        if self._bound is not None:
            self._bound = None
        if self._kwargs is not None:
            self._kwargs = None
        if self.out is not None:
            self.out = None


def node_class(op: OpOverload, formula: Formula) -> type[OpNode]:
    """The node class of ``op``'s calls (``AddBackward0`` for ``core::add.Tensor``), made
    on first use and kept with the operator."""
    cls: type[OpNode] | None = _NODE_CLASSES.get(op)
    if cls is None or cls.formula is not formula:
        qualname = op.name.split("::", 1)[1]
        base = qualname.split(".", 1)[0]
        # PyTorch's codegen: each word title-cased (``log1p`` -> Log1P, ``avg_pool2d`` ->
        # AvgPool2D), numbered by the overload's place among its derivatives.yaml entries.
        name = _NODE_BASES.get(base) or "".join(part.title() for part in base.split("_"))
        name += f"Backward{_NODE_NUMBER.get(qualname, 0)}"
        attrs = {
            "__slots__": (),
            "__module__": __name__,
            "op": op,
            "formula": staticmethod(formula),  # a function read from the class: not a method
        }
        numbered = _NUMBERED_BY.get(qualname) or _NAMED_BY.get(qualname)
        if numbered is not None:  # a function read from the class: not a method
            attrs["_numbered"] = staticmethod(numbered) if callable(numbered) else numbered
        cls = _NODE_CLASSES[op] = type(name, (OpNode,), attrs)
    return cls


_NODE_CLASSES: dict[OpOverload, type[OpNode]] = {}

# Operators whose calls PyTorch records under the native function they reach: every
# ``norm`` spelling is ``linalg_vector_norm``, ``conv2d`` is ``convolution``,
# ``layer_norm`` is ``native_layer_norm`` there, and so on (tests/tensor/test_node_names.py).
_NODE_BASES = {
    "matmul": "Mm",  # two matrices' (_matmul_node names the others)
    "cross_entropy_loss": "NllLoss",  # class targets' (_cross_entropy_node: the others)
    "norm": "LinalgVectorNorm",
    "square": "Pow",  # x.pow(2) there
    "outer": "Mul",  # a broadcast product there
    "conv2d": "Convolution",
    "layer_norm": "NativeLayerNorm",
}

# Note [Nodes numbered by the call]: operator -> (position, name, default) of the argument
# whose value other than its default makes PyTorch's node its second (SumBackward1).
_NUMBERED_BY = {
    "sum": (1, "dim", None),
    "mean": (1, "dim", None),
    "prod": (1, "dim", None),
    "round": (1, "decimals", 0),
}


def _matmul_node(node: Any, args: Any) -> str | None:
    """PyTorch's matmul is a composite: the node on top of its graph is that of the
    product it reaches for these ranks (its graph below that node is one node here).
    None for two matrices: the class's own name, MmBackward0 (_NODE_BASES), which
    backward's release then keeps without a ``__dict__`` (~0.45 us a node otherwise)."""
    bound = node._bound  # the whole call (keywords too), where it is bound
    if bound is not None:
        args = (bound["self"], bound["other"])
    elif args is None:
        return None
    ranks = (args[0]._array.ndim, args[1]._array.ndim)  # backward releases every node
    if ranks == (2, 2):
        return None
    name = _MATMUL_NODES.get(ranks)
    if name is not None:
        return name
    return "CloneBackward0" if ranks[0] == 2 else "UnsafeViewBackward0"


_matmul_node.reads_call = True  # type: ignore[attr-defined]
_MATMUL_NODES = {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (1, 2): "SqueezeBackward4"}


def _reshape_node(node: Any, args: Any) -> str:
    """PyTorch's reshape is ``view`` where the shape allows one, else a clone viewed:
    ViewBackward0 or UnsafeViewBackward0 on top (a view output keeps its version, so
    the name is read from the node at any time)."""
    return "ViewBackward0" if node._view_version is not None else "UnsafeViewBackward0"


_reshape_node.reads_call = False  # type: ignore[attr-defined]


def _cross_entropy_node(node: Any, args: Any) -> str | None:
    """PyTorch's cross_entropy is a composite too: class targets end in nll_loss
    (NllLossBackward0, this class's name: None), smoothed ones in an add, probabilities
    in a negation or, for a mean, a division by the batch."""
    kwargs = node._bound  # the whole call (keywords too), where it is bound
    if kwargs is not None:
        args = ()
    elif args is None:
        return None
    else:
        kwargs = node._kwargs or {}
    target = args[1] if len(args) > 1 else kwargs["target"]
    reduction = args[3] if len(args) > 3 else kwargs.get("reduction", 1)
    smoothing = args[5] if len(args) > 5 else kwargs.get("label_smoothing", 0.0)
    if target._dtype.is_floating_point:
        return "DivBackward1" if reduction == 1 else "NegBackward0"
    return "AddBackward0" if smoothing else None


_cross_entropy_node.reads_call = True  # type: ignore[attr-defined]


# Operators whose node PyTorch names after what their composite reaches, which the call
# decides: the node's name is decided as the numbered ones' are (Note [Nodes numbered by
# the call]).
_NAMED_BY = {
    "matmul": _matmul_node,
    "reshape": _reshape_node,
    "cross_entropy_loss": _cross_entropy_node,
}

# The overloads whose PyTorch node is not their name's first (``1 - x``: RsubBackward1),
# as PyTorch 2.13 numbers them for the same call; the others are 0.  An overload that
# PyTorch reaches for some of its calls only (``sum`` with and without ``dim`` is one
# overload here, two there) is numbered by the call (``_NUMBERED_BY``).
_NODE_NUMBER = {
    "clamp": 1,
    "copysign.Scalar": 1,
    "fill_.Tensor": 1,
    "fmod.Tensor": 1,
    "lerp.Tensor": 1,
    "masked_fill.Tensor": 1,
    "max": 1,
    "min": 1,
    "normal.Tensor_float": 1,
    "normal.float_Tensor": 2,
    "normal.Tensor_Tensor": 3,
    "pow.Tensor_Tensor": 1,
    "pow.Scalar": 2,
    "remainder.Tensor": 1,
    "rsub.Scalar": 1,
    "scatter.value": 1,
    "sort.stable": 1,
    "squeeze.dim": 1,
    "squeeze.dims": 2,
}


def _save_outputs(out: Any) -> Any:
    if isinstance(out, (tuple, list)):
        items = [t.detach() if _is_tensor(t) else t for t in out]
        return type(out)(*items) if hasattr(out, "_fields") else type(out)(items)
    return out.detach() if _is_tensor(out) else out


def _is_tensor(t: Any) -> bool:
    return getattr(t, "_dispatch_bits", None) is not None


def zeros_like(t: Any) -> Any:
    return ops.core.zeros_like(t)


def _tensors(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [t for t in value if getattr(t, "_dispatch_bits", None) is not None]
    return [value] if getattr(value, "_dispatch_bits", None) is not None else []


Spec = tuple[tuple[tuple[str, str], ...], bool]


def _saved_spec(formula: Formula) -> Spec | None:
    """((argument, condition), ...) and whether the result is read, from a formula's
    ``saved`` ("self:other": self, when other requires grad); None: every argument."""
    saved = getattr(formula, "saved", None)
    if saved is None:
        return None
    names = tuple(tuple(n.partition(":")[::2]) for n in saved if n != "result")
    return names, "result" in saved  # type: ignore[return-value]


def _wanted(bound: dict[str, Any], condition: str) -> bool:
    if not condition:
        return True
    return any(t.requires_grad for t in _tensors(bound.get(condition)))


def _saved_tensors(spec: Spec, bound: dict[str, Any], out: Any, skip: str = "") -> list[Any]:
    names, result = spec
    found = []
    for n, condition in names:
        if n == skip or (condition and not _wanted(bound, condition)):
            continue
        v = bound.get(n)
        if type(v) is list or type(v) is tuple:
            found.extend(t for t in v if getattr(t, "_dispatch_bits", None) is not None)
        elif getattr(v, "_dispatch_bits", None) is not None:
            found.append(v)
    if result:
        found.extend(_tensors(out))
    return found


def _positional_saver(
    schema: Any, spec: Spec | None
) -> Callable[[tuple[Any, ...], Any], Sequence[Any]] | None:
    """``_saved_tensors`` for a call with positional arguments only, read from ``args``
    by position (absent ones are their defaults), so the call need not be bound when it
    is recorded; None when the formula saves everything or a keyword-only argument."""
    if spec is None:
        return None
    names, result = spec
    arguments = schema.arguments
    index = {a.name: i for i, a in enumerate(arguments) if not a.kwarg_only}
    default = {a.name: a.default if a.has_default else None for a in arguments}
    plan = []
    for name, condition in names:
        if name not in index or (condition and condition not in index):
            return None
        plan.append(
            (
                index[name],
                default[name],
                index[condition] if condition else -1,
                default.get(condition),
            )
        )

    if not plan and not result:  # add, sub, views...: nothing's value is read
        return _save_nothing

    def saved(args: tuple[Any, ...], out: Any) -> list[Any]:
        found: list[Any] = []
        n = len(args)
        for i, value_default, c, condition_default in plan:
            if c >= 0:  # saved only when the condition argument requires grad
                w = args[c] if c < n else condition_default
                bits = getattr(w, "_dispatch_bits", None)
                if bits is None:  # a list of tensors, a number, None
                    if not any(t.requires_grad for t in _tensors(w)):
                        continue
                elif not bits & REQUIRES_GRAD_BIT:
                    continue
            v = args[i] if i < n else value_default
            if getattr(v, "_dispatch_bits", None) is not None:
                found.append(v)
            elif type(v) is list or type(v) is tuple:
                found.extend(t for t in v if getattr(t, "_dispatch_bits", None) is not None)
        if result:
            found.extend(_tensors(out))
        return found

    return saved


def _save_nothing(args: tuple[Any, ...], out: Any) -> tuple[()]:
    return ()


def _reads_self(spec: Spec | None, bound: dict[str, Any]) -> bool:
    if spec is None:
        return True
    return any(n == "self" and _wanted(bound, c) for n, c in spec[0])


# Note [Recording cost]
# ~~~~~~~~~~~~~~~~~~~~~
# A recorded call pays for what PyTorch pays in C++: the node, its edges, the saved
# values and their versions, marking the outputs.  In Python each of those is a few
# hundred ns, so the kernel keeps to one pass over each: tensor arguments that lead the
# schema (``self``, ``other``: most operators) are a slice of ``args``; binding skips
# the type checks (the operator already ran: ``bind_trusted``); a single tensor output
# is marked inline; the kernel below autograd is called here, without
# ``op.redispatch``'s frame (the generated kernels find it in a memo kept with the
# table: ``OpOverload.below``'s memo); the node is of the operator's own class, which
# holds what every call of it shares (Note [Node fields]); the call paths enter the
# generated kernels at an entry for their argument count (Note [Positional entries]).
# Two things are not done at all when the formula does not need them:
# - binding: a call with positional arguments only is kept as its ``args`` and bound
#   when the formula first reads ``node.bound`` (at backward; never, for a graph that is
#   dropped); the tensors whose versions it checks are read from ``args`` by position
#   (``_positional_saver``; a test compares them with the bound call's for every sample
#   of the op database);
# - the result: kept (as a detached alias) only by formulas that name it
#   (``saves("result")``); the others get None, and a test reads their source to check
#   that they never read it.
# The key set a with_keyset kernel receives comes from an interned table
# (``dispatch._keys.keyset_from_bits``).  ci/bench/autograd.py measures recording as
# "rec. ours" beside PyTorch's.


def autograd_kernel(op: OpOverload, formula: Formula) -> Callable[..., Any]:
    """The Autograd-key kernel of ``op`` (with_keyset, grad-only)."""
    _WITH_FORMULA.add(op.name.split(".", 1)[0])
    if _is_inplace(op):
        return _inplace_kernel(op, formula)
    schema = op.schema
    below = op.below
    grad_state = _grad_mode.state
    spec = _saved_spec(formula)
    bind = schema.bind_trusted
    positional_saved = _positional_saver(schema, spec)
    keep_out = spec is None or spec[1]  # the formula reads the result
    specs = schema.tensor_arg_indices
    # How many tensor arguments lead the schema, if they are all Tensors or optional
    # Tensors (``cross_entropy_loss``'s weight, ``conv2d``'s bias); else -1.  A call that
    # passes them all positionally has them as ``args[:lead]``, as ``_collect`` would.
    lead = len(specs)
    if any(
        i != k or kind not in ("tensor", "optional_tensor") for k, (i, _, kind) in enumerate(specs)
    ):
        lead = -1

    save_nothing = positional_saved is _save_nothing
    cls = node_class(op, formula)

    def record(out: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Record the call that gave ``out`` (grad mode on)."""
        inputs = args[:lead] if 0 <= lead <= len(args) else _collect(schema, args, kwargs)
        for t in inputs:
            if t is not None and t._dispatch_bits & REQUIRES_GRAD_BIT:
                break
        else:
            return out
        dt = getattr(out, "_dtype", None)  # None: a tuple or list of outputs
        if dt is not None and positional_saved is not None and not kwargs:
            # The common case, OpNode.__init__ inline (Note [Recording cost]): one tensor
            # output, positional arguments, bound when the formula runs.
            node = _new(cls)
            node.next_functions = edges_of(inputs)
            node.seq = new_seq()
            node._args = args
            versions = []
            if keep_out:
                node.out = saved_out = out.detach()
            if not save_nothing:
                for t in positional_saved(args, out):
                    if t is out and keep_out:  # the saved copy, never the output itself
                        t = saved_out
                    counter = t._version_counter
                    versions.append((t, 0 if counter is None else counter[0]))
            node.versions = versions
        elif positional_saved is not None and not kwargs:  # bound when the formula runs
            node = cls(
                None,
                out,
                inputs,
                positional_saved(args, out),
                args,
                None,
                keep_out or dt is None,
            )
        else:
            bound = bind(args, kwargs)
            saved = None if spec is None else _saved_tensors(spec, bound, out)
            node = cls(bound, out, inputs, saved, keep_out=keep_out or dt is None)
            if cls._numbered is not None:  # Note [Nodes numbered by the call]
                node._decide_name(args, kwargs)
        if dt is not None:
            if dt.category >= _FLOAT_KIND:
                out.grad_fn = node
                if out._output_nr:  # 0 by default (Note [Tensor fields])
                    out._output_nr = 0
                out._dispatch_bits |= REQUIRES_GRAD_BIT
            if out._base is not None:  # a view: see _views._edge
                node._view_version = out._version
            return out
        mark_requires_grad(out, node)
        first = out[0] if out else None
        if getattr(first, "_base", None) is not None:
            node._view_version = first._version
        return out

    name = f"autograd_{op.name.split('::')[1].replace('.', '_')}"
    if lead > 0 and positional_saved is not None:
        generated = _generated_kernel(
            name, op, formula, below, record, lead, specs, _plan(schema, spec), keep_out
        )
        if generated is not None:
            return generated

    def kernel(keyset: DispatchKeySet, /, *args: Any, **kwargs: Any) -> Any:
        out = below(keyset._bits & _AFTER_BITS)(*args, **kwargs)
        if not grad_state.grad_enabled:
            return out
        return record(out, args, kwargs)

    kernel.__qualname__ = kernel.__name__ = name
    return kernel


# Note [Generated recording]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~
# The common recorded call (Note [Recording cost]: leading tensor arguments passed by
# position, no keywords, one tensor output) is ``record``'s first case; for an operator
# whose formula saves only leading tensor arguments (``self:other``: self, when other
# requires grad) and perhaps its result, that case is generated as source for the
# operator, like the call paths (Note [Specialised call paths] in dispatch/_callpath.py):
# the leading tensors unpacked into locals, each one's requires-grad bit read once and
# reused for its edge and for the saves it conditions, the saved versions as literal
# appends, no loop over a plan and no ``edges_of`` frame.  ~0.5 us less a recorded
# ``a + b`` (ci/bench/autograd.py, "rec." columns).  Anything else in a call (keywords,
# fewer positional tensors than the leading ones, short of trailing ``Tensor?`` arguments
# left out at their default, None; a tuple or list result) goes to ``record``, as do operators
# whose saves name a non-leading argument, and every call with the fast-path switch off
# (Note [Fast-path switch]).  It records exactly what ``record`` would:
# ``tests/tensor/test_autograd_formulas.py`` records every op-database sample's calls
# again through ``record`` (each generated kernel keeps it as ``.record``) and compares
# the nodes: edges, arguments, saved versions, result.
_RECORD = """\
def {name}(keyset, /, *args, **kwargs):
{below}\
    if not _grad_state.grad_enabled:
        return out
    if kwargs or len(args) < {min_lead} or not _fastpaths.ENABLED:
        return _record(out, args, kwargs)
{unpack}\
{tail}\
"""
# The entry for exactly {n} positional arguments (Note [Positional entries] in
# dispatch/_operator.py): the key set as its bits, reached only in grad mode.
_RECORD_POSITIONAL = """\
def {name}(ks, {params}, /):
    ks &= _AFTER_BITS
    try:  # ``_op.below(ks)``, its memo read without its frame
        below = _op._state.below[ks]
    except KeyError:
        below = _op.below(ks)
    out = below({params})
    if not _fastpaths.ENABLED:
        return _record(out, ({params},), {{}})
{unpack}\
{tail}\
"""
# What both record once the leading tensors are locals a0, a1...: ``{args}`` is the call's
# positional arguments.
_RECORD_TAIL = """\
    if not ({any_grad}):
        return out
    try:
        dt = out._dtype
    except AttributeError:  # a tuple or list of outputs
        return _record(out, {args}, {{}})
{edge_lines}\
    node = _new(_Node)
    node.next_functions = ({edges})
    node.seq = _new_seq()
    node._args = {args}
{save}\
    if dt.category >= _FLOAT:
        out.grad_fn = node
        if out._output_nr:
            out._output_nr = 0
        out._dispatch_bits |= _RG
    if out._base is not None:
        c = out._version_counter
        node._view_version = 0 if c is None else c[0]
    return out
"""


def _plan(schema: Any, spec: Spec | None) -> list[tuple[int, int]] | None:
    """The saves of ``spec`` as (argument index, condition index or -1) over the schema's
    positional arguments; None when a save names an argument that is not positional."""
    if spec is None:
        return None
    index = {a.name: i for i, a in enumerate(schema.arguments) if not a.kwarg_only}
    plan = []
    for name, condition in spec[0]:
        if name not in index or (condition and condition not in index):
            return None
        plan.append((index[name], index[condition] if condition else -1))
    return plan


def _generated_kernel(
    name: str,
    op: OpOverload,
    formula: Formula,
    below: Callable[..., Any],
    record: Callable[..., Any],
    lead: int,
    specs: Any,
    plan: list[tuple[int, int]] | None,
    keep_out: bool,
) -> Callable[..., Any] | None:
    """Note [Generated recording]: the Autograd kernel of ``op`` as generated source, or
    None when its saves name an argument beyond the leading tensors."""
    if plan is None or any(i >= lead or c >= lead for i, c in plan):
        return None
    optional = [kind == "optional_tensor" for _, _, kind in specs[:lead]]
    # Trailing optional tensors with their default (None) may be left out of the call
    # (``cross_entropy(x, y)``'s weight, from the two-tensor entry): None when absent.
    schema_args = op.schema.arguments
    min_lead = lead
    while min_lead > 1 and optional[min_lead - 1] and schema_args[min_lead - 1].has_default:
        min_lead -= 1

    def unpack(given: int | None) -> str:
        """The leading tensors as locals a0, a1..., with their requires-grad bits r0, r1...:
        from ``args`` (``given`` None) or the positional entry's parameters (``given``
        of them; those not given are None)."""
        lines = []
        for k in range(lead):
            if given is not None:
                if k >= given:
                    lines.append(f"    a{k} = None\n")
            elif k < min_lead:
                lines.append(f"    a{k} = args[{k}]\n")
            else:
                lines.append(f"    a{k} = args[{k}] if len(args) > {k} else None\n")
            if optional[k]:
                lines.append(f"    r{k} = a{k} is not None and a{k}._dispatch_bits > _RUNTIME\n")
            else:
                lines.append(f"    r{k} = a{k}._dispatch_bits > _RUNTIME\n")
        return "".join(lines)

    edge_lines = []
    for k in range(lead):  # ``_edge`` (``_views``), its two common cases inline
        lines = (
            f"    fn = a{k}.grad_fn\n"
            f"    if fn is None:  # a leaf: its edge kept with its accumulator\n"
            f"        e{k} = a{k}._grad_edge\n"
            f"        if e{k} is None:\n"
            f"            e{k} = _edge(a{k})\n"
            f"    elif fn._view_version is None:\n"
            f"        e{k} = (fn, a{k}._output_nr)\n"
            f"    else:  # a view: its grad_fn stands unless its data changed since\n"
            f"        c = a{k}._version_counter\n"
            f"        if fn._view_version == (0 if c is None else c[0]):\n"
            f"            e{k} = (fn, a{k}._output_nr)\n"
            f"        else:\n"
            f"            e{k} = _edge(a{k})\n"
        )
        if lead == 1:  # past ``if not r0: return out``, the one tensor requires grad
            edge_lines.append(lines)
        else:
            indented = "".join(f"    {line}\n" for line in lines.splitlines())
            edge_lines.append(f"    if r{k}:\n{indented}    else:\n        e{k} = _NO_EDGE\n")
    save = []
    if keep_out:
        save.append("    node.out = saved = out.detach()\n")
    values = [f"(saved if a{i} is out else a{i})" if keep_out else f"a{i}" for i, _ in plan]
    if keep_out:
        values.append("saved")
    conds = []
    for i, c in plan:
        cond = f"r{c}" if c >= 0 else ""
        if optional[i]:
            cond = f"a{i} is not None" + (f" and {cond}" if cond else "")
        conds.append(cond)
    if keep_out:
        conds.append("")
    distinct = list(dict.fromkeys(c for c in conds if c))
    if len(distinct) <= 2:
        # The saves as one tuple, a branch for each combination of their conditions
        # (``mm``: self when other requires grad, other when self does): no list to grow.
        combos = [
            [d for j, d in enumerate(distinct) if mask >> j & 1]
            for mask in range((1 << len(distinct)) - 1, -1, -1)
        ]
        for n_combo, held in enumerate(combos):
            indent = "    "
            if distinct:
                test = " and ".join(f"({d})" for d in held) or "True"
                keyword = "if" if n_combo == 0 else "elif"
                if not held:
                    save.append("    else:\n")
                else:
                    save.append(f"    {keyword} {test}:\n")
                indent = "        "
            pairs = []
            for k, (value, cond) in enumerate(zip(values, conds, strict=True)):
                if cond and cond not in held:
                    continue
                save.append(f"{indent}c{k} = {value}._version_counter\n")
                pairs.append(f"({value}, 0 if c{k} is None else c{k}[0]), ")
            save.append(f"{indent}node.versions = ({''.join(pairs)})\n")
    else:
        save.append("    versions = node.versions = []\n")
        for value, cond in zip(values, conds, strict=True):
            save.extend(_append_version(value, cond))

    def tail(args: str) -> str:
        return _RECORD_TAIL.format(
            any_grad=" or ".join(f"r{k}" for k in range(lead)),
            args=args,
            edges="".join(f"e{k}, " for k in range(lead)),
            edge_lines="".join(edge_lines),
            save="".join(save),
        )

    source = _RECORD.format(
        name=name,
        below=_BELOW_TRACED if _callpath.TRACE else _BELOW_INLINE,
        min_lead=min_lead,
        unpack=unpack(None),
        tail=tail("args"),
    )
    env = {
        "_below": below,
        "_AFTER_BITS": _AFTER_BITS,
        "_grad_state": _grad_mode.state,
        "_record": record,
        "_fastpaths": fastpaths,
        "_new": _new,
        "_Node": node_class(op, formula),
        "_new_seq": new_seq,
        "_op": op,
        "_FLOAT": _FLOAT_KIND,
        "_RG": REQUIRES_GRAD_BIT,
        # The highest bit: ``bits > _RUNTIME`` is ``bits & _RG`` without a new int.
        "_RUNTIME": REQUIRES_GRAD_BIT - 1,
        "_edge": _edge,
        "_NO_EDGE": _NO_EDGE,
    }
    # Most operators share a body (``sin``'s is ``cos``'s): Note [Generated code cache].
    filename = f"<autograd recording {op.name}>"
    kernel = define(source, name, filename, env, _RECORD_CODE, "<autograd recording>")
    kernel.__module__ = __name__  # dump_table and traces name it as the general kernel
    kernel.record = record  # type: ignore[attr-defined]  (the tests compare the two)
    # Note [Positional entries]: one for each count of positional arguments from 1 to 3
    # that a call path can pass and the schema takes (the leading tensors but trailing
    # optional ones, at most the positional arguments it has; one argument only for a
    # one-tensor operator, three only past one tensor).  Each is compiled on its first
    # call: most operators are never recorded through every count, and their bodies are
    # compiled per shape (~15 ms of ``import tensor`` made at import).
    npos = sum(not a.kwarg_only for a in schema_args)

    def build(n: int) -> Callable[..., Any]:
        params = ", ".join(f"a{k}" if k < lead else f"p{k}" for k in range(n))
        source = _RECORD_POSITIONAL.format(
            name=f"{name}_{n}",
            params=params,
            unpack=unpack(n),
            tail=tail(f"({params},)"),
        )
        filename = f"<autograd recording {op.name}, {n} positional>"
        entry = define(source, f"{name}_{n}", filename, env, _RECORD_CODE, "<autograd recording>")
        entry.__module__ = __name__
        return entry

    def general(ks: int, /, *args: Any) -> Any:  # a count no call path passes it
        return kernel(keyset_from_bits(ks), *args)

    entries: list[Callable[..., Any]] = [general, general, general]
    for n in (1, 2, 3):
        if min_lead <= n <= npos and (n != 1 or lead == 1) and (n != 3 or lead > 1):
            entries[n - 1] = _first_call(op, n, build, entries)
    kernel.positional = entries  # type: ignore[attr-defined]  (_rebuild reads it)
    GENERATED[op] = kernel
    return kernel


def _first_call(
    op: OpOverload,
    n: int,
    build: Callable[[int], Callable[..., Any]],
    entries: list[Callable[..., Any]],
) -> Callable[..., Any]:
    """Note [Positional entries]: the stand-in for ``op``'s entry for ``n`` arguments until
    its first call, which builds the entry, puts it in ``entries`` (what the next table
    rebuild reads) and in place of the stand-in in the current table, and calls it.  Two
    threads may both build it: the same function, either one kept."""

    def first_call(ks: int, /, *args: Any) -> Any:
        entry = build(n)
        entries[n - 1] = entry
        state = op._state
        field = f"kernels{n}"
        table = getattr(state, field)
        if first_call in table:
            setattr(state, field, tuple(entry if k is first_call else k for k in table))
        return entry(ks, *args)

    return first_call


# Operator -> its generated Autograd kernel (Note [Generated recording]).
GENERATED: dict[OpOverload, Callable[..., Any]] = {}


_RECORD_CODE: dict[str, CodeType] = {}
# The kernel below autograd: ``op.below(bits)(*args, **kwargs)`` without its frame; under
# DISPATCH_TRACE through ``below`` itself, which logs the hop.
_BELOW_INLINE = """\
    ks = keyset._bits & _AFTER_BITS
    try:  # ``_op.below(ks)``, its memo read without its frame
        below = _op._state.below[ks]
    except KeyError:
        below = _op.below(ks)
    out = below(*args, **kwargs)
"""
_BELOW_TRACED = "    out = _below(keyset._bits & _AFTER_BITS)(*args, **kwargs)\n"


def _append_version(value: str, condition: str) -> list[str]:
    """Source lines appending ``(value, its version)`` to ``versions`` (when ``condition``)."""
    indent = "        " if condition else "    "
    lines = [f"    if {condition}:\n"] if condition else []
    lines.append(f"{indent}t = {value}\n")
    lines.append(f"{indent}c = t._version_counter\n")
    lines.append(f"{indent}versions.append((t, 0 if c is None else c[0]))\n")
    return lines


# -- in-place operators -------------------------------------------------------------------------
_WITH_FORMULA: set[str] = set()  # operator packets with a formula ("core::add"): see out=


def _is_inplace(op: OpOverload) -> bool:
    args = op.schema.arguments
    return bool(args) and args[0].is_write and not args[0].kwarg_only


def _check_inplace(self: Any) -> None:
    base = self._base
    if base is None:
        if self.requires_grad and self.grad_fn is None:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
    elif base.requires_grad and base.grad_fn is None:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )


def _inplace_kernel(op: OpOverload, formula: Formula) -> Callable[..., Any]:
    schema = op.schema
    redispatch = op.redispatch
    grad_state = _grad_mode.state
    spec = _saved_spec(formula)
    cls = node_class(op, formula)

    def kernel(keyset: DispatchKeySet, /, *args: Any, **kwargs: Any) -> Any:
        if not grad_state.grad_enabled:
            return redispatch(keyset & AFTER_AUTOGRAD, *args, **kwargs)
        inputs = _collect(schema, args, kwargs)
        self = inputs[0]
        base = self._base
        if not (
            any(t is not None and t.requires_grad for t in inputs)
            or (base is not None and base.requires_grad)
        ):
            return redispatch(keyset & AFTER_AUTOGRAD, *args, **kwargs)
        _check_inplace(self)
        bound = schema.bind(args, kwargs, op_name=op.name)
        if not _is_differentiable(self):
            return redispatch(keyset & AFTER_AUTOGRAD, *args, **kwargs)
        # ``self`` becomes the output of the node made here, so nothing this node reaches
        # may hold ``self`` itself, or node and ``self`` form a reference cycle (Note
        # [Saved outputs] in _function.py).  They hold ``alias`` instead: same data and
        # version counter, no history, and self's requires_grad from before the write
        # (formulas ask it whether self wants a gradient: ``needs_grad``).
        alias = self.detach()
        alias._dispatch_bits |= self._dispatch_bits & REQUIRES_GRAD_BIT
        copied = _reads_self(spec, bound)
        if copied:
            # The formula reads self's value before the write; a recorded copy, so that
            # second derivatives reach self's history through it.  The copy's own node
            # reads only self's dtype and device.
            old = bound["self"] = ops.core._to_copy(self)
            copy_node = old.grad_fn
            if isinstance(copy_node, OpNode) and copy_node.bound["self"] is self:
                copy_node.bound["self"] = alias
        for name, value in bound.items():
            if value is self:  # self when its value is not read; other in ``a.mul_(a)``
                bound[name] = alias
        # Saved arguments keep their versions from before the write, as in PyTorch: an
        # argument that is self itself (``a.mul_(a)``) then makes backward raise.
        if spec is not None:
            saved = _saved_tensors((spec[0], False), bound, None, skip="self" if copied else "")
        else:
            saved = [t for t in inputs[1:] if t is not None]  # all but self's private copy
        before = [t._version for t in saved]
        out = redispatch(keyset & AFTER_AUTOGRAD, *args, **kwargs)
        if spec is not None and spec[1]:
            saved += _tensors(out)
        node = cls(bound, out, inputs, saved)
        for i, version in enumerate(before):
            node.versions[i] = (node.versions[i][0], version)
        if base is None:
            mark_requires_grad(self, node)
        else:
            _rebase_view(self, base, node)
        return out

    kernel.__qualname__ = kernel.__name__ = f"autograd_{op.name.split('::')[1].replace('.', '_')}"
    return kernel

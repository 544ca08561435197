"""The call path: its steps written once, and every entry generated from them.

Imports: the standard library and sibling ``dispatch`` modules (``_kernel``, ``_keys``,
``_schema``, ``_tls``; ``_operator``'s classes are only named in type hints).

Note [Specialised call paths]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Every entry into an operator takes the same steps: validate the call (Note
[Validating every call]), OR the key bits of its tensors, choose the grad mask
(Note [Grad-only kernels]), add the thread's include set and remove its exclude set
(Note [Default key sets]), take the highest key, and call that slot's kernel, with the
key set when it takes one; on an exception, annotate it with the operator and key.
Those steps are ``STEPS`` below, written once.  The entries differ only in how they
are called and how they find the tensors' bits: one row of ``ENTRIES`` each.

- ``OpOverload.__call__(*args, **kwargs)``: tensor positions from the schema, then the
  ``Tensor?``/``Tensor[]`` extractors;
- ``_OneTensor`` / ``_TwoTensors``: the first one or two arguments are the tensors, so
  the loop is unrolled (~70 ns a call);
- ``_FirstTensorList``: the first argument is a ``Tensor[]``, OR-ed inline (``_LIST_OR``);
- ``_ThreeTensors``: the same for the first three (``addmm``, ``addcmul``);
- ``call1(a)`` / ``call2(a, b)`` / ``call3(a, b, c)``: for callers that pass exactly the
  tensors (the Python operators, ``tt.sin(x)``, ``F.linear``'s ``addmm``): no
  ``*args``/``**kwargs`` to pack and unpack here or in the kernels below (~1.3 us less
  for ``p.add_(g)`` than the general entry, which forwards them through each layer).
  They call no checker: the operator knows whether such a call fits its schema (Note
  [Validating every call]).  Any other call, or a value that is not a tensor, goes on
  through ``self(...)``, the general entry, which says what is wrong.
- ``_TwoTensors.call3(a, b, c)``: two tensors and a third value that is not one
  (``m.lerp_(g, 0.1)``), checked by one set lookup as ``_OneTensor.call2``'s second.
- ``call2k(a, b, kwargs)`` / ``call3k(a, b, c, kwargs)``: the tensors and a dict of
  keyword-only values (``p.add_(g, alpha=-lr)``, ``v.addcmul_(g, g, value=...)``: the
  optimizers' spellings), forwarded as keywords; each value's type is checked against
  its argument by one lookup (``_kwtypes``: a Scalar takes int, float, bool, complex),
  so the checker's call and the ``*args`` packing are skipped (~0.7-1.2 us a call on
  [10], with the ternary in-place kernels one frame shorter).  A name the schema does
  not have, a value that needs the full check, a tensor by keyword: the general entry.

The fixed-arity entries (``call1``, ``call2``, ``call3``) call a with_keyset kernel that
offers an entry for their argument count through that entry instead, with the key bits
(``POSITIONAL``; Note [Positional entries] in ``_operator.py``): the autograd layer's
recording kernels and autocast's fused products.

``OpOverload.redispatch`` is generated too, from ``REDISPATCH``: the same validation and
kernel call, with the key set given instead of computed.

Each entry is compiled with ``_GLOBALS`` as its globals (read as fast as a module's),
set on its class by ``install``, and registered with ``linecache``, so tracebacks and
``inspect.getsource(op.call2)`` show the code that runs.  A shared helper function
instead would cost a frame per call; the steps call functions only off their fast
path (``_slow_bits``, ``_optional_bits``, ``_bind_failed``, ``_annotate``, below).  With DISPATCH_TRACE set (read once, at import)
every entry is generated with a step that logs the key set and the kernel chosen;
unset, the step is absent and costs nothing.
"""

from __future__ import annotations

import linecache
import os
import sys
import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

from . import _tls
from ._codegen import compile_source
from ._kernel import kernel_name
from ._keys import REQUIRES_GRAD_BIT, DispatchKey, key_for_slot, keyset_from_bits
from ._schema import SchemaBindError

if TYPE_CHECKING:
    from ._operator import OpOverload

__all__ = [
    "ENTRIES",
    "annotate_inplace",
    "POSITIONAL",
    "KEYWORDS",
    "REDISPATCH",
    "STEPS",
    "TRACE",
    "VALIDATE",
    "Entry",
    "generate",
    "install",
]

# The steps of a call.  ``self._state`` is a ``_CallState`` (``_operator.py``); the other
# names that start with ``_`` are the generated code's globals, ``_GLOBALS``.
STEPS = """\
def {name}(self, {params}):
{doc}\
{validate}\
{bits}\
    state = self._state
    if bits > _RUNTIME_BITS and (not _GRAD_OFF[0] or _tls_state.grad_enabled):  # Note [Grad-only kernels]
        mask = state.grad_mask
    else:
        mask = state.mask
    if _NONDEFAULT[0] & mask:  # Note [Default key sets] in _tls.py
        included, keep = _tls_state.sets
        ks = (bits | included) & keep & mask
    else:
        ks = (bits | _DEFAULT_INCLUDED) & _DEFAULT_KEEP & mask
    slot = ks.bit_length()
{trace}\
    try:
        if state.with_keyset >> slot & 1:
{positional}            return state.kernels[slot](_from_bits(ks), {forward})
        return state.kernels[slot]({forward})
    except Exception as e:
        _annotate(self, e, slot)
        raise
"""

# The fixed-arity entries' call of a positional entry (Note [Positional entries] in
# _operator.py): {n} is how many arguments the entry passes.
POSITIONAL = """            if state.positional >> slot & 1:
                return state.kernels{n}[slot](ks, {forward})
"""

# The keyword entries' call of a keyword entry (Note [Positional entries] in
# _operator.py): {n} positional tensors ({tensors}) and the caller's dict of keywords.
KEYWORDS = """            if state.keywords >> slot & 1:
                return state.kernels{n}k[slot](ks, {tensors}, kwargs)
"""

# The steps of a redispatch: the key set is the caller's, used exactly (SEMANTICS.md §6).
REDISPATCH = """\
def {name}(self, keyset, {params}):
{doc}\
{validate}\
{bits}\
    ks = keyset._bits
    slot = ks.bit_length()
{trace}\
    state = self._state
    if state.with_keyset >> slot & 1:
        return state.kernels[slot](keyset, {forward})
    return state.kernels[slot]({forward})
"""

# The validation step of the entries that take ``*args, **kwargs``.
VALIDATE = """\
    try:  # Note [Validating every call]
        self._check(*args, **kwargs)
    except TypeError as e:
        _bind_failed(self, args, kwargs, e)
"""

_ANY = "/, *args, **kwargs"


class Entry(NamedTuple):
    """One generated entry: where it goes, what it takes, and how it finds the bits."""

    owner: str  # the class in _operator.py it is set on
    method: str
    params: str  # after ``self``: ``_ANY``, or the positional-only tensors
    bits: str  # sets ``bits``; may return early through ``self(...)``
    doc: str = ""
    template: str = STEPS
    forward: str = ""  # what the kernel gets; default: the params without the ``/``


# Tensor positions from the schema, then the Tensor? and Tensor[] arguments.
_SCHEMA_BITS = """\
    bits = 0
    try:
        for i in self._tensor_pos:
            bits |= args[i]._dispatch_bits
    except (IndexError, AttributeError):
        bits = _slow_bits(self, args, kwargs)
    if self._extractors:
        bits |= _optional_bits(self, args, kwargs)
"""

# A list of tensors' bits, without the general walk, ``_optional_bits`` (~0.3 us on a list
# of ten, ci/bench/ops.py).  A value is OR-ed in only when it is not the first tensor's
# own object: tensors of one device usually share it (``make`` stores ``device._bits``),
# and the test is cheaper than an OR that allocates a new int.  Raises IndexError or
# AttributeError on an empty list or a None or non-tensor element: the general walk then
# raises or skips, as ``OpOverload.__call__`` does.
_LIST_OR = """\
bits = first = tensors[0]._dispatch_bits
for t in tensors:
    if t._dispatch_bits is not first:
        bits |= t._dispatch_bits
"""

# The keyword-only values of call2k/call3k, each of a type that fits its argument outright
# (``_kwtypes``); a name the schema does not have, or a value that needs the checker,
# takes the full path, which checks it.
_KEYWORDS_FIT = """\
    kwtypes = self._kwtypes
    for name, value in kwargs.items():
        if type(value) not in kwtypes.get(name, ()):  # Note [Validating every call]
            return self({tensors}, **kwargs)
"""


def _tensors_bits(tensors: str, arity: str, full: str = "") -> str:
    """The bits step of an entry given exactly ``tensors`` ("a, b"): their bits OR-ed,
    and the full path (``self(<full>)``) for a value that is not a tensor or a call the
    schema does not take as one of this shape (``self.<arity>``, Note [Validating every
    call])."""
    full = full or tensors
    ored = " | ".join(f"{t}._dispatch_bits" for t in tensors.split(", "))
    return f"""\
    try:
        bits = {ored}
    except AttributeError:  # not tensors: the full path says what is wrong
        return self({full})
    if not self.{arity}:  # Note [Validating every call]
        return self({full})
"""


ENTRIES = (
    Entry("OpOverload", "__call__", _ANY, _SCHEMA_BITS),
    Entry(
        "OpOverload",
        "redispatch",
        _ANY,
        """\
    if self._schema is not None:  # the tensors, checked as a call's bits step checks them
        _slow_bits(self, args, kwargs)
        if self._extractors:
            _optional_bits(self, args, kwargs)
""",
        doc="Run the kernel of ``keyset``'s highest key with exactly ``keyset``.\n\n"
        "No thread-local keys are added and nothing is masked (SEMANTICS.md §6).  The call\n"
        "is validated first, as every entry's (Note [Validating every call]).",
        template=REDISPATCH,
    ),
    Entry(
        "_OneTensor",
        "__call__",
        _ANY,
        """\
    try:
        bits = args[0]._dispatch_bits
    except (IndexError, AttributeError):
        bits = _slow_bits(self, args, kwargs)
""",
    ),
    Entry(
        "_OneTensor",
        "call1",
        "a, /",
        """\
    try:
        bits = a._dispatch_bits
    except AttributeError:  # not a tensor: the full path says what is wrong
        return self(a)
    if not self._arity1:  # Note [Validating every call]
        return self(a)
""",
        doc="``self(a)`` for one positional tensor and nothing else (``tt.sin(x)``, ``-x``).",
    ),
    Entry(
        "_OneTensor",
        "call2",
        "a, b, /",
        """\
    try:
        bits = a._dispatch_bits
    except AttributeError:
        return self(a, b)
    if type(b) not in self._types1:  # Note [Validating every call]: the full check
        if type(b) is not list or not self._ints1:
            return self(a, b)
        for v in b:  # an int list (``x.view([4, 4])``), checked here: no frame for it
            if type(v) is not int:
                return self(a, b)
""",
        doc="``self(a, b)`` with ``b`` not a tensor (``x * 0.01``: ``mul.Scalar``, ``x.permute([1, "
        "0])``).",
    ),
    Entry(
        "_OneTensor",
        "call3",
        "a, b, c, /",
        """\
    try:
        bits = a._dispatch_bits
    except AttributeError:
        return self(a, b, c)
    if type(b) not in self._types1of3 or type(c) not in self._types2:  # Note [Validating every call]
        return self(a, b, c)
""",
        doc="``self(a, b, c)`` with ``b`` and ``c`` not tensors (``x[0]``: ``select.int(x, 0, 0)``).",
    ),
    Entry(
        "_TwoTensors",
        "__call__",
        _ANY,
        """\
    try:
        bits = args[0]._dispatch_bits | args[1]._dispatch_bits
    except (IndexError, AttributeError):
        bits = _slow_bits(self, args, kwargs)
""",
    ),
    Entry(
        "_TwoTensors",
        "call2",
        "a, b, /",
        _tensors_bits("a, b", "_arity2"),
        doc="``self(a, b)`` for two positional tensors and nothing else (``a + b``).",
    ),
    Entry(
        "OpOverload",
        "call2",
        "a, b, /",
        _tensors_bits("a, b", "_arity2t"),
        doc="``self(a, b)`` for two positional tensors, every other argument at its default\n"
        "(``cross_entropy(x, y)``: its optional weight None).",
    ),
    Entry(
        "OpOverload",
        "call3",
        "a, b, c, /",
        _tensors_bits("a, b, c", "_arity3"),
        doc="``self(a, b, c)`` for three positional tensors and nothing else (``linear``).",
    ),
    Entry(
        "OpOverload",
        "call2k",
        "a, b, kwargs, /",
        _tensors_bits("a, b", "_arity2t", "a, b, **kwargs") + _KEYWORDS_FIT.format(tensors="a, b"),
        doc="``self(a, b, **kwargs)`` for two positional tensors and keyword-only values\n"
        "(``p.add_(g, alpha=-lr)``): no ``*args`` to pack, nor the checker's call.",
        forward="a, b, **kwargs",
    ),
    Entry(
        "OpOverload",
        "call3k",
        "a, b, c, kwargs, /",
        _tensors_bits("a, b, c", "_arity3", "a, b, c, **kwargs")
        + _KEYWORDS_FIT.format(tensors="a, b, c"),
        doc="``self(a, b, c, **kwargs)`` for three positional tensors and keyword-only\n"
        "values (``v.addcmul_(g, g, value=1 - beta2)``).",
        forward="a, b, c, **kwargs",
    ),
    Entry(
        "_TwoTensors",
        "call3",
        "a, b, c, /",
        """\
    try:
        bits = a._dispatch_bits | b._dispatch_bits
    except AttributeError:
        return self(a, b, c)
    if type(c) not in self._types2:  # Note [Validating every call]: the full check
        return self(a, b, c)
""",
        doc="``self(a, b, c)`` with ``c`` not a tensor (``m.lerp_(g, 0.1)``: ``lerp_.Scalar``).",
    ),
    Entry(
        "_ThreeTensors",
        "__call__",
        _ANY,
        """\
    try:
        bits = args[0]._dispatch_bits | args[1]._dispatch_bits | args[2]._dispatch_bits
    except (IndexError, AttributeError):
        bits = _slow_bits(self, args, kwargs)
""",
    ),
    Entry(
        "_FirstTensorList",
        "__call__",
        _ANY,
        f"""\
    tensors = args[0] if args else None
    if type(tensors) is list or type(tensors) is tuple:  # not a subclass: the general walk
        try:
{textwrap.indent(_LIST_OR, " " * 12)}\
        except (IndexError, AttributeError):
            bits = _optional_bits(self, args, kwargs)
    else:
        bits = _optional_bits(self, args, kwargs)
""",
    ),
    Entry(
        "_FirstTensorList",
        "call1",
        "tensors, /",
        f"""\
    if (type(tensors) is not list and type(tensors) is not tuple) or not self._arity1:
        return self(tensors)
    try:
{textwrap.indent(_LIST_OR, " " * 8)}\
    except (IndexError, AttributeError):
        return self(tensors)
""",
        doc="``self(tensors)``: the list alone (``tt.cat(xs)``).",
    ),
)

# Read once: with DISPATCH_TRACE unset the entries have no trace step at all.
TRACE = os.environ.get("DISPATCH_TRACE", "") not in ("", "0")


def _trace(kind: str, op: OpOverload, bits: int) -> None:
    """Log one hop to stderr: the key set, the key it dispatches to, and that key's kernel."""
    slot = bits.bit_length()
    entry = op._entries[slot] if op._entries else None
    kernel = entry.kernel if entry is not None else None
    where = f"{kernel_name(kernel.fn)} [{entry.source}]" if kernel and entry else "<missing>"
    print(
        f"[dispatch] {kind:10} {op._qualname} keys={keyset_from_bits(bits)!r} -> "
        f"{key_for_slot(slot).name}: {where}",
        file=sys.stderr,
    )


# -- what the steps call off their fast path -----------------------------------------------
_MISSING = object()  # an argument not given


def _slow_bits(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """Tensor bits when a tensor argument came by keyword or is not a tensor."""
    schema = op.schema
    bits = 0
    for i in op._tensor_pos:
        value = args[i] if i < len(args) else kwargs.get(schema.arguments[i].name, _MISSING)
        b = getattr(value, "_dispatch_bits", None)
        if b is None:
            schema.check(args, kwargs, op_name=op._qualname)
            # check() accepted it (e.g. a permissive type): nothing to add.
            continue
        bits |= b
    return bits


def _optional_bits(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """Bits of Tensor? and Tensor[] arguments (rarer; kept off the plain-Tensor path)."""
    bits = 0
    for i, name, kind in op._extractors:
        value = args[i] if i < len(args) else kwargs.get(name)
        if value is None:
            if i in op._required_lists:  # Tensor[] (not Tensor[]?) takes no None
                op.schema.check(args, kwargs, op_name=op._qualname)
            continue
        if kind == "tensor_list":
            optional_elements = i in op._optional_elements
            if not isinstance(value, (list, tuple)):
                op.schema.check(args, kwargs, op_name=op._qualname)
                continue
            for t in value:
                b = getattr(t, "_dispatch_bits", None)
                if b is None:
                    if t is None and optional_elements:
                        continue
                    op.schema.check(args, kwargs, op_name=op._qualname)
                    continue
                bits |= b
        else:
            b = getattr(value, "_dispatch_bits", None)
            if b is None:
                op.schema.check(args, kwargs, op_name=op._qualname)
                continue
            bits |= b
    return bits


def _bind_failed(
    op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any], e: TypeError
) -> NoReturn:
    """The checker refused the call: say why in the schema's terms."""
    if not isinstance(e, SchemaBindError):
        op.schema.check(args, kwargs, op_name=op._qualname)  # raises, naming the argument
    raise e


def _annotate(op: OpOverload, e: Exception, slot: int) -> None:
    """A kernel raised: add a note naming the operator and the key, unless it is there.

    The exception keeps its type and traceback.  The call was validated before the
    kernel ran (Note [Validating every call]), so the error is the kernel's own.
    """
    note = f"while dispatching {op._qualname} (key {key_for_slot(slot).name})"
    if note not in getattr(e, "__notes__", ()):
        e.add_note(note)


_INPLACE_SLOT = DispatchKey.ADInplaceOrView.bit.bit_length()


def annotate_inplace(op: OpOverload, e: Exception) -> None:
    """``_annotate`` for a kernel called by a direct in-place entry (Note [Direct in-place
    entry] in _operator.py): the note the keyword entry would add, naming
    ADInplaceOrView's key, whose work the entry did."""
    _annotate(op, e, _INPLACE_SLOT)


# The generated code's globals: every name the templates read, and nothing else.
_GLOBALS: dict[str, Any] = {
    "_RUNTIME_BITS": REQUIRES_GRAD_BIT - 1,  # bits above it: a tensor requires grad
    "_tls_state": _tls.state,
    "_NONDEFAULT": _tls.NONDEFAULT,
    "_GRAD_OFF": _tls.GRAD_OFF,  # Note [Grad mode off somewhere] in _tls.py
    "_DEFAULT_INCLUDED": _tls.DEFAULT_INCLUDED,
    "_DEFAULT_KEEP": _tls.DEFAULT_KEEP,
    "_from_bits": keyset_from_bits,
    "_trace": _trace,
    "_slow_bits": _slow_bits,
    "_optional_bits": _optional_bits,
    "_bind_failed": _bind_failed,
    "_annotate": _annotate,
}


def generate(entry: Entry, module: str) -> Callable[..., Any]:
    """Compile ``entry`` from its template; ``module`` is its class's module."""
    qualname = f"{entry.owner}.{entry.method}"
    if entry.params == _ANY:
        validate, forward = VALIDATE, "*args, **kwargs"
    else:
        validate, forward = "", entry.forward or entry.params.replace(", /", "")
    kind = "redispatch" if entry.template is REDISPATCH else "call"
    arity = 0 if "*" in forward else len(forward.split(", "))
    positional = POSITIONAL.format(n=arity, forward=forward) if 1 <= arity <= 3 else ""
    if entry.params.endswith(", kwargs, /"):  # call2k, call3k: the keyword entries
        tensors = entry.params.removesuffix(", kwargs, /")
        positional = KEYWORDS.format(n=len(tensors.split(", ")), tensors=tensors)
    end = "\n" if "\n" in entry.doc else ""  # a long docstring closes on its own line
    doc = textwrap.indent(f'"""{entry.doc}{end}"""\n', "    ") if entry.doc else ""
    source = entry.template.format(
        name=entry.method,
        params=entry.params,
        doc=doc,
        validate=validate,
        bits=entry.bits,
        trace=f"    _trace({kind!r}, self, ks)\n" if TRACE else "",
        forward=forward,
        positional=positional,
    )
    filename = f"<dispatch call path {qualname}>"
    # Kept for the life of the process, as a module's source is: tracebacks and
    # inspect.getsource read it.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = dict(_GLOBALS)
    exec(compile_source(source, filename), namespace)  # noqa: S102
    fn: Callable[..., Any] = namespace.pop(entry.method)
    fn.__qualname__ = qualname
    fn.__module__ = module
    return fn


def install(*classes: type) -> None:
    """Generate every entry of ``ENTRIES`` and set it on its owner, one of ``classes``."""
    owners = {cls.__name__: cls for cls in classes}
    for entry in ENTRIES:
        cls = owners[entry.owner]
        setattr(cls, entry.method, generate(entry, cls.__module__))

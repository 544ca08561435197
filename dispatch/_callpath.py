"""The call path's steps, written once, and the entries generated from them.

Imports: the standard library only.

Note [Specialised call paths]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Every entry into an operator takes the same steps: validate the call (Note
[Validating every call]), OR the key bits of its tensors, choose the grad mask
(Note [Grad-only kernels]), add the thread's include set and remove its exclude set
(Note [Default key sets]), take the highest key, and call that slot's kernel, with the
key set when it takes one; on an exception, annotate it with the operator and key.
Those steps are ``STEPS`` below, once.  The entries differ only in how they are called
and how they find the tensors' bits:

- ``OpOverload.__call__(*args, **kwargs)``: tensor positions from the schema, then the
  ``Tensor?``/``Tensor[]`` extractors;
- ``_OneTensor`` / ``_TwoTensors``: the first one or two arguments are the tensors, so
  the loop is unrolled (~70 ns a call);
- ``_FirstTensorList``: the first argument is a ``Tensor[]``, OR-ed inline;
- ``call1(a)`` / ``call2(a, b)``: for callers that pass exactly the tensors (the Python
  operators, ``tt.sin(x)``): no ``*args``/``**kwargs`` to pack and unpack, ~130 ns less.

Each entry is generated from ``STEPS`` with its own parameters and bits step, compiled
into ``dispatch._operator``'s namespace (its names are module globals there, read as
fast as in hand-written code) and registered with ``linecache``, so tracebacks and
``inspect.getsource(OpOverload.__call__)`` show the code that runs.  A shared helper
function instead would cost a frame per call; a change to the steps is one change here.
"""

from __future__ import annotations

import linecache
from collections.abc import Callable
from typing import Any

__all__ = ["STEPS", "generate"]

STEPS = """\
def {name}(self, {params}):
{validate}\
    mask, fns, ks_slots, grad_mask = self._state
{bits}\
    if bits > _RUNTIME_BITS and _tls_state.grad_enabled:  # Note [Grad-only kernels]
        mask = grad_mask
    if _NONDEFAULT[0] & mask:  # Note [Default key sets] in _tls.py
        included, keep = _tls_state.sets
        ks = (bits | included) & keep & mask
    else:
        ks = (bits | _DEFAULT_INCLUDED) & _DEFAULT_KEEP & mask
    slot = ks.bit_length()
    try:
        if ks_slots >> slot & 1:
            return fns[slot](_from_bits(ks), {forward})
        return fns[slot]({forward})
    except Exception as e:
        self._annotate(e, slot, {args_tuple}, {kwargs_dict})
        raise
"""

# Validation for the entries that take ``*args, **kwargs``.
VALIDATE = """\
    try:  # Note [Validating every call]
        self._check(*args, **kwargs)
    except TypeError as e:
        self._bind_failed(args, kwargs, e)
"""


def generate(
    namespace: dict[str, Any],
    qualname: str,
    *,
    params: str,
    bits: str,
    validate: str = "",
    forward: str | None = None,
    args_tuple: str = "args",
    kwargs_dict: str = "kwargs",
    doc: str = "",
) -> Callable[..., Any]:
    """Compile one entry (``qualname`` as ``"_OneTensor.call1"``) from ``STEPS``.

    ``bits`` is the step that sets ``bits`` (it may return early through the general
    entry); ``forward`` the arguments passed on to the kernel.
    """
    name = qualname.rpartition(".")[2]
    if forward is None:
        forward = ", ".join(p for p in params.replace("/", "").split(", ") if p)
    source = STEPS.format(
        name=name,
        params=params,
        validate=validate,
        bits=bits,
        forward=forward,
        args_tuple=args_tuple,
        kwargs_dict=kwargs_dict,
    )
    filename = f"<dispatch call path {qualname}>"
    # Kept for the life of the process, as a module's source is: tracebacks and
    # inspect.getsource read it.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102
    fn: Callable[..., Any] = namespace.pop(name)
    fn.__qualname__ = qualname
    fn.__module__ = namespace["__name__"]
    fn.__doc__ = doc or None
    return fn

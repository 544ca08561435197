"""arraydispatch's dispatcher: keys, operators, registration and introspection.

Imports: the standard library only (never numpy, cupy, ``tensor`` or ``backends``).
Any object with an int attribute ``_dispatch_bits`` (a DispatchKeySet's bits, plus
``REQUIRES_GRAD_BIT`` while it requires grad) is a tensor to the dispatcher, so
this package works with any tensor type.

    >>> import dispatch
    >>> class T:
    ...     _dispatch_bits = dispatch.DispatchKeySet(dispatch.DispatchKey.CPU).bits
    >>> with dispatch.Library("doc_init", "DEF") as lib:
    ...     _ = lib.define("ident(Tensor x) -> Tensor")
    ...     lib.impl("ident", lambda x: "cpu kernel ran", "CPU")
    ...     dispatch.ops.doc_init.ident(T())
    'cpu kernel ran'
"""

from . import _fallbacks as _fallbacks  # registers the default backend fallbacks
from ._custom_ops import (
    CustomOpDef,
    custom_op,
    register_autocast,
    register_autograd,
    register_fake,
    register_kernel,
    set_autograd_kernel_factory,
)
from ._explain import dump_table, explain
from ._hop import HigherOrderOperator
from ._infer_schema import infer_schema
from ._kernel import fallthrough_kernel
from ._keys import DispatchKey, DispatchKeySet
from ._library import (
    Library,
    define,
    impl,
    key_for_type,
    privateuse_backend_name,
    rename_privateuse_backend,
    scoped_library,
)
from ._modes import DispatchMode, current_modes
from ._opcheck import OpCheckError, opcheck
from ._operator import REQUIRES_GRAD_BIT, OpOverload, OpOverloadPacket
from ._ops import ops
from ._registry import bulk_registration
from ._schema import FunctionSchema, SchemaBindError, SchemaParseError, parse_schema
from ._schema_types import register_type_check
from ._tls import (
    exclude_keys,
    include_keys,
    tls_is_dispatch_key_excluded,
    tls_is_dispatch_key_included,
    tls_local_exclude_set,
    tls_local_include_set,
    tls_set_dispatch_key_excluded,
    tls_set_dispatch_key_included,
)

__all__ = [
    "REQUIRES_GRAD_BIT",
    "CustomOpDef",
    "DispatchKey",
    "DispatchKeySet",
    "DispatchMode",
    "FunctionSchema",
    "HigherOrderOperator",
    "Library",
    "OpCheckError",
    "OpOverload",
    "OpOverloadPacket",
    "SchemaBindError",
    "SchemaParseError",
    "bulk_registration",
    "current_modes",
    "custom_op",
    "define",
    "dump_table",
    "exclude_keys",
    "explain",
    "fallthrough_kernel",
    "impl",
    "include_keys",
    "infer_schema",
    "key_for_type",
    "privateuse_backend_name",
    "rename_privateuse_backend",
    "register_type_check",
    "opcheck",
    "ops",
    "parse_schema",
    "register_autocast",
    "register_autograd",
    "register_fake",
    "register_kernel",
    "scoped_library",
    "set_autograd_kernel_factory",
    "tls_local_exclude_set",
    "tls_is_dispatch_key_excluded",
    "tls_is_dispatch_key_included",
    "tls_local_include_set",
    "tls_set_dispatch_key_excluded",
    "tls_set_dispatch_key_included",
]

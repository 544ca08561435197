"""``dispatch._keys``: key priority, alias keys, parsing and the immutable DispatchKeySet.

Expected values are PyTorch 2.13's (SEMANTICS.md §1) and are written into the tests;
the ``torch``-marked test compares the priority order live when torch is installed.
"""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dispatch import DispatchKey, DispatchKeySet
from dispatch._keys import (
    ALIAS_KEYS,
    ALIAS_TO_RUNTIME,
    AUTOCAST_KEYS,
    AUTOGRAD_KEYS,
    BACKEND_KEYS,
    NUM_RUNTIME_KEYS,
    RUNTIME_KEYS,
)

K = DispatchKey

# SEMANTICS.md §1.2, "the subset that matters for CPU/CUDA/Meta", highest first.
SUBSET_ORDER = [
    K.PythonDispatcher,
    K.PreDispatch,
    K.PythonTLSSnapshot,
    K.AutocastCUDA,
    K.AutocastCPU,
    K.AutogradMeta,
    K.AutogradCUDA,
    K.AutogradCPU,
    K.AutogradOther,
    K.ADInplaceOrView,
    K.Python,
    K.BackendSelect,
    K.Meta,
    K.CUDA,
    K.CPU,
    K.Undefined,
]

ALIASES = [
    K.Autograd,
    K.CompositeImplicitAutograd,
    K.CompositeExplicitAutograd,
    K.CompositeExplicitAutogradNonFunctional,
]


# -- priority order -----------------------------------------------------------------------------
def test_priority_order_matches_pytorch_subset() -> None:
    assert sorted(SUBSET_ORDER, reverse=True) == SUBSET_ORDER


def test_iteration_follows_priority_order() -> None:
    ks = DispatchKeySet(SUBSET_ORDER[:-1])
    assert list(ks) == SUBSET_ORDER[:-1]


@pytest.mark.parametrize("i", range(len(SUBSET_ORDER) - 2))
def test_highest_priority_key_of_each_adjacent_pair(i: int) -> None:
    higher, lower = SUBSET_ORDER[i], SUBSET_ORDER[i + 1]
    assert DispatchKeySet([lower, higher]).highest_priority_key() is higher


def test_within_a_functionality_the_higher_backend_wins() -> None:
    # {CPU, CUDA} -> CUDA, {AutogradCPU, AutogradCUDA} -> AutogradCUDA, {CPU, Meta} -> Meta.
    assert DispatchKeySet([K.CPU, K.CUDA]).highest_priority_key() is K.CUDA
    assert DispatchKeySet([K.AutogradCPU, K.AutogradCUDA]).highest_priority_key() is K.AutogradCUDA
    assert DispatchKeySet([K.CPU, K.Meta]).highest_priority_key() is K.Meta


# -- alias keys ----------------------------------------------------------------------------------
@pytest.mark.parametrize("alias", ALIASES, ids=lambda k: k.name)
def test_alias_keys_are_not_runtime_and_make_an_empty_set(alias: DispatchKey) -> None:
    assert alias.is_alias
    assert not alias.is_runtime
    assert alias not in RUNTIME_KEYS
    assert DispatchKeySet(alias) == DispatchKeySet()
    assert not DispatchKeySet(alias)
    assert not DispatchKeySet.full().has(alias)


def test_undefined_is_neither_alias_nor_runtime() -> None:
    assert not K.Undefined.is_alias
    assert not K.Undefined.is_runtime
    assert DispatchKeySet(K.Undefined) == DispatchKeySet()


def test_runtime_keys_are_all_the_non_alias_keys_but_undefined() -> None:
    assert set(RUNTIME_KEYS) == {k for k in K if k is not K.Undefined and k not in ALIASES}
    assert len(RUNTIME_KEYS) == NUM_RUNTIME_KEYS
    assert set(SUBSET_ORDER[:-1]) <= set(RUNTIME_KEYS)


def test_alias_to_runtime_table() -> None:
    backends = {K.CPU, K.CUDA, K.Meta}
    autograd = {K.AutogradOther, K.AutogradCPU, K.AutogradCUDA, K.AutogradMeta}
    assert set(ALIAS_KEYS) == set(ALIASES)
    assert set(ALIAS_TO_RUNTIME) == set(ALIASES)
    assert ALIAS_TO_RUNTIME[K.Autograd] == AUTOGRAD_KEYS
    assert ALIAS_TO_RUNTIME[K.CompositeImplicitAutograd] == BACKEND_KEYS | AUTOGRAD_KEYS
    assert ALIAS_TO_RUNTIME[K.CompositeExplicitAutograd] == BACKEND_KEYS
    assert ALIAS_TO_RUNTIME[K.CompositeExplicitAutogradNonFunctional] == BACKEND_KEYS
    # The keys that matter are in there, and nothing from other layers.
    assert autograd <= AUTOGRAD_KEYS
    assert backends <= BACKEND_KEYS
    for runtime in ALIAS_TO_RUNTIME.values():
        assert all(k.is_runtime for k in runtime)
        assert not runtime & AUTOCAST_KEYS
        assert K.ADInplaceOrView not in runtime
        assert K.BackendSelect not in runtime
        assert K.Python not in runtime
        assert K.Undefined not in runtime


# -- parsing --------------------------------------------------------------------------------------
@pytest.mark.parametrize("key", list(K), ids=lambda k: k.name)
def test_parse_every_key_by_name(key: DispatchKey) -> None:
    assert DispatchKey.parse(key.name) is key
    assert DispatchKey.parse(key) is key


def test_parse_unknown_name_raises_runtime_error() -> None:
    with pytest.raises(RuntimeError, match="could not parse dispatch key") as info:
        DispatchKey.parse("Nope")
    assert "Nope" in str(info.value)


def test_parse_autocast_is_autocast_cuda() -> None:
    assert DispatchKey.parse("Autocast") is K.AutocastCUDA


def test_parse_non_string_raises_type_error() -> None:
    with pytest.raises(TypeError):
        DispatchKey.parse(3)  # type: ignore[arg-type]


def test_keyset_from_unknown_name_raises() -> None:
    with pytest.raises(RuntimeError, match="could not parse dispatch key"):
        DispatchKeySet("NotAKey")


def test_str_and_repr_of_a_key() -> None:
    assert str(K.AutogradCPU) == "AutogradCPU"
    assert repr(K.CPU) == f"<DispatchKey.CPU: {int(K.CPU)}>"


# -- DispatchKeySet operations ------------------------------------------------------------------
def test_set_operators() -> None:
    a = DispatchKeySet([K.CPU, K.AutogradCPU])
    b = DispatchKeySet([K.AutogradCPU, K.Meta])
    assert a | b == DispatchKeySet([K.CPU, K.AutogradCPU, K.Meta])
    assert a & b == DispatchKeySet(K.AutogradCPU)
    assert a - b == DispatchKeySet(K.CPU)
    assert b - a == DispatchKeySet(K.Meta)
    # Operands are unchanged.
    assert a == DispatchKeySet([K.CPU, K.AutogradCPU])


def test_set_operators_with_other_types_are_type_errors() -> None:
    ks = DispatchKeySet(K.CPU)
    with pytest.raises(TypeError):
        _ = ks | K.CUDA  # type: ignore[operator]
    with pytest.raises(TypeError):
        _ = ks & {K.CPU}  # type: ignore[operator]
    with pytest.raises(TypeError):
        _ = ks - 1  # type: ignore[operator]


def test_has_add_remove_and_in() -> None:
    ks = DispatchKeySet(K.CPU)
    added = ks.add(K.AutogradCPU)
    assert added == DispatchKeySet([K.CPU, K.AutogradCPU])
    assert ks == DispatchKeySet(K.CPU)  # add returns a new set
    assert added.has(K.AutogradCPU) and added.has("CPU")
    assert K.AutogradCPU in added
    assert "AutogradCPU" in added
    assert K.Meta not in added
    removed = added.remove("CPU")
    assert removed == DispatchKeySet(K.AutogradCPU)
    assert added.remove(K.Meta) == added  # removing an absent key is a no-op
    assert K.CPU in added  # remove returns a new set


def test_alias_keys_are_never_members() -> None:
    full = DispatchKeySet.full()
    for alias in ALIASES:
        assert alias not in full
        assert full.add(alias) == full
        assert full.remove(alias) == full


def test_constructor_forms() -> None:
    assert DispatchKeySet() == DispatchKeySet([])
    assert DispatchKeySet("CPU") == DispatchKeySet(K.CPU) == DispatchKeySet(["CPU"])
    assert DispatchKeySet(k for k in (K.CPU, K.Meta)) == DispatchKeySet([K.Meta, K.CPU])


def test_len_bool_eq_hash() -> None:
    empty = DispatchKeySet()
    ks = DispatchKeySet([K.CPU, K.AutogradCPU, K.CPU])
    assert len(empty) == 0 and not empty
    assert len(ks) == 2 and ks
    assert ks == DispatchKeySet([K.AutogradCPU, K.CPU])
    assert ks != DispatchKeySet(K.CPU)
    assert ks != {K.CPU, K.AutogradCPU}
    assert hash(ks) == hash(DispatchKeySet([K.AutogradCPU, K.CPU]))
    assert len({ks, DispatchKeySet([K.AutogradCPU, K.CPU]), empty}) == 2


def test_repr_lists_keys_highest_first() -> None:
    assert repr(DispatchKeySet([K.CPU, K.AutogradCPU])) == "DispatchKeySet(AutogradCPU, CPU)"
    assert repr(DispatchKeySet()) == "DispatchKeySet()"
    assert (
        repr(DispatchKeySet([K.CPU, K.BackendSelect, K.ADInplaceOrView, K.AutocastCPU]))
        == "DispatchKeySet(AutocastCPU, ADInplaceOrView, BackendSelect, CPU)"
    )


def test_keysets_are_immutable() -> None:
    ks = DispatchKeySet(K.CPU)
    with pytest.raises(AttributeError, match="immutable"):
        ks._bits = 0  # type: ignore[misc]
    with pytest.raises(AttributeError):
        ks.anything = 1  # type: ignore[attr-defined]
    assert ks == DispatchKeySet(K.CPU)


def test_bits_round_trip() -> None:
    for key in RUNTIME_KEYS:
        ks = DispatchKeySet(key)
        assert ks.bits == key.bit != 0
        assert DispatchKeySet.from_bits(ks.bits) == ks
    ks = DispatchKeySet([K.CPU, K.AutogradCPU, K.PythonDispatcher])
    assert DispatchKeySet.from_bits(ks.bits) == ks
    assert DispatchKeySet.from_bits(0) == DispatchKeySet()


def test_pickle_round_trip() -> None:
    ks = DispatchKeySet([K.Meta, K.AutogradMeta])
    assert pickle.loads(pickle.dumps(ks)) == ks


def test_full_holds_every_runtime_key() -> None:
    full = DispatchKeySet.full()
    assert set(full) == set(RUNTIME_KEYS)
    assert len(full) == NUM_RUNTIME_KEYS
    assert full.highest_priority_key() is K.PythonDispatcher


def test_full_after_cpu_is_only_python_dispatcher() -> None:
    assert DispatchKeySet.full_after(K.CPU) == DispatchKeySet(K.PythonDispatcher)


def test_full_after_autograd_other() -> None:
    after = DispatchKeySet.full_after("AutogradOther")
    assert K.ADInplaceOrView in after
    assert K.CPU in after
    assert K.CUDA in after and K.Meta in after
    assert K.BackendSelect in after and K.Python in after
    assert K.PythonDispatcher in after
    assert K.AutogradOther not in after
    assert K.AutogradCPU not in after
    assert K.AutogradMeta not in after
    assert K.AutocastCPU not in after


@pytest.mark.parametrize("key", RUNTIME_KEYS, ids=lambda k: k.name)
def test_full_after_is_every_lower_key_plus_python_dispatcher(key: DispatchKey) -> None:
    expected = {k for k in RUNTIME_KEYS if k < key} | {K.PythonDispatcher}
    assert set(DispatchKeySet.full_after(key)) == expected


def test_full_after_an_alias_key_is_an_error() -> None:
    with pytest.raises(ValueError):
        DispatchKeySet.full_after(K.Autograd)


def test_highest_priority_key_of_empty_is_undefined() -> None:
    assert DispatchKeySet().highest_priority_key() is K.Undefined


# -- algebra against frozenset ----------------------------------------------------------------------
_runtime_sets = st.frozensets(st.sampled_from(RUNTIME_KEYS))


@given(_runtime_sets, _runtime_sets)
def test_set_algebra_matches_frozenset(
    a: frozenset[DispatchKey], b: frozenset[DispatchKey]
) -> None:
    ka, kb = DispatchKeySet(a), DispatchKeySet(b)
    assert set(ka | kb) == a | b
    assert set(ka & kb) == a & b
    assert set(ka - kb) == a - b
    assert len(ka) == len(a)
    assert bool(ka) == bool(a)
    assert (ka == kb) == (a == b)
    assert list(ka) == sorted(a, reverse=True)
    assert ka.highest_priority_key() is (max(a) if a else K.Undefined)
    assert DispatchKeySet.from_bits(ka.bits) == ka
    for k in RUNTIME_KEYS:
        assert (k in ka) == (k in a)


# -- live comparison ---------------------------------------------------------------------------------
@pytest.mark.torch
def test_priority_order_matches_live_torch() -> None:
    torch = pytest.importorskip(
        "torch", reason="torch is not installed; the order is recorded above"
    )
    tk = torch._C.DispatchKey
    for higher, lower in zip(SUBSET_ORDER[:-2], SUBSET_ORDER[1:-1], strict=True):
        ks = torch._C.DispatchKeySet(getattr(tk, lower.name)) | torch._C.DispatchKeySet(
            getattr(tk, higher.name)
        )
        assert ks.highestPriorityTypeId() == getattr(tk, higher.name), (higher, lower)
    for alias in ALIASES:
        assert repr(torch._C.DispatchKeySet(getattr(tk, alias.name))) == "DispatchKeySet()"

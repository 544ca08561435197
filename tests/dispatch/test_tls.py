"""``dispatch._tls``: the per-thread include/exclude key sets and their guards.

Defaults are PyTorch 2.13's (SEMANTICS.md §2): included {BackendSelect,
ADInplaceOrView}, every autocast key excluded; exclusion wins over inclusion.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from dispatch import (
    DispatchKey,
    DispatchKeySet,
    _tls,
    exclude_keys,
    include_keys,
    ops,
    tls_local_exclude_set,
    tls_local_include_set,
    tls_set_dispatch_key_excluded,
)
from dispatch._keys import AUTOCAST_KEYS, AUTOGRAD_KEYS

from .conftest import FakeTensor, Registration

K = DispatchKey
DEFAULT_INCLUDED = DispatchKeySet([K.BackendSelect, K.ADInplaceOrView])
DEFAULT_EXCLUDED = DispatchKeySet(AUTOCAST_KEYS)


def _snapshot() -> tuple[DispatchKeySet, DispatchKeySet]:
    return tls_local_include_set(), tls_local_exclude_set()


@pytest.fixture(autouse=True)
def _tls_is_default_around_each_test() -> Any:
    assert _snapshot() == (DEFAULT_INCLUDED, DEFAULT_EXCLUDED)
    yield
    assert _snapshot() == (DEFAULT_INCLUDED, DEFAULT_EXCLUDED)


# -- defaults -------------------------------------------------------------------------------------
def test_default_include_set() -> None:
    assert tls_local_include_set() == DispatchKeySet([K.BackendSelect, K.ADInplaceOrView])


def test_default_exclude_set_is_every_autocast_key() -> None:
    excluded = tls_local_exclude_set()
    assert excluded == DispatchKeySet(AUTOCAST_KEYS)
    assert K.AutocastCPU in excluded and K.AutocastCUDA in excluded
    assert not any(k in excluded for k in AUTOGRAD_KEYS)


@pytest.mark.torch
def test_defaults_match_live_torch() -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed; defaults recorded above")
    inc = {str(k).split(".")[-1] for k in _torch_keys(torch._C._dispatch_tls_local_include_set())}
    exc = {str(k).split(".")[-1] for k in _torch_keys(torch._C._dispatch_tls_local_exclude_set())}
    assert inc == {k.name for k in DEFAULT_INCLUDED}
    # torch has more autocast keys (MPS, XPU, ...); ours are all among its excluded ones.
    assert {k.name for k in DEFAULT_EXCLUDED} <= exc
    assert all(name.startswith("Autocast") for name in exc)


def _torch_keys(ks: Any) -> list[str]:
    # repr is "DispatchKeySet(A, B, ...)".
    inner = repr(ks)[len("DispatchKeySet(") : -1]
    return [name.strip() for name in inner.split(",") if name.strip()]


# -- guards ------------------------------------------------------------------------------------
def test_exclude_keys_adds_and_restores() -> None:
    with exclude_keys(K.AutogradCPU):
        assert tls_local_exclude_set() == DEFAULT_EXCLUDED.add(K.AutogradCPU)
        assert tls_local_include_set() == DEFAULT_INCLUDED
    assert _snapshot() == (DEFAULT_INCLUDED, DEFAULT_EXCLUDED)


def test_include_keys_adds_and_restores() -> None:
    with include_keys("Python", K.PythonTLSSnapshot):
        assert tls_local_include_set() == DEFAULT_INCLUDED | DispatchKeySet(
            [K.Python, K.PythonTLSSnapshot]
        )
        assert tls_local_exclude_set() == DEFAULT_EXCLUDED
    assert _snapshot() == (DEFAULT_INCLUDED, DEFAULT_EXCLUDED)


def test_guards_nest_and_restore_in_order() -> None:
    with exclude_keys("AutogradCPU"):
        with include_keys("Python"):
            with exclude_keys("Meta"):
                assert K.Meta in tls_local_exclude_set()
                assert K.AutogradCPU in tls_local_exclude_set()
                assert K.Python in tls_local_include_set()
            assert K.Meta not in tls_local_exclude_set()
            assert K.AutogradCPU in tls_local_exclude_set()
            assert K.Python in tls_local_include_set()
        assert K.Python not in tls_local_include_set()
        assert K.AutogradCPU in tls_local_exclude_set()
    assert _snapshot() == (DEFAULT_INCLUDED, DEFAULT_EXCLUDED)


def test_nested_guard_on_a_key_already_present_keeps_it_after_inner_exit() -> None:
    with exclude_keys(K.AutogradCPU):
        with exclude_keys(K.AutogradCPU):
            pass
        assert K.AutogradCPU in tls_local_exclude_set()
    with exclude_keys(K.AutocastCPU):  # already excluded by default
        pass
    assert K.AutocastCPU in tls_local_exclude_set()


def test_guards_restore_when_the_block_raises() -> None:
    class Boom(Exception):
        pass

    with pytest.raises(Boom), exclude_keys("AutogradCPU"), include_keys("Python"):
        raise Boom
    assert _snapshot() == (DEFAULT_INCLUDED, DEFAULT_EXCLUDED)

    with exclude_keys("Meta"):
        with pytest.raises(Boom), include_keys("CPU"):
            raise Boom
        assert _snapshot() == (DEFAULT_INCLUDED, DEFAULT_EXCLUDED.add(K.Meta))


def test_alias_key_expands_to_its_runtime_keys() -> None:
    with exclude_keys("Autograd"):
        excluded = tls_local_exclude_set()
        assert all(k in excluded for k in AUTOGRAD_KEYS)
        assert K.AutogradCPU in excluded and K.AutogradOther in excluded
        assert K.CPU not in excluded
    with include_keys(K.CompositeExplicitAutograd):
        included = tls_local_include_set()
        assert {K.CPU, K.CUDA, K.Meta} <= set(included)
        assert K.AutogradCPU not in included


def test_guards_accept_keysets() -> None:
    ks = DispatchKeySet([K.AutogradCPU, K.AutogradMeta])
    with exclude_keys(ks, K.CUDA):
        assert tls_local_exclude_set() == DEFAULT_EXCLUDED | ks | DispatchKeySet(K.CUDA)
    with include_keys(DispatchKeySet(K.Python)):
        assert K.Python in tls_local_include_set()


def test_bad_key_raises_and_leaves_tls_alone() -> None:
    with (
        pytest.raises(RuntimeError, match="could not parse dispatch key"),
        exclude_keys("AutogradCPU", "Nope"),
    ):
        pass  # pragma: no cover
    assert _snapshot() == (DEFAULT_INCLUDED, DEFAULT_EXCLUDED)


# -- effect on calls ----------------------------------------------------------------------------
def _layered_op(reg: Registration, log: list[str]) -> Any:
    reg.lib.define("f(Tensor x) -> Tensor")
    reg.lib.impl("f", lambda x: log.append("CPU") or "CPU", "CPU")
    reg.lib.impl("f", lambda x: log.append("AutogradCPU") or "AutogradCPU", "AutogradCPU")
    return getattr(ops, reg.ns).f.default


def test_excluding_a_key_skips_its_kernel(reg: Registration, cpu: FakeTensor) -> None:
    log: list[str] = []
    op = _layered_op(reg, log)
    assert op(cpu) == "AutogradCPU"
    with exclude_keys(K.AutogradCPU):
        assert op(cpu) == "CPU"
    assert op(cpu) == "AutogradCPU"
    assert log == ["AutogradCPU", "CPU", "AutogradCPU"]


def test_exclusion_wins_over_inclusion(reg: Registration, cpu: FakeTensor) -> None:
    log: list[str] = []
    op = _layered_op(reg, log)
    with include_keys(K.AutogradCPU), exclude_keys(K.AutogradCPU):
        assert op(cpu) == "CPU"
    with exclude_keys(K.AutogradCPU), include_keys(K.AutogradCPU):
        assert op(cpu) == "CPU"
    assert log == ["CPU", "CPU"]


def test_including_a_key_adds_it_to_calls(reg: Registration) -> None:
    reg.lib.define("make(int n) -> Tensor")
    reg.lib.impl("make", lambda n: ("CPU", n), "CPU")
    op = getattr(ops, reg.ns).make.default
    with pytest.raises(NotImplementedError, match="There were no tensor arguments"):
        op(3)
    with include_keys("CPU"):
        assert op(3) == ("CPU", 3)


def test_including_a_default_excluded_autocast_key_does_nothing(
    reg: Registration, cpu: FakeTensor
) -> None:
    reg.lib.define("f(Tensor x) -> Tensor")
    reg.lib.impl("f", lambda x: "CPU", "CPU")
    reg.lib.impl("f", lambda x: "AutocastCPU", "AutocastCPU")
    op = getattr(ops, reg.ns).f.default
    with include_keys(K.AutocastCPU):
        assert op(cpu) == "CPU"


# -- threads ------------------------------------------------------------------------------------------
def test_new_thread_starts_from_defaults_while_parent_excludes() -> None:
    seen: list[tuple[DispatchKeySet, DispatchKeySet]] = []
    with exclude_keys("Autograd"), include_keys("Python"):
        thread = threading.Thread(target=lambda: seen.append(_snapshot()))
        thread.start()
        thread.join()
        assert K.AutogradCPU in tls_local_exclude_set()
    assert seen == [(DEFAULT_INCLUDED, DEFAULT_EXCLUDED)]


def test_thread_changes_do_not_leak() -> None:
    barrier = threading.Barrier(3, timeout=10)
    results: dict[str, Any] = {}
    errors: list[BaseException] = []

    def changer() -> None:
        try:
            with exclude_keys("AutogradCPU"), include_keys("Python"):
                barrier.wait()  # 1: changes are in place
                barrier.wait()  # 2: the others have looked
                results["changer"] = _snapshot()
            results["changer_after"] = _snapshot()
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)
            barrier.abort()

    def watcher() -> None:
        try:
            barrier.wait()
            results["watcher"] = _snapshot()
            barrier.wait()
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)
            barrier.abort()

    threads = [threading.Thread(target=changer), threading.Thread(target=watcher)]
    for t in threads:
        t.start()
    barrier.wait()
    results["main"] = _snapshot()
    barrier.wait()
    for t in threads:
        t.join()
    assert not errors
    defaults = (DEFAULT_INCLUDED, DEFAULT_EXCLUDED)
    assert results["main"] == defaults
    assert results["watcher"] == defaults
    assert results["changer"] == (
        DEFAULT_INCLUDED.add(K.Python),
        DEFAULT_EXCLUDED.add(K.AutogradCPU),
    )
    assert results["changer_after"] == defaults


def test_calls_in_a_thread_use_that_threads_keys(reg: Registration, cpu: FakeTensor) -> None:
    log: list[str] = []
    op = _layered_op(reg, log)
    out: list[str] = []
    with exclude_keys(K.AutogradCPU):
        thread = threading.Thread(target=lambda: out.append(op(cpu)))
        thread.start()
        thread.join()
        assert op(cpu) == "CPU"
    assert out == ["AutogradCPU"]


# -- the default-sets shortcut (Note [Default key sets]) -------------------------------------------
@pytest.fixture
def fresh_mask() -> Iterator[None]:
    """Start the mask's bookkeeping from scratch: forget threads that exited with
    changed sets and autocast keys changed before.  Safe here: this thread's sets are
    the defaults (checked by the autouse fixture) and no other live thread of the
    test process has changed its own.  What was forgotten is put back afterwards."""
    with _tls._LOCK:
        saved = (_tls._BEYOND[0], _tls._STICKY[0])
        _tls._BEYOND[0] = _tls._STICKY[0] = _tls.NONDEFAULT[0] = 0
    yield
    with _tls._LOCK:
        _tls._BEYOND[0] += saved[0]
        _tls._STICKY[0] |= saved[1]
        _tls.NONDEFAULT[0] = _tls._EVERY_KEY if _tls._BEYOND[0] else _tls._STICKY[0]


def _autocast_op(reg: Registration) -> tuple[Any, Any]:
    """(f with an AutocastCPU kernel, g without one: AutocastCPU falls through)."""
    reg.lib.define("f(Tensor x) -> Tensor")
    reg.lib.define("g(Tensor x) -> Tensor")
    reg.lib.impl("f", lambda x: "AutocastCPU", "AutocastCPU")
    reg.lib.impl("f", lambda x: "CPU", "CPU")
    reg.lib.impl("g", lambda x: "CPU", "CPU")
    return getattr(ops, reg.ns).f.default, getattr(ops, reg.ns).g.default


def test_enabling_an_autocast_key_reaches_only_ops_with_a_kernel_there(
    reg: Registration, cpu: FakeTensor, fresh_mask: None
) -> None:
    f, g = _autocast_op(reg)
    assert _tls.NONDEFAULT[0] & K.AutocastCPU.bit == 0
    tls_set_dispatch_key_excluded(K.AutocastCPU, False)  # what autocast("cpu") does
    try:
        # Only the autocast key is noted: g (which falls through there) keeps the
        # default-sets path, f reads this thread's sets and runs its autocast kernel.
        assert _tls.NONDEFAULT[0] == K.AutocastCPU.bit
        assert (f(cpu), g(cpu)) == ("AutocastCPU", "CPU")
        with exclude_keys(K.AutocastCPU):  # an autocast kernel's own guard
            assert (f(cpu), g(cpu)) == ("CPU", "CPU")
            assert _tls.NONDEFAULT[0] == K.AutocastCPU.bit  # kept: no lock on this path
    finally:
        tls_set_dispatch_key_excluded(K.AutocastCPU, True)
    assert (f(cpu), g(cpu)) == ("CPU", "CPU")
    with exclude_keys(K.AutogradMeta):  # any other change covers every key
        assert _tls.NONDEFAULT[0] == _tls._EVERY_KEY
    assert _tls.NONDEFAULT[0] == K.AutocastCPU.bit


def test_autocast_keys_are_noted_while_another_thread_covers_every_key(
    reg: Registration, cpu: FakeTensor, fresh_mask: None
) -> None:
    f, _g = _autocast_op(reg)
    entered, leave = threading.Event(), threading.Event()

    def other() -> None:
        with exclude_keys(K.AutogradCPU):  # beyond autocast keys: the mask is every key
            entered.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    assert entered.wait(10)
    tls_set_dispatch_key_excluded(K.AutocastCPU, False)
    try:
        leave.set()
        thread.join()
        # The other thread's change is gone; this thread's autocast key must still be
        # in the mask, or f would take the default-sets path and skip its kernel.
        assert f(cpu) == "AutocastCPU"
    finally:
        tls_set_dispatch_key_excluded(K.AutocastCPU, True)
    assert f(cpu) == "CPU"


# -- guards as objects ---------------------------------------------------------------------------
def test_guards_work_as_decorators_and_reenter() -> None:
    seen: list[bool] = []

    @exclude_keys(K.AutogradCPU)
    def depth(n: int) -> None:
        seen.append(K.AutogradCPU in tls_local_exclude_set())
        if n:
            depth(n - 1)

    depth(2)
    assert seen == [True, True, True]
    assert _snapshot() == (DEFAULT_INCLUDED, DEFAULT_EXCLUDED)
    guard = include_keys(K.Python)
    with guard:
        with exclude_keys(K.Python), guard:  # the same guard object, entered twice
            assert K.Python in tls_local_include_set()
            assert K.Python in tls_local_exclude_set()
        assert K.Python in tls_local_include_set()
        assert K.Python not in tls_local_exclude_set()
    assert _snapshot() == (DEFAULT_INCLUDED, DEFAULT_EXCLUDED)

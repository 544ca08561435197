"""The ``dask`` plug-in device: lazy chunked tensors, autograd over task graphs, and a
``dask.distributed`` cluster of two worker processes.

Skipped, with the reason, where dask or distributed is missing (the ``dask`` extra).
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import tensor as tt

pytestmark = [
    pytest.mark.dask,
    pytest.mark.skipif(
        importlib.util.find_spec("dask") is None, reason="dask is not installed (.[dask])"
    ),
]


def _is_lazy(t: tt.Tensor) -> bool:
    return type(t.array).__module__.startswith("dask.")


def test_tensors_wrap_chunked_lazy_arrays() -> None:
    data = np.arange(12.0).reshape(3, 4)
    x = tt.tensor(data, device="dask", chunks=(2, 2))
    assert x.device.type == "dask" and _is_lazy(x)
    assert x.array.chunks == ((2, 1), (2, 2))
    y = tt.sin(x) @ x.T + 1
    assert _is_lazy(y) and y.shape == (3, 3)
    np.testing.assert_allclose(y.numpy(), np.sin(data) @ data.T + 1)
    np.testing.assert_allclose(y.to("cpu").numpy(), y.numpy())
    assert tt.ones(3).to("dask").device.type == "dask"
    r = tt.randn(100, 10, device="dask")
    assert _is_lazy(r) and r.shape == (100, 10) and abs(float(r.mean().item())) < 0.5


def test_ops_build_graphs_and_compute_on_demand() -> None:
    from dask.callbacks import Callback

    runs = []
    x = tt.tensor(np.ones((4, 4)), device="dask", chunks=2)
    with Callback(start=lambda dsk: runs.append(len(dsk))):
        z = (tt.exp(x * 3) - 1).sum(dim=0)
        w = z @ z
        assert runs == [] and _is_lazy(z) and _is_lazy(w)  # graphs only
        assert len(w.array.__dask_graph__()) > 8
        np.testing.assert_allclose(w.item(), 4 * (4 * (np.exp(3) - 1)) ** 2)
    assert len(runs) == 1  # one compute, when the value was asked for


def test_autograd_over_dask() -> None:
    data = np.random.default_rng(0).standard_normal((6, 4))
    grads = {}
    for device in ("cpu", "dask"):
        w = tt.tensor(data, device=device, requires_grad=True)
        loss = (tt.tanh(w) * w).sum() + (w @ w.T).mean()
        loss.backward()  # on dask: builds the gradient's graph
        assert w.grad is not None and w.grad.device.type == device
        if device == "dask":
            assert _is_lazy(w.grad)
        grads[device] = w.grad.numpy()
    np.testing.assert_allclose(grads["dask"], grads["cpu"], rtol=1e-12)


def test_training_step_updates_in_place() -> None:
    w = tt.tensor(np.full((3, 2), 0.5), device="dask", requires_grad=True)
    x = tt.tensor(np.ones((4, 3)), device="dask")
    for _ in range(2):
        loss = ((x @ w) ** 2).mean()
        loss.backward()
        with tt.no_grad():
            w -= 0.1 * w.grad  # the views autograd made of w are gone: allowed
        w.grad = None
    ref = np.full((3, 2), 0.5)
    for _ in range(2):
        ref = ref - 0.1 * (2 * np.ones((4, 3)).T @ (np.ones((4, 3)) @ ref) / 8)
    np.testing.assert_allclose(w.numpy(), ref)


def test_writes_that_would_leave_views_stale_are_refused() -> None:
    x = tt.zeros(4, device="dask")
    v = x[1:3]
    with pytest.raises(NotImplementedError, match=r"'dask'.*view"):
        v.add_(1)
    with pytest.raises(NotImplementedError, match=r"'dask'.*view"):
        x.add_(1)
    del v
    x.add_(1)  # no live view: fine
    assert x.tolist() == [1.0] * 4


def test_data_dependent_shapes() -> None:
    x = tt.tensor([0.0, 2.0, 0.0, 3.0], device="dask", chunks=2)
    nz = x.nonzero()
    assert nz.shape == (2, 1) and nz.tolist() == [[1], [3]]
    picked = x[x > 0]
    assert picked.shape == (2,) and picked.tolist() == [2.0, 3.0]


def test_mixing_with_cpu_names_both_devices() -> None:
    with pytest.raises(RuntimeError, match=r"dask.*cpu|cpu.*dask"):
        tt.ones(2, device="dask") + tt.ones(2)


@pytest.mark.skipif(
    importlib.util.find_spec("distributed") is None, reason="distributed is not installed"
)
def test_runs_on_a_local_cluster_of_two_processes() -> None:
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        x = tt.tensor(np.arange(40.0).reshape(8, 5), device="dask", chunks=(2, 5))
        w = tt.tensor(np.ones((5, 3)), device="dask", requires_grad=True)
        loss = tt.relu(x @ w).sum()
        loss.backward()
        got = w.grad.numpy()  # computed by the cluster's workers
        np.testing.assert_allclose(got, np.tile(np.arange(40.0).reshape(8, 5).sum(0), (3, 1)).T)
        info = client.scheduler_info()
        assert len(info["workers"]) == 2
        # Every worker ran tasks of this graph.
        counts = client.run(lambda dask_worker: dask_worker.state.executed_count)
        assert all(n > 0 for n in counts.values()), counts


def test_autocast_on_dask() -> None:
    # Dask computes float16 (Note [Autocast on plug-in devices] in tensor._autocast):
    # CUDA's policies, lazily, with autograd over the casts.
    data = np.random.default_rng(0).standard_normal((6, 5)).astype(np.float32)
    x = tt.tensor(data, device="dask", chunks=3, requires_grad=True)
    with tt.autocast("dask"):
        y = x @ x.T
        assert y.dtype is tt.float16 and _is_lazy(y)
        loss = y.float().sum()
    np.testing.assert_allclose(y.numpy(), (data @ data.T).astype(np.float16), rtol=2e-2, atol=2e-2)
    loss.backward()
    assert x.grad is not None and x.grad.dtype is tt.float32  # float64 is never cast
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.tile(data.sum(0), (6, 1)), rtol=2e-2)


def test_linalg_from_dask_linalg() -> None:
    # dask.array's linalg (through array_api_compat) makes qr, inv, solve, cholesky, svd
    # for the device; det, eigh and slogdet it lacks, and they are refused by name (and
    # what dask refuses, e.g. compat's svdvals asking for full matrices, is refused too).
    rng = np.random.default_rng(1)
    a = rng.standard_normal((5, 5)) + 5 * np.eye(5)
    b = rng.standard_normal((5, 2))
    x, y = tt.tensor(a, device="dask"), tt.tensor(b, device="dask")
    np.testing.assert_allclose(tt.linalg.inv(x).numpy(), np.linalg.inv(a), rtol=1e-10)
    np.testing.assert_allclose(tt.linalg.solve(x, y).numpy(), np.linalg.solve(a, b), rtol=1e-10)
    q, r = tt.linalg.qr(x)
    np.testing.assert_allclose((q @ r).numpy(), a, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.triu(r.numpy()), r.numpy())
    spd = tt.tensor(a @ a.T, device="dask")
    np.testing.assert_allclose(
        tt.linalg.cholesky(spd).numpy(), np.linalg.cholesky(a @ a.T), rtol=1e-10
    )
    with pytest.raises(NotImplementedError, match=r"linalg_det.*'dask'"):
        tt.linalg.det(x)
    with pytest.raises(NotImplementedError, match=r"linalg_svdvals.*'dask'"):
        tt.linalg.svdvals(x)

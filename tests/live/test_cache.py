"""kubesched.live.cache against the API-server double: typed objects from informers,
unreadable objects logged and left out."""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched.api.storage import StorageClass
from kubesched.api.types import Node, Pod
from kubesched.live.apiserver_double import ApiServerDouble
from kubesched.live.cache import CACHED_KINDS, ClusterCache
from kubesched.live.client import KubeClient, connect
from kubesched.live.informer import WallClock
from tests.live.cluster_state import double, node, pod, small_cluster

pytest.importorskip("kubernetes")

Change = tuple[str, str, Any, Any]


def wait_until(condition: Callable[[], bool], timeout: float = 2.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.005)


@pytest.fixture
def api() -> Iterator[ApiServerDouble]:
    with double() as server:
        yield server


@pytest.fixture
def client(api: ApiServerDouble, tmp_path: Path) -> KubeClient:
    return connect(str(api.write_kubeconfig(tmp_path / "kubeconfig")))


@pytest.fixture
def changes() -> list[Change]:
    return []


@pytest.fixture
def cache(client: KubeClient, changes: list[Change]) -> Iterator[ClusterCache]:
    lock = threading.Lock()

    def record(kind: str, key: str, old: Any, new: Any) -> None:
        with lock:
            changes.append((kind, key, old, new))

    started = ClusterCache(client, on_change=record, clock=WallClock(), rng=random.Random(1))
    yield started
    started.stop()


def test_the_cache_holds_every_kind_typed(api: ApiServerDouble, cache: ClusterCache) -> None:
    small_cluster(api)
    api.create(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "fast"},
            "provisioner": "csi.example.com",
            "volumeBindingMode": "WaitForFirstConsumer",
        }
    )
    assert cache.start().wait_for_sync(3.0) and cache.has_synced()
    assert [i.resource for i in cache.informers] == list(CACHED_KINDS)
    n1 = cache.nodes.get("n1")
    assert isinstance(n1, Node) and n1.name == "n1"
    assert sorted(cache.nodes.items()) == ["n1", "n2"]
    urgent = cache.pods.get("default/urgent")
    assert isinstance(urgent, Pod)
    assert (urgent.priority, urgent.priority_class_name, urgent.node_name) == (1000, "high", "")
    low = cache.pods.get("default/low-1")
    assert low is not None and low.node_name == "n1"
    assert {"high", "system-node-critical", "system-cluster-critical"} <= set(
        cache.priority_classes.items()
    )
    assert {"default", "kube-system"} <= set(cache.namespaces.items())
    fast = cache.storage_classes.get("fast")
    assert isinstance(fast, StorageClass) and fast.provisioner == "csi.example.com"
    assert len(cache.pdbs) == len(cache.pvs) == len(cache.pvcs) == len(cache.csinodes) == 0


def test_changes_reach_the_stores_and_the_listener(
    api: ApiServerDouble, cache: ClusterCache, changes: list[Change]
) -> None:
    api.create(node("n1", "2"))
    assert cache.start().wait_for_sync(3.0)
    wait_until(lambda: all(i.watches for i in cache.informers))
    api.create(pod("p", "1", "n1"))
    wait_until(lambda: cache.pods.get("default/p") is not None)
    res = api.resource_for("v1", "Pod")
    api.registry.delete(res, "default", "p", {"gracePeriodSeconds": 0})
    wait_until(lambda: cache.pods.get("default/p") is None)
    pod_changes = [(old, new) for kind, key, old, new in changes if key == "default/p"]
    assert pod_changes[0][0] is None and isinstance(pod_changes[0][1], Pod)
    assert pod_changes[-1][1] is None and isinstance(pod_changes[-1][0], Pod)
    assert ("Node", "n1") in {(kind, key) for kind, key, _, _ in changes}


def test_unreadable_objects_are_logged_and_left_out(
    api: ApiServerDouble, cache: ClusterCache, changes: list[Change], caplog: Any
) -> None:
    api.create(node("good", "2"))
    bad = node("bad", "2")
    bad["spec"] = {"taints": [{"key": "k", "effect": "Bogus"}]}  # the double lets it in
    api.create(bad)
    with caplog.at_level(logging.WARNING, logger="kubesched.live.cache"):
        assert cache.start().wait_for_sync(3.0)
        wait_until(lambda: all(i.watches for i in cache.informers))
        assert sorted(cache.nodes.items()) == ["good"]
        assert "Unsupported value" in cache.nodes.unreadable["bad"]
        assert any("Node bad" in r.getMessage() for r in caplog.records)
        # A readable node turns unreadable: its old version leaves the cache too.
        res = api.resource_for("v1", "Node")
        current = api.get("v1", "Node", "good")
        assert current is not None
        current["status"]["allocatable"]["cpu"] = "lots"
        api.registry.update(res, "", "good", current, "status")
        wait_until(lambda: cache.nodes.get("good") is None)
        assert "quantities must match" in cache.nodes.unreadable["good"]
        assert changes[-1][:2] == ("Node", "good") and changes[-1][3] is None
        # Deleted: no longer listed as unreadable.
        api.registry.delete(api.resource_for("v1", "Node"), "", "bad", None)
        wait_until(lambda: "bad" not in cache.nodes.unreadable)
    assert cache.has_synced()  # nothing stopped

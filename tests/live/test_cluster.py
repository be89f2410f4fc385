"""kubesched.live.cluster: notifications become typed events, in order, between cycles."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from kubesched.api.types import Node, Pod
from kubesched.live.cluster import ADDED, DELETED, MODIFIED, LiveCluster
from tests.live.cluster_state import node, pod


class Log:
    """A Watcher that writes down what it is told."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, ...]] = []

    def on_node_add(self, n: Node) -> None:
        self.seen.append(("node+", n.name))

    def on_node_update(self, old: Node, new: Node) -> None:
        self.seen.append(("node~", new.name))

    def on_node_delete(self, n: Node) -> None:
        self.seen.append(("node-", n.name))

    def on_pod_add(self, p: Pod) -> None:
        self.seen.append(("pod+", p.name, p.uid))

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        self.seen.append(("pod~", new.name, new.node_name))

    def on_pod_delete(self, p: Pod) -> None:
        self.seen.append(("pod-", p.name, p.uid))


def with_uid(obj: dict[str, Any], uid: str, priority: int | None = None) -> dict[str, Any]:
    obj["metadata"]["uid"] = uid
    if priority is not None:
        obj["spec"]["priority"] = priority
    return obj


def cluster() -> tuple[LiveCluster, Log]:
    c = LiveCluster(clock=time.time_ns)
    log = Log()
    c.watchers.append(log)
    return c, log


def test_changes_wait_for_flush_and_arrive_in_order() -> None:
    c, log = cluster()
    c.notify("Node", ADDED, node("n1", "2"))
    c.notify("Pod", ADDED, with_uid(pod("a", "1"), "u1", priority=7))
    assert log.seen == [] and c.get_pod("default", "a") is None
    assert c.flush() == 2
    bound = with_uid(pod("a", "1", "n1"), "u1")
    c.notify("Pod", MODIFIED, bound)
    c.notify("Node", DELETED, node("n1", "2"))
    c.flush()
    assert log.seen == [("node+", "n1"), ("pod+", "a", "u1"), ("pod~", "a", "n1"), ("node-", "n1")]
    assert c.get_pod("default", "a") is not None
    assert c.nodes == {}


def test_admitted_priority_is_taken_as_the_server_set_it() -> None:
    c, _ = cluster()
    c.notify("Pod", ADDED, with_uid(pod("a", "1"), "u1", priority=1000))
    c.flush()
    got = c.get_pod("default", "a")
    assert got is not None and got.priority == 1000
    assert got.preemption_policy == "PreemptLowerPriority"


def test_a_pod_replaced_between_notifications_is_a_delete_then_an_add() -> None:
    c, log = cluster()
    c.notify("Pod", ADDED, with_uid(pod("db-0", "1"), "u1"))
    c.notify("Pod", MODIFIED, with_uid(pod("db-0", "1"), "u2"))
    c.flush()
    assert log.seen == [("pod+", "db-0", "u1"), ("pod-", "db-0", "u1"), ("pod+", "db-0", "u2")]


def test_an_object_that_fails_conversion_is_logged_and_skipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    c, log = cluster()
    bad = with_uid(pod("a", "1"), "u1")
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    c.notify("Pod", ADDED, bad)
    c.notify("Pod", ADDED, with_uid(pod("b", "1"), "u2"))
    assert c.flush() == 2
    assert c.rejected == 1 and [s[1] for s in log.seen] == ["b"]
    assert any("Pod default/a: ignored" in r.getMessage() for r in caplog.records)


def test_advance_returns_early_when_a_notification_arrives() -> None:
    c, _ = cluster()
    threading.Timer(0.05, c.notify, ("Node", ADDED, node("n1", "2"))).start()
    t0 = time.monotonic()
    c.advance(time.time_ns() + 5_000_000_000)
    assert time.monotonic() - t0 < 2


def test_stop_ends_a_wait_and_says_so() -> None:
    c, _ = cluster()
    threading.Timer(0.05, c.stop).start()
    t0 = time.monotonic()
    c.advance(time.time_ns() + 5_000_000_000)
    assert time.monotonic() - t0 < 2 and c.stopping


def test_pdbs_namespaces_and_storage_are_cached() -> None:
    c, _ = cluster()
    c.notify(
        "PodDisruptionBudget",
        ADDED,
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
            "status": {"disruptionsAllowed": 2},
        },
    )
    c.notify(
        "Namespace", ADDED, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}
    )
    c.notify(
        "StorageClass",
        ADDED,
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "local"},
            "provisioner": "kubernetes.io/no-provisioner",
        },
    )
    c.flush()
    (pdb,) = c.pdbs()
    assert pdb.key == "default/web" and pdb.status.disruptions_allowed == 2
    ns = c.namespace("shop")
    assert ns is not None and ns.labels["kubernetes.io/metadata.name"] == "shop"
    assert c.storage().get_storage_class("local") is not None

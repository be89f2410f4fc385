"""kubesched.live.writer against the API-server double (a real HTTP server): the
requests are upstream kube-scheduler's, and the server's answers are handled as
upstream handles them."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kubesched.api.convert import convert_pod
from kubesched.api.storage import ANN_SELECTED_NODE, PersistentVolume, PersistentVolumeClaim
from kubesched.api.types import Pod, PodCondition
from kubesched.api.volume_helpers import bind_volume_to_claim
from kubesched.framework.ports import NotFound
from kubesched.live.apiserver_double import ApiServerDouble, Fault
from kubesched.live.apiserver_double.errors import forbidden
from kubesched.live.client import TokenBucket, connect
from kubesched.live.cluster import ADDED, MODIFIED, LiveCluster
from kubesched.live.writer import ApiCallError, LiveWriter, micro_time, rfc3339
from tests.live.apiserver_double.wire import recordings_dir
from tests.live.cluster_state import claim, double, node, pod, storage_class, volume

pytest.importorskip("kubernetes")

NOW = 1_795_000_000_123_456_789  # 2026-11-18T...


def typed(api: ApiServerDouble, name: str) -> Pod:
    raw = api.get("v1", "Pod", name, "default")
    assert raw is not None
    return convert_pod(raw)[0]


def writer(api: ApiServerDouble, tmp_path: Path) -> LiveWriter:
    client = connect(str(api.write_kubeconfig(tmp_path / "kc")))
    return LiveWriter(client, lambda: NOW, "kubesched", "kubesched-host")


def last_request(api: ApiServerDouble, method: str) -> tuple[str, dict[str, str], Any]:
    for m, path, query, body in reversed(api.requests):
        if m == method:
            return path, query, body
    raise AssertionError(f"no {method} request")


def test_time_formats() -> None:
    assert rfc3339(0) == "1970-01-01T00:00:00Z"
    assert micro_time(1_500_000_001) == "1970-01-01T00:00:01.500000Z"


def test_bind_sends_the_uid_and_a_second_bind_is_the_servers_conflict(tmp_path: Path) -> None:
    with double(kubelet=False) as api:
        api.create(node("n1", "2"))
        api.create(pod("web-1", "500m"))
        w = writer(api, tmp_path)
        p = typed(api, "web-1")
        w.bind(p, "n1")
        path, _, body = last_request(api, "POST")
        assert path == "/api/v1/namespaces/default/pods/web-1/binding"
        assert body["metadata"]["uid"] == p.uid
        assert body["target"] == {"apiVersion": "v1", "kind": "Node", "name": "n1"}
        assert typed(api, "web-1").node_name == "n1"
        with pytest.raises(ApiCallError) as err:
            w.bind(p, "n1")
    assert err.value.status == 409 and err.value.reason == "Conflict"
    assert str(err.value) == (
        'Operation cannot be fulfilled on pods/binding "web-1": '
        'pod web-1 is already assigned to node "n1"'
    )


def test_status_patch_is_upstreams_strategic_merge_patch(tmp_path: Path) -> None:
    with double(kubelet=False) as api:
        api.create(pod("high-1", "1"))
        w = writer(api, tmp_path)
        p = typed(api, "high-1")
        cond = PodCondition("PodScheduled", "False", "Unschedulable", "0/2 nodes are available")
        w.patch_pod_status(p, condition=cond, nominated_node_name="n1")
        path, _, body = last_request(api, "PATCH")
        got = typed(api, "high-1")
        assert path == "/api/v1/namespaces/default/pods/high-1/status"
        assert body == {
            "status": {
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "lastProbeTime": None,
                        "reason": "Unschedulable",
                        "message": "0/2 nodes are available",
                        "lastTransitionTime": rfc3339(NOW),
                    }
                ],
                "nominatedNodeName": "n1",
            }
        }
        assert got.nominated_node_name == "n1"
        assert got.condition("PodScheduled") is not None
        # Clearing the nomination sends null (R5.9.4) and the field goes away.
        w.patch_pod_status(got, nominated_node_name="")
        assert last_request(api, "PATCH")[2] == {"status": {"nominatedNodeName": None}}
        assert typed(api, "high-1").nominated_node_name == ""


def test_the_recorded_nomination_patch_has_the_same_shape(tmp_path: Path) -> None:
    recordings = recordings_dir()
    if recordings is None:
        pytest.skip("recorded wire pairs not available ($KUBESCHED_LIVE_RECORDINGS)")
    recorded = recordings / "wire" / "E1-status-smp-nominate.json"
    req = json.loads(recorded.read_text())["request"]
    with double(kubelet=False) as api:
        api.create(pod("high-1", "1"))
        w = writer(api, tmp_path)
        cond = PodCondition("PodScheduled", "False", "Unschedulable", "m")
        w.patch_pod_status(typed(api, "high-1"), condition=cond, nominated_node_name="n1")
        _, _, body = last_request(api, "PATCH")
    assert req["contentType"] == "application/strategic-merge-patch+json"
    assert set(body["status"]) == set(req["body"]["status"])
    assert set(body["status"]["conditions"][0]) == set(req["body"]["status"]["conditions"][0])


def test_an_unchanged_status_keeps_its_transition_time(tmp_path: Path) -> None:
    with double(kubelet=False) as api:
        api.create(pod("high-1", "1"))
        w = writer(api, tmp_path)
        first = PodCondition("PodScheduled", "False", "Unschedulable", "a", NOW - 10**12)
        w.patch_pod_status(typed(api, "high-1"), condition=first)
        w.patch_pod_status(
            typed(api, "high-1"),
            condition=PodCondition("PodScheduled", "False", "Unschedulable", "b"),
        )
        sent = last_request(api, "PATCH")[2]["status"]["conditions"][0]
    assert sent["lastTransitionTime"] == rfc3339(NOW - 10**12)
    assert sent["message"] == "b"


def test_delete_is_graceful_with_a_uid_precondition(tmp_path: Path) -> None:
    with double(kubelet=False) as api:
        api.create(node("n1", "2"))
        api.create(pod("low-1", "1", "n1"))
        w = writer(api, tmp_path)
        victim = typed(api, "low-1")
        w.delete_pod(victim)
        path, _, body = last_request(api, "DELETE")
        assert path == "/api/v1/namespaces/default/pods/low-1"
        assert body["preconditions"] == {"uid": victim.uid}
        gone = api.get("v1", "Pod", "low-1", "default")
        # A bound pod is deleted gracefully: it stays, terminating, until its kubelet ends it.
        assert gone is not None and gone["metadata"]["deletionTimestamp"]


def test_a_replaced_or_missing_pod_is_not_found_and_the_replacement_lives(
    tmp_path: Path,
) -> None:
    with double(kubelet=False) as api:
        api.create(pod("db-0", "1"))
        w = writer(api, tmp_path)
        old = typed(api, "db-0")
        api.registry.delete(api.resource_for("v1", "Pod"), "default", "db-0", {})
        api.create(pod("db-0", "1"))  # a StatefulSet's replacement: same name, new uid
        with pytest.raises(NotFound):
            w.delete_pod(old)
        assert typed(api, "db-0").uid != old.uid
        assert api.get("v1", "Pod", "db-0", "default")["metadata"].get("deletionTimestamp") is None
        api.registry.delete(api.resource_for("v1", "Pod"), "default", "db-0", {})
        with pytest.raises(NotFound):
            w.delete_pod(old)
        with pytest.raises(NotFound):
            w.patch_pod_status(old, nominated_node_name="")


def test_events_are_events_k8s_io_named_as_client_go_names_them(tmp_path: Path) -> None:
    with double(kubelet=False) as api:
        api.create(pod("low-1", "1"))
        api.create(pod("high-1", "1"))
        w = writer(api, tmp_path)
        victim, preemptor = typed(api, "low-1"), typed(api, "high-1")
        w.event(
            victim, "Normal", "Preempted", "Preempting", "Preempted by pod x on node n1", preemptor
        )
        w.close()  # the broadcaster's thread sends it; closing flushes it
        path, _, body = last_request(api, "POST")
        stored = api.get("events.k8s.io/v1", "Event", f"low-1.{NOW:x}", "default")
    assert path == "/apis/events.k8s.io/v1/namespaces/default/events"
    assert stored is not None
    assert stored["reason"] == "Preempted" and stored["action"] == "Preempting"
    assert stored["note"] == "Preempted by pod x on node n1"
    assert stored["regarding"]["uid"] == victim.uid and stored["related"]["name"] == "high-1"
    assert stored["reportingController"] == "kubesched"
    assert stored["reportingInstance"] == "kubesched-host"
    assert stored["eventTime"] == micro_time(NOW)
    assert body["metadata"]["name"] == f"low-1.{NOW:x}"


def test_a_refused_event_is_logged_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with double(kubelet=False) as api:
        api.create(pod("low-1", "1"))
        w = writer(api, tmp_path)
        p = typed(api, "low-1")
        api.inject(Fault(forbidden("events", "events.k8s.io", "", "no"), verb="create"))
        w.event(p, "Normal", "Preempted", "Preempting", "first")  # raises nothing
        w.close()
    assert w.events.abandoned == 1 and w.events.written == 0
    assert any("Server rejected event" in r.getMessage() for r in caplog.records)


def test_events_do_not_spend_the_bindings_rate_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """upstream: the event client is a second clientset of the same configuration,
    with a token bucket of its own."""
    now = [0.0]
    waits: list[float] = []

    def sleep(s: float) -> None:
        waits.append(s)
        now[0] += s

    class Bucket(TokenBucket):
        def __init__(self, qps: float, burst: int, *_: object) -> None:
            super().__init__(qps, burst, clock=lambda: now[0], sleep=sleep)

    monkeypatch.setattr("kubesched.live.client.TokenBucket", Bucket)
    with double(kubelet=False) as api:
        api.create(node("n1", "2"))
        api.create(pod("web-1", "500m"))
        api.create(pod("web-2", "500m"))
        client = connect(str(api.write_kubeconfig(tmp_path / "kc")), qps=1.0, burst=1)
        w = LiveWriter(client, lambda: NOW, "kubesched", "kubesched-host")
        first = typed(api, "web-1")
        w.bind(first, "n1")
        w.event(first, "Normal", "Scheduled", "Binding", "Successfully assigned default/web-1")
        assert w.events.wait_idle()
        assert waits == []  # the event took a token of its own bucket
        w.bind(typed(api, "web-2"), "n1")
        assert waits == [pytest.approx(1.0)]  # the second binding waits for the first's
        assert typed(api, "web-2").node_name == "n1"


# --------------------------------------------------------------------------- volumes


def cached(api: ApiServerDouble) -> LiveCluster:
    """A cluster whose caches hold the double's volumes and claims."""
    cluster = LiveCluster()
    for kind in ("PersistentVolume", "PersistentVolumeClaim"):
        res = api.resource_for("v1", kind)
        for _, obj in api.store.items(res.store):
            cluster.notify(kind, ADDED, api.registry.present(res, obj))
    cluster.flush()
    return cluster


def volume_writer(api: ApiServerDouble, tmp_path: Path, cluster: LiveCluster) -> LiveWriter:
    client = connect(str(api.write_kubeconfig(tmp_path / "kc")))
    return LiveWriter(client, lambda: NOW, "kubesched", "kubesched-host", cluster)


def test_update_pv_puts_the_claim_ref_at_the_cached_version(tmp_path: Path) -> None:
    with double(kubelet=False) as api:
        api.create(storage_class("local", "kubernetes.io/no-provisioner"))
        api.create(volume("pv-a", "local"))
        api.create(claim("data", "local"))
        cluster = cached(api)
        storage = cluster.storage()
        pv, pvc = storage.get_pv("pv-a"), storage.get_pvc("default", "data")
        assert pv is not None and pvc is not None
        raw = cluster.raw_volume("PersistentVolume", "pv-a")
        assert raw is not None
        version = raw["metadata"]["resourceVersion"]
        new_pv, _ = bind_volume_to_claim(pv, pvc)
        volume_writer(api, tmp_path, cluster).update_pv(new_pv)
        path, _, body = last_request(api, "PUT")
        assert path == "/api/v1/persistentvolumes/pv-a"
        assert body["metadata"]["resourceVersion"] == version
        assert body["spec"]["claimRef"] == {
            "kind": "PersistentVolumeClaim",
            "namespace": "default",
            "name": "data",
            "uid": pvc.uid,
            "apiVersion": "v1",
            "resourceVersion": cluster.raw_volume("PersistentVolumeClaim", "default/data")[
                "metadata"
            ]["resourceVersion"],
        }
        stored = api.get("v1", "PersistentVolume", "pv-a")
        assert stored is not None
        assert stored["spec"]["claimRef"]["uid"] == pvc.uid
        assert stored["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}
        assert stored["spec"]["hostPath"] == {"path": "/data/pv-a"}  # the rest kept
        # The server's answer reaches the cache at once (the assume cache).
        cluster.flush()
        got = storage.get_pv("pv-a")
        assert got is not None and got.claim_ref is not None and got.claim_ref.uid == pvc.uid


def test_update_pvc_puts_the_selected_node(tmp_path: Path) -> None:
    with double(kubelet=False) as api:
        api.create(storage_class("wait", "example.com/csi"))
        api.create(claim("data", "wait"))
        cluster = cached(api)
        pvc = cluster.storage().get_pvc("default", "data")
        assert pvc is not None
        annotated = replace(pvc, annotations={ANN_SELECTED_NODE: "n1"})
        volume_writer(api, tmp_path, cluster).update_pvc(annotated)
        path, _, body = last_request(api, "PUT")
        assert path == "/api/v1/namespaces/default/persistentvolumeclaims/data"
        assert body["metadata"]["annotations"] == {ANN_SELECTED_NODE: "n1"}
        stored = api.get("v1", "PersistentVolumeClaim", "data", "default")
        assert stored is not None
        assert stored["metadata"]["annotations"] == {ANN_SELECTED_NODE: "n1"}
        cluster.flush()
        got = cluster.storage().get_pvc("default", "data")
        assert got is not None and got.annotations == {ANN_SELECTED_NODE: "n1"}


def test_a_volume_changed_since_it_was_cached_is_the_servers_conflict(tmp_path: Path) -> None:
    with double(kubelet=False) as api:
        api.create(storage_class("local", "kubernetes.io/no-provisioner"))
        api.create(volume("pv-a", "local"))
        api.create(claim("data", "local"))
        cluster = cached(api)
        pv = cluster.storage().get_pv("pv-a")
        pvc = cluster.storage().get_pvc("default", "data")
        assert pv is not None and pvc is not None
        changed = api.get("v1", "PersistentVolume", "pv-a")
        assert changed is not None
        changed["metadata"]["labels"] = {"moved": "yes"}
        api.registry.update(api.resource_for("v1", "PersistentVolume"), "", "pv-a", changed)
        with pytest.raises(ApiCallError) as err:
            volume_writer(api, tmp_path, cluster).update_pv(bind_volume_to_claim(pv, pvc)[0])
    assert err.value.status == 409
    assert str(err.value) == (
        'Operation cannot be fulfilled on persistentvolumes "pv-a": the object has been '
        "modified; please apply your changes to the latest version and try again"
    )


def test_a_volume_not_cached_is_a_key_error(tmp_path: Path) -> None:
    with double(kubelet=False) as api:
        w = volume_writer(api, tmp_path, LiveCluster())
        with pytest.raises(KeyError, match='persistentvolume "pv-x" not found'):
            w.update_pv(PersistentVolume("pv-x"))
        with pytest.raises(KeyError, match='persistentvolumeclaim "default/c" not found'):
            w.update_pvc(PersistentVolumeClaim("c"))


def test_an_older_volume_never_replaces_a_newer_one_in_the_cache() -> None:
    cluster = LiveCluster()
    raw = volume("pv-a", "a")
    raw["metadata"]["resourceVersion"] = "7"
    newer = json.loads(json.dumps(raw))
    newer["metadata"]["resourceVersion"] = "9"
    newer["spec"]["storageClassName"] = "b"
    cluster.notify("PersistentVolume", ADDED, raw)
    cluster.notify("PersistentVolume", MODIFIED, newer)
    cluster.notify("PersistentVolume", MODIFIED, raw)  # a late copy of version 7
    cluster.flush()
    got = cluster.storage().get_pv("pv-a")
    assert got is not None and got.storage_class_name == "b"
    assert cluster.raw_volume("PersistentVolume", "pv-a") == newer

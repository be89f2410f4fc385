"""kubesched.live.run: the scheduler core on a live cluster (the API-server double
over real HTTP), fed by a plain re-list (``Mirror``) instead of informers, so that
each test decides when the scheduler sees the cluster's changes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from kubesched.live.apiserver_double import ApiServerDouble
from kubesched.live.client import KubeClient, connect
from kubesched.live.cluster import ADDED, DELETED, MODIFIED, LiveCluster
from kubesched.live.run import LIVE_SCHEDULER_NAME, LiveScheduler, live_default_config
from kubesched.live.snapshot import SNAPSHOT_KINDS
from kubesched.live.writer import LiveWriter
from tests.live.cluster_state import double, node, pod, priority_class

pytest.importorskip("kubernetes")


class Mirror:
    """Lists every kind and tells the cluster what changed since the last sync."""

    def __init__(self, client: KubeClient, cluster: LiveCluster) -> None:
        self.client = client
        self.cluster = cluster
        self.seen: dict[tuple[str, str], dict[str, Any]] = {}

    def sync(self) -> None:
        now: dict[tuple[str, str], dict[str, Any]] = {}
        for res in SNAPSHOT_KINDS:
            for item in self.client.list(res)[0]:
                meta = item["metadata"]
                now[(res.kind, f"{meta.get('namespace', '')}/{meta['name']}")] = item
        for key, item in now.items():
            old = self.seen.get(key)
            if old is None:
                self.cluster.notify(key[0], ADDED, item)
            elif old["metadata"]["resourceVersion"] != item["metadata"]["resourceVersion"]:
                self.cluster.notify(key[0], MODIFIED, item)
        for key, item in self.seen.items():
            if key not in now:
                self.cluster.notify(key[0], DELETED, item)
        self.seen = now


def live(api: ApiServerDouble, tmp_path: Path) -> tuple[LiveScheduler, Mirror]:
    client = connect(str(api.write_kubeconfig(tmp_path / "kc")))
    ls = LiveScheduler(client, live_default_config(), seed=0, identity="host")
    return ls, Mirror(client, ls.cluster)


def step(ls: LiveScheduler, mirror: Mirror) -> None:
    mirror.sync()
    ls.run(until=time.time_ns())
    assert isinstance(ls.writer, LiveWriter)
    assert ls.writer.events.wait_idle()


def ours(p: dict[str, Any]) -> dict[str, Any]:
    p["spec"]["schedulerName"] = LIVE_SCHEDULER_NAME
    return p


def server_pod(api: ApiServerDouble, name: str) -> dict[str, Any]:
    got = api.get("v1", "Pod", name, "default")
    assert got is not None
    return got


def events(api: ApiServerDouble) -> list[tuple[str, str, str]]:
    out = []
    for _, path, _, body in api.requests:
        if path.endswith("/events") and isinstance(body, dict):
            out.append((body["regarding"]["name"], body["reason"], body["note"]))
    return out


def test_binds_its_own_pods_and_leaves_the_others(tmp_path: Path) -> None:
    with double() as api:
        api.create(node("n1", "2"))
        api.create(node("n2", "2"))
        api.create(pod("low-1", "1500m", "n1"))
        api.create(ours(pod("web", "1")))
        api.create(pod("theirs", "1"))  # schedulerName default-scheduler
        ls, mirror = live(api, tmp_path)
        step(ls, mirror)
        assert server_pod(api, "web")["spec"]["nodeName"] == "n2"
        assert "nodeName" not in server_pod(api, "theirs")["spec"]
        assert ("web", "Scheduled", "Successfully assigned default/web to n2") in events(api)
        # The binding comes back as an update: the pod is no longer only assumed.
        web = ls.cluster.pods["default/web"]
        assert ls.scheduler.cache.is_assumed(web.uid)
        step(ls, mirror)
        web = ls.cluster.pods["default/web"]
        assert web.node_name == "n2" and not ls.scheduler.cache.is_assumed(web.uid)


def test_preempts_then_binds_on_the_nominated_node(tmp_path: Path) -> None:
    with double() as api:
        api.create(node("n1", "2"))
        api.create(priority_class("high", 1000))
        api.create(pod("low-1", "1500m", "n1"))
        api.create(ours(pod("urgent", "1", priority_class="high")))
        ls, mirror = live(api, tmp_path)
        step(ls, mirror)
        urgent = server_pod(api, "urgent")
        assert urgent["status"]["nominatedNodeName"] == "n1"
        (scheduled,) = [c for c in urgent["status"]["conditions"] if c["type"] == "PodScheduled"]
        assert scheduled["status"] == "False" and scheduled["reason"] == "Unschedulable"
        victim = api.get("v1", "Pod", "low-1", "default")
        # Marked, deleted gracefully; the fake kubelet ends it.
        assert victim is None or victim["metadata"].get("deletionTimestamp")
        reasons = [(who, why) for who, why, _ in events(api)]
        assert ("urgent", "FailedScheduling") in reasons and ("low-1", "Preempted") in reasons
        api.clock.advance(31)  # past the victim's grace period: the fake kubelet ends it
        assert api.get("v1", "Pod", "low-1", "default") is None
        # The victim's deletion reaches the scheduler; the preemptor binds (after its backoff).
        deadline = time.monotonic() + 15
        while not server_pod(api, "urgent")["spec"].get("nodeName"):
            assert time.monotonic() < deadline, "the preemptor was never bound"
            step(ls, mirror)
            time.sleep(0.1)
        assert server_pod(api, "urgent")["spec"]["nodeName"] == "n1"


def test_a_refused_status_patch_is_logged_and_the_pod_stays_queued(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Upstream's handleSchedulingFailure only logs a failed status update; before
    the fix the ApiCallError ended the scheduling loop."""
    from kubesched.live.apiserver_double.faults import Fault, server_error

    with double() as api:
        api.create(node("n1", "1"))
        api.create(ours(pod("big", "2")))
        fault = api.inject(Fault(server_error(), verb="patch", subresource="status"))
        ls, mirror = live(api, tmp_path)
        step(ls, mirror)
        assert fault.hits == 1
        assert "Error updating pod default/big: Internal error occurred" in caplog.text
        assert ls.scheduler.pending_counts()["unschedulable"] == 1
        assert ("big", "FailedScheduling") in [(who, why) for who, why, _ in events(api)]

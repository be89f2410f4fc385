"""kubesched.live.run: the scheduler core on a live cluster (the API-server double
over real HTTP), fed by a plain re-list (``Mirror``) instead of informers, so that
each test decides when the scheduler sees the cluster's changes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kubesched.api.types import Pod
from kubesched.live.apiserver_double import ApiServerDouble, Fault, binding_lost
from kubesched.live.client import KubeClient, connect
from kubesched.live.cluster import ADDED, DELETED, MODIFIED, LiveCluster
from kubesched.live.run import LIVE_SCHEDULER_NAME, LiveScheduler, live_default_config
from kubesched.live.snapshot import SNAPSHOT_KINDS
from kubesched.live.writer import LiveWriter
from tests.live.cluster_state import double, node, pod, priority_class, wait_for

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
        assert isinstance(ls.writer, LiveWriter)
        deleting: list[str] = []
        delete = ls.writer.delete_pod

        def recorded(p: Pod) -> None:
            deleting.append(threading.current_thread().name)
            delete(p)

        ls.writer.delete_pod = recorded  # type: ignore[method-assign]
        step(ls, mirror)
        # The async preemption's API calls ran on the pool (upstream's goroutine).
        assert deleting and all(w.startswith("async") for w in deleting)
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


def binding_posts(api: ApiServerDouble) -> list[str]:
    return [
        path.split("/")[-2]
        for method, path, _, body in list(api.requests)
        if method == "POST" and path.endswith("/binding") and body["metadata"].get("uid")
    ]


def hold_binding_of(
    ls: LiveScheduler, name: str, then: Callable[[], None], until_bound: list[str], api: Any
) -> tuple[threading.Thread, list[str]]:
    """Hold ``name``'s binding on its worker until every pod of ``until_bound`` is
    bound on the server (so they were scheduled and bound meanwhile), then call
    ``then`` and let it go on. Returns the releasing thread and the names of the
    threads that ran bindings."""
    assert isinstance(ls.writer, LiveWriter)
    gate = threading.Event()
    bind = ls.writer.bind
    workers: list[str] = []

    def gated(p: Pod, node_name: str) -> None:
        workers.append(threading.current_thread().name)
        if p.name == name:
            assert gate.wait(15)
        bind(p, node_name)

    ls.writer.bind = gated  # type: ignore[method-assign]

    def release() -> None:
        wait_for(lambda: all(server_pod(api, n)["spec"].get("nodeName") for n in until_bound))
        then()
        gate.set()

    thread = threading.Thread(target=release, daemon=True)
    thread.start()
    return thread, workers


def test_bindings_run_off_the_scheduling_thread_and_a_refused_one_is_requeued(
    tmp_path: Path,
) -> None:
    """upstream's binding goroutine: while a's binding is held (and then refused
    with 409), b and c are scheduled and bound; a's assumed pod is forgotten and
    a is requeued, then bound."""
    with double() as api:
        api.create(node("n1", "4"))
        for name in ("a", "b", "c"):
            api.create(ours(pod(name, "1")))
        fault = api.inject(
            Fault(
                binding_lost("a", "n9"),
                verb="create",
                resource="pods",
                subresource="binding",
                name="a",
            )
        )
        ls, mirror = live(api, tmp_path)
        assert ls.binder is not None
        thread, workers = hold_binding_of(ls, "a", lambda: None, ["b", "c"], api)
        step(ls, mirror)
        thread.join()
        assert fault.hits == 1 and "nodeName" not in server_pod(api, "a")["spec"]
        assert workers and all(w.startswith("async") for w in workers)
        a = ls.cluster.pods["default/a"]
        assert not ls.scheduler.cache.is_assumed(a.uid)
        assert ls.scheduler.cache.pod_info(a.uid) is None  # forgotten
        (note,) = [n for who, why, n in events(api) if (who, why) == ("a", "FailedScheduling")]
        assert 'pod a is already assigned to node "n9"' in note
        assert (
            ls.scheduler.pending_counts()["backoff"] + ls.scheduler.pending_counts()["active"] == 1
        )
        deadline = time.monotonic() + 15
        while not server_pod(api, "a")["spec"].get("nodeName"):
            assert time.monotonic() < deadline, "a was never bound"
            time.sleep(0.2)
            step(ls, mirror)
        assert binding_posts(api).count("a") == 2
        assert sorted(binding_posts(api)) == ["a", "a", "b", "c"]
        ls.close()


def test_a_refused_binding_whose_pod_another_scheduler_bound_meanwhile(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The watch shows a bound by another scheduler before a's own binding comes
    back refused: the cache keeps the bound pod (upstream logs that ForgetPod
    failed) and a is not tried again."""
    with double() as api:
        api.create(node("n1", "4"))
        for name in ("a", "b"):
            api.create(ours(pod(name, "1")))
        ls, mirror = live(api, tmp_path)
        other = connect(str(tmp_path / "kc"))

        def other_scheduler_binds_a() -> None:
            other.request(
                "POST",
                "/api/v1/namespaces/default/pods/a/binding",
                body={"metadata": {"name": "a"}, "target": {"kind": "Node", "name": "n1"}},
            )
            mirror.sync()  # the informer's news arrives before a's binding returns

        thread, _ = hold_binding_of(ls, "a", other_scheduler_binds_a, ["b"], api)
        step(ls, mirror)
        thread.join()
        a = ls.cluster.pods["default/a"]
        assert a.node_name == "n1" and not ls.scheduler.cache.is_assumed(a.uid)
        assert ls.scheduler.cache.pod_info(a.uid) is not None
        assert "scheduler cache ForgetPod failed" in caplog.text
        step(ls, mirror)
        time.sleep(1.2)  # past a backoff: a is not tried again
        step(ls, mirror)
        assert binding_posts(api) == ["a", "b"] or binding_posts(api) == ["b", "a"]
        assert sum(ls.scheduler.pending_counts().values()) == 0
        ls.close()


def test_a_pods_scheduled_event_follows_its_binding(tmp_path: Path) -> None:
    with double() as api:
        api.create(node("n1", "8"))
        names = [f"p{i}" for i in range(12)]
        for name in names:
            api.create(ours(pod(name, "100m")))
        ls, mirror = live(api, tmp_path)
        step(ls, mirror)
        ls.close()
        order = [
            (path.split("/")[-2], "bind")
            if path.endswith("/binding")
            else (body["regarding"]["name"], "event")
            for method, path, _, body in list(api.requests)
            if method == "POST" and path.endswith(("/binding", "/events"))
        ]
    for name in names:
        assert order.index((name, "bind")) < order.index((name, "event")), order

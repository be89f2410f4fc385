"""Faults of the API server while kubesched's live scheduler runs (issue 15).

Each test runs ``LiveRun`` (in a thread, or ``kubesched run`` as a process where
the exit code matters) against the API-server double, injects one kind of fault
(410s, dropped and stalled watches, a binding another scheduler won, 429s and
500s with Retry-After, a restart, a stolen lease) and then checks, from the
double's request log and its state (``assert_invariants``):

- no pod is bound twice: kubesched sent no binding for a pod after one
  succeeded (each pod's bindings are the ones the faults refused plus one), and
  posted at most one ``Scheduled`` event per pod (events are best effort: a
  restart may cut one off);
- no pod is lost: every pod of kubesched's profile that fits is bound, and no
  node holds more than it can;
- scheduling resumes: a pod created after the fault is bound as well.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kubesched.live.apiserver_double import ApiServerDouble, RealClock
from kubesched.live.apiserver_double.faults import Fault, binding_lost, server_error, throttled
from kubesched.live.client import MAX_RETRIES, connect
from kubesched.live.informer import Timing
from kubesched.live.leader import LeaseConfig
from kubesched.live.run import LiveRun, live_default_config
from tests.live.cluster_state import double, live_run, node, pod, wait_for

pytest.importorskip("kubernetes")

SRC = Path(__file__).resolve().parents[2] / "src"
NODE_CPU = {"n1": 2000, "n2": 2000}


def ours(name: str, cpu: str = "500m") -> dict[str, Any]:
    p = pod(name, cpu)
    p["spec"]["schedulerName"] = "kubesched"
    return p


def node_of(api: ApiServerDouble, name: str) -> str | None:
    got = api.get("v1", "Pod", name, "default")
    return None if got is None else got["spec"].get("nodeName")


def bound(api: ApiServerDouble, *names: str) -> Callable[[], bool]:
    return lambda: all(node_of(api, n) for n in names)


def binding_requests(api: ApiServerDouble) -> list[str]:
    """The pods named by kubesched's binding POSTs (the Binding carries the pod's
    UID), in request order."""
    return [
        path.split("/")[-2]
        for method, path, _, body in list(api.requests)
        if method == "POST" and path.endswith("/binding") and body["metadata"].get("uid")
    ]


def events(api: ApiServerDouble, reason: str) -> Counter[str]:
    """How many events of ``reason`` kubesched wrote, per pod: the creations and
    the series PATCHes of those (the first repeat of an event PATCHes its series'
    count onto it; later ones are written when the series ends). A creation sent
    again under the same name (its answer was lost to a cut connection, as
    client-go retries it; the server then answers AlreadyExists) is one event."""
    names: dict[str, str] = {}
    out: Counter[str] = Counter()
    for method, path, _, body in list(api.requests):
        if not isinstance(body, dict) or "/events" not in path:
            continue
        if method == "POST" and body.get("reason") == reason:
            if body["metadata"]["name"] in names:
                continue
            names[body["metadata"]["name"]] = body["regarding"]["name"]
            out[body["regarding"]["name"]] += 1
        elif method == "PATCH" and path.rsplit("/", 1)[1] in names:
            out[names[path.rsplit("/", 1)[1]]] += 1
    return out


def assert_invariants(
    api: ApiServerDouble,
    names: list[str],
    failed_bindings: Counter[str] | None = None,
    capacity: dict[str, int] | None = None,
) -> None:
    """See the module docstring. ``failed_bindings``: per pod, the bindings the
    faults refused; ``capacity``: millicores per node (default ``NODE_CPU``)."""
    failed = failed_bindings or Counter()
    cpus = capacity or NODE_CPU
    scheduled = events(api, "Scheduled")
    assert max(scheduled.values(), default=0) <= 1, scheduled
    tried = Counter(binding_requests(api))
    used: Counter[str] = Counter()
    for name in names:
        got = api.get("v1", "Pod", name, "default")
        assert got is not None and got["spec"].get("nodeName"), f"{name} was lost"
        node_name = got["spec"]["nodeName"]
        used[node_name] += int(got["spec"]["containers"][0]["resources"]["requests"]["cpu"][:-1])
        assert tried[name] == failed[name] + 1, (name, tried)
    for node_name, cpu in used.items():
        assert cpu <= cpus[node_name], used


def two_nodes(api: ApiServerDouble) -> None:
    api.create(node("n1", "2"))
    api.create(node("n2", "2", zone="b"))


def test_a_watch_410_relists_and_loses_no_pod(tmp_path: Path) -> None:
    with double(kubelet=False) as api:
        two_nodes(api)
        with live_run(api, tmp_path) as run:
            api.create(ours("a"))
            wait_for(bound(api, "a"))
            pods = next(i for i in run.scheduler.informers if i.resource.plural == "pods")
            lists = pods.lists
            api.stall_watches("pods")  # "b" is created while the watch is held back
            api.create(ours("b"))
            api.expire_watch_history("pods")
            assert api.send_watch_error("pods") == 1
            wait_for(lambda: pods.lists > lists)  # relisted after the 410
            wait_for(bound(api, "b"))
            api.create(ours("c"))
            wait_for(bound(api, "c"))
        assert_invariants(api, ["a", "b", "c"])


def test_dropped_watches_are_opened_again(tmp_path: Path) -> None:
    with double(kubelet=False) as api:
        two_nodes(api)
        with live_run(api, tmp_path) as run:
            api.create(ours("a"))
            wait_for(bound(api, "a"))
            pods = next(i for i in run.scheduler.informers if i.resource.plural == "pods")
            watches = pods.watches
            # an informer opens its watch after its list: "a" can bind before the last does
            wait_for(lambda: all(i.watches for i in run.scheduler.informers))
            assert api.drop_watches() >= len(run.scheduler.informers)
            api.create(ours("b"))
            wait_for(bound(api, "b"))
            assert pods.watches > watches
        assert_invariants(api, ["a", "b"])


def test_a_stalled_watch_is_opened_again_after_the_stall_timeout(tmp_path: Path) -> None:
    with double(kubelet=False) as api:
        two_nodes(api)
        timing = Timing(stall_timeout=0.5)
        with live_run(api, tmp_path, timing=timing) as run:
            pods = next(i for i in run.scheduler.informers if i.resource.plural == "pods")
            api.create(ours("a"))
            wait_for(bound(api, "a"))
            assert api.stall_watches("pods") == 1
            api.create(ours("b"))  # held back: only a new watch delivers it
            wait_for(bound(api, "b"))
            assert pods.watches >= 2
        assert_invariants(api, ["a", "b"])


def test_a_binding_another_scheduler_won_is_not_retried_once_seen_bound(tmp_path: Path) -> None:
    """409 on the binding: the assumed pod is forgotten and the pod requeued; once
    the informer shows it bound (by the other scheduler) it leaves the queue."""
    with double(kubelet=False) as api:
        api.create(node("n1", "2"))
        with live_run(api, tmp_path) as run:
            api.create(ours("p", "3"))  # fits nowhere yet: waits in the queue
            wait_for(lambda: events(api, "FailedScheduling")["p"] == 1)
            assert api.stall_watches("pods") == 1  # kubesched does not see what follows
            # The other scheduler binds p (the test, through the API), then a node
            # where p fits arrives: kubesched tries p again and its binding gets 409.
            connect(str(tmp_path / "kc")).request(
                "POST",
                "/api/v1/namespaces/default/pods/p/binding",
                body={"metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}},
            )
            api.create(node("n2", "4", zone="b"))
            wait_for(lambda: "p" in binding_requests(api))  # kubesched's binding: 409
            wait_for(lambda: events(api, "FailedScheduling")["p"] == 2)
            api.resume_watches()
            wait_for(lambda: run.scheduler.scheduler.pending_counts()["active"] == 0)
            time.sleep(1.5)  # past the pod's backoff: no second attempt
            assert binding_requests(api).count("p") == 1
            assert node_of(api, "p") == "n1"
            api.create(ours("q"))
            wait_for(bound(api, "q"))
        assert not events(api, "Scheduled")["p"]
        assert node_of(api, "q") == "n2"
        assert_invariants(api, ["q"], capacity={"n1": 2000, "n2": 4000})


def test_an_injected_409_on_binding_requeues_and_binds_once(tmp_path: Path) -> None:
    with double(kubelet=False) as api:
        two_nodes(api)
        fault = api.inject(
            Fault(binding_lost("a", "n9"), verb="create", resource="pods", subresource="binding")
        )
        with live_run(api, tmp_path):
            api.create(ours("a"))
            wait_for(bound(api, "a"))
            api.create(ours("b"))
            wait_for(bound(api, "b"))
        assert fault.hits == 1
        assert events(api, "FailedScheduling")["a"] == 1
        assert_invariants(api, ["a", "b"], Counter(a=1))


def test_throttled_and_failing_requests_with_retry_after(tmp_path: Path) -> None:
    """429 and 500 with Retry-After on a binding, a status patch and the pods
    list/watch: as client-go, the client waits and sends the request again, so no
    scheduling attempt fails."""
    with double(kubelet=False) as api:
        two_nodes(api)
        faults = [
            api.inject(Fault(throttled(1), verb="list", resource="pods")),
            api.inject(Fault(server_error(retry_after=1), verb="watch", resource="pods")),
        ]
        with live_run(api, tmp_path):
            faults += [
                api.inject(Fault(throttled(1), verb="create", subresource="binding", name="a")),
                api.inject(Fault(server_error(retry_after=1), verb="patch", subresource="status")),
            ]
            api.create(ours("big", "3"))  # fits nowhere: its status is patched
            api.create(ours("a"))
            wait_for(bound(api, "a"))
            wait_for(lambda: faults[3].hits == 1)
            api.create(ours("b"))
            wait_for(bound(api, "b"))
            got = api.get("v1", "Pod", "big", "default")
            assert got is not None
            conditions = got["status"].get("conditions") or []
            assert [c["reason"] for c in conditions if c["type"] == "PodScheduled"] == [
                "Unschedulable"
            ]
        assert [f.hits for f in faults] == [1, 1, 1, 1]
        assert not events(api, "FailedScheduling")["a"]
        assert_invariants(api, ["a", "b"], Counter(a=1))


def test_an_api_server_restart(tmp_path: Path) -> None:
    with double(kubelet=False) as api:
        two_nodes(api)
        with live_run(api, tmp_path):
            api.create(ours("a"))
            wait_for(bound(api, "a"))
            api.restart()
            api.create(ours("b"))
            wait_for(bound(api, "b"))
            api.restart()
            api.create(ours("c"))
            api.create(ours("d"))
            wait_for(bound(api, "c", "d"))
        assert_invariants(api, ["a", "b", "c", "d"])


def test_a_stolen_lease_stops_scheduling_at_once_and_exits_1(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: kubesched\n"
        "leaderElection:\n  leaseDuration: 30s\n  renewDeadline: 20s\n  retryPeriod: 200ms\n"
    )
    api = ApiServerDouble(clock=RealClock(), kubelet=False).start()
    try:
        two_nodes(api)
        kc = api.write_kubeconfig(tmp_path / "kc")
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "kubesched.cli.main", "run", "--kubeconfig", str(kc)),
                *("--config", str(config), "--status-address", "127.0.0.1:0"),
            ],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONPATH": str(SRC)},
        )
        try:
            api.create(ours("a"))
            wait_for(bound(api, "a"), 20)
            api.steal_lease("kube-system", "kubesched", "thief")
            stolen = time.monotonic()
            _, err = proc.communicate(timeout=10)
            assert time.monotonic() - stolen < 5  # seen at the next renewal (200 ms)
            api.create(ours("b"))
            time.sleep(0.5)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
        assert proc.returncode == 1, err
        assert "lost the lease kube-system/kubesched" in err
        assert node_of(api, "b") is None
        assert binding_requests(api) == ["a"]
        lease = api.get("coordination.k8s.io/v1", "Lease", "kubesched", "kube-system")
        assert lease is not None and lease["spec"]["holderIdentity"] == "thief"
        assert_invariants(api, ["a"])
    finally:
        api.stop()


def test_a_stop_while_a_binding_waits_on_retry_after_ends_at_once(tmp_path: Path) -> None:
    """SIGTERM (``stop()``) while the server throttles a binding with Retry-After
    30: the wait ends at once (the binding fails, not sent again), and the clean
    shutdown still releases the lease and writes the queued events."""
    with double(kubelet=False) as api:
        two_nodes(api)
        client = connect(str(api.write_kubeconfig(tmp_path / "kc")))
        lease = LeaseConfig(lease_duration=30, renew_deadline=20, retry_period=0.2)
        run = LiveRun(client, live_default_config(), lease, 0)
        fault = api.inject(
            Fault(throttled(30), verb="create", subresource="binding", times=MAX_RETRIES + 1)
        )
        outcome: list[str] = []
        thread = threading.Thread(target=lambda: outcome.append(run.run()), daemon=True)
        thread.start()
        try:
            wait_for(lambda: run._synced)
            api.create(ours("a"))
            wait_for(lambda: fault.hits == 1)
            time.sleep(0.2)  # the binding waits on its Retry-After
            began = time.monotonic()
        finally:
            run.stop()
            thread.join(10)
        assert outcome == [""] and time.monotonic() - began < 3
        assert fault.hits == 1 and node_of(api, "a") is None
        held = api.get("coordination.k8s.io/v1", "Lease", "kubesched", "kube-system")
        assert held is not None and not held["spec"].get("holderIdentity")
        assert events(api, "FailedScheduling")["a"] == 1

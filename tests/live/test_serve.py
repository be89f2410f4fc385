"""kubesched.live.serve through LiveRun: /metrics with upstream's names, and the
health endpoints, against the API-server double."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from kubesched.live.apiserver_double import Fault, server_error
from kubesched.live.client import connect
from kubesched.live.leader import LeaseConfig
from kubesched.live.run import LiveRun, live_default_config
from kubesched.live.writer import LiveWriter
from tests.live.cluster_state import double, node, pod, wait_for

pytest.importorskip("prometheus_client")
pytest.importorskip("kubernetes")


def get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_metrics_and_health_of_a_running_scheduler(tmp_path: Path) -> None:
    with double() as api:
        api.create(node("n1", "2"))
        client = connect(str(api.write_kubeconfig(tmp_path / "kc")))
        run = LiveRun(client, live_default_config(), None, 0, ("127.0.0.1", 0))
        assert run.status is not None
        port = run.status.port
        thread = threading.Thread(target=run.run, daemon=True)
        thread.start()
        try:
            wait_for(lambda: get(port, "/readyz")[0] == 200)
            assert get(port, "/healthz") == (200, "ok") and get(port, "/livez") == (200, "ok")
            web = pod("web", "500m")
            web["spec"]["schedulerName"] = "kubesched"
            api.create(web)
            wait_for(lambda: 'result="scheduled"} 1.0' in get(port, "/metrics")[1])
            _, text = get(port, "/metrics")
        finally:
            run.stop()
            thread.join(10)
    assert 'scheduler_schedule_attempts_total{profile="kubesched",result="scheduled"} 1.0' in text
    assert "scheduler_preemption_attempts_total 0.0" in text
    assert 'scheduler_pending_pods{queue="unschedulable"} 0.0' in text
    assert 'scheduler_preemption_victims_bucket{le="+Inf"} 0.0' in text
    assert "leader_election_master_status" not in text


def test_a_waiting_candidate_is_alive_but_not_ready(tmp_path: Path) -> None:
    with double() as api:
        api.create(
            {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": "kubesched", "namespace": "kube-system"},
                "spec": {"holderIdentity": "other", "leaseDurationSeconds": 3600},
            }
        )
        client = connect(str(api.write_kubeconfig(tmp_path / "kc")))
        run = LiveRun(client, live_default_config(), LeaseConfig(), 0, ("127.0.0.1", 0))
        assert run.status is not None
        port = run.status.port
        thread = threading.Thread(target=run.run, daemon=True)
        thread.start()
        try:
            wait_for(lambda: get(port, "/healthz")[0] == 200)
            code, body = get(port, "/readyz")
            _, text = get(port, "/metrics")
        finally:
            run.stop()
            thread.join(10)
    assert code == 500 and "leaderElection: not the leader" in body
    assert 'leader_election_master_status{name="kubesched"} 0.0' in text


def test_dropped_and_abandoned_events_are_counted_on_metrics(tmp_path: Path) -> None:
    """An event the server refuses (a 500 without Retry-After) is abandoned; one
    recorded while the queue is full is dropped: both show on /metrics."""
    with double(kubelet=False) as api:
        api.create(node("n1", "2"))
        client = connect(str(api.write_kubeconfig(tmp_path / "kc")))
        run = LiveRun(client, live_default_config(), None, 0, ("127.0.0.1", 0))
        assert run.status is not None and isinstance(run.scheduler.writer, LiveWriter)
        events = run.scheduler.writer.events
        port = run.status.port
        thread = threading.Thread(target=run.run, daemon=True)
        thread.start()

        def metric(name: str) -> str:
            lines = get(port, "/metrics")[1].splitlines()
            return next(line for line in lines if line.startswith(name + " "))

        def ours(name: str) -> None:
            p = pod(name, "500m")
            p["spec"]["schedulerName"] = "kubesched"
            api.create(p)

        try:
            wait_for(lambda: get(port, "/readyz")[0] == 200)
            before = (
                metric("kubesched_events_dropped_total"),
                metric("kubesched_events_abandoned_total"),
            )
            fault = api.inject(Fault(server_error(), verb="create", resource="events"))
            ours("refused")
            wait_for(lambda: metric("kubesched_events_abandoned_total").endswith(" 1.0"))
            events.max_queued = 0  # full: every event is dropped
            ours("dropped")
            wait_for(lambda: metric("kubesched_events_dropped_total").endswith(" 1.0"))
            after = (
                metric("kubesched_events_dropped_total"),
                metric("kubesched_events_abandoned_total"),
            )
        finally:
            run.stop()
            thread.join(10)
    assert before == ("kubesched_events_dropped_total 0.0", "kubesched_events_abandoned_total 0.0")
    assert after == ("kubesched_events_dropped_total 1.0", "kubesched_events_abandoned_total 1.0")
    assert fault.hits == 1 and events.dropped == 1 and events.abandoned == 1

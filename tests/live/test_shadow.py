"""kubesched.live.shadow through LiveRun: kubesched decides the cluster's pods,
writes nothing, and judges each binding the cluster's own scheduler made (here the
test binds, standing in for kube-scheduler) against the API-server double."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from kubesched.live.apiserver_double import ApiServerDouble
from kubesched.live.client import KubeClient, connect
from kubesched.live.run import LiveRun
from kubesched.live.shadow import ShadowReport
from kubesched.scheduler.config import default_config
from kubesched.scheduler.registry import in_tree_registry
from tests.live.cluster_state import double, node, pod, small_cluster, wait_for

pytest.importorskip("kubernetes")


@contextmanager
def shadow(
    api: ApiServerDouble, tmp_path: Path
) -> Iterator[tuple[LiveRun, io.StringIO, KubeClient]]:
    client = connect(str(api.write_kubeconfig(tmp_path / "kc")))
    out = io.StringIO()
    run = LiveRun(client, default_config(in_tree_registry().keys()), None, 0, None, out)
    thread = threading.Thread(target=run.run, daemon=True)
    thread.start()
    try:
        yield run, out, client
    finally:
        run.stop()
        thread.join(10)


def decided(run: LiveRun, api: ApiServerDouble, name: str) -> Callable[[], bool]:
    def check() -> bool:
        got = api.get("v1", "Pod", name, "default")
        assert run.report is not None
        return got is not None and got["metadata"]["uid"] in run.report.decisions

    return check


def bind(client: KubeClient, name: str, node_name: str) -> None:
    client.request(
        "POST",
        f"/api/v1/namespaces/default/pods/{name}/binding",
        body={
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name},
            "target": {"kind": "Node", "name": node_name},
        },
    )


def verdicts(out: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_agreement_and_disagreement_with_both_sides(tmp_path: Path) -> None:
    with double(kubelet=False) as api:
        api.create(node("n1", "4"))
        api.create(node("n2", "4", zone="b"))
        api.create(pod("busy", "3", "n2"))
        with shadow(api, tmp_path) as (run, out, client):
            api.create(pod("a", "1"))
            wait_for(decided(run, api, "a"))
            bind(client, "a", "n1")  # as kubesched would: n1 is the emptier node
            api.create(pod("b", "1"))
            wait_for(decided(run, api, "b"))
            bind(client, "b", "n2")  # not kubesched's choice
            wait_for(lambda: len(verdicts(out)) == 2)
            assert run.report is not None
            counts = dict(run.report.counts)
        a, b = verdicts(out)
    assert a["pod"] == "default/a" and a["verdict"] == "agree"
    assert a["kubesched"]["node"] == "n1" and a["cluster"] == {"node": "n1"}
    assert set(a["kubesched"]["scores"]) >= {"NodeResourcesFit", "NodeResourcesBalancedAllocation"}
    assert b["verdict"] == "disagree" and b["cluster"]["node"] == "n2"
    assert b["kubesched"]["node"] == "n1"
    assert counts == {"agree": 1, "tie": 0, "disagree": 1, "undecided": 0}
    # Nothing was written: no events, no status patches, the pods' nodes are the test's.
    assert not [r for r in api.requests if r[0] == "POST" and r[1].endswith("/events")]
    assert not [r for r in api.requests if r[0] == "PATCH"]


def test_a_tie_broken_the_other_way_is_a_tie(tmp_path: Path) -> None:
    with double(kubelet=False) as api:
        api.create(node("n1", "4"))
        api.create(node("n2", "4"))
        with shadow(api, tmp_path) as (run, out, client):
            api.create(pod("a", "1"))
            wait_for(decided(run, api, "a"))
            assert run.report is not None
            got = api.get("v1", "Pod", "a", "default")
            assert got is not None
            uid = got["metadata"]["uid"]
            mine = run.report.decisions[uid]
            assert set(mine.ties) == {"n1", "n2"}
            other = "n2" if mine.node == "n1" else "n1"
            bind(client, "a", other)
            wait_for(lambda: len(verdicts(out)) == 1)
        (v,) = verdicts(out)
    assert v["verdict"] == "tie" and v["cluster"]["node"] == other


def test_a_pod_kubesched_finds_unschedulable_is_a_disagreement_with_its_message(
    tmp_path: Path,
) -> None:
    with double(kubelet=False) as api:
        api.create(node("n1", "1"))
        with shadow(api, tmp_path) as (run, out, client):
            api.create(pod("big", "2"))
            wait_for(decided(run, api, "big"))
            bind(client, "big", "n1")  # the cluster's scheduler disagrees (say, other config)
            wait_for(lambda: len(verdicts(out)) == 1)
        (v,) = verdicts(out)
    assert v["verdict"] == "disagree" and v["kubesched"]["node"] is None
    assert v["kubesched"]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")


def act_as_cluster_preempting(client: KubeClient, victim: str, node_name: str) -> None:
    """What kube-scheduler does for ``urgent``: mark the victim, delete it,
    nominate, and (once it is gone) bind."""
    client.request(
        "PATCH",
        f"/api/v1/namespaces/default/pods/{victim}/status",
        body={
            "status": {
                "conditions": [
                    {
                        "type": "DisruptionTarget",
                        "status": "True",
                        "reason": "PreemptionByScheduler",
                        "message": "default-scheduler: preempting to accommodate a higher "
                        "priority pod",
                    }
                ]
            }
        },
        content_type="application/strategic-merge-patch+json",
    )
    client.request(
        "DELETE",
        f"/api/v1/namespaces/default/pods/{victim}",
        body={"gracePeriodSeconds": 0},
    )
    client.request(
        "PATCH",
        "/api/v1/namespaces/default/pods/urgent/status",
        body={"status": {"nominatedNodeName": node_name}},
        content_type="application/strategic-merge-patch+json",
    )
    bind(client, "urgent", node_name)


@pytest.mark.parametrize("same_node", [True, False])
def test_preemptions_are_compared_node_and_victims(tmp_path: Path, same_node: bool) -> None:
    """``urgent`` fits nowhere (small_cluster): kubesched would preempt on one
    node; the cluster preempts on the same one (agree) or the other (disagree)."""
    with double(kubelet=False) as api:
        small_cluster(api)
        with shadow(api, tmp_path) as (run, out, client):
            report = run.report
            assert report is not None
            got = api.get("v1", "Pod", "urgent", "default")
            assert got is not None
            uid = got["metadata"]["uid"]
            wait_for(lambda: uid in report.preemptions)
            mine = report.preemptions[uid]
            assert len(mine.victims) == 1
            node_name = mine.node if same_node else ({"n1", "n2"} - {mine.node}).pop()
            victim = {"n1": "low-1", "n2": "low-2"}[node_name]
            act_as_cluster_preempting(client, victim, node_name)
            wait_for(lambda: len(verdicts(out)) == 1)
            counts = dict(report.preemption_counts)
        (v,) = verdicts(out)
    if same_node:
        assert v["verdict"] == "agree" and v["kubesched"]["node"] == mine.node
    # Otherwise the binding verdict depends on whether kubesched retried the pod on
    # the node the cluster freed before the cluster bound it (agree) or not.
    pre = v["preemption"]
    assert pre["kubesched"] == {"node": mine.node, "victims": list(mine.victims)}
    assert pre["cluster"] == {"node": node_name, "victims": [f"default/{victim}"]}
    assert pre["verdict"] == ("agree" if same_node else "disagree")
    assert counts == {"agree": int(same_node), "disagree": int(not same_node)}
    # Shadow mode wrote nothing: the test's requests are the only writes.
    assert not [r for r in api.requests if r[0] == "POST" and r[1].endswith("/events")]


def test_collect_gives_every_verdict_of_both_counters_in_order() -> None:
    report = ShadowReport(io.StringIO(), lambda: 0)
    report.counts["tie"] += 2
    report.preemption_counts["disagree"] += 1
    got = [
        (m.name, m.documentation, [(s.labels["verdict"], s.value) for s in m.samples])
        for m in report.collect()
    ]
    assert got == [
        (
            "kubesched_shadow_decisions",
            "Pods the cluster's scheduler bound, by kubesched's verdict on its choice.",
            [("agree", 0), ("tie", 2), ("disagree", 0), ("undecided", 0)],
        ),
        (
            "kubesched_shadow_preemptions",
            "Pods kubesched or the cluster's scheduler preempted for, by kubesched's verdict.",
            [("agree", 0), ("disagree", 1)],
        ),
    ]

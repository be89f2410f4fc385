"""Workload controllers end to end through ``kubesched simulate -o json`` (issue 13):
a live-cluster dump reproduced as dumped (examples/real/), a what-if on it, and
one scenario per controller with the scheduler deciding.

Expected placements follow the default profile; each scenario states upstream's
timeline next to it. Times are simulated seconds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.test_simulate import by_name, run_json

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "examples" / "real"


def dumped_pods() -> set[str]:
    with open(REAL / "cluster.yaml") as f:
        doc = yaml.safe_load(f)
    return {
        f"{i['metadata']['namespace']}/{i['metadata']['name']}"
        for i in doc["items"]
        if i["kind"] == "Pod"
    }


# --------------------------------------------------------------------------- examples/real


def test_the_dump_is_reproduced_as_dumped() -> None:
    """Every owner claims its objects (DaemonSets and StatefulSet their pods, the
    Deployments their ReplicaSets, the ReplicaSets and Jobs their pods); old
    ReplicaSets stay at 0, the finished Job stays finished, the running Job has its
    2 of min(parallelism 2, 4 - 1 succeeded) pods, the monthly CronJob's next
    schedule is weeks away: no pod is added, none is pending or scheduled, nothing
    is preempted and nothing is reported."""
    doc = run_json("-f", str(REAL / "cluster.yaml"))
    pods = by_name(doc)
    assert set(pods) == dumped_pods()
    assert all(p["nodeName"] for p in pods.values())
    assert all(p["deletedAt"] is None for p in pods.values())
    phases = {k: p["phase"] for k, p in pods.items() if p["phase"] != "Running"}
    assert phases == {"batch/report-7zq4d": "Succeeded", "batch/etl-c8n2f": "Succeeded"}
    assert doc["preemptions"] == []
    assert doc["events"] == []
    assert doc["metrics"]["scheduler_schedule_attempts_total"] == {
        "scheduled": 0,
        "unschedulable": 0,
        "error": 0,
    }
    assert doc["simulatedSeconds"] == 0.0


def test_the_what_if_preempts_the_expected_victim() -> None:
    """examples/real/what-if.yaml: urgent-report (priority 1000, 1 CPU) arrives at 10 s.
    DefaultPreemption (derivation in the file's header): worker-1 would need two
    victims (etl-p5m7w, priority 100, and a web pod), worker-2 one (web-...-h6wpl,
    priority 0); neither violates the web PDB, so the lower highest victim priority
    picks worker-2. The victim terminates for 30 s; urgent-report binds at 40 s; the
    ReplicaSet's replacement of the victim stays Pending (no CPU left)."""
    doc = run_json("-f", str(REAL / "cluster.yaml"), "-f", str(REAL / "what-if.yaml"))
    assert doc["preemptions"] == [
        {
            "time": 10.0,
            "preemptor": "batch/urgent-report",
            "node": "worker-2",
            "victims": ["shop/web-7f9c6d5b84-h6wpl"],
            "numPDBViolations": 0,
        }
    ]
    pods = by_name(doc)
    urgent = pods["batch/urgent-report"]
    assert (urgent["nodeName"], urgent["scheduledAt"]) == ("worker-2", 40.0)
    victim = pods["shop/web-7f9c6d5b84-h6wpl"]
    assert (victim["deletedAt"], victim["deletionReason"]) == (40.0, "Preempted")
    added = set(pods) - dumped_pods() - {"batch/urgent-report"}
    (replacement,) = added
    assert replacement.startswith("shop/web-7f9c6d5b84-")
    assert pods[replacement]["createdAt"] == 10.0
    assert pods[replacement]["nodeName"] is None


# --------------------------------------------------------------------------- scenarios


def docs(*objs: dict[str, Any]) -> str:
    return yaml.safe_dump_all(objs, sort_keys=False)


def node(name: str, cpu: str = "4", **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, **meta},
        "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}},
    }


def pod(name: str, cpu: str, *, priority: int = 0, create_at: str = "") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if create_at:
        meta["annotations"] = {"kubesched.io/create-at": create_at}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "priority": priority,
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
        },
    }


def template(cpu: str, labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"labels": labels},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}], **spec},
    }


@pytest.mark.parametrize(
    "uids",
    [
        pytest.param(True, id="a dump: owner references carry uids"),
        pytest.param(False, id="written by hand: owner references name kind and name only"),
    ],
)
def test_a_dumped_deployment_stays_two_pods(uids: bool) -> None:
    """The issue's case: a 2-replica Deployment dumped with its ReplicaSet and its 2
    pods stays 2 pods (without ownership it became 6, two of them Pending). An
    owner reference without a uid names its owner by kind and name."""
    labels = {"app": "web", "pod-template-hash": "abc12"}

    def ref(kind: str, name: str, uid: str) -> list[dict[str, Any]]:
        r: dict[str, Any] = {
            "apiVersion": "apps/v1",
            "kind": kind,
            "name": name,
            "controller": True,
        }
        if uids:
            r["uid"] = uid
        return [r]

    objs = [node("n1", "2")]
    for i in range(2):
        p = pod(f"web-abc12-{i}", "1")
        p["metadata"].update(labels=labels, ownerReferences=ref("ReplicaSet", "web-abc12", "rs-1"))
        p["spec"]["nodeName"] = "n1"
        objs.append(p)
    deployment_meta: dict[str, Any] = {"name": "web"}
    rs_meta: dict[str, Any] = {
        "name": "web-abc12",
        "labels": labels,
        "ownerReferences": ref("Deployment", "web", "d-1"),
    }
    if uids:
        deployment_meta["uid"], rs_meta["uid"] = "d-1", "rs-1"
    objs.append(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": deployment_meta,
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": template("1", {"app": "web"}),
            },
        }
    )
    objs.append(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": rs_meta,
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": labels},
                "template": template("1", labels),
            },
        }
    )
    doc = run_json("-f", "-", stdin=docs(*objs))
    assert sorted(by_name(doc)) == ["default/web-abc12-0", "default/web-abc12-1"]
    assert doc["events"] == []


def test_a_preempted_statefulset_pod_comes_back_pending_under_its_name() -> None:
    """db-0 (priority 0, 3 CPUs) runs on the 4-CPU node; urgent (priority 1000, 3 CPUs)
    preempts it at 10 s. The StatefulSet does not replace db-0 while it terminates
    (its name is taken); at 40 s it is gone, urgent binds, and db-0 is created again
    under the same name, Pending: the node has 1 CPU left."""
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "replicas": 1,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": template("3", {"app": "db"}),
        },
    }
    doc = run_json(
        "-f", "-", stdin=docs(node("n1"), sts, pod("urgent", "3", priority=1000, create_at="10s"))
    )
    dbs = sorted((p for p in doc["pods"] if p["name"] == "db-0"), key=lambda p: p["createdAt"])
    assert [
        (p["createdAt"], p["scheduledAt"], p["deletedAt"], p["deletionReason"]) for p in dbs
    ] == [
        (0.0, 0.0, 40.0, "Preempted"),
        (40.0, None, None, None),
    ]
    assert dbs[1]["phase"] == "Pending"
    assert by_name(doc)["default/urgent"]["scheduledAt"] == 40.0


def test_daemonset_pods_are_scheduled_and_preempt() -> None:
    """The DaemonSet's pods are bound by the scheduler (matchFields on their node): on
    the full node n1 its system-node-critical pod preempts the filler pod; n2 (empty)
    takes its pod at once; the tainted node gets none."""
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": template("1", {"app": "agent"}, priorityClassName="system-node-critical"),
        },
    }
    filler = pod("filler", "2")
    filler["spec"]["nodeName"] = "n1"
    tainted = node("n3", spec={})
    tainted["spec"] = {"taints": [{"key": "dedicated", "effect": "NoSchedule"}]}
    doc = run_json("-f", "-", stdin=docs(node("n1", "2"), node("n2", "2"), tainted, filler, ds))
    agents = {p["nodeName"]: p for p in doc["pods"] if p["name"].startswith("agent-")}
    assert sorted(agents) == ["n1", "n2"]
    assert [(p["node"], p["victims"]) for p in doc["preemptions"]] == [("n1", ["default/filler"])]
    assert agents["n2"]["scheduledAt"] == 0.0
    assert agents["n1"]["scheduledAt"] == 30.0


def test_job_pods_run_to_completion() -> None:
    """completions 3, parallelism 2, run-for 10 s: two pods at 0 s, the third at 10 s,
    complete at 20 s (``Completed``, ``Job completed``)."""
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi"},
        "spec": {
            "completions": 3,
            "parallelism": 2,
            "template": {
                "metadata": {"annotations": {"kubesched.io/run-for": "10s"}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                },
            },
        },
    }
    doc = run_json("-f", "-", stdin=docs(node("n1"), job))
    assert sorted((p["createdAt"], p["phase"]) for p in doc["pods"]) == [
        (0.0, "Succeeded"),
        (0.0, "Succeeded"),
        (10.0, "Succeeded"),
    ]
    job_events = [e for e in doc["events"] if "kind" in e]
    assert [(e["time"], e["reason"], e["kind"], e["message"]) for e in job_events] == [
        (20.0, "Completed", "Job", "Job completed")
    ]


def test_cronjob_jobs_are_named_by_their_schedule_minute() -> None:
    """With no absolute time in the input, time 0 is 1970-01-01T00:00:00Z: ``*/1 * * * *``
    fires at 60 s and 120 s; the controller wakes 100 ms later and creates Jobs named
    ``tick-<minutes since the epoch>``; each pod runs 20 s."""
    cj = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "tick"},
        "spec": {
            "schedule": "*/1 * * * *",
            "jobTemplate": {
                "spec": {
                    "template": {
                        "metadata": {"annotations": {"kubesched.io/run-for": "20s"}},
                        "spec": {
                            "restartPolicy": "OnFailure",
                            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                        },
                    }
                }
            },
        },
    }
    doc = run_json("-f", "-", "--until", "150s", stdin=docs(node("n1"), cj))
    assert [(p["name"][:7], p["createdAt"]) for p in doc["pods"]] == [
        ("tick-1-", 60.1),
        ("tick-2-", 120.1),
    ]
    created = [
        (e["time"], e["message"]) for e in doc["events"] if e["reason"] == "SuccessfulCreate"
    ]
    assert created == [(60.1, "Created job tick-1"), (120.1, "Created job tick-2")]

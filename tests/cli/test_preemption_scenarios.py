"""Preemption scenarios end to end: ``kubesched simulate -o json`` on the examples
under examples/preemption/ (click's CliRunner on ``kubesched.cli.main:main``).

Every expected value is derived from upstream's rules (spec §3–§7), step by
step in the comments; the examples' own comments tell the same story for users.
Variants of an example (a PDB removed, a pod removed, a policy changed) are
written to a temporary file, to show which object makes the difference.

FailedScheduling messages are those of the v1.36 default profile: DynamicResources'
PostFilter puts "no new claims to deallocate, " before the preemption message.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "preemption"
SEED_NGINX = EXAMPLES / "seed-nginx.yaml"
PDB_STEERING = EXAMPLES / "pdb-steering.yaml"
NOMINATED_HOLD = EXAMPLES / "nominated-hold.yaml"
POLICY_NEVER = EXAMPLES / "policy-never.yaml"

Doc = dict[str, Any]


def simulate(path: Path, *extra: str) -> Doc:
    result = CliRunner().invoke(main, ["simulate", "-f", str(path), "-o", "json", *extra])
    assert result.exit_code == 0, result.output
    doc: Doc = json.loads(result.stdout)
    return doc


def raw(path: Path, *extra: str) -> str:
    result = CliRunner().invoke(main, ["simulate", "-f", str(path), "-o", "json", *extra])
    assert result.exit_code == 0, result.output
    return result.stdout


def variant(tmp_path: Path, src: Path, edit: Callable[[list[dict[str, Any]]], None]) -> Path:
    docs = [d for d in yaml.safe_load_all(src.read_text()) if d]
    edit(docs)
    out = tmp_path / src.name
    out.write_text(yaml.safe_dump_all(docs))
    return out


def drop(kind: str, name: str) -> Callable[[list[dict[str, Any]]], None]:
    def edit(docs: list[dict[str, Any]]) -> None:
        docs[:] = [d for d in docs if (d["kind"], d["metadata"]["name"]) != (kind, name)]

    return edit


def pods(doc: Doc) -> dict[str, Doc]:
    return {p["name"]: p for p in doc["pods"]}


def events(doc: Doc, reason: str, obj: str | None = None) -> list[Doc]:
    return [
        e for e in doc["events"] if e["reason"] == reason and (obj is None or e["object"] == obj)
    ]


# ------------------------------------------------------------------------- (a) seed example


@pytest.fixture(scope="module")
def seed_doc() -> Doc:
    return simulate(SEED_NGINX)


def _nginx_pods(doc: Doc) -> tuple[Doc, Doc]:
    """(the Deployment's original pod, its replacement), told apart by creation time."""
    rs = sorted(
        (p for p in doc["pods"] if p["name"].startswith("nginx-") and p["name"] != "nginx-a"),
        key=lambda p: p["createdAt"],
    )
    assert len(rs) == 2
    return rs[0], rs[1]


def test_seed_nginx_a_preempts_the_deployment_pod(seed_doc: Doc) -> None:
    """At 37 s nginx-a (1000000, 5 CPU) fits neither node: test-worker has 8 - 4 = 4
    CPUs free, test-control-plane is tainted (UnschedulableAndUnresolvable, never a
    preemption candidate). On test-worker the Deployment's pod (priority 0) is the
    only victim; removing it leaves 8 CPUs."""
    victim, _ = _nginx_pods(seed_doc)
    assert seed_doc["preemptions"] == [
        {
            "time": 37.0,
            "preemptor": "default/nginx-a",
            "node": "test-worker",
            "victims": [f"default/{victim['name']}"],
            "numPDBViolations": 0,
        }
    ]
    assert (victim["createdAt"], victim["nodeName"]) == (0.0, "test-worker")
    # Graceful deletion: the victim holds its CPUs for the default 30 s grace period.
    assert (victim["deletedAt"], victim["deletionReason"]) == (67.0, "Preempted")


def test_seed_nginx_a_binds_after_the_grace_period(seed_doc: Doc) -> None:
    a = pods(seed_doc)["nginx-a"]
    assert (a["priority"], a["priorityClassName"]) == (1000000, "high-priority")
    assert (a["phase"], a["nodeName"]) == ("Running", "test-worker")
    assert a["scheduledAt"] == a["createdAt"] + 30 == 67.0
    assert a["nominatedNodeName"] is None  # cleared when bound
    assert seed_doc["simulatedSeconds"] == 67.0


def test_seed_replacement_stays_pending(seed_doc: Doc) -> None:
    """The ReplicaSet replaces the victim as soon as it starts terminating (37 s). The
    replacement (priority 0, 4 CPU) sees test-worker with the terminating victim (4)
    and nginx-a nominated there (5, priority >= 0): Insufficient cpu. It cannot preempt
    (no pod of lower priority). Once nginx-a is bound (5 of 8 CPUs) it still does not fit."""
    _, replacement = _nginx_pods(seed_doc)
    assert replacement["createdAt"] == 37.0
    assert (replacement["phase"], replacement["nodeName"]) == ("Pending", None)
    msg = (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). "
        "no new claims to deallocate, "
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling."
    )
    failed = events(seed_doc, "FailedScheduling", f"default/{replacement['name']}")
    assert [(e["time"], e["message"]) for e in failed] == [(37.0, msg), (67.0, msg)]


def test_seed_events(seed_doc: Doc) -> None:
    a = pods(seed_doc)["nginx-a"]
    victim, _ = _nginx_pods(seed_doc)
    preempted = events(seed_doc, "Preempted")
    assert preempted == [
        {
            "time": 37.0,
            "type": "Normal",
            "reason": "Preempted",
            "object": f"default/{victim['name']}",
            "related": "default/nginx-a",
            "message": f"Preempted by pod {a['uid']} on node test-worker",
        }
    ]
    # Preemption succeeded, so PostFilter adds no message to the FitError (R4.1).
    assert [
        (e["time"], e["type"], e["message"])
        for e in events(seed_doc, "FailedScheduling", "default/nginx-a")
    ] == [
        (
            37.0,
            "Warning",
            "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s).",
        )
    ]
    assert [
        (e["time"], e["message"]) for e in events(seed_doc, "Scheduled", "default/nginx-a")
    ] == [(67.0, "Successfully assigned default/nginx-a to test-worker")]


def test_seed_metrics(seed_doc: Doc) -> None:
    """Schedule attempts: the Deployment pod at 0 s and nginx-a at 67 s are scheduled;
    nginx-a at 37 s and the replacement at 37 s and 67 s (requeued by the victim's
    deletion, popped after nginx-a) are unschedulable. Each of those three runs
    PostFilter once; one preemption with one victim."""
    m = seed_doc["metrics"]
    assert m["scheduler_preemption_attempts_total"] == 3
    assert (
        m["scheduler_preemption_victims"]["count"],
        m["scheduler_preemption_victims"]["sum"],
    ) == (1, 1)
    assert m["scheduler_schedule_attempts_total"] == {
        "scheduled": 2,
        "unschedulable": 3,
        "error": 0,
    }


def test_seed_async_preemption_off_gives_the_same_run() -> None:
    """Upstream runs its preemption tests with SchedulerAsyncPreemption on and off and
    expects the same results."""
    on = simulate(SEED_NGINX)
    off = simulate(SEED_NGINX, "--feature-gates", "SchedulerAsyncPreemption=false")
    assert off["pods"] == on["pods"]
    assert off["preemptions"] == on["preemptions"]
    assert off["metrics"] == on["metrics"]


def test_seed_same_seed_same_bytes() -> None:
    assert raw(SEED_NGINX, "--seed", "7") == raw(SEED_NGINX, "--seed", "7")


# ------------------------------------------------------------------------- (b) PDB steering


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_pdb_steers_preemption_to_the_other_node(seed: int) -> None:
    """Both workers are candidates (3 + 2 > 4 CPUs; removing the 3-CPU pod helps).
    worker-a: victim guarded-0, its PDB allows 0 disruptions -> 1 violation;
    worker-b: victim batch-0 -> 0 violations. Fewest violations wins whatever the
    random offset or tie-break (any seed)."""
    doc = simulate(PDB_STEERING, "--seed", str(seed))
    assert doc["preemptions"] == [
        {
            "time": 10.0,
            "preemptor": "default/api-server",
            "node": "worker-b",
            "victims": ["default/batch-0"],
            "numPDBViolations": 0,
        }
    ]
    p = pods(doc)
    assert (p["api-server"]["nodeName"], p["api-server"]["scheduledAt"]) == ("worker-b", 40.0)
    assert (p["batch-0"]["deletedAt"], p["batch-0"]["deletionReason"]) == (40.0, "Preempted")
    assert (p["guarded-0"]["phase"], p["guarded-0"]["deletedAt"]) == ("Running", None)
    assert [e["message"] for e in events(doc, "FailedScheduling", "default/api-server")] == [
        "0/2 nodes are available: 2 Insufficient cpu."
    ]
    assert [(e["object"], e["related"]) for e in events(doc, "Preempted")] == [
        ("default/batch-0", "default/api-server")
    ]


def test_without_the_pdb_the_lower_priority_victim_is_chosen(tmp_path: Path) -> None:
    """Control: with no budget both candidates have 0 violations; worker-a's victim
    (priority 0) is lower than worker-b's (1000), so worker-a wins (criterion 2)."""
    doc = simulate(variant(tmp_path, PDB_STEERING, drop("PodDisruptionBudget", "guarded-pdb")))
    assert [(x["node"], x["victims"]) for x in doc["preemptions"]] == [
        ("worker-a", ["default/guarded-0"])
    ]


def _set_pdb_status(status: dict[str, Any] | None) -> Callable[[list[dict[str, Any]]], None]:
    def edit(docs: list[dict[str, Any]]) -> None:
        for d in docs:
            if d["kind"] == "PodDisruptionBudget":
                if status is None:
                    d.pop("status", None)
                else:
                    d["status"] = status

    return edit


@pytest.mark.parametrize(
    "status",
    [
        pytest.param(None, id="no status in the input"),
        pytest.param(
            {"disruptionsAllowed": 5, "currentHealthy": 6, "desiredHealthy": 1, "expectedPods": 6},
            id="a stale status allowing disruptions",
        ),
    ],
)
def test_pdb_status_is_recomputed_from_the_pods(
    tmp_path: Path, status: dict[str, Any] | None
) -> None:
    """simulate-interface.md: the PDB status is computed from the pods it selects, like
    the disruption controller does (minAvailable 1 of 1 healthy pod -> 0 allowed), so
    the input status does not change the decision."""
    doc = simulate(variant(tmp_path, PDB_STEERING, _set_pdb_status(status)))
    assert [x["node"] for x in doc["preemptions"]] == ["worker-b"]


# ------------------------------------------------------------------------- (c) nominated hold


@pytest.fixture(scope="module")
def hold_doc() -> Doc:
    return simulate(NOMINATED_HOLD)


def test_nominated_preemptor_holds_its_node(hold_doc: Doc) -> None:
    p = pods(hold_doc)
    assert hold_doc["preemptions"] == [
        {
            "time": 5.0,
            "preemptor": "default/urgent",
            "node": "worker",
            "victims": ["default/batch-job"],
            "numPDBViolations": 0,
        }
    ]
    # filler arrives at 10 s while batch-job terminates: worker has 1 CPU free, but
    # urgent (1000 >= 0) is nominated there and counts: 3 + 3 + 1 > 4.
    assert [
        (e["time"], e["message"]) for e in events(hold_doc, "FailedScheduling", "default/filler")
    ] == [
        (
            10.0,
            "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
            "preemption: 0/1 nodes are available: "
            "1 No preemption victims found for incoming pod.",
        )
    ]
    # The victim is gone at 5 + 30 s; urgent binds first, then filler fits next to it.
    assert (p["batch-job"]["deletedAt"], p["batch-job"]["deletionReason"]) == (35.0, "Preempted")
    assert (p["urgent"]["nodeName"], p["urgent"]["scheduledAt"]) == ("worker", 35.0)
    assert (p["filler"]["nodeName"], p["filler"]["scheduledAt"]) == ("worker", 35.0)
    scheduled = [e["object"] for e in events(hold_doc, "Scheduled")]
    assert scheduled == ["default/urgent", "default/filler"]
    assert hold_doc["metrics"]["scheduler_preemption_attempts_total"] == 2


def test_without_the_nomination_the_filler_binds_at_once(tmp_path: Path) -> None:
    """Control: with no nominated preemptor the free CPU is filler's at 10 s."""
    doc = simulate(variant(tmp_path, NOMINATED_HOLD, drop("Pod", "urgent")))
    f = pods(doc)["filler"]
    assert (f["nodeName"], f["scheduledAt"]) == ("worker", 10.0)
    assert doc["preemptions"] == []


# ------------------------------------------------------------------------- (d) policy Never


def test_preemption_policy_never_stays_pending() -> None:
    doc = simulate(POLICY_NEVER)
    p = pods(doc)
    etl = p["etl"]
    assert (etl["priority"], etl["priorityClassName"]) == (1000000, "high-priority-nonpreempting")
    assert (etl["phase"], etl["nodeName"], etl["nominatedNodeName"]) == ("Pending", None, None)
    assert (p["low-0"]["phase"], p["low-0"]["deletedAt"]) == ("Running", None)
    assert doc["preemptions"] == []
    assert events(doc, "Preempted") == []
    failed = events(doc, "FailedScheduling", "default/etl")
    assert [(e["time"], e["message"]) for e in failed] == [
        (
            5.0,
            "0/1 nodes are available: 1 Insufficient cpu. "
            "no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never.",
        )
    ]
    m = doc["metrics"]
    assert m["scheduler_preemption_attempts_total"] == 1  # PostFilter ran, and counted
    assert m["scheduler_preemption_victims"]["count"] == 0


def test_same_class_with_preempt_lower_priority_preempts(tmp_path: Path) -> None:
    """Control: the same class with preemptionPolicy PreemptLowerPriority preempts low-0."""

    def edit(docs: list[dict[str, Any]]) -> None:
        for d in docs:
            if d["kind"] == "PriorityClass":
                d["preemptionPolicy"] = "PreemptLowerPriority"

    doc = simulate(variant(tmp_path, POLICY_NEVER, edit))
    assert [(x["preemptor"], x["victims"]) for x in doc["preemptions"]] == [
        ("default/etl", ["default/low-0"])
    ]
    assert pods(doc)["etl"]["scheduledAt"] == 35.0


def test_retried_preemptor_waits_for_its_terminating_victim(tmp_path: Path) -> None:
    """With a 400 s grace period the preemptor is retried before its victim is gone:
    it entered the unschedulable pool at 5 s and flushUnschedulablePodsLeftover (every
    30 s) moves pods that waited strictly longer than 5 min, so at 330 s. Its nominated
    node is Unschedulable (not unresolvable) and holds a victim terminating by
    preemption, so it is not eligible (R5.1.2); the nil result keeps the nomination and
    it binds there when the victim is removed at 5 + 400 s."""

    def edit(docs: list[dict[str, Any]]) -> None:
        for d in docs:
            if d["metadata"]["name"] == "batch-job":
                d["spec"]["terminationGracePeriodSeconds"] = 400

    doc = simulate(variant(tmp_path, NOMINATED_HOLD, edit))
    failed = events(doc, "FailedScheduling", "default/urgent")
    assert [(e["time"], e["message"]) for e in failed] == [
        (5.0, "0/1 nodes are available: 1 Insufficient cpu."),
        (
            330.0,
            "0/1 nodes are available: 1 Insufficient cpu. "
            "no new claims to deallocate, "
            "preemption: not eligible due to a terminating pod on the nominated node.",
        ),
    ]
    assert len(doc["preemptions"]) == 1
    u = pods(doc)["urgent"]
    assert (u["nodeName"], u["scheduledAt"]) == ("worker", 405.0)


def test_failed_scheduling_message_of_the_v1_36_default_profile() -> None:
    doc = simulate(POLICY_NEVER)
    assert [e["message"] for e in events(doc, "FailedScheduling", "default/etl")] == [
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
        "preemption: not eligible due to preemptionPolicy=Never."
    ]

"""``kubesched explain``, ``simulate --explain`` and the REASON column of
``-o wide``, on the seed example (examples/preemption/seed-nginx.yaml).

The seed: a 2-node cluster (a tainted control plane and ``test-worker``), a
Deployment of two low-priority nginx pods, one already running on the
worker; at 37s ``nginx-a`` (priority 1000000) arrives and fits nowhere:
the worker lacks cpu (Unschedulable: preemption may help), the control plane
is tainted (UnschedulableAndUnresolvable). It preempts the running nginx pod,
is nominated to test-worker, and binds once the victim's 30s grace period
ends (67s). The replacement pod the Deployment creates stays Pending.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from kubesched.cli.main import main

SEED = Path(__file__).resolve().parents[2] / "examples" / "preemption" / "seed-nginx.yaml"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def pod_names(doc: dict[str, Any], phase: str) -> list[str]:
    return [p["name"] for p in doc["pods"] if p["phase"] == phase and p["deletedAt"] is None]


def simulate_doc(*extra: str) -> dict[str, Any]:
    r = run("simulate", "-f", str(SEED), "-o", "json", *extra)
    assert r.exit_code == 0, r.output
    doc: dict[str, Any] = json.loads(r.stdout)
    return doc


def test_explain_the_preemptor_step_by_step() -> None:
    r = run("explain", "-f", str(SEED), "nginx-a")
    assert r.exit_code == 0, r.output
    text = r.stdout
    assert "Priority:            1000000" in text
    assert "Priority Class Name: high-priority" in text
    assert "Node:                test-worker" in text
    assert "Attempts:            2" in text
    lines = text.splitlines()
    first = lines.index("Attempt 1 at 37s: Unschedulable")
    block = "\n".join(lines[first : lines.index("Attempt 2 at 67s: Scheduled on test-worker")])
    assert (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s)." in block
    )
    rows = [
        line.split() for line in block.splitlines() if line.startswith(("    Node", "    Taint"))
    ]
    assert ["NodeResourcesFit", "Unschedulable", "Insufficient", "cpu", "1", "test-worker"] in rows
    assert [
        "TaintToleration",
        "UnschedulableAndUnresolvable",
        "node(s)",
        "had",
        "untolerated",
        "taint(s)",
        "1",
        "test-control-plane",
    ] in rows
    assert "Preemption may help on 1 node(s) (Unschedulable); cannot on 1" in block
    assert "Preemption nominated node test-worker" in block
    victim = [line for line in lines if line.startswith("Preempted:")]
    assert len(victim) == 1 and "on test-worker at 37s" in victim[0]


def test_explain_json_is_the_result_entries() -> None:
    doc = simulate_doc("--explain")
    r = run("explain", "-f", str(SEED), "default/nginx-a", "-o", "json")
    assert r.exit_code == 0, r.output
    [entry] = json.loads(r.stdout)
    [pod] = [p for p in doc["pods"] if p["name"] == "nginx-a"]
    assert entry["pod"] == pod
    assert entry["explanation"] == next(e for e in doc["explanations"] if e["uid"] == pod["uid"])
    assert [p["preemptor"] for p in entry["preemptions"]] == ["default/nginx-a"]
    history = entry["explanation"]["history"]
    assert [a["result"] for a in history] == ["Unschedulable", "Scheduled"]
    assert history[0]["nominatedNode"] == history[1]["node"] == pod["nodeName"]


def test_explanations_only_with_the_flag_and_decisions_unchanged() -> None:
    plain = simulate_doc()
    explained = simulate_doc("--explain")
    assert "explanations" not in plain
    explanations = explained.pop("explanations")
    assert explained == plain
    uids = {e["uid"] for e in explanations}
    attempted = {p["uid"] for p in plain["pods"] if p["scheduledAt"] is not None}
    assert attempted <= uids  # every scheduled pod was attempted at least once


def test_wide_output_says_why_a_pod_is_pending() -> None:
    doc = simulate_doc("--explain")
    [pending] = pod_names(doc, "Pending")
    r = run("simulate", "-f", str(SEED), "-o", "wide")
    assert r.exit_code == 0, r.output
    [row] = [line for line in r.stdout.splitlines() if pending in line]
    assert row.rstrip().endswith("Insufficient cpu")
    [victim] = [line for line in r.stdout.splitlines() if "Deleted" in line]
    assert victim.rstrip().endswith("Preempted")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("nope",), "error: pod default/nope: not found in the run"),
        (("-n", "kube-system", "nginx-a"), "error: pod kube-system/nginx-a: not found in the run"),
        (("--until", "soon", "nginx-a"), "error: Invalid value for '--until':"),
    ],
)
def test_bad_requests_are_one_line_and_exit_2(args: tuple[str, ...], message: str) -> None:
    r = run("explain", "-f", str(SEED), *args)
    assert r.exit_code == 2
    assert r.stderr.startswith(message)
    assert len(r.stderr.strip().splitlines()) == 1
    assert r.stdout == ""


def test_explain_needs_input() -> None:
    r = run("explain", "nginx-a")
    assert r.exit_code == 2
    assert r.stderr.strip() == "error: -f: required (or --from-cluster)"


def test_readme_shows_the_real_output() -> None:
    """The README's ``kubesched explain`` transcripts are what the command prints
    (the second one is cut after its first attempt, marked ``...``)."""
    readme = (SEED.parents[2] / "README.md").read_text()
    blocks = re.findall(r"```\n\$ kubesched explain (.*?)\n(.*?)```", readme, re.S)
    assert len(blocks) == 2
    for args, shown in blocks:
        r = run("explain", *args.split())
        assert r.exit_code == 0, r.output
        if shown.endswith("...\n"):
            shown = shown[: -len("...\n")]
            assert r.stdout.startswith(shown)
        else:
            assert r.stdout == shown


def test_explain_from_cluster_reads_the_live_state(tmp_path: Path) -> None:
    """On the API-server double's cluster (tests/live/cluster_state.small_cluster):
    ``urgent`` fits neither 2-CPU node next to a 1.5-CPU pod, preempts one, binds."""
    pytest.importorskip("kubernetes")
    from tests.live.cluster_state import double, small_cluster

    with double() as api:
        small_cluster(api)
        kc = str(api.write_kubeconfig(tmp_path / "kc"))
        r = run("explain", "--from-cluster", "--kubeconfig", kc, "urgent", "-o", "json")
    assert r.exit_code == 0, r.output
    [entry] = json.loads(r.stdout)
    first, last = entry["explanation"]["history"][0], entry["explanation"]["history"][-1]
    assert first["result"] == "Unschedulable"
    assert [(g["plugin"], g["reason"], g["nodes"]) for g in first["reasons"]] == [
        ("NodeResourcesFit", "Insufficient cpu", 2)
    ]
    assert first["preemptionMayHelp"] == 2
    assert last["result"] == "Scheduled" and last["node"] == first["nominatedNode"]
    assert entry["pod"]["nodeName"] == last["node"]


GATED = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: held, namespace: default}
spec:
  schedulingGates: [{name: example.com/wait}]
  containers: [{name: c, image: pause, resources: {requests: {cpu: 100m}}}]
"""


def test_a_gated_pod_is_explained_by_its_queue_timeline(tmp_path: Path) -> None:
    f = tmp_path / "gated.yaml"
    f.write_text(GATED)
    r = run("explain", "-f", str(f), "held", "-o", "json")
    assert r.exit_code == 0, r.output
    [entry] = json.loads(r.stdout)
    e = entry["explanation"]
    assert e["attempts"] == 0 and e["history"] == []
    assert e["queue"] == [
        {
            "time": 0.0,
            "queue": "gated",
            "event": "UnschedulablePodAdd",
            "waitingFor": ["SchedulingGates"],
        }
    ]
    assert entry["whatWouldFit"]["preEnqueue"]["plugin"] == "SchedulingGates"
    assert entry["whatWouldFit"]["fitsNow"] == ["n1"]
    text = run("explain", "-f", str(f), "held").stdout
    assert "gated   UnschedulablePodAdd   -      SchedulingGates" in text
    assert "  PreEnqueue SchedulingGates: " in text


def test_a_pending_pod_gets_what_would_make_it_fit() -> None:
    doc = simulate_doc()
    [pending] = pod_names(doc, "Pending")
    r = run("explain", "-f", str(SEED), pending, "-o", "json")
    assert r.exit_code == 0, r.output
    [entry] = json.loads(r.stdout)
    fits = entry["whatWouldFit"]
    assert fits["fitsNow"] == []
    nearest = {n["node"]: n["blockers"] for n in fits["nearest"]}
    assert nearest["test-worker"][0]["missing"] == [{"resource": "cpu", "missing": "1"}]
    assert nearest["test-control-plane"][0]["untoleratedTaints"] == [
        "node-role.kubernetes.io/control-plane:NoSchedule"
    ]
    text = run("explain", "-f", str(SEED), pending).stdout
    assert "    NodeResourcesFit: needs 1 more cpu" in text
    # A scheduled pod gets none.
    r = run("explain", "-f", str(SEED), "nginx-a", "-o", "json")
    assert "whatWouldFit" not in json.loads(r.stdout)[0]

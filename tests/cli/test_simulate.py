"""``kubesched simulate`` end to end, checked against simulate-interface.md.

The expected placements and messages of the shipped examples are derived from
upstream v1.36's default profile, not copied from output; each derivation is
written next to its expectation. Score weights: TaintToleration 3,
NodeAffinity 2, NodeResourcesFit (LeastAllocated, cpu and memory weight 1) 1,
NodeResourcesBalancedAllocation 1, ImageLocality 1 (no node lists images in
these examples, so it is 0 everywhere); PodTopologySpread and InterPodAffinity
(2 each) score nothing here: no pod has affinity terms, bare pods get no
default spreading selector, and the Deployment's pods have one feasible node.

- LeastAllocated per resource: ``(alloc - requested) * 100 // alloc``; mean
  of cpu and memory with integer division; ``requested`` includes the pod.
- BalancedAllocation (v1.36, kubernetes PR #135573): with ``b(x) = int((1 -
  |f_cpu - f_mem| / 2) * 100)`` over requested/allocatable fractions,
  ``50 + (50 + b(with pod) - b(without pod)) // 2``.
- Reasons: NodeResourcesFit ``Insufficient cpu``, UnschedulableAndUnresolvable
  when the request exceeds the node's allocatable (since v1.34, PR #131345);
  TaintToleration ``node(s) had untolerated taint(s)`` (since v1.35, PR
  #134740); NodeUnschedulable ``node(s) were unschedulable``; NodeAffinity
  ``node(s) didn't match Pod's node affinity/selector``. The FitError message
  sorts ``"<count> <reason>"`` strings lexicographically; DefaultPreemption's
  message follows after ``preemption: `` and counts every node it did not try
  as ``Preemption is not helpful for scheduling``.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from kubesched.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
BASIC = EXAMPLES / "basic.yaml"
TAINTS = EXAMPLES / "taints-affinity.yaml"
SEED_NGINX = EXAMPLES / "preemption" / "seed-nginx.yaml"
ALL_EXAMPLES = sorted(EXAMPLES.rglob("*.yaml"))
SCENARIOS = Path(__file__).resolve().parent / "scenarios"
CORPUS_BAD = Path(__file__).resolve().parent / "corpus" / "bad"

ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
UID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")

TOP_KEYS = [
    "apiVersion",
    "kind",
    "seed",
    "simulatedSeconds",
    "pods",
    "preemptions",
    "events",
    "metrics",
]
POD_KEYS = [
    "namespace",
    "name",
    "uid",
    "priority",
    "priorityClassName",
    "phase",
    "nodeName",
    "nominatedNodeName",
    "createdAt",
    "scheduledAt",
    "startTime",
    "deletedAt",
    "deletionReason",
]
PREEMPTION_KEYS = ["time", "preemptor", "node", "victims", "numPDBViolations"]
EVENT_KEYS = ["time", "type", "reason", "object", "related", "message"]


def simulate(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, ["simulate", *args], input=stdin)


def ok(*args: str, stdin: str | None = None) -> str:
    result = simulate(*args, stdin=stdin)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def run_json(*args: str, stdin: str | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(ok(*args, "-o", "json", stdin=stdin))
    return doc


def by_name(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{p['namespace']}/{p['name']}": p for p in doc["pods"]}


def event_tuples(doc: dict[str, Any]) -> list[tuple[float, str, str, str, str | None, str]]:
    return [
        (e["time"], e["type"], e["reason"], e["object"], e["related"], e["message"])
        for e in doc["events"]
    ]


# --------------------------------------------------------------------------- document shape


def test_json_document_shape() -> None:
    doc = run_json("-f", str(SEED_NGINX))
    assert list(doc) == TOP_KEYS
    assert doc["apiVersion"] == "kubesched.io/v1alpha1"
    assert doc["kind"] == "SimulationResult"
    assert doc["seed"] == 0
    assert isinstance(doc["simulatedSeconds"], float)
    uids = set()
    for p in doc["pods"]:
        assert list(p) == POD_KEYS
        assert UID_RE.match(p["uid"]), p["uid"]
        uids.add(p["uid"])
        assert p["phase"] in ("Pending", "Running", "Succeeded", "Failed")
        assert isinstance(p["priority"], int)
        assert isinstance(p["createdAt"], float)
        for k in ("scheduledAt", "startTime", "deletedAt"):
            assert p[k] is None or isinstance(p[k], float)
        assert p["deletionReason"] in (None, "Preempted", "Deleted", "NodeDeleted")
        assert (p["deletedAt"] is None) == (p["deletionReason"] is None)
    assert len(uids) == len(doc["pods"])
    for pre in doc["preemptions"]:
        assert list(pre) == PREEMPTION_KEYS
        assert pre["victims"] == sorted(pre["victims"])
    assert [pre["time"] for pre in doc["preemptions"]] == sorted(
        pre["time"] for pre in doc["preemptions"]
    )
    for e in doc["events"]:
        assert list(e) == EVENT_KEYS
        assert e["type"] in ("Normal", "Warning")
    assert [e["time"] for e in doc["events"]] == sorted(e["time"] for e in doc["events"])
    metrics = doc["metrics"]
    assert isinstance(metrics["scheduler_preemption_attempts_total"], int)
    assert {"count", "sum"} <= set(metrics["scheduler_preemption_victims"])
    assert {"scheduled", "unschedulable", "error"} <= set(
        metrics["scheduler_schedule_attempts_total"]
    )


def test_pods_are_sorted_by_namespace_then_name() -> None:
    doc = run_json("-f", str(SCENARIOS / "namespaces.yaml"))
    assert [(p["namespace"], p["name"]) for p in doc["pods"]] == [
        ("alpha", "m"),
        ("default", "a"),
        ("default", "z"),
        ("zeta", "a"),
        ("zeta", "b"),
    ]


def test_seed_is_reported() -> None:
    assert run_json("-f", str(BASIC), "--seed", "42")["seed"] == 42


# --------------------------------------------------------------------------- examples


def test_example_basic() -> None:
    # t=0, all priority 0, popped in input order (web-1, web-2, too-big).
    # web-1 (500m, 512Mi):  node-a LA (87+96)//2=91 BA 50+(50+95-100)//2=72 -> 163
    #                       node-b LA (93+98)//2=95 BA 50+(50+97-100)//2=73 -> 168
    #                       node-c LA (75+93)//2=84 BA 50+(50+90-100)//2=70 -> 154  => node-b
    # web-2:                node-a 91+72=163; node-b LA (87+96)//2=91,
    #                       BA 50+(50+95-97)//2=74 -> 165; node-c 154               => node-b
    # too-big (16 CPU) exceeds every node's allocatable: Insufficient cpu, unresolvable,
    # so DefaultPreemption tries no node.
    # t=5 batch-1 (3, 4Gi): node-c too small; node-a LA (25+75)//2=50, BA 50+(50+75-100)//2=62
    #                       -> 112; node-b LA (50+84)//2=67, BA 50+(50+82-95)//2=68 -> 135
    #                                                                               => node-b
    # t=65 batch-1 succeeds; its deletion from the scheduler's view (AssignedPodDelete)
    # requeues too-big, which fails again. Nothing is left to happen: the run ends at 65s.
    too_big = (
        "0/3 nodes are available: 3 Insufficient cpu. "
        "no new claims to deallocate, "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    doc = run_json("-f", str(BASIC))
    assert doc["simulatedSeconds"] == 65.0
    pods = by_name(doc)
    got = {
        k: (p["phase"], p["nodeName"], p["createdAt"], p["scheduledAt"], p["startTime"])
        for k, p in pods.items()
    }
    assert got == {
        "default/web-1": ("Running", "node-b", 0.0, 0.0, 0.0),
        "default/web-2": ("Running", "node-b", 0.0, 0.0, 0.0),
        "default/batch-1": ("Succeeded", "node-b", 5.0, 5.0, 5.0),
        "default/too-big": ("Pending", None, 0.0, None, None),
    }
    assert all(p["priority"] == 0 and p["priorityClassName"] is None for p in pods.values())
    assert all(p["deletedAt"] is None for p in pods.values())
    assert event_tuples(doc) == [
        (0.0, "Normal", "Scheduled", "default/web-1", None,
         "Successfully assigned default/web-1 to node-b"),
        (0.0, "Normal", "Scheduled", "default/web-2", None,
         "Successfully assigned default/web-2 to node-b"),
        (0.0, "Warning", "FailedScheduling", "default/too-big", None, too_big),
        (5.0, "Normal", "Scheduled", "default/batch-1", None,
         "Successfully assigned default/batch-1 to node-b"),
        (65.0, "Warning", "FailedScheduling", "default/too-big", None, too_big),
    ]  # fmt: skip
    assert doc["preemptions"] == []
    m = doc["metrics"]
    assert m["scheduler_preemption_attempts_total"] == 2
    assert m["scheduler_schedule_attempts_total"] == {
        "scheduled": 3,
        "unschedulable": 2,
        "error": 0,
    }


def test_example_taints_affinity() -> None:
    # trainer: only gpu-1 has nvidia.com/gpu, and trainer tolerates its taint => gpu-1.
    # database: nodeSelector disktype=ssd, only cpu-1                          => cpu-1.
    # cache: gpu-1 (untolerated NoSchedule) and cordoned are filtered out.
    #   cpu-1 (holds database 2/8Gi): TaintToleration 100*3, NodeAffinity 0,
    #     LA (84+85)//2=84, BA 50+(50+99-100)//2=74                        -> 458
    #   cpu-2 (zone us-east-1b, PreferNoSchedule taint): TaintToleration 0,
    #     NodeAffinity 100*2, LA (96+98)//2=97, BA 50+(50+99-100)//2=74    -> 371 => cpu-1.
    # arm-only: filters stop at the first failure per node (NodeUnschedulable,
    #   NodeName, TaintToleration, NodeAffinity, ...): gpu-1 taint, cordoned
    #   unschedulable, cpu-1 and cpu-2 affinity; all UnschedulableAndUnresolvable, so
    #   preemption tries none of the 4 nodes.
    arm_only = (
        "0/4 nodes are available: 1 node(s) had untolerated taint(s), "
        "1 node(s) were unschedulable, 2 node(s) didn't match Pod's node affinity/selector. "
        "no new claims to deallocate, "
        "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
    )
    doc = run_json("-f", str(TAINTS))
    assert doc["simulatedSeconds"] == 0.0
    placed = {k: p["nodeName"] for k, p in by_name(doc).items()}
    assert placed == {
        "default/trainer": "gpu-1",
        "default/database": "cpu-1",
        "default/cache": "cpu-1",
        "default/arm-only": None,
    }
    failed = [e for e in doc["events"] if e["reason"] == "FailedScheduling"]
    assert [(e["object"], e["message"]) for e in failed] == [("default/arm-only", arm_only)]
    assert [e["object"] for e in doc["events"] if e["reason"] == "Scheduled"] == [
        "default/trainer",
        "default/database",
        "default/cache",
    ]
    assert doc["metrics"]["scheduler_preemption_attempts_total"] == 1


# The seed-nginx example, with DefaultPreemption (upstream's default profile).
# Update these constants, not the test, if the expected story changes.
#   0s   the Deployment's pod (4 CPU) lands on test-worker (the control plane is tainted).
#   37s  nginx-a (priority 1000000, 5 CPU): test-worker has 4 CPU free (Insufficient
#        cpu, resolvable), the control plane an untolerated taint. Preemption picks
#        test-worker and the Deployment's pod as its only victim; nginx-a is nominated
#        there; its FailedScheduling carries no preemption message (PostFilter succeeded).
#        The victim gets a deletionTimestamp: the ReplicaSet creates a replacement at
#        once. The replacement (priority 0) sees victim (4) + nominated nginx-a (5) on
#        test-worker: Insufficient cpu; no pod of lower priority than 0 to preempt.
#   67s  the victim's 30s grace period ends; nginx-a binds to its nominated node; the
#        replacement is retried and fails the same way.
SEED_NGINX_END = 67.0
SEED_NGINX_NGINX_A = {
    "priority": 1000000,
    "priorityClassName": "high-priority",
    "phase": "Running",
    "nodeName": "test-worker",
    "nominatedNodeName": None,
    "createdAt": 37.0,
    "scheduledAt": 67.0,
    "startTime": 67.0,
    "deletedAt": None,
    "deletionReason": None,
}
SEED_NGINX_VICTIM = {
    "priority": 0,
    "priorityClassName": None,
    "phase": "Running",
    "nodeName": "test-worker",
    "createdAt": 0.0,
    "scheduledAt": 0.0,
    "deletedAt": 67.0,
    "deletionReason": "Preempted",
}
SEED_NGINX_REPLACEMENT = {
    "phase": "Pending",
    "nodeName": None,
    "createdAt": 37.0,
    "scheduledAt": None,
    "deletedAt": None,
}
SEED_NGINX_A_FAILED = (
    "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s)."
)
SEED_NGINX_REPLACEMENT_FAILED = (
    "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). "
    "no new claims to deallocate, "
    "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
    "1 Preemption is not helpful for scheduling."
)
SEED_NGINX_PREEMPTION_ATTEMPTS = 3  # nginx-a at 37s, the replacement at 37s and 67s
SEED_NGINX_SCHEDULE_ATTEMPTS = {"scheduled": 2, "unschedulable": 3, "error": 0}


def test_example_seed_nginx_with_preemption() -> None:
    doc = run_json("-f", str(SEED_NGINX))
    assert doc["simulatedSeconds"] == SEED_NGINX_END
    pods = by_name(doc)
    nginx_a = pods.pop("default/nginx-a")
    assert {k: nginx_a[k] for k in SEED_NGINX_NGINX_A} == SEED_NGINX_NGINX_A

    deployment_pods = sorted(pods.values(), key=lambda p: p["createdAt"])
    assert len(deployment_pods) == 2
    victim, replacement = deployment_pods
    for p in deployment_pods:
        assert re.fullmatch(f"nginx-[{ALPHANUMS}]{{1,10}}-[{ALPHANUMS}]{{5}}", p["name"])
    assert victim["name"].rsplit("-", 1)[0] == replacement["name"].rsplit("-", 1)[0]
    assert {k: victim[k] for k in SEED_NGINX_VICTIM} == SEED_NGINX_VICTIM
    assert {k: replacement[k] for k in SEED_NGINX_REPLACEMENT} == SEED_NGINX_REPLACEMENT

    v, r = f"default/{victim['name']}", f"default/{replacement['name']}"
    assert doc["preemptions"] == [
        {
            "time": 37.0,
            "preemptor": "default/nginx-a",
            "node": "test-worker",
            "victims": [v],
            "numPDBViolations": 0,
        }
    ]
    # Events of one instant may come in any order upstream (asynchronous preemption).
    assert sorted(event_tuples(doc), key=lambda e: (e[0], e[3], e[2])) == sorted(
        [
            (0.0, "Normal", "Scheduled", v, None, f"Successfully assigned {v} to test-worker"),
            (37.0, "Normal", "Preempted", v, "default/nginx-a",
             f"Preempted by pod {nginx_a['uid']} on node test-worker"),
            (37.0, "Warning", "FailedScheduling", "default/nginx-a", None, SEED_NGINX_A_FAILED),
            (37.0, "Warning", "FailedScheduling", r, None, SEED_NGINX_REPLACEMENT_FAILED),
            (67.0, "Normal", "Scheduled", "default/nginx-a", None,
             "Successfully assigned default/nginx-a to test-worker"),
            (67.0, "Warning", "FailedScheduling", r, None, SEED_NGINX_REPLACEMENT_FAILED),
        ],
        key=lambda e: (e[0], e[3], e[2]),
    )  # fmt: skip
    m = doc["metrics"]
    assert m["scheduler_preemption_attempts_total"] == SEED_NGINX_PREEMPTION_ATTEMPTS
    assert (
        m["scheduler_preemption_victims"]["count"],
        m["scheduler_preemption_victims"]["sum"],
    ) == (1, 1)
    assert m["scheduler_schedule_attempts_total"] == SEED_NGINX_SCHEDULE_ATTEMPTS


# --------------------------------------------------------------------------- exit codes


# Bad input files and the exact line each gives: test_bad_input_corpus.py.


def test_bad_input_on_stdin_names_stdin() -> None:
    result = simulate("-f", "-", stdin="kind: Pod\nmetadata: {name: [\n")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: <stdin>: malformed YAML")
    assert len(result.stderr.splitlines()) == 1


def test_missing_file_exits_2() -> None:
    result = simulate("-f", "no/such/file.yaml")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == ["error: no/such/file.yaml: no such file or directory"]


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["--until", "soon"], id="bad --until"),
        pytest.param(["-o", "xml"], id="an unknown output format"),
    ],
)
def test_bad_flag_exits_2_with_one_line(args: list[str]) -> None:
    result = simulate("-f", str(BASIC), *args)
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1, result.stderr


def test_bad_until_exits_2_and_says_why() -> None:
    result = simulate("-f", str(BASIC), "--until", "soon")
    assert result.exit_code == 2
    assert 'time: invalid duration "soon"' in result.stderr
    assert "--until" in result.stderr
    assert "Traceback" not in result.stderr


def test_negative_until_is_bad_input() -> None:
    result = simulate("-f", str(BASIC), "--until", "-5s", "-o", "json")
    assert result.exit_code == 2


def test_internal_error_exits_1(monkeypatch: pytest.MonkeyPatch) -> None:
    import kubesched.sim.runspec

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(kubesched.sim.runspec, "run_scenario", boom)
    result = simulate("-f", str(BASIC), "-o", "json")
    assert result.exit_code == 1
    assert result.stderr.startswith("internal error: RuntimeError: boom")


def run_process(*args: str) -> subprocess.CompletedProcess[str]:
    """The real command line, in a child process (real stdout/stderr and exit status)."""
    return subprocess.run(
        [sys.executable, "-m", "kubesched.cli.main", "simulate", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )


def test_process_exit_0_with_the_document_on_stdout_only() -> None:
    proc = run_process("-f", str(BASIC), "-o", "json")
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == run_json("-f", str(BASIC))
    assert proc.stderr == ""


def test_process_exit_2_without_traceback() -> None:
    path = CORPUS_BAD / "bad-quantity.yaml"
    proc = run_process("-f", str(path))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(f"error: {path}: pod default/a: ")
    assert "Traceback" not in proc.stderr


# --------------------------------------------------------------------------- inputs


def test_directory_reads_manifests_sorted_by_name_not_recursively() -> None:
    doc = run_json("-f", str(SCENARIOS / "dir"))
    assert sorted(p["name"] for p in doc["pods"]) == ["from-json", "from-yml"]
    # a-pod.json comes before b-cluster.yml: its pod is queued first.
    assert [e["object"] for e in doc["events"] if e["reason"] == "Scheduled"] == [
        "default/from-json",
        "default/from-yml",
    ]


def test_several_files_are_applied_in_order(tmp_path: Path) -> None:
    (tmp_path / "node.yaml").write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
        'status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}\n'
    )
    for name in ("one", "two"):
        (tmp_path / f"{name}.yaml").write_text(
            f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\n"
            "spec: {containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n"
        )
    node = str(tmp_path / "node.yaml")
    one, two = str(tmp_path / "one.yaml"), str(tmp_path / "two.yaml")
    # One CPU for two equal pods: the first queued gets it.
    assert by_name(run_json("-f", node, "-f", one, "-f", two))["default/one"]["nodeName"] == "n1"
    assert by_name(run_json("-f", node, "-f", two, "-f", one))["default/two"]["nodeName"] == "n1"


def test_stdin_gives_the_same_result_as_the_file() -> None:
    assert ok("-f", "-", "-o", "json", stdin=BASIC.read_text()) == ok(
        "-f", str(BASIC), "-o", "json"
    )


def test_list_is_unpacked() -> None:
    doc = run_json("-f", str(SCENARIOS / "list.yaml"))
    assert by_name(doc)["default/from-list"]["nodeName"] == "n1"


def test_ignored_kinds_are_summed_up_on_stderr() -> None:
    result = simulate("-f", str(SCENARIOS / "ignored.yaml"), "-o", "json")
    assert result.exit_code == 0
    json.loads(result.stdout)  # stdout stays a clean document
    (line,) = [ln for ln in result.stderr.splitlines() if ln.startswith("ignored")]
    assert line.startswith("ignored 3 objects: ")
    assert set(line.removeprefix("ignored 3 objects: ").split(", ")) == {"2 Service", "1 ConfigMap"}


def test_ignored_summary_line_is_the_contracts() -> None:
    result = simulate("-f", str(SCENARIOS / "ignored.yaml"), "-o", "json")
    assert "ignored 3 objects: 2 Service, 1 ConfigMap" in result.stderr.splitlines()


# --------------------------------------------------------------------------- flags


@pytest.mark.parametrize("output", ["table", "wide", "json", "yaml", "jsonl"])
@pytest.mark.parametrize("example", ALL_EXAMPLES, ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_same_seed_gives_byte_identical_output(output: str, example: Path) -> None:
    args = ["-f", str(example), "--seed", "3", "-o", output]
    assert ok(*args) == ok(*args)


def test_same_seed_gives_byte_identical_watch_output() -> None:
    args = ["-f", str(SEED_NGINX), "--seed", "5", "--watch"]
    assert ok(*args) == ok(*args)


def test_seed_changes_random_choices() -> None:
    a, b = (
        run_json("-f", str(SEED_NGINX), "--seed", "1"),
        run_json("-f", str(SEED_NGINX), "--seed", "2"),
    )
    assert {p["uid"] for p in a["pods"]} != {p["uid"] for p in b["pods"]}
    assert {p["name"] for p in a["pods"]} != {p["name"] for p in b["pods"]}


def test_until_stops_the_clock() -> None:
    # batch-1 is created at 5s and would finish at 65s.
    doc = run_json("-f", str(BASIC), "--until", "30s")
    assert doc["simulatedSeconds"] == 30.0
    batch = by_name(doc)["default/batch-1"]
    assert (batch["phase"], batch["scheduledAt"]) == ("Running", 5.0)
    assert [e["time"] for e in doc["events"] if e["object"] == "default/too-big"] == [0.0]

    early = run_json("-f", str(BASIC), "--until", "2s")
    assert early["simulatedSeconds"] == 2.0
    assert "default/batch-1" not in by_name(early)


def test_until_beyond_the_end_changes_nothing_that_happened() -> None:
    """Without --until the run ends once no retry could see a changed cluster; --until
    runs on to its time, adding only the retries upstream's queue keeps making."""
    full = run_json("-f", str(BASIC))
    late = run_json("-f", str(BASIC), "--until", "10m")
    assert late["simulatedSeconds"] == 600.0
    assert late["pods"] == full["pods"]
    end = full["simulatedSeconds"]
    assert [e for e in late["events"] if e["time"] <= end] == full["events"]
    later = [e for e in late["events"] if e["time"] > end]
    # too-big, pending since 65 s, is retried by the 5-minute leftover flush at
    # the first 30 s tick more than 5 minutes later (390 s), with the same answer.
    assert [(e["time"], e["reason"], e["object"]) for e in later] == [
        (390.0, "FailedScheduling", "default/too-big")
    ]
    assert later[0]["message"] == full["events"][-1]["message"]


def parse_seconds(text: str) -> float:
    assert text.endswith("s"), text
    return float(text[:-1])


def test_watch_prints_changes_in_time_order_before_the_table() -> None:
    out = ok("-f", str(SEED_NGINX), "--watch")
    watch, table = out.split("\n\n")
    watch_lines = watch.splitlines()
    assert watch_lines[0].split() == [
        "TIME",
        "NAMESPACE",
        "NAME",
        "PRIORITY",
        "STATUS",
        "NODE",
        "NOMINATED",
        "NODE",
        "AGE",
    ]
    rows = [ln.split() for ln in watch_lines[1:]]
    times = [parse_seconds(r[0]) for r in rows]
    assert times == sorted(times)
    assert times[0] == 0.0
    # (name, status, node, nominated) transitions the story must show
    seen = [(r[0], r[2], r[4], r[5], r[6]) for r in rows]
    assert ("37s", "nginx-a", "Pending", "<none>", "test-worker") in seen
    assert any(s[0] == "37s" and s[2] == "Terminating" for s in seen)
    assert seen[-1] == ("67s", "nginx-a", "Running", "test-worker", "<none>")
    assert table.splitlines()[0].split()[:2] == ["NAMESPACE", "NAME"]


def table_rows(out: str) -> list[list[str]]:
    return [re.split(r" {3,}", ln) for ln in out.splitlines()]


def test_table_lists_the_final_pods() -> None:
    rows = table_rows(ok("-f", str(SEED_NGINX)))
    assert rows[0] == ["NAMESPACE", "NAME", "PRIORITY", "STATUS", "NODE", "NOMINATED NODE", "AGE"]
    body = {r[1]: r for r in rows[1:]}
    assert body["nginx-a"] == [
        "default",
        "nginx-a",
        "1000000",
        "Running",
        "test-worker",
        "<none>",
        "30s",
    ]
    (replacement,) = [r for n, r in body.items() if n != "nginx-a"]
    assert replacement[2:] == ["0", "Pending", "<none>", "<none>", "30s"]  # the victim is gone


def test_wide_table_keeps_deleted_pods_with_their_reason() -> None:
    rows = table_rows(ok("-f", str(SEED_NGINX), "-o", "wide"))
    assert rows[0][-4:] == ["CREATED", "SCHEDULED", "DELETED", "REASON"]
    deleted = [r for r in rows[1:] if r[3] == "Deleted"]
    assert len(deleted) == 1
    assert deleted[0][-4:] == ["0s", "0s", "67s", "Preempted"]


def test_yaml_is_the_json_document() -> None:
    for example in ALL_EXAMPLES:
        as_yaml = yaml.safe_load(ok("-f", str(example), "-o", "yaml"))
        assert as_yaml == run_json("-f", str(example))


def jsonl(example: Path) -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in ok("-f", str(example), "-o", "jsonl").splitlines()]


def strip(line: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in line.items() if k != "type"}


def test_jsonl_streams_pods_and_preemptions() -> None:
    doc = run_json("-f", str(SEED_NGINX))
    lines = jsonl(SEED_NGINX)
    assert [strip(x) for x in lines if x["type"] == "pod"] == doc["pods"]
    assert [strip(x) for x in lines if x["type"] == "preemption"] == doc["preemptions"]


def test_jsonl_event_lines_are_typed_event() -> None:
    doc = run_json("-f", str(SEED_NGINX))
    lines = jsonl(SEED_NGINX)
    assert all(x["type"] in ("event", "preemption", "pod", "result") for x in lines)
    event_lines = [x for x in lines if x["type"] == "event"]
    assert len(event_lines) == len(doc["events"])
    # and the event's own Normal/Warning is kept under some other key
    for x, e in zip(event_lines, doc["events"], strict=True):
        assert e["type"] in {v for k, v in x.items() if k != "type"}


# --------------------------------------------------------------------------- --exact


@pytest.mark.parametrize("example", ALL_EXAMPLES, ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_exact_path_gives_the_same_document_on_examples(example: Path) -> None:
    args = ["-f", str(example), "-o", "json"]
    assert ok(*args, "--exact") == ok(*args)


@pytest.mark.parametrize("flag", [None, "--exact", "--per-node"])
def test_exact_and_per_node_flags_run_the_per_node_path(
    flag: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--per-node`` is an alias of ``--exact``: both reach ``run_scenario`` as
    ``per_node=True`` (and the document stays the same)."""
    from kubesched.sim import runspec

    seen: list[bool] = []
    real = runspec.run_scenario

    def spy(*args: Any, **kw: Any) -> Any:
        seen.append(kw["per_node"])
        return real(*args, **kw)

    monkeypatch.setattr(runspec, "run_scenario", spy)
    args = ["-f", str(ALL_EXAMPLES[0]), "-o", "json"]
    assert ok(*args, *([flag] if flag else [])) == ok(*args)
    assert seen == [flag is not None, False]


ZONES = ["z1", "z2", "z3"]
DISKS = ["ssd", "hdd"]
CLASSES = {"low": 10, "mid": 100, "high": 1000}


def generated_scenario(seed: int) -> list[dict[str, Any]]:
    """A small random cluster: labelled, tainted nodes of various sizes; pods of
    several priorities with requests, selectors, affinities, tolerations, creation
    and deletion times and run times; sometimes a Deployment."""
    rnd = random.Random(seed)
    docs: list[dict[str, Any]] = [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
        }
        for name, value in CLASSES.items()
    ]
    n_nodes = rnd.randint(2, 7)
    for i in range(n_nodes):
        spec: dict[str, Any] = {}
        taints = []
        if rnd.random() < 0.3:
            taints.append(
                {"key": "dedicated", "value": rnd.choice(["a", "b"]), "effect": "NoSchedule"}
            )
        if rnd.random() < 0.3:
            taints.append({"key": "spot", "effect": "PreferNoSchedule"})
        if taints:
            spec["taints"] = taints
        if rnd.random() < 0.1:
            spec["unschedulable"] = True
        meta: dict[str, Any] = {
            "name": f"node-{i}",
            "labels": {
                "topology.kubernetes.io/zone": rnd.choice(ZONES),
                "disktype": rnd.choice(DISKS),
            },
        }
        if rnd.random() < 0.15:
            meta["annotations"] = {"kubesched.io/delete-at": f"{rnd.randint(5, 60)}s"}
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": meta,
                "spec": spec,
                "status": {
                    "allocatable": {
                        "cpu": str(rnd.choice([2, 4, 8, 16])),
                        "memory": f"{rnd.choice([4, 8, 16, 64])}Gi",
                        "pods": str(rnd.choice([4, 10, 110])),
                    }
                },
            }
        )
    for i in range(rnd.randint(4, 18)):
        pod_spec: dict[str, Any] = {
            "containers": [
                {
                    "name": "c",
                    "resources": {
                        "requests": {
                            "cpu": f"{rnd.choice([100, 250, 500, 1000, 2000, 3000])}m",
                            "memory": f"{rnd.choice([64, 256, 1024, 4096])}Mi",
                        }
                    },
                }
            ]
        }
        if rnd.random() < 0.6:
            pod_spec["priorityClassName"] = rnd.choice(list(CLASSES))
        if rnd.random() < 0.2:
            pod_spec["nodeSelector"] = {"disktype": rnd.choice(DISKS)}
        if rnd.random() < 0.3:
            pod_spec["tolerations"] = [
                {
                    "key": "dedicated",
                    "operator": "Equal",
                    "value": rnd.choice(["a", "b"]),
                    "effect": "NoSchedule",
                }
            ]
        if rnd.random() < 0.3:
            pod_spec["affinity"] = {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": rnd.randint(1, 100),
                            "preference": {
                                "matchExpressions": [
                                    {
                                        "key": "topology.kubernetes.io/zone",
                                        "operator": "In",
                                        "values": [rnd.choice(ZONES)],
                                    }
                                ]
                            },
                        }
                    ]
                }
            }
        if rnd.random() < 0.3:
            pod_spec["terminationGracePeriodSeconds"] = rnd.choice([0, 5, 30])
        annotations = {"kubesched.io/create-at": f"{rnd.randint(0, 40)}s"}
        if rnd.random() < 0.3:
            annotations["kubesched.io/run-for"] = f"{rnd.randint(5, 90)}s"
        if rnd.random() < 0.1:
            annotations["kubesched.io/delete-at"] = f"{rnd.randint(41, 80)}s"
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"pod-{i}", "annotations": annotations},
                "spec": pod_spec,
            }
        )
    if rnd.random() < 0.5:
        docs.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web"},
                "spec": {
                    "replicas": rnd.randint(1, 4),
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {
                            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]
                        },
                    },
                },
            }
        )
    return docs


@pytest.mark.parametrize("seed", range(12))
def test_exact_path_gives_the_same_document_on_generated_scenarios(
    tmp_path: Path, seed: int
) -> None:
    path = tmp_path / "generated.yaml"
    path.write_text(yaml.safe_dump_all(generated_scenario(seed), sort_keys=False))
    args = ["-f", str(path), "-o", "json", "--seed", str(seed)]
    assert ok(*args, "--exact") == ok(*args)


def test_generated_scenarios_exercise_preemption(tmp_path: Path) -> None:
    # Guard for the property above: the generator must produce preemptions sometimes.
    total = 0
    for seed in range(12):
        path = tmp_path / f"g{seed}.yaml"
        path.write_text(yaml.safe_dump_all(generated_scenario(seed), sort_keys=False))
        total += len(run_json("-f", str(path))["preemptions"])
    assert total > 0

"""Scenarios (sim/scenario.py): manifests -> a timeline of cluster changes -> a run.

Covers the simulation annotations (create-at, delete-at, run-for) and their
errors, input order within an instant, Priority admission (PriorityClasses
first, globalDefault, spec.priority kept, missing class), Deployment and
ReplicaSet pods (names, replacement of terminating pods), and rebasing of the
absolute times of a live-cluster dump. Expected placements are derived from
the default profile's plugins, stated next to each case.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.api.errors import InputError
from kubesched.sim.controllers import ALPHANUMS
from kubesched.sim.scenario import Run, Scenario, load_scenario, run_scenario

CREATE_AT = "kubesched.io/create-at"
DELETE_AT = "kubesched.io/delete-at"
RUN_FOR = "kubesched.io/run-for"
SUFFIX = f"[{ALPHANUMS}]{{5}}"


# --------------------------------------------------------------------------- fixtures


def node(name: str, cpu: str = "4", **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, **meta},
        "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}},
    }


def pod(
    name: str, cpu: str = "1", annotations: dict[str, str] | None = None, **spec: Any
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}], **spec},
    }


def priority_class(name: str, value: int, global_default: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": global_default,
    }


def workload(
    kind: str,
    name: str,
    replicas: int,
    cpu: str = "1",
    template_annotations: dict[str, str] | None = None,
    **template_spec: Any,
) -> dict[str, Any]:
    tmeta: dict[str, Any] = {"labels": {"app": name}}
    if template_annotations:
        tmeta["annotations"] = template_annotations
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": tmeta,
                "spec": {
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
                    **template_spec,
                },
            },
        },
    }


def write(tmp_path: Path, *files: list[dict[str, Any]]) -> list[str]:
    paths = []
    for i, docs in enumerate(files):
        p = tmp_path / f"f{i}.yaml"
        p.write_text(yaml.safe_dump_all(docs, sort_keys=False))
        paths.append(str(p))
    return paths


def load(tmp_path: Path, *files: list[dict[str, Any]]) -> Scenario:
    return load_scenario(write(tmp_path, *files))


def run(tmp_path: Path, *files: list[dict[str, Any]], **kw: Any) -> Run:
    return run_scenario(load(tmp_path, *files), **kw)


def pods_by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in result["pods"]}


def events(result: dict[str, Any], reason: str) -> list[tuple[float, str]]:
    return [(e["time"], e["object"]) for e in result["events"] if e["reason"] == reason]


# --------------------------------------------------------------------------- annotations


@pytest.mark.parametrize(
    ("annotations", "field", "message"),
    [
        pytest.param(
            {CREATE_AT: "soon"},
            f'metadata.annotations["{CREATE_AT}"]',
            'time: invalid duration "soon"',
            id="create-at that is not a duration",
        ),
        pytest.param(
            {DELETE_AT: "1d"},
            f'metadata.annotations["{DELETE_AT}"]',
            'time: unknown unit "d" in duration "1d"',
            id="delete-at with a unit Go does not know",
        ),
        pytest.param(
            {RUN_FOR: "10"},
            f'metadata.annotations["{RUN_FOR}"]',
            'time: missing unit in duration "10"',
            id="run-for without a unit",
        ),
        pytest.param(
            {CREATE_AT: "-5s"},
            f'metadata.annotations["{CREATE_AT}"]',
            "must not be negative",
            id="negative create-at",
        ),
        pytest.param(
            {CREATE_AT: "10s", DELETE_AT: "5s"},
            f'metadata.annotations["{DELETE_AT}"]',
            "before create-at",
            id="delete-at before create-at",
        ),
    ],
)
def test_bad_annotation_names_file_object_and_field(
    tmp_path: Path, annotations: dict[str, str], field: str, message: str
) -> None:
    with pytest.raises(InputError) as info:
        load(tmp_path, [node("n1"), pod("p", annotations=annotations)])
    err = info.value
    assert err.source == str(tmp_path / "f0.yaml")
    assert err.obj == "pod default/p"
    assert err.field == field
    assert message in err.message
    assert "\n" not in str(err)


def test_bad_annotation_on_a_node_names_the_node(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        load(tmp_path, [node("n1", annotations={CREATE_AT: "later"})])
    assert (info.value.obj, info.value.field) == ("node n1", f'metadata.annotations["{CREATE_AT}"]')


def test_bad_run_for_in_a_template_names_the_template_field(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        load(tmp_path, [workload("Deployment", "web", 1, template_annotations={RUN_FOR: "x"})])
    assert info.value.obj == "deployment default/web"
    assert info.value.field == f'spec.template.metadata.annotations["{RUN_FOR}"]'


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        pytest.param("90s", 90.0, id="seconds"),
        pytest.param("1h30m", 5400.0, id="hours and minutes"),
        pytest.param("250ms", 0.25, id="milliseconds"),
        pytest.param("0", 0.0, id="a bare zero"),
    ],
)
def test_create_at_accepts_go_durations(tmp_path: Path, text: str, seconds: float) -> None:
    result = run(tmp_path, [node("n1"), pod("p", annotations={CREATE_AT: text})]).result()
    assert pods_by_name(result)["p"]["createdAt"] == seconds


def test_items_are_ordered_by_create_at_then_input_order(tmp_path: Path) -> None:
    scenario = load(
        tmp_path,
        [
            pod("late", annotations={CREATE_AT: "5s"}),
            pod("first"),
            node("n1", annotations={CREATE_AT: "5s"}),
            pod("second"),
        ],
    )
    assert [i.obj.name for i in scenario.items] == ["first", "second", "late", "n1"]


# --------------------------------------------------------------------------- same instant


def test_objects_of_one_instant_are_all_queued_before_the_first_cycle(tmp_path: Path) -> None:
    # The 1-CPU node fits one of the two 1-CPU pods. Both are created at 0s, the
    # low-priority one first in the input: were it scheduled as soon as it was
    # created it would take the node; since every object of the instant is queued
    # first, PrioritySort pops the high-priority pod first.
    docs = [
        node("n1", cpu="1"),
        pod("low"),
        pod("high", priorityClassName="high"),
        priority_class("high", 1000),
    ]
    result = run(tmp_path, docs).result()
    pods = pods_by_name(result)
    assert pods["high"]["nodeName"] == "n1"
    assert pods["low"]["nodeName"] is None
    assert events(result, "Scheduled") == [(0.0, "default/high")]


def test_a_later_high_priority_pod_does_not_overtake(tmp_path: Path) -> None:
    docs = [
        node("n1", cpu="1"),
        pod("low"),
        pod("high", priorityClassName="high", annotations={CREATE_AT: "1s"}),
        priority_class("high", 1000),
    ]
    pods = pods_by_name(run(tmp_path, docs).result())
    assert pods["low"]["nodeName"] == "n1"


def test_equal_priority_pods_of_one_instant_schedule_in_input_order(tmp_path: Path) -> None:
    # PrioritySort: equal priorities are served in queue-arrival order.
    names = ["c", "a", "e", "b", "d"]
    result = run(tmp_path, [*(pod(n, cpu="100m") for n in names), node("n1")]).result()
    assert [o for _, o in events(result, "Scheduled")] == [f"default/{n}" for n in names]


# --------------------------------------------------------------------------- delete-at, run-for


def test_pod_delete_at_is_graceful(tmp_path: Path) -> None:
    docs = [
        node("n1"),
        pod("p", annotations={DELETE_AT: "10s"}, terminationGracePeriodSeconds=5),
        pod("q", annotations={DELETE_AT: "10s"}),  # default grace, 30s
    ]
    pods = pods_by_name(run(tmp_path, docs).result())
    assert (pods["p"]["deletedAt"], pods["p"]["deletionReason"]) == (15.0, "Deleted")
    assert (pods["q"]["deletedAt"], pods["q"]["deletionReason"]) == (40.0, "Deleted")
    assert pods["p"]["phase"] == "Running"  # a deleted pod keeps its last phase


def test_unscheduled_pod_delete_at_is_immediate(tmp_path: Path) -> None:
    docs = [node("n1", cpu="1"), pod("big", cpu="2", annotations={DELETE_AT: "10s"})]
    result = run(tmp_path, docs).result()
    big = pods_by_name(result)["big"]
    assert (big["phase"], big["deletedAt"], big["deletionReason"]) == ("Pending", 10.0, "Deleted")
    assert result["simulatedSeconds"] == 10.0


def test_node_delete_at_takes_its_pods(tmp_path: Path) -> None:
    docs = [
        node("n1", annotations={DELETE_AT: "20s"}),
        pod("on-n1", nodeName="n1"),
        pod("pending", cpu="8"),
    ]
    pods = pods_by_name(run(tmp_path, docs).result())
    assert (pods["on-n1"]["deletedAt"], pods["on-n1"]["deletionReason"]) == (20.0, "NodeDeleted")
    assert pods["pending"]["deletedAt"] is None


def test_run_for_succeeds_and_frees_the_node(tmp_path: Path) -> None:
    # The 4-CPU node holds one 3-CPU pod at a time: "next" waits for "job".
    docs = [
        node("n1"),
        pod("job", cpu="3", annotations={RUN_FOR: "1m"}),
        pod("next", cpu="3", annotations={CREATE_AT: "5s"}),
    ]
    result = run(tmp_path, docs).result()
    pods = pods_by_name(result)
    assert (pods["job"]["phase"], pods["job"]["deletedAt"]) == ("Succeeded", None)
    assert (pods["next"]["nodeName"], pods["next"]["scheduledAt"]) == ("n1", 60.0)
    assert result["simulatedSeconds"] == 60.0


# --------------------------------------------------------------------------- priority admission


def test_priority_classes_are_registered_before_pods_whatever_the_file_order(
    tmp_path: Path,
) -> None:
    first = [node("n1"), pod("p", priorityClassName="late-class")]
    second = [priority_class("late-class", 500)]
    result = run(tmp_path, first, second).result()
    p = pods_by_name(result)["p"]
    assert (p["priority"], p["priorityClassName"]) == (500, "late-class")


def test_global_default_applies_to_pods_and_templates(tmp_path: Path) -> None:
    docs = [
        node("n1", cpu="16"),
        pod("plain", cpu="100m"),
        pod("classed", cpu="100m", priorityClassName="other"),
        workload("ReplicaSet", "rs", 1, cpu="100m"),
        priority_class("other", 7),
        priority_class("base", 50, global_default=True),
    ]
    pods = pods_by_name(run(tmp_path, docs).result())
    assert (pods["plain"]["priority"], pods["plain"]["priorityClassName"]) == (50, "base")
    assert (pods["classed"]["priority"], pods["classed"]["priorityClassName"]) == (7, "other")
    (rs_pod,) = [p for n, p in pods.items() if n.startswith("rs-")]
    assert (rs_pod["priority"], rs_pod["priorityClassName"]) == (50, "base")


def test_builtin_system_classes(tmp_path: Path) -> None:
    docs = [
        node("n1"),
        pod("a", cpu="100m", priorityClassName="system-node-critical"),
        pod("b", cpu="100m", priorityClassName="system-cluster-critical"),
    ]
    pods = pods_by_name(run(tmp_path, docs).result())
    assert pods["a"]["priority"] == 2_000_001_000
    assert pods["b"]["priority"] == 2_000_000_000


@pytest.mark.parametrize(
    "with_default",
    [
        pytest.param(False, id="no global default"),
        pytest.param(True, id="even with a global default"),
    ],
)
def test_a_pod_carrying_spec_priority_without_a_class_keeps_it(
    tmp_path: Path, with_default: bool
) -> None:
    docs = [node("n1"), pod("dumped", priority=12345)]
    if with_default:
        docs.append(priority_class("base", 50, global_default=True))
    p = pods_by_name(run(tmp_path, docs).result())["dumped"]
    assert (p["priority"], p["priorityClassName"]) == (12345, None)


@pytest.mark.parametrize(
    ("docs", "obj", "field", "message"),
    [
        pytest.param(
            [pod("p", priorityClassName="nope")],
            "pod default/p",
            "spec.priorityClassName",
            "no PriorityClass with name nope was found",
            id="a missing PriorityClass",
        ),
        pytest.param(
            [pod("p", priorityClassName="hi", priority=5), priority_class("hi", 10)],
            "pod default/p",
            "spec.priority",
            "the integer value of priority (5) must not be provided in pod spec; priority "
            "admission controller computed 10 from the given PriorityClass name",
            id="spec.priority disagreeing with its class",
        ),
        pytest.param(
            [workload("Deployment", "web", 1, priorityClassName="nope")],
            "deployment default/web",
            "spec.template.spec.priorityClassName",
            "no PriorityClass with name nope was found",
            id="a template naming a missing PriorityClass",
        ),
        pytest.param(
            [pod("p", nodeName="ghost")],
            "pod default/p",
            "spec.nodeName",
            'node "ghost" not found',
            id="a pod bound to a node that does not exist",
        ),
    ],
)
def test_admission_errors(
    tmp_path: Path, docs: list[dict[str, Any]], obj: str, field: str, message: str
) -> None:
    with pytest.raises(InputError) as info:
        load(tmp_path, [node("n1"), *docs])
    err = info.value
    assert (err.source, err.obj, err.field, err.message) == (
        str(tmp_path / "f0.yaml"),
        obj,
        field,
        message,
    )


# --------------------------------------------------------------------------- workloads


def test_deployment_pods_have_generated_names(tmp_path: Path) -> None:
    r = run(tmp_path, [node("n1", cpu="16"), workload("Deployment", "web", 3)])
    pods = list(r.cluster.pods.values())
    assert len(pods) == 3
    hashes = set()
    for p in pods:
        m = re.fullmatch(f"web-([{ALPHANUMS}]{{1,10}})-({SUFFIX})", p.name)
        assert m, p.name
        hashes.add(m.group(1))
        assert p.labels["pod-template-hash"] == m.group(1)
        assert p.labels["app"] == "web"
        ref = p.controller_ref()
        assert ref is not None
        assert (ref.kind, ref.name) == ("ReplicaSet", f"web-{m.group(1)}")
    assert len(hashes) == 1
    assert len({p.name for p in pods}) == 3


def test_replica_set_pods_have_generated_names(tmp_path: Path) -> None:
    r = run(tmp_path, [node("n1", cpu="16"), workload("ReplicaSet", "cache", 2)])
    names = sorted(p.name for p in r.cluster.pods.values())
    assert len(names) == 2
    assert all(re.fullmatch(f"cache-{SUFFIX}", n) for n in names), names


def test_generated_names_depend_on_the_seed(tmp_path: Path) -> None:
    docs = [node("n1", cpu="16"), workload("ReplicaSet", "cache", 2)]
    a = sorted(p.name for p in run(tmp_path, docs, seed=1).cluster.pods.values())
    b = sorted(p.name for p in run(tmp_path, docs, seed=1).cluster.pods.values())
    c = sorted(p.name for p in run(tmp_path, docs, seed=2).cluster.pods.values())
    assert a == b
    assert a != c


def test_replica_set_replaces_a_pod_as_soon_as_it_starts_terminating(tmp_path: Path) -> None:
    # "web" (priority 0, 3 CPU) runs on the 4-CPU node; "urgent" (priority 1000,
    # 3 CPU) arrives at 10s, fits nowhere, and preempts it. The victim keeps its CPU
    # for its 30s grace period; the ReplicaSet creates the replacement at 10s, when the
    # victim gets its deletionTimestamp, not at 40s when it disappears.
    docs = [
        node("n1"),
        workload("Deployment", "web", 1, cpu="3"),
        pod("urgent", cpu="3", priorityClassName="high", annotations={CREATE_AT: "10s"}),
        priority_class("high", 1000),
    ]
    result = run(tmp_path, docs).result()
    web = sorted(
        (p for p in result["pods"] if p["name"].startswith("web-")), key=lambda p: p["createdAt"]
    )
    assert len(web) == 2
    victim, replacement = web
    assert (victim["deletedAt"], victim["deletionReason"]) == (40.0, "Preempted")
    assert replacement["createdAt"] == 10.0
    assert replacement["nodeName"] is None
    urgent = pods_by_name(result)["urgent"]
    assert (urgent["nodeName"], urgent["scheduledAt"]) == ("n1", 40.0)


def test_template_run_for_makes_the_replica_set_churn(tmp_path: Path) -> None:
    # Each pod succeeds after 10s and is replaced at once: pods start at 0, 10, 20, 30.
    docs = [node("n1"), workload("ReplicaSet", "batch", 1, template_annotations={RUN_FOR: "10s"})]
    result = run(tmp_path, docs, until=35 * 10**9).result()
    pods = sorted(result["pods"], key=lambda p: p["createdAt"])
    assert [(p["createdAt"], p["phase"]) for p in pods] == [
        (0.0, "Succeeded"),
        (10.0, "Succeeded"),
        (20.0, "Succeeded"),
        (30.0, "Running"),
    ]
    assert result["simulatedSeconds"] == 35.0


# --------------------------------------------------------------------------- live-cluster dumps


def running(name: str, node_name: str, start: str, **meta: Any) -> dict[str, Any]:
    doc = pod(name, cpu="1", nodeName=node_name)
    doc["metadata"].update(meta)
    doc["status"] = {"phase": "Running", "startTime": start}
    return doc


def test_start_times_are_rebased_on_the_latest(tmp_path: Path) -> None:
    docs = [
        node("n1"),
        running("old", "n1", "2024-05-01T10:00:00Z"),
        running("newer", "n1", "2024-05-01T10:02:30Z"),
        pod("fresh", cpu="100m"),
    ]
    pods = pods_by_name(run(tmp_path, docs).result())
    assert pods["old"]["startTime"] == -150.0
    assert pods["newer"]["startTime"] == 0.0
    assert pods["old"]["createdAt"] == 0.0
    assert pods["old"]["scheduledAt"] == 0.0
    assert pods["fresh"]["startTime"] == 0.0


def test_terminating_input_pod_goes_at_its_deletion_timestamp(tmp_path: Path) -> None:
    docs = [
        node("n1", cpu="1"),
        running("old", "n1", "2024-05-01T10:00:00Z", deletionTimestamp="2024-05-01T10:00:20Z"),
        pod("waiting"),
    ]
    pods = pods_by_name(run(tmp_path, docs).result())
    assert pods["old"]["deletedAt"] == 20.0
    assert pods["waiting"]["scheduledAt"] == 20.0

"""PriorityClasses with a lifetime (sim/priority_classes.py), against upstream's Priority
admission plugin (plugin/pkg/admission/priority/admission.go: ``Admit`` ->
``admitPod`` -> ``getDefaultPriorityClass``; ``admitPriorityClass``) and the
PriorityClass registry (pkg/registry/scheduling/priorityclass/storage: ``Delete``).

Admission runs when each pod is created, against the classes that exist at that
moment; pods created earlier keep what they got. The cases run through
``load_scenario`` / ``run_scenario`` on manifests, the way users feed them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from kubesched.api.errors import InputError
from kubesched.sim.scenario import run_scenario
from tests.sim.test_scenario import (
    CREATE_AT,
    DELETE_AT,
    load,
    node,
    pod,
    pods_by_name,
    priority_class,
    run,
    workload,
)


def timed(obj: dict[str, Any], create: str | None = None, delete: str | None = None) -> Any:
    ann = obj["metadata"].setdefault("annotations", {})
    if create is not None:
        ann[CREATE_AT] = create
    if delete is not None:
        ann[DELETE_AT] = delete
    return obj


def admitted(tmp_path: Path, *docs: dict[str, Any]) -> dict[str, tuple[int, str | None]]:
    """name -> (priority, priorityClassName) of every pod of the run."""
    result = run(tmp_path, [node("n1", cpu="64"), *docs]).result()
    return {n: (p["priority"], p["priorityClassName"]) for n, p in pods_by_name(result).items()}


@pytest.mark.parametrize(
    ("docs", "expected"),
    [
        pytest.param(
            [
                timed(priority_class("dflt", 500, global_default=True), "10s", "30s"),
                pod("before", cpu="1"),
                timed(pod("while", cpu="1"), "10s"),
                timed(pod("after", cpu="1"), "30s"),
            ],
            {"before": (0, None), "while": (500, "dflt"), "after": (0, None)},
            id="getDefaultPriorityClass: the default applies only to pods created while it exists",
        ),
        pytest.param(
            [
                timed(priority_class("first", 100, global_default=True), None, "20s"),
                timed(priority_class("second", 200, global_default=True), "20s"),
                timed(pod("a", cpu="1"), "10s"),
                timed(pod("b", cpu="1"), "20s"),
            ],
            {"a": (100, "first"), "b": (200, "second")},
            id="getDefaultPriorityClass: after the default is deleted new pods take the next one",
        ),
        pytest.param(
            [
                timed(priority_class("gold", 500), None, "20s"),
                timed(priority_class("gold", 900), "20s"),
                timed(pod("old-gold", cpu="1", priorityClassName="gold"), "10s"),
                timed(pod("new-gold", cpu="1", priorityClassName="gold"), "20s"),
            ],
            {"old-gold": (500, "gold"), "new-gold": (900, "gold")},
            id="admitPod: a class deleted and created again with another value; "
            "earlier pods keep the old value",
        ),
        pytest.param(
            [
                timed(priority_class("gold", 500), "10s"),
                timed(pod("same-instant", cpu="1", priorityClassName="gold"), "10s"),
            ],
            {"same-instant": (500, "gold")},
            id="admitPod: a class created at the pod's instant applies (classes come first)",
        ),
        pytest.param(
            [
                pod("bound", cpu="1", nodeName="n1", priority=700, priorityClassName="gone"),
                pod("pending", cpu="1", priority=600, priorityClassName="gone"),
            ],
            {"bound": (700, "gone"), "pending": (600, "gone")},
            id="kube-scheduler reads spec.priority: dumped pods whose class is not in the input "
            "keep it",
        ),
    ],
)
def test_admission_at_each_pods_creation_time(
    tmp_path: Path, docs: list[dict[str, Any]], expected: dict[str, tuple[int, str | None]]
) -> None:
    assert admitted(tmp_path, *docs) == expected


@pytest.mark.parametrize(
    ("docs", "message"),
    [
        pytest.param(
            [
                timed(priority_class("gold", 500), "10s"),
                timed(pod("early", priorityClassName="gold"), "5s"),
            ],
            "f0.yaml: pod default/early: spec.priorityClassName: "
            "no PriorityClass with name gold was found (at 5s)",
            id="admitPod: a class created after the pod does not exist for it",
        ),
        pytest.param(
            [
                timed(priority_class("gold", 500), None, "10s"),
                timed(pod("late", priorityClassName="gold"), "10s"),
            ],
            "f0.yaml: pod default/late: spec.priorityClassName: "
            "no PriorityClass with name gold was found (at 10s)",
            id="admitPod: a class deleted at the pod's instant is gone for it",
        ),
        pytest.param(
            [priority_class("gold", 500), timed(priority_class("gold", 900), "5s")],
            'f0.yaml: priorityclass gold: priorityclasses.scheduling.k8s.io "gold" already exists',
            id="create: a second class of a name that exists",
        ),
        pytest.param(
            [
                priority_class("a", 1, global_default=True),
                timed(priority_class("b", 2, global_default=True), "5s"),
            ],
            "f0.yaml: priorityclass b: globalDefault: PriorityClass a is already marked as "
            "default. Only one default can exist",
            id="admitPriorityClass: a second default while the first exists",
        ),
        pytest.param(
            [
                priority_class("gold", 900),
                pod("bound", nodeName="n1", priority=500, priorityClassName="gold"),
                node("n1"),
            ],
            "f0.yaml: pod default/bound: spec.priority: the integer value of priority (500) "
            "must not be provided in pod spec; priority admission controller computed 900 from "
            "the given PriorityClass name",
            id="admitPod: spec.priority that disagrees with a class of the input",
        ),
        pytest.param(
            [timed(priority_class("system-node-critical", 2_000_001_000), None, "5s")],
            "f0.yaml: priorityclass system-node-critical: priorityclasses.scheduling.k8s.io "
            '"system-node-critical" is forbidden: this is a system priority class and cannot be '
            "deleted",
            id="storage Delete: a system class cannot be deleted",
        ),
        pytest.param(
            [
                timed(priority_class("gold", 500), None, "10s"),
                timed(workload("Deployment", "web", 1, priorityClassName="gold"), "10s"),
            ],
            "f0.yaml: deployment default/web: spec.template.spec.priorityClassName: "
            "no PriorityClass with name gold was found (at 10s)",
            id="admitPod: a workload created when its template's class is gone",
        ),
    ],
)
def test_what_the_api_server_refuses(
    tmp_path: Path, docs: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(InputError) as exc:
        load(tmp_path, docs)
    assert str(exc.value) == str(tmp_path / message)


def test_a_controller_pod_is_admitted_when_the_controller_creates_it(tmp_path: Path) -> None:
    """The ReplicaSet's replacement for a preempted pod is created after its class was
    deleted: the API server refuses it (FailedCreate on the ReplicaSet, upstream's
    message with the generateName), and it appears once a class of that name exists
    again, with that class's value."""
    docs = [
        node("n1", cpu="2"),
        timed(priority_class("gold", 500), None, "20s"),
        timed(priority_class("gold", 800), "50s"),
        priority_class("top", 1000),
        workload(
            "Deployment",
            "web",
            1,
            cpu="2",
            priorityClassName="gold",
            terminationGracePeriodSeconds=5,
        ),
        timed(pod("boss", cpu="2", priorityClassName="top"), "25s", "60s"),
    ]
    result = run_scenario(load(tmp_path, docs)).result()
    failed = [e for e in result["events"] if e["reason"] == "FailedCreate"]
    assert len(failed) == 1
    assert failed[0]["time"] == 25.0
    assert failed[0]["kind"] == "ReplicaSet"
    rs = failed[0]["object"]
    assert re.fullmatch(r"default/web-\w+", rs)
    assert failed[0]["message"] == (
        f'Error creating: pods "{rs.split("/")[1]}-" is forbidden: '
        "no PriorityClass with name gold was found"
    )
    web = sorted(
        (p for p in result["pods"] if p["name"].startswith("web-")), key=lambda p: p["createdAt"]
    )
    assert [(p["createdAt"], p["priority"]) for p in web] == [(0.0, 500), (50.0, 800)]
    # boss (deleted at 60 s, 30 s grace) leaves the node at 90 s; the replacement binds then.
    assert web[1]["scheduledAt"] == 90.0
    # No pod event carries a kind: the field is only for other objects.
    assert all("kind" not in e for e in result["events"] if e["reason"] != "FailedCreate")

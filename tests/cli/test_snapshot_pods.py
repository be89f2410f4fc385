"""Pods of a live-cluster snapshot through ``kubesched simulate -o json``: their phase,
their deletion in progress and their nomination (issue 13, point 3).

Upstream facts relied on:

- kube-scheduler's pod informer lists with the field selector
  ``status.phase!=Succeeded,status.phase!=Failed`` (pkg/scheduler/scheduler.go,
  ``NewInformerFactory``): a finished pod is never in its cache nor its queue, so
  it holds no resources and is never scheduled; a pod that finishes leaves the
  informer's view, which the scheduler sees as a deletion;
- a pod with ``metadata.deletionTimestamp`` is terminating: it stays on its node
  (and counts against it) until the deletion completes;
- a pending pod's ``status.nominatedNodeName`` is registered in the nominator when
  the pod enters the queue (``PriorityQueue.Add`` -> ``moveToActiveQ`` ->
  ``addNominatedPod`` with ``ModeNoop``), so pods of equal or lower priority see
  the node's resources as taken.
"""

from __future__ import annotations

import pytest

from tests.cli.test_simulate import by_name, run_json

NODE = """
apiVersion: v1
kind: Node
metadata: {{name: {name}}}
status: {{allocatable: {{cpu: "{cpu}", memory: 8Gi, pods: "110"}}}}
"""


def node(name: str = "n1", cpu: str = "1") -> str:
    return NODE.format(name=name, cpu=cpu)


def pod(
    name: str,
    cpu: str = "1",
    *,
    node_name: str = "",
    phase: str = "",
    priority: int | None = None,
    nominated: str = "",
    deletion: str = "",
    start: str = "",
    create_at: str = "",
    preempted: bool = False,
) -> str:
    meta = f"name: {name}"
    if deletion:
        meta += f", deletionTimestamp: '{deletion}'"
    if create_at:
        meta += f", annotations: {{kubesched.io/create-at: {create_at}}}"
    spec = ""
    if node_name:
        spec += f"\n  nodeName: {node_name}"
    if priority is not None:
        spec += f"\n  priority: {priority}"
    status = []
    if phase:
        status.append(f"phase: {phase}")
    if nominated:
        status.append(f"nominatedNodeName: {nominated}")
    if start:
        status.append(f"startTime: '{start}'")
    if preempted:
        status.append(
            "conditions: [{type: DisruptionTarget, status: 'True', reason: PreemptionByScheduler}]"
        )
    return f"""
apiVersion: v1
kind: Pod
metadata: {{{meta}}}
spec:{spec}
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
status: {{{", ".join(status)}}}
"""


def manifest(*docs: str) -> str:
    return "---".join(docs)


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_a_finished_pod_on_a_node_holds_nothing(phase: str) -> None:
    """The finished pod's 1 CPU is not counted: ``new`` fits the 1-CPU node at once."""
    doc = run_json(
        "-f",
        "-",
        stdin=manifest(node(), pod("done", node_name="n1", phase=phase), pod("new")),
    )
    pods = by_name(doc)
    assert pods["default/done"]["phase"] == phase
    assert pods["default/done"]["startTime"] is None
    assert (pods["default/new"]["nodeName"], pods["default/new"]["scheduledAt"]) == ("n1", 0.0)
    assert doc["preemptions"] == []


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_a_finished_unbound_pod_is_never_scheduled(phase: str) -> None:
    doc = run_json("-f", "-", stdin=manifest(node(cpu="4"), pod("done", phase=phase)))
    done = by_name(doc)["default/done"]
    assert (done["phase"], done["nodeName"], done["scheduledAt"]) == (phase, None, None)
    assert [e for e in doc["events"] if e["object"] == "default/done"] == []
    assert doc["metrics"]["scheduler_schedule_attempts_total"] == {
        "scheduled": 0,
        "unschedulable": 0,
        "error": 0,
    }


def test_a_terminating_pod_holds_its_node_until_its_deletion_timestamp() -> None:
    """``old`` (deletionTimestamp 20 s after the snapshot) keeps n1's only CPU until
    then; ``new`` fails at 0 s and binds at 20 s, when ``old`` is gone."""
    doc = run_json(
        "-f",
        "-",
        stdin=manifest(
            node(),
            pod(
                "old",
                node_name="n1",
                phase="Running",
                start="2024-05-01T10:00:00Z",
                deletion="2024-05-01T10:00:20Z",
            ),
            pod("new"),
        ),
    )
    pods = by_name(doc)
    assert (pods["default/old"]["deletedAt"], pods["default/old"]["deletionReason"]) == (
        20.0,
        "Deleted",
    )
    assert pods["default/new"]["scheduledAt"] == 20.0
    assert [e["time"] for e in doc["events"] if e["object"] == "default/new"] == [0.0, 20.0]


def test_a_dumped_nomination_holds_the_node_for_lower_priority_pods() -> None:
    """A snapshot taken mid-preemption: ``victim`` (2 of n1's 4 CPUs, marked
    ``DisruptionTarget``/``PreemptionByScheduler``) is terminating until 30 s;
    ``preemptor`` (priority 1000, 4 CPUs) waits nominated to n1. It is not eligible
    to preempt again (PodEligibleToPreemptOthers: a pod terminating by preemption
    on its nominated node), so the nomination it carries is the dumped one. ``low``
    (priority 0, 2 CPUs) arrives at 1 s: without the nomination n1's 2 free CPUs
    would take it; with it, n1 has 4 - 2 - 4 < 2 left for ``low``."""
    doc = run_json(
        "-f",
        "-",
        stdin=manifest(
            node(cpu="4"),
            pod(
                "victim",
                "2",
                node_name="n1",
                phase="Running",
                start="2024-05-01T10:00:00Z",
                deletion="2024-05-01T10:00:30Z",
                preempted=True,
            ),
            pod("preemptor", "4", priority=1000, nominated="n1"),
            pod("low", "2", priority=0, create_at="1s"),
        ),
    )
    pods = by_name(doc)
    assert doc["preemptions"] == []
    low_events = [(e["time"], e["reason"]) for e in doc["events"] if e["object"] == "default/low"]
    assert low_events[0] == (1.0, "FailedScheduling")
    assert (pods["default/preemptor"]["nodeName"], pods["default/preemptor"]["scheduledAt"]) == (
        "n1",
        30.0,
    )
    assert pods["default/low"]["nodeName"] is None

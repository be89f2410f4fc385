"""Scenarios through ``kubesched simulate -o json`` for how pods come back to the queue,
when a run may end, and PriorityClass lifetimes (the fidelity issue's four points).

Each scenario states upstream's timeline next to it; the functions named are
upstream's (pkg/scheduler/eventhandlers.go, backend/queue/scheduling_queue.go,
plugin/pkg/admission/priority). Times are simulated seconds.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.cli.test_simulate import by_name, run_json

NODE_2CPU = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
"""


def pod(name: str, cpu: str, priority: int | None = None, **annotations: str) -> str:
    ann = ", ".join(f"kubesched.io/{k.replace('_', '-')}: {v}" for k, v in annotations.items())
    prio = f"\n  priority: {priority}" if priority is not None else ""
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {{{ann}}}}}
spec:{prio}
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
"""


def manifest(*docs: str) -> str:
    return "---".join(docs)


def attempts(doc: dict[str, Any], name: str) -> list[tuple[float, str]]:
    """(time, reason) of the scheduling events of one pod."""
    return [
        (e["time"], e["reason"])
        for e in doc["events"]
        if e["object"] == f"default/{name}" and e["reason"] in ("Scheduled", "FailedScheduling")
    ]


# --------------------------------------------------------------------------- point 1

# n1 (2 CPU) runs l (2 CPU, 30 s grace). h (priority 1000) preempts l at 1 s and is
# nominated to n1; m (priority 100) fails at 5 s because h's nomination holds n1.
NOMINATED_H_DELETED = manifest(
    NODE_2CPU,
    pod("l", "2"),
    pod("h", "2", 1000, create_at="1s", delete_at="10s"),
    pod("m", "2", 100, create_at="5s"),
)


def test_deleting_a_nominated_pod_retries_lower_priority_pods_at_once() -> None:
    """deletePodFromSchedulingQueue: h is deleted at 10 s while nominated, so
    MoveAllToActiveOrBackoffQueue(AssignedPodDelete, h, getLEPriorityPreCheck(1000))
    offers m the event; NodeResourcesFit's hint queues it (the deleted pod had a
    nomination) and m, past its 1 s backoff, is retried at 10 s, not at 31 s when l
    is finally gone."""
    doc = run_json("-f", "-", stdin=NOMINATED_H_DELETED)
    assert attempts(doc, "m")[:2] == [(5.0, "FailedScheduling"), (10.0, "FailedScheduling")]
    assert by_name(doc)["default/m"]["scheduledAt"] == 31.0


# mid preempts l at 1 s and is nominated to n1; low fails at 5 s; top preempts at 10 s.
NOMINATION_CLEARED = manifest(
    NODE_2CPU,
    pod("l", "2"),
    pod("mid", "2", 100, create_at="1s"),
    pod("low", "2", 50, create_at="5s"),
    pod("top", "2", 1000, create_at="10s"),
)


@pytest.mark.parametrize(
    ("gates", "retried_at_10"),
    [
        pytest.param(
            ["--feature-gates", "SchedulerAsyncPreemption=false"],
            True,
            id="updatePodInSchedulingQueue/hasNominatedNodeNameChanged: synchronous preemption "
            "clears mid's nomination, so mid and low are retried at once",
        ),
        pytest.param(
            [],
            False,
            id="async preemption with every victim terminating keeps lower nominations: "
            "nothing moves until l is gone",
        ),
    ],
)
def test_clearing_a_nomination_retries_equal_and_lower_priority_pods(
    gates: list[str], retried_at_10: bool
) -> None:
    """At 10 s top picks n1, where l is already terminating. The synchronous path
    (prepareCandidate) still clears the nominations of lower-priority pods on n1:
    mid's nominatedNodeName changes from n1 to "", an update upstream answers with
    MoveAllToActiveOrBackoffQueue(AssignedPodDelete, oldMid, LE priority 100): mid
    and low are retried at 10 s. The async path does nothing when every victim is
    already terminating."""
    doc = run_json("-f", "-", *gates, stdin=NOMINATION_CLEARED)
    at_10 = {n for n in ("mid", "low") if (10.0, "FailedScheduling") in attempts(doc, n)}
    assert at_10 == ({"mid", "low"} if retried_at_10 else set())
    assert by_name(doc)["default/top"]["scheduledAt"] == 31.0


# --------------------------------------------------------------------------- point 2

ERROR_BACKOFF_NODE_LATER = manifest(
    pod("p", "1"),
    NODE_2CPU.replace("{name: n1}", "{name: n1, annotations: {kubesched.io/create-at: 20s}}"),
)


@pytest.mark.parametrize(
    "until", [pytest.param([], id="no --until"), pytest.param(["--until", "60s"], id="--until 60s")]
)
def test_a_pod_in_the_error_backoff_is_retried_after_a_node_appears(until: list[str]) -> None:
    """No node: 'no nodes available to schedule pods' is an error, so p waits in the
    error backoff heap (1, 2, 4, 8, 10 s; flushBackoffQCompleted moves it on the
    whole second after expiry): attempts at 0, 2, 5, 10, 19 and 30 s. The node
    created at 20 s does not move a pod out of backoffQ; the retry at 30 s binds it.
    The run must not stop at 20 s with p Pending."""
    doc = run_json("-f", "-", *until, stdin=ERROR_BACKOFF_NODE_LATER)
    assert attempts(doc, "p") == [
        (0.0, "FailedScheduling"),
        (2.0, "FailedScheduling"),
        (5.0, "FailedScheduling"),
        (10.0, "FailedScheduling"),
        (19.0, "FailedScheduling"),
        (30.0, "Scheduled"),
    ]
    assert doc["simulatedSeconds"] == (60.0 if until else 30.0)


def test_until_runs_to_its_time_retrying_on_upstreams_schedule() -> None:
    """With no node ever, --until 60s runs to 60 s and shows every retry upstream's
    error backoff makes (capped at 10 s); without --until the run stops after the
    first attempt, as every later one would see the same cluster."""
    lone = pod("p", "1")
    assert [t for t, _ in attempts(run_json("-f", "-", stdin=lone), "p")] == [0.0]
    doc = run_json("-f", "-", "--until", "60s", stdin=lone)
    assert doc["simulatedSeconds"] == 60.0
    assert [t for t, _ in attempts(doc, "p")] == [0.0, 2.0, 5.0, 10.0, 19.0, 30.0, 41.0, 52.0]


# n1 (2 CPU) runs busy (1 CPU); big (4 CPU) fits no node; other (1 CPU) binds at 30 s.
SKIPPED_CHANGE = manifest(
    NODE_2CPU,
    pod("busy", "1"),
    pod("big", "4"),
    pod("other", "1", create_at="30s"),
)


def test_a_change_a_hint_skipped_still_leads_to_the_leftover_retry() -> None:
    """big (4 CPU) fits no node: NodeResourcesFit rejects it and it waits in the
    unschedulable pool from 0 s. other binds at 30 s: an AssignedPodAdd, which no
    plugin that rejected big registered (so big stays put), but still a change of
    the cluster big last saw. flushUnschedulablePodsLeftover retries big at the
    first 30 s tick more than 5 minutes after its last attempt (330 s), and the run
    ends then, when no retry can see anything new."""
    doc = run_json("-f", "-", stdin=SKIPPED_CHANGE)
    assert attempts(doc, "big") == [(0.0, "FailedScheduling"), (330.0, "FailedScheduling")]
    assert doc["simulatedSeconds"] == 330.0


# --------------------------------------------------------------------------- point 3

CLASS_LIFETIMES = manifest(
    """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: dflt, annotations: {kubesched.io/create-at: 10s, kubesched.io/delete-at: 30s}}
value: 500
globalDefault: true
""",
    NODE_2CPU.replace('cpu: "2"', 'cpu: "8"'),
    pod("before", "1"),
    pod("while", "1", create_at="10s"),
    pod("after", "1", create_at="30s"),
    """
apiVersion: v1
kind: Pod
metadata: {name: dumped}
spec:
  nodeName: n1
  priority: 700
  priorityClassName: not-in-the-input
  containers: [{name: c, image: x}]
""",
)


def test_priority_admission_sees_the_classes_of_each_pods_creation_time() -> None:
    """admitPod / getDefaultPriorityClass at each pod's creation: the global default
    exists from 10 s to 30 s only; a dumped bound pod keeps its spec.priority though
    its class is not in the input."""
    pods = by_name(run_json("-f", "-", stdin=CLASS_LIFETIMES))
    got = {n.split("/")[1]: (p["priority"], p["priorityClassName"]) for n, p in pods.items()}
    assert got == {
        "before": (0, None),
        "while": (500, "dflt"),
        "after": (0, None),
        "dumped": (700, "not-in-the-input"),
    }

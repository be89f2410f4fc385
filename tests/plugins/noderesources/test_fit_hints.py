"""NodeResourcesFit EventsToRegister and queueing hints: upstream fit_test.go
TestEventsToRegister, Test_isSchedulableAfterPodChange, Test_isSchedulableAfterNodeChange
(v1.36: QueueingHints on, InPlacePodVerticalScaling GA)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.types import Node, Pod
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    EventObject,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interfaces import EnqueueExtensions
from kubesched.plugins.noderesources import Fit
from kubesched.plugins.noderesources.fit_hints import (
    is_schedulable_after_node_change,
    is_schedulable_after_pod_event,
)
from tests.fakes import FakeHandle
from tests.plugins.noderesources.helpers import EXT_A, EXT_B, cap_node, resource_pod

QUEUE = QueueingHint.QUEUE
SKIP = QueueingHint.SKIP


def test_events_to_register() -> None:
    """TestEventsToRegister/Register events with InPlacePodVerticalScaling and
    SchedulingQueueHint enabled (both on by default in v1.36)."""
    plugin = Fit(None, FakeHandle())
    assert isinstance(plugin, EnqueueExtensions)
    events = [e.event for e in plugin.events_to_register()]
    assert events == [
        ClusterEvent(EventResource.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
        ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
    ]
    assert all(e.hint is not None for e in plugin.events_to_register())


def pod(
    name: str, *containers: dict[str, str | int], uid: str = "", node: str = "", nominated: str = ""
) -> Pod:
    p = resource_pod(name, *containers, node=node)
    if uid:
        p.uid = uid
    p.nominated_node_name = nominated
    return p


def cpu(n: str) -> dict[str, str | int]:
    return {"cpu": n}


POD_CASES = [
    pytest.param(
        resource_pod("pod1"),
        "not-a-pod",
        None,
        QUEUE,
        id="Test_isSchedulableAfterPodChange/backoff-wrong-old-object",
    ),
    pytest.param(
        resource_pod("pod1", cpu("1")),
        resource_pod("pod2", cpu("1"), node="fake"),
        None,
        QUEUE,
        id="Test_isSchedulableAfterPodChange/queue-on-other-pod-deleted",
    ),
    pytest.param(
        resource_pod("pod1"),
        resource_pod("pod2"),
        None,
        SKIP,
        id="Test_isSchedulableAfterPodChange/skip-queue-on-unscheduled-pod-deleted",
    ),
    pytest.param(
        resource_pod("pod1"),
        pod("pod2", nominated="n1"),
        None,
        QUEUE,
        id="deleting an unbound pod nominated to a node queues",
    ),
    pytest.param(
        pod("pod1", cpu("1"), uid="uid0"),
        pod("pod2", cpu("2"), uid="uid1"),
        pod("pod2", cpu("1"), uid="uid1"),
        SKIP,
        id="Test_isSchedulableAfterPodChange/skip-queue-on-other-unscheduled-pod",
    ),
]


def scaled(target: Pod, old: Pod, new: Pod, want: QueueingHint, id_: str) -> Any:
    return pytest.param(target, old, new, want, id=f"Test_isSchedulableAfterPodChange/{id_}")


POD_CASES += [
    scaled(
        resource_pod("pod1", cpu("1")),
        resource_pod("pod2", {"memory": "2"}, node="fake"),
        resource_pod("pod2", {"memory": "1"}, node="fake"),
        SKIP,
        "skip-queue-on-other-pod-unrelated-resource-scaled-down",
    ),
    scaled(
        resource_pod("pod1", pod_level=cpu("1")),
        resource_pod("pod2", pod_level={"memory": "2"}, node="fake"),
        resource_pod("pod2", pod_level={"memory": "1"}, node="fake"),
        SKIP,
        "skip-queue-on-other-pod-unrelated-pod-level-resource-scaled-down",
    ),
    scaled(
        resource_pod("pod1", cpu("1")),
        resource_pod("pod2", cpu("2"), node="fake"),
        resource_pod("pod2", cpu("1"), node="fake"),
        QUEUE,
        "queue-on-other-pod-some-resource-scale-down",
    ),
    scaled(
        resource_pod("pod1", pod_level=cpu("1")),
        resource_pod("pod2", pod_level=cpu("2"), node="fake"),
        resource_pod("pod2", pod_level=cpu("1"), node="fake"),
        QUEUE,
        "queue-on-other-pod-some-pod-level-resource-scale-down",
    ),
    scaled(
        resource_pod("pod1", cpu("1")),
        resource_pod("pod1", cpu("2")),
        resource_pod("pod1", cpu("1")),
        QUEUE,
        "queue-on-target-pod-some-resource-scale-down",
    ),
    scaled(
        resource_pod("pod1", pod_level=cpu("1")),
        resource_pod("pod1", pod_level=cpu("2")),
        resource_pod("pod1", pod_level=cpu("1")),
        QUEUE,
        "queue-on-target-pod-some-pod-level-resource-scale-down",
    ),
    scaled(
        resource_pod("pod1", {EXT_A: 1}),
        resource_pod("pod2", {EXT_A: 2}, node="fake"),
        resource_pod("pod2", {EXT_A: 1}, node="fake"),
        QUEUE,
        "queue when an extended resource the pod requests is scaled down",
    ),
]


@pytest.mark.parametrize(("target", "old", "new", "want"), POD_CASES)
def test_is_schedulable_after_pod_event(
    target: Pod, old: EventObject, new: EventObject, want: QueueingHint
) -> None:
    assert is_schedulable_after_pod_event(target, old, new) == want


def mem_a(memory: int, a: int) -> Pod:
    return resource_pod("p", {"cpu": "0", "memory": memory, EXT_A: a})


def node(res: dict[str, str | int]) -> Node:
    return cap_node("n", res)


def node_without_pods() -> Node:
    return Node("n", allocatable={"cpu": 1000})


@pytest.mark.parametrize(
    ("target", "old", "new", "want"),
    [
        pytest.param(
            resource_pod("p"),
            None,
            "not-a-node",
            QUEUE,
            id="Test_isSchedulableAfterNodeChange/backoff-wrong-new-object",
        ),
        pytest.param(
            resource_pod("p"),
            "not-a-node",
            node({}),
            QUEUE,
            id="Test_isSchedulableAfterNodeChange/backoff-wrong-old-object",
        ),
        pytest.param(
            resource_pod("p", {"memory": 2}),
            None,
            node({"memory": "1"}),
            SKIP,
            id="Test_isSchedulableAfterNodeChange/skip-queue-on-node-add-without-sufficient-resources",
        ),
        pytest.param(
            resource_pod("p", {EXT_A: 1}),
            None,
            node({EXT_B: "1"}),
            SKIP,
            id="Test_isSchedulableAfterNodeChange/skip-queue-on-node-add-without-required-resource-type",
        ),
        pytest.param(
            mem_a(2, 1),
            None,
            node({"memory": "4", EXT_A: "2"}),
            QUEUE,
            id="Test_isSchedulableAfterNodeChange/queue-on-node-add-with-sufficient-resources",
        ),
        pytest.param(
            mem_a(2, 1),
            node({"memory": "2", EXT_A: "2"}),
            node({"memory": "2", EXT_A: "1", EXT_B: "2"}),
            SKIP,
            id="Test_isSchedulableAfterNodeChange/skip-queue-on-node-unrelated-changes",
        ),
        pytest.param(
            mem_a(2, 1),
            node({"memory": "2", EXT_A: "1"}),
            node({"memory": "2", EXT_A: "2"}),
            QUEUE,
            id="Test_isSchedulableAfterNodeChange/queue-on-pod-requested-resources-increase",
        ),
        pytest.param(
            mem_a(2, 1),
            node({"memory": "4", EXT_A: "2"}),
            node({"memory": "1", EXT_A: "2"}),
            SKIP,
            id="Test_isSchedulableAfterNodeChange/skip-queue-on-node-changes-from-suitable-to-unsuitable",
        ),
        pytest.param(
            mem_a(2, 1),
            node({"memory": "1", EXT_A: "2"}),
            node({"memory": "4", EXT_A: "2"}),
            QUEUE,
            id="Test_isSchedulableAfterNodeChange/queue-on-node-changes-from-unsuitable-to-suitable",
        ),
        pytest.param(
            resource_pod("p"),
            cap_node("n", {"pods": 1}),
            cap_node("n", {"pods": 2}),
            QUEUE,
            id="more pod capacity queues even a pod requesting nothing",
        ),
        pytest.param(
            resource_pod("p"),
            None,
            node_without_pods(),
            SKIP,
            id="a node with no pod capacity never fits",
        ),
    ],
)
def test_is_schedulable_after_node_change(
    target: Pod, old: EventObject, new: EventObject, want: QueueingHint
) -> None:
    assert is_schedulable_after_node_change(target, old, new) == want

"""Classifying pod and node updates into cluster events
(upstream framework/events_test.go: TestPodSchedulingPropertiesChange,
TestNodeSchedulingPropertiesChange)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from kubesched.api.types import Node, NodeCondition, Pod, Taint, Toleration
from kubesched.framework.events import ActionType, ClusterEvent, EventResource, match_cluster_events
from kubesched.scheduler.queue import node_update_events, pod_update_events
from tests.builders import make_node, make_pod
from tests.scheduler.queue.helpers import clone

A = ActionType
U = EventResource.UNSCHEDULED_POD
BASE = make_pod("p").label("app", "x").req(cpu="1", memory="1Gi").scheduling_gates("g").obj()


def _spec(pod: Pod, **changes: Any) -> Pod:
    return clone(pod, spec=replace(pod.spec, **changes))


@pytest.mark.parametrize(
    ("new", "want"),
    [
        pytest.param(clone(BASE, labels={"app": "y"}), [A.UPDATE_POD_LABEL], id="label changed"),
        pytest.param(
            make_pod("p")
            .label("app", "x")
            .req(cpu="500m", memory="1Gi")
            .scheduling_gates("g")
            .obj(),
            [A.UPDATE_POD_SCALE_DOWN],
            id="request reduced",
        ),
        pytest.param(
            make_pod("p").label("app", "x").req(cpu="1").scheduling_gates("g").obj(),
            [A.UPDATE_POD_SCALE_DOWN],
            id="request removed",
        ),
        pytest.param(
            make_pod("p").label("app", "x").req(cpu="2", memory="1Gi").scheduling_gates("g").obj(),
            [A.UPDATE],
            id="scale up is only the general update",
        ),
        pytest.param(
            _spec(BASE, scheduling_gates=()),
            [A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED],
            id="gates removed",
        ),
        pytest.param(
            _spec(BASE, scheduling_gates=("g", "h")), [A.UPDATE], id="gates changed but not removed"
        ),
        pytest.param(
            _spec(BASE, tolerations=(Toleration("k"),)),
            [A.UPDATE_POD_TOLERATION],
            id="toleration added",
        ),
        pytest.param(
            clone(_spec(BASE, scheduling_gates=(), tolerations=(Toleration("k"),)), labels={}),
            [A.UPDATE_POD_LABEL, A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED, A.UPDATE_POD_TOLERATION],
            id="several changes, upstream order",
        ),
        pytest.param(
            clone(BASE, nominated_node_name="n1", phase="Pending"), [A.UPDATE], id="status only"
        ),
        pytest.param(clone(BASE, annotations={"a": "b"}), [A.UPDATE], id="annotation only"),
    ],
)
def test_pod_update_events(new: Pod, want: list[ActionType]) -> None:
    assert pod_update_events(BASE, new) == [ClusterEvent(U, a) for a in want]


def test_pod_update_events_of_bound_pod_use_assigned_pod() -> None:
    old = make_pod("p").node("n1").obj()
    assert pod_update_events(old, clone(old, labels={"a": "b"})) == [
        ClusterEvent(EventResource.ASSIGNED_POD, A.UPDATE_POD_LABEL)
    ]


def test_general_update_only_matches_general_registrations() -> None:
    """The general Update is not more specific than UpdatePodLabel: only Pod/Update
    (or wider) registrations match it."""
    (ev,) = pod_update_events(BASE, clone(BASE, annotations={"a": "b"}))
    assert match_cluster_events(ClusterEvent(EventResource.POD, A.UPDATE), ev)
    assert match_cluster_events(ClusterEvent(EventResource.POD, A.ALL), ev)
    assert not match_cluster_events(ClusterEvent(EventResource.POD, A.UPDATE_POD_LABEL), ev)
    assert ev.label() == f"{U}Update"


NODE = make_node("n").capacity(cpu="4").label("z", "a").taint("k").condition("Ready", "True").obj()


def _node(**changes: object) -> Node:
    n = Node.__new__(Node)
    for slot in Node.__slots__:
        setattr(n, slot, getattr(NODE, slot))
    for k, v in changes.items():
        setattr(n, k, v)
    return n


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(NODE, _node(), [], id="no change: no event"),
        pytest.param(
            _node(unschedulable=True), NODE, [A.UPDATE_NODE_TAINT], id="becomes schedulable: taint"
        ),
        pytest.param(NODE, _node(unschedulable=True), [], id="becomes unschedulable: nothing"),
        pytest.param(
            NODE, _node(allocatable={"cpu": 8000}), [A.UPDATE_NODE_ALLOCATABLE], id="allocatable"
        ),
        pytest.param(NODE, _node(labels={"z": "b"}), [A.UPDATE_NODE_LABEL], id="labels"),
        pytest.param(NODE, _node(taints=(Taint("k2"),)), [A.UPDATE_NODE_TAINT], id="taints"),
        pytest.param(
            NODE,
            _node(conditions=(NodeCondition("Ready", "False"),)),
            [A.UPDATE_NODE_CONDITION],
            id="condition status",
        ),
        pytest.param(
            NODE,
            _node(conditions=(NodeCondition("Ready", "True", reason="new"),)),
            [],
            id="condition reason only: no event",
        ),
        pytest.param(
            NODE, _node(annotations={"a": "b"}), [A.UPDATE_NODE_ANNOTATION], id="annotations"
        ),
        pytest.param(
            _node(unschedulable=True),
            _node(taints=(), labels={}),
            [A.UPDATE_NODE_TAINT, A.UPDATE_NODE_LABEL, A.UPDATE_NODE_TAINT],
            id="unschedulable and taints both report UpdateNodeTaint, in upstream order",
        ),
    ],
)
def test_node_update_events(old: Node, new: Node, want: list[ActionType]) -> None:
    assert node_update_events(old, new) == [ClusterEvent(EventResource.NODE, a) for a in want]

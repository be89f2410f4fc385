"""PodTopologySpread events and queueing hints (upstream plugin_test.go
Test_isSchedulableAfterNodeChange, Test_isSchedulableAfterPodChange, v1.36's
fine-grained node hint of kubernetes PR #127478, and the toleration case of
``involvedInTopologySpreading``).

Upstream's test pods share the empty UID; here every pod has its own UID, so
"the pod itself" only matches the rejected pod, as in a real cluster."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kubesched.api.types import (
    LabelSelector,
    Node,
    Pod,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from kubesched.framework.events import ActionType, EventResource, QueueingHint
from tests.builders import build_table, make_node, make_pod
from tests.plugins.podtopologyspread.harness import BAR, FOO, plugin

Q = QueueingHint.QUEUE
S = QueueingHint.SKIP
DNS = "DoNotSchedule"


def target(*constraints: tuple[str, LabelSelector], taints_policy: str | None = None) -> Pod:
    cs = tuple(
        TopologySpreadConstraint(1, k, DNS, s, node_taints_policy=taints_policy)
        for k, s in constraints
    )
    pod = make_pod("p").labels(foo="").obj()
    pod.spec = replace(pod.spec, topology_spread_constraints=cs)
    return pod


def n(**labels: str) -> Node:
    return make_node("node-a").no_hostname_label().labels(labels).obj()


def other(name: str = "q", on: str = "fake-node", ns: str = "default", **labels: str) -> Pod:
    b = make_pod(name, ns).labels(**labels)
    if on:
        b.node(on)
    return b.obj()


ZONE = ("zone", FOO)
NODE = ("node", FOO)


def test_events_to_register() -> None:
    events = {
        e.event.resource: e.event.action_type for e in plugin(build_table([])).events_to_register()
    }
    assert events == {
        EventResource.POD: ActionType.ADD
        | ActionType.UPDATE_POD_LABEL
        | ActionType.UPDATE_POD_TOLERATION
        | ActionType.DELETE,
        EventResource.NODE: ActionType.ADD
        | ActionType.DELETE
        | ActionType.UPDATE_NODE_LABEL
        | ActionType.UPDATE_NODE_TAINT,
    }


def replace_taints(node: Node, taints: tuple[Taint, ...]) -> Node:
    node.taints = taints
    return node


NODE_CASES = [
    pytest.param(
        target(ZONE),
        n(zone="zone1"),
        n(zone="zone2"),
        Q,
        id="Test_isSchedulableAfterNodeChange/node updates label which matches topologyKey",
    ),
    pytest.param(
        target(ZONE),
        n(foo="bar1"),
        n(foo="bar2"),
        S,
        id="Test_isSchedulableAfterNodeChange/node that doesn't match topologySpreadConstraints "
        "updates non-related label",
    ),
    pytest.param(
        target(ZONE, NODE),
        n(zone="zone1", node="node1", foo="bar"),
        n(zone="zone1", node="node1"),
        S,
        id="Test_isSchedulableAfterNodeChange/node that match topologySpreadConstraints adds "
        "non-related label (Skip since the fine-grained hints of v1.32)",
    ),
    pytest.param(
        target(ZONE),
        None,
        n(foo="bar"),
        S,
        id="Test_isSchedulableAfterNodeChange/create node with non-related labels",
    ),
    pytest.param(
        target(ZONE),
        None,
        n(zone="zone1"),
        Q,
        id="Test_isSchedulableAfterNodeChange/create node with related labels",
    ),
    pytest.param(
        target(ZONE),
        n(foo="bar"),
        None,
        S,
        id="Test_isSchedulableAfterNodeChange/delete node with non-related labels",
    ),
    pytest.param(
        target(ZONE),
        n(zone="zone1"),
        None,
        Q,
        id="Test_isSchedulableAfterNodeChange/delete node with related labels",
    ),
    pytest.param(
        target(ZONE, NODE),
        None,
        n(zone="zone1"),
        S,
        id="Test_isSchedulableAfterNodeChange/add node with related labels that only match one "
        "of topologySpreadConstraints",
    ),
    pytest.param(
        target(ZONE, NODE),
        None,
        n(zone="zone1", node="node1"),
        Q,
        id="Test_isSchedulableAfterNodeChange/add node with related labels that match all "
        "topologySpreadConstraints",
    ),
    pytest.param(
        target(ZONE, NODE),
        n(zone="zone1"),
        n(zone="zone1"),
        S,
        id="Test_isSchedulableAfterNodeChange/update node with related labels that only match "
        "one of topologySpreadConstraints",
    ),
    pytest.param(
        target(ZONE, NODE),
        n(zone="zone1", node="node1"),
        n(zone="zone1", node="node2"),
        Q,
        id="Test_isSchedulableAfterNodeChange/update node with related labels that match all "
        "topologySpreadConstraints",
    ),
    pytest.param(
        target(ZONE, NODE),
        n(zone="zone1"),
        n(zone="zone1", node="node1"),
        Q,
        id="a node gains the last missing topology key",
    ),
    pytest.param(
        target(ZONE),
        n(zone="zone1"),
        replace_taints(n(zone="zone1"), (Taint("k", "v", "NoSchedule"),)),
        Q,
        id="a matching node's taints change",
    ),
    pytest.param(
        target(ZONE),
        n(foo="x"),
        replace_taints(n(foo="x"), (Taint("k", "v", "NoSchedule"),)),
        S,
        id="a node lacking the topology key changes taints",
    ),
]


@pytest.mark.parametrize(("pod", "old", "new", "want"), NODE_CASES)
def test_node_change_hint(pod: Pod, old: Node | None, new: Node | None, want: QueueingHint) -> None:
    assert plugin(build_table([])).is_schedulable_after_node_change(pod, old, new) == want


POD_CASES = [
    pytest.param(
        target(ZONE),
        None,
        other(foo=""),
        Q,
        id="Test_isSchedulableAfterPodChange/add pod with labels match topologySpreadConstraints "
        "selector",
    ),
    pytest.param(
        target(ZONE),
        None,
        other(on="", foo=""),
        S,
        id="Test_isSchedulableAfterPodChange/add un-scheduled pod",
    ),
    pytest.param(
        target(ZONE),
        other(on="", bar=""),
        other(on="", foo=""),
        S,
        id="Test_isSchedulableAfterPodChange/update un-scheduled pod",
    ),
    pytest.param(
        target(ZONE),
        other(on="", foo=""),
        None,
        S,
        id="Test_isSchedulableAfterPodChange/delete un-scheduled pod",
    ),
    pytest.param(
        target(ZONE),
        None,
        other(ns="fake-namespace", foo=""),
        S,
        id="Test_isSchedulableAfterPodChange/add pod with different namespace",
    ),
    pytest.param(
        target(ZONE),
        None,
        other(bar=""),
        S,
        id="Test_isSchedulableAfterPodChange/add pod with labels don't match "
        "topologySpreadConstraints selector",
    ),
    pytest.param(
        target(ZONE),
        other(foo=""),
        None,
        Q,
        id="Test_isSchedulableAfterPodChange/delete pod with labels that match "
        "topologySpreadConstraints selector",
    ),
    pytest.param(
        target(ZONE),
        other(bar=""),
        None,
        S,
        id="Test_isSchedulableAfterPodChange/delete pod with labels that don't match "
        "topologySpreadConstraints selector",
    ),
    pytest.param(
        target(ZONE),
        other(foo="", bar="bar1"),
        other(foo="", bar="bar2"),
        S,
        id="Test_isSchedulableAfterPodChange/update pod's non-related label",
    ),
    pytest.param(
        target(ZONE),
        other(),
        other(foo=""),
        Q,
        id="Test_isSchedulableAfterPodChange/add pod's label that matches "
        "topologySpreadConstraints selector",
    ),
    pytest.param(
        target(ZONE),
        other(foo=""),
        other(),
        Q,
        id="Test_isSchedulableAfterPodChange/delete pod label that matches "
        "topologySpreadConstraints selector",
    ),
    pytest.param(
        target(ZONE),
        other(foo="foo1"),
        other(foo="foo2"),
        S,
        id="Test_isSchedulableAfterPodChange/change pod's label that matches "
        "topologySpreadConstraints selector",
    ),
    pytest.param(
        target(ZONE, ("node", BAR)),
        other(foo=""),
        other(foo="", bar="bar2"),
        Q,
        id="Test_isSchedulableAfterPodChange/add pod's label that matches "
        "topologySpreadConstraints selector with multi topologySpreadConstraints",
    ),
    pytest.param(
        target(ZONE, ("node", BAR)),
        other(foo=""),
        other(foo="", baz=""),
        S,
        id="Test_isSchedulableAfterPodChange/change pod's label that doesn't match "
        "topologySpreadConstraints selector with multi topologySpreadConstraints",
    ),
    pytest.param(
        target(ZONE, ("node", BAR)),
        other(foo="", bar=""),
        other(foo="", bar="bar2"),
        S,
        id="Test_isSchedulableAfterPodChange/change pod's label that match "
        "topologySpreadConstraints selector with multi topologySpreadConstraints",
    ),
]


@pytest.mark.parametrize(("pod", "old", "new", "want"), POD_CASES)
def test_pod_change_hint(pod: Pod, old: Pod | None, new: Pod | None, want: QueueingHint) -> None:
    assert plugin(build_table([])).is_schedulable_after_pod_change(pod, old, new) == want


@pytest.mark.parametrize(
    ("policy", "want"),
    [
        pytest.param("Honor", Q, id="the rejected pod gains a toleration, nodeTaintsPolicy Honor"),
        pytest.param(None, S, id="the rejected pod gains a toleration, nodeTaintsPolicy Ignore"),
    ],
)
def test_pod_toleration_update(policy: str | None, want: QueueingHint) -> None:
    pod = target(ZONE, taints_policy=policy)
    new = pod.copy()
    new.spec = replace(pod.spec, tolerations=(Toleration("k", "Exists"),))
    assert plugin(build_table([])).is_schedulable_after_pod_change(pod, pod, new) == want


def test_hints_queue_when_constraints_cannot_be_built() -> None:
    bad = LabelSelector(match_labels={"a b": "c"})
    pod = target(("zone", bad))
    p = plugin(build_table([]))
    assert p.is_schedulable_after_node_change(pod, None, n(foo="x")) == Q
    assert p.is_schedulable_after_pod_change(pod, None, other(bar="")) == Q


def test_pod_without_hard_constraints_skips_pod_events() -> None:
    pod = make_pod("p").labels(foo="").spread(1, "zone", "ScheduleAnyway", FOO).obj()
    assert plugin(build_table([])).is_schedulable_after_pod_change(pod, None, other(foo="")) == S

"""InterPodAffinity EventsToRegister and queueing hints, re-expressing upstream
plugin_test.go (v1.36): Test_isSchedulableAfterPodChange and
Test_isSchedulableAfterNodeChange, plus the nominated-pod cases of kubernetes
PR #135392."""

from __future__ import annotations

import pytest

from kubesched.api.types import LabelSelector, Node, Pod
from kubesched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kubesched.plugins.interpodaffinity import InterPodAffinity
from kubesched.plugins.interpodaffinity.hints import (
    is_schedulable_after_node_change,
    is_schedulable_after_pod_change,
)
from tests.plugins.interpodaffinity.helpers import (
    affinity,
    fake_handle,
    pod,
    sel_exists,
    sel_in,
    term,
)

Q = QueueingHint.QUEUE
S = QueueingHint.SKIP

AFF_SEC = affinity(required=[term(sel_in("service", "securityscan", "value2"), "region")])
ANTI_SEC = affinity(anti=[term(sel_in("service", "securityscan", "value2"), "region")])
AFF_AAA_BBB = affinity(
    required=[term(sel_exists("aaa"), "hostname"), term(sel_exists("bbb"), "hostname")]
)


def target(aff: object = None, labels: dict[str, str] | None = None, uid: str = "p") -> Pod:
    return pod("p", uid=uid, labels=labels, aff=aff)  # type: ignore[arg-type]


def other(labels: dict[str, str] | None = None, node: str = "fake-node", **kw: object) -> Pod:
    return pod("other", uid="other", labels=labels, node=node, **kw)  # type: ignore[arg-type]


POD_CASES = [
    pytest.param(
        target(AFF_SEC),
        None,
        other({"service": "securityscan"}),
        Q,
        id="Test_isSchedulableAfterPodChange/add a pod which matches the pod affinity",
    ),
    pytest.param(
        target(AFF_SEC),
        None,
        other({"service": "securityscan"}, node=""),
        S,
        id="Test_isSchedulableAfterPodChange/add an un-scheduled pod",
    ),
    pytest.param(
        target(AFF_SEC),
        None,
        other({"aaa": "a"}),
        S,
        id="Test_isSchedulableAfterPodChange/add a pod which doesn't match the pod affinity",
    ),
    pytest.param(
        target(AFF_SEC),
        other({"aaa": "a"}),
        other({"service": "securityscan"}),
        Q,
        id="Test_isSchedulableAfterPodChange/update a pod from non-match to match pod affinity",
    ),
    pytest.param(
        target(AFF_SEC),
        other({"service": "value2"}),
        other({"service": "securityscan"}),
        S,
        id="Test_isSchedulableAfterPodChange/the updating pod matches target pod's "
        "affinity both before and after label changes",
    ),
    pytest.param(
        target(AFF_SEC),
        other({"aaa": "a"}, node=""),
        other({"service": "securityscan"}, node=""),
        S,
        id="Test_isSchedulableAfterPodChange/update an un-scheduled pod",
    ),
    pytest.param(
        target(AFF_SEC),
        other({"service": "securityscan"}),
        other({"aaa": "a"}),
        S,
        id="Test_isSchedulableAfterPodChange/update a pod from match to non-match the pod affinity",
    ),
    pytest.param(
        target(AFF_AAA_BBB),
        other({"aaa": "a"}),
        other({"service": "securityscan"}),
        S,
        id="Test_isSchedulableAfterPodChange/update a pod from match to non-match pod's "
        "affinity - multiple terms case",
    ),
    pytest.param(
        target(AFF_AAA_BBB),
        other({"aaa": "a"}),
        other({"aaa": "", "bbb": ""}),
        Q,
        id="Test_isSchedulableAfterPodChange/update a pod from non-match to match pod's "
        "affinity - multiple terms case",
    ),
    pytest.param(
        target(None, {"foo": "baz"}),
        target(None, {"foo": "bar"}),
        target(None, {"foo": "baz"}),
        Q,
        id="Test_isSchedulableAfterPodChange/updated pod is the target pod",
    ),
    pytest.param(
        target(ANTI_SEC),
        other({"service": "securityscan"}),
        other({"service": "aaaa"}),
        Q,
        id="Test_isSchedulableAfterPodChange/modify pod label to change it from "
        "satisfying pod anti-affinity to not satisfying anti-affinity",
    ),
    pytest.param(
        target(ANTI_SEC),
        other({"service": "bbb"}),
        other({"service": "securityscan"}),
        S,
        id="Test_isSchedulableAfterPodChange/modify pod label to change it from not "
        "satisfying pod anti-affinity to satisfying anti-affinity",
    ),
    pytest.param(
        target(ANTI_SEC),
        other({"aaa": "a"}),
        None,
        S,
        id="Test_isSchedulableAfterPodChange/delete a pod which doesn't match pod's anti-affinity",
    ),
    pytest.param(
        target(ANTI_SEC),
        other({"service": "securityscan"}),
        None,
        Q,
        id="Test_isSchedulableAfterPodChange/delete a pod which matches pod's anti-affinity",
    ),
    pytest.param(
        target(None, {"service": "securityscan"}),
        other(aff=ANTI_SEC),
        None,
        Q,
        id="Test_isSchedulableAfterPodChange/delete a pod with anti-affinity that "
        "matches pending pod",
    ),
    pytest.param(
        target(None, {"service": "foo"}),
        other(aff=ANTI_SEC),
        None,
        S,
        id="Test_isSchedulableAfterPodChange/delete a pod with anti-affinity that "
        "doesn't match pending pod",
    ),
    pytest.param(
        target(ANTI_SEC, {"service": "foo"}),
        other({"service": "foo"}, aff=ANTI_SEC),
        None,
        S,
        id="Test_isSchedulableAfterPodChange/delete a pod which doesn't match "
        "pending pod's anti-affinity and has anti-affinity that doesn't match pending pod",
    ),
    # kubernetes PR #135392: a nominated pod counts as placed.
    pytest.param(
        target(AFF_SEC),
        None,
        other({"service": "securityscan"}, node="", nominated="fake-node"),
        Q,
        id="nominated pod added that matches the pod affinity (PR #135392)",
    ),
    pytest.param(
        target(ANTI_SEC),
        other({"service": "securityscan"}, node="", nominated="n"),
        None,
        Q,
        id="nominated pod deleted that matched the anti-affinity (PR #135392)",
    ),
    # v1.36 still requires *all* anti-affinity terms to match (PR #139161 came later).
    pytest.param(
        target(affinity(anti=[term(sel_exists("a"), "zone"), term(sel_exists("b"), "zone")])),
        other({"a": ""}),
        None,
        S,
        id="deleted pod matching only one of two anti-affinity terms is skipped in v1.36",
    ),
]


@pytest.mark.parametrize(("target_pod", "old", "new", "want"), POD_CASES)
def test_is_schedulable_after_pod_change(
    target_pod: Pod, old: Pod | None, new: Pod | None, want: QueueingHint
) -> None:
    assert is_schedulable_after_pod_change(target_pod, old, new) == want


ZONE_AFF = affinity(required=[term(sel_in("service", "securityscan", "value2"), "zone")])
REGION_AFF = affinity(required=[term(sel_in("service", "securityscan", "value2"), "region")])
ZONE_ANTI = affinity(anti=[term(LabelSelector(match_labels={"another": "label"}), "zone")])


def n(**labels: str) -> Node:
    return Node("node-a", labels=labels)


NODE_CASES = [
    pytest.param(
        ZONE_AFF,
        None,
        n(zone="zone1"),
        Q,
        id="Test_isSchedulableAfterNodeChange/add a new node with matched pod affinity topologyKey",
    ),
    pytest.param(
        REGION_AFF,
        None,
        n(zone="zone1"),
        S,
        id="Test_isSchedulableAfterNodeChange/add a new node without matched topologyKey",
    ),
    pytest.param(
        ZONE_AFF,
        n(aaa="a"),
        n(aaa="b"),
        S,
        id="Test_isSchedulableAfterNodeChange/update node label but not topologyKey",
    ),
    pytest.param(
        ZONE_AFF,
        n(zone="zone1"),
        n(zone="zone1", **{"unrelated-label": "unrelated"}),
        S,
        id="Test_isSchedulableAfterNodeChange/update node label that isn't related to "
        "the pod affinity",
    ),
    pytest.param(
        ZONE_AFF,
        n(zone="zone1"),
        n(zone="zone2"),
        Q,
        id="Test_isSchedulableAfterNodeChange/update node with different affinity "
        "topologyKey value",
    ),
    pytest.param(
        ZONE_AFF,
        n(aaa="a"),
        n(zone="zone1"),
        Q,
        id="Test_isSchedulableAfterNodeChange/update node to have the affinity topology label",
    ),
    pytest.param(
        ZONE_ANTI,
        None,
        n(zone="zone1"),
        Q,
        id="Test_isSchedulableAfterNodeChange/add a new node with matched pod "
        "anti-affinity topologyKey",
    ),
    pytest.param(
        ZONE_ANTI,
        None,
        n(),
        Q,
        id="Test_isSchedulableAfterNodeChange/add a new node without matched pod "
        "anti-affinity topologyKey",
    ),
    pytest.param(
        ZONE_ANTI,
        n(zone="zone1"),
        n(zone="zone1", **{"unrelated-label": "unrelated"}),
        S,
        id="Test_isSchedulableAfterNodeChange/update node label that isn't related to "
        "the pod anti-affinity",
    ),
    pytest.param(
        ZONE_ANTI,
        n(zone="zone1"),
        n(zone="zone2"),
        Q,
        id="Test_isSchedulableAfterNodeChange/update node with different anti-affinity "
        "topologyKey value",
    ),
    pytest.param(
        ZONE_ANTI,
        n(aaa="a"),
        n(zone="zone1"),
        S,
        id="Test_isSchedulableAfterNodeChange/update node to have the anti-affinity topology label",
    ),
    pytest.param(
        ZONE_ANTI,
        n(zone="zone1"),
        n(aaa="a"),
        Q,
        id="Test_isSchedulableAfterNodeChange/update node label not to have "
        "anti-affinity topology label",
    ),
]


@pytest.mark.parametrize(("aff", "old", "new", "want"), NODE_CASES)
def test_is_schedulable_after_node_change(
    aff: object, old: Node | None, new: Node, want: QueueingHint
) -> None:
    assert is_schedulable_after_node_change(target(aff), old, new) == want


def test_events_to_register() -> None:
    events = InterPodAffinity(None, fake_handle()).events_to_register()
    assert [e.event for e in events] == [
        ClusterEvent(
            EventResource.POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
        ),
        ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
    ]
    assert events[0].hint is is_schedulable_after_pod_change
    assert events[1].hint is is_schedulable_after_node_change

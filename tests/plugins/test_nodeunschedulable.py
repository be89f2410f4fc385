"""NodeUnschedulable (upstream nodeunschedulable TestNodeUnschedulable,
TestIsSchedulableAfterNodeChange) on the exact and vector paths."""

from __future__ import annotations

import pytest

from kubesched.api.types import Node, Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.derive import Derived
from kubesched.framework.events import ActionType, EventObject, EventResource, QueueingHint
from kubesched.framework.status import SUCCESS, Status, unresolvable
from kubesched.framework.types import NodeInfo
from kubesched.plugins.nodeunschedulable import (
    ERR_REASON_UNKNOWN_CONDITION,
    ERR_REASON_UNSCHEDULABLE,
    NodeUnschedulable,
    is_schedulable_after_node_change,
    is_schedulable_after_pod_toleration_change,
)
from tests.builders import PodBuilder, build_table, make_node, make_pod
from tests.fakes import FakeHandle
from tests.plugins.fakes import check_filter

UNSCHED = unresolvable("node(s) were unschedulable")
TAINT_KEY = "node.kubernetes.io/unschedulable"


@pytest.mark.parametrize(
    ("pod", "unschedulable", "want"),
    [
        pytest.param(
            make_pod("p"),
            True,
            UNSCHED,
            id="TestNodeUnschedulable/Does not schedule pod to unschedulable node",
        ),
        pytest.param(
            make_pod("p"), False, SUCCESS, id="TestNodeUnschedulable/Schedule pod to normal node"
        ),
        pytest.param(
            make_pod("p").toleration(TAINT_KEY, effect="NoSchedule"),
            True,
            SUCCESS,
            id="TestNodeUnschedulable/Schedule pod with toleration to unschedulable node",
        ),
        pytest.param(
            make_pod("p").toleration(operator="Exists"),
            True,
            SUCCESS,
            id="a wildcard Exists toleration also tolerates cordon",
        ),
        pytest.param(
            make_pod("p").toleration(TAINT_KEY, effect="NoExecute"),
            True,
            UNSCHED,
            id="a toleration with another effect does not tolerate cordon",
        ),
    ],
)
def test_filter(pod: PodBuilder, unschedulable: bool, want: Status) -> None:
    table = build_table([make_node("n1").unschedulable(unschedulable).obj(), make_node("n2").obj()])
    got = check_filter(NodeUnschedulable(None, FakeHandle(table)), CycleState(), pod.info(), table)
    assert got == {"n1": want, "n2": SUCCESS}
    assert got["n1"].code == want.code


def test_filter_without_node_is_unknown_condition() -> None:
    got = NodeUnschedulable(None, FakeHandle()).filter(
        CycleState(), make_pod("p").info(), NodeInfo()
    )
    assert got == unresolvable(ERR_REASON_UNKNOWN_CONDITION)
    assert ERR_REASON_UNSCHEDULABLE == "node(s) were unschedulable"


def _node(unschedulable: bool, taint: bool = False) -> Node:
    b = make_node("n").unschedulable(unschedulable)
    if taint:
        b = b.taint("node.kubernetes.io/not-ready", effect="NoExecute")
    return b.obj()


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            None,
            "not-a-node",
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterNodeChange/backoff-wrong-new-object",
        ),
        pytest.param(
            None,
            _node(True),
            QueueingHint.SKIP,
            id="TestIsSchedulableAfterNodeChange/skip-queue-on-unschedulable-node-added",
        ),
        pytest.param(
            None,
            _node(False),
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterNodeChange/queue-on-schedulable-node-added",
        ),
        pytest.param(
            _node(True),
            _node(True, taint=True),
            QueueingHint.SKIP,
            id="TestIsSchedulableAfterNodeChange/skip-unrelated-change",
        ),
        pytest.param(
            _node(True),
            _node(False),
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterNodeChange/queue-on-unschedulable-field-change",
        ),
        pytest.param(
            _node(False),
            _node(False, taint=True),
            QueueingHint.SKIP,
            id="schedulable node staying schedulable is skipped",
        ),
    ],
)
def test_node_change_hint(old: EventObject, new: object, want: QueueingHint) -> None:
    pod = make_pod("p").obj()
    assert is_schedulable_after_node_change(pod, old, new) == want  # type: ignore[arg-type]


def test_pod_toleration_hint() -> None:
    pod = make_pod("p").uid("u1").obj()
    tolerating = make_pod("p").uid("u1").toleration(TAINT_KEY, effect="NoSchedule").obj()
    unrelated = make_pod("p").uid("u1").toleration("other", effect="NoSchedule").obj()
    other_pod = make_pod("q").uid("u2").toleration(TAINT_KEY, effect="NoSchedule").obj()
    hint = is_schedulable_after_pod_toleration_change
    assert hint(pod, pod, tolerating) == QueueingHint.QUEUE
    assert hint(pod, pod, unrelated) == QueueingHint.SKIP
    assert hint(pod, other_pod, other_pod) == QueueingHint.SKIP


def test_events() -> None:
    events = NodeUnschedulable(None, FakeHandle()).events_to_register()
    got = [(e.event.resource, e.event.action_type) for e in events]
    assert got == [
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        (EventResource.POD, ActionType.UPDATE_POD_TOLERATION),
    ]
    assert all(e.hint is not None for e in events)


def test_vector_all_pass_when_tolerated() -> None:
    table = build_table([make_node("n1").unschedulable().obj()])
    pod = make_pod("p").toleration(operator="Exists").info()
    v = Derived().filter(NodeUnschedulable(None, FakeHandle(table)), CycleState(), pod, table)
    assert v is not None and not v.statuses and (v.index == -1).all()
    assert isinstance(pod.pod, Pod)


def test_vector_follows_a_cordon_change() -> None:
    table = build_table([make_node("n1").obj(), make_node("n2").obj()])
    pl = NodeUnschedulable(None, FakeHandle(table))
    pod = make_pod("p").info()
    assert all(s.is_success() for s in check_filter(pl, CycleState(), pod, table).values())
    info = table.infos[table.row_of["n2"]]
    assert info is not None
    info.set_node(make_node("n2").unschedulable().obj())
    table.update_node(info)
    got = check_filter(pl, CycleState(), pod, table)
    assert got == {"n1": SUCCESS, "n2": UNSCHED}

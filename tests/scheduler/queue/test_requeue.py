"""Requeueing by queueing hints: isPodWorthRequeuing, MoveAllToActiveOrBackoffQueue,
AssignedPodAdded/Updated pre-checks and Update of unscheduled pods
(upstream scheduling_queue_test.go)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kubesched.api.types import LabelSelector, LabelSelectorRequirement, Pod, Toleration
from kubesched.framework.events import (
    ASSIGNED_POD_ADD,
    FORCE_ACTIVATE,
    UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
    EventObject,
    EventResource,
    QueueingHint,
    QueueingHintFn,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.interpodaffinity import hints as ipa_hints
from kubesched.scheduler.queue import QueuedPodInfo, QueueingStrategy
from kubesched.scheduler.queue.events import UNSCHEDULED_POD_UPDATE
from kubesched.scheduler.queue.hints import HintRegistry, is_pod_worth_requeuing
from tests.builders import make_pod
from tests.fakes import FakeClock
from tests.scheduler.queue.helpers import (
    NODE_ADD,
    PV_ADD,
    SECOND,
    Registry,
    clone,
    hint_error,
    hint_queue,
    hint_skip,
    make_queue,
    registry,
    where,
)

# --------------------------------------------------------------------- isPodWorthRequeuing

NODE_LABEL = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL)
NODE_UPDATE = ClusterEvent(EventResource.NODE, ActionType.UPDATE)


def _counting(calls: list[str], hint: QueueingHintFn) -> QueueingHintFn:
    def fn(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
        calls.append("x")
        return hint(pod, old, new)

    return fn


def _qpi(unsched: set[str], pending: set[str] | None = None) -> QueuedPodInfo:
    pod = make_pod("pod1", "ns1").uid("1").obj()
    return QueuedPodInfo(PodInfo(pod), 0, unschedulable_plugins=unsched, pending_plugins=pending)


W = ClusterEvent(EventResource.WILDCARD, ActionType.ADD)


@pytest.mark.parametrize(
    ("pinfo", "event", "new", "reg", "want", "want_calls"),
    [
        pytest.param(
            _qpi({"fooPlugin1"}),
            NODE_ADD,
            None,
            {"fooPlugin1": [(ASSIGNED_POD_ADD, hint_queue)]},
            QueueingStrategy.SKIP,
            0,
            id=(
                "Test_isPodWorthRequeuing/"
                "return Skip when no queueing hint function is registered for the event"
            ),
        ),
        pytest.param(
            _qpi({"fooPlugin1"}),
            NODE_ADD,
            None,
            {"fooPlugin1": [(NODE_ADD, hint_error)]},
            QueueingStrategy.AFTER_BACKOFF,
            1,
            id="Test_isPodWorthRequeuing/Treat the event as Queue when QueueHintFn returns error",
        ),
        pytest.param(
            _qpi({"fooPlugin1"}),
            UNSCHEDULABLE_TIMEOUT,
            None,
            {},
            QueueingStrategy.AFTER_BACKOFF,
            0,
            id="Test_isPodWorthRequeuing/return Queue when the event is wildcard",
        ),
        pytest.param(
            _qpi({"fooPlugin1"}),
            FORCE_ACTIVATE,
            make_pod("pod1", "ns1").uid("1").obj(),
            {},
            QueueingStrategy.AFTER_BACKOFF,
            0,
            id="Test_isPodWorthRequeuing/wildcard targets the pod to be requeued",
        ),
        pytest.param(
            _qpi({"fooPlugin1"}),
            FORCE_ACTIVATE,
            make_pod("pod-different", "ns2").uid("2").obj(),
            {},
            QueueingStrategy.SKIP,
            0,
            id="Test_isPodWorthRequeuing/return Skip when the wildcard targets a different pod",
        ),
        pytest.param(
            _qpi({"fooPlugin1", "fooPlugin3"}, {"fooPlugin2"}),
            NODE_ADD,
            None,
            {
                "fooPlugin1": [(NODE_ADD, hint_queue)],
                "fooPlugin2": [(NODE_ADD, hint_queue)],
                "fooPlugin3": [(NODE_ADD, hint_queue)],
                "fooPlugin4": [(NODE_ADD, hint_error)],
            },
            QueueingStrategy.IMMEDIATELY,
            2,
            id=(
                "Test_isPodWorthRequeuing/"
                "interprets Queue from the Pending plugin as queueImmediately"
            ),
        ),
        pytest.param(
            _qpi({"fooPlugin1", "fooPlugin2"}),
            NODE_ADD,
            None,
            {"fooPlugin1": [(NODE_ADD, hint_skip)], "fooPlugin2": [(NODE_ADD, hint_queue)]},
            QueueingStrategy.AFTER_BACKOFF,
            2,
            id=(
                "Test_isPodWorthRequeuing/"
                "interprets Queue from the Unschedulable plugin as queueAfterBackoff"
            ),
        ),
        pytest.param(
            _qpi({"fooPlugin1", "fooPlugin2"}),
            NODE_ADD,
            None,
            {
                "fooPlugin1": [(NODE_ADD, hint_skip)],
                "fooPlugin2": [(NODE_ADD, hint_skip)],
                "fooPlugin3": [(NODE_ADD, hint_queue)],
            },
            QueueingStrategy.SKIP,
            2,
            id="Test_isPodWorthRequeuing/hint of a plugin that did not reject the pod is ignored",
        ),
        pytest.param(
            _qpi({"fooPlugin1", "fooPlugin2"}),
            NODE_LABEL,
            None,
            {
                "fooPlugin1": [
                    (NODE_LABEL, hint_queue),
                    (NODE_UPDATE, hint_queue),
                    (NODE_ADD, hint_queue),
                ],
                "fooPlugin2": [(NODE_LABEL, hint_queue)],
            },
            QueueingStrategy.AFTER_BACKOFF,
            1,
            id="Test_isPodWorthRequeuing/specific Node update event also runs NodeUpdate hints",
        ),
        pytest.param(
            _qpi({"fooPlugin1"}),
            NODE_ADD,
            None,
            {"fooPlugin1": [(W, hint_queue)]},
            QueueingStrategy.AFTER_BACKOFF,
            1,
            id=(
                "Test_isPodWorthRequeuing/"
                "If event with '*' Resource, hint for specified Resource is executed"
            ),
        ),
        pytest.param(
            _qpi({"fooPlugin1"}),
            ClusterEvent(
                EventResource.NODE, ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
            ),
            None,
            {"fooPlugin1": [(ClusterEvent(EventResource.WILDCARD, ActionType.ALL), hint_queue)]},
            QueueingStrategy.AFTER_BACKOFF,
            1,
            id="Test_isPodWorthRequeuing/registered wildcard runs for all kinds of events",
        ),
        pytest.param(
            _qpi(set()),
            NODE_ADD,
            None,
            {"fooPlugin1": [(NODE_ADD, hint_skip)]},
            QueueingStrategy.AFTER_BACKOFF,
            0,
            id="no rejector plugin (an error) is always worth requeuing",
        ),
    ],
)
def test_is_pod_worth_requeuing(
    pinfo: QueuedPodInfo,
    event: ClusterEvent,
    new: Pod | None,
    reg: Registry,
    want: QueueingStrategy,
    want_calls: int,
) -> None:
    calls: list[str] = []
    counted = {
        plugin: [(e, _counting(calls, h or hint_queue)) for e, h in regs]
        for plugin, regs in reg.items()
    }
    hints = HintRegistry(registry(counted))
    assert is_pod_worth_requeuing(hints, pinfo, event, None, new) == want
    assert len(calls) == want_calls


def test_registry_adds_node_taint_for_node_add_plugins() -> None:
    """buildQueueingHintMap: NodeAdd without UpdateNodeTaint registers UpdateNodeTaint (Queue)."""
    hints = HintRegistry(registry({"p": [(NODE_ADD, hint_skip)], "q": [], "r": [(NODE_ADD, None)]}))
    taint = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT)
    assert hints.events_of("p") == (NODE_ADD, taint)
    assert hints.events_of("q") == ()  # empty registrations are left out
    pinfo = _qpi({"p"})
    assert is_pod_worth_requeuing(hints, pinfo, taint, None, None) == QueueingStrategy.AFTER_BACKOFF
    assert is_pod_worth_requeuing(hints, pinfo, NODE_ADD, None, None) == QueueingStrategy.SKIP
    # A missing hint function means Queue.
    assert (
        is_pod_worth_requeuing(hints, _qpi({"r"}), NODE_ADD, None, None)
        == QueueingStrategy.AFTER_BACKOFF
    )


# --------------------------------------------------- MoveAllToActiveOrBackoffQueue with hints

SCHED_GATES = "SchedulingGates"


def _gates_and_foo(pod: Pod) -> Status:
    """PreEnqueue of SchedulingGates plus the test plugin "foo" (admits label key foo)."""
    if pod.spec.scheduling_gates:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "gated", plugin=SCHED_GATES)
    if "foo" not in pod.labels:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "no", plugin="foo")
    return Status(Code.SUCCESS)


def _gated(plugin: str, events: tuple[ClusterEvent, ...]) -> QueuedPodInfo:
    p = QueuedPodInfo(PodInfo(make_pod("pod1", "ns1").uid("1").label("foo", "bar").obj()))
    p.gating_plugin = plugin
    p.unschedulable_plugins = {plugin}
    p.gating_plugin_events = events
    return p


def _plain(unsched: set[str] | None = None, pending: set[str] | None = None) -> QueuedPodInfo:
    pod = make_pod("pod1", "ns1").uid("1").label("foo", "bar").obj()
    return QueuedPodInfo(PodInfo(pod), unschedulable_plugins=unsched, pending_plugins=pending)


@pytest.mark.parametrize(
    ("pinfo", "hint", "duration", "want"),
    [
        pytest.param(
            _plain(pending={"foo"}),
            hint_queue,
            0,
            "active",
            id="MoveAllWithQueueingHint/Queue queues pod to activeQ (Pending plugin)",
        ),
        pytest.param(
            _plain({"foo"}),
            hint_queue,
            0,
            "backoff",
            id="MoveAllWithQueueingHint/Queue queues pod to backoffQ if Pod is backing off",
        ),
        pytest.param(
            _plain({"foo"}),
            hint_queue,
            SECOND,
            "backoff",
            id="expiry equal to the current window still backs off",
        ),
        pytest.param(
            _plain({"foo"}),
            hint_queue,
            2 * SECOND,
            "active",
            id="MoveAllWithQueueingHint/Queue queues pod to activeQ if Pod is not backing off",
        ),
        pytest.param(
            _plain({"foo"}),
            hint_skip,
            0,
            "unschedulable",
            id="MoveAllWithQueueingHint/Skip queues pod to unschedulablePods",
        ),
        pytest.param(
            _gated(SCHED_GATES, (UNSCHEDULED_POD_UPDATE,)),
            hint_error,
            0,
            "unschedulable",
            id="MoveAllWithQueueingHint/hint not called when gating plugin is not interested",
        ),
        pytest.param(
            _gated("foo", (NODE_ADD,)),
            hint_queue,
            0,
            "backoff",
            id="MoveAllWithQueueingHint/hint called when gating plugin is interested",
        ),
    ],
)
def test_move_all_with_queueing_hint(
    pinfo: QueuedPodInfo, hint: QueueingHintFn, duration: int, want: str
) -> None:
    clock = FakeClock(1_735_689_600 * SECOND)  # aligned, as upstream's 2025-01-01
    q, _ = make_queue(
        clock,
        {"foo": [(NODE_ADD, hint)], SCHED_GATES: [(UNSCHEDULED_POD_UPDATE, hint_queue)]},
        pre_enqueue=_gates_and_foo,
    )
    q.add(pinfo.pod)
    popped = q.pop()
    assert popped is not None and popped.pod is pinfo.pod
    q.add_unschedulable_if_not_present(pinfo, q.scheduling_cycle)
    clock.step(duration)
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert where(q, pinfo.pod) == want


def test_move_all_scenario() -> None:
    """TestPriorityQueue_MoveAllToActiveOrBackoffQueue, step by step."""
    q, clock = make_queue(reg={"fooPlugin": [(NODE_ADD, hint_queue)]})
    up = make_pod("up", "ns1").nominated("node1").obj()
    hpp = make_pod("hpp", "ns1").priority(1000).obj()
    hpp1 = make_pod("hpp1", "ns1").priority(1000).obj()
    hpp2 = make_pod("hpp2", "ns1").priority(1000).obj()
    mpp = make_pod("mpp", "ns2").priority(500).nominated("node1").obj()

    def in_flight() -> list[str]:
        return sorted(p.name for p in q.in_flight_pods())

    for p in (up, hpp):
        q.add(p)
        assert q.pop() is not None
    assert in_flight() == ["hpp", "up"]
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(up, "fooPlugin"), 0)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(hpp, "fooPlugin"), 0)
    assert in_flight() == []
    q.add(hpp1)
    assert q.pop() is not None
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(hpp1), 0)  # error -> backoffQ
    q.add(hpp2)
    assert q.pop() is not None
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(hpp2, "barPlugin"), 0)
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    q.add(mpp)
    assert q.pending_pods()["active"] == 1
    got = q.pop()
    assert got is not None and got.pod is mpp
    assert q.pending_pods()["backoff"] == 3  # hpp2 is not moved
    clock.step(10 * SECOND)
    assert len(q._backoff.pop_all_completed()) == 3
    assert in_flight() == ["mpp"]
    for p in (up, hpp, hpp1):
        q.add(p)
        assert q.pop() is not None
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(up, "fooPlugin"), 0)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(hpp, "fooPlugin"), 0)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(hpp1), 0)
    assert in_flight() == ["mpp"]
    q.add(mpp)
    assert [where(q, p) for p in (up, hpp, hpp2, hpp1, mpp)] == [
        "unschedulable",
        "unschedulable",
        "unschedulable",
        "backoff",
        "active",
    ]
    clock.step(10 * SECOND)
    q.flush_backoff_q_completed()
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert q.pending_pods() == {"active": 4, "backoff": 0, "unschedulable": 1, "gated": 0}
    assert in_flight() == ["mpp"]


@pytest.mark.parametrize(
    ("event", "check", "want"),
    [
        pytest.param(
            UNSCHEDULABLE_TIMEOUT, None, {"p0", "p1", "p2", "p3", "p4"}, id="nil PreEnqueueCheck"
        ),
        pytest.param(
            UNSCHEDULABLE_TIMEOUT,
            lambda p: p.priority >= 2,
            {"p2", "p3", "p4"},
            id="TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks/priority greater than 2",
        ),
        pytest.param(
            UNSCHEDULABLE_TIMEOUT,
            lambda p: p.priority % 2 == 0 and p.priority >= 2,
            {"p2", "p4"},
            id="TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks/even and greater than 2",
        ),
        pytest.param(
            PV_ADD,
            lambda p: pytest.fail("preCheck shouldn't be called"),
            set(),
            id=(
                "TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks/"
                "preCheck not called for uninteresting event"
            ),
        ),
    ],
)
def test_move_all_pre_enqueue_checks(event: ClusterEvent, check: object, want: set[str]) -> None:
    q, clock = make_queue(FakeClock(2000 * SECOND))
    for i in range(5):
        q.add(make_pod(f"p{i}").priority(i).obj())
        p = q.pop()
        assert p is not None
        p.unschedulable_plugins = {"plugin"}
        q.add_unschedulable_if_not_present(p, q.scheduling_cycle)
    q.move_all_to_active_or_backoff_queue(event, None, None, check)  # type: ignore[arg-type]
    clock.step(20 * SECOND)
    assert {p.pod.name for p in q._backoff.pop_all_completed()} == want


# ------------------------------------------------------------ AssignedPodAdded / Updated
# With queueing hints on (GA and locked in v1.36) upstream's addAssignedPodToCache and
# updateAssignedPodInCache call MoveAllToActiveOrBackoffQueue for the whole pool: the
# rejectors' hints alone decide (no cross-topology pre-check, which is the hints-off
# path). The real InterPodAffinity hint stands in for a plugin that inspects the pod.

_SERVICE_EXISTS = LabelSelector(match_expressions=(LabelSelectorRequirement("service", "Exists"),))
AFP = make_pod("afp", "ns1").uid("afp").pod_affinity("region", _SERVICE_EXISTS).obj()
ANTI = make_pod("anti", "ns1").uid("anti").pod_affinity("region", _SERVICE_EXISTS, anti=True).obj()
PLAIN = make_pod("afp", "ns1").uid("afp").obj()
MATCHING = make_pod("lbp", "ns1").label("service", "securityscan").node("node1").obj()
UNRELATED = make_pod("lbp", "unrelated").label("unrelated", "unrelated").node("node1").obj()
IPA = "InterPodAffinity"

ASSIGNED_POD_CASES = [
    pytest.param(
        AFP, IPA, MATCHING, True, id="InterPodAffinity hint: a bound pod matching the affinity"
    ),
    pytest.param(AFP, IPA, UNRELATED, False, id="InterPodAffinity hint: an unrelated bound pod"),
    pytest.param(
        PLAIN,
        "queuePlugin",
        UNRELATED,
        True,
        id="no pre-check: a rejector whose hint says Queue moves the pod, whatever the pod",
    ),
    pytest.param(PLAIN, "skipPlugin", MATCHING, False, id="a rejector whose hint says Skip"),
    pytest.param(PLAIN, "deafPlugin", MATCHING, False, id="a rejector that registered nothing"),
]


def _assigned_registry(event: ClusterEvent) -> Registry:
    return {
        IPA: [(event, ipa_hints.is_schedulable_after_pod_change)],
        "queuePlugin": [(event, hint_queue)],
        "skipPlugin": [(event, hint_skip)],
        "deafPlugin": [(NODE_ADD, hint_queue)],
    }


def _rejected(q_reg: Registry, pod: Pod, plugin: str) -> tuple[object, FakeClock]:
    q, clock = make_queue(reg=q_reg)
    q.add(pod)
    assert q.pop() is not None
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(pod, plugin), q.scheduling_cycle)
    clock.step(2 * SECOND)  # backoff done
    return q, clock


@pytest.mark.parametrize(("unsched", "plugin", "assigned", "requeue"), ASSIGNED_POD_CASES)
def test_assigned_pod_added(unsched: Pod, plugin: str, assigned: Pod, requeue: bool) -> None:
    """addAssignedPodToCache: MoveAllToActiveOrBackoffQueue(AssignedPodAdd, nil, pod)."""
    q, _ = _rejected(_assigned_registry(ASSIGNED_POD_ADD), unsched, plugin)
    q.assigned_pod_added(assigned)  # type: ignore[attr-defined]
    assert (where(q, unsched) == "active") is requeue  # type: ignore[arg-type]


POD_LABEL = ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL)
ASSIGNED_POD_LABEL = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_LABEL)


@pytest.mark.parametrize(
    ("unsched", "plugin", "old", "new", "requeue"),
    [
        *[
            pytest.param(
                c.values[0],
                c.values[1],
                clone(c.values[2], labels={}),  # type: ignore[arg-type]
                c.values[2],
                c.values[3],
                id=f"updateAssignedPodInCache/{c.id}",
            )
            for c in ASSIGNED_POD_CASES
        ],
        pytest.param(
            ANTI,
            IPA,
            MATCHING,
            clone(MATCHING, labels={"other": "x"}),
            True,
            id="updateAssignedPodInCache/InterPodAffinity hint: a bound pod that stops "
            "matching the anti-affinity (no affinity term: the hints-off pre-check dropped it)",
        ),
    ],
)
def test_assigned_pod_updated(unsched: Pod, plugin: str, old: Pod, new: Pod, requeue: bool) -> None:
    """updateAssignedPodInCache: MoveAllToActiveOrBackoffQueue(evt, old, new) per event."""
    q, _ = _rejected(_assigned_registry(POD_LABEL), unsched, plugin)
    q.assigned_pod_updated(old, new, ASSIGNED_POD_LABEL)  # type: ignore[attr-defined]
    assert (where(q, unsched) == "active") is requeue  # type: ignore[arg-type]


def test_scale_down_of_a_bound_pod_reaches_the_pod_asking_that_resource() -> None:
    """TestPriorityQueue_AssignedPodUpdated/resource fit requeued by assigned pod scale down."""
    rp = make_pod("rp", "ns1").uid("rp").req(cpu="1").obj()
    reg: Registry = {"NodeResourcesFit": [(POD_SCALE_DOWN, hint_queue)]}
    q, _ = _rejected(reg, rp, "NodeResourcesFit")
    bound = make_pod("lbp", "ns2").node("node1").obj()
    q.assigned_pod_updated(None, bound, ASSIGNED_SCALE_DOWN)  # type: ignore[attr-defined]
    assert where(q, rp) == "active"


POD_SCALE_DOWN = ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCALE_DOWN)
ASSIGNED_SCALE_DOWN = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN)


# ------------------------------------------------------------------------ Update

QUEUE_PLUGIN, SKIP_PLUGIN = "queuePlugin", "skipPlugin"
UPDATE_REG: Registry = {
    QUEUE_PLUGIN: [(UNSCHEDULED_POD_UPDATE, hint_queue)],
    SKIP_PLUGIN: [(UNSCHEDULED_POD_UPDATE, hint_skip)],
}
MED = make_pod("mpp", "ns2").uid("mppns2").priority(500).nominated("node1").obj()
HIGH = make_pod("hpp", "ns1").uid("hppns1").priority(1000).obj()


def _annotated(pod: Pod, value: str) -> Pod:
    return clone(pod, annotations={**pod.annotations, "foo": value})


def _setup_in_pool(plugin: str, failed: bool, step: int) -> object:
    def prepare(q: object, clock: FakeClock) -> tuple[Pod, Pod]:
        pinfo = q.new_queued_pod_info(MED, plugin)  # type: ignore[attr-defined]
        if failed:
            pinfo.unschedulable_count += 1
        q._unsched.add_or_update(pinfo, "UnschedulablePodAdd")  # type: ignore[attr-defined]
        clock.step(step)
        return MED, _annotated(MED, "test")

    return prepare


def _not_in_queue(q: object, clock: FakeClock) -> tuple[Pod, Pod]:
    return MED, _annotated(MED, "test")


def _add_nomination(q: object, clock: FakeClock) -> tuple[Pod, Pod]:
    return HIGH, clone(HIGH, nominated_node_name="node1")


def _already_active(q: object, clock: FakeClock) -> tuple[Pod, Pod]:
    q.add(HIGH)  # type: ignore[attr-defined]
    return HIGH, HIGH


def _in_backoff(q: object, clock: FakeClock) -> tuple[Pod, Pod]:
    pinfo = q.new_queued_pod_info(MED)  # type: ignore[attr-defined]
    q._backoff.add(pinfo, "UnschedulablePodAdd")  # type: ignore[attr-defined]
    return MED, MED


def _in_flight(q: object, clock: FakeClock) -> tuple[Pod, Pod]:
    q.add(MED)  # type: ignore[attr-defined]
    assert q.pop() is not None  # type: ignore[attr-defined]
    return MED, _annotated(MED, "bar")


@pytest.mark.parametrize(
    ("prepare", "want", "nominated"),
    [
        pytest.param(
            _not_in_queue,
            "active",
            False,
            id="TestPriorityQueue_Update/pod that didn't exist in the queue",
        ),
        pytest.param(
            _add_nomination, "active", True, id="TestPriorityQueue_Update/add a nominatedNodeName"
        ),
        pytest.param(
            _already_active, "active", False, id="TestPriorityQueue_Update/already in activeQ stays"
        ),
        pytest.param(
            _in_backoff,
            "backoff",
            False,
            id="TestPriorityQueue_Update/in backoffQ is updated there",
        ),
        pytest.param(
            _setup_in_pool(QUEUE_PLUGIN, True, 0),
            "backoff",
            False,
            id="TestPriorityQueue_Update/in unschedulablePods, still backing off: backoffQ",
        ),
        pytest.param(
            _setup_in_pool(QUEUE_PLUGIN, True, 10 * SECOND),
            "active",
            False,
            id="TestPriorityQueue_Update/in unschedulablePods, backoff expired: activeQ",
        ),
        pytest.param(
            _setup_in_pool(SKIP_PLUGIN, False, 0),
            "unschedulable",
            False,
            id="TestPriorityQueue_Update/in unschedulablePods, hint QueueSkip: stays",
        ),
        pytest.param(_in_flight, "none", False, id="TestPriorityQueue_Update/in flight: no queue"),
    ],
)
def test_update(prepare: object, want: str, nominated: bool) -> None:
    q, clock = make_queue(reg=UPDATE_REG)
    old, new = prepare(q, clock)  # type: ignore[operator]
    q.update(old, new)
    assert where(q, new) == want
    if want != "none":
        stored = q.get_pod(new.name, new.namespace)
        assert stored is not None and stored.pod is new
    if nominated:
        assert q.nominator.nominated_pods == {"node1": [q.nominator.nominated_pods["node1"][0]]}
        assert q.nominator.nominated_pod_to_node == {HIGH.uid: "node1"}


def test_status_only_update_moves_only_general_update_registrants() -> None:
    """An update with no scheduling-relevant change is the general UnscheduledPodUpdate:
    a plugin registered for UpdatePodLabel only does not see it."""
    label_only = ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL)
    q, _ = make_queue(reg={"labels": [(label_only, hint_queue)]})
    pinfo = q.new_queued_pod_info(MED, "labels")
    q._unsched.add_or_update(pinfo, "x")
    q.update(MED, clone(MED, phase="Pending", nominated_node_name="node1"))
    assert where(q, MED) == "unschedulable"
    q.update(MED, clone(MED, labels={"a": "b"}))
    assert where(q, MED) == "active"


def test_update_when_in_flight_is_replayed() -> None:
    """TestPriorityQueue_UpdateWhenInflight."""
    q, _ = make_queue(reg={"fakePlugin": [(UNSCHEDULED_POD_UPDATE, hint_queue)]})
    pod = make_pod("test-pod", "test-ns").uid("test-uid").obj()
    q.add(pod)
    assert q.pop() is not None
    updated = clone(
        pod, spec=replace(pod.spec, tolerations=(Toleration("foo", effect="NoSchedule"),))
    )
    q.update(pod, updated)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(updated, "fakePlugin"), 1)
    assert where(q, updated) == "backoff"
    stored = q.get_pod("test-pod", "test-ns")
    assert stored is not None and stored.pod is updated


def test_pending_plugin_queue_skips_backoff() -> None:
    """TestPop: Queue from a Pending plugin goes straight to activeQ; plugins survive pop."""
    q, _ = make_queue(reg={"fooPlugin1": [(PV_ADD, hint_queue)]})
    pod = make_pod("targetpod").uid("pod1").obj()
    q.add(pod)
    p = q.pop()
    assert p is not None
    p.pending_plugins = {"fooPlugin1"}
    q.add_unschedulable_if_not_present(p, q.scheduling_cycle)
    assert where(q, pod) == "unschedulable"
    q.move_all_to_active_or_backoff_queue(PV_ADD)
    assert where(q, pod) == "active"
    p = q.pop()
    assert p is not None and p.pending_plugins == {"fooPlugin1"}

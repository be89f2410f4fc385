"""In-flight pods and the events recorded while they are scheduled
(upstream Test_InFlightPods and TestPriorityQueue_Activate)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kubesched.api.types import Pod
from kubesched.framework.events import (
    ASSIGNED_POD_ADD,
    FORCE_ACTIVATE,
    UNSCHEDULABLE_TIMEOUT,
    ClusterEvent,
)
from kubesched.scheduler.queue import SchedulingQueue
from kubesched.scheduler.queue.active import InFlightEvent
from tests.builders import make_pod
from tests.scheduler.queue.helpers import (
    CSI_NODE_UPDATE,
    NODE_ADD,
    PV_ADD,
    PV_UPDATE,
    PVC_ADD,
    SECOND,
    Registry,
    hint_queue,
    hint_skip,
    make_queue,
    where,
)

POD1 = make_pod("targetpod").uid("pod1").obj()
POD2 = make_pod("targetpod2").uid("pod2").obj()
POD3 = make_pod("targetpod3").uid("pod3").obj()


@dataclass
class Act:
    """One action: an event, a pop, or a pod handed back (plugins / pending plugins)."""

    event: ClusterEvent | None = None
    pop: Pod | None = None
    enqueue: Pod | None = None
    plugins: tuple[str, ...] = ()
    pending: tuple[str, ...] = ()


@dataclass
class Case:
    initial: list[Pod]
    actions: list[Act]
    reg: Registry
    in_flight: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    active: list[str] = field(default_factory=list)
    backoff: list[str] = field(default_factory=list)
    unsched: list[str] = field(default_factory=list)


def _all(*events: ClusterEvent) -> Registry:
    return {"fooPlugin1": [(e, hint_queue) for e in events]}


CASES = [
    pytest.param(
        Case(
            [POD1],
            [Act(event=PVC_ADD), Act(pop=POD1), Act(event=PV_ADD), Act(event=PV_UPDATE)],
            _all(PV_ADD),
            in_flight=["targetpod"],
            log=["targetpod", "PersistentVolumeAdd"],
        ),
        id=(
            "Test_InFlightPods/"
            "Pod and interested events are registered in inFlightPods/inFlightEvents"
        ),
    ),
    pytest.param(
        Case(
            [POD1, POD2],
            [
                Act(event=PVC_ADD),
                Act(pop=POD1),
                Act(event=PV_ADD),
                Act(pop=POD2),
                Act(event=NODE_ADD),
                Act(enqueue=POD1),
            ],
            _all(PV_ADD, NODE_ADD, PVC_ADD),
            in_flight=["targetpod2"],
            log=["targetpod2", "NodeAdd"],
            backoff=["targetpod"],
        ),
        id="Test_InFlightPods/Pod, registered in inFlightPods, is enqueued back to backoffQ",
    ),
    pytest.param(
        Case(
            [POD1, POD2],
            [
                Act(event=PVC_ADD),
                Act(pop=POD1),
                Act(event=PV_ADD),
                Act(pop=POD2),
                Act(event=NODE_ADD),
                Act(enqueue=POD1),
                Act(event=CSI_NODE_UPDATE),
                Act(enqueue=POD2),
            ],
            _all(PV_ADD, NODE_ADD, PVC_ADD, CSI_NODE_UPDATE),
            backoff=["targetpod", "targetpod2"],
        ),
        id="Test_InFlightPods/All Pods registered in inFlightPods are enqueued back",
    ),
    pytest.param(
        Case(
            [POD1, POD2, POD3],
            [
                Act(event=PVC_ADD),
                Act(pop=POD1),
                Act(event=PV_ADD),
                Act(pop=POD2),
                Act(event=NODE_ADD),
                Act(pop=POD3),
                Act(event=ASSIGNED_POD_ADD),
                Act(enqueue=POD2),
            ],
            _all(PV_ADD, NODE_ADD, ASSIGNED_POD_ADD),
            in_flight=["targetpod", "targetpod3"],
            log=["targetpod", "PersistentVolumeAdd", "NodeAdd", "targetpod3", "AssignedPodAdd"],
            backoff=["targetpod2"],
        ),
        id="Test_InFlightPods/One intermediate Pod registered in inFlightPods is enqueued back",
    ),
    pytest.param(
        Case(
            [POD1],
            [
                Act(event=UNSCHEDULABLE_TIMEOUT),
                Act(pop=POD1),
                Act(event=ASSIGNED_POD_ADD),
                Act(enqueue=POD1, plugins=("fooPlugin1",)),
            ],
            {"fooPlugin1": [(ASSIGNED_POD_ADD, hint_skip)]},
            unsched=["targetpod"],
        ),
        id="Test_InFlightPods/events before popping Pod are ignored",
    ),
    pytest.param(
        Case(
            [POD1],
            [Act(pop=POD1), Act(event=ASSIGNED_POD_ADD), Act(enqueue=POD1)],
            _all(ASSIGNED_POD_ADD),
            backoff=["targetpod"],
        ),
        id="Test_InFlightPods/pod is enqueued to backoff if no failed plugin",
    ),
    pytest.param(
        Case(
            [POD1],
            [Act(pop=POD1), Act(event=NODE_ADD), Act(enqueue=POD1, plugins=("fooPlugin1",))],
            _all(ASSIGNED_POD_ADD),
            unsched=["targetpod"],
        ),
        id="Test_InFlightPods/no events that can make the pod schedulable",
    ),
    pytest.param(
        Case(
            [POD1],
            [
                Act(pop=POD1),
                Act(event=ASSIGNED_POD_ADD),
                Act(enqueue=POD1, plugins=("fooPlugin2", "fooPlugin3"), pending=("fooPlugin1",)),
            ],
            {
                "fooPlugin3": [(ASSIGNED_POD_ADD, hint_skip)],
                "fooPlugin2": [(ASSIGNED_POD_ADD, hint_queue)],
                "fooPlugin1": [(ASSIGNED_POD_ADD, hint_queue)],
            },
            active=["targetpod"],
        ),
        id="Test_InFlightPods/Pending plugin's Queue sends the pod to activeQ",
    ),
    pytest.param(
        Case(
            [POD1],
            [
                Act(pop=POD1),
                Act(event=ASSIGNED_POD_ADD),
                Act(enqueue=POD1, plugins=("fooPlugin1", "fooPlugin2")),
            ],
            {
                "fooPlugin2": [(ASSIGNED_POD_ADD, hint_skip)],
                "fooPlugin1": [(ASSIGNED_POD_ADD, hint_queue)],
            },
            backoff=["targetpod"],
        ),
        id="Test_InFlightPods/failed plugin's Queue sends the pod to backoffQ",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_in_flight_pods(case: Case) -> None:
    q, clock = make_queue(reg=case.reg)
    for p in case.initial:
        q.add(p)
        clock.step(SECOND)
    for a in case.actions:
        if a.event is not None:
            q.move_all_to_active_or_backoff_queue(a.event)
        elif a.pop is not None:
            got = q.pop()
            assert got is not None and got.pod is a.pop
        elif a.enqueue is not None:
            pinfo = q.new_queued_pod_info(a.enqueue, *a.plugins)
            pinfo.pending_plugins = set(a.pending)
            q.add_unschedulable_if_not_present(pinfo, q.scheduling_cycle)
    assert sorted(p.name for p in q.in_flight_pods()) == sorted(case.in_flight)
    log = [e.event.label() if isinstance(e, InFlightEvent) else e.name for e in q.in_flight_log()]
    assert log == case.log
    assert sorted(p.pod.name for p in q.pods_in_active_q()) == sorted(case.active)
    assert sorted(p.pod.name for p in q.pods_in_backoff_q()) == sorted(case.backoff)
    assert sorted(p.pod.name for p in q.unschedulable_pods()) == sorted(case.unsched)


def test_concurrent_event_for_other_in_flight_pod() -> None:
    """Test_InFlightPods/pending plugin's Queue for an event received while another
    pod was in flight."""
    reg: Registry = {
        "fooPlugin3": [(ASSIGNED_POD_ADD, hint_skip)],
        "fooPlugin2": [(ASSIGNED_POD_ADD, hint_queue)],
        "fooPlugin1": [(ASSIGNED_POD_ADD, hint_queue)],
    }
    q, clock = make_queue(reg=reg)
    for p in (POD1, POD2):
        q.add(p)
        clock.step(SECOND)
    p1 = q.pop()
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    p2 = q.pop()
    q.move_all_to_active_or_backoff_queue(ASSIGNED_POD_ADD)
    assert p1 is not None and p2 is not None
    q.add_unschedulable_if_not_present(p1, q.scheduling_cycle)  # error: backoffQ
    p2.unschedulable_plugins = {"fooPlugin2", "fooPlugin3"}
    p2.pending_plugins = {"fooPlugin1"}
    q.add_unschedulable_if_not_present(p2, q.scheduling_cycle)
    assert (where(q, POD1), where(q, POD2)) == ("backoff", "active")
    assert q.in_flight_pods() == [] and q.in_flight_log() == []


def test_done_without_requeue_prunes_events() -> None:
    q, _ = make_queue(reg=_all(NODE_ADD))
    q.add(POD1)
    p = q.pop()
    assert p is not None
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert len(q.in_flight_log()) == 2
    q.done(p.pod.uid)
    assert q.in_flight_log() == []
    q.move_all_to_active_or_backoff_queue(NODE_ADD)  # nothing in flight: not recorded
    assert q.in_flight_log() == []


HPP = make_pod("hpp", "ns1").uid("hppns1").priority(1000).nominated("node1").obj()
MPP = make_pod("mpp", "ns2").uid("mppns2").priority(500).obj()


def _in_pool(q: SchedulingQueue) -> None:
    q._unsched.add_or_update(q.new_queued_pod_info(HPP), "UnschedulablePodAdd")


def _in_backoff(q: SchedulingQueue) -> None:
    q._backoff.add(q.new_queued_pod_info(HPP), "UnschedulablePodAdd")


def _in_active(q: SchedulingQueue) -> None:
    q.add(HPP)


def _nothing(q: SchedulingQueue) -> None:
    pass


def _pop(pod: Pod) -> object:
    def run(q: SchedulingQueue) -> None:
        q.add(pod)
        assert q.pop() is not None

    return run


@pytest.mark.parametrize(
    ("prepare", "want_active", "want_log"),
    [
        pytest.param(_in_active, 1, [], id="TestPriorityQueue_Activate/pod already in activeQ"),
        pytest.param(
            _nothing, 0, [], id="TestPriorityQueue_Activate/pod not in unschedulablePods/backoffQ"
        ),
        pytest.param(
            _pop(HPP),
            0,
            ["hpp", "ForceActivate"],
            id=(
                "TestPriorityQueue_Activate/"
                "[QHint] pod not in unschedulablePods/backoffQ but in-flight"
            ),
        ),
        pytest.param(
            _pop(MPP),
            0,
            ["mpp"],
            id=(
                "TestPriorityQueue_Activate/"
                "[QHint] pod not in unschedulablePods/backoffQ and not in-flight"
            ),
        ),
        pytest.param(_in_pool, 1, [], id="TestPriorityQueue_Activate/pod in unschedulablePods"),
        pytest.param(_in_backoff, 1, [], id="TestPriorityQueue_Activate/pod in backoffQ"),
    ],
)
def test_activate(prepare: object, want_active: int, want_log: list[str]) -> None:
    q, _ = make_queue()
    prepare(q)  # type: ignore[operator]
    q.activate([HPP])
    assert len(q.pods_in_active_q()) == want_active
    log = [e.event.label() if isinstance(e, InFlightEvent) else e.name for e in q.in_flight_log()]
    assert log == want_log
    if want_log == ["hpp", "ForceActivate"]:
        ev = q.in_flight_log()[1]
        assert isinstance(ev, InFlightEvent)
        assert (ev.event, ev.old, ev.new) == (FORCE_ACTIVATE, None, HPP)


def test_force_activate_replay_requeues_the_in_flight_pod() -> None:
    """A ForceActivate recorded for an in-flight pod requeues it even if no hint would."""
    q, _ = make_queue()
    q.add(HPP)
    p = q.pop()
    assert p is not None
    q.activate([HPP])
    p.unschedulable_plugins = {"somePlugin"}
    q.add_unschedulable_if_not_present(p, q.scheduling_cycle)
    assert where(q, HPP) == "backoff"

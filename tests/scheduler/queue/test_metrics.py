"""scheduler_queue_incoming_pods_total and pending pods (upstream TestIncomingPodsMetrics,
TestPriorityQueue_PendingPods)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kubesched.framework.events import UNSCHEDULABLE_TIMEOUT, UNSCHEDULED_POD_ADD
from kubesched.scheduler.queue import SchedulingQueue
from tests.builders import make_pod
from tests.fakes import FakeClock
from tests.scheduler.queue.helpers import SECOND, make_queue

PODS = [make_pod(f"test-pod-{i}", f"ns{i}").uid(f"tp-{i}").obj() for i in (1, 2, 3)]
ADD = UNSCHEDULED_POD_ADD.label()
"""Upstream's label is "UnschedulablePodAdd" (resource "UnschedulablePod"); see
test_unscheduled_pod_event_label_matches_upstream."""


def _add(q: SchedulingQueue, clock: FakeClock) -> None:
    for p in PODS:
        q.add(p)


def _requeue(plugins: set[str], count_bump: bool) -> Callable[[SchedulingQueue, FakeClock], None]:
    def run(q: SchedulingQueue, clock: FakeClock) -> None:
        for p in PODS:
            q.add(p)
            got = q.pop()
            assert got is not None
            got.unschedulable_plugins = set(plugins)
            q.add_unschedulable_if_not_present(got, 1)

    return run


def _move_all(q: SchedulingQueue, clock: FakeClock) -> None:
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)


def _forward(q: SchedulingQueue, clock: FakeClock) -> None:
    clock.step(3 * SECOND)


def _flush_backoff(q: SchedulingQueue, clock: FakeClock) -> None:
    clock.step(3 * SECOND)
    q.flush_backoff_q_completed()


@pytest.mark.parametrize(
    ("ops", "want"),
    [
        pytest.param(
            [_add], {("active", ADD): 3}, id="TestIncomingPodsMetrics/add pods to activeQ"
        ),
        pytest.param(
            [_requeue({"unschedulable_plugin"}, False)],
            {("active", ADD): 3, ("unschedulable", "ScheduleAttemptFailure"): 3},
            id="TestIncomingPodsMetrics/add pods to unschedulablePods",
        ),
        pytest.param(
            [_requeue({"unschedulable_plugin"}, False), _move_all],
            {
                ("active", ADD): 3,
                ("unschedulable", "ScheduleAttemptFailure"): 3,
                ("backoff", "UnschedulableTimeout"): 3,
            },
            id=(
                "TestIncomingPodsMetrics/"
                "add pods to unschedulablePods and then move all to backoffQ"
            ),
        ),
        pytest.param(
            [_requeue({"unschedulable_plugin"}, False), _forward, _move_all],
            {
                ("active", ADD): 3,
                ("unschedulable", "ScheduleAttemptFailure"): 3,
                ("active", "UnschedulableTimeout"): 3,
            },
            id="TestIncomingPodsMetrics/add pods to unschedulablePods and then move all to activeQ",
        ),
        pytest.param(
            [_requeue(set(), True), _forward, _flush_backoff],
            {
                ("active", ADD): 3,
                ("active", "BackoffComplete"): 3,
                ("backoff", "ScheduleAttemptFailure"): 3,
            },
            id="TestIncomingPodsMetrics/make some pods subject to backoff, then flush backoffQ",
        ),
    ],
)
def test_incoming_pods_metrics(
    ops: list[Callable[[SchedulingQueue, FakeClock], None]], want: dict[tuple[str, str], int]
) -> None:
    q, clock = make_queue()
    for op in ops:
        op(q, clock)
    assert q.metrics.incoming_pods == want


def test_pending_pods() -> None:
    """TestPriorityQueue_PendingPods."""
    q, _ = make_queue()
    up = make_pod("up", "ns1").obj()
    hpp = make_pod("hpp", "ns1").priority(1000).obj()
    mpp = make_pod("mpp", "ns2").priority(500).obj()
    q.add(up)
    q.pop()
    q.add(hpp)
    q.pop()
    q.add(mpp)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(up, "plugin"), 1)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(hpp, "plugin"), 1)
    assert q.pending_pods() == {"active": 1, "backoff": 0, "unschedulable": 2, "gated": 0}
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
    assert q.pending_pods() == {"active": 1, "backoff": 2, "unschedulable": 0, "gated": 0}


def test_unschedulable_reasons_gauge() -> None:
    """scheduler_unschedulable_pods{plugin}: +1 on requeue per rejector, -1 on pop."""
    q, clock = make_queue()
    pod = make_pod("p").obj()
    q.add(pod)
    p = q.pop()
    assert p is not None
    p.unschedulable_plugins = {"A", "B"}
    q.add_unschedulable_if_not_present(p, 1)
    assert q.metrics.unschedulable_reasons == {"A": 1, "B": 1}
    clock.step(3 * SECOND)
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
    q.pop()
    assert q.metrics.unschedulable_reasons == {"A": 0, "B": 0}


def test_unscheduled_pod_event_label_matches_upstream() -> None:
    assert UNSCHEDULED_POD_ADD.label() == "UnschedulablePodAdd"

"""activeQ ordering: QueueSort less, FIFO ties, requeued pods going behind
(upstream scheduling_queue_test.go)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.events import UNSCHEDULABLE_TIMEOUT
from kubesched.scheduler.queue import SchedulingQueue
from kubesched.scheduler.queue.scheduling_queue import priority_sort_key
from tests.builders import make_pod
from tests.fakes import FakeClock
from tests.hypothesis_profiles import scaled
from tests.scheduler.queue.helpers import SECOND, make_queue, priority_less, where

START = 1000 * SECOND


def _pop_names(q: SchedulingQueue, n: int) -> list[str]:
    out = []
    for _ in range(n):
        p = q.pop()
        assert p is not None
        out.append(p.pod.name)
    return out


def test_add_pops_by_priority() -> None:
    """TestPriorityQueue_Add / TestPriorityQueue_AddWithReversePriorityLessFunc."""
    q, _ = make_queue()
    q.add(make_pod("mpp", "ns2").priority(500).obj())
    q.add(make_pod("up", "ns1").priority(0).obj())
    q.add(make_pod("hpp", "ns1").priority(1000).obj())
    assert _pop_names(q, 3) == ["hpp", "mpp", "up"]
    assert q.pop() is None


@pytest.mark.parametrize(
    "order",
    [
        pytest.param(
            ["a", "b", "c", "d"], id="equal priority and timestamp pop in insertion order"
        ),
        pytest.param(["d", "c", "b", "a"], id="FIFO does not depend on names"),
    ],
)
def test_ties_are_fifo(order: list[str]) -> None:
    q, _ = make_queue()  # the clock never moves: every timestamp is equal
    for n in order:
        q.add(make_pod(n).priority(5).obj())
    assert _pop_names(q, 4) == order


def test_timestamp_breaks_equal_priority_before_fifo() -> None:
    """TestPodTimestamp/add two pod to activeQ and sort them by the timestamp."""
    q, clock = make_queue()
    t = clock.now()
    clock.set(t + SECOND)
    q.add(make_pod("pod2").obj())
    clock.set(t)  # added later, but with the older timestamp
    q.add(make_pod("pod1").obj())
    assert _pop_names(q, 2) == ["pod1", "pod2"]


def test_recently_tried_pods_go_back() -> None:
    """TestRecentlyTriedPodsGoBack: a pod re-added after a failure goes behind equal peers."""
    q, clock = make_queue()
    for i in range(5):
        q.add(make_pod(f"test-pod-{i}", "ns1").priority(1000).nominated("node1").obj())
    clock.step(1_000)
    p1 = q.pop()
    assert p1 is not None
    p1.unschedulable_plugins = {"plugin"}
    q.add_unschedulable_if_not_present(p1, q.scheduling_cycle)
    clock.step(10 * SECOND)
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
    popped = [q.pop() for _ in range(5)]
    assert popped[4] is p1
    assert all(p is not p1 for p in popped[:4])


def test_failed_pod_does_not_block_newer_pod() -> None:
    """TestPodFailedSchedulingMultipleTimesDoesNotBlockNewerPod."""
    q, clock = make_queue()
    unsched = make_pod("test-pod-unscheduled", "ns1").priority(1000).obj()
    q.add(unsched)
    p = q.pop()
    assert p is not None
    p.unschedulable_plugins = {"plugin"}
    q.add_unschedulable_if_not_present(p, q.scheduling_cycle)
    clock.step(2 * SECOND)
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
    p = q.pop()
    assert p is not None and p.pod is unsched
    newer = make_pod("test-newer-pod", "ns1").priority(1000).obj()
    q.add(newer)
    q.add_unschedulable_if_not_present(p, q.scheduling_cycle)
    clock.step(2 * SECOND)
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
    first = q.pop()
    assert first is not None and first.pod is newer


def test_high_priority_pod_backs_off() -> None:
    """TestHighPriorityBackoff: an unschedulable high-priority pod does not block others."""
    q, _ = make_queue()
    mid = make_pod("test-midpod", "ns1").priority(100).obj()
    high = make_pod("test-highpod", "ns1").priority(1000).obj()
    q.add(mid)
    q.add(high)
    p = q.pop()
    assert p is not None and p.pod is high
    p.unschedulable_plugins = {"fooPlugin"}
    q.add_unschedulable_if_not_present(p, q.scheduling_cycle)
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
    assert where(q, high) == "backoff"
    p = q.pop()
    assert p is not None and p.pod is mid


def test_pop_takes_backoff_head_when_active_empty() -> None:
    """TestPriorityQueue_Pop/Pop pods from both activeQ and backoffQ when PopFromBackoffQ
    is enabled."""
    q, _ = make_queue()
    med = make_pod("mpp", "ns2").priority(500).obj()
    high = make_pod("hpp", "ns1").priority(1000).obj()
    q.add(med)
    q.add(high)
    h = q.pop()
    assert h is not None and h.pod is high
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)  # logged for the in-flight pod
    h.unschedulable_plugins = {"plugin"}
    q.add_unschedulable_if_not_present(h, q.scheduling_cycle)
    assert where(q, high) == "backoff"
    assert _pop_names(q, 2) == ["mpp", "hpp"]
    assert q.metrics.incoming_pods[("active", "PopFromBackoffQ")] == 1


def test_pop_counts_attempts_and_cycles() -> None:
    """TestPerPodSchedulingMetrics: attempts grow across pops, the first attempt time stays."""
    q, clock = make_queue()
    start = clock.now()
    pod = make_pod("test-pod", "test-ns").obj()
    q.add(pod)
    p = q.pop()
    assert p is not None
    p.unschedulable_plugins = {"plugin"}
    q.add_unschedulable_if_not_present(p, 1)
    clock.set(start + 5 * 60 * SECOND + 1)
    q.flush_unschedulable_pods_leftover()
    p = q.pop()
    assert p is not None
    assert (p.attempts, p.initial_attempt_timestamp, q.scheduling_cycle) == (2, start, 2)
    assert p.was_flushed_from_unschedulable


def test_duplicate_in_flight_pod_is_discarded() -> None:
    """Test_InFlightPods/Pop is made twice for the same Pod, but the cleanup still happen
    correctly."""
    q, _ = make_queue()
    pod1 = make_pod("targetpod").uid("pod1").obj()
    q.add(pod1)
    first = q.pop()
    assert first is not None
    # A bug elsewhere puts the in-flight pod back into activeQ.
    q._active.add(first, "UnschedulablePodAdd")
    pod3 = make_pod("targetpod3").uid("pod3").obj()
    q.add(pod3)
    got = q.pop()
    assert got is not None and got.pod is pod3
    assert q.pods_in_active_q() == []


@settings(max_examples=scaled(60), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["add", "pop_fail", "pop_error", "move", "tick"]),
            st.integers(0, 3),
            st.integers(0, 2 * SECOND),
        ),
        max_size=40,
    )
)
def test_sort_key_fast_path_orders_like_less(ops: list[tuple[str, int, int]]) -> None:
    """The tuple-key fast path (priority_sort_key) and the generic ``less`` path pop the
    same pods in the same order, from activeQ and from the backoff heap."""
    queues = [
        SchedulingQueue(priority_less, FakeClock(START), sort_key=key)
        for key in (None, priority_sort_key)
    ]
    traces: list[list[str]] = [[], []]
    for i, (op, prio, dt) in enumerate(ops):
        for q, trace in zip(queues, traces, strict=True):
            clock = q._clock
            assert isinstance(clock, FakeClock)
            if op == "add":
                q.add(make_pod(f"p{i}").priority(prio).obj())
            elif op in ("pop_fail", "pop_error"):
                p = q.pop()
                trace.append(p.pod.name if p is not None else "-")
                if p is not None:
                    p.unschedulable_plugins = {"x"} if op == "pop_fail" else set()
                    q.add_unschedulable_if_not_present(p, q.scheduling_cycle)
            elif op == "move":
                q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
            else:
                clock.step(dt)
                q.run_timers()
    for q, trace in zip(queues, traces, strict=True):
        while (p := q.pop()) is not None:
            trace.append(p.pod.name)
    assert traces[0] == traces[1]

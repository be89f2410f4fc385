"""The periodic flushes on a simulated clock: the 1 s aligned backoff flush,
the 30 s leftover flush and its strict 5-minute threshold."""

from __future__ import annotations

import pytest

from kubesched.framework.events import UNSCHEDULABLE_TIMEOUT
from kubesched.scheduler.queue import SchedulingQueue
from tests.builders import make_pod
from tests.fakes import FakeClock
from tests.scheduler.queue.helpers import (
    MINUTE,
    NODE_ADD,
    SECOND,
    allowlist_pre_enqueue,
    hint_queue,
    make_queue,
    pop_and_fail,
    where,
)

START = 1000 * SECOND


def test_no_deadline_when_nothing_waits() -> None:
    q, _ = make_queue(FakeClock(START))
    assert q.next_timer_deadline() is None
    q.add(make_pod("p").obj())
    assert q.next_timer_deadline() is None  # activeQ needs no timer


@pytest.mark.parametrize(
    ("fail_at", "failures", "want_deadline"),
    [
        pytest.param(
            START + SECOND // 2,
            1,
            START + 2 * SECOND,
            id="1 s backoff ends at the next-but-one second",
        ),
        pytest.param(START, 1, START + 2 * SECOND, id="aligned failure: expiry window + 1 s"),
        pytest.param(START + SECOND // 2, 3, START + 5 * SECOND, id="third failure: 4 s backoff"),
    ],
)
def test_backoff_deadline(fail_at: int, failures: int, want_deadline: int) -> None:
    clock = FakeClock(START)
    q, _ = make_queue(clock)
    pod = make_pod("p").obj()
    q.add(pod)
    clock.set(fail_at)
    p = q.pop()
    assert p is not None
    p.unschedulable_count = failures - 1
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)  # in flight: replayed
    p.unschedulable_plugins = {"plugin"}
    q.add_unschedulable_if_not_present(p, 1)
    assert where(q, pod) == "backoff"
    assert q.next_timer_deadline() == want_deadline
    clock.set(want_deadline - 1)
    q.run_timers()
    assert where(q, pod) == "backoff"
    clock.set(want_deadline)
    q.run_timers()
    assert where(q, pod) == "active"
    assert q.next_timer_deadline() is None


def test_first_backoff_tick_is_after_construction() -> None:
    """The backoff ticker starts at the first whole second after the queue starts."""
    clock = FakeClock(START + SECOND // 2)
    q, _ = make_queue(clock)
    pinfo = q.new_queued_pod_info(make_pod("p").obj(), "plugin")
    pinfo.timestamp = START - 5 * SECOND
    pinfo.unschedulable_count = 1
    q._backoff.add(pinfo, "x")
    assert q.next_timer_deadline() == START + SECOND


@pytest.mark.parametrize(
    ("ts", "want"),
    [
        pytest.param(
            START + SECOND // 2, START + 330 * SECOND, id="first 30 s tick after ts + 5 min"
        ),
        pytest.param(START, START + 330 * SECOND, id="exactly 5 min is not enough (strict)"),
        pytest.param(START + 29 * SECOND, START + 330 * SECOND, id="same tick for ts + 29 s"),
        pytest.param(START + 30 * SECOND, START + 360 * SECOND, id="next tick for ts + 30 s"),
    ],
)
def test_leftover_deadline(ts: int, want: int) -> None:
    clock = FakeClock(START)
    q, _ = make_queue(clock)
    clock.set(ts)
    q.add(make_pod("p").obj())
    pop_and_fail(q, "plugin")
    assert q.next_timer_deadline() == want


def test_leftover_threshold_is_strict() -> None:
    """flushUnschedulablePodsLeftover moves pods only when now - timestamp > 5 min."""
    clock = FakeClock(START)
    q, _ = make_queue(clock)
    pod = make_pod("p").obj()
    q.add(pod)
    pop_and_fail(q, "plugin")
    clock.set(START + 5 * MINUTE)
    q.flush_unschedulable_pods_leftover()
    assert where(q, pod) == "unschedulable"
    clock.step(1)
    q.flush_unschedulable_pods_leftover()
    assert where(q, pod) == "active"  # backoff long over
    assert q.metrics.incoming_pods[("active", "UnschedulableTimeout")] == 1


def test_run_timers_does_not_flush_leftover_between_ticks() -> None:
    """A backoff deadline that falls between leftover ticks must not flush the pool early."""
    clock = FakeClock(START)
    q, _ = make_queue(clock, {"fooPlugin": [(NODE_ADD, hint_queue)]})
    old = make_pod("old").obj()
    q.add(old)
    pop_and_fail(q, "otherPlugin")  # ts = START: leftover tick at START + 330 s
    clock.set(START + 305 * SECOND)
    young = make_pod("young").obj()
    q.add(young)
    p = q.pop()
    assert p is not None
    q.move_all_to_active_or_backoff_queue(NODE_ADD)  # logged for the in-flight pod only
    p.unschedulable_plugins = {"fooPlugin"}
    q.add_unschedulable_if_not_present(p, 2)  # backoff deadline START + 307 s
    assert q.next_timer_deadline() == START + 307 * SECOND
    clock.set(START + 307 * SECOND)
    q.run_timers()
    assert (where(q, young), where(q, old)) == ("active", "unschedulable")
    assert q.next_timer_deadline() == START + 330 * SECOND
    clock.set(START + 330 * SECOND)
    q.run_timers()
    assert where(q, old) == "active"
    assert q.next_timer_deadline() is None


def test_high_priority_flush_unschedulable_pods_leftover() -> None:
    """TestHighPriorityFlushUnschedulablePodsLeftover."""
    q, clock = make_queue()
    high = make_pod("test-highpod", "ns1").priority(1000).obj()
    mid = make_pod("test-midpod", "ns1").priority(100).obj()
    for p in (high, mid):
        q.add(p)
        assert q.pop() is not None
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(high, "fakePlugin"), 1)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(mid, "fakePlugin"), 1)
    clock.step(5 * MINUTE + SECOND)
    q.flush_unschedulable_pods_leftover()
    popped = [q.pop(), q.pop()]
    assert [p.pod.name for p in popped if p is not None] == ["test-highpod", "test-midpod"]


@pytest.mark.parametrize(
    "max_duration",
    [
        pytest.param(
            None, id="TestPriorityQueue_initPodMaxInUnschedulablePodsDuration/default value"
        ),
        pytest.param(
            30 * SECOND,
            id="TestPriorityQueue_initPodMaxInUnschedulablePodsDuration/user-defined value",
        ),
    ],
)
def test_init_pod_max_in_unschedulable_pods_duration(max_duration: int | None) -> None:
    if max_duration is None:
        q, clock = make_queue()
    else:
        q, clock = make_queue(pod_max_in_unschedulable_pods_duration=max_duration)
    now = clock.now()
    for name, age in (("test-pod-1", SECOND), ("test-pod-2", 2 * SECOND)):
        pinfo = q.new_queued_pod_info(make_pod(name).obj())
        pinfo.timestamp = now - age
        pinfo.unschedulable_count += 1
        q._unsched.add_or_update(pinfo, "UnschedulablePodAdd")
    clock.step(q.max_in_unschedulable_pods_duration)
    q.flush_unschedulable_pods_leftover()
    assert [p.pod.name for p in (q.pop(), q.pop()) if p is not None] == ["test-pod-2", "test-pod-1"]


def test_gated_pods_are_not_leftover_candidates() -> None:
    """UnschedulableTimeout matches only gating plugins that registered the wildcard."""
    q, clock = make_queue(pre_enqueue=allowlist_pre_enqueue("ok"))
    gated = make_pod("gated").obj()
    q.add(gated)
    assert where(q, gated) == "unschedulable" and q.pending_pods()["gated"] == 1
    assert q.next_timer_deadline() is None
    clock.step(10 * MINUTE)
    q.flush_unschedulable_pods_leftover()
    assert where(q, gated) == "unschedulable"


def _flush_all(q: SchedulingQueue) -> None:
    while (d := q.next_timer_deadline()) is not None:
        q._clock.set(d)  # type: ignore[attr-defined]
        q.run_timers()


def test_deadlines_drain_everything() -> None:
    """Following next_timer_deadline moves every waiting pod to activeQ eventually."""
    q, _ = make_queue()
    pods = [make_pod(f"p{i}").obj() for i in range(4)]
    for p in pods:
        q.add(p)
    for i, _p in enumerate(pods):
        pop_and_fail(q, "plugin" if i % 2 else "")
    _flush_all(q)
    assert sorted(p.pod.name for p in q.pods_in_active_q()) == ["p0", "p1", "p2", "p3"]

"""Backoff durations, expiry truncation and the two backoff heaps
(upstream backoff_queue_test.go and TestBackOffFlow)."""

from __future__ import annotations

import pytest

from kubesched.framework.events import UNSCHEDULABLE_TIMEOUT
from kubesched.framework.types import PodInfo
from kubesched.scheduler.queue.backoff import (
    NO_BACKOFF,
    BackoffQueue,
    align_to_window,
    backoff_duration,
)
from kubesched.scheduler.queue.metrics import QueueMetrics
from kubesched.scheduler.queue.queued_pod import QueuedPodInfo
from kubesched.scheduler.queue.scheduling_queue import active_sort_key
from tests.builders import make_pod
from tests.fakes import FakeClock
from tests.scheduler.queue.helpers import SECOND, make_queue, priority_less, where


def _bq(clock: FakeClock, initial: int = SECOND, maximum: int = 10 * SECOND) -> BackoffQueue:
    return BackoffQueue(
        clock, initial, maximum, active_sort_key(priority_less, None), QueueMetrics()
    )


def _qpi(
    name: str, ts: int, *, prio: int = 0, unsched: int = 0, errors: int = 0, plugin: bool = True
) -> QueuedPodInfo:
    p = QueuedPodInfo(
        PodInfo(make_pod(name).priority(prio).obj()),
        ts,
        unschedulable_plugins={"plugin"} if plugin else set(),
    )
    p.unschedulable_count = unsched
    p.consecutive_errors_count = errors
    return p


@pytest.mark.parametrize(
    ("count", "initial", "maximum", "want"),
    [
        pytest.param(0, 1, 32, 0, id="TestBackoffQueue_calculateBackoffDuration/no backoff"),
        pytest.param(16, 1, 32, 32, id="TestBackoffQueue_calculateBackoffDuration/normal"),
        pytest.param(
            32,
            1,
            2**31 - 1,
            2**31 - 1,
            id="TestBackoffQueue_calculateBackoffDuration/overflow_32bit",
        ),
        pytest.param(
            64,
            1,
            2**63 - 1,
            2**63 - 1,
            id="TestBackoffQueue_calculateBackoffDuration/overflow_64bit",
        ),
        pytest.param(3, SECOND, 10 * SECOND, 4 * SECOND, id="third failure doubles twice"),
        pytest.param(5, SECOND, 10 * SECOND, 10 * SECOND, id="fifth failure is capped at max"),
    ],
)
def test_backoff_duration(count: int, initial: int, maximum: int, want: int) -> None:
    assert backoff_duration(count, initial, maximum) == want


@pytest.mark.parametrize(
    ("unsched", "errors", "max_backoff", "want"),
    [
        pytest.param(0, 0, 10 * SECOND, NO_BACKOFF, id="never failed: no backoff"),
        pytest.param(3, 0, 10 * SECOND, 1004 * SECOND, id="unschedulable count drives backoff"),
        pytest.param(3, 1, 10 * SECOND, 1001 * SECOND, id="error count wins when non-zero"),
        pytest.param(3, 0, 0, NO_BACKOFF, id="max backoff 0 disables backoff"),
    ],
)
def test_backoff_time_uses_counts(unsched: int, errors: int, max_backoff: int, want: int) -> None:
    bq = _bq(FakeClock(1000 * SECOND), maximum=max_backoff)
    pinfo = _qpi("p", 1000 * SECOND + SECOND // 2, unsched=unsched, errors=errors)
    # expiry = truncate(ts + duration, 1 s)
    assert bq.backoff_time(pinfo) == want


@pytest.mark.parametrize(
    ("now_offset", "backing_off"),
    [
        pytest.param(0, True, id="same window as the expiry: still backing off"),
        pytest.param(SECOND - 1, True, id="last nanosecond of the expiry window"),
        pytest.param(SECOND, False, id="next whole second: complete"),
    ],
)
def test_backing_off_until_the_window_after_expiry(now_offset: int, backing_off: bool) -> None:
    clock = FakeClock(1000 * SECOND + 300_000_000)
    bq = _bq(clock)
    pinfo = _qpi("p", clock.now(), unsched=1)  # expiry = truncate(1001.3 s) = 1001 s
    assert bq.backoff_time(pinfo) == 1001 * SECOND
    clock.set(1001 * SECOND + now_offset)
    assert bq.is_backing_off(pinfo) is backing_off


@pytest.mark.parametrize(
    ("in_backoff", "want"),
    [
        pytest.param([], [], id="TestBackoffQueue_popAllBackoffCompleted/Both queues empty"),
        pytest.param(
            ["pod0", "pod1"], ["pod0"], id="TestBackoffQueue_popAllBackoffCompleted/only backoffQ"
        ),
        pytest.param(
            ["pod2", "pod3"], ["pod2"], id="TestBackoffQueue_popAllBackoffCompleted/only errorQ"
        ),
        pytest.param(
            ["pod0", "pod1", "pod2", "pod3"],
            ["pod0", "pod2"],
            id="TestBackoffQueue_popAllBackoffCompleted/both queues, some moved",
        ),
        pytest.param(["pod1", "pod3"], [], id="TestBackoffQueue_popAllBackoffCompleted/none moved"),
    ],
)
def test_pop_all_backoff_completed(in_backoff: list[str], want: list[str]) -> None:
    clock = FakeClock(5000 * SECOND + 123)
    now = clock.now()
    pods = {
        "pod0": _qpi("pod0", now - 2 * SECOND, unsched=1),
        "pod1": _qpi("pod1", now + SECOND, unsched=1),
        "pod2": _qpi("pod2", now - 2 * SECOND, errors=1, plugin=False),
        "pod3": _qpi("pod3", now + SECOND, errors=1, plugin=False),
    }
    bq = _bq(clock)
    for n in in_backoff:
        bq.add(pods[n], "UnschedulablePodAdd")
    got = [p.pod.name for p in bq.pop_all_completed()]
    assert got == want
    assert len(bq) == len(in_backoff) - len(want)


def test_backoff_queue_ordering_by_window_then_priority() -> None:
    """TestBackoffQueueOrdering: pods of one window are ordered like activeQ."""
    clock = FakeClock(align_to_window(7000 * SECOND + 5))
    now = clock.now()
    bq = _bq(clock)
    for p in [
        _qpi("pod0", now, prio=1, unsched=1),
        _qpi("pod1", now - SECOND, prio=1, unsched=1),
        _qpi("pod2", now - 2 * SECOND + 1_000_000, prio=2, unsched=1),
        _qpi("pod3", now - 2 * SECOND, prio=1, unsched=1),
        _qpi("pod4", now - 2 * SECOND, prio=2, unsched=1),
        _qpi("pod5", now - 3 * SECOND, prio=1, unsched=1),
    ]:
        bq.add(p, "UnschedulablePodAdd")
    assert [p.pod.name for p in bq.pop_all_completed()] == ["pod5", "pod4", "pod2", "pod3"]


def test_errored_pods_never_pop_early_but_rejected_pods_do() -> None:
    """TestPriorityQueue_Pop: with activeQ empty, pop takes the backoffQ head,
    never the error heap."""
    q, _ = make_queue()
    rejected = make_pod("hpp").priority(1000).obj()
    errored = make_pod("hpp2").priority(1000).obj()
    q.add(rejected)
    q.add(errored)
    a = q.pop()
    b = q.pop()
    assert a is not None and b is not None
    # Both come back with a backoff pending; an in-flight event makes them requeue.
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
    a.unschedulable_plugins = {"plugin"}
    q.add_unschedulable_if_not_present(a, q.scheduling_cycle)
    q.add_unschedulable_if_not_present(b, q.scheduling_cycle)  # no plugin: error heap
    assert where(q, rejected) == "backoff" and where(q, errored) == "backoff"
    first = q.pop()
    assert first is not None and first.pod.name == "hpp"
    assert q.pop() is None


def test_backoff_flow_durations() -> None:
    """TestBackOffFlow: 1, 2, 4, 8, 10, 10, 10 s with the default backoff settings."""
    clock = FakeClock(1000 * SECOND + 300_000_000)
    q, _ = make_queue(clock)
    pod = make_pod("test-pod", "test-ns").obj()
    q.add(pod)
    for i, want in enumerate([1, 2, 4, 8, 10, 10, 10]):
        timestamp = clock.now()
        pinfo = q.pop()
        assert pinfo is not None and pinfo.attempts == i + 1
        pinfo.unschedulable_plugins.add("unsched-plugin")
        q.add_unschedulable_if_not_present(pinfo, i)
        q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
        assert where(q, pod) == "backoff"
        assert pinfo.backoff_expiration is not None
        raw = pinfo.backoff_expiration - timestamp
        backoff = raw - raw % SECOND + SECOND  # rounded up to the ordering window
        assert backoff == want * SECOND
        clock.step(SECOND)
        q.flush_backoff_q_completed()
        assert where(q, pod) == "backoff", "still backing off after an early flush"
        clock.step(backoff)
        q.flush_backoff_q_completed()
        assert where(q, pod) == "active"

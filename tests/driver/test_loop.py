"""The drive loop (driver/loop.py) on a fake backend and a fake scheduler: the order
of its steps and the rules that end a run (the ones ``kubesched simulate``
documents in the README's "When the run ends")."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from kubesched.driver.loop import DEFAULT_HORIZON, RunStats, drive

S = 1_000_000_000


class Backend:
    """Changes at given times; every step of the loop is logged with the clock."""

    def __init__(self, log: list[tuple[str, int]]) -> None:
        self.now = 0
        self.log = log
        self._heap: list[tuple[int, int, Callable[[], None]]] = []
        self._seq = 0
        self.queued = 0

    def at(self, t: int, action: Callable[[], None]) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (t, self._seq, action))

    def run_due(self) -> int:
        n = 0
        while self._heap and self._heap[0][0] <= self.now:
            _, _, action = heapq.heappop(self._heap)
            action()
            self.queued += 1
            n += 1
        return n

    def flush(self) -> int:
        n, self.queued = self.queued, 0
        if n:
            self.log.append(("flush", self.now))
        return n

    def next_time(self) -> int | None:
        return self._heap[0][0] if self._heap else None

    def advance(self, to: int) -> None:
        self.log.append(("advance", to))
        self.now = to


class Queue:
    def __init__(self) -> None:
        self.ready = 0

    def has_poppable(self) -> bool:
        return self.ready > 0


@dataclass
class Metrics:
    pending_pods: dict[str, int] = field(default_factory=dict)


class Sched:
    """Pods become poppable when a change or a timer makes them so; ``retry`` is what
    ``would_retry_on_a_changed_cluster`` answers; ``deadlines`` the queue's timers."""

    def __init__(self, backend: Backend, log: list[tuple[str, int]]) -> None:
        self.backend = backend
        self.log = log
        self.queue = Queue()
        self.metrics = Metrics()
        self.retry = False
        self.deadlines: list[int] = []
        self.on_timer_ready = 0

    def schedule_one(self) -> bool:
        if not self.queue.ready:
            return False
        self.queue.ready -= 1
        self.log.append(("cycle", self.backend.now))
        self.backend.queued += 1  # a binding: one watch event
        return True

    def next_timer_deadline(self) -> int | None:
        return self.deadlines[0] if self.deadlines else None

    def on_timer(self) -> None:
        self.log.append(("timer", self.backend.now))
        while self.deadlines and self.deadlines[0] <= self.backend.now:
            self.deadlines.pop(0)
            self.queue.ready += self.on_timer_ready

    def would_retry_on_a_changed_cluster(self) -> bool:
        return self.retry

    def pending_counts(self) -> dict[str, int]:
        return {"active": self.queue.ready}


def rig() -> tuple[Backend, Sched, list[tuple[str, int]]]:
    log: list[tuple[str, int]] = []
    backend = Backend(log)
    return backend, Sched(backend, log), log


def arrive(backend: Backend, sched: Sched, t: int, pods: int = 1) -> None:
    def action() -> None:
        sched.queue.ready += pods

    backend.at(t, action)


# --------------------------------------------------------------------------- the steps


def test_each_instant_delivers_before_scheduling_and_before_the_clock_moves() -> None:
    backend, sched, log = rig()
    arrive(backend, sched, 0, pods=2)
    arrive(backend, sched, 5 * S)
    stats = drive(backend, sched, RunStats())
    assert log == [
        ("flush", 0),  # the arrivals of t=0, before the first cycle
        ("cycle", 0),
        ("flush", 0),  # the binding
        ("cycle", 0),
        ("flush", 0),
        ("advance", 5 * S),
        ("flush", 5 * S),
        ("cycle", 5 * S),
        ("flush", 5 * S),
    ]
    assert (stats.cycles, stats.end_time, stats.stopped_by) == (3, 5 * S, "idle")
    assert sched.metrics.pending_pods == {"active": 0}


def test_cycle_cost_moves_the_clock_after_each_cycle() -> None:
    backend, sched, log = rig()
    arrive(backend, sched, 0, pods=3)
    stats = drive(backend, sched, RunStats(), cycle_cost=S // 1000)
    assert [t for what, t in log if what == "cycle"] == [0, S // 1000, 2 * S // 1000]
    assert stats.end_time == 3 * S // 1000


def test_stop_when_ends_the_run_after_a_cycle() -> None:
    backend, sched, _ = rig()
    arrive(backend, sched, 0, pods=5)
    stats = RunStats()
    drive(backend, sched, stats, stop_when=lambda: stats.cycles == 2)
    assert (stats.cycles, stats.stopped_by, sched.queue.ready) == (2, "done", 3)


def test_cycle_times_and_progress() -> None:
    backend, sched, _ = rig()
    arrive(backend, sched, 0, pods=2)
    arrive(backend, sched, 3 * S)
    times: list[float] = []
    seen: list[int] = []
    drive(backend, sched, RunStats(), cycle_times=times, on_advance=seen.append)
    assert len(times) == 3 and all(t >= 0 for t in times)
    assert seen == [3 * S]


def test_stats_accumulate_over_runs() -> None:
    # A benchmark runs twice (init, then measured) with one RunStats.
    backend, sched, _ = rig()
    stats = RunStats()
    arrive(backend, sched, 0)
    drive(backend, sched, stats)
    arrive(backend, sched, 0, pods=2)
    drive(backend, sched, stats)
    assert stats.cycles == 3


# --------------------------------------------------------------------------- the end


@dataclass(frozen=True)
class End:
    until: int | None
    retry: bool
    deadlines: tuple[int, ...]
    change_at: int | None
    horizon: int
    want_end: int
    want_by: str
    want_timers: int


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(End(None, False, (), None, DEFAULT_HORIZON, 0, "idle", 0), id="nothing left"),
        pytest.param(
            End(None, False, (10 * S,), None, DEFAULT_HORIZON, 0, "idle", 0),
            id="timers left but every retry would see the same cluster",
        ),
        pytest.param(
            End(None, True, (10 * S, 20 * S), None, DEFAULT_HORIZON, 20 * S, "idle", 2),
            id="timers retrying on a changed cluster run, then nothing is left",
        ),
        pytest.param(
            End(None, True, (10 * S,), None, 5 * S, 0, "horizon", 0),
            id="a timer beyond the horizon ends the run there",
        ),
        pytest.param(
            End(None, False, (), 9 * S, 5 * S, 0, "idle", 0),
            id="a change beyond the horizon is not waited for",
        ),
        pytest.param(
            End(30 * S, False, (10 * S,), None, DEFAULT_HORIZON, 30 * S, "until", 1),
            id="until: the timers keep running to the end, even with nothing to retry",
        ),
        pytest.param(
            End(30 * S, False, (), 40 * S, DEFAULT_HORIZON, 30 * S, "until", 0),
            id="until: a change after it is not applied",
        ),
        pytest.param(
            End(30 * S, False, (), 20 * S, DEFAULT_HORIZON, 30 * S, "until", 0),
            id="until: a change before it is applied",
        ),
    ],
)
def test_when_the_run_ends(case: End) -> None:
    backend, sched, log = rig()
    sched.retry = case.retry
    sched.deadlines = list(case.deadlines)
    applied: list[int] = []
    if case.change_at is not None:
        backend.at(case.change_at, lambda: applied.append(backend.now))
    stats = drive(backend, sched, RunStats(), until=case.until, horizon=case.horizon)
    assert (stats.end_time, stats.stopped_by) == (case.want_end, case.want_by)
    assert sum(1 for what, _ in log if what == "timer") == case.want_timers
    expect_applied = case.change_at is not None and case.change_at <= min(
        case.horizon if case.until is None else case.until, case.want_end
    )
    assert applied == ([case.change_at] if expect_applied else [])


def test_a_timer_that_makes_a_pod_poppable_gets_a_cycle_at_once() -> None:
    backend, sched, log = rig()
    sched.retry = True
    sched.deadlines = [10 * S]
    sched.on_timer_ready = 1
    stats = drive(backend, sched, RunStats())
    assert ("timer", 10 * S) in log and ("cycle", 10 * S) in log
    assert log.index(("timer", 10 * S)) < log.index(("cycle", 10 * S))
    assert stats.cycles == 1

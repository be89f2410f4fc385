"""The drive loop: a backend's changes, one kube-scheduler, the queue's timers.

At each instant of the backend's clock:

1. apply every cluster change due now (``Backend.run_due``) and deliver the
   resulting watch events (``Backend.flush``), so that objects created at the same
   instant are all queued, in input order, before the next cycle;
2. run one scheduling cycle if a pod can be popped, deliver its events, go back to
   1 (a cycle takes ``cycle_cost`` of the clock: 0 unless a benchmark paces
   arrivals against it);
3. otherwise run the queue's flushes if one is due, then advance the clock to the
   next cluster change or flush deadline.

The run ends at ``until`` if given (queue timers keep retrying until then);
without it, when no change is scheduled before the safety horizon, nothing can be
popped and every pod a queue timer would retry was last attempted after the
latest cluster change (``Scheduler.would_retry_on_a_changed_cluster``: upstream
would retry forever with the same answer); at the safety horizon; or when
``stop_when`` (checked after every cycle and before each wait) says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from kubesched.api.types import NANOS

DEFAULT_HORIZON = 24 * 3600 * NANOS


class _Queue(Protocol):
    def has_poppable(self) -> bool: ...


class _Metrics(Protocol):
    pending_pods: dict[str, int]


class SchedulerPort(Protocol):
    """What the loop needs of a scheduler (``kubesched.scheduler.scheduler.Scheduler``)."""

    @property
    def queue(self) -> _Queue: ...

    @property
    def metrics(self) -> _Metrics: ...

    def schedule_one(self) -> bool:
        """One scheduling cycle; False when no pod could be popped."""
        ...

    def next_timer_deadline(self) -> int | None:
        """When the queue's next periodic flush is due."""
        ...

    def on_timer(self) -> None:
        """Run the queue's flushes that are due."""
        ...

    def would_retry_on_a_changed_cluster(self) -> bool: ...

    def pending_counts(self) -> dict[str, int]: ...


class Backend(Protocol):
    """A cluster the loop drives: its clock, its pending changes, its watch events.
    ``flush`` delivers every event queued so far (and those deliveries cause) to the
    subscribers, in order; the loop flushes before it moves the clock."""

    @property
    def now(self) -> int:
        """The clock (integer nanoseconds of the run)."""
        ...

    def run_due(self) -> int:
        """Apply every change due at or before ``now``; how many there were."""
        ...

    def flush(self) -> int:
        """Deliver the queued watch events; how many there were."""
        ...

    def next_time(self) -> int | None:
        """When the next known change is due (None: none is scheduled)."""
        ...

    def advance(self, to: int) -> None:
        """Move the clock to ``to``."""
        ...


@dataclass(slots=True)
class RunStats:
    cycles: int = 0
    end_time: int = 0
    stopped_by: str = "idle"
    """``idle`` (nothing left to happen), ``until``, ``horizon`` or ``done``
    (``stop_when`` said so)."""


def drive(
    backend: Backend,
    sched: SchedulerPort,
    stats: RunStats,
    *,
    until: int | None = None,
    horizon: int = DEFAULT_HORIZON,
    cycle_cost: int = 0,
    cycle_times: list[float] | None = None,
    stop_when: Callable[[], bool] | None = None,
    on_advance: Callable[[int], None] | None = None,
) -> RunStats:
    """Run until the end (see the module docstring); ``stats`` is updated as the run
    goes (``stop_when`` may read ``stats.cycles``). ``cycle_times`` gets the wall
    seconds of every cycle; ``on_advance`` is called with the clock each time it
    moves to a new instant."""
    limit = horizon if until is None else until
    run_due = backend.run_due
    flush = backend.flush
    schedule_one = sched.schedule_one
    clock = time.perf_counter
    while True:
        run_due()
        flush()
        if cycle_times is not None:
            t0 = clock()
            ran = schedule_one()
            if ran:
                cycle_times.append(clock() - t0)
        else:
            ran = schedule_one()
        if ran:
            stats.cycles += 1
            flush()
            if cycle_cost:
                backend.advance(backend.now + cycle_cost)
            if stop_when is not None and stop_when():
                stats.stopped_by = "done"
                break
            continue
        now = backend.now
        deadline = sched.next_timer_deadline()
        if deadline is not None and deadline <= now:
            sched.on_timer()
            flush()
            if sched.queue.has_poppable():
                continue
            deadline = sched.next_timer_deadline()
            if deadline is not None and deadline <= now:
                deadline = None
        nxt = backend.next_time()
        if nxt is not None and nxt > limit:
            nxt = None  # beyond the run (a CronJob's next schedule weeks away, say)
        if nxt is None:
            # No cluster change is scheduled: only the queue's timers are left.
            if until is None and not sched.would_retry_on_a_changed_cluster():
                # Every retry they would make sees the cluster its pod saw.
                stats.stopped_by = "idle"
                break
            nxt = deadline
        elif deadline is not None:
            nxt = min(nxt, deadline)
        if nxt is None and until is None:
            stats.stopped_by = "idle"  # nothing at all is left to happen
            break
        if nxt is None or nxt > limit:
            if until is not None:
                backend.advance(limit)
            stats.stopped_by = "until" if until is not None else "horizon"
            break
        if stop_when is not None and stop_when():
            stats.stopped_by = "done"  # a live backend stops between cycles too
            break
        backend.advance(nxt)
        if on_advance is not None:
            on_advance(nxt)
    stats.end_time = backend.now
    sched.metrics.pending_pods = dict(sched.pending_counts())
    return stats

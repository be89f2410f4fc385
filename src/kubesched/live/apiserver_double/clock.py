"""Time for the API-server double: a real clock or one the test moves by hand.

Everything time-dependent in the double asks its clock. `now()` is seconds since
the Unix epoch; `schedule(when, fn)` runs `fn()` once the clock reaches `when` and
returns a handle for `cancel`; callbacks run with no clock lock held and must be
quick and non-blocking. `RealClock` runs them on a background thread at wall-clock
time. `ManualClock` never moves by itself: `advance(seconds)` runs every callback
that falls due, in time order (ties in scheduling order), each with `now()` equal
to its due time, then leaves the clock at the target time.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(order=True)
class TimerHandle:
    """One scheduled callback; compare by (due time, sequence)."""

    when: float
    seq: int
    fn: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)


class Clock(Protocol):
    """What the double needs from a clock."""

    def now(self) -> float: ...

    def schedule(self, when: float, fn: Callable[[], None]) -> TimerHandle: ...

    def cancel(self, handle: TimerHandle) -> None: ...

    def close(self) -> None: ...


class _TimerQueue:
    """A heap of TimerHandles guarded by a condition variable."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.heap: list[TimerHandle] = []
        self._seq = itertools.count()

    def push(self, when: float, fn: Callable[[], None]) -> TimerHandle:
        handle = TimerHandle(when, next(self._seq), fn)
        with self.cond:
            heapq.heappush(self.heap, handle)
            self.cond.notify_all()
        return handle

    def pop_due(self, now: float) -> TimerHandle | None:
        """The earliest live handle due at or before `now`, removed; else None."""
        with self.cond:
            while self.heap and self.heap[0].cancelled:
                heapq.heappop(self.heap)
            if self.heap and self.heap[0].when <= now:
                return heapq.heappop(self.heap)
            return None

    def next_due(self) -> float | None:
        with self.cond:
            while self.heap and self.heap[0].cancelled:
                heapq.heappop(self.heap)
            return self.heap[0].when if self.heap else None


class ManualClock:
    """A clock that only moves when the test calls `advance` or `set`."""

    def __init__(self, start: float = 1_795_000_000.0) -> None:
        self._now = start
        self._lock = threading.Lock()
        self._advance_lock = threading.Lock()
        self._timers = _TimerQueue()

    def now(self) -> float:
        with self._lock:
            return self._now

    def schedule(self, when: float, fn: Callable[[], None]) -> TimerHandle:
        return self._timers.push(when, fn)

    def cancel(self, handle: TimerHandle) -> None:
        handle.cancelled = True

    def advance(self, seconds: float) -> None:
        """Move time forward by `seconds`, running due callbacks in order."""
        if seconds < 0:
            raise ValueError("a clock cannot go backwards")
        self.set(self.now() + seconds)

    def set(self, target: float) -> None:
        """Move time forward to `target` (no-op if it is in the past)."""
        with self._advance_lock:
            while True:
                handle = self._timers.pop_due(target)
                if handle is None:
                    break
                with self._lock:
                    self._now = max(self._now, handle.when)
                handle.fn()
            with self._lock:
                self._now = max(self._now, target)

    def close(self) -> None:
        """Nothing runs by itself, so there is nothing to stop."""


class RealClock:
    """Wall-clock time; callbacks run on one daemon thread when due."""

    def __init__(self) -> None:
        self._timers = _TimerQueue()
        self._closed = False
        self._thread = threading.Thread(
            target=self._run, name="apiserver-double-clock", daemon=True
        )
        self._thread.start()

    def now(self) -> float:
        return time.time()

    def schedule(self, when: float, fn: Callable[[], None]) -> TimerHandle:
        return self._timers.push(when, fn)

    def cancel(self, handle: TimerHandle) -> None:
        handle.cancelled = True

    def close(self) -> None:
        with self._timers.cond:
            self._closed = True
            self._timers.cond.notify_all()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            with self._timers.cond:
                if self._closed:
                    return
                due = self._timers.next_due()
                wait = None if due is None else max(0.0, due - time.time())
                if wait is None or wait > 0:
                    self._timers.cond.wait(timeout=wait)
                    continue
            handle = self._timers.pop_due(time.time())
            if handle is not None:
                handle.fn()

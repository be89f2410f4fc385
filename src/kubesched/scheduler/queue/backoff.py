"""backoffQ: pods waiting out their backoff (upstream backoff_queue.go, with
SchedulerPopFromBackoffQ on).

Two heaps: ``podBackoffQ`` for pods rejected by plugins (by backoff expiry, then,
within one 1-second window, by the QueueSort ``less``) and ``podErrorBackoffQ`` for
pods that came back with no rejecting plugin (by expiry; never popped early).

Backoff (getBackoffTime / calculateBackoffDuration): ``count =
consecutive_errors_count`` if > 0 else ``unschedulable_count``; none if ``count ==
0`` or ``max == 0``; else ``duration = min(initial << (count-1), max)`` (1, 2, 4, 8,
10, 10 s by default) and ``expiry = truncate(timestamp + duration, 1 s)``. A pod
backs off while ``expiry >= truncate(now, 1 s)``, so it completes at ``expiry + 1
s``, exactly when the aligned 1 s flush runs.
"""

from __future__ import annotations

from typing import Final

from kubesched.api.types import NANOS, Pod, Time
from kubesched.framework.ports import Clock
from kubesched.scheduler.queue.heap import KeyedHeap, SortKey
from kubesched.scheduler.queue.metrics import BACKOFF, QueueMetrics
from kubesched.scheduler.queue.queued_pod import QueuedPodInfo

ORDERING_WINDOW: Final = NANOS
"""backoffQOrderingWindowDuration = 1 s: width of the ordering window and the flush period."""

NO_BACKOFF: Final = -(1 << 62)
"""Expiry of a pod that owes no backoff (upstream's zero time.Time): before any real time."""


def align_to_window(t: Time) -> Time:
    """Truncate to the start of its 1 s window (Go ``Time.Truncate``: floor)."""
    return t - t % ORDERING_WINDOW


def backoff_duration(count: int, initial: int, maximum: int) -> int:
    """``min(initial << (count-1), maximum)`` without overflow; 0 when ``count == 0``."""
    if count <= 0:
        return 0
    shift = count - 1
    if initial > maximum >> shift:
        return maximum
    return initial << shift


class BackoffQueue:
    """The pair of backoff heaps. Every method is O(log n) except the flush."""

    def __init__(
        self,
        clock: Clock,
        initial_backoff: int,
        max_backoff: int,
        active_key: SortKey,
        metrics: QueueMetrics,
    ) -> None:
        self._clock = clock
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self._metrics = metrics
        # Rejected pods: expiry window, then the activeQ order, so that popping
        # from the backoffQ when activeQ is empty favours high priority.
        self._backoff = KeyedHeap(lambda p: (self.backoff_time(p), active_key(p)))
        # Errored pods: expiry only (ties by timestamp-assignment order).
        self._error = KeyedHeap(lambda p: (self.backoff_time(p), p.seq))

    # -- backoff arithmetic ---------------------------------------------------
    def backoff_time(self, pinfo: QueuedPodInfo) -> Time:
        """When ``pinfo``'s backoff ends (window-aligned), cached in ``backoff_expiration``."""
        if self.max_backoff == 0:
            return NO_BACKOFF
        count = pinfo.consecutive_errors_count or pinfo.unschedulable_count
        if count == 0:
            return NO_BACKOFF
        if pinfo.backoff_expiration is None:
            duration = backoff_duration(count, self.initial_backoff, self.max_backoff)
            pinfo.backoff_expiration = align_to_window(pinfo.timestamp + duration)
        return pinfo.backoff_expiration

    def is_backing_off(self, pinfo: QueuedPodInfo) -> bool:
        """True while the expiry is in the current window or later."""
        return self.backoff_time(pinfo) >= align_to_window(self._clock.now())

    def next_completion(self) -> Time | None:
        """The earliest time at which some pod here completes its backoff."""
        best: Time | None = None
        for heap in (self._backoff, self._error):
            head = heap.peek()
            if head is not None:
                t = self.backoff_time(head) + ORDERING_WINDOW
                if best is None or t < best:
                    best = t
        return best

    # -- content ---------------------------------------------------------------
    def add(self, pinfo: QueuedPodInfo, event: str) -> None:
        """Into the error heap if no plugin rejected the pod, else the backoff heap."""
        key = pinfo.key
        if not pinfo.unschedulable_plugins and not pinfo.pending_plugins:
            self._error.add_or_update(pinfo)
            if self._backoff.delete(key) is not None:
                return  # upstream logs an error and skips the metric
        else:
            self._backoff.add_or_update(pinfo)
            if self._error.delete(key) is not None:
                return
        self._metrics.incoming(BACKOFF, event, pinfo)

    def update(self, new_pod: Pod, key: str) -> QueuedPodInfo | None:
        """Take ``new_pod`` if its pod is here; returns the updated entry."""
        for heap in (self._backoff, self._error):
            pinfo = heap.get(key)
            if pinfo is not None:
                pinfo.update(new_pod)
                heap.fix(key)
                return pinfo
        return None

    def delete(self, key: str) -> QueuedPodInfo | None:
        pinfo = self._backoff.delete(key)
        if pinfo is None:
            pinfo = self._error.delete(key)
        return pinfo

    def get(self, key: str) -> QueuedPodInfo | None:
        pinfo = self._backoff.get(key)
        return pinfo if pinfo is not None else self._error.get(key)

    def has(self, key: str) -> bool:
        return self._backoff.has(key) or self._error.has(key)

    def pop_backoff(self) -> QueuedPodInfo | None:
        """Head of the rejected-pods heap, expired or not (PopFromBackoffQ)."""
        return self._backoff.pop()

    def len_backoff(self) -> int:
        return len(self._backoff)

    def __len__(self) -> int:
        return len(self._backoff) + len(self._error)

    def pods(self) -> list[QueuedPodInfo]:
        return [*self._backoff, *self._error]

    def pop_all_completed(self) -> list[QueuedPodInfo]:
        """Pop every pod whose backoff completed: the backoff heap first, then errors."""
        out: list[QueuedPodInfo] = []
        for heap in (self._backoff, self._error):
            while (head := heap.peek()) is not None and not self.is_backing_off(head):
                heap.pop()
                out.append(head)
        return out

"""activeQ plus the in-flight bookkeeping (upstream active_queue.go).

activeQ is a heap ordered by the QueueSort ``less``. Popping a pod makes it
*in flight* until ``done(uid)``: while any pod is in flight, the cluster
events the queue receives are appended to one log, interleaved with a marker
per popped pod. When an in-flight pod comes back unschedulable, the events
logged after its marker are replayed through its rejector plugins' hints.
Events before the oldest in-flight pod are pruned as pods finish.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice

from kubesched.api.types import Pod
from kubesched.framework.events import ClusterEvent, EventObject
from kubesched.scheduler.queue.backoff import BackoffQueue
from kubesched.scheduler.queue.events import POP_FROM_BACKOFF_Q
from kubesched.scheduler.queue.heap import KeyedHeap, SortKey
from kubesched.scheduler.queue.metrics import ACTIVE, QueueMetrics
from kubesched.scheduler.queue.queued_pod import QueuedPodInfo


@dataclass(frozen=True, slots=True)
class InFlightEvent:
    """A cluster event received while some pod was in flight (upstream clusterEvent)."""

    event: ClusterEvent
    old: EventObject
    new: EventObject


_LogEntry = InFlightEvent | Pod | None
"""An event, the marker of a popped pod (the Pod as popped), or a removed marker."""


class ActiveQueue:
    def __init__(
        self, sort_key: SortKey, backoff: BackoffQueue | None, metrics: QueueMetrics
    ) -> None:
        self._heap = KeyedHeap(sort_key)
        self._backoff = backoff
        """Popped from when activeQ is empty (SchedulerPopFromBackoffQ); None disables it."""
        self._metrics = metrics
        self.scheduling_cycle = 0
        """Incremented on every successful pop."""
        self._log: deque[_LogEntry] = deque()
        self._log_base = 0
        """Absolute position of ``_log[0]``."""
        self._in_flight: dict[str, int] = {}
        """Pod UID -> absolute position of its marker in the log."""

    # -- the heap ----------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._heap)

    def has(self, key: str) -> bool:
        return self._heap.has(key)

    def get(self, key: str) -> QueuedPodInfo | None:
        return self._heap.get(key)

    def pods(self) -> list[QueuedPodInfo]:
        return list(self._heap)

    def add(self, pinfo: QueuedPodInfo, event: str) -> None:
        self._heap.add_or_update(pinfo)
        self._metrics.incoming(ACTIVE, event, pinfo)

    def update(self, new_pod: Pod, key: str) -> QueuedPodInfo | None:
        pinfo = self._heap.get(key)
        if pinfo is None:
            return None
        pinfo.update(new_pod)
        self._heap.fix(key)
        return pinfo

    def delete(self, key: str) -> QueuedPodInfo | None:
        return self._heap.delete(key)

    def pop(self) -> QueuedPodInfo | None:
        """Head of activeQ, else of the backoff heap, else None; makes it in flight (a
        pod already in flight, a bug elsewhere, is discarded, as upstream does)."""
        while True:
            pinfo = self._heap.pop()
            if pinfo is None:
                if self._backoff is None or self._backoff.len_backoff() == 0:
                    return None
                pinfo = self._backoff.pop_backoff()
                assert pinfo is not None
                self._metrics.incoming(ACTIVE, POP_FROM_BACKOFF_Q, pinfo)
            pinfo.attempts += 1
            uid = pinfo.pod.uid
            if uid in self._in_flight:
                continue
            self._in_flight[uid] = self._append(pinfo.pod)
            self.scheduling_cycle += 1
            for plugin in pinfo.rejector_plugins():
                self._metrics.unschedulable_reason(plugin, -1)
            return pinfo

    # -- in-flight bookkeeping -------------------------------------------------
    def in_flight_pods(self) -> list[Pod]:
        out: list[Pod] = []
        for pos in self._in_flight.values():
            entry = self._log[pos - self._log_base]
            assert isinstance(entry, Pod)
            out.append(entry)
        return out

    def in_flight_log(self) -> list[InFlightEvent | Pod]:
        """Markers and events in arrival order (for tests and debugging)."""
        return [e for e in self._log if e is not None]

    def add_events_if_pod_in_flight(
        self, old: Pod | None, new: Pod, events: Iterable[ClusterEvent]
    ) -> bool:
        """Log ``events`` (with old/new pod) if ``new`` is in flight; True if it is."""
        if new.uid not in self._in_flight:
            return False
        for ev in events:
            self._append(InFlightEvent(ev, old, new))
        return True

    def add_event_if_any_in_flight(
        self, old: EventObject, new: EventObject, event: ClusterEvent
    ) -> bool:
        if not self._in_flight:
            return False
        self._append(InFlightEvent(event, old, new))
        return True

    def events_for_pod(self, uid: str) -> list[InFlightEvent] | None:
        """Events logged after ``uid`` was popped; None if it is not in flight."""
        pos = self._in_flight.get(uid)
        if pos is None:
            return None
        tail = islice(self._log, pos - self._log_base + 1, None)
        return [e for e in tail if isinstance(e, InFlightEvent)]

    def done(self, uid: str) -> None:
        """The pod's scheduling attempt is over: drop its marker and prune old events."""
        pos = self._in_flight.pop(uid, None)
        if pos is None:
            return
        self._log[pos - self._log_base] = None
        log = self._log
        # Events older than the oldest remaining in-flight pod are never needed.
        while log and not isinstance(log[0], Pod):
            log.popleft()
            self._log_base += 1

    def _append(self, entry: InFlightEvent | Pod) -> int:
        self._log.append(entry)
        return self._log_base + len(self._log) - 1

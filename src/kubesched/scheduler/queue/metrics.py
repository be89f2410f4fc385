"""A plain, dict-based recorder of the queue's metrics.

- ``incoming_pods[(queue, event)]``: upstream counter
  ``scheduler_queue_incoming_pods_total{queue, event}`` (queue is "active",
  "backoff" or "unschedulable"; event is a cluster-event label or one of the
  queue's own labels such as "ScheduleAttemptFailure").
- ``unschedulable_reasons[plugin]``: upstream gauge
  ``scheduler_unschedulable_pods{plugin}``, moved at the same points as
  upstream (+1 per rejector plugin on requeue and per PreEnqueue rejection,
  -1 per rejector plugin on pop).

The pending-pods gauge (``scheduler_pending_pods{queue}``) is
``SchedulingQueue.pending_pods()``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from kubesched.scheduler.queue.queued_pod import QueuedPodInfo

ACTIVE: Final = "active"
BACKOFF: Final = "backoff"
UNSCHEDULABLE: Final = "unschedulable"
GATED: Final = "gated"


QueueObserver = Callable[[str, str, "QueuedPodInfo"], None]
"""Told every move of a pod into a queue: (queue, event label, the pod's entry);
queue is "gated" for a pod the pool keeps because PreEnqueue rejected it."""


class QueueMetrics:
    __slots__ = ("incoming_pods", "observer", "unschedulable_reasons")

    def __init__(self) -> None:
        self.incoming_pods: dict[tuple[str, str], int] = {}
        self.unschedulable_reasons: dict[str, int] = {}
        self.observer: QueueObserver | None = None
        """Told each move (explanations' queue timeline; None: nobody)."""

    def incoming(self, queue: str, event: str, pinfo: QueuedPodInfo) -> None:
        k = (queue, event)
        self.incoming_pods[k] = self.incoming_pods.get(k, 0) + 1
        if self.observer is not None:
            gated = queue == UNSCHEDULABLE and pinfo.gated()
            self.observer(GATED if gated else queue, event, pinfo)

    def unschedulable_reason(self, plugin: str, delta: int) -> None:
        self.unschedulable_reasons[plugin] = self.unschedulable_reasons.get(plugin, 0) + delta

"""A plain, dict-based recorder of the queue's metrics.

- ``incoming_pods[(queue, event)]``: upstream counter
  ``scheduler_queue_incoming_pods_total{queue, event}`` (queue is "active",
  "backoff" or "unschedulable"; event is a cluster-event label or one of the
  queue's own labels such as "ScheduleAttemptFailure").
- ``unschedulable_reasons[plugin]``: upstream gauge
  ``scheduler_unschedulable_pods{plugin}``, moved at the same points as
  upstream (+1 per rejector plugin on requeue and per PreEnqueue rejection,
  -1 per rejector plugin on pop).

The pending-pods gauge (``scheduler_pending_pods{queue}``) is not stored: read
``SchedulingQueue.pending_pods()``. The lead maps these onto Prometheus names.
"""

from __future__ import annotations

from typing import Final

ACTIVE: Final = "active"
BACKOFF: Final = "backoff"
UNSCHEDULABLE: Final = "unschedulable"
GATED: Final = "gated"


class QueueMetrics:
    __slots__ = ("incoming_pods", "unschedulable_reasons")

    def __init__(self) -> None:
        self.incoming_pods: dict[tuple[str, str], int] = {}
        self.unschedulable_reasons: dict[str, int] = {}

    def incoming(self, queue: str, event: str) -> None:
        k = (queue, event)
        self.incoming_pods[k] = self.incoming_pods.get(k, 0) + 1

    def unschedulable_reason(self, plugin: str, delta: int) -> None:
        self.unschedulable_reasons[plugin] = self.unschedulable_reasons.get(plugin, 0) + delta

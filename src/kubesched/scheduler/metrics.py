"""Scheduler metrics under upstream's names (pkg/scheduler/metrics/metrics.go).

Counters and histograms keyed by label values; ``snapshot()`` is the JSON form.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Final

from kubesched.framework.nodetable import NodeTable

SCHEDULE_ATTEMPTS: Final = "scheduler_schedule_attempts_total"
PENDING_PODS: Final = "scheduler_pending_pods"
PREEMPTION_ATTEMPTS: Final = "scheduler_preemption_attempts_total"
PREEMPTION_VICTIMS: Final = "scheduler_preemption_victims"
POD_SCHEDULING_ATTEMPTS: Final = "scheduler_pod_scheduling_attempts"
QUEUE_INCOMING_PODS: Final = "scheduler_queue_incoming_pods_total"

RESULT_SCHEDULED: Final = "scheduled"
RESULT_UNSCHEDULABLE: Final = "unschedulable"
RESULT_ERROR: Final = "error"

VICTIM_BUCKETS: Final = (1, 2, 4, 8, 16, 32, 64)
ATTEMPT_BUCKETS: Final = (1, 2, 4, 8, 16)


class Histogram:
    __slots__ = ("buckets", "count", "counts", "sum")

    def __init__(self, buckets: tuple[int, ...]) -> None:
        self.buckets = buckets
        self.counts = [0] * len(buckets)
        self.count = 0
        self.sum = 0.0

    def observe(self, v: float) -> None:
        self.count += 1
        self.sum += v
        for i, b in enumerate(self.buckets):
            if v <= b:
                self.counts[i] += 1

    def as_dict(self) -> dict[str, object]:
        s: float | int = int(self.sum) if float(self.sum).is_integer() else self.sum
        return {
            "count": self.count,
            "sum": s,
            "buckets": {str(b): c for b, c in zip(self.buckets, self.counts, strict=True)},
        }


class Metrics:
    def __init__(self) -> None:
        self.schedule_attempts: dict[str, int] = {
            RESULT_SCHEDULED: 0,
            RESULT_UNSCHEDULABLE: 0,
            RESULT_ERROR: 0,
        }
        self.schedule_attempts_by_profile: dict[tuple[str, str], int] = defaultdict(int)
        self.preemption_attempts = 0
        self.preemption_victims_histogram = Histogram(VICTIM_BUCKETS)
        self.pod_scheduling_attempts = Histogram(ATTEMPT_BUCKETS)
        self.queue_incoming: dict[tuple[str, str], int] = defaultdict(int)
        self.pending_pods: dict[str, int] = {
            "active": 0,
            "backoff": 0,
            "unschedulable": 0,
            "gated": 0,
        }

    def schedule_attempt(self, result: str, profile: str) -> None:
        self.schedule_attempts[result] += 1
        self.schedule_attempts_by_profile[(result, profile)] += 1

    def preemption_attempt(self) -> None:
        self.preemption_attempts += 1

    def preemption_victims(self, n: int) -> None:
        self.preemption_victims_histogram.observe(n)

    def incoming(self, queue: str, event: str) -> None:
        self.queue_incoming[(queue, event)] += 1

    def snapshot(self) -> dict[str, object]:
        return {
            PREEMPTION_ATTEMPTS: self.preemption_attempts,
            PREEMPTION_VICTIMS: self.preemption_victims_histogram.as_dict(),
            SCHEDULE_ATTEMPTS: dict(self.schedule_attempts),
            PENDING_PODS: dict(self.pending_pods),
            POD_SCHEDULING_ATTEMPTS: self.pod_scheduling_attempts.as_dict(),
        }


def row_answer_flushes(table: NodeTable) -> dict[str, dict[str, int]]:
    """Counter ``scheduler_row_answer_flushes_total`` of ``table``: cache -> reason
    (``row_answers.FLUSH_REASONS``) -> count. Not in ``snapshot()``: the counts follow
    the execution path (per-node or vectorised), not the decisions."""
    out: dict[str, dict[str, int]] = {}
    for (cache, reason), n in sorted(table.row_answer_flushes.items()):
        out.setdefault(cache, {})[reason] = n
    return out

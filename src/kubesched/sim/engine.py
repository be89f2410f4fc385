"""A tiny deterministic discrete-event engine: a heap of (time, priority, seq, action).

Equal times run in priority order, then in the order they were scheduled
(``seq``), so a run is reproducible. Times are integer nanoseconds.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Final

Action = Callable[[], None]

PRIO_ADMISSION: Final = -1
"""PriorityClass creations and deletions: before any other object of the same instant."""
PRIO_CLUSTER: Final = 0
"""Object creations, deletions, completions, grace-period expiries."""
PRIO_LATE: Final = 1
"""Things that must see every cluster change of the same instant first."""


class Engine:
    def __init__(self) -> None:
        self.now = 0
        self._heap: list[tuple[int, int, int, Action]] = []
        self._seq = 0

    def at(self, time: int, action: Action, priority: int = PRIO_CLUSTER) -> None:
        """Schedule ``action`` at ``time`` (never in the past)."""
        time = max(time, self.now)
        self._seq += 1
        heapq.heappush(self._heap, (time, priority, self._seq, action))

    def after(self, delay: int, action: Action, priority: int = PRIO_CLUSTER) -> None:
        self.at(self.now + delay, action, priority)

    def next_time(self) -> int | None:
        return self._heap[0][0] if self._heap else None

    def run_due(self) -> int:
        """Run every action due at or before ``now`` (including ones they schedule
        for ``now``); returns how many ran."""
        n = 0
        heap = self._heap
        while heap and heap[0][0] <= self.now:
            _, _, _, action = heapq.heappop(heap)
            action()
            n += 1
        return n

    def __len__(self) -> int:
        return len(self._heap)

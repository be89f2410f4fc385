"""KeyedHeap: a min-heap of QueuedPodInfo indexed by pod key.

Upstream's ``backend/heap`` operations, from ``heapq`` (C) with lazy deletion: a
removed or replaced entry is marked dead and skipped when it reaches the top.
Items are ordered by ``sort_key(item)``, computed at push, so what it reads must
not change while the item is in (the queue re-pushes updated pods); keys must be
unique (the queue appends a sequence number), so pop order never depends on the
heap's layout.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterator
from typing import Any

from kubesched.scheduler.queue.queued_pod import QueuedPodInfo

SortKey = Callable[[QueuedPodInfo], Any]

# An entry is [sort key, push counter, item, alive]; the counter keeps heapq
# from ever comparing items.
_Entry = list[Any]


class KeyedHeap:
    __slots__ = ("_counter", "_entries", "_heap", "_sort_key")

    def __init__(self, sort_key: SortKey) -> None:
        self._sort_key = sort_key
        self._heap: list[_Entry] = []
        self._entries: dict[str, _Entry] = {}
        self._counter = itertools.count()

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        """Items in no particular order (a snapshot)."""
        return iter([e[2] for e in self._entries.values()])

    def has(self, key: str) -> bool:
        return key in self._entries

    def get(self, key: str) -> QueuedPodInfo | None:
        e = self._entries.get(key)
        return None if e is None else e[2]

    def peek(self) -> QueuedPodInfo | None:
        h = self._heap
        while h and not h[0][3]:
            heapq.heappop(h)
        return h[0][2] if h else None

    def pop(self) -> QueuedPodInfo | None:
        h = self._heap
        while h:
            e = heapq.heappop(h)
            if e[3]:
                item: QueuedPodInfo = e[2]
                del self._entries[item.key]
                return item
        return None

    def add_or_update(self, item: QueuedPodInfo) -> None:
        """Insert, or replace the item with the same key (re-reading its sort key)."""
        key = item.key
        old = self._entries.get(key)
        if old is not None:
            old[3] = False
        e = [self._sort_key(item), next(self._counter), item, True]
        self._entries[key] = e
        heapq.heappush(self._heap, e)
        if len(self._heap) > 2 * len(self._entries) + 64:
            self._compact()

    def fix(self, key: str) -> None:
        """Re-read the sort key of the item after its inputs changed."""
        e = self._entries.get(key)
        if e is not None:
            self.add_or_update(e[2])

    def delete(self, key: str) -> QueuedPodInfo | None:
        e = self._entries.pop(key, None)
        if e is None:
            return None
        e[3] = False
        item: QueuedPodInfo = e[2]
        return item

    def _compact(self) -> None:
        self._heap = list(self._entries.values())
        heapq.heapify(self._heap)

"""The unschedulable pod pool (upstream unschedulable_pods.go).

A map ``namespace/name -> QueuedPodInfo`` of rejected and PreEnqueue-gated pods
(``pinfo.gated()``), with three indexes that spare scans of the pool: the gated
keys (``pending_pods()``), a lazy min-heap of the timestamps the 5-minute leftover
flush could move (``next_timer_deadline``), and rejector plugin -> pods (a cluster
event is offered only to pods whose rejectors registered it). The queue calls
``add_or_update`` (or ``refresh``) whenever a pod's gating may have changed.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterator, ValuesView

from kubesched.api.types import Pod, Time
from kubesched.scheduler.queue.metrics import UNSCHEDULABLE, QueueMetrics
from kubesched.scheduler.queue.queued_pod import QueuedPodInfo


class UnschedulablePods:
    def __init__(
        self, metrics: QueueMetrics, leftover_movable: Callable[[QueuedPodInfo], bool]
    ) -> None:
        self._map: dict[str, QueuedPodInfo] = {}
        self._gated: set[str] = set()
        self._metrics = metrics
        self._leftover_movable = leftover_movable
        self._ts_heap: list[tuple[Time, int, int, str, QueuedPodInfo]] = []
        self._push_seq = itertools.count()
        self._by_rejector: dict[str, dict[str, QueuedPodInfo]] = {}
        """Rejector plugin ("" for none) -> key -> pod, for the pods in the map."""
        self._rejectors_of: dict[str, frozenset[str]] = {}

    def __len__(self) -> int:
        return len(self._map)

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        """A snapshot of the pool (safe to mutate the pool while iterating)."""
        return iter(list(self._map.values()))

    def view(self) -> ValuesView[QueuedPodInfo]:
        """The pool's pods without a copy: do not change the pool while iterating."""
        return self._map.values()

    def get(self, pod: Pod) -> QueuedPodInfo | None:
        return self._map.get(pod.key)

    def get_key(self, key: str) -> QueuedPodInfo | None:
        """By ``namespace/name``."""
        return self._map.get(key)

    def add_or_update(self, pinfo: QueuedPodInfo, event: str) -> None:
        """Store ``pinfo``; the incoming-pods metric counts only new entries."""
        key = pinfo.key
        if key not in self._map:
            self._metrics.incoming(UNSCHEDULABLE, event, pinfo)
        self._map[key] = pinfo
        self._track(key, pinfo)

    def refresh(self, pinfo: QueuedPodInfo) -> None:
        """Re-read the gating state of ``pinfo`` if it is the stored entry."""
        key = pinfo.key
        if self._map.get(key) is pinfo:
            self._track(key, pinfo)

    def delete(self, pod: Pod) -> QueuedPodInfo | None:
        key = pod.key
        self._gated.discard(key)
        self._unindex(key)
        return self._map.pop(key, None)

    def rejected_by(self, plugins: tuple[str, ...]) -> list[QueuedPodInfo]:
        """The pods one of ``plugins`` rejected, and the pods with no rejector, each
        once, in a deterministic order (by plugin, then by entry into the pool)."""
        out: list[QueuedPodInfo] = []
        seen: set[str] = set()
        for plugin in ("", *plugins):
            for key, pinfo in self._by_rejector.get(plugin, {}).items():
                if key not in seen:
                    seen.add(key)
                    out.append(pinfo)
        return out

    def gated_count(self) -> int:
        return len(self._gated)

    def earliest_leftover_timestamp(self) -> Time | None:
        """Smallest timestamp among pods the leftover flush could move."""
        h = self._ts_heap
        while h:
            ts, _, _, key, pinfo = h[0]
            if (
                self._map.get(key) is pinfo
                and pinfo.timestamp == ts
                and self._leftover_movable(pinfo)
            ):
                return ts
            heapq.heappop(h)
        return None

    def _unindex(self, key: str) -> None:
        for plugin in self._rejectors_of.pop(key, ()):
            pods = self._by_rejector[plugin]
            del pods[key]
            if not pods:
                del self._by_rejector[plugin]

    def _track(self, key: str, pinfo: QueuedPodInfo) -> None:
        rejectors = frozenset(pinfo.rejector_plugins()) or frozenset(("",))
        if self._rejectors_of.get(key) != rejectors:
            self._unindex(key)
            self._rejectors_of[key] = rejectors
            for plugin in rejectors:
                self._by_rejector.setdefault(plugin, {})[key] = pinfo
        else:
            for plugin in rejectors:
                self._by_rejector[plugin][key] = pinfo
        if pinfo.gated():
            self._gated.add(key)
        else:
            self._gated.discard(key)
        if self._leftover_movable(pinfo):
            entry = (pinfo.timestamp, pinfo.seq, next(self._push_seq), key, pinfo)
            heapq.heappush(self._ts_heap, entry)
            if len(self._ts_heap) > 2 * len(self._map) + 64:
                self._compact()

    def _compact(self) -> None:
        self._ts_heap = [
            (p.timestamp, p.seq, next(self._push_seq), k, p)
            for k, p in self._map.items()
            if self._leftover_movable(p)
        ]
        heapq.heapify(self._ts_heap)

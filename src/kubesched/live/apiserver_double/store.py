"""The double's storage: an etcd-like revisioned key space plus a watch cache per store.

- One global revision (`rv`), bumped by every write (a delete included), carried
  as `metadata.resourceVersion`.
- Per key, the versions since the last compaction (`snapshot(rv)`; a revision
  below `compacted` is gone, as in etcd).
- Per store, a watch-cache window: recent events after `floor` can be replayed;
  older starts get `too old resource version: N (floor)`. The window starts at the
  store's (re)initialisation and moves as events fall out of its capacity (`floor`
  = oldest kept revision - 1, as upstream computes it) or a test expires it.
- `cache_rv[store]` is the watch cache's resourceVersion: the revision of the
  store's latest event, bumped to the global revision when a consistent read
  goes through the cache (upstream requests an etcd progress notification).
  `dispatched[store]` is the cacher's lastProcessedResourceVersion (0 after a
  restart until an event or a consistent read arrives): bookmarks carry it.

All methods take `lock` themselves; callers that need several steps to be
atomic (a read-modify-write, registering a watch against a snapshot) hold it.
"""

from __future__ import annotations

import copy
import threading
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]


@dataclass(frozen=True)
class StoreEvent:
    """A change as the watch cache records it."""

    type: str  # ADDED, MODIFIED, DELETED
    rv: int
    store: str
    key: str
    obj: Obj
    prev: Obj | None


class Store:
    """Revisioned objects, their history and the watch-cache windows."""

    def __init__(self, history_capacity: int = 100_000, start_rv: int = 1) -> None:
        self.lock = threading.RLock()
        self.rv = start_rv
        self.compacted = 0
        self.history_capacity = history_capacity
        self.objects: dict[str, dict[str, Obj]] = defaultdict(dict)
        self.versions: dict[str, dict[str, list[tuple[int, Obj | None]]]] = defaultdict(
            lambda: defaultdict(list)
        )
        self.history: dict[str, deque[StoreEvent]] = defaultdict(deque)
        self.floor: dict[str, int] = defaultdict(lambda: start_rv)
        self.cache_rv: dict[str, int] = defaultdict(lambda: start_rv)
        self.dispatched: dict[str, int] = defaultdict(lambda: start_rv)
        self.listeners: list[Callable[[StoreEvent], None]] = []

    # -- reads ---------------------------------------------------------------

    def get(self, store: str, key: str) -> Obj | None:
        with self.lock:
            obj = self.objects[store].get(key)
            return copy.deepcopy(obj) if obj is not None else None

    def items(self, store: str) -> list[tuple[str, Obj]]:
        """Current objects sorted by key (deep copies)."""
        with self.lock:
            return [(k, copy.deepcopy(v)) for k, v in sorted(self.objects[store].items())]

    def snapshot(self, store: str, rv: int) -> list[tuple[str, Obj]]:
        """Objects as they were at revision `rv`, sorted by key."""
        with self.lock:
            out: list[tuple[str, Obj]] = []
            for key, versions in self.versions[store].items():
                live: Obj | None = None
                found = False
                for vrv, obj in versions:
                    if vrv <= rv:
                        live, found = obj, True
                    else:
                        break
                if found and live is not None:
                    out.append((key, copy.deepcopy(live)))
            out.sort(key=lambda kv: kv[0])
            return out

    # -- writes --------------------------------------------------------------

    def _next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def put(self, store: str, key: str, obj: Obj) -> Obj:
        """Create or replace `key`; returns the stored copy with its new resourceVersion."""
        with self.lock:
            rv = self._next_rv()
            stored = copy.deepcopy(obj)
            stored.setdefault("metadata", {})["resourceVersion"] = str(rv)
            prev = self.objects[store].get(key)
            self.objects[store][key] = stored
            self.versions[store][key].append((rv, stored))
            self._record(StoreEvent("MODIFIED" if prev else "ADDED", rv, store, key, stored, prev))
            return copy.deepcopy(stored)

    def remove(self, store: str, key: str) -> Obj:
        """Delete `key`; returns its last state with the delete's resourceVersion."""
        with self.lock:
            prev = self.objects[store].pop(key)
            rv = self._next_rv()
            gone = copy.deepcopy(prev)
            gone["metadata"]["resourceVersion"] = str(rv)
            self.versions[store][key].append((rv, None))
            self._record(StoreEvent("DELETED", rv, store, key, gone, prev))
            return copy.deepcopy(gone)

    def _record(self, event: StoreEvent) -> None:
        hist = self.history[event.store]
        hist.append(event)
        while len(hist) > self.history_capacity:
            hist.popleft()
            self.floor[event.store] = hist[0].rv - 1
        self.cache_rv[event.store] = event.rv
        self.dispatched[event.store] = event.rv
        for listener in list(self.listeners):
            listener(event)

    # -- watch cache ---------------------------------------------------------

    def events_since(self, store: str, rv: int) -> list[StoreEvent] | None:
        """Events after `rv`, or None when `rv` is older than the window (too old)."""
        with self.lock:
            if rv < self.floor[store]:
                return None
            return [e for e in self.history[store] if e.rv > rv]

    def consistent_read(self, store: str) -> int:
        """A read at the current revision through the cache: the cache catches up."""
        with self.lock:
            self.cache_rv[store] = self.rv
            self.dispatched[store] = self.rv
            return self.rv

    def set_window(self, store: str, floor: int) -> None:
        """Forget the store's events up to `floor`: older watch starts become too old."""
        with self.lock:
            hist = self.history[store]
            while hist and hist[0].rv <= floor:
                hist.popleft()
            self.floor[store] = floor

    def reinitialise_caches(self) -> None:
        """As after an API-server restart: every watch cache relists at the current revision."""
        with self.lock:
            for store in set(self.history) | set(self.objects) | set(self.floor):
                self.history[store].clear()
                self.floor[store] = self.rv
                self.cache_rv[store] = self.rv
                self.dispatched[store] = 0

    def compact(self, rv: int | None = None) -> int:
        """etcd compaction at `rv` (default: now): exact reads before it become 410."""
        with self.lock:
            target = self.rv if rv is None else rv
            self.compacted = max(self.compacted, target)
            for per_key in self.versions.values():
                for key in list(per_key):
                    versions = per_key[key]
                    older = [i for i, (vrv, _) in enumerate(versions) if vrv <= self.compacted]
                    if len(older) > 1:
                        del versions[: older[-1]]
                    if versions and versions[-1][1] is None and versions[-1][0] <= self.compacted:
                        del per_key[key]
            return self.compacted

"""Watch streams: what each open watch receives, and when bookmarks go out.

A `WatchSession` is one open watch: the store `offer`s it every change (under its
lock) and the session queues ADDED/MODIFIED/DELETED by whether the object passes
its selectors before and after (cacheWatcher.convertToWatchEvent), or `("end",)`
(deadline: finish the stream cleanly) or `("cut",)` (drop the connection).

`WatchHub` keeps the cacher's bookmark schedule: watchers in one-second buckets
from the hub's creation, popped by a tick every second; a watcher's next bookmark
is `min(now + bookmarkFrequency, deadline - 2s)` (none if past). A popped watcher
gets a BOOKMARK at the store's last dispatched revision only if it is newer than
its stream's start (upstream's process()); otherwise it is re-queued.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

from kubesched.live.apiserver_double.clock import Clock, TimerHandle
from kubesched.live.apiserver_double.selectors import FieldSelector, LabelSelector
from kubesched.live.apiserver_double.store import Store, StoreEvent

Obj = dict[str, Any]
Item = tuple[Any, ...]


class WatchSession:
    """One open watch on one store."""

    def __init__(
        self,
        store: str,
        namespace: str,
        labels: LabelSelector,
        fields: FieldSelector,
        present: Callable[[Obj], Obj],
        bookmark_object: Callable[[int, bool], Obj],
        allow_bookmarks: bool,
        deadline: float,
        base_rv: int,
    ) -> None:
        self.store = store
        self.namespace = namespace
        self.labels = labels
        self.fields = fields
        self.present = present
        self.bookmark_object = bookmark_object
        self.allow_bookmarks = allow_bookmarks
        self.deadline = deadline
        self.base_rv = base_rv
        self.items: queue.Queue[Item] = queue.Queue()
        self.closed = False
        self.stalled = False
        self._held: list[Item] = []
        self._lock = threading.Lock()
        self.deadline_timer: TimerHandle | None = None

    # -- matching --------------------------------------------------------------

    def _in_scope(self, key: str) -> bool:
        return not self.namespace or key.startswith(self.namespace + "/")

    def passes(self, obj: Obj) -> bool:
        meta = obj.get("metadata") or {}
        return self.labels.matches(meta.get("labels")) and self.fields.matches(obj)

    # -- feeding ---------------------------------------------------------------

    def emit(self, event_type: str, obj: Obj) -> None:
        self._put(("event", {"type": event_type, "object": self.present(obj)}))

    def offer(self, event: StoreEvent) -> None:
        """Deliver a store change if this watch sees it (called under the store lock)."""
        if self.closed or event.store != self.store or not self._in_scope(event.key):
            return
        cur = event.type != "DELETED" and self.passes(event.obj)
        old = event.prev is not None and self.passes(event.prev)
        if cur and not old:
            self.emit("ADDED", event.obj)
        elif cur and old:
            self.emit("MODIFIED", event.obj)
        elif old:
            gone = dict(event.prev or {})
            gone["metadata"] = {**gone.get("metadata", {}), "resourceVersion": str(event.rv)}
            self.emit("DELETED", gone)

    def offer_bookmark(self, rv: int, initial_events_end: bool = False) -> bool:
        if self.closed or not self.allow_bookmarks:
            return False
        if not initial_events_end and rv <= self.base_rv:
            return False
        self._put(
            ("event", {"type": "BOOKMARK", "object": self.bookmark_object(rv, initial_events_end)})
        )
        return True

    def error(self, status: Obj) -> None:
        """An ERROR event (e.g. 410 Expired), after which the stream ends."""
        self._put(("event", {"type": "ERROR", "object": status}))
        self.end()

    def end(self) -> None:
        self._put(("end",), force=True)
        self.closed = True

    def cut(self) -> None:
        self._put(("cut",), force=True)
        self.closed = True

    def stall(self) -> None:
        with self._lock:
            self.stalled = True

    def resume(self) -> None:
        with self._lock:
            self.stalled = False
            held, self._held = self._held, []
        for item in held:
            self.items.put(item)

    def _put(self, item: Item, force: bool = False) -> None:
        if self.closed and not force:
            return
        with self._lock:
            if self.stalled and not force:
                self._held.append(item)
                return
        self.items.put(item)


class WatchHub:
    """Open watches of one server, and the bookmark ticker."""

    def __init__(self, store: Store, clock: Clock, bookmark_frequency: float = 60.0) -> None:
        self.store = store
        self.clock = clock
        self.bookmark_frequency = bookmark_frequency
        self.sessions: set[WatchSession] = set()
        self._created = clock.now()
        self._start_bucket = 0
        self._buckets: dict[int, list[WatchSession]] = {}
        self._stopped = False
        self._tick_timer: TimerHandle | None = None
        store.listeners.append(self._dispatch)

    def _dispatch(self, event: StoreEvent) -> None:
        for session in list(self.sessions):
            session.offer(event)

    def add(self, session: WatchSession) -> None:
        """Register an open watch (call under the store lock, after its initial events)."""
        with self.store.lock:
            self.sessions.add(session)
            session.deadline_timer = self.clock.schedule(
                session.deadline, lambda: self.close(session)
            )
            if session.allow_bookmarks:
                self._queue_bookmark(session, self.clock.now())

    def close(self, session: WatchSession, cut: bool = False) -> None:
        with self.store.lock:
            self.sessions.discard(session)
        if session.deadline_timer is not None:
            self.clock.cancel(session.deadline_timer)
        if cut:
            session.cut()
        else:
            session.end()

    def _next_bookmark(self, session: WatchSession, now: float) -> float | None:
        heartbeat = now + self.bookmark_frequency
        pretimeout = session.deadline - 2.0
        heartbeat = min(heartbeat, pretimeout)
        return None if heartbeat < now else heartbeat

    def _queue_bookmark(self, session: WatchSession, now: float) -> None:
        when = self._next_bookmark(session, now)
        if when is None:
            return
        # Ticks are aligned to whole seconds since creation and only scheduled while
        # some watcher waits; the buckets up to the current second count as popped.
        self._start_bucket = max(self._start_bucket, int((now - self._created) // 1.0) + 1)
        bucket = max(int((when - self._created) // 1.0), self._start_bucket)
        self._buckets.setdefault(bucket, []).append(session)
        self._arm()

    def _arm(self) -> None:
        if not self._buckets or self._stopped:
            return
        due = self._created + min(self._buckets)
        if self._tick_timer is not None and not self._tick_timer.cancelled:
            if self._tick_timer.when <= due:
                return
            self.clock.cancel(self._tick_timer)
        self._tick_timer = self.clock.schedule(due, self._tick)

    def _tick(self) -> None:
        now = self.clock.now()
        with self.store.lock:
            if self._stopped:
                return
            current = int((now - self._created) // 1.0)
            due: list[WatchSession] = []
            for bucket in sorted(b for b in self._buckets if b <= current):
                due.extend(self._buckets.pop(bucket))
            self._start_bucket = max(self._start_bucket, current + 1)
            self._tick_timer = None
            for session in due:
                if session.closed or session not in self.sessions:
                    continue
                rv = self.store.dispatched[session.store]
                if rv:
                    session.offer_bookmark(rv)
                self._queue_bookmark(session, now)
            self._arm()

    def bookmark_now(self, store: str | None = None) -> int:
        """Send every bookmark-allowing watch (of `store`) a bookmark now; count sent."""
        sent = 0
        with self.store.lock:
            for session in list(self.sessions):
                if store is None or session.store == store:
                    rv = self.store.dispatched[session.store]
                    if rv and session.offer_bookmark(rv):
                        sent += 1
        return sent

    def matching(self, store: str | None) -> list[WatchSession]:
        with self.store.lock:
            return [s for s in self.sessions if store is None or s.store == store]

    def stop(self) -> None:
        with self.store.lock:
            self._stopped = True
            sessions = list(self.sessions)
        if self._tick_timer is not None:
            self.clock.cancel(self._tick_timer)
        for session in sessions:
            self.close(session, cut=True)

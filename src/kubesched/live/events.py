"""Events sent as client-go's events/v1 broadcaster sends them
(k8s.io/client-go/tools/events): queued by the recorder, written by one
background thread, repeated events aggregated into a series.

Contract (``EventBroadcaster``):

- ``record(event, now)`` only queues the events.k8s.io/v1 Event (any thread;
  ``now``: when it was observed, ns). When ``MAX_QUEUED`` events wait already it
  is dropped and counted in ``dropped`` (upstream's DropIfChannelFull); after
  ``shutdown`` every event is dropped.
- The sender thread (started by the first ``record``) writes each event in
  arrival order through its ``KubeClient`` (the event client: its own rate
  limiter). An event isomorphic to one seen before (the same type, action,
  reason, reporting controller and instance, regarding and related objects;
  the note does not count) that is still cached becomes part of that event's
  series: the first repeat PATCHes (strategic merge) ``series: {count: 2,
  lastObservedTime}`` onto the first event; later repeats only count, and the
  count is written when the series finishes (no repeat for ``FINISH_TIME``,
  checked every ``FINISH_TIME``), every ``REFRESH_TIME``, and at shutdown.
  A singleton older than ``FINISH_TIME`` leaves the cache at that check, so a
  later repeat starts a new event. A series whose event is gone (404) is
  created again, with its series.
- Failures: a request that got no answer (a transport error) is tried again
  after ``RETRY_SLEEP`` (+ up to 25 % jitter), at most ``MAX_TRIES`` times in
  all, without holding up the other events; a series' create answered
  AlreadyExists is tried again too; any other refusal is logged and the event
  abandoned (counted in ``abandoned``). 429/5xx with Retry-After are retried
  by ``KubeClient`` itself.
- ``shutdown(timeout)`` (clean shutdown) stops taking events, writes every queued
  one and the unwritten counts of the open series, tries every waiting retry
  once more, and stops the thread (waiting at most ``timeout`` seconds).
  Upstream's Shutdown drops what is queued; kubesched flushes it.

``wait_idle`` is for tests: it returns once every queued event was handled.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from kubesched.api.types import Time
from kubesched.live.client import ClusterError, KubeClient, Raw

log = logging.getLogger(__name__)

MAX_QUEUED: Final = 1000
MAX_TRIES: Final = 12
RETRY_SLEEP: Final = 10.0
"""Seconds before an event that got no answer is tried again (jittered)."""
FINISH_TIME: Final = 6 * 60 * 1_000_000_000
REFRESH_TIME: Final = 30 * 60 * 1_000_000_000
STRATEGIC_MERGE_PATCH: Final = "application/strategic-merge-patch+json"


def _ref_key(ref: Raw | None) -> tuple[str, ...]:
    if not ref:
        return ()
    fields = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
    return tuple(str(ref.get(f) or "") for f in fields)


def series_key(event: Raw) -> tuple[object, ...]:
    """What makes two events isomorphic (upstream's ``getKey``)."""
    return (
        event.get("type"),
        event.get("action"),
        event.get("reason"),
        event.get("reportingController"),
        event.get("reportingInstance"),
        _ref_key(event.get("regarding")),
        _ref_key(event.get("related")),
    )


@dataclass(slots=True)
class _Cached:
    event: Raw
    last: Time
    """When it (or its series' latest repeat) was observed."""
    unwritten: bool = False
    """The series counted repeats the server has not seen yet."""


def _copy(event: Raw) -> Raw:
    out = dict(event)
    if "series" in out:
        out["series"] = dict(out["series"])
    return out


class EventBroadcaster:
    """The background event writer of one scheduler (see the module docstring)."""

    def __init__(
        self,
        client: KubeClient,
        clock: Callable[[], Time],
        *,
        max_queued: int = MAX_QUEUED,
        retry_sleep: float = RETRY_SLEEP,
        finish_time: Time = FINISH_TIME,
        refresh_time: Time = REFRESH_TIME,
        rng: random.Random | None = None,
    ) -> None:
        self._client = client
        self._clock = clock
        self.max_queued = max_queued
        self.retry_sleep = retry_sleep
        self.finish_time = finish_time
        self.refresh_time = refresh_time
        self._rng = rng or random.Random()
        self._cond = threading.Condition()
        self._incoming: deque[tuple[Raw, Time]] = deque()
        self._retries: list[tuple[float, int, Raw, int]] = []
        """(due on the monotonic clock, sequence, event, tries so far): a heap."""
        self._seq = itertools.count()
        self._cache: dict[tuple[object, ...], _Cached] = {}
        """The sender thread's alone."""
        self._busy = False
        self._closing = False
        self._thread: threading.Thread | None = None
        self.dropped = 0
        self.abandoned = 0
        self.written = 0
        """Requests the server accepted."""

    # ------------------------------------------------------------------ any thread
    def record(self, event: Raw, now: Time) -> bool:
        """Queue ``event`` (observed at ``now``); False when it was dropped."""
        with self._cond:
            if self._closing or len(self._incoming) >= self.max_queued:
                self.dropped += 1
                if not self._closing:
                    log.warning("event queue full: dropped event %s", event["metadata"]["name"])
                return False
            self._incoming.append((event, now))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="events", daemon=True)
                self._thread.start()
            self._cond.notify_all()
        return True

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until every queued event was handled (retries may still wait)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._incoming or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def shutdown(self, timeout: float = 10.0) -> None:
        """Write what is queued and the open series' counts, then stop (see the
        module docstring)."""
        with self._cond:
            self._closing = True
            thread = self._thread
            self._cond.notify_all()
        if thread is not None:
            thread.join(timeout)
        if self.dropped:
            log.warning("%d events were dropped (queue full or shut down)", self.dropped)

    # ------------------------------------------------------------------ sender thread
    def _run(self) -> None:
        start = time.monotonic()
        finish_at = start + self.finish_time / 1e9
        refresh_at = start + self.refresh_time / 1e9
        while True:
            job, event, n = self._next(min(finish_at, refresh_at))
            try:
                if self._do(job, event, n, finish_at):
                    return
            except Exception:  # a bug here must not stop the events for good
                log.exception("event broadcaster")
            if job == "sweep":
                now = time.monotonic()
                if now >= finish_at:
                    finish_at = now + self.finish_time / 1e9
                else:
                    refresh_at = now + self.refresh_time / 1e9

    def _do(self, job: str, event: Raw, n: int, finish_at: float) -> bool:
        """One job of ``_next``; True: stop."""
        if job == "new":
            self._observe(event, n)
        elif job == "retry":
            if self._attempt(event, n, requeue=not self._closing) and self._closing:
                self.abandoned += 1
        elif job == "close":
            for cached in self._cache.values():
                if cached.unwritten and self._attempt(_copy(cached.event), 0, requeue=False):
                    self.abandoned += 1
            return True
        elif time.monotonic() >= finish_at:
            self._finish_series()
        else:
            for cached in self._cache.values():
                if "series" in cached.event:
                    cached.unwritten = self._attempt(_copy(cached.event), 0, requeue=False)
        return False

    def _next(self, sweep_at: float) -> tuple[str, Raw, int]:
        """The next thing to do: a ``new`` event (and when it was observed), a
        ``retry`` (and its tries so far), a ``sweep`` or ``close``."""
        with self._cond:
            self._busy = False
            self._cond.notify_all()
            while True:
                now = time.monotonic()
                job: tuple[str, Raw, int] | None = None
                if self._incoming:
                    event, seen = self._incoming.popleft()
                    job = ("new", event, seen)
                elif self._retries and (self._retries[0][0] <= now or self._closing):
                    _, _, event, tries = heapq.heappop(self._retries)
                    job = ("retry", event, tries)
                elif self._closing:
                    job = ("close", {}, 0)
                elif now >= sweep_at:
                    job = ("sweep", {}, 0)
                if job is not None:
                    self._busy = True
                    return job
                due = min(sweep_at, self._retries[0][0]) if self._retries else sweep_at
                self._cond.wait(due - now)

    def _observe(self, event: Raw, now: Time) -> None:
        """upstream ``recordToSink``: a new event, or a repeat of a cached one."""
        key = series_key(event)
        cached = self._cache.get(key)
        if cached is None:
            self._cache[key] = _Cached(event, now)
            self._attempt(_copy(event), 0, requeue=True)
            return
        cached.last = now
        series = cached.event.get("series")
        observed = event["eventTime"]
        if series is not None:
            series["count"] += 1
            series["lastObservedTime"] = observed
            cached.unwritten = True
            return
        cached.event["series"] = {"count": 2, "lastObservedTime": observed}
        self._attempt(_copy(cached.event), 0, requeue=True)

    def _finish_series(self) -> None:
        """upstream ``finishSeries``: write the final count of a series without a
        repeat for ``finish_time``; forget singletons as old."""
        horizon = self._clock() - self.finish_time
        for key, cached in list(self._cache.items()):
            if cached.last >= horizon:
                continue
            if "series" not in cached.event or not self._attempt(
                _copy(cached.event), 0, requeue=False
            ):
                del self._cache[key]

    def _attempt(self, event: Raw, tries: int, requeue: bool) -> bool:
        """Write ``event``; True when it failed in a way worth another try (then,
        with ``requeue``, it waits for one, unless out of tries: abandoned)."""
        if not self._write(event):
            return False
        tries += 1
        if not requeue:
            return True
        if tries >= MAX_TRIES:
            log.error("Unable to write event %s (retry limit exceeded!)", _name(event))
            self.abandoned += 1
            return True
        due = time.monotonic() + self.retry_sleep * (1 + 0.25 * self._rng.random())
        with self._cond:
            heapq.heappush(self._retries, (due, next(self._seq), event, tries))
        return True

    def _write(self, event: Raw) -> bool:
        """upstream ``recordEvent``: True when it should be tried again."""
        meta = event["metadata"]
        path = f"/apis/events.k8s.io/v1/namespaces/{meta['namespace']}/events"
        series = event.get("series")
        what = f"event {meta['namespace']}/{meta['name']}"
        try:
            if series is not None:
                try:
                    self._client.request(
                        "PATCH",
                        f"{path}/{meta['name']}",
                        body={"series": series},
                        content_type=STRATEGIC_MERGE_PATCH,
                        what=f"patch {what}",
                    )
                    self.written += 1
                    return False
                except ClusterError as err:
                    if err.status != 404:
                        raise
            self._client.request("POST", path, body=event, what=f"create {what}")
            self.written += 1
            return False
        except ClusterError as err:
            if err.status == 0:
                log.error("Unable to write event (may retry after sleeping): %s", err)
                return True
            if err.status == 409 and err.reason == "AlreadyExists" and series is not None:
                return True  # emitted twice at once: patching it next time works
            log.warning("Server rejected event (will not retry!): %s", err)
            self.abandoned += 1
            return False


def _name(event: Raw) -> str:
    meta = event["metadata"]
    return f"{meta['namespace']}/{meta['name']}"

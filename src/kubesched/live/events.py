"""Events sent as client-go's events/v1 broadcaster sends them
(k8s.io/client-go/tools/events): queued by the recorder, written by one
background thread, repeated events aggregated into a series.

Contract (``EventBroadcaster``):

- ``record(event, now)`` only queues the events.k8s.io/v1 Event (any thread;
  ``now``: when it was observed, ns). When ``MAX_QUEUED`` events wait already it
  is dropped and counted in ``dropped`` (upstream's DropIfChannelFull); after
  ``shutdown`` every event is dropped.
- ``SENDERS`` threads (started by the first ``record``; upstream: a goroutine
  per event) take the events in arrival order and write them through the
  ``KubeClient`` (the event client: its own rate limiter), several at a time.
  An event isomorphic to one seen before (the same type, action,
  reason, reporting controller and instance, regarding and related objects;
  the note does not count) that is still cached becomes part of that event's
  series: the first repeat PATCHes (strategic merge) ``series: {count: 2,
  lastObservedTime}`` onto the first event; later repeats only count, and the
  count is written when the series finishes (no repeat for ``FINISH_TIME``,
  checked every ``FINISH_TIME``), every ``REFRESH_TIME``, and at shutdown.
  A singleton older than ``FINISH_TIME`` leaves the cache at that check, so a
  later repeat starts a new event. A series whose event is gone (404: deleted,
  or its creation still on the way) is created again, with its series.
- Failures: a request that got no answer (a transport error) is tried again
  after ``RETRY_SLEEP`` (+ up to 25 % jitter), at most ``MAX_TRIES`` times in
  all, without holding up the other events; a series' create answered
  AlreadyExists is tried again too; any other refusal is logged and the event
  abandoned (counted in ``abandoned``). 429/5xx with Retry-After are retried
  by ``KubeClient`` itself.
- ``shutdown(timeout)`` (clean shutdown) stops taking events, writes every queued
  one, tries every waiting retry once more, stops the threads (waiting at most
  ``timeout`` seconds) and writes the unwritten counts of the open series.
  Upstream's Shutdown drops what is queued; kubesched flushes it.

``/metrics`` shows ``dropped`` and ``abandoned`` (the broadcaster is a
prometheus-client collector) as ``kubesched_events_dropped_total`` and
``kubesched_events_abandoned_total`` (upstream has none): two counters, not one
with a ``reason`` label, as the causes differ: a dropped event was never sent
(kubesched emitted faster than its event client's qps writes), an abandoned one
was refused or left unanswered by the server.

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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Final

from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

from kubesched.api.types import Time
from kubesched.live.client import ClusterError, KubeClient, Raw

log = logging.getLogger(__name__)

SENDERS: Final = 4
"""Sender threads (upstream: a goroutine per event)."""
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


class EventBroadcaster(Collector):
    """The background event writer of one scheduler (see the module docstring)."""

    def __init__(
        self,
        client: KubeClient,
        clock: Callable[[], Time],
        *,
        senders: int = SENDERS,
        max_queued: int = MAX_QUEUED,
        retry_sleep: float = RETRY_SLEEP,
        finish_time: Time = FINISH_TIME,
        refresh_time: Time = REFRESH_TIME,
        rng: random.Random | None = None,
    ) -> None:
        self._client = client
        self._clock = clock
        self.senders = senders
        self.max_queued = max_queued
        self.retry_sleep = retry_sleep
        self.finish_time = finish_time
        self.refresh_time = refresh_time
        self._rng = rng or random.Random()
        self._cond = threading.Condition()
        """Guards everything below but the counters' readers."""
        self._incoming: deque[tuple[Raw, Time]] = deque()
        self._retries: list[tuple[float, int, Raw, int]] = []
        """(due on the monotonic clock, sequence, event, tries so far): a heap."""
        self._seq = itertools.count()
        self._cache: dict[tuple[object, ...], _Cached] = {}
        self._busy = 0
        self._closing = False
        self._threads: list[threading.Thread] = []
        start = time.monotonic()
        self._finish_at = start + finish_time / 1e9
        self._refresh_at = start + refresh_time / 1e9
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
            if not self._threads:
                for i in range(self.senders):
                    thread = threading.Thread(target=self._run, name=f"events-{i}", daemon=True)
                    self._threads.append(thread)
                    thread.start()
            self._cond.notify()
        return True

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until every queued event was handled (retries may still wait)."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._incoming and not self._busy, timeout)

    def shutdown(self, timeout: float = 10.0) -> None:
        """Write what is queued and the open series' counts, then stop (see the
        module docstring)."""
        with self._cond:
            self._closing = True
            threads = list(self._threads)
            self._cond.notify_all()
        deadline = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(deadline - time.monotonic(), 0.0))
        with self._cond:
            unwritten = [_copy(c.event) for c in self._cache.values() if c.unwritten]
        for event in unwritten:
            if self._attempt(event, 0, requeue=False):
                self._tally(abandoned=1)
        if self.dropped:
            log.warning("%d events were dropped (queue full or shut down)", self.dropped)

    def collect(self) -> Iterable[Metric]:
        yield CounterMetricFamily(
            "kubesched_events_dropped",
            "Events dropped before they were sent: the queue was full, or shut down.",
            value=self.dropped,
        )
        yield CounterMetricFamily(
            "kubesched_events_abandoned",
            "Events given up: refused by the server, out of tries, or unwritten at shutdown.",
            value=self.abandoned,
        )

    # ------------------------------------------------------------------ sender threads
    def _run(self) -> None:
        while True:
            job = self._next()
            if job is None:
                return
            try:
                job()
            except Exception:  # a bug here must not stop the events for good
                log.exception("event broadcaster")
            finally:
                with self._cond:
                    self._busy -= 1
                    self._cond.notify_all()

    def _next(self) -> Callable[[], object] | None:
        """The next job (None: stop): a new event, a retry that is due, a sweep."""
        with self._cond:
            while True:
                now = time.monotonic()
                job: Callable[[], object] | None = None
                if self._incoming:
                    write = self._observe(*self._incoming.popleft())
                    if write is None:
                        continue
                    job = partial(self._attempt, write, 0, True)
                elif self._retries and (self._retries[0][0] <= now or self._closing):
                    _, _, event, tries = heapq.heappop(self._retries)
                    job = partial(self._retry, event, tries)
                elif self._closing:
                    return None
                elif now >= self._finish_at:
                    self._finish_at = now + self.finish_time / 1e9
                    job = self._finish_series
                elif now >= self._refresh_at:
                    self._refresh_at = now + self.refresh_time / 1e9
                    job = self._refresh_series
                if job is not None:
                    self._busy += 1
                    return job
                due = min(self._finish_at, self._refresh_at)
                if self._retries:
                    due = min(due, self._retries[0][0])
                self._cond.wait(due - now)

    def _observe(self, event: Raw, now: Time) -> Raw | None:
        """upstream ``recordToSink`` (under the lock): the event to write for a new
        event or the first repeat of a cached one; None for a later repeat."""
        key = series_key(event)
        cached = self._cache.get(key)
        if cached is None:
            self._cache[key] = _Cached(event, now)
            return _copy(event)
        cached.last = now
        series = cached.event.get("series")
        observed = event["eventTime"]
        if series is not None:
            series["count"] += 1
            series["lastObservedTime"] = observed
            cached.unwritten = True
            return None
        cached.event["series"] = {"count": 2, "lastObservedTime": observed}
        return _copy(cached.event)

    def _retry(self, event: Raw, tries: int) -> None:
        closing = self._closing
        if self._attempt(event, tries, requeue=not closing) and closing:
            self._tally(abandoned=1)

    def _finish_series(self) -> None:
        """upstream ``finishSeries``: write the final count of a series without a
        repeat for ``finish_time``; forget singletons as old."""
        horizon = self._clock() - self.finish_time
        with self._cond:
            old = [(k, c) for k, c in self._cache.items() if c.last < horizon]
            for key, cached in old:
                if "series" not in cached.event:
                    del self._cache[key]
            ended = [(k, _copy(c.event)) for k, c in old if "series" in c.event]
        for key, event in ended:
            if not self._attempt(event, 0, requeue=False):
                with self._cond:
                    self._cache.pop(key, None)

    def _refresh_series(self) -> None:
        """upstream ``refreshExistingEventSeries``: every series' count, again."""
        with self._cond:
            series = [(c, _copy(c.event)) for c in self._cache.values() if "series" in c.event]
            for cached, _ in series:
                cached.unwritten = False
        for cached, event in series:
            if self._attempt(event, 0, requeue=False):
                cached.unwritten = True

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
            self._tally(abandoned=1)
            return True
        due = time.monotonic() + self.retry_sleep * (1 + 0.25 * self._rng.random())
        with self._cond:
            heapq.heappush(self._retries, (due, next(self._seq), event, tries))
            self._cond.notify()
        return True

    def _tally(self, abandoned: int = 0, written: int = 0) -> None:
        """Count under the lock: several sender threads count at once."""
        with self._cond:
            self.abandoned += abandoned
            self.written += written

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
                    self._tally(written=1)
                    return False
                except ClusterError as err:
                    if err.status != 404:
                        raise
            self._client.request("POST", path, body=event, what=f"create {what}")
            self._tally(written=1)
            return False
        except ClusterError as err:
            if err.status == 0:
                log.error("Unable to write event (may retry after sleeping): %s", err)
                return True
            if err.status == 409 and err.reason == "AlreadyExists" and series is not None:
                return True  # emitted twice at once: patching it next time works
            log.warning("Server rejected event (will not retry!): %s", err)
            self._tally(abandoned=1)
            return False


def _name(event: Raw) -> str:
    meta = event["metadata"]
    return f"{meta['namespace']}/{meta['name']}"

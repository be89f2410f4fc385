"""Informers: one collection of the API server mirrored in memory, as client-go's
reflector and shared informer keep it.

``Informer(client, resource, handler)`` lists the collection (page by page, a
consistent read: ``resourceVersion`` unset, where the reflector's first list
reads the watch cache), then watches it from the list's resourceVersion, and
keeps a store (the cache, ``get``/``items``/``keys``: the latest object per
``namespace/name`` key, ``name`` for cluster-scoped kinds). Every change
reaches the handler, in the order the server sent it, on the informer's one
thread:

- a watch event: ADDED of a new key is ``on_add(obj, False)``, ADDED/MODIFIED of
  a known key ``on_update(old, new)``, DELETED ``on_delete(obj, False)`` (the
  object as the event carries it);
- a list (the first and every relist), diffed against the store as client-go's
  DeltaFIFO.Replace and the informer's handler do it: listed objects in list
  order (new keys ``on_add(obj, initial)``, with ``initial`` true only for the
  first list; keys whose resourceVersion changed ``on_update``; unchanged keys
  nothing), then every key the list lacks ``on_delete(last_known, True)`` (its
  final state unknown, client-go's DeletedFinalStateUnknown).

``has_synced()`` turns true once the first list is delivered. The
resourceVersion is taken from every event and BOOKMARK (which changes nothing
else). Recovery follows client-go's reflector:

- a watch the server ends (its ``timeoutSeconds``, randomised in [min, 2 min)
  like the reflector's) or whose connection drops is opened again from the last
  resourceVersion at once; a watch that ended within a second without any
  event counts as an error ("very short watch");
- a stalled watch (nothing, not even a bookmark, for ``stall_timeout``
  seconds: the socket's read timeout) is opened again from the last
  resourceVersion at once;
- a watch that cannot connect, or answers 429 (as the request's status or an
  ERROR event), is opened again after a backoff (a 429 with Retry-After is
  first retried by the client itself, after that many seconds);
- 410 Expired/Gone and every other error end the list-and-watch: after a
  backoff the informer lists again and delivers the diff.

Backoff is client-go's reflector backoff manager: 0.8 s doubling up to 30 s,
each delay plus up to 100 % jitter, back to 0.8 s once two minutes pass without
a backoff. The clock and the random source are injected (``Clock``, a
``random.Random``), so tests run the schedule instantly and exactly. Handlers get
the raw dicts (conversion is the handler's business); an exception in a
handler is logged and does not stop the informer. ``stop()`` ends the thread
promptly: it closes the open watch and interrupts any backoff (a list in
progress is not interrupted: it ends within the client's request timeout).
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from kubesched.live.client import (
    ClusterError,
    Expired,
    KubeClient,
    Raw,
    Resource,
    WatchStalled,
    WatchStream,
)

log = logging.getLogger(__name__)


class Handler(Protocol):
    """What an informer delivers to (see the module docstring)."""

    def on_add(self, obj: Raw, initial: bool) -> None: ...

    def on_update(self, old: Raw, new: Raw) -> None: ...

    def on_delete(self, obj: Raw, final_state_unknown: bool) -> None: ...


class Clock(Protocol):
    """Time for an informer: ``now()`` in seconds (monotonic), and ``sleep`` that
    returns True as soon as ``stop`` is set (else False once the time passed)."""

    def now(self) -> float: ...

    def sleep(self, seconds: float, stop: threading.Event) -> bool: ...


class WallClock:
    """The real clock."""

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float, stop: threading.Event) -> bool:
        return stop.wait(seconds)


class Backoff:
    """client-go's exponential backoff manager (``NewExponentialBackoffManager``):
    ``next()`` is the next delay, ``base * (1 + jitter * rng.random())``, with
    ``base`` from ``initial`` multiplied by ``factor`` per call up to ``cap``,
    and back to ``initial`` when more than ``reset`` seconds passed since the
    previous call."""

    def __init__(
        self,
        clock: Clock,
        rng: random.Random,
        initial: float = 0.8,
        cap: float = 30.0,
        factor: float = 2.0,
        jitter: float = 1.0,
        reset: float = 120.0,
    ) -> None:
        self._clock = clock
        self._rng = rng
        self.initial = initial
        self.cap = cap
        self.factor = factor
        self.jitter = jitter
        self.reset = reset
        self._base = initial
        self._last = clock.now()

    def next(self) -> float:
        now = self._clock.now()
        if now - self._last > self.reset:
            self._base = self.initial
        self._last = now
        base = self._base
        self._base = min(base * self.factor, self.cap)
        return base + self._rng.random() * self.jitter * base if self.jitter > 0 else base


@dataclass(frozen=True, slots=True)
class Timing:
    """An informer's timeouts, in seconds: ``min_watch_timeout`` (each watch asks
    the server to end it after a random time in [this, twice this), as the
    reflector's minWatchTimeout), ``stall_timeout`` (see the module docstring;
    upstream's cacher sends a bookmark at least once a minute), ``short_watch``
    (a watch ended sooner without events is an error)."""

    min_watch_timeout: float = 300.0
    stall_timeout: float = 150.0
    short_watch: float = 1.0


def key_of(obj: Raw) -> str:
    """The store key: ``namespace/name``, or ``name`` without a namespace."""
    meta = obj.get("metadata") or {}
    name = str(meta.get("name") or "")
    namespace = meta.get("namespace")
    return f"{namespace}/{name}" if namespace else name


def version_of(obj: Raw) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


class _Restart(Exception):
    """End this list-and-watch; list again after a backoff."""


class Informer:
    """One resource's list-and-watch loop on its own thread (see the module docstring)."""

    def __init__(
        self,
        client: KubeClient,
        resource: Resource,
        handler: Handler,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        timing: Timing = Timing(),
        page: int = 500,
    ) -> None:
        self.client = client
        self.resource = resource
        self.handler = handler
        self.clock: Clock = clock if clock is not None else WallClock()
        self.rng = rng if rng is not None else random.Random()
        self.timing = timing
        self.page = page
        self.backoff = Backoff(self.clock, self.rng)
        self.resource_version = ""
        """The latest resourceVersion seen (list, event or bookmark)."""
        self.lists = 0
        """How many lists were delivered."""
        self.watches = 0
        """How many watches were opened."""
        self._store: dict[str, Raw] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._synced = threading.Event()
        self._stream: WatchStream | None = None
        self._thread: threading.Thread | None = None

    # -- the cache ------------------------------------------------------------

    def get(self, key: str) -> Raw | None:
        with self._lock:
            return self._store.get(key)

    def items(self) -> list[Raw]:
        """The cached objects (a new list; the dicts are shared, do not mutate)."""
        with self._lock:
            return list(self._store.values())

    def keys(self) -> list[str]:
        with self._lock:
            return list(self._store)

    # -- lifecycle ------------------------------------------------------------

    def start(self) -> Informer:
        """Run on a daemon thread named after the resource."""
        self._thread = threading.Thread(
            target=self.run, name=f"informer-{self.resource.plural}", daemon=True
        )
        self._thread.start()
        return self

    def has_synced(self) -> bool:
        return self._synced.is_set()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Block until the first list is delivered (True) or ``timeout`` real seconds pass."""
        return self._synced.wait(timeout)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop: the open watch is closed and any backoff cut short."""
        self._stop.set()
        with self._lock:
            stream = self._stream
        if stream is not None:
            stream.close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def run(self) -> None:
        """List and watch until ``stop()``, backing off between attempts (the
        reflector's ``BackoffUntil``)."""
        while not self._stop.is_set():
            try:
                self._list_and_watch()
            except _Restart as why:
                log.info("%s: %s; listing again", self.resource.plural, why)
            except ClusterError as err:
                log.warning("%s: %s", self.resource.plural, err)
            except Exception:  # a bug must not end the informer silently
                log.exception("%s: list-and-watch failed", self.resource.plural)
            if self._stop.is_set() or self._pause():
                return

    def _pause(self) -> bool:
        delay = self.backoff.next()
        log.debug("%s: backing off %.3fs", self.resource.plural, delay)
        return self.clock.sleep(delay, self._stop)

    # -- list -----------------------------------------------------------------

    def _list_and_watch(self) -> None:
        items, version = self.client.list(self.resource, self.page)
        if self._stop.is_set():
            return
        self._replace(items)
        self.resource_version = version
        self.lists += 1
        self._synced.set()
        self._watch_loop()

    def _replace(self, items: list[Raw]) -> None:
        initial = not self._synced.is_set()
        listed: dict[str, Raw] = {key_of(obj): obj for obj in items}
        for key, obj in listed.items():
            with self._lock:
                old = self._store.get(key)
                self._store[key] = obj
            if old is None:
                self._add(obj, initial)
            elif version_of(old) != version_of(obj):
                self._update(old, obj)
        with self._lock:
            gone = [(k, o) for k, o in self._store.items() if k not in listed]
            for key, _ in gone:
                del self._store[key]
        for _, obj in gone:
            self._delete(obj, True)

    # -- watch ----------------------------------------------------------------

    def _watch_loop(self) -> None:
        """Watch from ``resource_version`` until an error ends it (or ``stop()``)."""
        while not self._stop.is_set():
            stream = self._open()
            if stream is None:
                continue
            start = self.clock.now()
            count = 0
            try:
                for event in self._events(stream):
                    count += 1
                    self._apply(event)
            except WatchStalled as err:
                log.info("%s: %s; watching again", self.resource.plural, err)
                continue
            except Expired as err:
                raise _Restart(str(err)) from None
            except ClusterError as err:
                if err.status == 429:
                    if self._pause():
                        return
                    continue
                raise
            if self._stop.is_set():
                return
            if count == 0 and self.clock.now() - start < self.timing.short_watch:
                raise _Restart(f"very short watch ({stream.outcome}) without events")
            log.debug("%s: watch %s after %d events", self.resource.plural, stream.outcome, count)

    def _open(self) -> WatchStream | None:
        """A new watch, or None after a backoff when it cannot connect or got 429
        (the reflector's retriable watch errors); other errors propagate."""
        timeout = int(self.timing.min_watch_timeout * (self.rng.random() + 1.0))
        try:
            stream = self.client.watch(
                self.resource,
                self.resource_version,
                timeout_seconds=timeout,
                stall_timeout=self.timing.stall_timeout,
            )
        except Expired as err:
            raise _Restart(str(err)) from None
        except ClusterError as err:
            if err.status not in (0, 429):
                raise
            log.info("%s: %s; retrying the watch", self.resource.plural, err)
            self._pause()
            return None
        self.watches += 1
        with self._lock:
            self._stream = stream
        if self._stop.is_set():
            stream.close()
        return stream

    def _events(self, stream: WatchStream) -> Iterator[Raw]:
        try:
            yield from stream
        finally:
            stream.close()
            with self._lock:
                self._stream = None

    def _apply(self, event: Raw) -> None:
        kind = event.get("type")
        obj = event["object"]
        version = version_of(obj)
        if kind == "BOOKMARK":
            self.resource_version = version or self.resource_version
            return
        if kind not in ("ADDED", "MODIFIED", "DELETED"):
            log.warning("%s: unknown watch event type %r ignored", self.resource.plural, kind)
            return
        if "kind" not in obj:
            obj = {"apiVersion": self.resource.api_version, "kind": self.resource.kind, **obj}
        key = key_of(obj)
        with self._lock:
            old = self._store.pop(key, None) if kind == "DELETED" else self._store.get(key)
            if kind != "DELETED":
                self._store[key] = obj
        if kind == "DELETED":
            self._delete(obj, False)
        elif old is None:
            self._add(obj, False)
        else:
            self._update(old, obj)
        self.resource_version = version or self.resource_version

    def _add(self, obj: Raw, initial: bool) -> None:
        self._call("add", obj, lambda: self.handler.on_add(obj, initial))

    def _update(self, old: Raw, new: Raw) -> None:
        self._call("update", new, lambda: self.handler.on_update(old, new))

    def _delete(self, obj: Raw, unknown: bool) -> None:
        self._call("delete", obj, lambda: self.handler.on_delete(obj, unknown))

    def _call(self, what: str, obj: Raw, call: Callable[[], None]) -> None:
        try:
            call()
        except Exception:
            name = key_of(obj)
            log.exception("%s: the %s handler failed on %s", self.resource.plural, what, name)

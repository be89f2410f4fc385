"""``AsyncPool``: the threads that run what upstream runs in goroutines (the
binding cycle's PreBind and Bind, the async preemption's API calls).

``pool(work, done)`` (``Scheduler.run_async``) queues ``work``; one of the
pool's threads runs it and hands ``done(status)`` to ``post`` (the scheduling
thread's queue), so the scheduler's state is only touched on its own thread. A
crashing work (a plugin's bug) is an Error status, never a lost pod.

``workers`` threads compute and send; a work that blocks for a long time
without working (VolumeBinding's PreBind waiting for the PV controller, up to
``bindTimeoutSeconds``) runs that wait inside ``pool.waiting()``, which starts
one more thread for as long as it lasts, so the works queued behind it are not
held up: upstream starts a goroutine per binding, and one waiting binding never
delays another. When the wait ends the pool is one thread over, and the next
thread to finish a work retires. ``wait_idle`` waits until every work handed
over has been posted back; ``shutdown`` ends the threads after the works queued.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial

from kubesched.framework.status import Code, Status

log = logging.getLogger(__name__)

Work = tuple[Callable[[], Status], Callable[[Status], None]]


class AsyncPool:
    """``Scheduler.run_async`` on ``workers`` threads (see the module docstring)."""

    def __init__(self, post: Callable[[Callable[[], None]], None], workers: int) -> None:
        self._post = post
        self._workers = max(workers, 1)
        self._queue: queue.SimpleQueue[Work | None] = queue.SimpleQueue()
        self._lock = threading.Condition()
        self._in_flight = 0
        self._waiting = 0
        self._threads: set[threading.Thread] = set()
        self._started = 0
        for _ in range(self._workers):
            self._start_thread()

    def __call__(self, work: Callable[[], Status], done: Callable[[Status], None]) -> None:
        with self._lock:
            self._in_flight += 1
        self._queue.put((work, done))

    @property
    def threads(self) -> int:
        """The threads running now."""
        with self._lock:
            return len(self._threads)

    @contextmanager
    def waiting(self) -> Iterator[None]:
        """Around a long wait of a work on one of the pool's threads: another
        thread takes its place meanwhile."""
        with self._lock:
            self._waiting += 1
            if len(self._threads) < self._workers + self._waiting:
                self._start_thread()
        try:
            yield
        finally:
            with self._lock:
                self._waiting -= 1

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Wait until every work handed over was posted back."""
        with self._lock:
            return self._lock.wait_for(lambda: self._in_flight == 0, timeout)

    def shutdown(self) -> None:
        """End every thread once the works queued before have run."""
        with self._lock:
            threads = list(self._threads)
        for _ in threads:
            self._queue.put(None)
        for thread in threads:
            thread.join()

    def _start_thread(self) -> None:
        """Under the lock."""
        self._started += 1
        thread = threading.Thread(target=self._loop, name=f"async_{self._started}", daemon=True)
        self._threads.add(thread)
        thread.start()

    def _loop(self) -> None:
        me = threading.current_thread()
        while True:
            item = self._queue.get()
            if item is None:
                break
            work, done = item
            try:
                s = work()
            except Exception as err:  # a plugin's bug must not lose the pod
                log.exception("binding or preemption failed")
                s = Status(Code.ERROR, str(err))
            self._post(partial(done, s))
            with self._lock:
                self._in_flight -= 1
                self._lock.notify_all()
                if len(self._threads) > self._workers + self._waiting:
                    break  # a wait that had a thread started for it has ended
        with self._lock:
            self._threads.discard(me)

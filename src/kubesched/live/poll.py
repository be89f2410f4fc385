"""``Handle.poll_until`` in live mode: a binding cycle (on an ``AsyncPool``
thread) waits while the scheduling thread keeps scheduling.

Upstream's ``wait.PollUntilContextTimeout(ctx, interval, timeout, false, check)``:
the first check one ``interval`` after the start, then one every ``interval``,
until the check answers done (None) or an error (its text), or the timeout
passes (``context deadline exceeded``). Each check runs on the scheduling thread
(``LiveCluster.post``), between its cycles, since it reads the caches; the
waiting thread blocks only itself. ``LiveCluster.stop()`` ends every wait at
once with ``context canceled`` (the scheduler's context upstream), so a stop is
never held up by a binding waiting for its volumes.

It must not be called on the scheduling thread (the check would never run):
``LiveScheduler`` installs it only with binding threads.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Final

from kubesched.framework.interfaces import PollCheck
from kubesched.live.cluster import LiveCluster
from kubesched.runtime.framework import DEADLINE_EXCEEDED

log = logging.getLogger(__name__)

CANCELED: Final = "context canceled"
"""The error of a wait the scheduler's stop ended (Go's ``context.Canceled``)."""


class CachePoller:
    """``Handle.poll_until`` over a ``LiveCluster`` (see the module docstring)."""

    def __init__(
        self,
        cluster: LiveCluster,
        clock: Callable[[], float] = time.monotonic,
        lend: Callable[[], AbstractContextManager[None]] = nullcontext,
    ) -> None:
        """``lend``: entered for the whole wait (``AsyncPool.waiting``: the
        binding's thread is replaced while it waits)."""
        self._cluster = cluster
        self._clock = clock
        self._lend = lend

    def __call__(self, check: PollCheck, interval: float, timeout: float) -> str | None:
        with self._lend():
            return self._poll(check, interval, timeout)

    def _poll(self, check: PollCheck, interval: float, timeout: float) -> str | None:
        deadline = self._clock() + timeout
        stopped = self._cluster.stopped
        while True:
            left = deadline - self._clock()
            if left <= 0:
                return DEADLINE_EXCEEDED
            if interval >= left:
                return CANCELED if stopped.wait(left) else DEADLINE_EXCEEDED
            if stopped.wait(interval):
                return CANCELED
            answer = self._check_on_scheduling_thread(check)
            if answer is None:
                return CANCELED
            done, err = answer
            if err is not None:
                return err
            if done:
                return None

    def _check_on_scheduling_thread(self, check: PollCheck) -> tuple[bool, str | None] | None:
        """``check()`` run by the scheduling thread; None when the cluster stopped first."""
        answered = threading.Event()
        box: list[tuple[bool, str | None]] = []

        def run() -> None:
            try:
                box.append(check())
            except Exception as err:  # a plugin's bug must not stop the scheduler
                log.exception("checking a binding failed")
                box.append((False, str(err)))
            answered.set()

        self._cluster.post(run)
        stopped = self._cluster.stopped
        while not answered.wait(0.05):
            if stopped.is_set():
                return None
        return box[0]

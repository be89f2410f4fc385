"""kubesched.live.poll.CachePoller: checks on the thread that flushes the
cluster, upstream's poll semantics, and a stop that ends the wait at once."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from kubesched.live.cluster import LiveCluster
from kubesched.live.poll import CANCELED, CachePoller
from kubesched.runtime.framework import DEADLINE_EXCEEDED


@contextmanager
def scheduling_thread(cluster: LiveCluster) -> Iterator[list[threading.Thread]]:
    """A thread flushing ``cluster`` (what ``drive`` does) until the block ends."""
    done = threading.Event()

    def loop() -> None:
        while not done.is_set():
            cluster.advance(cluster.now + 10_000_000)
            cluster.flush()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield [thread]
    finally:
        done.set()
        cluster.post(lambda: None)
        thread.join(5)


def test_checks_run_on_the_scheduling_thread_until_done() -> None:
    cluster = LiveCluster()
    seen: list[threading.Thread] = []

    def check() -> tuple[bool, str | None]:
        seen.append(threading.current_thread())
        return len(seen) == 3, None

    with scheduling_thread(cluster) as (flusher,):
        start = time.monotonic()
        assert CachePoller(cluster)(check, 0.02, 5.0) is None
    assert len(seen) == 3 and set(seen) == {flusher}
    assert time.monotonic() - start >= 0.06  # the first check after one interval


def test_the_checks_error_ends_the_wait() -> None:
    cluster = LiveCluster()

    def check() -> tuple[bool, str | None]:
        return False, 'ClaimRef got reset for pv "pv-a"'

    with scheduling_thread(cluster):
        assert CachePoller(cluster)(check, 0.01, 5.0) == 'ClaimRef got reset for pv "pv-a"'


def test_a_crashing_check_is_its_error() -> None:
    cluster = LiveCluster()

    def check() -> tuple[bool, str | None]:
        raise RuntimeError("boom")

    with scheduling_thread(cluster):
        assert CachePoller(cluster)(check, 0.01, 5.0) == "boom"


def test_still_pending_at_the_timeout_is_the_deadline() -> None:
    cluster = LiveCluster()
    calls: list[int] = []

    def check() -> tuple[bool, str | None]:
        calls.append(1)
        return False, None

    with scheduling_thread(cluster):
        start = time.monotonic()
        assert CachePoller(cluster)(check, 0.02, 0.2) == DEADLINE_EXCEEDED
        assert 0.2 <= time.monotonic() - start < 2.0
    assert calls
    assert CachePoller(cluster)(check, 1.0, 0.0) == DEADLINE_EXCEEDED


def test_a_stop_cancels_a_wait_at_once() -> None:
    cluster = LiveCluster()
    got: list[str | None] = []
    waiter = threading.Thread(
        target=lambda: got.append(CachePoller(cluster)(lambda: (False, None), 0.05, 600.0))
    )
    with scheduling_thread(cluster):
        waiter.start()
        time.sleep(0.2)
        start = time.monotonic()
        cluster.stop()
        waiter.join(5)
    assert got == [CANCELED]
    assert time.monotonic() - start < 1.0


def test_a_stop_while_the_check_waits_for_the_scheduling_thread() -> None:
    """Nobody flushes: the posted check never runs; the stop still ends the wait."""
    cluster = LiveCluster()
    got: list[str | None] = []
    waiter = threading.Thread(
        target=lambda: got.append(CachePoller(cluster)(lambda: (True, None), 0.01, 600.0))
    )
    waiter.start()
    time.sleep(0.1)
    cluster.stop()
    waiter.join(5)
    assert got == [CANCELED]

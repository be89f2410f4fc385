"""live.pool.AsyncPool: works run off the calling thread and their outcome is
posted back; a crash is an Error status; a work waiting inside ``waiting()``
does not hold up the works queued behind it, and the pool shrinks back after."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

from kubesched.framework.status import Code, Status
from kubesched.live.pool import AsyncPool

SUCCESS = Status(Code.SUCCESS)


class Posted:
    """The scheduling thread's queue: ``post`` collects, ``run_all`` runs."""

    def __init__(self) -> None:
        self.calls: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()

    def post(self, call: Callable[[], None]) -> None:
        self.calls.put(call)

    def next(self, timeout: float = 5.0) -> None:
        self.calls.get(timeout=timeout)()


def test_a_work_runs_on_a_pool_thread_and_its_status_is_posted() -> None:
    posted = Posted()
    pool = AsyncPool(posted.post, 2)
    seen: list[tuple[str, Status]] = []
    pool(lambda: Status(Code.UNSCHEDULABLE, "no"), lambda s: seen.append(("a", s)))
    posted.next()
    assert seen == [("a", Status(Code.UNSCHEDULABLE, "no"))]
    assert pool.wait_idle(5.0)
    pool.shutdown()
    assert pool.threads == 0


def test_a_crashing_work_is_an_error_status() -> None:
    posted = Posted()
    pool = AsyncPool(posted.post, 1)
    seen: list[Status] = []

    def crash() -> Status:
        raise RuntimeError("plugin bug")

    pool(crash, seen.append)
    posted.next()
    assert [(s.code, s.message()) for s in seen] == [(Code.ERROR, "plugin bug")]
    pool.shutdown()


def test_a_waiting_work_does_not_hold_up_the_next_and_the_pool_shrinks_back() -> None:
    posted = Posted()
    pool = AsyncPool(posted.post, 1)
    release = threading.Event()
    waiting = threading.Event()
    order: list[str] = []

    def waits() -> Status:
        with pool.waiting():
            waiting.set()
            assert release.wait(5.0)
        return SUCCESS

    pool(waits, lambda s: order.append("waited"))
    assert waiting.wait(5.0)
    assert pool.threads == 2  # one more while the only worker waits
    pool(lambda: SUCCESS, lambda s: order.append("quick"))
    posted.next()
    assert order == ["quick"]  # ran while the first still waited
    release.set()
    posted.next()
    assert order == ["quick", "waited"]
    assert pool.wait_idle(5.0)
    # One thread over now: the next to finish a work retires.
    pool(lambda: SUCCESS, lambda s: order.append("after"))
    posted.next()
    deadline = threading.Event()
    for _ in range(100):
        if pool.threads == 1:
            break
        deadline.wait(0.02)
    assert pool.threads == 1
    pool.shutdown()
    assert pool.threads == 0


def test_without_a_wait_the_pool_never_grows() -> None:
    posted = Posted()
    pool = AsyncPool(posted.post, 2)
    gate = threading.Event()
    for _ in range(6):
        pool(lambda: SUCCESS if gate.wait(5.0) else Status(Code.ERROR), lambda s: None)
    assert pool.threads == 2
    gate.set()
    for _ in range(6):
        posted.next()
    assert pool.wait_idle(5.0)
    pool.shutdown()

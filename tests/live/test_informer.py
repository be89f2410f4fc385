"""kubesched.live.informer against the API-server double over HTTP (the official
client's raw path): list then watch, bookmarks, 410 relists, dropped, stalled and
restarted watches, backoff, stop. Time of the informer is a ``StepClock`` (its
sleeps return at once and are recorded), the server's a ``ManualClock``."""

from __future__ import annotations

import random
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched.live.apiserver_double import ApiServerDouble, Fault, server_error, throttled
from kubesched.live.client import KubeClient, Resource, connect
from kubesched.live.informer import Backoff, Informer, Timing, WallClock
from tests.live.cluster_state import double, node, pod

pytest.importorskip("kubernetes")

PODS = Resource("", "v1", "pods", "Pod")
NODES = Resource("", "v1", "nodes", "Node")
Raw = dict[str, Any]
Call = tuple[str, str, str, bool]  # (what, name, resourceVersion, flag)
DEFAULT = Timing()


class StepClock:
    """Time that moves only when slept; every sleep is recorded. After ``limit``
    sleeps it reports a stop (ends the informer's loop deterministically)."""

    def __init__(self, limit: int | None = None) -> None:
        self.time = 1000.0
        self.sleeps: list[float] = []
        self.limit = limit

    def now(self) -> float:
        return self.time

    def sleep(self, seconds: float, stop: threading.Event) -> bool:
        self.sleeps.append(seconds)
        self.time += seconds
        if self.limit is not None and len(self.sleeps) >= self.limit:
            return True
        return stop.wait(0.001)


class Recorder:
    """A handler that records every call, thread-safely."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.cond = threading.Condition()

    def _record(self, call: Call) -> None:
        with self.cond:
            self.calls.append(call)
            self.cond.notify_all()

    def on_add(self, obj: Raw, initial: bool) -> None:
        self._record(("add", name(obj), rv(obj), initial))

    def on_update(self, old: Raw, new: Raw) -> None:
        assert name(old) == name(new)
        self._record(("update", name(new), rv(new), False))

    def on_delete(self, obj: Raw, final_state_unknown: bool) -> None:
        self._record(("delete", name(obj), rv(obj), final_state_unknown))

    def wait(self, count: int, timeout: float = 2.0) -> list[Call]:
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.calls) >= count, timeout), self.calls
            return list(self.calls)

    def kinds(self) -> list[tuple[str, str]]:
        with self.cond:
            return [(c[0], c[1]) for c in self.calls]


def name(obj: Raw) -> str:
    return str(obj["metadata"]["name"])


def rv(obj: Raw) -> str:
    return str(obj["metadata"]["resourceVersion"])


def wait_until(condition: Callable[[], bool], timeout: float = 2.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.005)


def watching(api: ApiServerDouble, store: str = "pods") -> Callable[[], bool]:
    return lambda: bool(api.hub.matching(store))


def watch_versions(api: ApiServerDouble, path: str = "/api/v1/pods") -> list[str]:
    return [q["resourceVersion"] for m, p, q, _ in api.requests if p == path and "watch" in q]


def list_count(api: ApiServerDouble, path: str = "/api/v1/pods") -> int:
    return sum(1 for m, p, q, _ in api.requests if p == path and "watch" not in q)


def update_labels(api: ApiServerDouble, pod_name: str, labels: dict[str, str]) -> Raw:
    res = api.resource_for("v1", "Pod")
    current = api.get("v1", "Pod", pod_name, "default")
    assert current is not None
    current["metadata"]["labels"] = labels
    return api.registry.present(res, api.registry.update(res, "default", pod_name, current))


def delete_now(api: ApiServerDouble, pod_name: str) -> None:
    res = api.resource_for("v1", "Pod")
    api.registry.delete(res, "default", pod_name, {"gracePeriodSeconds": 0})


@pytest.fixture
def api() -> Iterator[ApiServerDouble]:
    with double() as server:
        yield server


@pytest.fixture
def client(api: ApiServerDouble, tmp_path: Path) -> KubeClient:
    return connect(str(api.write_kubeconfig(tmp_path / "kubeconfig")))


@pytest.fixture
def informers() -> Iterator[list[Informer]]:
    started: list[Informer] = []
    yield started
    for informer in started:
        informer.stop()


def start(
    informers: list[Informer],
    client: KubeClient,
    resource: Resource = PODS,
    clock: StepClock | None = None,
    timing: Timing = DEFAULT,
    seed: int = 1,
) -> tuple[Informer, Recorder]:
    recorder = Recorder()
    informer = Informer(
        client,
        resource,
        recorder,
        clock=clock or StepClock(),
        rng=random.Random(seed),
        timing=timing,
    )
    informers.append(informer.start())
    assert informer.wait_for_sync(2.0)
    return informer, recorder


def test_initial_list_then_adds_updates_deletes_in_order(
    api: ApiServerDouble, client: KubeClient, informers: list[Informer]
) -> None:
    p1 = api.create(pod("p1", "1"))
    p2 = api.create(pod("p2", "1"))
    informer, seen = start(informers, client)
    assert informer.has_synced()
    assert seen.wait(2) == [("add", "p1", rv(p1), True), ("add", "p2", rv(p2), True)]
    assert informer.resource_version == str(api.store.rv)
    wait_until(watching(api))
    p3 = api.create(pod("p3", "1"))
    p1b = update_labels(api, "p1", {"app": "changed"})
    delete_now(api, "p2")
    wait_until(lambda: ("delete", "p2") in seen.kinds())
    calls = seen.wait(5)
    assert calls[2:4] == [("add", "p3", rv(p3), False), ("update", "p1", rv(p1b), False)]
    # The server writes the deletionTimestamp (an update), then deletes.
    assert [c[:2] for c in calls[4:]] == [("update", "p2"), ("delete", "p2")]
    assert calls[-1][3] is False
    assert informer.resource_version == str(api.store.rv) == calls[-1][2]
    assert sorted(informer.keys()) == ["default/p1", "default/p3"]
    cached = informer.get("default/p1")
    assert cached is not None and cached["metadata"]["labels"] == {"app": "changed"}
    assert cached["kind"] == "Pod" and cached["apiVersion"] == "v1"
    assert (informer.lists, informer.watches) == (1, 1)


def test_bookmarks_advance_the_resource_version_without_events(
    api: ApiServerDouble, client: KubeClient, informers: list[Informer]
) -> None:
    api.create(node("n1", "2"))
    informer, seen = start(informers, client, NODES)
    listed = informer.resource_version
    wait_until(watching(api, "nodes"))
    api.create(pod("elsewhere", "1"))  # moves the revision, not the nodes
    # A list not older than now: the nodes' watch cache catches up with the revision.
    client.get("/api/v1/nodes", [("resourceVersion", str(api.store.rv))])
    assert api.bookmark_now("nodes") == 1
    wait_until(lambda: informer.resource_version == str(api.store.rv))
    assert int(informer.resource_version) > int(listed)
    assert seen.kinds() == [("add", "n1")]
    # The next watch starts from the bookmark's revision.
    api.drop_watches("nodes")
    wait_until(lambda: informer.watches == 2)
    assert watch_versions(api, "/api/v1/nodes") == [listed, str(api.store.rv)]


def test_expired_history_relists_and_delivers_the_diff(
    api: ApiServerDouble, client: KubeClient, informers: list[Informer]
) -> None:
    for n in ("keep", "change", "gone"):
        api.create(pod(n, "1"))
    clock = StepClock()
    informer, seen = start(informers, client, clock=clock)
    wait_until(watching(api))
    first = api.create(pod("first", "1"))
    seen.wait(4)
    # Changes the informer cannot see (held back), then the window moves past them
    # and the connection drops: the watch from "first" is too old: 410, relist.
    api.stall_watches("pods")
    changed = update_labels(api, "change", {"app": "new"})
    delete_now(api, "gone")
    added = api.create(pod("added", "1"))
    api.expire_watch_history("pods")
    api.drop_watches("pods")
    calls = seen.wait(7)
    gone_rv = next(c[2] for c in calls if c[:2] == ("add", "gone"))
    # Listed objects in list order (by key) first, unchanged ones silent, then
    # the deletions, with the last known state.
    assert calls[4:] == [
        ("add", "added", rv(added), False),
        ("update", "change", rv(changed), False),
        ("delete", "gone", gone_rv, True),
    ]
    wait_until(lambda: informer.lists == 2)
    assert watch_versions(api)[1] == rv(first)  # the 410 came to the resumed watch
    assert len(clock.sleeps) == 1 and 0.8 <= clock.sleeps[0] <= 1.6  # one backoff
    assert sorted(informer.keys()) == [
        "default/added",
        "default/change",
        "default/first",
        "default/keep",
    ]
    assert informer.resource_version == str(api.store.rv)


def test_a_dropped_watch_resumes_from_the_last_version_without_loss_or_duplicates(
    api: ApiServerDouble, client: KubeClient, informers: list[Informer]
) -> None:
    informer, seen = start(informers, client)
    wait_until(watching(api))
    p1 = api.create(pod("p1", "1"))
    seen.wait(1)
    assert api.drop_watches("pods") == 1
    p2 = api.create(pod("p2", "1"))  # before or after the new watch: replayed either way
    wait_until(lambda: ("add", "p2") in seen.kinds())
    p3 = api.create(pod("p3", "1"))
    calls = seen.wait(3)
    time.sleep(0.05)  # nothing more arrives
    assert seen.kinds() == [("add", "p1"), ("add", "p2"), ("add", "p3")]
    assert [c[2] for c in calls] == [rv(p1), rv(p2), rv(p3)]
    assert (informer.lists, informer.watches) == (1, 2)
    assert watch_versions(api)[1] == rv(p1)
    assert list_count(api) == 1


def test_a_stalled_watch_is_detected_and_restarted(
    api: ApiServerDouble, client: KubeClient, informers: list[Informer]
) -> None:
    informer, seen = start(informers, client, timing=Timing(stall_timeout=0.3))
    wait_until(watching(api))
    p1 = api.create(pod("p1", "1"))
    seen.wait(1)
    api.stall_watches("pods")
    api.create(pod("p2", "1"))  # held back by the stalled stream
    began = time.monotonic()
    calls = seen.wait(2, timeout=2.0)
    assert time.monotonic() - began >= 0.25  # found by the stall timeout, not earlier
    assert calls[1][:2] == ("add", "p2")
    api.resume_watches()  # the stalled stream is gone: nothing twice
    api.create(pod("p3", "1"))
    seen.wait(3)
    time.sleep(0.05)
    assert seen.kinds() == [("add", "p1"), ("add", "p2"), ("add", "p3")]
    assert (informer.lists, informer.watches) == (1, 2)
    assert watch_versions(api)[1] == rv(p1)


def test_server_restart(
    api: ApiServerDouble, client: KubeClient, informers: list[Informer]
) -> None:
    api.create(pod("p1", "1"))
    informer, seen = start(informers, client)
    wait_until(watching(api))
    api.create(pod("p2", "1"))
    seen.wait(2)
    api.restart()  # the watch from p2's revision still fits the restarted cache
    wait_until(lambda: informer.watches == 2 and bool(api.hub.matching("pods")))
    api.create(pod("p3", "1"))
    seen.wait(3)
    assert seen.kinds() == [("add", "p1"), ("add", "p2"), ("add", "p3")]
    assert informer.lists == 1


def test_server_restart_after_other_writes_relists(
    api: ApiServerDouble, client: KubeClient, informers: list[Informer]
) -> None:
    informer, seen = start(informers, client)
    wait_until(watching(api))
    api.create(pod("p1", "1"))
    seen.wait(1)
    api.stall_watches("pods")
    api.create(pod("p2", "1"))
    api.create(node("n1", "2"))  # the restarted caches start past p1's revision
    api.restart()
    calls = seen.wait(2)
    wait_until(lambda: informer.lists == 2)
    assert calls[1] == ("add", "p2", calls[1][2], False)
    assert sorted(informer.keys()) == ["default/p1", "default/p2"]
    assert informer.resource_version == str(api.store.rv)


def test_an_error_410_in_the_stream_relists(
    api: ApiServerDouble, client: KubeClient, informers: list[Informer]
) -> None:
    api.create(pod("p1", "1"))
    clock = StepClock()
    informer, seen = start(informers, client, clock=clock)
    wait_until(watching(api))
    assert api.send_watch_error("pods") == 1
    wait_until(lambda: informer.lists == 2)
    assert seen.kinds() == [("add", "p1")]  # the relist changed nothing
    assert len(clock.sleeps) == 1


def test_watch_429_backs_off_and_watches_again_without_relisting(
    api: ApiServerDouble, client: KubeClient, informers: list[Informer]
) -> None:
    clock = StepClock()
    # Without Retry-After (urllib3 itself retries a 429 that has one, sleeping).
    api.inject(Fault(throttled(0), verb="watch", resource="pods", times=3))
    informer, seen = start(informers, client, clock=clock)
    wait_until(watching(api))
    api.create(pod("p1", "1"))
    seen.wait(1)
    assert informer.lists == 1 and informer.watches == 1
    assert len(clock.sleeps) == 3
    assert all(b <= s <= 2 * b for s, b in zip(clock.sleeps, (0.8, 1.6, 3.2), strict=True))


def test_failed_lists_back_off_as_client_go(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text(
        '{"apiVersion": "v1", "kind": "Config", "current-context": "c",'
        f' "clusters": [{{"name": "c", "cluster": {{"server": "http://127.0.0.1:{port}"}}}}],'
        ' "users": [{"name": "u", "user": {}}],'
        ' "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}'
    )
    clock = StepClock(limit=9)
    informer = Informer(
        connect(str(kubeconfig)), PODS, Recorder(), clock=clock, rng=random.Random(7)
    )
    informer.run()  # returns once the clock reports the stop
    draws = random.Random(7)
    bases = [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0, 30.0]
    assert clock.sleeps == [b + draws.random() * b for b in bases]
    assert not informer.has_synced()


def test_backoff_resets_after_two_quiet_minutes() -> None:
    clock = StepClock()
    backoff = Backoff(clock, random.Random(3), jitter=0.0)
    assert [backoff.next() for _ in range(3)] == [0.8, 1.6, 3.2]
    clock.time += 120.0  # not more than the reset interval
    assert backoff.next() == 6.4
    clock.time += 120.5
    assert [backoff.next() for _ in range(2)] == [0.8, 1.6]


def test_stop_is_prompt_during_a_watch_and_during_a_backoff(
    api: ApiServerDouble, client: KubeClient
) -> None:
    informer = Informer(client, PODS, Recorder(), clock=WallClock()).start()
    assert informer.wait_for_sync(2.0)
    wait_until(watching(api))
    began = time.monotonic()
    informer.stop()
    assert time.monotonic() - began < 0.5
    assert informer.stopped
    # In a backoff (a 30 s one): stop cuts it short.
    api.inject(Fault(server_error(), verb="list", resource="pods", times=100))
    backing_off = Informer(client, PODS, Recorder(), clock=WallClock())
    backing_off.backoff = Backoff(WallClock(), random.Random(1), initial=30.0)
    backing_off.start()
    wait_until(lambda: list_count(api) == 2)
    began = time.monotonic()
    backing_off.stop()
    assert time.monotonic() - began < 0.5


def test_a_failing_handler_does_not_stop_the_informer(
    api: ApiServerDouble, client: KubeClient, informers: list[Informer]
) -> None:
    class Picky(Recorder):
        def on_add(self, obj: Raw, initial: bool) -> None:
            super().on_add(obj, initial)
            if name(obj) == "bad":
                raise ValueError("cannot take it")

    picky = Picky()
    informer = Informer(client, PODS, picky, clock=StepClock())
    informers.append(informer.start())
    wait_until(watching(api))
    api.create(pod("bad", "1"))
    api.create(pod("good", "1"))
    picky.wait(2)
    assert sorted(informer.keys()) == ["default/bad", "default/good"]
    assert informer.watches == 1

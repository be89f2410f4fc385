"""kubesched.live.events: client-go's events/v1 broadcaster rules, against the
API-server double (series written as the server stores them) and, for the
failure paths, against a client whose answers the test chooses."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kubesched.api.convert import convert_pod
from kubesched.api.types import Pod
from kubesched.live.apiserver_double import ApiServerDouble
from kubesched.live.client import ClusterError, KubeClient, connect
from kubesched.live.events import EventBroadcaster, series_key
from kubesched.live.writer import LiveWriter, micro_time
from tests.live.cluster_state import double, pod, wait_for

pytest.importorskip("kubernetes")

T0 = 1_795_000_000_000_000_000
SECOND = 1_000_000_000


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


def typed(api: ApiServerDouble, name: str) -> Pod:
    raw = api.get("v1", "Pod", name, "default")
    assert raw is not None
    return convert_pod(raw)[0]


def event_writes(api: ApiServerDouble) -> list[tuple[str, str, Any]]:
    return [
        (method, path.rsplit("/", 1)[1], body)
        for method, path, _, body in list(api.requests)
        if "/apis/events.k8s.io/" in path and method in ("POST", "PATCH")
    ]


def test_repeats_become_one_event_whose_series_the_server_stores(tmp_path: Path) -> None:
    clock = Clock()
    with double(kubelet=False) as api:
        api.create(pod("p", "1"))
        api.create(pod("q", "1"))
        client = connect(str(api.write_kubeconfig(tmp_path / "kc")))
        w = LiveWriter(client, clock, "kubesched", "kubesched-host")
        p, q = typed(api, "p"), typed(api, "q")
        w.event(p, "Warning", "FailedScheduling", "Scheduling", "0/2 nodes are available: a")
        assert w.events.wait_idle()
        first = f"p.{T0:x}"
        clock.now += SECOND
        # The note differs: upstream's key leaves it out, so it is the same series.
        w.event(p, "Warning", "FailedScheduling", "Scheduling", "0/2 nodes are available: b")
        assert w.events.wait_idle()
        stored = api.get("events.k8s.io/v1", "Event", first, "default")
        assert stored is not None
        assert stored["series"] == {"count": 2, "lastObservedTime": micro_time(T0 + SECOND)}
        assert stored["note"] == "0/2 nodes are available: a"
        clock.now += SECOND
        w.event(p, "Warning", "FailedScheduling", "Scheduling", "0/2 nodes are available: c")
        w.event(q, "Warning", "FailedScheduling", "Scheduling", "0/2 nodes are available: a")
        assert w.events.wait_idle()
        # The third only counts; q's is an event of its own.
        stored = api.get("events.k8s.io/v1", "Event", first, "default")
        assert stored is not None and stored["series"]["count"] == 2
        w.close()  # a clean shutdown writes the count the server has not seen
        stored = api.get("events.k8s.io/v1", "Event", first, "default")
        assert stored is not None
        assert stored["series"] == {"count": 3, "lastObservedTime": micro_time(T0 + 2 * SECOND)}
        writes = [(m, name) for m, name, _ in event_writes(api)]
    assert writes == [
        ("POST", "events"),
        ("PATCH", first),
        ("POST", "events"),
        ("PATCH", first),
    ]
    patch = next(body for m, _, body in event_writes(api) if m == "PATCH")
    assert patch == {"series": {"count": 2, "lastObservedTime": micro_time(T0 + SECOND)}}


def test_a_singleton_leaves_the_cache_after_the_finish_time_and_a_series_ends(
    tmp_path: Path,
) -> None:
    clock = Clock()
    with double(kubelet=False) as api:
        api.create(pod("p", "1"))
        api.create(pod("q", "1"))
        client = connect(str(api.write_kubeconfig(tmp_path / "kc")))
        w = LiveWriter(client, clock, "kubesched", "kubesched-host")
        finish = 10 * SECOND
        w.events = EventBroadcaster(client, clock, senders=1, finish_time=finish)
        p, q = typed(api, "p"), typed(api, "q")
        for _ in range(3):
            w.event(q, "Normal", "Preempted", "Preempting", "by x")
        w.event(p, "Normal", "Scheduled", "Binding", "assigned")
        assert w.events.wait_idle()
        clock.now += finish + SECOND
        # Make the sweep due now (it runs every finish time on the monotonic clock).
        with w.events._cond:
            w.events._finish_at = 0.0
            w.events._cond.notify_all()
        q_event = f"q.{T0:x}"
        wait_for(
            lambda: (
                (api.get("events.k8s.io/v1", "Event", q_event, "default") or {})
                .get("series", {})
                .get("count")
                == 3
            ),
            5,
        )
        assert w.events.wait_idle()
        w.event(p, "Normal", "Scheduled", "Binding", "assigned again")
        w.close()
        names = [body["metadata"]["name"] for m, _, body in event_writes(api) if m == "POST"]
    # p's first event was forgotten: its repeat is a new event, not a series.
    assert names == [q_event, f"p.{T0:x}", f"p.{T0 + finish + SECOND:x}"]


class Scripted(KubeClient):
    """A client whose answers are scripted per call (a ClusterError to raise, or
    None to succeed); it records every request."""

    def __init__(self, answers: list[ClusterError | None], gate: threading.Event | None = None):
        super().__init__(None, "http://scripted")
        self.answers = answers
        self.gate = gate
        self.calls: list[tuple[str, str, Any]] = []
        self.lock = threading.Lock()

    def request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        if self.gate is not None:
            assert self.gate.wait(10)
        with self.lock:
            self.calls.append((method, path, kwargs.get("body")))
            answer = self.answers.pop(0) if self.answers else None
        if answer is not None:
            raise answer
        return {}


def raw_event(name: str, reason: str = "Scheduled") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "default"},
        "eventTime": micro_time(T0),
        "reason": reason,
        "action": "Binding",
        "type": "Normal",
        "regarding": {"kind": "Pod", "namespace": "default", "name": name, "uid": name},
    }


def unreachable() -> ClusterError:
    return ClusterError("cannot reach http://scripted: connection refused")


def test_no_answer_is_tried_again_without_holding_up_other_events() -> None:
    client = Scripted([unreachable(), None, None])
    b = EventBroadcaster(client, Clock(), senders=1, retry_sleep=0.3)
    b.record(raw_event("a"), T0)
    b.record(raw_event("b"), T0)
    assert b.wait_idle()
    # a failed, b was written while a waits for its retry.
    assert [body["metadata"]["name"] for _, _, body in client.calls] == ["a", "b"]
    wait_for(lambda: len(client.calls) == 3, 5, 0.01)
    assert client.calls[-1][2]["metadata"]["name"] == "a"
    b.shutdown()
    assert b.written == 2 and b.abandoned == 0 and b.dropped == 0


def test_a_refused_event_is_abandoned_and_a_series_create_race_is_retried() -> None:
    refused = ClusterError("create event: forbidden: no", 403, "Forbidden", "no")
    exists = ClusterError("create event: already exists", 409, "AlreadyExists", "exists")
    gone = ClusterError("patch event: not found", 404, "NotFound", "gone")
    # x: refused. y: created; its repeat's PATCH finds it not yet there (404), the
    # create that follows finds it there (409): tried again, the PATCH then works.
    client = Scripted([refused, None, gone, exists, None])
    b = EventBroadcaster(client, Clock(), senders=1, retry_sleep=0.05)
    b.record(raw_event("x", "Preempted"), T0)
    b.record(raw_event("y"), T0)
    b.record(raw_event("y"), T0 + SECOND)
    wait_for(lambda: len(client.calls) == 5, 5, 0.01)
    b.shutdown()
    assert [(m, p.rsplit("/", 1)[1]) for m, p, _ in client.calls] == [
        ("POST", "events"),
        ("POST", "events"),
        ("PATCH", "y"),
        ("POST", "events"),
        ("PATCH", "y"),
    ]
    assert client.calls[3][2]["series"]["count"] == 2  # the create carries the series
    assert b.abandoned == 1 and b.written == 2


def test_a_full_queue_drops_and_counts_and_shutdown_flushes_the_rest() -> None:
    gate = threading.Event()
    client = Scripted([], gate)
    b = EventBroadcaster(client, Clock(), senders=1, max_queued=3)
    b.record(raw_event("e0"), T0)
    wait_for(lambda: not b._incoming and b._busy == 1, 5, 0.01)
    for i in range(1, 6):
        b.record(raw_event(f"e{i}"), T0)
    # The sender holds e0 (blocked in the request); e1-e3 wait; e4 and e5 find it full.
    assert b.dropped == 2
    gate.set()
    b.shutdown()
    assert [body["metadata"]["name"] for _, _, body in client.calls] == ["e0", "e1", "e2", "e3"]
    assert not b.record(raw_event("late"), T0) and b.dropped == 3


def test_shutdown_writes_every_queued_event_before_it_returns() -> None:
    client = Scripted([])
    b = EventBroadcaster(client, Clock(), senders=2)
    for i in range(50):
        b.record(raw_event(f"e{i}"), T0)
    b.shutdown()
    assert sorted(body["metadata"]["name"] for _, _, body in client.calls) == sorted(
        f"e{i}" for i in range(50)
    )
    assert b.written == 50


def test_the_series_key_is_upstreams() -> None:
    a = raw_event("a")
    assert series_key(a) == series_key({**a, "note": "other", "eventTime": "later"})
    for field, value in (
        ("reason", "Other"),
        ("action", "Other"),
        ("type", "Warning"),
        ("reportingInstance", "other"),
        ("related", {"kind": "Pod", "name": "z"}),
    ):
        assert series_key(a) != series_key({**a, field: value}), field
    moved = {**a, "regarding": {**a["regarding"], "uid": "other"}}
    assert series_key(a) != series_key(moved)


def test_wait_idle_times_out_while_a_write_hangs() -> None:
    gate = threading.Event()
    b = EventBroadcaster(Scripted([], gate), Clock(), senders=1)
    b.record(raw_event("a"), T0)
    t0 = time.monotonic()
    assert not b.wait_idle(0.2)
    assert time.monotonic() - t0 < 5
    gate.set()
    assert b.wait_idle()
    b.shutdown()

"""KubeClient.watch and WatchStream against the API-server double (over HTTP)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kubesched.live.apiserver_double import ApiServerDouble, Fault, server_error
from kubesched.live.client import ClusterError, Expired, KubeClient, Resource, WatchStalled, connect
from tests.live.cluster_state import double, pod, wait_for

pytest.importorskip("kubernetes")

PODS = Resource("", "v1", "pods", "Pod")


@pytest.fixture
def api() -> Iterator[ApiServerDouble]:
    with double() as server:
        yield server


@pytest.fixture(params=["channel", "pool"])
def client(api: ApiServerDouble, tmp_path: Path, request: pytest.FixtureRequest) -> KubeClient:
    """The client ``connect`` makes, and (``pool``) the same without its channel:
    every request through the library's urllib3 pool, as with a proxy."""
    made = connect(str(api.write_kubeconfig(tmp_path / "kubeconfig")))
    return made if request.param == "channel" else KubeClient(made._api, made.host, made.source)


def test_watch_yields_events_as_they_happen_and_ends_with_the_server(
    api: ApiServerDouble, client: KubeClient
) -> None:
    _, version = client.list(PODS)
    stream = client.watch(PODS, version, timeout_seconds=30)
    events = iter(stream)
    created = api.create(pod("a", "1"))
    first = next(events)
    assert first["type"] == "ADDED" and first["object"]["metadata"] == created["metadata"]
    api.create(pod("b", "1"))
    assert next(events)["object"]["metadata"]["name"] == "b"
    api.clock.advance(31)  # the server's timeoutSeconds (bookmarks come 2 s before)
    rest = list(events)
    assert rest and {e["type"] for e in rest} == {"BOOKMARK"}
    assert rest[-1]["object"]["metadata"]["resourceVersion"] == str(api.store.rv)
    assert stream.outcome == "ended"
    query = [q for m, p, q, _ in api.requests if "watch" in q][-1]
    assert query == {
        "watch": "1",
        "allowWatchBookmarks": "true",
        "resourceVersion": version,
        "timeoutSeconds": "30",
    }


def test_error_410_event_raises_expired(api: ApiServerDouble, client: KubeClient) -> None:
    _, version = client.list(PODS)
    api.create(pod("a", "1"))
    api.expire_watch_history("pods")
    with pytest.raises(Expired) as caught:
        list(client.watch(PODS, version))
    assert caught.value.status == 410 and caught.value.reason == "Expired"
    assert str(caught.value).startswith(f"watch pods: expired: too old resource version: {version}")


def test_dropped_stalled_and_closed_streams(api: ApiServerDouble, client: KubeClient) -> None:
    _, version = client.list(PODS)
    dropped = client.watch(PODS, version)
    api.drop_watches()
    assert list(dropped) == [] and dropped.outcome == "dropped"

    stalled = client.watch(PODS, version, stall_timeout=0.2)
    api.stall_watches()
    api.create(pod("held", "1"))
    with pytest.raises(WatchStalled):
        list(stalled)
    assert stalled.outcome == "stalled"

    closed = client.watch(PODS, version)
    threading.Timer(0.1, closed.close).start()
    began = time.monotonic()
    assert [e["object"]["metadata"]["name"] for e in closed] == ["held"]
    assert closed.outcome == "closed" and time.monotonic() - began < 1.0
    closed.close()  # again: harmless


def test_a_refused_watch_raises_at_once(api: ApiServerDouble, client: KubeClient) -> None:
    api.inject(Fault(server_error(), verb="watch", resource="pods"))
    with pytest.raises(ClusterError) as caught:
        client.watch(PODS, "1")
    assert caught.value.status == 500 and not isinstance(caught.value, Expired)


def test_retry_after_is_honoured_for_every_verb_as_client_go(
    api: ApiServerDouble, client: KubeClient
) -> None:
    """429, or 5xx with Retry-After: sent again after that many seconds (a POST
    too), at most MAX_RETRIES times; a 5xx without Retry-After is not retried."""
    from kubesched.live.apiserver_double import throttled
    from kubesched.live.client import MAX_RETRIES

    sleeps: list[float] = []
    client._sleep = sleeps.append
    api.create(pod("a", "1"))
    path = "/api/v1/namespaces/default/pods"
    api.inject(Fault(throttled(2), verb="create", times=2))
    api.inject(Fault(server_error(retry_after=1), verb="list"))
    created = client.request("POST", path, body=pod("b", "1"))
    assert created["metadata"]["name"] == "b" and sleeps == [2, 2]
    assert {p["metadata"]["name"] for p in client.list(PODS)[0]} == {"a", "b"}
    assert sleeps == [2, 2, 1]
    api.inject(Fault(server_error(), verb="get"))
    with pytest.raises(ClusterError) as err:
        client.get(f"{path}/a")
    assert err.value.status == 500 and sleeps == [2, 2, 1]
    fault = api.inject(Fault(throttled(1), verb="patch", times=MAX_RETRIES + 5))
    with pytest.raises(ClusterError) as err:
        client.request("PATCH", f"{path}/a", body={}, content_type="application/merge-patch+json")
    assert err.value.status == 429 and fault.hits == MAX_RETRIES + 1
    assert sleeps == [2, 2, 1] + [1] * MAX_RETRIES


def test_interrupt_ends_every_retry_after_wait_at_once(
    api: ApiServerDouble, client: KubeClient
) -> None:
    """A request and a watch (of the event client ``with_own_limit`` made)
    throttled with Retry-After 30 fail within a second of ``interrupt()``,
    without being sent again; later a throttled request fails at once, and one
    the server answers still goes through."""
    from kubesched.live.apiserver_double import throttled

    api.create(pod("a", "1"))
    path = "/api/v1/namespaces/default/pods"
    faults = [
        api.inject(Fault(throttled(30), verb="create", times=3)),
        api.inject(Fault(throttled(30), verb="watch", resource="pods", times=3)),
    ]
    other = client.with_own_limit()
    failed: list[tuple[str, float]] = []

    def call(request: Callable[[], object]) -> None:
        try:
            request()
        except ClusterError as err:
            assert err.status == 0
            failed.append((str(err), time.monotonic()))

    threads = [
        threading.Thread(
            target=call, args=(lambda: client.request("POST", path, body=pod("b", "1")),)
        ),
        threading.Thread(target=call, args=(lambda: other.watch(PODS, "1"),)),
    ]
    for thread in threads:
        thread.start()
    wait_for(lambda: all(f.hits == 1 for f in faults), 5, 0.01)
    time.sleep(0.2)  # both wait on the Retry-After now
    began = time.monotonic()
    client.interrupt()
    for thread in threads:
        thread.join(5)
    assert sorted(text for text, _ in failed) == [
        f"POST {path}: not sent again after Retry-After 30s: the client is shutting down",
        "watch pods: not sent again after Retry-After 30s: the client is shutting down",
    ]
    assert all(at - began < 1.0 for _, at in failed)
    assert [f.hits for f in faults] == [1, 1]

    later = api.inject(Fault(throttled(30), verb="get"))
    began = time.monotonic()
    with pytest.raises(ClusterError, match=r"get pod a: not sent again .* shutting down"):
        client.get(f"{path}/a", what="get pod a")
    assert time.monotonic() - began < 1.0 and later.hits == 1
    assert client.get(f"{path}/a")["metadata"]["name"] == "a"

"""The double's fault hooks and time-driven behaviour, over HTTP on loopback.

Expected wording is upstream's (cited per case); every wait is bounded.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Iterator

import pytest

from kubesched.live.apiserver_double import (
    ApiServerDouble,
    Auth,
    Fault,
    ManualClock,
    Rule,
    binding_lost,
    server_error,
    throttled,
)
from tests.live.apiserver_double.wire import Wire

PODS = "/api/v1/namespaces/default/pods"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"


def pod(name: str) -> dict[str, object]:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "x"}]}}


@pytest.fixture
def api() -> Iterator[ApiServerDouble]:
    server = ApiServerDouble(clock=ManualClock()).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def wire(api: ApiServerDouble) -> Wire:
    return Wire(api.url, timeout=5)


def created_rv(wire: Wire, name: str) -> int:
    resp = wire.call("POST", PODS, pod(name))
    assert resp.status == 201, resp.body
    return int(resp.body["metadata"]["resourceVersion"])


def test_expired_watch_history_gives_410_error_event(api: ApiServerDouble, wire: Wire) -> None:
    rv = created_rv(wire, "a")
    created_rv(wire, "b")
    floor = api.expire_watch_history("pods")
    reader = wire.watch(f"{PODS}?watch=1&resourceVersion={rv}&timeoutSeconds=10")
    events = reader.finish()
    # cacher: "too old resource version: %d (%d)" with the window's floor, as an ERROR event.
    assert events == [
        {
            "type": "ERROR",
            "object": {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": f"too old resource version: {rv} ({floor})",
                "reason": "Expired",
                "code": 410,
            },
        }
    ]
    assert reader.status == 200 and reader.outcome == "clean"


def test_error_410_sent_into_open_watches(api: ApiServerDouble, wire: Wire) -> None:
    reader = wire.watch(f"{PODS}?watch=1&timeoutSeconds=100")
    created_rv(wire, "a")
    assert reader.next()["type"] == "ADDED"
    assert api.send_watch_error("pods") == 1
    rest = reader.finish()
    assert [e["type"] for e in rest] == ["ERROR"]
    assert rest[0]["object"]["code"] == 410
    assert reader.outcome == "clean"


def test_dropped_watch_has_no_terminating_chunk(api: ApiServerDouble, wire: Wire) -> None:
    reader = wire.watch(f"{PODS}?watch=1&timeoutSeconds=100")
    assert api.drop_watches("pods") == 1
    assert reader.finish() == []
    assert reader.outcome == "cut"


def test_stalled_watch_holds_events_until_resumed(api: ApiServerDouble, wire: Wire) -> None:
    reader = wire.watch(f"{PODS}?watch=1&timeoutSeconds=100")
    api.stall_watches()
    created_rv(wire, "a")
    with pytest.raises(queue.Empty):
        reader.next(timeout=0.3)
    api.resume_watches()
    event = reader.next(timeout=5)
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "a")
    reader.close()


@pytest.mark.parametrize(
    ("fault", "verb_path", "code", "retry_after"),
    [
        pytest.param(
            Fault(throttled(3), verb="list", resource="pods"),
            ("GET", PODS),
            429,
            "3",
            id="429-list-retry-after",
        ),
        pytest.param(
            Fault(server_error(), verb="create", resource="pods"),
            ("POST", PODS),
            500,
            None,
            id="500-create",
        ),
        pytest.param(
            Fault(server_error(retry_after=2), verb="patch", resource="pods", subresource="status"),
            ("PATCH", f"{PODS}/p/status"),
            500,
            "2",
            id="500-status-patch-retry-after",
        ),
    ],
)
def test_injected_status_then_normal_service(
    api: ApiServerDouble,
    wire: Wire,
    fault: Fault,
    verb_path: tuple[str, str],
    code: int,
    retry_after: str | None,
) -> None:
    created_rv(wire, "p")
    api.inject(fault)
    method, path = verb_path
    body = {"POST": pod("q"), "PATCH": {"status": {"nominatedNodeName": "n1"}}}.get(method)
    first = wire.call(
        method,
        path,
        body,
        "application/merge-patch+json" if method == "PATCH" else "application/json",
    )
    assert first.status == code
    assert first.body == fault.error.status()
    assert first.headers.get("Retry-After") == retry_after
    if retry_after:
        assert first.body["details"]["retryAfterSeconds"] == int(retry_after)
    ctype = "application/merge-patch+json" if method == "PATCH" else "application/json"
    assert wire.call(method, path, body, ctype).status in (200, 201)  # armed for one request only


def test_binding_lost_to_another_scheduler(api: ApiServerDouble, wire: Wire) -> None:
    created_rv(wire, "p")
    api.inject(Fault(binding_lost("p", "other-node"), subresource="binding", name="p"))
    resp = wire.call(
        "POST", f"{PODS}/p/binding", {"metadata": {"name": "p"}, "target": {"name": "n1"}}
    )
    assert resp.status == 409
    assert (
        resp.body["message"] == 'Operation cannot be fulfilled on pods/binding "p": pod p is '
        'already assigned to node "other-node"'
    )
    assert "nodeName" not in wire.call("GET", f"{PODS}/p").body["spec"]


def test_restart_keeps_state_and_revisions_cuts_watches_and_relists_caches(
    api: ApiServerDouble, wire: Wire
) -> None:
    old = created_rv(wire, "a")
    reader = wire.watch(
        f"{PODS}?watch=1&resourceVersion={old}&allowWatchBookmarks=true&timeoutSeconds=100"
    )
    created_rv(wire, "later")
    assert reader.next()["object"]["metadata"]["name"] == "later"
    api.restart()
    assert reader.finish() == [] and reader.outcome == "cut"
    assert wire.call("GET", f"{PODS}/a").status == 200
    current = api.store.rv
    assert created_rv(wire, "b") == current + 1
    # The restarted watch cache starts at the revision it relisted at: older starts are 410.
    stale = wire.watch(f"{PODS}?watch=1&resourceVersion={old}&timeoutSeconds=10").finish()
    assert stale[0]["type"] == "ERROR"
    assert stale[0]["object"]["message"] == f"too old resource version: {old} ({current})"


def test_stolen_lease_is_seen_and_the_old_holder_conflicts(
    api: ApiServerDouble, wire: Wire
) -> None:
    lease = {
        "metadata": {"name": "kubesched"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15},
    }
    mine = wire.call("POST", LEASES, lease).body
    reader = wire.watch(
        f"{LEASES}?watch=1&resourceVersion={mine['metadata']['resourceVersion']}&timeoutSeconds=100"
    )
    stolen = api.steal_lease("kube-system", "kubesched", "b")
    event = reader.next()
    assert event["type"] == "MODIFIED"
    assert event["object"]["spec"]["holderIdentity"] == "b"
    assert stolen["spec"]["leaseTransitions"] == 1
    mine["spec"]["renewTime"] = "2026-01-01T00:00:00.000000Z"
    renew = wire.call("PUT", f"{LEASES}/kubesched", mine)
    assert renew.status == 409
    assert renew.body["reason"] == "Conflict"
    reader.close()


def test_compaction_expires_exact_lists_and_continue_tokens(
    api: ApiServerDouble, wire: Wire
) -> None:
    for name in ("a", "b", "c"):
        created_rv(wire, name)
    page = wire.call("GET", f"{PODS}?limit=1").body
    old_rv = page["metadata"]["resourceVersion"]
    token = page["metadata"]["continue"]
    created_rv(wire, "d")
    # Before compaction both still read the old revision: d is not in it.
    rest = wire.call("GET", f"{PODS}?limit=10&continue={token}").body
    assert [i["metadata"]["name"] for i in rest["items"]] == ["b", "c"]
    api.compact()
    exact = wire.call("GET", f"{PODS}?resourceVersion={old_rv}&resourceVersionMatch=Exact")
    assert (exact.status, exact.body["message"]) == (
        410,
        "The resourceVersion for the provided list is too old.",
    )
    expired = wire.call("GET", f"{PODS}?limit=10&continue={token}")
    assert expired.status == 410
    assert expired.body["message"].startswith("The provided continue parameter is too old")


def test_watch_ends_cleanly_at_its_timeout_on_the_manual_clock(
    api: ApiServerDouble, wire: Wire
) -> None:
    reader = wire.watch(f"{PODS}?watch=1&timeoutSeconds=30")
    api.clock.advance(29)
    assert not reader.done.wait(0.2)
    api.clock.advance(1)
    assert reader.finish() == [] and reader.outcome == "clean"


def test_watch_timeout_on_the_real_clock() -> None:
    with ApiServerDouble() as real:
        reader = Wire(real.url, timeout=5).watch(f"{PODS}?watch=1&timeoutSeconds=1")
        started = time.monotonic()
        assert reader.finish(timeout=5) == []
        assert reader.outcome == "clean"
        assert time.monotonic() - started < 4


def test_bookmarks_follow_the_cachers_schedule(api: ApiServerDouble, wire: Wire) -> None:
    rv = api.store.rv
    reader = wire.watch(
        f"{PODS}?watch=1&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=300"
    )
    created = created_rv(wire, "a")
    assert reader.next()["type"] == "ADDED"
    api.clock.advance(59)
    assert reader.events.empty()
    api.clock.advance(1.5)  # the one-minute heartbeat
    bookmark = reader.next()
    assert bookmark == {
        "type": "BOOKMARK",
        "object": {
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": str(created)},
            "spec": {"containers": None},
            "status": {},
        },
    }
    reader.close()


def test_unauthenticated_and_forbidden(api: ApiServerDouble) -> None:
    api.auth.tokens.update({"tok": "kubesched"})
    api.auth.rules["kubesched"] = [Rule(("get", "list", "watch"), ("",), ("pods",))]
    anonymous = Wire(api.url).call("GET", PODS)
    assert anonymous.status == 401
    assert anonymous.body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    }
    user = Wire(api.url, token="tok")
    assert user.call("GET", PODS).status == 200
    nodes = user.call("GET", "/api/v1/nodes")
    assert nodes.status == 403
    # forbiddenMessage: no name, cluster scope.
    assert (
        nodes.body["message"] == 'nodes is forbidden: User "kubesched" cannot list resource '
        '"nodes" in API group "" at the cluster scope'
    )
    bind = user.call(
        "POST", f"{PODS}/x/binding", {"metadata": {"name": "x"}, "target": {"name": "n"}}
    )
    assert (
        bind.body["message"] == 'pods "x" is forbidden: User "kubesched" cannot create '
        'resource "pods/binding" in API group "" in the namespace "default"'
    )


def test_fake_kubelet_finishes_graceful_deletion_at_the_deadline(
    api: ApiServerDouble, wire: Wire
) -> None:
    created_rv(wire, "p")
    wire.call("POST", f"{PODS}/p/binding", {"metadata": {"name": "p"}, "target": {"name": "n1"}})
    deleting = wire.call("DELETE", f"{PODS}/p", {"gracePeriodSeconds": 10}).body
    assert deleting["metadata"]["deletionGracePeriodSeconds"] == 10
    api.clock.advance(9)
    assert wire.call("GET", f"{PODS}/p").status == 200
    api.clock.advance(1)
    assert wire.call("GET", f"{PODS}/p").status == 404


def test_disabled_kubelet_leaves_terminating_pods(api: ApiServerDouble, wire: Wire) -> None:
    api.kubelet.enabled = False
    created_rv(wire, "p")
    wire.call("POST", f"{PODS}/p/binding", {"metadata": {"name": "p"}, "target": {"name": "n1"}})
    wire.call("DELETE", f"{PODS}/p")
    api.clock.advance(3600)
    assert wire.call("GET", f"{PODS}/p").body["metadata"]["deletionGracePeriodSeconds"] == 30


def test_kubelet_can_run_bound_pods(api: ApiServerDouble, wire: Wire) -> None:
    api.kubelet.run_bound_pods = True
    created_rv(wire, "p")
    wire.call("POST", f"{PODS}/p/binding", {"metadata": {"name": "p"}, "target": {"name": "n1"}})
    status = wire.call("GET", f"{PODS}/p").body["status"]
    assert status["phase"] == "Running"
    assert [(c["type"], c["status"]) for c in status["conditions"]] == [
        ("PodScheduled", "True"),
        ("Ready", "True"),
    ]


def test_auth_off_by_default() -> None:
    assert Auth().authenticate(None) == "system:admin"

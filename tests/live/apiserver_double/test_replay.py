"""Replay of every request/response pair recorded from a real kube-apiserver v1.36.2.

For each recording (wire/NAME.json, one test id per file), a scene builds the
state the recording needed in a fresh double on a ManualClock — by requests of
its own, with client-chosen inputs (pod specs as `kubectl create` sends them)
and, where the recording's numbers matter, the same revisions (the revision
counter is moved forward, as other writers moved the real one). Then the
recorded request is sent over HTTP and the answer is compared with the
recording: the status, and
- a Status body field by field (reason, message, details, code) plus Retry-After;
- an object after masking what identifies the recording's instance (uid,
  resourceVersion, server clock timestamps; managedFields are not written by
  the double) — every other field, defaults and list order included, must be equal;
- a watch stream event by event (type, name, revision, node, condition types,
  deletion fields), bookmarks whole, and how the stream ended.
The recordings directory comes from $KUBESCHED_LIVE_RECORDINGS (else the
development machines' shared copy); without it every case skips.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from kubesched.live.apiserver_double import ApiServerDouble, Auth, ManualClock, Rule
from kubesched.live.apiserver_double.objects import parse_time, rfc3339
from tests.live.apiserver_double.wire import Response, WatchReader, Wire, recording, recordings_dir

Obj = dict[str, Any]
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


# -- comparison ------------------------------------------------------------------


def _times(value: Any) -> set[str]:
    """Timestamps a client chose (creationTimestamp is the server's, whatever is sent)."""
    if isinstance(value, dict):
        kept = [v for k, v in value.items() if k not in ("creationTimestamp", "managedFields")]
        return set().union(*(_times(v) for v in kept)) if kept else set()
    if isinstance(value, list):
        return set().union(*(_times(v) for v in value)) if value else set()
    return {value} if isinstance(value, str) and TIME.match(value) else set()


def masked(obj: Any, keep: set[str]) -> Any:
    """Replace instance identity and server-clock times; keep times the request sent."""
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            if key == "managedFields":
                continue
            if key == "uid" and isinstance(value, str):
                out[key] = "<uid>"
            elif key == "resourceVersion" and isinstance(value, str):
                out[key] = "<rv>"
            else:
                out[key] = masked(value, keep)
        return out
    if isinstance(obj, list):
        return [masked(v, keep) for v in obj]
    if isinstance(obj, str) and TIME.match(obj) and obj not in keep:
        return "<time>"
    return obj


def assert_same_answer(rec: Obj, got: Response) -> None:
    want = rec["response"]
    assert got.status == want["status"], got.body
    body = want["body"]
    if isinstance(body, dict) and body.get("kind") == "Status":
        assert got.body == body
        if "Retry-After" in want["headers"]:
            assert got.headers.get("Retry-After") == want["headers"]["Retry-After"]
        else:
            assert "Retry-After" not in got.headers
        return
    keep = _times(rec["request"]["body"])
    assert masked(got.body, keep) == masked(body, keep)


def event_key(event: Obj) -> tuple[Any, ...]:
    obj = event["object"]
    meta = obj.get("metadata") or {}
    if event["type"] in ("BOOKMARK", "ERROR"):
        return (event["type"], obj)
    conditions = [c.get("type") for c in (obj.get("status") or {}).get("conditions") or []]
    return (
        event["type"],
        meta.get("name"),
        meta.get("resourceVersion"),
        (obj.get("spec") or {}).get("nodeName"),
        tuple(conditions),
        bool(meta.get("deletionTimestamp")),
        meta.get("deletionGracePeriodSeconds"),
        meta.get("generation"),
        meta.get("labels"),
        (obj.get("spec") or {}).get("holderIdentity"),
        (obj.get("spec") or {}).get("renewTime"),
    )


# -- scenes ------------------------------------------------------------------------


@dataclass
class Scene:
    api: ApiServerDouble
    wire: Wire
    rec: Obj
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def clock(self) -> ManualClock:
        clock: ManualClock = self.api.clock
        return clock

    def ok(self, method: str, path: str, body: Any = None, ctype: str = "application/json") -> Obj:
        resp = self.wire.call(method, path, body, ctype)
        assert resp.status < 300, resp.body
        out: Obj = resp.body
        return out

    def at(self, rv: int) -> None:
        """The next write gets revision rv (other writers moved the real counter)."""
        self.api.jump_resource_version(rv - 1)

    def send(self, body: Any = "recorded") -> Response:
        req = self.rec["request"]
        payload = req["body"] if body == "recorded" else body
        return self.wire.call(
            req["method"], req["path"], payload, req["contentType"] or "application/json"
        )


PODS = "/api/v1/namespaces/default/pods"


def pod(
    name: str,
    cls: str | None = None,
    cpu: str | None = "3",
    image: str = "nginx",
    labels: Obj | None = None,
) -> Obj:
    container: Obj = {"name": "c", "image": image}
    if cpu:
        container["resources"] = {"requests": {"cpu": cpu}}
    spec: Obj = {"schedulerName": "kubesched", "containers": [container]}
    if cls:
        spec["priorityClassName"] = cls
    meta: Obj = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def high_class(s: Scene) -> None:
    s.ok(
        "POST",
        "/apis/scheduling.k8s.io/v1/priorityclasses",
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000000,
        },
    )


def low_then_high(s: Scene, low_rv: int | None = None) -> None:
    high_class(s)
    if low_rv:
        s.at(low_rv)
    s.ok("POST", PODS, pod("low-1"))
    s.ok("POST", PODS, pod("high-1", "high"))


def bind(s: Scene, name: str, node: str) -> None:
    s.ok(
        "POST",
        f"{PODS}/{name}/binding",
        {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name},
            "target": {"kind": "Node", "name": node},
        },
    )


def patch_like(s: Scene, name: str) -> None:
    """Send another recording's request (used to build the state a later recording saw)."""
    req = recording(name)["request"]
    s.ok(req["method"], req["path"], req["body"], req["contentType"])


def run_watch(s: Scene, advance: float) -> tuple[list[Obj], str | None]:
    reader = s.wire.watch(s.rec["request"]["path"])
    assert reader.status == 200
    s.clock.advance(advance)
    events = reader.finish()
    return events, reader.outcome


def expect_stream(s: Scene, events: list[Obj], outcome: str | None) -> None:
    want = [e["event"] for e in s.rec["response"]["stream"]]
    assert [event_key(e) for e in events] == [event_key(e) for e in want]
    assert outcome == "clean"


# Each scene builds state, sends the recorded request and checks the answer.


def scene_list_rv0(s: Scene) -> None:
    low_then_high(s)
    got = s.send()
    assert_same_answer(s.rec, got)
    # resourceVersion=0 is served by the watch cache: its revision is the newest pod's.
    newest = max(int(i["metadata"]["resourceVersion"]) for i in got.body["items"])
    assert int(got.body["metadata"]["resourceVersion"]) == newest


def scene_list_consistent(s: Scene) -> None:
    low_then_high(s)
    s.ok(
        "POST",
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
        {"metadata": {"name": "other"}, "spec": {}},
    )
    got = s.send()
    assert_same_answer(s.rec, got)
    # A consistent read is at the current revision, past the pods' own.
    item_rvs = [int(i["metadata"]["resourceVersion"]) for i in got.body["items"]]
    assert int(got.body["metadata"]["resourceVersion"]) == s.api.store.rv > max(item_rvs)


def scene_watch_bookmarks(s: Scene) -> None:
    s.api.kubelet.enabled = False  # none in the recording: a terminating pod stays
    s.ok("POST", "/api/v1/nodes", {"metadata": {"name": "n2"}})
    s.clock.advance(0.5)  # the watch starts half-way into the cacher's one-second bookmark buckets
    s.at(285)
    reader: WatchReader = s.wire.watch(s.rec["request"]["path"])
    s.ok("POST", PODS, pod("low-2"))
    bind(s, "low-2", "n2")
    s.ok(
        "PATCH",
        f"{PODS}/low-2/status",
        {
            "status": {
                "conditions": [
                    {
                        "type": "DisruptionTarget",
                        "status": "True",
                        "reason": "PreemptionByScheduler",
                        "message": "preempted",
                    }
                ]
            }
        },
        "application/strategic-merge-patch+json",
    )
    s.ok(
        "DELETE",
        f"{PODS}/low-2",
        {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 5},
    )
    s.at(294)
    s.ok("POST", PODS, pod("pdb-1", labels={"app": "pdb"}))
    s.ok(
        "POST",
        "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
        {
            "metadata": {"name": "pdb1"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "pdb"}}},
        },
    )
    s.ok(
        "POST",
        f"{PODS}/pdb-1/eviction",
        {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": "pdb-1", "namespace": "default"},
        },
    )
    s.clock.advance(75)
    expect_stream(s, reader.finish(), reader.outcome)


def scene_watchlist(s: Scene) -> None:
    low_then_high(s, low_rv=212)
    events, outcome = run_watch(s, 3)
    expect_stream(s, events, outcome)


def scene_watch_leases(s: Scene) -> None:
    stream = [e["event"]["object"] for e in s.rec["response"]["stream"]]
    first = stream[0]
    s.at(int(first["metadata"]["resourceVersion"]))
    base = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
    meta = {k: first["metadata"][k] for k in ("name", "labels", "annotations")}
    created = s.ok("POST", base, {"metadata": meta, "spec": first["spec"]})
    for later in stream[1:]:
        s.at(int(later["metadata"]["resourceVersion"]))
        body = copy.deepcopy(created)
        body["spec"] = later["spec"]
        created = s.ok("PUT", f"{base}/{first['metadata']['name']}", body)
    events, outcome = run_watch(s, 2)
    expect_stream(s, events, outcome)


def _pods_at_212(s: Scene, touched: bool, window: int | None = None) -> None:
    low_then_high(s, low_rv=212)
    if touched:
        s.at(246)
        s.ok(
            "PATCH",
            f"{PODS}/low-1",
            {"metadata": {"labels": {"touched": "yes"}}},
            "application/merge-patch+json",
        )
    if window:
        s.at(window + 1)
        s.api.expire_watch_history("pods", window)


def scene_watch_window(
    touched: bool, window: int | None, timeout: float
) -> Callable[[Scene], None]:
    def scene(s: Scene) -> None:
        _pods_at_212(s, touched, window)
        events, outcome = run_watch(s, timeout)
        expect_stream(s, events, outcome)

    return scene


def scene_list_exact_too_old(s: Scene) -> None:
    low_then_high(s)
    s.api.compact()
    assert_same_answer(s.rec, s.send())


def scene_list_limit(s: Scene) -> None:
    low_then_high(s)
    s.at(330)  # the recording listed at revision 329
    got = s.send()
    assert got.status == 200
    assert got.body["metadata"] == s.rec["response"]["body"]["metadata"]
    assert [i["metadata"]["name"] for i in got.body["items"]] == ["high-1"]


def scene_binding_ok(s: Scene) -> None:
    s.ok("POST", PODS, pod("low-1"))
    assert_same_answer(s.rec, s.send())
    assert s.ok("GET", f"{PODS}/low-1")["spec"]["nodeName"] == "n1"


def scene_binding_bound(s: Scene) -> None:
    s.ok("POST", PODS, pod("low-1"))
    bind(s, "low-1", "n1")
    assert_same_answer(s.rec, s.send())


def scene_plain(setup: Callable[[Scene], None] | None = None) -> Callable[[Scene], None]:
    def scene(s: Scene) -> None:
        if setup:
            setup(s)
        assert_same_answer(s.rec, s.send())

    return scene


def high_pending(s: Scene) -> None:
    high_class(s)
    s.ok("POST", PODS, pod("high-1", "high"))


def low_bound(s: Scene) -> None:
    s.ok("POST", PODS, pod("low-1"))
    bind(s, "low-1", "n1")


def low_victim(s: Scene) -> None:
    low_bound(s)
    patch_like(s, "E2-victim-disruptiontarget-smp")


def scene_delete_graceful(s: Scene) -> None:
    low_victim(s)
    got = s.send()
    assert_same_answer(s.rec, got)
    # deletionTimestamp = now + terminationGracePeriodSeconds (30), as recorded.
    assert got.body["metadata"]["deletionTimestamp"] == rfc3339(s.clock.now() + 30)


def scene_delete_again(s: Scene) -> None:
    low_victim(s)
    first = s.ok("DELETE", f"{PODS}/low-1")
    s.clock.advance(5)
    got = s.send()
    assert_same_answer(s.rec, got)
    # A pending graceful deletion is left as it is: no write, same revision.
    assert got.body["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert got.body["metadata"]["deletionTimestamp"] == first["metadata"]["deletionTimestamp"]


def scene_delete_unbound(s: Scene) -> None:
    s.ok("POST", PODS, pod("tmp-unbound", cpu=None, image="x"))
    got = s.send()
    assert_same_answer(s.rec, got)
    assert got.body["metadata"]["deletionTimestamp"] == rfc3339(s.clock.now())
    assert s.wire.call("GET", f"{PODS}/tmp-unbound").status == 404


def scene_force_delete(s: Scene) -> None:
    low_victim(s)
    started = s.clock.now()
    s.ok("DELETE", f"{PODS}/low-1")
    s.clock.advance(7)
    got = s.send()
    assert_same_answer(s.rec, got)
    # The shortened deletion keeps its start: old timestamp - 30 + 0.
    assert got.body["metadata"]["deletionTimestamp"] == rfc3339(started)
    assert s.wire.call("GET", f"{PODS}/low-1").status == 404


def scene_get_deleted(s: Scene) -> None:
    low_victim(s)
    s.ok(
        "DELETE",
        f"{PODS}/low-1",
        {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0},
    )
    assert_same_answer(s.rec, s.send())


def scene_stale_update(s: Scene) -> None:
    high_pending(s)
    stale = s.ok("GET", f"{PODS}/high-1")
    patch_like(s, "E1-status-smp-nominate")
    body = copy.deepcopy(s.rec["request"]["body"])
    body["metadata"]["uid"] = stale["metadata"]["uid"]
    body["metadata"]["resourceVersion"] = stale["metadata"]["resourceVersion"]
    assert_same_answer(s.rec, s.send(body))


def event_created(s: Scene) -> None:
    patch_like(s, "H1-event-create")


def events_for_core_view(s: Scene) -> None:
    other = s.rec["response"]["body"]["items"][1]
    s.clock.set(parse_time(other["metadata"]["creationTimestamp"]))
    body = {
        k: other[k]
        for k in (
            "involvedObject",
            "reason",
            "message",
            "source",
            "firstTimestamp",
            "lastTimestamp",
            "count",
            "type",
        )
    }
    body["metadata"] = {"name": other["metadata"]["name"]}
    s.ok("POST", "/api/v1/namespaces/default/events", body)
    s.clock.set(parse_time(recording("H1-event-create")["request"]["body"]["eventTime"]))
    patch_like(s, "H1-event-create")
    patch_like(s, "H3-event-series-patch")


def scene_core_events(s: Scene) -> None:
    events_for_core_view(s)
    got = s.send()
    keep = _times(s.rec["response"]["body"]["items"][1])
    assert got.status == 200
    assert masked(got.body, keep) == masked(s.rec["response"]["body"], keep)
    # The list is a consistent read at the newest write (the series patch).
    assert (
        got.body["metadata"]["resourceVersion"]
        == got.body["items"][0]["metadata"]["resourceVersion"]
    )


LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"


def lease_created(s: Scene) -> None:
    patch_like(s, "I1-lease-create")


def _lease_put(s: Scene, stale: bool) -> None:
    lease_created(s)
    current = s.ok("GET", f"{LEASES}/kubesched")
    if stale:
        renew = copy.deepcopy(recording("I2-lease-renew")["request"]["body"])
        renew["metadata"].update(
            uid=current["metadata"]["uid"], resourceVersion=current["metadata"]["resourceVersion"]
        )
        s.ok("PUT", f"{LEASES}/kubesched", renew)
    body = copy.deepcopy(s.rec["request"]["body"])
    for key in ("uid", "resourceVersion", "creationTimestamp"):
        body["metadata"][key] = current["metadata"][key]
    got = s.send(body)
    assert_same_answer(s.rec, got)
    if not stale:
        assert int(got.body["metadata"]["resourceVersion"]) > int(
            current["metadata"]["resourceVersion"]
        )


def scene_rbac(token: str) -> Callable[[Scene], None]:
    def scene(s: Scene) -> None:
        lease_created(s)
        s.api.auth.tokens.update(
            {"t-kubesched": "kubesched", "t-kube-scheduler": "system:kube-scheduler"}
        )
        s.api.auth.rules["system:kube-scheduler"] = [
            Rule(("get", "update", "create"), ("coordination.k8s.io",), ("leases",))
        ]
        s.wire.token = token
        assert_same_answer(s.rec, s.send())

    return scene


PDB_PATH = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"


def _pdb_scene(
    pod_name: str, pdb_name: str, running: bool, processed: bool
) -> Callable[[Scene], None]:
    def scene(s: Scene) -> None:
        s.ok("POST", PODS, pod(pod_name, labels={"app": pdb_name}))
        if running:
            bind(s, pod_name, "n1")
            # Running and Ready: an unready pod may be evicted while the budget is met
            # (unhealthyPodEvictionPolicy IfHealthyBudget), and the recording was refused.
            ready = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
            s.ok(
                "PATCH",
                f"{PODS}/{pod_name}/status",
                {"status": ready},
                "application/merge-patch+json",
            )
        pdb = s.ok(
            "POST",
            PDB_PATH,
            {
                "metadata": {"name": pdb_name},
                "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": pdb_name}}},
            },
        )
        if processed:
            status = {
                "observedGeneration": pdb["metadata"]["generation"],
                "disruptionsAllowed": 0,
                "desiredHealthy": 1,
                "currentHealthy": 1,
                "expectedPods": 1,
            }
            s.ok(
                "PATCH",
                f"{PDB_PATH}/{pdb_name}/status",
                {"status": status},
                "application/merge-patch+json",
            )
        assert_same_answer(s.rec, s.send())
        gone = s.wire.call("GET", f"{PODS}/{pod_name}").status == 404
        assert gone == (s.rec["response"]["status"] == 201)

    return scene


def scene_e3(s: Scene) -> None:
    high_pending(s)
    patch_like(s, "E1-status-smp-nominate")
    assert_same_answer(s.rec, s.send())


def scene_e4(s: Scene) -> None:
    high_pending(s)
    patch_like(s, "E1-status-smp-nominate")
    patch_like(s, "E3-status-merge-patch-replaces-list")
    assert_same_answer(s.rec, s.send())


SCENES: dict[str, Callable[[Scene], None]] = {
    "A-list-pods-rv0": scene_list_rv0,
    "A-list-pods": scene_list_consistent,
    "B-watch-bookmarks": scene_watch_bookmarks,
    "B2-watchlist-initial-events": scene_watchlist,
    "C-watch-too-old-leases": scene_watch_leases,
    "C-watch-too-old-rv": scene_watch_window(False, None, 3),
    "C-watch-too-old-rv1": scene_watch_window(True, None, 2),
    "C-watch-too-old-rv2": scene_watch_window(True, None, 2),
    "C-watch-too-old-rv3": scene_watch_window(True, None, 2),
    "C-watch-too-old-rv150": scene_watch_window(False, None, 2),
    "C-watch-too-old-rv5": scene_watch_window(True, 267, 2),
    "C-watch-too-old-rv100": scene_watch_window(True, 267, 2),
    "C-watch-too-old-rv240": scene_watch_window(True, 267, 2),
    "C2-list-exact-too-old": scene_list_exact_too_old,
    "C3-list-limit1": scene_list_limit,
    "D1-binding-ok": scene_binding_ok,
    "D2-binding-already-bound": scene_binding_bound,
    "D3-binding-missing-pod": scene_plain(),
    "D4-binding-name-mismatch": scene_plain(high_pending),
    "E1-status-smp-nominate": scene_plain(high_pending),
    "E2-victim-disruptiontarget-smp": scene_plain(low_bound),
    "E3-status-merge-patch-replaces-list": scene_e3,
    "E4-status-apply": scene_e4,
    "F1-delete-bound-graceful": scene_delete_graceful,
    "F2-delete-again": scene_delete_again,
    "F3-delete-unbound-immediate": scene_delete_unbound,
    "F4-force-delete": scene_force_delete,
    "F5-get-deleted-404": scene_get_deleted,
    "G-update-stale-rv-409": scene_stale_update,
    "H1-event-create": scene_plain(),
    "H2-event-invalid": scene_plain(),
    "H3-event-series-patch": scene_plain(event_created),
    "H4-core-v1-view-of-events": scene_core_events,
    "I1-lease-create": scene_plain(),
    "I2-lease-renew": lambda s: _lease_put(s, stale=False),
    "I3-lease-takeover-stale-409": lambda s: _lease_put(s, stale=True),
    "I4-lease-create-exists-409": scene_plain(lease_created),
    "I5-lease-non-micro-time": scene_plain(),
    "J-kubesched-get-lease-kubesched": scene_rbac("t-kubesched"),
    "J-system_kube-scheduler-get-lease-kubesched": scene_rbac("t-kube-scheduler"),
    "K1-eviction-pdb-unprocessed": _pdb_scene("pdb-1", "pdb1", running=False, processed=False),
    "K2-eviction-bound-running-pdb-unprocessed": _pdb_scene(
        "pdb-2", "pdb2", running=True, processed=False
    ),
    "K3-eviction-pdb-violation-429": _pdb_scene("pdb-2", "pdb2", running=True, processed=True),
    "L1-unknown-priorityclass": scene_plain(),
}


@pytest.fixture
def double() -> Iterator[ApiServerDouble]:
    api = ApiServerDouble(clock=ManualClock(), auth=Auth()).start()
    try:
        yield api
    finally:
        api.stop()


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in sorted(SCENES)])
def test_recorded_pair(name: str, double: ApiServerDouble) -> None:
    rec = recording(name)
    scene = Scene(double, Wire(double.url, timeout=10), rec)
    SCENES[name](scene)


def test_every_recording_has_a_scene() -> None:
    base = recordings_dir()
    if base is None:
        pytest.skip("API-server recordings not available (set KUBESCHED_LIVE_RECORDINGS)")
    assert sorted(p.stem for p in (base / "wire").glob("*.json")) == sorted(SCENES)

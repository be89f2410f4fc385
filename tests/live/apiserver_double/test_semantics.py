"""List, watch, admission, eviction and deletion rules of the double, over HTTP.

Each expectation is upstream's rule for the case (cited in the test), not a
value read back from the double.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kubesched.live.apiserver_double import ApiServerDouble, ManualClock
from tests.live.apiserver_double.wire import Wire

PODS = "/api/v1/namespaces/default/pods"
PDBS = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
PCS = "/apis/scheduling.k8s.io/v1/priorityclasses"


def pod(name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"containers": [{"name": "c", "image": "x"}], **spec},
    }


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


def make(wire: Wire, path: str, body: dict[str, Any]) -> dict[str, Any]:
    resp = wire.call("POST", path, body)
    assert resp.status == 201, resp.body
    out: dict[str, Any] = resp.body
    return out


def bind(wire: Wire, name: str, node: str) -> None:
    body = {"metadata": {"name": name}, "target": {"name": node}}
    assert wire.call("POST", f"{PODS}/{name}/binding", body).status == 201


# -- lists -------------------------------------------------------------------------


def test_paging_with_limit_and_continue_reads_one_revision(wire: Wire) -> None:
    for name in ("p1", "p2", "p3", "p4", "p5"):
        make(wire, PODS, pod(name, {"tier": "a" if name < "p4" else "b"}))
    seen, token, revisions = [], "", set()
    while True:
        page = wire.call("GET", f"{PODS}?limit=2" + (f"&continue={token}" if token else "")).body
        seen += [i["metadata"]["name"] for i in page["items"]]
        revisions.add(page["metadata"]["resourceVersion"])
        token = page["metadata"].get("continue", "")
        if not token:
            break
        # remainingItemCount is set only for unfiltered lists.
        assert page["metadata"]["remainingItemCount"] == 5 - len(seen)
    assert seen == ["p1", "p2", "p3", "p4", "p5"]
    assert len(revisions) == 1
    filtered = wire.call("GET", f"{PODS}?limit=1&labelSelector=tier%3Da").body
    assert "remainingItemCount" not in filtered["metadata"] and filtered["metadata"]["continue"]


@pytest.mark.parametrize(
    ("query", "code", "message"),
    [
        pytest.param(
            "resourceVersionMatch=NotOlderThan",
            422,
            'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
            "resourceVersionMatch is forbidden unless resourceVersion is provided",
            id="ValidateListOptions/match-without-rv",
        ),
        pytest.param(
            "resourceVersion=0&resourceVersionMatch=Exact",
            422,
            'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
            'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
            id="ValidateListOptions/exact-at-zero",
        ),
        pytest.param(
            "fieldSelector=spec.foo%3Dbar",
            400,
            "field label not supported: spec.foo",
            id="field-label-not-supported",
        ),
        pytest.param(
            "resourceVersion=999999",
            504,
            "Too large resource version: 999999, current: {rv}",
            id="too-large-resource-version",
        ),
    ],
)
def test_bad_list_requests(
    api: ApiServerDouble, wire: Wire, query: str, code: int, message: str
) -> None:
    resp = wire.call("GET", f"{PODS}?{query}")
    assert resp.status == code
    assert resp.body["message"] == message.format(rv=api.store.rv)
    if code == 504:
        assert resp.headers["Retry-After"] == "1"


def test_field_selectors_as_a_scheduler_uses_them(wire: Wire) -> None:
    make(wire, PODS, pod("a", schedulerName="kubesched"))
    make(wire, PODS, pod("b"))
    bind(wire, "b", "n1")
    unassigned = wire.call(
        "GET", f"{PODS}?fieldSelector=spec.nodeName%3D%2Cspec.schedulerName%3Dkubesched"
    ).body
    assert [i["metadata"]["name"] for i in unassigned["items"]] == ["a"]
    assigned = wire.call("GET", "/api/v1/pods?fieldSelector=spec.nodeName%21%3D").body
    assert [i["metadata"]["name"] for i in assigned["items"]] == ["b"]


# -- watches -------------------------------------------------------------------------


def test_watch_with_selector_turns_leaving_into_deleted_and_entering_into_added(
    api: ApiServerDouble, wire: Wire
) -> None:
    rv = api.store.rv
    unassigned = wire.watch(
        f"{PODS}?watch=1&resourceVersion={rv}&fieldSelector=spec.nodeName%3D&timeoutSeconds=60"
    )
    assigned = wire.watch(
        f"/api/v1/pods?watch=1&resourceVersion={rv}&fieldSelector=spec.nodeName%21%3D&timeoutSeconds=60"
    )
    make(wire, PODS, pod("p"))
    bind(wire, "p", "n1")
    # cacheWatcher.convertToWatchEvent: the object stops matching -> DELETED (old object,
    # the event's revision); starts matching -> ADDED.
    first, second = unassigned.take(2)
    assert (first["type"], second["type"]) == ("ADDED", "DELETED")
    assert "nodeName" not in second["object"]["spec"]
    entered = assigned.next()
    assert entered["type"] == "ADDED" and entered["object"]["spec"]["nodeName"] == "n1"
    assert (
        second["object"]["metadata"]["resourceVersion"]
        == entered["object"]["metadata"]["resourceVersion"]
    )
    api.clock.advance(60)
    assert unassigned.finish() == [] and assigned.finish() == []


@pytest.mark.parametrize(
    ("defaulting", "expected"),
    [
        pytest.param(
            True, ["ADDED", "BOOKMARK"], id="SetListOptionsDefaults/legacy-watch-becomes-watch-list"
        ),
        pytest.param(False, ["ADDED"], id="WatchList-off/legacy-watch"),
    ],
)
def test_legacy_watch_from_zero(defaulting: bool, expected: list[str]) -> None:
    with ApiServerDouble(clock=ManualClock(), watch_list_defaulting=defaulting) as api:
        wire = Wire(api.url, timeout=5)
        make(wire, PODS, pod("a"))
        reader = wire.watch(
            f"{PODS}?watch=1&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=1"
        )
        api.clock.advance(1)
        events = reader.finish()
        assert [e["type"] for e in events] == expected
        if defaulting:
            meta = events[1]["object"]["metadata"]
            assert meta["annotations"] == {"k8s.io/initial-events-end": "true"}


def test_watch_list_options_validation(wire: Wire) -> None:
    resp = wire.call("GET", f"{PODS}?watch=1&resourceVersion=5&resourceVersionMatch=NotOlderThan")
    assert resp.status == 422
    assert resp.body["message"] == (
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
    )


# -- admission -----------------------------------------------------------------------


def test_priority_admission(wire: Wire) -> None:
    make(wire, PCS, {"metadata": {"name": "low"}, "value": 10, "globalDefault": True})
    defaulted = make(wire, PODS, pod("a"))
    # No class named: the global default's name and value are set.
    assert (defaulted["spec"]["priorityClassName"], defaulted["spec"]["priority"]) == ("low", 10)
    critical = make(
        wire,
        "/api/v1/namespaces/kube-system/pods",
        pod("c", priorityClassName="system-node-critical"),
    )
    assert critical["spec"]["priority"] == 2000001000
    wrong = wire.call("POST", PODS, pod("b", priorityClassName="low", priority=7))
    assert wrong.status == 403
    assert wrong.body["message"] == (
        'pods "b" is forbidden: the integer value of priority '
        "(7) must not be provided in pod spec; "
        "priority admission controller computed 10 from the given PriorityClass name"
    )
    second_default = wire.call(
        "POST", PCS, {"metadata": {"name": "other"}, "value": 5, "globalDefault": True}
    )
    assert second_default.status == 403
    assert second_default.body["message"].endswith(
        "PriorityClass low is already marked as default. Only one default can exist"
    )


def test_namespace_lifecycle(wire: Wire) -> None:
    missing = wire.call("POST", "/api/v1/namespaces/nope/pods", pod("a"))
    assert (missing.status, missing.body["message"]) == (404, 'namespaces "nope" not found')
    immortal = wire.call("DELETE", "/api/v1/namespaces/default")
    assert (immortal.status, immortal.body["message"]) == (
        403,
        'namespaces "default" is forbidden: this namespace may not be deleted',
    )
    make(wire, "/api/v1/namespaces", {"metadata": {"name": "team"}})
    make(wire, "/api/v1/namespaces/team/pods", pod("a"))
    terminating = wire.call("DELETE", "/api/v1/namespaces/team")
    assert terminating.status == 200 and terminating.body["status"] == {"phase": "Terminating"}
    assert wire.call("GET", "/api/v1/namespaces/team").status == 404
    gone = wire.call("DELETE", "/apis/coordination.k8s.io/v1/namespaces/default/leases/nope")
    assert gone.status == 404
    assert wire.call("GET", "/api/v1/namespaces/team/pods/a").status == 404


def test_create_resets_pod_status_and_keeps_node_status(wire: Wire) -> None:
    created = make(
        wire, PODS, {**pod("a"), "status": {"phase": "Running", "nominatedNodeName": "n9"}}
    )
    assert created["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    node = make(
        wire, "/api/v1/nodes", {"metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "2"}}}
    )
    assert node["status"]["capacity"] == {"cpu": "2"} and node["status"]["allocatable"] == {
        "cpu": "2"
    }


# -- eviction and deletion -------------------------------------------------------------


def _running_ready(wire: Wire, name: str, labels: dict[str, str]) -> None:
    make(wire, PODS, pod(name, labels))
    bind(wire, name, "n1")
    status = {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
    assert (
        wire.call("PATCH", f"{PODS}/{name}/status", status, "application/merge-patch+json").status
        == 200
    )


def _budget(wire: Wire, name: str, labels: dict[str, str], allowed: int) -> None:
    pdb = make(
        wire,
        PDBS,
        {
            "metadata": {"name": name},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": labels}},
        },
    )
    status = {
        "observedGeneration": pdb["metadata"]["generation"],
        "disruptionsAllowed": allowed,
        "currentHealthy": 1 + allowed,
        "desiredHealthy": 1,
        "expectedPods": 1 + allowed,
    }
    resp = wire.call(
        "PATCH", f"{PDBS}/{name}/status", {"status": status}, "application/merge-patch+json"
    )
    assert resp.status == 200


def test_eviction_decrements_the_budget_and_deletes_gracefully(
    api: ApiServerDouble, wire: Wire
) -> None:
    _running_ready(wire, "a", {"app": "x"})
    _budget(wire, "pdb", {"app": "x"}, allowed=1)
    evict = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "a"}}
    assert wire.call("POST", f"{PODS}/a/eviction", evict).status == 201
    pdb = wire.call("GET", f"{PDBS}/pdb").body
    assert pdb["status"]["disruptionsAllowed"] == 0
    assert list(pdb["status"]["disruptedPods"]) == ["a"]
    assert [c["type"] for c in pdb["status"]["conditions"]] == ["DisruptionAllowed"]
    victim = wire.call("GET", f"{PODS}/a").body
    assert victim["metadata"]["deletionGracePeriodSeconds"] == 30
    target = [c for c in victim["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert (
        target[0]["reason"] == "EvictionByEvictionAPI"
        and target[0]["message"] == "Eviction API: evicting"
    )


def test_eviction_with_two_budgets_is_an_internal_error(wire: Wire) -> None:
    _running_ready(wire, "a", {"app": "x"})
    _budget(wire, "one", {"app": "x"}, allowed=1)
    _budget(wire, "two", {"app": "x"}, allowed=1)
    resp = wire.call("POST", f"{PODS}/a/eviction", {"metadata": {"name": "a"}})
    assert resp.status == 500
    assert (
        resp.body["message"] == "This pod has more than one PodDisruptionBudget, which "
        "the eviction subresource does not support."
    )


def test_completed_delete_answers_with_a_status_except_for_pods(wire: Wire) -> None:
    make(wire, "/api/v1/nodes", {"metadata": {"name": "n1"}})
    node = wire.call("DELETE", "/api/v1/nodes/n1").body
    assert node["kind"] == "Status" and node["status"] == "Success"
    assert {k: node["details"][k] for k in ("name", "kind")} == {"name": "n1", "kind": "nodes"}
    make(wire, PODS, pod("p"))
    assert wire.call("DELETE", f"{PODS}/p").body["kind"] == "Pod"


def test_finalizers_hold_deletion_until_removed(wire: Wire) -> None:
    leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
    make(wire, leases, {"metadata": {"name": "l", "finalizers": ["example.com/keep"]}, "spec": {}})
    deleted = wire.call("DELETE", f"{leases}/l")
    # Left pending by its finalizer: the answer is the object, not a Status.
    assert deleted.status == 200 and deleted.body["kind"] == "Lease"
    assert deleted.body["metadata"]["deletionTimestamp"]
    held = wire.call("GET", f"{leases}/l").body
    assert (
        held["metadata"]["deletionTimestamp"]
        and held["metadata"]["deletionGracePeriodSeconds"] == 0
    )
    cleared = wire.call(
        "PATCH", f"{leases}/l", {"metadata": {"finalizers": None}}, "application/merge-patch+json"
    )
    assert cleared.status == 200
    assert wire.call("GET", f"{leases}/l").status == 404


def test_binding_rules(wire: Wire) -> None:
    make(wire, PODS, pod("gated", schedulingGates=[{"name": "wait"}]))
    gated = wire.call(
        "POST", f"{PODS}/gated/binding", {"metadata": {"name": "gated"}, "target": {"name": "n1"}}
    )
    assert gated.status == 409
    assert (
        gated.body["message"] == 'Operation cannot be fulfilled on pods/binding "gated": '
        "pod gated has non-empty .spec.schedulingGates"
    )
    no_target = wire.call(
        "POST", f"{PODS}/gated/binding", {"metadata": {"name": "gated"}, "target": {}}
    )
    assert (no_target.status, no_target.body["message"]) == (500, "target.name: Required value")


def test_binding_clears_the_nominated_node_name(wire: Wire) -> None:
    # BindingREST.setPodNodeAndMetadata: ClearingNominatedNodeNameAfterBinding (beta and
    # on by default since v1.35) empties status.nominatedNodeName with the binding.
    make(wire, PODS, pod("p"))
    patch = {"status": {"nominatedNodeName": "n2"}}
    resp = wire.call(
        "PATCH", f"{PODS}/p/status", patch, content_type="application/merge-patch+json"
    )
    assert resp.body["status"]["nominatedNodeName"] == "n2"
    bind(wire, "p", "n1")
    got = wire.call("GET", f"{PODS}/p").body
    assert got["spec"]["nodeName"] == "n1"
    assert "nominatedNodeName" not in got["status"]


def test_watch_on_one_objects_url(api: ApiServerDouble, wire: Wire) -> None:
    make(wire, PODS, pod("a"))
    make(wire, PODS, pod("b"))
    reader = wire.watch(f"{PODS}/b?watch=1&timeoutSeconds=5")
    api.clock.advance(5)
    events = reader.finish()
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "b")]


def test_delete_collection_with_a_label_selector(wire: Wire) -> None:
    make(wire, PODS, pod("a", {"app": "x"}))
    make(wire, PODS, pod("b", {"app": "y"}))
    resp = wire.call("DELETE", f"{PODS}?labelSelector=app%3Dx")
    assert resp.status == 200 and resp.body["kind"] == "PodList"
    assert [i["metadata"]["name"] for i in resp.body["items"]] == ["a"]
    remaining = wire.call("GET", PODS).body["items"]
    assert [i["metadata"]["name"] for i in remaining] == ["b"]


SPECIAL_BODIES: dict[str, dict[str, Any]] = {
    "pods": {"spec": {"containers": [{"name": "c", "image": "x"}]}},
    "priorityclasses": {"value": 5},
    "events": {
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "R",
    },
    "events.k8s.io/events": {
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "kubesched",
        "reportingInstance": "kubesched-1",
        "action": "Scheduling",
        "reason": "Scheduled",
        "type": "Normal",
        "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
    },
}


def _collection(res: Any) -> str:
    base = f"/apis/{res.group}/{res.version}" if res.group else f"/api/{res.version}"
    return f"{base}/namespaces/default/{res.name}" if res.namespaced else f"{base}/{res.name}"


@pytest.mark.parametrize(
    "res",
    [
        pytest.param(r, id=f"{r.group or 'core'}/{r.name}")
        for r in ApiServerDouble.served()
        if r.name != "bindings"
    ],
)
def test_every_served_resource_round_trips(api: ApiServerDouble, wire: Wire, res: Any) -> None:
    key = f"{res.group}/{res.name}" if res.group == "events.k8s.io" else res.name
    body = {
        "apiVersion": res.api_version,
        "kind": res.kind,
        "metadata": {"name": "obj-1"},
        **SPECIAL_BODIES.get(key, {}),
    }
    path = _collection(res)
    created = wire.call("POST", path, body)
    assert created.status == 201, created.body
    assert (created.body["kind"], created.body["apiVersion"]) == (res.kind, res.api_version)
    assert (
        wire.call("GET", f"{path}/obj-1").body["metadata"]["uid"] == created.body["metadata"]["uid"]
    )
    listed = wire.call("GET", path).body
    assert listed["kind"] == res.kind + "List" and "obj-1" in [
        i["metadata"]["name"] for i in listed["items"]
    ]
    patched = wire.call(
        "PATCH",
        f"{path}/obj-1",
        {"metadata": {"labels": {"x": "y"}}},
        "application/merge-patch+json",
    )
    assert patched.status == 200 and patched.body["metadata"]["labels"]["x"] == "y"
    assert int(patched.body["metadata"]["resourceVersion"]) > int(
        created.body["metadata"]["resourceVersion"]
    )
    assert wire.call("DELETE", f"{path}/obj-1").status == 200
    if res.name != "namespaces":
        assert wire.call("GET", f"{path}/obj-1").status == 404
    group_version = f"/apis/{res.group}/{res.version}" if res.group else f"/api/{res.version}"
    discovery = wire.call("GET", group_version).body
    assert res.name in [r["name"] for r in discovery["resources"]]


def test_get_with_a_future_resource_version(api: ApiServerDouble, wire: Wire) -> None:
    make(wire, PODS, pod("a"))
    assert wire.call("GET", f"{PODS}/a?resourceVersion=0").status == 200
    future = wire.call("GET", f"{PODS}/a?resourceVersion={api.store.rv + 5}")
    assert future.status == 504
    assert (
        future.body["message"]
        == f"Too large resource version: {api.store.rv + 5}, current: {api.store.rv}"
    )

"""The official `kubernetes` Python client against the double (raw-dict and typed paths).

Checks that the double speaks what a real client library expects: typed
objects deserialize, errors arrive as ApiException with the Status body, a watch
stream with bookmarks is parsed as the client parses the real server's, and a
410 in a watch becomes the client's `Expired` exception. Skipped without the
`kubernetes` package (the `live` extra).
"""

from __future__ import annotations

import datetime
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from kubesched.live.apiserver_double import ApiServerDouble, ManualClock
from tests.live.apiserver_double.wire import Wire

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client, watch  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

PODS = "/api/v1/namespaces/default/pods"


@pytest.fixture
def api() -> Iterator[ApiServerDouble]:
    server = ApiServerDouble(clock=ManualClock()).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def core(api: ApiServerDouble) -> Any:
    config = client.Configuration()
    config.host = api.url
    return client.CoreV1Api(client.ApiClient(config))


def pod_body(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {
            "schedulerName": "kubesched",
            "containers": [
                {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "500m"}}}
            ],
        },
    }


def test_typed_create_read_and_conflict(core: Any) -> None:
    created = core.create_namespaced_pod("default", pod_body("web-1"), _request_timeout=10)
    assert created.metadata.name == "web-1"
    assert created.spec.scheduler_name == "kubesched"
    assert created.spec.priority == 0
    assert created.status.qos_class == "Burstable"
    read = core.read_namespaced_pod("web-1", "default", _request_timeout=10)
    assert read.metadata.uid == created.metadata.uid
    with pytest.raises(ApiException) as err:
        core.create_namespaced_pod("default", pod_body("web-1"), _request_timeout=10)
    assert err.value.status == 409
    assert json.loads(err.value.body)["message"] == 'pods "web-1" already exists'


def test_strategic_merge_status_patch_merges_conditions_by_type(core: Any) -> None:
    core.create_namespaced_pod("default", pod_body("web-1"), _request_timeout=10)
    core.create_namespaced_binding(
        "default",
        {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": "web-1"},
            "target": {"kind": "Node", "name": "n1"},
        },
        _request_timeout=10,
        _preload_content=False,
    )
    # The client sends a dict body as application/strategic-merge-patch+json.
    patched = core.patch_namespaced_pod_status(
        "web-1",
        "default",
        {
            "status": {
                "conditions": [
                    {
                        "type": "DisruptionTarget",
                        "status": "True",
                        "reason": "PreemptionByScheduler",
                    }
                ]
            }
        },
        _request_timeout=10,
    )
    assert [c.type for c in patched.status.conditions] == ["DisruptionTarget", "PodScheduled"]
    assert patched.spec.node_name == "n1"


def test_raw_watch_with_bookmarks(api: ApiServerDouble, core: Any) -> None:
    listed = json.loads(
        core.list_namespaced_pod("default", _preload_content=False, _request_timeout=10).data
    )
    start = listed["metadata"]["resourceVersion"]
    created: dict[str, Any] = {}

    def later() -> None:
        deadline = time.monotonic() + 5
        while not api.hub.matching("pods") and time.monotonic() < deadline:
            time.sleep(0.01)  # the client's watch request is registered
        created["pod"] = Wire(api.url).call("POST", PODS, pod_body("web-2")).body
        api.clock.advance(61)  # a heartbeat bookmark
        api.clock.advance(20)  # past the 75 s deadline (and its pre-timeout bookmarks)

    w = watch.Watch()
    thread = threading.Thread(target=later)
    thread.start()
    events = list(
        w.stream(
            core.list_namespaced_pod,
            "default",
            resource_version=start,
            allow_watch_bookmarks=True,
            timeout_seconds=75,
            _request_timeout=10,
        )
    )
    thread.join(5)
    types = [e["type"] for e in events]
    assert types[0] == "ADDED" and set(types[1:]) == {"BOOKMARK"} and len(types) >= 2
    assert events[0]["object"].metadata.name == "web-2"
    rv = created["pod"]["metadata"]["resourceVersion"]
    assert all(e["raw_object"]["metadata"]["resourceVersion"] == rv for e in events[1:])
    assert w.resource_version == rv  # the client tracks bookmarks' revisions


def test_watch_410_becomes_the_clients_expired_exception(api: ApiServerDouble, core: Any) -> None:
    Wire(api.url).call("POST", PODS, pod_body("a"))
    Wire(api.url).call("POST", PODS, pod_body("b"))
    floor = api.expire_watch_history("pods")
    w = watch.Watch()
    with pytest.raises(ApiException) as err:
        list(
            w.stream(
                core.list_namespaced_pod,
                "default",
                resource_version="1",
                timeout_seconds=5,
                _request_timeout=10,
            )
        )
    assert err.value.status == 410
    assert err.value.reason == f"Expired: too old resource version: 1 ({floor})"


def test_lease_optimistic_concurrency(api: ApiServerDouble) -> None:
    config = client.Configuration()
    config.host = api.url
    leases = client.CoordinationV1Api(client.ApiClient(config))
    body = {
        "metadata": {"name": "kubesched"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15},
    }
    lease = leases.create_namespaced_lease("kube-system", body, _request_timeout=10)
    # A renewal moves renewTime (a MicroTime: the client writes microseconds and an offset).
    lease.spec.renew_time = datetime.datetime(2026, 1, 1, 0, 0, 1, 250000, tzinfo=datetime.UTC)
    renewed = leases.replace_namespaced_lease(
        "kubesched", "kube-system", lease, _request_timeout=10
    )
    assert int(renewed.metadata.resource_version) > int(lease.metadata.resource_version)
    assert renewed.spec.renew_time == lease.spec.renew_time
    with pytest.raises(ApiException) as err:
        leases.replace_namespaced_lease("kubesched", "kube-system", lease, _request_timeout=10)
    assert err.value.status == 409
    assert json.loads(err.value.body)["details"] == {
        "name": "kubesched",
        "group": "coordination.k8s.io",
        "kind": "leases",
    }

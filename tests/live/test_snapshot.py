"""kubesched.live.snapshot and kubesched.live.client against the API-server double
(a real HTTP server on loopback, through the official client's raw path)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from kubesched.live.apiserver_double import Auth
from kubesched.live.apiserver_double.auth import Rule
from kubesched.live.client import ClusterError, Resource, connect
from kubesched.live.snapshot import SNAPSHOT_KINDS, take
from tests.live.cluster_state import double, node, pod, priority_class, small_cluster

pytest.importorskip("kubernetes")


def test_snapshot_reads_every_modelled_kind_in_order(tmp_path: Path) -> None:
    with double() as api:
        small_cluster(api)
        snap = take(connect(str(api.write_kubeconfig(tmp_path / "kc"))))
    kinds = [i["kind"] for i in snap.items]
    order = [r.kind for r in SNAPSHOT_KINDS]
    assert kinds == sorted(kinds, key=order.index)  # grouped in SNAPSHOT_KINDS order
    names = {(i["kind"], i["metadata"]["name"]) for i in snap.items}
    assert {("Node", "n1"), ("Node", "n2"), ("PriorityClass", "high")} <= names
    assert {("Pod", "low-1"), ("Pod", "low-2"), ("Pod", "urgent")} <= names
    assert all(i["apiVersion"] and i["metadata"]["uid"] for i in snap.items)
    assert set(snap.versions) == {r.plural for r in SNAPSHOT_KINDS}
    assert snap.missing == []
    bound = {
        i["metadata"]["name"]: i["spec"].get("nodeName") for i in snap.items if i["kind"] == "Pod"
    }
    assert bound == {"low-1": "n1", "low-2": "n2", "urgent": None}


def test_managed_fields_are_dropped_and_the_rest_kept(tmp_path: Path) -> None:
    with double() as api:
        obj = node("n1", "2")
        obj["metadata"]["managedFields"] = [{"manager": "kubelet", "operation": "Update"}]
        obj["metadata"]["annotations"] = {"team": "infra"}
        api.create(obj)
        snap = take(connect(str(api.write_kubeconfig(tmp_path / "kc"))))
    (n1,) = [i for i in snap.items if i["kind"] == "Node"]
    assert "managedFields" not in n1["metadata"]
    assert n1["metadata"]["annotations"] == {"team": "infra"}
    assert n1["status"]["allocatable"]["cpu"] == "2"


def test_lists_are_read_page_by_page(tmp_path: Path) -> None:
    with double() as api:
        for i in range(7):
            api.create(pod(f"p{i}", "100m"))
        client = connect(str(api.write_kubeconfig(tmp_path / "kc")))
        items, version = client.list(Resource("", "v1", "pods", "Pod"), page=3)
        pages = [q for m, p, q, _ in api.requests if m == "GET" and p == "/api/v1/pods"]
    assert [i["metadata"]["name"] for i in items] == [f"p{i}" for i in range(7)]
    assert [q.get("limit") for q in pages] == ["3", "3", "3"]
    assert "continue" not in pages[0] and all(q.get("continue") for q in pages[1:])
    assert version and int(version) > 0


def test_a_collection_the_server_does_not_serve_is_named_missing(tmp_path: Path) -> None:
    widgets = Resource("example.com", "v1", "widgets", "Widget")
    with double() as api:
        api.create(priority_class("high", 1000))
        snap = take(
            connect(str(api.write_kubeconfig(tmp_path / "kc"))),
            (SNAPSHOT_KINDS[1], widgets),
        )
    assert snap.missing == ["widgets.example.com"]
    assert "high" in {i["metadata"]["name"] for i in snap.items}


def test_forbidden_names_the_request_and_the_server_message(tmp_path: Path) -> None:
    auth = Auth(
        tokens={"t0k": "viewer"},
        rules={"viewer": [Rule(("list",), ("",), ("namespaces",))]},
    )
    with double(auth=auth) as api:
        client = connect(str(api.write_kubeconfig(tmp_path / "kc", token="t0k")))
        with pytest.raises(ClusterError) as err:
            take(client)
    assert err.value.status == 403
    assert str(err.value) == (
        "list priorityclasses: forbidden: priorityclasses.scheduling.k8s.io is forbidden: "
        'User "viewer" cannot list resource "priorityclasses" in API group '
        '"scheduling.k8s.io" at the cluster scope'
    )


def test_an_unreachable_server_is_a_cluster_error(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    kc = tmp_path / "kc"
    kc.write_text(
        '{"apiVersion": "v1", "kind": "Config", "current-context": "c",'
        f' "clusters": [{{"name": "c", "cluster": {{"server": "http://127.0.0.1:{port}"}}}}],'
        ' "users": [{"name": "u", "user": {}}],'
        ' "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}'
    )
    client = connect(str(kc))
    with pytest.raises(ClusterError) as err:
        take(client)
    assert err.value.status == 0
    assert str(err.value).startswith(f"cannot reach http://127.0.0.1:{port}: ")
    assert "refused" in str(err.value).lower()


def test_no_configuration_at_all(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ClusterError, match="no cluster configured"):
        connect()


def test_a_bad_kubeconfig_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "kc"
    bad.write_text("apiVersion: v1\nkind: Config\n")
    with pytest.raises(ClusterError) as err:
        connect(str(bad))
    assert str(err.value).startswith(f"kubeconfig {bad}: ")

"""The API-server double's fake PV controller and provisioner (``volumes.py``)."""

from __future__ import annotations

from typing import Any

from kubesched.live.apiserver_double import ApiServerDouble, ManualClock
from tests.live.cluster_state import claim, storage_class, volume

Obj = dict[str, Any]


def get(api: ApiServerDouble, kind: str, name: str, namespace: str = "") -> Obj:
    got = api.get("v1", kind, name, namespace)
    assert got is not None
    return got


def put(api: ApiServerDouble, obj: Obj) -> None:
    meta = obj["metadata"]
    res = api.resource_for("v1", obj["kind"])
    api.registry.update(res, meta.get("namespace", ""), meta["name"], obj)


def pre_bind(api: ApiServerDouble, pv_name: str, pvc: Obj) -> None:
    pv = get(api, "PersistentVolume", pv_name)
    meta = pvc["metadata"]
    pv["spec"]["claimRef"] = {
        "kind": "PersistentVolumeClaim",
        "namespace": meta["namespace"],
        "name": meta["name"],
        "uid": meta["uid"],
    }
    put(api, pv)


def select_node(api: ApiServerDouble, name: str, node: str) -> Obj:
    pvc = get(api, "PersistentVolumeClaim", name, "default")
    pvc["metadata"]["annotations"] = {"volume.kubernetes.io/selected-node": node}
    put(api, pvc)
    return get(api, "PersistentVolumeClaim", name, "default")


def test_a_pre_bound_volume_binds_its_claim() -> None:
    api = ApiServerDouble(clock=ManualClock(), volume_controller=True)
    api.create(storage_class("local", "kubernetes.io/no-provisioner"))
    api.create(volume("pv-a", "local", "2Gi"))
    assert get(api, "PersistentVolume", "pv-a")["status"] == {"phase": "Available"}
    pvc = api.create(claim("data", "local"))
    pre_bind(api, "pv-a", pvc)
    got = get(api, "PersistentVolumeClaim", "data", "default")
    assert got["spec"]["volumeName"] == "pv-a"
    assert got["metadata"]["annotations"] == {
        "pv.kubernetes.io/bound-by-controller": "yes",
        "pv.kubernetes.io/bind-completed": "yes",
    }
    assert got["status"] == {
        "phase": "Bound",
        "accessModes": ["ReadWriteOnce"],
        "capacity": {"storage": "2Gi"},
    }
    assert get(api, "PersistentVolume", "pv-a")["status"] == {"phase": "Bound"}


def test_a_claim_with_a_selected_node_is_provisioned_and_bound() -> None:
    api = ApiServerDouble(clock=ManualClock(), volume_controller=True)
    api.volumes.provision_node_affinity = True
    api.create(storage_class("wait", "example.com/csi"))
    api.create(claim("data", "wait", "3Gi"))
    pvc = select_node(api, "data", "n1")
    name = f"pvc-{pvc['metadata']['uid']}"
    assert pvc["spec"]["volumeName"] == name
    assert pvc["status"]["phase"] == "Bound"
    pv = get(api, "PersistentVolume", name)
    assert pv["metadata"]["annotations"] == {"pv.kubernetes.io/provisioned-by": "example.com/csi"}
    assert pv["spec"]["capacity"] == {"storage": "3Gi"}
    assert pv["spec"]["csi"] == {"driver": "example.com/csi", "volumeHandle": name}
    assert pv["spec"]["claimRef"]["uid"] == pvc["metadata"]["uid"]
    assert pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] == [
        {
            "matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}
            ]
        }
    ]
    assert pv["status"] == {"phase": "Bound"}


def test_no_provisioner_and_off_leave_claims_alone() -> None:
    api = ApiServerDouble(clock=ManualClock())  # off by default
    api.create(storage_class("wait", "example.com/csi"))
    api.create(storage_class("local", "kubernetes.io/no-provisioner"))
    api.create(volume("pv-a", "local"))
    assert get(api, "PersistentVolume", "pv-a")["status"] == {"phase": "Pending"}
    api.create(claim("data", "wait"))
    assert "volumeName" not in select_node(api, "data", "n1")["spec"]
    api.volumes.enabled = True
    api.create(claim("other", "local"))
    assert "volumeName" not in select_node(api, "other", "n1")["spec"]
    assert [k for k, _ in api.store.items("persistentvolumes")] == ["pv-a"]

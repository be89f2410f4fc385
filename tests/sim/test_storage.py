"""The simulated cluster's storage controllers (sim/storage.py), each as upstream
Kubernetes does it: DefaultStorageClass admission (and the retroactive default),
the PV controller's binding, release and Lost claims, the external provisioner,
the ephemeral volume controller with the garbage collector, and PVC protection.
Every change reaches the object watchers as (resource, old, new) in order."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from kubesched.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_DEFAULT_STORAGE_CLASS,
    ANN_SELECTED_NODE,
    CLAIM_BOUND,
    CLAIM_LOST,
    CLAIM_PENDING,
    IMMEDIATE,
    RECLAIM_DELETE,
    RECLAIM_RETAIN,
    VOLUME_AVAILABLE,
    VOLUME_BOUND,
    VOLUME_RELEASED,
    ClaimReference,
    PersistentVolume,
    StorageClass,
)
from kubesched.api.types import LABEL_ZONE
from kubesched.sim.cluster import Cluster
from kubesched.sim.engine import Engine
from tests.builders import make_node, make_pod
from tests.plugins.volume_harness import ephemeral, make_csi_node, make_pv, make_pvc, make_sc


class ObjectLog:
    def __init__(self) -> None:
        self.log: list[tuple[str, str, str]] = []

    def _name(self, obj: object) -> str:
        key = getattr(obj, "key", None)
        return key if isinstance(key, str) else str(getattr(obj, "name", ""))

    def on_object_add(self, resource: str, obj: object) -> None:
        self.log.append((resource, "add", self._name(obj)))

    def on_object_update(self, resource: str, old: object, new: object) -> None:
        self.log.append((resource, "update", self._name(new)))

    def on_object_delete(self, resource: str, obj: object) -> None:
        self.log.append((resource, "delete", self._name(obj)))


def cluster() -> tuple[Cluster, ObjectLog]:
    c = Cluster(Engine(), random.Random(0))
    log = ObjectLog()
    c.object_watchers.append(log)  # type: ignore[arg-type]
    return c, log


def test_immediate_claim_binds_the_smallest_matching_volume() -> None:
    """syncUnboundClaim -> findBestMatchForClaim (FindMatchingVolume without a node)."""
    c, log = cluster()
    s = c.volumes
    s.create(make_sc("std", IMMEDIATE))
    for name, cap in (("big", "10Gi"), ("small", "3Gi"), ("tiny", "1Gi")):
        s.create(replace(make_pv(name, "std", capacity=cap), phase=""))
    s.create(make_pvc("data", "std", request="2Gi", uid=""))
    pvc = s.get_pvc("default", "data")
    assert pvc is not None
    assert (pvc.phase, pvc.volume_name) == (CLAIM_BOUND, "small")
    assert pvc.annotations[ANN_BIND_COMPLETED] == "yes"
    assert pvc.annotations[ANN_BOUND_BY_CONTROLLER] == "yes"
    pv = s.get_pv("small")
    assert pv is not None
    assert pv.phase == VOLUME_BOUND
    assert pv.claim_ref == ClaimReference("default", "data", pvc.uid)
    assert s.get_pv("big").phase == VOLUME_AVAILABLE  # type: ignore[union-attr]
    c.flush()
    assert log.log[-2:] == [
        ("PersistentVolume", "update", "small"),
        ("PersistentVolumeClaim", "update", "default/data"),
    ]


def test_wait_for_first_consumer_claim_waits_for_the_scheduler() -> None:
    c, _ = cluster()
    s = c.volumes
    s.create(make_sc("local"))
    s.create(make_pv("pv", "local"))
    s.create(make_pvc("data", "local", uid=""))
    pvc = s.get_pvc("default", "data")
    assert pvc is not None and pvc.phase == CLAIM_PENDING and not pvc.volume_name
    # The scheduler pre-binds the volume (PreBind's API update): the controller binds.
    pv = s.get_pv("pv")
    assert pv is not None
    c.update_pv(replace(pv, claim_ref=ClaimReference("default", "data", pvc.uid)))
    got = s.get_pvc("default", "data")
    assert got is not None and got.volume_name == "pv" and got.phase == CLAIM_BOUND


def test_pre_bound_volume_and_claim() -> None:
    c, _ = cluster()
    s = c.volumes
    s.create(make_sc("local"))
    s.create(replace(make_pv("pv-x", "local"), claim_ref=ClaimReference("default", "x")))
    s.create(make_pvc("other", "local", uid=""))
    assert s.get_pvc("default", "other").volume_name == ""  # type: ignore[union-attr]
    s.create(make_pvc("x", "local", uid=""))
    assert s.get_pvc("default", "x").volume_name == "pv-x"  # type: ignore[union-attr]
    s.create(make_pv("pv-y", "local"))
    s.create(make_pvc("y", "local", volume_name="pv-y", uid=""))
    y = s.get_pvc("default", "y")
    assert y is not None and y.phase == CLAIM_BOUND
    assert ANN_BOUND_BY_CONTROLLER not in y.annotations  # the user chose the volume


def test_default_class_and_its_retroactive_assignment() -> None:
    c, _ = cluster()
    s = c.volumes
    s.create(make_pvc("early", None, uid=""))
    assert s.get_pvc("default", "early").storage_class_name is None  # type: ignore[union-attr]
    default = StorageClass(
        "gold", "csi.example.com", annotations={ANN_DEFAULT_STORAGE_CLASS: "true"}
    )
    s.create(default)
    early = s.get_pvc("default", "early")
    assert early is not None and early.storage_class_name == "gold"
    # Immediate class with a provisioner: provisioned at once.
    assert early.phase == CLAIM_BOUND and early.volume_name == f"pvc-{early.uid}"
    s.create(make_pvc("late", None, uid=""))
    assert s.get_pvc("default", "late").storage_class_name == "gold"  # type: ignore[union-attr]
    s.create(make_pvc("none", "", uid=""))
    assert s.get_pvc("default", "none").storage_class_name == ""  # type: ignore[union-attr]


def test_newest_default_class_wins() -> None:
    c, _ = cluster()
    s = c.volumes
    ann = {ANN_DEFAULT_STORAGE_CLASS: "true"}
    s.create(StorageClass("b", "p", annotations=ann))
    s.create(StorageClass("a", "p", annotations=ann))
    assert s.default_class().name == "a"  # type: ignore[union-attr]  # same time: by name
    c.engine.now = 5
    s.create(StorageClass("c", "p", annotations=ann))
    assert s.default_class().name == "c"  # type: ignore[union-attr]


def test_provisioned_volume_follows_the_selected_node_topology() -> None:
    c, _ = cluster()
    s = c.volumes
    c.create_node(make_node("n1").label(LABEL_ZONE, "z1").label("rack", "r1").obj())
    s.create(
        make_csi_node("n1", {"csi.example.com": 10}, topology_keys={"csi.example.com": ("rack",)})
    )
    s.create(make_sc("fast", provisioner="csi.example.com"))
    s.create(make_pvc("data", "fast", uid=""))
    pvc = s.get_pvc("default", "data")
    assert pvc is not None
    c.update_pvc(replace(pvc, annotations={ANN_SELECTED_NODE: "n1"}))
    got = s.get_pvc("default", "data")
    assert got is not None and got.phase == CLAIM_BOUND
    pv = s.get_pv(got.volume_name)
    assert pv is not None
    # The provisioner's CSINode topology keys (rack), not the node's zone label.
    assert _same_affinity(pv, "rack", "r1")
    assert pv.reclaim_policy == RECLAIM_DELETE and pv.capacity == pvc.request


def _same_affinity(pv: PersistentVolume, key: str, value: str) -> bool:
    sel = pv.node_affinity
    assert sel is not None
    reqs = [(r.key, r.operator, r.values) for t in sel.terms for r in t.match_expressions]
    return reqs == [(key, "In", (value,))]


def test_provisioned_volume_without_csinode_uses_the_class_topology_keys() -> None:
    c, _ = cluster()
    s = c.volumes
    c.create_node(make_node("n1").label(LABEL_ZONE, "z1").obj())
    s.create(make_sc("zonal", provisioner="p", topologies=[{LABEL_ZONE: ["z1", "z2"]}]))
    s.create(make_pvc("data", "zonal", uid=""))
    pvc = s.get_pvc("default", "data")
    assert pvc is not None
    c.update_pvc(replace(pvc, annotations={ANN_SELECTED_NODE: "n1"}))
    pv = s.get_pv(f"pvc-{pvc.uid}")
    assert pv is not None and _same_affinity(pv, LABEL_ZONE, "z1")


@pytest.mark.parametrize(
    ("policy", "want_pv_phase"),
    [
        pytest.param(RECLAIM_DELETE, None, id="Delete removes the volume"),
        pytest.param(RECLAIM_RETAIN, VOLUME_RELEASED, id="Retain leaves it Released"),
    ],
)
def test_claim_deletion_releases_its_volume(policy: str, want_pv_phase: str | None) -> None:
    c, _ = cluster()
    s = c.volumes
    s.create(make_sc("std", IMMEDIATE))
    s.create(replace(make_pv("pv", "std"), reclaim_policy=policy))
    claim = make_pvc("data", "std", uid="")
    s.create(claim)
    s.delete(claim)
    assert s.get_pvc("default", "data") is None
    pv = s.get_pv("pv")
    assert (pv.phase if pv is not None else None) == want_pv_phase
    if pv is not None:
        # A released volume keeps its claimRef: no other claim can match it.
        s.create(make_pvc("again", "std", uid=""))
        assert s.get_pvc("default", "again").volume_name == ""  # type: ignore[union-attr]


def test_volume_deletion_loses_its_claim() -> None:
    c, _ = cluster()
    s = c.volumes
    s.create(make_sc("std", IMMEDIATE))
    pv = make_pv("pv", "std")
    s.create(pv)
    s.create(make_pvc("data", "std", uid=""))
    s.delete(pv)
    assert s.get_pvc("default", "data").phase == CLAIM_LOST  # type: ignore[union-attr]


def test_pvc_protection_and_the_ephemeral_volume_controller() -> None:
    """A claim in use by a scheduled pod keeps a deletionTimestamp until the pod
    is gone; a pod's ephemeral claim is created with it, owned by it, and
    garbage-collected with it (its provisioned volume, reclaim Delete, too)."""
    c, log = cluster()
    s = c.volumes
    c.create_node(make_node("n1").obj())
    s.create(make_sc("fast", provisioner="csi.example.com"))
    s.create(make_sc("std", IMMEDIATE))
    s.create(make_pv("pv", "std"))
    claim = make_pvc("data", "std", uid="")
    s.create(claim)
    pod = make_pod("p").pvc("data").volume(ephemeral("scratch", "fast")).obj()
    c.create_pod(pod)
    c.flush()
    eph = s.get_pvc("default", "p-scratch")
    assert eph is not None
    assert [(r.kind, r.name, r.uid, r.controller) for r in eph.owner_references] == [
        ("Pod", "p", pod.uid, True)
    ]
    c.bind(pod, "n1")
    c.flush()
    s.delete(claim)
    held = s.get_pvc("default", "data")
    assert held is not None and held.deletion_timestamp is not None
    c.delete_gracefully(c.pods[pod.key], "Deleted")
    c.flush()
    assert s.get_pvc("default", "data") is not None  # still terminating: the pod runs
    c.engine.now = c.engine.next_time() or 0
    c.engine.run_due()
    c.flush()
    assert s.get_pvc("default", "data") is None
    assert s.get_pvc("default", "p-scratch") is None
    assert s.get_pv(f"pvc-{eph.uid}") is None
    assert ("PersistentVolumeClaim", "delete", "default/p-scratch") in log.log


def test_a_claim_dumped_while_terminating_goes_unless_a_pod_uses_it() -> None:
    c, _ = cluster()
    s = c.volumes
    c.create_node(make_node("n1").obj())
    c.create_pod(make_pod("user").pvc("kept").node("n1").obj())
    s.create(replace(make_pvc("gone", "", uid=""), deletion_timestamp=1))
    s.create(replace(make_pvc("kept", "", uid=""), deletion_timestamp=1))
    assert s.get_pvc("default", "gone") is None
    kept = s.get_pvc("default", "kept")
    assert kept is not None and kept.deletion_timestamp is not None

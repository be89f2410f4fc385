"""Storage events: which pending pods a PersistentVolumeClaim, PersistentVolume,
StorageClass or CSINode change moves out of the unschedulable pool.

Each case runs real scheduling cycles (``Rig``) until the pod sits in the pool,
rejected by the volume plugin the case names, then makes one storage change on
the simulated cluster and checks where the pod went. With queueing hints on
(v1.36), a change moves the pod when one of its rejector plugins registered the
event and that plugin's hint says Queue (upstream buildEvtResHandler ->
MoveAllToActiveOrBackoffQueue -> isPodWorthRequeuing). The pod was rejected at
t=0, so a moved pod waits out its 1 s backoff in backoffQ.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Final

import pytest

from kubesched.api.storage import IMMEDIATE, PersistentVolume
from kubesched.api.types import LABEL_ZONE, Node
from tests.builders import make_node, make_pod
from tests.plugins.volume_harness import make_csi_node, make_pv, make_pvc, make_sc
from tests.scheduler.test_event_handlers import BACKOFF, POOL, rejectors, where
from tests.scheduler.test_scheduler import Rig

Change = Callable[[Rig], None]

DRIVER: Final = "csi.example.com"


def _node(name: str, **labels: str) -> Node:
    b = make_node(name).capacity(cpu="4", memory="8Gi", pods=20)
    for k, v in labels.items():
        b = b.label(k, v)
    return b.obj()


def _rig() -> Rig:
    rig = Rig()
    rig.cluster.object_watchers.append(rig.sched)
    return rig


def _setup_missing_claim(rig: Rig) -> None:
    rig.nodes(_node("n1"))
    rig.pods(make_pod("p").pvc("data").obj())


def _setup_unbindable(rig: Rig) -> None:
    """A WaitForFirstConsumer claim with no volume and no provisioner."""
    rig.nodes(_node("n1"))
    rig.cluster.volumes.create(make_sc("local"))
    rig.cluster.volumes.create(make_pvc("data", "local", uid=""))
    rig.pods(make_pod("p").pvc("data").obj())


ZONE_PV = make_pv("pv-z", "", labels={LABEL_ZONE: "zone-b"})


def _setup_wrong_zone(rig: Rig) -> None:
    """A claim bound to a volume labelled zone-b; the only node is in zone-a."""
    rig.nodes(_node("n1", **{LABEL_ZONE: "zone-a"}))
    rig.cluster.volumes.create(replace(ZONE_PV, phase=""))
    rig.cluster.volumes.create(make_pvc("data", "", volume_name="pv-z", uid=""))
    rig.pods(make_pod("p").pvc("data").obj())


def _setup_limit(rig: Rig) -> None:
    """The node's CSI driver allows one volume, used by a running pod."""
    rig.nodes(_node("n1"))
    s = rig.cluster.volumes
    s.create(make_csi_node("n1", {DRIVER: 1}))
    s.create(make_sc("now", IMMEDIATE))
    for name in ("a", "b"):
        s.create(make_pv(f"pv-{name}", "now", driver=DRIVER, handle=name, phase=""))
        s.create(make_pvc(name, "now", uid=""))
    rig.pods(make_pod("holder").pvc("a").node("n1").grace(0).obj())
    rig.pods(make_pod("p").pvc("b").obj())


def _create(obj: object) -> Change:
    return lambda rig: rig.cluster.volumes.create(obj)  # type: ignore[arg-type]


def _update(obj: object) -> Change:
    return lambda rig: rig.cluster.volumes.update(obj)  # type: ignore[arg-type]


def _relabel_pv(labels: dict[str, str]) -> Change:
    def change(rig: Rig) -> None:
        pv = rig.cluster.volumes.get_pv("pv-z")
        assert isinstance(pv, PersistentVolume)
        rig.cluster.volumes.update(replace(pv, labels=labels))

    return change


def _delete_holder(rig: Rig) -> None:
    rig.cluster.delete_gracefully(rig.pod("holder"), "test")


@pytest.mark.parametrize(
    ("setup", "rejector", "change", "want"),
    [
        pytest.param(
            _setup_missing_claim,
            "VolumeRestrictions",
            _create(make_pvc("data", "", uid="")),
            BACKOFF,
            id="PersistentVolumeClaimAdd/the missing claim",
        ),
        pytest.param(
            _setup_missing_claim,
            "VolumeRestrictions",
            _create(make_pvc("other", "", uid="")),
            POOL,
            id="PersistentVolumeClaimAdd/another claim",
        ),
        pytest.param(
            _setup_missing_claim,
            "VolumeRestrictions",
            _create(make_pvc("data", "", namespace="elsewhere", uid="")),
            POOL,
            id="PersistentVolumeClaimAdd/same name in another namespace",
        ),
        pytest.param(
            _setup_unbindable,
            "VolumeBinding",
            _create(replace(make_pv("pv", "local"), phase="")),
            BACKOFF,
            id="PersistentVolumeAdd/VolumeBinding registers it without a hint",
        ),
        pytest.param(
            _setup_unbindable,
            "VolumeBinding",
            _create(make_sc("another")),
            BACKOFF,
            id="storage.k8s.io/StorageClassAdd/a new class may provision",
        ),
        pytest.param(
            _setup_unbindable,
            "VolumeBinding",
            _update(make_sc("local", topologies=[{LABEL_ZONE: ["zone-a"]}])),
            BACKOFF,
            id="storage.k8s.io/StorageClassUpdate/allowedTopologies changed",
        ),
        pytest.param(
            _setup_unbindable,
            "VolumeBinding",
            _create(make_csi_node("n1")),
            BACKOFF,
            id="storage.k8s.io/CSINodeAdd/VolumeBinding queues a new CSINode",
        ),
        pytest.param(
            _setup_wrong_zone,
            "VolumeZone",
            _relabel_pv({LABEL_ZONE: "zone-a"}),
            BACKOFF,
            id="PersistentVolumeUpdate/topology labels changed",
        ),
        pytest.param(
            _setup_wrong_zone,
            "VolumeZone",
            _relabel_pv({LABEL_ZONE: "zone-b", "team": "x"}),
            POOL,
            id="PersistentVolumeUpdate/another label changed",
        ),
        pytest.param(
            _setup_limit,
            "NodeVolumeLimits",
            _update(make_csi_node("n1", {DRIVER: 2})),
            BACKOFF,
            id="storage.k8s.io/CSINodeUpdate/the driver's count grew",
        ),
        pytest.param(
            _setup_limit,
            "NodeVolumeLimits",
            _update(make_csi_node("n1", {DRIVER: 1}, annotations={"x": "y"})),
            POOL,
            id="storage.k8s.io/CSINodeUpdate/the count did not grow",
        ),
        pytest.param(
            _setup_limit,
            "NodeVolumeLimits",
            _delete_holder,
            BACKOFF,
            id="AssignedPodDelete/the pod holding the attachment",
        ),
    ],
)
def test_storage_event_moves(
    setup: Callable[[Rig], None], rejector: str, change: Change, want: str
) -> None:
    rig = _rig()
    setup(rig)
    while rig.sched.queue.pods_in_active_q():
        rig.cycle()
    assert where(rig, "p") == POOL
    assert rejectors(rig, "p") == frozenset({rejector})
    changes = rig.sched.changes
    change(rig)
    rig.cluster.flush()
    assert rig.sched.changes > changes  # the simulation knows the cluster changed
    assert where(rig, "p") == want

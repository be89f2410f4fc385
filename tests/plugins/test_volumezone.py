"""VolumeZone: upstream volume_zone_test.go (TestSingleZone, TestMultiZone,
TestWithBinding) and the queueing hints. Expected statuses follow the plugin's
rules: a node with none of the four topology labels passes; a volume label needs
the node's label of the same key (or the GA key of a beta one) with a listed value."""

from __future__ import annotations

import pytest

from kubesched.api.storage import IMMEDIATE, WAIT_FOR_FIRST_CONSUMER
from kubesched.api.types import (
    LABEL_REGION,
    LABEL_REGION_BETA,
    LABEL_ZONE,
    LABEL_ZONE_BETA,
    Node,
    Pod,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import QueueingHint
from kubesched.framework.status import SKIP, SUCCESS, Code, Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.volumezone import (
    ERR_REASON_CONFLICT,
    VolumeZone,
    is_schedulable_after_pv_change,
    is_schedulable_after_pvc_change,
    is_schedulable_after_storage_class_added,
)
from tests.builders import build_table, make_node, make_pod
from tests.plugins.volume_harness import VolumeHandle, make_pv, make_pvc, make_sc
from tests.storage_fakes import FakeStorage

CONFLICT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)

PVS = [
    make_pv("Vol_1", labels={LABEL_ZONE_BETA: "us-west1-a"}),
    make_pv("Vol_2", labels={LABEL_REGION_BETA: "us-west1-b", "uselessLabel": "none"}),
    make_pv("Vol_3", labels={LABEL_REGION_BETA: "us-west1-c"}),
    make_pv("Vol_Stable_1", labels={LABEL_ZONE: "us-west1-a"}),
    make_pv("Vol_Stable_2", labels={LABEL_REGION: "us-west1-b", "uselessLabel": "none"}),
    make_pv("Vol_Stable_3", labels={LABEL_ZONE: "us-west1-a", LABEL_REGION: "us-west1-b"}),
    make_pv("Vol_Multi_1", labels={LABEL_ZONE_BETA: "us-west1-a__us-west1-b"}),
    make_pv("Vol_Multi_2", labels={LABEL_ZONE: "us-west1-b__us-west1-c"}),
    make_pv("Vol_Bad", labels={LABEL_ZONE: "us-west1-a____us-west1-b"}),
]
PVCS = [
    make_pvc("PVC_1", bound_pv="Vol_1"),
    make_pvc("PVC_2", bound_pv="Vol_2"),
    make_pvc("PVC_3", bound_pv="Vol_3"),
    make_pvc("PVC_4", bound_pv="Vol_not_exist"),
    make_pvc("PVC_Stable_1", bound_pv="Vol_Stable_1"),
    make_pvc("PVC_Stable_2", bound_pv="Vol_Stable_2"),
    make_pvc("PVC_Stable_3", bound_pv="Vol_Stable_3"),
    make_pvc("PVC_Multi_1", bound_pv="Vol_Multi_1"),
    make_pvc("PVC_Multi_2", bound_pv="Vol_Multi_2"),
    make_pvc("PVC_Bad", bound_pv="Vol_Bad"),
    make_pvc("PVC_EmptySC", ""),
    make_pvc("PVC_NoSC", "Class_0"),
    make_pvc("PVC_ImmediateSC", "Class_Immediate"),
    make_pvc("PVC_WaitSC", "Class_Wait"),
]
CLASSES = [make_sc("Class_Immediate", IMMEDIATE), make_sc("Class_Wait", WAIT_FOR_FIRST_CONSUMER)]


def _pod(claim: str | None) -> Pod:
    b = make_pod("pod_1")
    return (b.pvc(claim) if claim else b).obj()


def _node(labels: dict[str, str]) -> Node:
    return make_node("host1").no_hostname_label().labels(labels).obj()


def _run(pod: Pod, node: Node) -> tuple[Status, Status | None]:
    table = build_table([node])
    storage = FakeStorage(pvcs=PVCS, pvs=PVS, classes=CLASSES)
    plugin = VolumeZone(None, VolumeHandle(table, storage))
    state = CycleState()
    _, pre = plugin.pre_filter(state, PodInfo(pod), table)
    if not pre.is_success():
        return pre, None
    info = table.infos[0]
    assert info is not None
    return pre, plugin.filter(state, PodInfo(pod), info)


def uau(msg: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)


@pytest.mark.parametrize(
    ("claim", "node_labels", "want_pre", "want"),
    [
        pytest.param(
            None,
            {LABEL_ZONE_BETA: "us-west1-a"},
            SKIP,
            None,
            id="TestSingleZone/pod without volume",
        ),
        pytest.param("PVC_1", {}, SUCCESS, SUCCESS, id="TestSingleZone/node without labels"),
        pytest.param(
            "PVC_1",
            {LABEL_ZONE_BETA: "us-west1-a", "uselessLabel": "none"},
            SUCCESS,
            SUCCESS,
            id="TestSingleZone/beta zone label matched",
        ),
        pytest.param(
            "PVC_2",
            {LABEL_REGION_BETA: "us-west1-b", "uselessLabel": "none"},
            SUCCESS,
            SUCCESS,
            id="TestSingleZone/beta region label matched",
        ),
        pytest.param(
            "PVC_2",
            {LABEL_REGION_BETA: "no_us-west1-b", "uselessLabel": "none"},
            SUCCESS,
            CONFLICT,
            id="TestSingleZone/beta region label doesn't match",
        ),
        pytest.param(
            "PVC_1",
            {LABEL_ZONE_BETA: "no_us-west1-a", "uselessLabel": "none"},
            SUCCESS,
            CONFLICT,
            id="TestSingleZone/beta zone label doesn't match",
        ),
        pytest.param(
            "PVC_Stable_1",
            {LABEL_ZONE: "us-west1-a", "uselessLabel": "none"},
            SUCCESS,
            SUCCESS,
            id="TestSingleZone/zone label matched",
        ),
        pytest.param(
            "PVC_Stable_2",
            {LABEL_REGION: "us-west1-b", "uselessLabel": "none"},
            SUCCESS,
            SUCCESS,
            id="TestSingleZone/region label matched",
        ),
        pytest.param(
            "PVC_Stable_2",
            {LABEL_REGION: "no_us-west1-b", "uselessLabel": "none"},
            SUCCESS,
            CONFLICT,
            id="TestSingleZone/region label doesn't match",
        ),
        pytest.param(
            "PVC_Stable_1",
            {LABEL_ZONE: "no_us-west1-a", "uselessLabel": "none"},
            SUCCESS,
            CONFLICT,
            id="TestSingleZone/zone label doesn't match",
        ),
        pytest.param(
            "PVC_Stable_3",
            {LABEL_ZONE: "us-west1-a", "uselessLabel": "none"},
            SUCCESS,
            CONFLICT,
            id="TestSingleZone/pv with zone and region, node with only zone",
        ),
        pytest.param(
            "PVC_Stable_1",
            {LABEL_ZONE_BETA: "us-west1-a", "uselessLabel": "none"},
            SUCCESS,
            CONFLICT,
            id="TestSingleZone/pv with zone,node with beta zone",
        ),
        pytest.param(
            "PVC_1",
            {LABEL_ZONE: "us-west1-a", "uselessLabel": "none"},
            SUCCESS,
            SUCCESS,
            id="TestSingleZone/pv with beta label,node with ga label, matched",
        ),
        pytest.param(
            "PVC_1",
            {LABEL_ZONE: "no_us-west1-a", "uselessLabel": "none"},
            SUCCESS,
            CONFLICT,
            id="TestSingleZone/pv with beta label,node with ga label, don't match",
        ),
        pytest.param(
            "PVC_4",
            {LABEL_ZONE: "us-west1-a"},
            uau('persistentvolume "Vol_not_exist" not found'),
            None,
            id="TestSingleZone/pv not found",
        ),
        pytest.param(
            "PVC_Multi_1",
            {LABEL_ZONE_BETA: "us-west1-b"},
            SUCCESS,
            SUCCESS,
            id="TestMultiZone/beta zone label matched",
        ),
        pytest.param(
            "PVC_Multi_2",
            {LABEL_ZONE: "us-west1-a"},
            SUCCESS,
            CONFLICT,
            id="TestMultiZone/zone label doesn't match",
        ),
        pytest.param(
            "PVC_Bad",
            {LABEL_ZONE: "us-west1-z"},
            SKIP,
            None,
            id="an unparsable zone list is ignored (LabelZonesToSet error)",
        ),
        pytest.param(
            "PVC_1",
            {LABEL_ZONE: "us-west1-a"},
            SUCCESS,
            SUCCESS,
            id="TestWithBinding/label zone failure domain matched",
        ),
        pytest.param(
            "PVC_EmptySC",
            {LABEL_ZONE: "us-west1-a"},
            uau("PersistentVolumeClaim had no pv name and storageClass name"),
            None,
            id="TestWithBinding/unbound volume empty storage class",
        ),
        pytest.param(
            "PVC_NoSC",
            {LABEL_ZONE: "us-west1-a"},
            uau('storageclass.storage.k8s.io "Class_0" not found'),
            None,
            id="TestWithBinding/unbound volume no storage class",
        ),
        pytest.param(
            "PVC_ImmediateSC",
            {LABEL_ZONE: "us-west1-a"},
            uau("PersistentVolume had no name"),
            None,
            id="TestWithBinding/unbound volume immediate binding mode",
        ),
        pytest.param(
            "PVC_WaitSC",
            {LABEL_ZONE: "us-west1-a"},
            SKIP,
            None,
            id="TestWithBinding/unbound volume wait binding mode",
        ),
        pytest.param(
            "PVC_missing",
            {LABEL_ZONE: "us-west1-a"},
            uau('persistentvolumeclaim "PVC_missing" not found'),
            None,
            id="TestWithBinding/pvc not found",
        ),
    ],
)
def test_volume_zone(
    claim: str | None, node_labels: dict[str, str], want_pre: Status, want: Status | None
) -> None:
    pre, got = _run(_pod(claim), _node(node_labels))
    assert pre == want_pre and pre.code == want_pre.code
    assert got == want
    if want is not None and got is not None:
        assert got.code == want.code


POD = make_pod("pod_1").pvc("PVC_1").obj()


@pytest.mark.parametrize(
    ("fn", "old", "new", "want"),
    [
        pytest.param(
            is_schedulable_after_pvc_change,
            None,
            make_pvc("PVC_1"),
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterPersistentVolumeClaimChange/the pod's claim",
        ),
        pytest.param(
            is_schedulable_after_pvc_change,
            None,
            make_pvc("PVC_2"),
            QueueingHint.SKIP,
            id="TestIsSchedulableAfterPersistentVolumeClaimChange/another claim",
        ),
        pytest.param(
            is_schedulable_after_pvc_change,
            None,
            make_pvc("PVC_1", namespace="other"),
            QueueingHint.SKIP,
            id="TestIsSchedulableAfterPersistentVolumeClaimChange/another namespace",
        ),
        pytest.param(
            is_schedulable_after_storage_class_added,
            None,
            make_sc("wait", WAIT_FOR_FIRST_CONSUMER),
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterStorageClassAdded/wait for first consumer",
        ),
        pytest.param(
            is_schedulable_after_storage_class_added,
            None,
            make_sc("now", IMMEDIATE),
            QueueingHint.SKIP,
            id="TestIsSchedulableAfterStorageClassAdded/immediate",
        ),
        pytest.param(
            is_schedulable_after_pv_change,
            None,
            PVS[0],
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterPersistentVolumeChange/new volume",
        ),
        pytest.param(
            is_schedulable_after_pv_change,
            PVS[0],
            make_pv("Vol_1", labels={LABEL_ZONE_BETA: "us-west1-b"}),
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterPersistentVolumeChange/topology changed",
        ),
        pytest.param(
            is_schedulable_after_pv_change,
            PVS[0],
            make_pv("Vol_1", labels={LABEL_ZONE_BETA: "us-west1-a", "other": "x"}),
            QueueingHint.SKIP,
            id="TestIsSchedulableAfterPersistentVolumeChange/other label changed",
        ),
    ],
)
def test_hints(fn: object, old: object, new: object, want: QueueingHint) -> None:
    assert fn(POD, old, new) == want  # type: ignore[operator]

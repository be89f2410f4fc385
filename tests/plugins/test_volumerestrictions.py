"""VolumeRestrictions: upstream volume_restrictions_test.go cases, plus the
read-only rules of isVolumeConflict, the AddPod/RemovePod count preemption's dry
run relies on, and the queueing hints."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kubesched.api.storage import (
    READ_WRITE_MANY,
    READ_WRITE_ONCE_POD,
    PersistentVolumeClaim,
    PodVolume,
    RBDImage,
)
from kubesched.api.types import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import QueueingHint
from kubesched.framework.status import SKIP, SUCCESS, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.volumerestrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_RWOP_CONFLICT,
    VolumeRestrictions,
    is_schedulable_after_pod_deleted,
    is_schedulable_after_pvc_added,
)
from tests.builders import build_table, make_node, make_pod
from tests.plugins.volume_harness import VolumeHandle, make_pvc
from tests.storage_fakes import FakeStorage

DISK_CONFLICT = Status(Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT)
RWOP_CONFLICT = Status(Code.UNSCHEDULABLE, ERR_REASON_RWOP_CONFLICT)


def _run(
    pod: Pod, node_pods: list[Pod], pvcs: Sequence[PersistentVolumeClaim] = ()
) -> tuple[Status, Status | None]:
    """(PreFilter status, Filter status on node-1 holding ``node_pods``; None when
    PreFilter did not succeed, as upstream's tests skip Filter then)."""
    node = make_node("node-1").obj()
    table = build_table([node], node_pods)
    plugin = VolumeRestrictions(None, VolumeHandle(table, FakeStorage(pvcs=pvcs)))
    state = CycleState()
    _, pre = plugin.pre_filter(state, PodInfo(pod), table)
    if not pre.is_success():
        return pre, None
    info = table.infos[table.row_of["node-1"]]
    assert info is not None
    return pre, plugin.filter(state, PodInfo(pod), info)


def _on_node(builder_name: str, *volumes: PodVolume) -> Pod:
    b = make_pod(builder_name).node("node-1")
    for v in volumes:
        b = b.volume(v)
    return b.obj()


def _pod(name: str, *volumes: PodVolume) -> Pod:
    b = make_pod(name)
    for v in volumes:
        b = b.volume(v)
    return b.obj()


GCE = PodVolume("v", "gcePersistentDisk", disk="foo")
GCE2 = PodVolume("v", "gcePersistentDisk", disk="bar")
GCE_RO = PodVolume("v", "gcePersistentDisk", disk="foo", read_only=True)
AWS = PodVolume("v", "awsElasticBlockStore", disk="foo")
AWS2 = PodVolume("v", "awsElasticBlockStore", disk="bar")
AWS_RO = PodVolume("v", "awsElasticBlockStore", disk="foo", read_only=True)
RBD = PodVolume("v", "rbd", rbd=RBDImage(("a", "b"), "foo", "bar"))
RBD2 = PodVolume("v", "rbd", rbd=RBDImage(("c", "d"), "foo", "bar"))
RBD_OVERLAP = PodVolume("v", "rbd", rbd=RBDImage(("b", "c"), "foo", "bar"))
RBD_RO = PodVolume("v", "rbd", rbd=RBDImage(("a", "b"), "foo", "bar"), read_only=True)
ISCSI = PodVolume("v", "iscsi", disk="iqn.2016-12.server:storage.target01")
ISCSI2 = PodVolume("v", "iscsi", disk="iqn.2017-12.server:storage.target01")
ISCSI_RO = PodVolume("v", "iscsi", disk="iqn.2016-12.server:storage.target01", read_only=True)
NO_RESTRICTION = PodVolume("volume with no restriction", "emptyDir")


def _disk_cases(test: str, same: PodVolume, other: PodVolume) -> list[object]:
    return [
        pytest.param(_pod("p"), [], SKIP, None, id=f"{test}/nothing"),
        pytest.param(_pod("p"), [_on_node("e", same)], SKIP, None, id=f"{test}/one state"),
        pytest.param(
            _pod("p", same), [_on_node("e", same)], SUCCESS, DISK_CONFLICT, id=f"{test}/same state"
        ),
        pytest.param(
            _pod("p", other), [_on_node("e", same)], SUCCESS, SUCCESS, id=f"{test}/different state"
        ),
    ]


@pytest.mark.parametrize(
    ("pod", "node_pods", "want_pre", "want"),
    [
        *_disk_cases("TestGCEDiskConflicts", GCE, GCE2),
        pytest.param(
            _pod("p", NO_RESTRICTION),
            [],
            SKIP,
            None,
            id="TestGCEDiskConflicts/pod with a volume that doesn't have restrictions",
        ),
        *_disk_cases("TestAWSDiskConflicts", AWS, AWS2),
        *_disk_cases("TestRBDDiskConflicts", RBD, RBD2),
        *_disk_cases("TestISCSIDiskConflicts", ISCSI, ISCSI2),
        # isVolumeConflict: GCE PD, iSCSI and RBD allow several read-only mounts; one
        # read-write mount conflicts; AWS EBS conflicts whatever the mode.
        pytest.param(
            _pod("p", GCE_RO), [_on_node("e", GCE_RO)], SUCCESS, SUCCESS, id="gce both read-only"
        ),
        pytest.param(
            _pod("p", GCE_RO), [_on_node("e", GCE)], SUCCESS, DISK_CONFLICT, id="gce one read-write"
        ),
        pytest.param(
            _pod("p", AWS_RO), [_on_node("e", AWS_RO)], SUCCESS, DISK_CONFLICT, id="aws read-only"
        ),
        pytest.param(
            _pod("p", ISCSI_RO),
            [_on_node("e", ISCSI_RO)],
            SUCCESS,
            SUCCESS,
            id="iscsi both read-only",
        ),
        pytest.param(
            _pod("p", RBD_RO), [_on_node("e", RBD_RO)], SUCCESS, SUCCESS, id="rbd both read-only"
        ),
        pytest.param(
            _pod("p", RBD_OVERLAP),
            [_on_node("e", RBD)],
            SUCCESS,
            DISK_CONFLICT,
            id="rbd monitors overlap in one",
        ),
        pytest.param(
            _pod("p", GCE), [_on_node("e", AWS)], SUCCESS, SUCCESS, id="different disk kinds"
        ),
    ],
)
def test_disk_conflicts(
    pod: Pod, node_pods: list[Pod], want_pre: Status, want: Status | None
) -> None:
    pre, got = _run(pod, node_pods)
    assert pre == want_pre and pre.code == want_pre.code
    assert got == want
    if want is not None and got is not None:
        assert got.code == want.code


# TestAccessModeConflicts fixtures.
RWOP1 = make_pvc("claim-with-rwop-1", modes=(READ_WRITE_ONCE_POD,))
RWOP2 = make_pvc("claim-with-rwop-2", modes=(READ_WRITE_ONCE_POD,))
RWX = make_pvc("claim-with-rwx", modes=(READ_WRITE_MANY,))
POD_ONE_PVC = make_pod("pod-with-one-pvc").pvc("claim-with-rwop-1").node("node-1").obj()
POD_TWO_PVCS = (
    make_pod("pod-with-two-pvcs").pvc("claim-with-rwop-1").pvc("claim-with-rwop-2").node("node-1")
).obj()
POD_ONE_CONFLICT = make_pod("pod-with-one-conflict").pvc("claim-with-rwop-1").obj()
POD_TWO_CONFLICTS = (
    make_pod("pod-with-two-conflicts").pvc("claim-with-rwop-1").pvc("claim-with-rwop-2")
).obj()
POD_RWX = make_pod("pod-with-rwx").pvc("claim-with-rwx").node("node-1").obj()


@pytest.mark.parametrize(
    ("pod", "node_pods", "pvcs", "want_pre", "want"),
    [
        pytest.param(_pod("p"), [], [], SKIP, None, id="TestAccessModeConflicts/nothing"),
        pytest.param(
            POD_ONE_CONFLICT,
            [],
            [],
            Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                'persistentvolumeclaim "claim-with-rwop-1" not found',
            ),
            None,
            id="TestAccessModeConflicts/failed to get PVC",
        ),
        pytest.param(
            POD_ONE_CONFLICT,
            [POD_RWX],
            [RWOP1, RWX],
            SKIP,
            None,
            id="TestAccessModeConflicts/no access mode conflict",
        ),
        pytest.param(
            POD_ONE_CONFLICT,
            [POD_ONE_PVC, POD_RWX],
            [RWOP1, RWX],
            SUCCESS,
            RWOP_CONFLICT,
            id="TestAccessModeConflicts/access mode conflict, unschedulable",
        ),
        pytest.param(
            POD_TWO_CONFLICTS,
            [POD_TWO_PVCS, POD_RWX],
            [RWOP1, RWOP2, RWX],
            SUCCESS,
            RWOP_CONFLICT,
            id="TestAccessModeConflicts/two conflicts, unschedulable",
        ),
        pytest.param(
            make_pod("other-ns").namespace("team").pvc("claim-with-rwop-1").obj(),
            [POD_ONE_PVC],
            [make_pvc("claim-with-rwop-1", namespace="team", modes=(READ_WRITE_ONCE_POD,))],
            SKIP,
            None,
            id="a claim of the same name in another namespace is another claim",
        ),
    ],
)
def test_access_mode_conflicts(
    pod: Pod,
    node_pods: list[Pod],
    pvcs: list[PersistentVolumeClaim],
    want_pre: Status,
    want: Status | None,
) -> None:
    pre, got = _run(pod, node_pods, pvcs)
    assert pre == want_pre and pre.code == want_pre.code
    assert got == want
    if want is not None and got is not None:
        assert got.code == Code.UNSCHEDULABLE  # preemption may free the claim


def test_remove_pod_frees_the_claim_and_add_pod_takes_it_back() -> None:
    """The preemption dry run removes the holder of the ReadWriteOncePod claim (the
    count drops to 0 and the node fits) and puts it back when reprieved."""
    node = make_node("node-1").obj()
    table = build_table([node], [POD_ONE_PVC, POD_RWX])
    plugin = VolumeRestrictions(None, VolumeHandle(table, FakeStorage(pvcs=[RWOP1, RWX])))
    state = CycleState()
    pod = PodInfo(POD_ONE_CONFLICT)
    _, pre = plugin.pre_filter(state, pod, table)
    assert pre == SUCCESS
    info = table.infos[table.row_of["node-1"]]
    assert info is not None
    dry = info.clone()
    trial = state.clone()
    assert plugin.remove_pod(trial, pod, PodInfo(POD_RWX), dry) == SUCCESS
    assert plugin.filter(trial, pod, dry) == RWOP_CONFLICT  # the rwx pod held nothing
    holder = PodInfo(POD_ONE_PVC)
    dry.remove_pod(POD_ONE_PVC)
    assert plugin.remove_pod(trial, pod, holder, dry) == SUCCESS
    assert plugin.filter(trial, pod, dry) == SUCCESS
    dry.add_pod(holder)
    assert plugin.add_pod(trial, pod, holder, dry) == SUCCESS
    assert plugin.filter(trial, pod, dry) == RWOP_CONFLICT
    # The clone kept the original count untouched.
    assert plugin.filter(state, pod, info) == RWOP_CONFLICT


def test_filter_without_prefilter_state_is_an_error() -> None:
    table = build_table([make_node("node-1").obj()])
    plugin = VolumeRestrictions(None, VolumeHandle(table))
    info = table.infos[0]
    assert isinstance(info, NodeInfo)
    got = plugin.filter(CycleState(), PodInfo(_pod("p")), info)
    assert got.code == Code.ERROR
    assert got.message() == 'cannot read "PreFilterVolumeRestrictions" from cycleState'


@pytest.mark.parametrize(
    ("pod", "new", "want"),
    [
        pytest.param(
            make_pod("p").pvc("pvc1").obj(),
            make_pvc("pvc1"),
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterPersistentVolumeClaimAdded/queue on the pod's claim",
        ),
        pytest.param(
            make_pod("p").pvc("pvc1").obj(),
            make_pvc("pvc2"),
            QueueingHint.SKIP,
            id="TestIsSchedulableAfterPersistentVolumeClaimAdded/skip another claim",
        ),
        pytest.param(
            make_pod("p").pvc("pvc1").obj(),
            make_pvc("pvc1", namespace="other"),
            QueueingHint.SKIP,
            id="TestIsSchedulableAfterPersistentVolumeClaimAdded/skip another namespace",
        ),
    ],
)
def test_pvc_added_hint(pod: Pod, new: PersistentVolumeClaim, want: QueueingHint) -> None:
    assert is_schedulable_after_pvc_added(pod, None, new) == want


@pytest.mark.parametrize(
    ("pod", "deleted", "want"),
    [
        pytest.param(
            _pod("p", GCE),
            _on_node("d", GCE),
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterPodDeleted/queue when the deleted pod held our disk",
        ),
        pytest.param(
            _pod("p", GCE),
            _on_node("d", GCE2),
            QueueingHint.SKIP,
            id="TestIsSchedulableAfterPodDeleted/skip another disk",
        ),
        pytest.param(
            POD_ONE_CONFLICT,
            POD_ONE_PVC,
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterPodDeleted/queue when the deleted pod used the same claim",
        ),
        pytest.param(
            POD_ONE_CONFLICT,
            make_pod("d").namespace("other").pvc("claim-with-rwop-1").node("node-1").obj(),
            QueueingHint.SKIP,
            id="TestIsSchedulableAfterPodDeleted/skip another namespace",
        ),
        pytest.param(
            POD_ONE_CONFLICT,
            make_pod("d").pvc("claim-with-rwop-1").obj(),
            QueueingHint.SKIP,
            id="TestIsSchedulableAfterPodDeleted/skip a pod neither assigned nor nominated",
        ),
        pytest.param(
            POD_ONE_CONFLICT,
            make_pod("d").pvc("claim-with-rwop-1").nominated("node-1").obj(),
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterPodDeleted/queue a nominated pod",
        ),
    ],
)
def test_pod_deleted_hint(pod: Pod, deleted: Pod, want: QueueingHint) -> None:
    assert is_schedulable_after_pod_deleted(pod, deleted, None) == want


def test_registered_events() -> None:
    plugin = VolumeRestrictions(None, VolumeHandle(build_table([])))
    got = [
        (e.event.resource, int(e.event.action_type), e.hint is not None)
        for e in plugin.events_to_register()
    ]
    # AssignedPod/Delete, Node/Add (no hint), PersistentVolumeClaim/Add.
    assert got == [
        ("AssignedPod", 2, True),
        ("Node", 1, False),
        ("PersistentVolumeClaim", 1, True),
    ]

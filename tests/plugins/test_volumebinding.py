"""VolumeBinding: upstream volume_binding_test.go TestVolumeBinding cases (with
v1.36's behaviour: no PreFilterResult for bound local volumes since upstream
PR 127584, no Score without the StorageCapacityScoring gate), ephemeral claims,
dynamic provisioning, the binding cycle and the queueing hints."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from kubesched.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_MIGRATED_PLUGINS,
    ANN_SELECTED_NODE,
    CLAIM_BOUND,
    CLAIM_LOST,
    IMMEDIATE,
    READ_WRITE_MANY,
    ClaimReference,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from kubesched.api.types import LABEL_HOSTNAME, LABEL_ZONE, Node, Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, QueueingHint
from kubesched.framework.interfaces import NodeSet
from kubesched.framework.status import SKIP, SUCCESS, Code, Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.volumebinding import VolumeBinding
from kubesched.plugins.volumebinding.binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_PV_NOT_EXIST,
)
from kubesched.plugins.volumebinding.plugin import (
    is_schedulable_after_csi_node_change,
    is_schedulable_after_pvc_change,
    is_schedulable_after_storage_class_change,
)
from tests.builders import build_table, make_node, make_pod
from tests.plugins.volume_harness import (
    VolumeHandle,
    ephemeral,
    make_csi_node,
    make_pv,
    make_pvc,
    make_sc,
)
from tests.storage_fakes import FakeStorage

WAIT = make_sc("wait-sc")
WAIT_HDD = make_sc("wait-hdd-sc")
IMMEDIATE_SC = make_sc("immediate-sc", IMMEDIATE)
PROVISIONED = make_sc("provisioned-sc", provisioner="csi.example.com")
ZONAL = make_sc("zonal-sc", provisioner="csi.example.com", topologies=[{LABEL_ZONE: ["a"]}])
CLASSES = [WAIT, WAIT_HDD, IMMEDIATE_SC, PROVISIONED, ZONAL]


def uau(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)


def node(name: str, labels: dict[str, str] | None = None) -> Node:
    return make_node(name).labels(labels or {}).obj()


def _plugin(
    nodes: Sequence[Node],
    pvcs: Sequence[PersistentVolumeClaim],
    pvs: Sequence[PersistentVolume],
    pods: Sequence[Pod] = (),
) -> tuple[VolumeBinding, VolumeHandle]:
    table = build_table(nodes)
    storage = FakeStorage(pvcs=pvcs, pvs=pvs, classes=CLASSES)
    handle = VolumeHandle(table, storage, pods)
    return VolumeBinding(None, handle), handle


def _run(
    pod: Pod,
    nodes: Sequence[Node],
    pvcs: Sequence[PersistentVolumeClaim] = (),
    pvs: Sequence[PersistentVolume] = (),
) -> tuple[Status, list[Status] | None, Status | None]:
    """(PreFilter, Filter per node or None, PreScore) as upstream's test runs them."""
    plugin, handle = _plugin(nodes, pvcs, pvs)
    table = handle.table
    state = CycleState()
    pi = PodInfo(pod)
    _, pre = plugin.pre_filter(state, pi, table)
    if not pre.is_success():
        return pre, None, None
    infos = [table.infos[table.row_of[n.name]] for n in nodes]
    filters = [plugin.filter(state, pi, i) for i in infos if i is not None]
    rows = table.order
    return pre, filters, plugin.pre_score(state, pi, NodeSet(table, rows))


POD_A = make_pod("pod-a").pvc("pvc-a").obj()


@pytest.mark.parametrize(
    ("pod", "nodes", "pvcs", "pvs", "want_pre", "want_filter"),
    [
        pytest.param(
            make_pod("pod-a").obj(),
            [node("node-a")],
            [],
            [],
            SKIP,
            None,
            id="TestVolumeBinding/pod has not pvcs",
        ),
        pytest.param(
            POD_A,
            [node("node-a")],
            [make_pvc("pvc-a", "wait-sc", bound_pv="pv-a")],
            [make_pv("pv-a", "wait-sc")],
            SUCCESS,
            [SUCCESS],
            id="TestVolumeBinding/all bound",
        ),
        pytest.param(
            make_pod("pod-a").pvc("pvc-a").pvc("pvc-b").obj(),
            [node("node-a"), node("node-b")],
            [
                make_pvc("pvc-a", "wait-sc", bound_pv="pv-a"),
                make_pvc("pvc-b", "wait-sc", bound_pv="pv-b"),
            ],
            [
                make_pv("pv-a", "wait-sc", node_affinity={LABEL_HOSTNAME: ["node-a"]}),
                make_pv("pv-b", "wait-sc", node_affinity={LABEL_HOSTNAME: ["node-a"]}),
            ],
            SUCCESS,
            [SUCCESS, uau(ERR_REASON_NODE_CONFLICT)],
            id="TestVolumeBinding/all bound with local volumes",
        ),
        pytest.param(
            POD_A,
            [node("node-a")],
            [],
            [],
            uau('persistentvolumeclaim "pvc-a" not found'),
            None,
            id="TestVolumeBinding/PVC does not exist",
        ),
        pytest.param(
            make_pod("pod-a").pvc("pvc-a").pvc("pvc-b").obj(),
            [node("node-a")],
            [make_pvc("pvc-a", "wait-sc", bound_pv="pv-a")],
            [],
            uau('persistentvolumeclaim "pvc-b" not found'),
            None,
            id="TestVolumeBinding/Part of PVCs do not exist",
        ),
        pytest.param(
            POD_A,
            [node("node-a")],
            [make_pvc("pvc-a", "immediate-sc")],
            [],
            uau("pod has unbound immediate PersistentVolumeClaims"),
            None,
            id="TestVolumeBinding/immediate claims not bound",
        ),
        pytest.param(
            POD_A,
            [node("node-a")],
            [make_pvc("pvc-a", "wait-sc")],
            [],
            SUCCESS,
            [uau(ERR_REASON_BIND_CONFLICT)],
            id="TestVolumeBinding/unbound claims no matches",
        ),
        pytest.param(
            make_pod("pod-a").pvc("pvc-a").pvc("pvc-b").obj(),
            [node("node-a", {"foo": "barbar"})],
            [make_pvc("pvc-a", "wait-sc", bound_pv="pv-a"), make_pvc("pvc-b", "wait-sc")],
            [make_pv("pv-a", "wait-sc", node_affinity={"foo": ["bar"]})],
            SUCCESS,
            [uau(ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT)],
            id="TestVolumeBinding/bound and unbound unsatisfied",
        ),
        pytest.param(
            POD_A,
            [node("node-a")],
            [make_pvc("pvc-a", "wait-sc", bound_pv="pv-a")],
            [],
            SUCCESS,
            [uau(ERR_REASON_PV_NOT_EXIST)],
            id="TestVolumeBinding/pv not found",
        ),
        pytest.param(
            POD_A,
            [node("node-a")],
            [make_pvc("pvc-a", "wait-sc", bound_pv="pv-a", phase=CLAIM_LOST)],
            [],
            uau('persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"'),
            None,
            id="TestVolumeBinding/pv not found claim lost",
        ),
        pytest.param(
            POD_A,
            [node("node-a"), node("node-b"), node("node-c")],
            [make_pvc("pvc-a", "wait-sc", request="50Gi")],
            [
                make_pv(
                    f"pv-{n}-{i}",
                    "wait-sc",
                    capacity=c,
                    node_affinity={LABEL_HOSTNAME: [f"node-{n}"]},
                )
                for n, c in (("a", "200Gi"), ("b", "100Gi"))
                for i in range(2)
            ],
            SUCCESS,
            [SUCCESS, SUCCESS, uau(ERR_REASON_BIND_CONFLICT)],
            id="TestVolumeBinding/local volumes with close capacity are preferred",
        ),
        pytest.param(
            POD_A,
            [node("node-a")],
            [make_pvc("pvc-a", "wait-sc", volume_name="pv-a")],
            [make_pv("pv-a", "wait-sc")],
            uau("pod has unbound immediate PersistentVolumeClaims"),
            None,
            id="a pre-bound claim the PV controller has not bound yet counts as immediate",
        ),
        pytest.param(
            POD_A,
            [node("node-a")],
            [replace(make_pvc("pvc-a", "wait-sc", bound_pv="pv-a"), deletion_timestamp=1)],
            [make_pv("pv-a", "wait-sc")],
            uau('persistentvolumeclaim "pvc-a" is being deleted'),
            None,
            id="a claim being deleted",
        ),
        pytest.param(
            POD_A,
            [
                node("node-a", {LABEL_ZONE: "a"}),
                node("node-b", {LABEL_ZONE: "b"}),
            ],
            [make_pvc("pvc-a", "zonal-sc")],
            [],
            SUCCESS,
            [SUCCESS, uau(ERR_REASON_BIND_CONFLICT)],
            id="dynamic provisioning within the class's allowedTopologies",
        ),
        pytest.param(
            POD_A,
            [node("node-a")],
            [make_pvc("pvc-a", "provisioned-sc", annotations={ANN_SELECTED_NODE: "node-b"})],
            [],
            SUCCESS,
            [uau(ERR_REASON_BIND_CONFLICT)],
            id="a claim whose provisioning selected another node",
        ),
        pytest.param(
            POD_A,
            [node("node-a")],
            [make_pvc("pvc-a", "wait-sc", modes=(READ_WRITE_MANY,))],
            [make_pv("pv-a", "wait-sc")],
            SUCCESS,
            [uau(ERR_REASON_BIND_CONFLICT)],
            id="the volume lacks the claim's access mode",
        ),
        pytest.param(
            make_pod("abc").volume(ephemeral("xyz", "wait-sc")).obj(),
            [node("node-a")],
            [],
            [],
            uau(
                "waiting for ephemeral volume controller to create the "
                'persistentvolumeclaim "abc-xyz"'
            ),
            None,
            id="ephemeral volume missing",
        ),
        pytest.param(
            make_pod("abc").uid("uid-abc").volume(ephemeral("xyz", "wait-sc")).obj(),
            [node("node-a")],
            [make_pvc("abc-xyz", "wait-sc", owner_uid="uid-other")],
            [],
            uau("PVC default/abc-xyz was not created for pod default/abc (pod is not owner)"),
            None,
            id="ephemeral volume not owned",
        ),
        pytest.param(
            make_pod("abc").uid("uid-abc").volume(ephemeral("xyz", "provisioned-sc")).obj(),
            [node("node-a")],
            [make_pvc("abc-xyz", "provisioned-sc", owner_uid="uid-abc")],
            [],
            SUCCESS,
            [SUCCESS],
            id="ephemeral volume to provision",
        ),
    ],
)
def test_volume_binding(
    pod: Pod,
    nodes: list[Node],
    pvcs: list[PersistentVolumeClaim],
    pvs: list[PersistentVolume],
    want_pre: Status,
    want_filter: list[Status] | None,
) -> None:
    pre, filters, pre_score = _run(pod, nodes, pvcs, pvs)
    assert pre == want_pre and pre.code == want_pre.code
    assert filters == want_filter
    if filters is not None and want_filter is not None:
        assert [s.code for s in filters] == [s.code for s in want_filter]
        # StorageCapacityScoring is off in v1.36: no scorer, PreScore skips.
        assert pre_score == SKIP


def _bind_claims(storage: FakeStorage) -> None:
    """The PV controller and provisioner, as the simulated cluster plays them:
    a volume pre-bound to a claim binds it; a claim with a selected node gets a
    new volume on that node."""
    for pv in list(storage.pvs.values()):
        ref = pv.claim_ref
        if ref is None:
            continue
        pvc = storage.pvcs.get(ref.key)
        if pvc is not None and not pvc.volume_name:
            storage.pvcs[pvc.key] = replace(
                pvc,
                volume_name=pv.name,
                annotations={**pvc.annotations, ANN_BIND_COMPLETED: "yes"},
                phase=CLAIM_BOUND,
            )
    for pvc in list(storage.pvcs.values()):
        selected = pvc.annotations.get(ANN_SELECTED_NODE)
        if selected and not pvc.volume_name:
            name = f"pvc-{pvc.uid}"
            storage.pvs[name] = make_pv(
                name, "provisioned-sc", node_affinity={LABEL_HOSTNAME: [selected]}, claim=pvc
            )
            storage.pvcs[pvc.key] = replace(
                pvc,
                volume_name=name,
                annotations={**pvc.annotations, ANN_BIND_COMPLETED: "yes"},
                phase=CLAIM_BOUND,
            )


def _cycle(
    pod: Pod,
    nodes: Sequence[Node],
    pvcs: Sequence[PersistentVolumeClaim],
    pvs: Sequence[PersistentVolume],
    host: str,
    react: bool = True,
) -> tuple[Status, Status, FakeStorage]:
    plugin, handle = _plugin(nodes, pvcs, pvs, [pod])
    if react:
        handle.storage.react = _bind_claims
    table = handle.table
    state = CycleState()
    pi = PodInfo(pod)
    _, pre = plugin.pre_filter(state, pi, table)
    assert pre.is_success(), pre
    for n in nodes:
        info = table.infos[table.row_of[n.name]]
        assert info is not None
        plugin.filter(state, pi, info)
    reserve = plugin.reserve(state, pi, host)
    return reserve, plugin.pre_bind(state, pi, host), handle.storage


def test_static_binding_takes_the_smallest_fitting_volume() -> None:
    """FindMatchingVolume: the smallest Available volume with enough capacity; PreBind
    pre-binds it (claimRef with the claim's uid, bound-by-controller) and waits for
    the PV controller."""
    pvc = make_pvc("pvc-a", "wait-sc", request="4Gi")
    pvs = [
        make_pv("pv-big", "wait-sc", capacity="10Gi"),
        make_pv("pv-small", "wait-sc", capacity="5Gi"),
        make_pv("pv-tiny", "wait-sc", capacity="3Gi"),
    ]
    reserve, pre_bind, storage = _cycle(POD_A, [node("node-a")], [pvc], pvs, "node-a")
    assert reserve == SUCCESS and pre_bind == SUCCESS
    assert storage.writes == [("pv", "pv-small")]
    pv = storage.pvs["pv-small"]
    assert pv.claim_ref == ClaimReference("default", "pvc-a", pvc.uid)
    assert pv.annotations[ANN_BOUND_BY_CONTROLLER] == "yes"
    assert storage.pvcs["default/pvc-a"].volume_name == "pv-small"


def test_two_claims_never_share_a_volume() -> None:
    pod = make_pod("pod-a").pvc("pvc-a").pvc("pvc-b").obj()
    pvcs = [
        make_pvc("pvc-a", "wait-sc", request="2Gi"),
        make_pvc("pvc-b", "wait-sc", request="1Gi"),
    ]
    pvs = [make_pv("pv-1", "wait-sc", capacity="2Gi"), make_pv("pv-2", "wait-sc", capacity="2Gi")]
    reserve, pre_bind, storage = _cycle(pod, [node("node-a")], pvcs, pvs, "node-a")
    assert (reserve, pre_bind) == (SUCCESS, SUCCESS)
    # The smaller claim goes first (byPVCSize) and takes the first smallest volume.
    assert storage.pvcs["default/pvc-b"].volume_name == "pv-1"
    assert storage.pvcs["default/pvc-a"].volume_name == "pv-2"


def test_dynamic_provisioning_selects_the_node() -> None:
    pvc = make_pvc("pvc-a", "provisioned-sc")
    reserve, pre_bind, storage = _cycle(
        POD_A, [node("node-a"), node("node-b")], [pvc], [], "node-b"
    )
    assert (reserve, pre_bind) == (SUCCESS, SUCCESS)
    assert storage.writes == [("pvc", "default/pvc-a")]
    got = storage.pvcs["default/pvc-a"]
    assert got.annotations[ANN_SELECTED_NODE] == "node-b"
    assert got.volume_name == f"pvc-{pvc.uid}"


def test_all_bound_makes_no_api_call() -> None:
    pvc = make_pvc("pvc-a", "wait-sc", bound_pv="pv-a")
    reserve, pre_bind, storage = _cycle(
        POD_A, [node("node-a")], [pvc], [make_pv("pv-a", "wait-sc", claim=pvc)], "node-a"
    )
    assert (reserve, pre_bind) == (SUCCESS, SUCCESS)
    assert storage.writes == []


def test_pre_bind_reports_a_binding_that_does_not_complete() -> None:
    """Nobody binds the claim: upstream polls until bindTimeoutSeconds and fails with
    the poll's deadline error."""
    pvc = make_pvc("pvc-a", "wait-sc")
    _, pre_bind, _ = _cycle(
        POD_A, [node("node-a")], [pvc], [make_pv("pv-a", "wait-sc")], "node-a", react=False
    )
    assert pre_bind.code == Code.ERROR
    assert pre_bind.message() == "binding volumes: context deadline exceeded"


def test_pre_bind_reports_a_missing_volume() -> None:
    plugin, handle = _plugin(
        [node("node-a")], [make_pvc("pvc-a", "wait-sc")], [make_pv("pv-a", "wait-sc")], [POD_A]
    )
    state = CycleState()
    pi = PodInfo(POD_A)
    plugin.pre_filter(state, pi, handle.table)
    info = handle.table.infos[0]
    assert info is not None
    assert plugin.filter(state, pi, info) == SUCCESS
    assert plugin.reserve(state, pi, "node-a") == SUCCESS
    del handle.storage.pvs["pv-a"]
    got = plugin.pre_bind(state, pi, "node-a")
    assert got.code == Code.ERROR
    assert got.message() == 'persistentvolumes "pv-a" not found'


def test_pod_without_claims_reserves_and_prebinds_nothing() -> None:
    plugin, handle = _plugin([node("node-a")], [], [])
    state = CycleState()
    pi = PodInfo(make_pod("p").obj())
    assert plugin.pre_filter(state, pi, handle.table)[1] == SKIP
    assert plugin.reserve(state, pi, "node-a") == SUCCESS
    assert plugin.pre_bind(state, pi, "node-a") == SUCCESS
    assert handle.storage.writes == []


POD_WITH_CLAIMS = make_pod("p").pvc("pvc-a").volume(ephemeral("scratch")).obj()


@pytest.mark.parametrize(
    ("fn", "old", "new", "want"),
    [
        pytest.param(
            is_schedulable_after_pvc_change,
            None,
            make_pvc("pvc-a"),
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterPersistentVolumeClaimChange/the pod's claim",
        ),
        pytest.param(
            is_schedulable_after_pvc_change,
            None,
            make_pvc("p-scratch"),
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterPersistentVolumeClaimChange/the pod's ephemeral claim",
        ),
        pytest.param(
            is_schedulable_after_pvc_change,
            None,
            make_pvc("pvc-b"),
            QueueingHint.SKIP,
            id="TestIsSchedulableAfterPersistentVolumeClaimChange/another claim",
        ),
        pytest.param(
            is_schedulable_after_pvc_change,
            None,
            make_pvc("pvc-a", namespace="x"),
            QueueingHint.SKIP,
            id="TestIsSchedulableAfterPersistentVolumeClaimChange/another namespace",
        ),
        pytest.param(
            is_schedulable_after_storage_class_change,
            None,
            WAIT,
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterStorageClassChange/new class",
        ),
        pytest.param(
            is_schedulable_after_storage_class_change,
            PROVISIONED,
            ZONAL,
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterStorageClassChange/allowedTopologies changed",
        ),
        pytest.param(
            is_schedulable_after_storage_class_change,
            ZONAL,
            StorageClass(
                ZONAL.name,
                ZONAL.provisioner,
                ZONAL.volume_binding_mode,
                ZONAL.allowed_topologies,
                annotations={"x": "y"},
            ),
            QueueingHint.SKIP,
            id="TestIsSchedulableAfterStorageClassChange/other update",
        ),
        pytest.param(
            is_schedulable_after_csi_node_change,
            None,
            make_csi_node("n"),
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterCSINodeChange/new CSINode",
        ),
        pytest.param(
            is_schedulable_after_csi_node_change,
            make_csi_node("n"),
            make_csi_node("n", annotations={ANN_MIGRATED_PLUGINS: "kubernetes.io/gce-pd"}),
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterCSINodeChange/migrated plugins changed",
        ),
        pytest.param(
            is_schedulable_after_csi_node_change,
            make_csi_node("n"),
            make_csi_node("n", {"csi.example.com": 3}),
            QueueingHint.SKIP,
            id="TestIsSchedulableAfterCSINodeChange/other update",
        ),
    ],
)
def test_hints(fn: object, old: object, new: object, want: QueueingHint) -> None:
    assert fn(POD_WITH_CLAIMS, old, new) == want  # type: ignore[operator]


def test_registered_events() -> None:
    plugin, _ = _plugin([], [], [])
    got = [
        (e.event.resource, e.event.action_type, e.hint is not None)
        for e in plugin.events_to_register()
    ]
    add_update = ActionType.ADD | ActionType.UPDATE
    assert got == [
        ("storage.k8s.io/StorageClass", add_update, True),
        ("PersistentVolumeClaim", add_update, True),
        ("PersistentVolume", add_update, False),
        ("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL, False),
        ("storage.k8s.io/CSINode", add_update, True),
    ]

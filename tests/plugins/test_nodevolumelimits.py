"""NodeVolumeLimits (CSILimits): cases after upstream csi_test.go TestCSILimits,
and its queueing hints. The expected verdicts count volumes as the plugin does:
one per ``<driver>/<handle>`` on the node, the incoming pod's new ones added,
against ``CSINode.spec.drivers[].allocatable.count``."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import pytest

from kubesched.api.storage import ANN_MIGRATED_PLUGINS, CSINode, PodVolume
from kubesched.api.types import Pod
from kubesched.api.volume_helpers import csi_attach_limit_key
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import QueueingHint
from kubesched.framework.status import SKIP, SUCCESS, Code, Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.nodevolumelimits import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    NodeVolumeLimits,
    is_schedulable_after_csi_node_updated,
    is_schedulable_after_pod_deleted,
    is_schedulable_after_pvc_added,
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

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
EXCEEDED = Status(Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)

PVS = [
    make_pv(f"csi-ebs.csi.aws.com-{i}", driver=EBS, handle=f"csi-ebs.csi.aws.com-{i}")
    for i in range(4)
] + [make_pv("csi-pd-0", driver=GCE, handle="pd-0"), make_pv("nfs-pv", source="nfs")]
PVCS = [
    *(make_pvc(f"csi-ebs.csi.aws.com-{i}", bound_pv=f"csi-ebs.csi.aws.com-{i}") for i in range(4)),
    make_pvc("csi-pd-0", bound_pv="csi-pd-0"),
    make_pvc("nfs", bound_pv="nfs-pv"),
    make_pvc("pending-0", "csi-sc"),
    make_pvc("pending-1", "csi-sc"),
    make_pvc("no-class", None),
    make_pvc("unknown-class", "missing-sc"),
    make_pvc("in-tree-class", "aws-sc"),
    make_pvc("abc-xyz", "csi-sc", owner_uid="uid-abc"),
    make_pvc("abc-other", "csi-sc", owner_uid="uid-someone-else"),
]
CLASSES = [
    make_sc("csi-sc", provisioner=EBS),
    make_sc("aws-sc", provisioner="kubernetes.io/aws-ebs"),
]


def _pod(name: str, *claims: str, node: str = "", uid: str = "") -> Pod:
    b = make_pod(name)
    if uid:
        b = b.uid(uid)
    for c in claims:
        b = b.pvc(c)
    if node:
        b = b.node(node)
    return b.obj()


ONE_VOL = _pod("one", "csi-ebs.csi.aws.com-0")
TWO_VOL = _pod("two", "csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2", node="node-1")
RUNNING = make_pod("running").node("node-1").obj()
SHARED = _pod("shared", "csi-ebs.csi.aws.com-1", node="node-1")
PENDING = _pod("pending", "pending-0")
TWO_PENDING = _pod("two-pending", "pending-0", "pending-1")
EPHEMERAL = make_pod("abc").uid("uid-abc").volume(ephemeral("xyz", "csi-sc")).obj()
INLINE_EBS = make_pod("inline").volume(PodVolume("v", "awsElasticBlockStore", disk="vol-1")).obj()


def _run(
    pod: Pod,
    existing: Sequence[Pod],
    csi_node: CSINode | None,
    allocatable: dict[str, int] | None = None,
) -> tuple[Status, Status | None]:
    node = make_node("node-1").capacity_map({"cpu": "4", **(allocatable or {})}).obj()
    table = build_table([node], existing)
    storage = FakeStorage(
        pvcs=PVCS, pvs=PVS, classes=CLASSES, csi_nodes=[csi_node] if csi_node else []
    )
    plugin = NodeVolumeLimits(None, VolumeHandle(table, storage))
    state = CycleState()
    _, pre = plugin.pre_filter(state, PodInfo(pod), table)
    if not pre.is_success():
        return pre, None
    info = table.infos[0]
    assert info is not None
    return pre, plugin.filter(state, PodInfo(pod), info)


def limit(count: int | None, driver: str = EBS, **ann: str) -> CSINode:
    annotations = {ANN_MIGRATED_PLUGINS: ann["migrated"]} if "migrated" in ann else {}
    return make_csi_node("node-1", {driver: count}, annotations)


@pytest.mark.parametrize(
    ("pod", "existing", "csi_node", "want"),
    [
        pytest.param(
            ONE_VOL,
            [RUNNING, TWO_VOL],
            limit(4),
            SUCCESS,
            id="TestCSILimits/fits when node volume limit >= new pods CSI volume",
        ),
        pytest.param(
            ONE_VOL,
            [RUNNING, TWO_VOL],
            limit(2),
            EXCEEDED,
            id="TestCSILimits/doesn't when node volume limit <= pods CSI volume",
        ),
        pytest.param(
            ONE_VOL,
            [RUNNING, TWO_VOL],
            limit(None),
            SUCCESS,
            id="TestCSILimits/should when driver does not support volume limits",
        ),
        pytest.param(
            ONE_VOL, [TWO_VOL], None, SUCCESS, id="TestCSILimits/fits when there is no CSINode"
        ),
        pytest.param(
            ONE_VOL,
            [TWO_VOL],
            limit(2, GCE),
            SUCCESS,
            id="TestCSILimits/should count in-tree volumes if migration is enabled",
        ),
        pytest.param(
            PENDING,
            [TWO_VOL],
            limit(2),
            EXCEEDED,
            id="TestCSILimits/count pending PVCs towards volume limit <= pods CSI volume",
        ),
        pytest.param(
            TWO_PENDING,
            [TWO_VOL],
            limit(4),
            SUCCESS,
            id="TestCSILimits/count multiple pending pvcs towards volume limit >= pods CSI volume",
        ),
        pytest.param(
            TWO_PENDING,
            [TWO_VOL],
            limit(3),
            EXCEEDED,
            id="TestCSILimits/count multiple pending pvcs towards volume limit <= pods CSI volume",
        ),
        pytest.param(
            _pod("p", "csi-ebs.csi.aws.com-1"),
            [TWO_VOL],
            limit(2),
            SUCCESS,
            id="TestCSILimits/a volume the node already has is not counted again",
        ),
        pytest.param(
            ONE_VOL,
            [SHARED, _pod("shared-2", "csi-ebs.csi.aws.com-1", node="node-1")],
            limit(2),
            SUCCESS,
            id="TestCSILimitsFilterWithSharedVolumes/shared volume counts once",
        ),
        pytest.param(
            _pod("p", "no-class"),
            [TWO_VOL],
            limit(2),
            SUCCESS,
            id="TestCSILimits/an unbound claim without class is not counted",
        ),
        pytest.param(
            _pod("p", "unknown-class"),
            [TWO_VOL],
            limit(2),
            SUCCESS,
            id="TestCSILimits/an unbound claim of a missing class is not counted",
        ),
        pytest.param(
            _pod("p", "nfs"), [TWO_VOL], limit(2), SUCCESS, id="TestCSILimits/non-CSI volume"
        ),
        pytest.param(
            _pod("p", "in-tree-class"),
            [TWO_VOL],
            limit(2),
            SUCCESS,
            id="TestCSILimits/in-tree provisioner without migration is not counted",
        ),
        pytest.param(
            _pod("p", "in-tree-class"),
            [TWO_VOL],
            limit(2, migrated="kubernetes.io/aws-ebs"),
            EXCEEDED,
            id="TestCSILimits/in-tree provisioner counts under its CSI driver when migrated",
        ),
        pytest.param(
            INLINE_EBS,
            [TWO_VOL],
            limit(2, migrated="kubernetes.io/aws-ebs,kubernetes.io/gce-pd"),
            EXCEEDED,
            id="TestCSILimits/inline in-tree volume counts when migrated",
        ),
        pytest.param(
            make_pod("missing").volume(ephemeral("xyz")).obj(),
            [],
            limit(4),
            Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                'looking up PVC default/missing-xyz: persistentvolumeclaim "missing-xyz" not found',
            ),
            id="TestCSILimits/ephemeral volume missing",
        ),
        pytest.param(
            make_pod("abc").uid("uid-other").volume(ephemeral("xyz")).obj(),
            [],
            limit(4),
            Status(
                Code.ERROR,
                "PVC default/abc-xyz was not created for pod default/abc (pod is not owner)",
            ),
            id="TestCSILimits/ephemeral volume not owned",
        ),
        pytest.param(EPHEMERAL, [], limit(4), SUCCESS, id="TestCSILimits/ephemeral volume unbound"),
        pytest.param(
            EPHEMERAL,
            [TWO_VOL],
            limit(2),
            EXCEEDED,
            id="TestCSILimits/ephemeral doesn't when node volume limit <= pods CSI volume",
        ),
        pytest.param(
            make_pod("p").volume(PodVolume("cfg", "configMap")).obj(),
            [],
            limit(0),
            SKIP,
            id="TestCSILimits/no countable volume skips",
        ),
    ],
)
def test_csi_limits(pod: Pod, existing: list[Pod], csi_node: CSINode | None, want: Status) -> None:
    pre, got = _run(pod, existing, csi_node)
    if want == SKIP:
        assert pre == SKIP
        return
    assert pre == SUCCESS
    assert got == want
    assert got is not None and got.code == want.code


def test_node_allocatable_limit_is_overridden_by_csinode() -> None:
    """getVolumeLimits: the node's attachable-volumes-csi-<driver> allocatable
    applies, and a CSINode count for the driver replaces it."""
    key = csi_attach_limit_key(EBS)
    _, got = _run(ONE_VOL, [TWO_VOL], None, {key: 2})
    assert got == EXCEEDED
    _, got = _run(ONE_VOL, [TWO_VOL], limit(3), {key: 2})
    assert got == SUCCESS


LONG_DRIVER = "a" * 40 + ".example.com"


@pytest.mark.parametrize(
    ("driver", "want"),
    [
        pytest.param("ebs.csi.aws.com", "attachable-volumes-csi-ebs.csi.aws.com", id="short"),
        pytest.param(
            LONG_DRIVER,
            # GetCSIAttachLimitKey: too long for a resource name, so 23 characters of
            # the driver name, then the first 16 hex digits of its SHA-1.
            "attachable-volumes-csi-"
            + LONG_DRIVER[:23]
            + hashlib.sha1(LONG_DRIVER.encode()).hexdigest()[:16],
            id="long names are hashed",
        ),
    ],
)
def test_attach_limit_key(driver: str, want: str) -> None:
    assert csi_attach_limit_key(driver) == want
    assert len(csi_attach_limit_key(driver)) <= 63


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(limit(1), limit(2), QueueingHint.QUEUE, id="count grew"),
        pytest.param(limit(2), limit(1), QueueingHint.SKIP, id="count shrank"),
        pytest.param(limit(None), limit(1), QueueingHint.QUEUE, id="a count appeared"),
        pytest.param(limit(1), limit(None), QueueingHint.SKIP, id="the count went away"),
        pytest.param(limit(1), limit(1, GCE), QueueingHint.QUEUE, id="a new driver"),
    ],
)
def test_csi_node_updated_hint(old: CSINode, new: CSINode, want: QueueingHint) -> None:
    assert is_schedulable_after_csi_node_updated(ONE_VOL, old, new) == want


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        pytest.param(TWO_VOL, QueueingHint.QUEUE, id="assigned pod with claims"),
        pytest.param(RUNNING, QueueingHint.SKIP, id="no volumes"),
        pytest.param(_pod("x", "csi-pd-0"), QueueingHint.SKIP, id="neither assigned nor nominated"),
        pytest.param(
            make_pod("n").pvc("csi-pd-0").nominated("node-1").obj(),
            QueueingHint.QUEUE,
            id="nominated pod with a claim",
        ),
        pytest.param(
            make_pod("c").volume(PodVolume("c", "configMap")).node("node-1").obj(),
            QueueingHint.SKIP,
            id="volumes that never count",
        ),
    ],
)
def test_pod_deleted_hint(deleted: Pod, want: QueueingHint) -> None:
    assert is_schedulable_after_pod_deleted(ONE_VOL, deleted, None) == want


@pytest.mark.parametrize(
    ("pod", "added", "want"),
    [
        pytest.param(ONE_VOL, PVCS[0], QueueingHint.QUEUE, id="the pod's claim"),
        pytest.param(ONE_VOL, PVCS[1], QueueingHint.SKIP, id="another claim"),
        pytest.param(EPHEMERAL, PVCS[-2], QueueingHint.QUEUE, id="the pod's ephemeral claim"),
        pytest.param(
            ONE_VOL,
            make_pvc("csi-ebs.csi.aws.com-0", namespace="other"),
            QueueingHint.SKIP,
            id="another namespace",
        ),
    ],
)
def test_pvc_added_hint(pod: Pod, added: object, want: QueueingHint) -> None:
    assert is_schedulable_after_pvc_added(pod, None, added) == want  # type: ignore[arg-type]

"""NodeVolumeLimits: CSI attach limits per node (upstream nodevolumelimits/csi.go,
plugin ``CSILimits``, v1.36).

- PreFilter: Skip unless the pod has a ``persistentVolumeClaim``, ``ephemeral`` or
  migratable in-tree volume.
- Filter: new volumes ``<driver>/<handle>`` (not already used on the node) count
  per ``attachable-volumes-csi-<driver>`` against the node's limits (CSINode
  ``allocatable.count``, over ``attachable-volumes-*`` allocatable); over one:
  Unschedulable ``node(s) exceed max volume count``.

Driver and handle: a bound claim's ``spec.csi``, or an in-tree volume translated
when CSINode lists it in ``storage.alpha.kubernetes.io/migrated-plugins``; an
unbound claim counts under its class's provisioner. A missing claim of a pod on
the node is not counted; the incoming pod's is UnschedulableAndUnresolvable.
"""

from __future__ import annotations

from collections import Counter
from typing import Final

from kubesched.api.storage import (
    ANN_MIGRATED_PLUGINS,
    AWS_EBS_SOURCE,
    CSI_SOURCE,
    EPHEMERAL_SOURCE,
    GCE_PD_SOURCE,
    INLINE_MIGRATABLE_SOURCES,
    PVC_SOURCE,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    PodVolume,
)
from kubesched.api.types import Pod
from kubesched.api.volume_helpers import (
    claim_class,
    csi_attach_limit_key,
    ephemeral_claim_name,
    pod_uses_claim,
    volume_is_for_pod,
)
from kubesched.framework.config import PluginArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventObject,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interfaces import Handle
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.ports import StorageLister
from kubesched.framework.results import PreFilterResult
from kubesched.framework.status import SKIP, SUCCESS, Status, error, unresolvable, unschedulable
from kubesched.framework.types import NodeInfo, PodInfo

NAME: Final = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED: Final = "node(s) exceed max volume count"
ATTACHABLE_VOLUMES_PREFIX: Final = "attachable-volumes-"
UNBOUND_HANDLE_PREFIX: Final = "kubesched-unbound"
"""Upstream prefixes an unbound claim's handle with 32 random characters, chosen
once per plugin; only its uniqueness matters."""

_EXCEEDED: Final = unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)

# In-tree plugin name -> CSI driver (csi-translation-lib), for the plugins whose
# migration v1.36 has on.
IN_TREE_DRIVERS: Final = {
    "kubernetes.io/aws-ebs": "ebs.csi.aws.com",
    "kubernetes.io/gce-pd": "pd.csi.storage.gke.io",
    "kubernetes.io/azure-disk": "disk.csi.azure.com",
    "kubernetes.io/cinder": "cinder.csi.openstack.org",
    "kubernetes.io/portworx-volume": "pxd.portworx.com",
}
# Volume source -> in-tree plugin name, for the sources kubesched reads a disk id of.
_SOURCE_PLUGINS: Final = {
    AWS_EBS_SOURCE: "kubernetes.io/aws-ebs",
    GCE_PD_SOURCE: "kubernetes.io/gce-pd",
}


def is_csi_migration_on(csi_node: CSINode | None, plugin: str) -> bool:
    """isCSIMigrationOn: a plugin v1.36 migrates, listed in the CSINode's
    ``storage.alpha.kubernetes.io/migrated-plugins`` annotation."""
    if csi_node is None or plugin not in IN_TREE_DRIVERS:
        return False
    listed = csi_node.annotations.get(ANN_MIGRATED_PLUGINS, "")
    return plugin in listed.split(",")


def _translated_handle(source: str, disk: str) -> str:
    """The CSI volume handle of an in-tree disk (EBS ``aws://zone/vol-x`` -> ``vol-x``)."""
    if source == AWS_EBS_SOURCE and disk.startswith("aws://"):
        return disk.rsplit("/", 1)[-1]
    return disk


def counts_toward_limits(volume: PodVolume) -> bool:
    """The volume may count against an attach limit (the PreFilter test)."""
    return volume.source in (PVC_SOURCE, EPHEMERAL_SOURCE) or (
        volume.source in INLINE_MIGRATABLE_SOURCES
    )


class NodeVolumeLimits:
    """PreFilter and Filter plugin (upstream CSILimits); takes no args."""

    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        del args
        self.handle = handle

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """CSINode Add (no hint), CSINode Update (a driver's count grew), AssignedPod
        Delete (the pod used countable volumes), PersistentVolumeClaim Add (ours)."""
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_NODE, ActionType.UPDATE),
                is_schedulable_after_csi_node_updated,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
                is_schedulable_after_pod_deleted,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                is_schedulable_after_pvc_added,
            ),
        ]

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        for v in pod.pod.spec.volumes:
            if counts_toward_limits(v):
                return None, SUCCESS
        return None, SKIP

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        p = pod.pod
        if not p.spec.volumes or node.node is None:
            return SUCCESS
        storage = self.handle.reader.storage()
        csi_node = storage.get_csi_node(node.node.name)
        new: dict[str, str] = {}
        s = _attachable_volumes(storage, p, csi_node, True, new)
        if s is not None:
            return s
        if not new:
            return SUCCESS
        limits = volume_limits(node, csi_node)
        if not limits:
            return SUCCESS
        attached: dict[str, str] = {}
        for existing in node.pods:
            s = _attachable_volumes(storage, existing.pod, csi_node, False, attached)
            if s is not None:
                return s
        attached_count: Counter[str] = Counter()
        for unique, key in attached.items():
            new.pop(unique, None)  # one volume used by several pods counts once
            attached_count[key] += 1
        for key, count in Counter(new.values()).items():
            limit = limits.get(key)
            if limit is not None and attached_count[key] + count > limit:
                return _EXCEEDED
        return SUCCESS


def volume_limits(node: NodeInfo, csi_node: CSINode | None) -> dict[str, int]:
    """getVolumeLimits: the node's ``attachable-volumes-*`` allocatable, overridden
    by its CSINode drivers' ``allocatable.count``."""
    limits: dict[str, int] = {}
    if node.node is not None:
        for k, v in node.node.allocatable.items():
            if k.startswith(ATTACHABLE_VOLUMES_PREFIX):
                limits[k] = v
    if csi_node is not None:
        for d in csi_node.drivers:
            if d.allocatable_count is not None:
                limits[csi_attach_limit_key(d.name)] = d.allocatable_count
    return limits


def _attachable_volumes(
    storage: StorageLister,
    pod: Pod,
    csi_node: CSINode | None,
    new_pod: bool,
    result: dict[str, str],
) -> Status | None:
    """filterAttachableVolumes: add ``<driver>/<handle> -> limit key`` for every
    volume of the pod that counts; a Status when the filter must fail."""
    for v in pod.spec.volumes:
        if v.source == PVC_SOURCE:
            claim_name, ephemeral = v.claim_name, False
        elif v.template is not None:
            claim_name, ephemeral = ephemeral_claim_name(pod, v), True
        else:
            _inline_volume(v, csi_node, result)
            continue
        pvc = storage.get_pvc(pod.namespace, claim_name)
        if pvc is None:
            if new_pod:
                return unresolvable(
                    f"looking up PVC {pod.namespace}/{claim_name}: "
                    f'persistentvolumeclaim "{claim_name}" not found'
                )
            continue
        if ephemeral:
            err = volume_is_for_pod(pod, pvc)
            if err is not None:
                return error(err)
        driver, handle = _csi_driver_info(storage, csi_node, pvc)
        if not driver or not handle:
            continue
        result[f"{driver}/{handle}"] = csi_attach_limit_key(driver)
    return None


def _inline_volume(v: PodVolume, csi_node: CSINode | None, result: dict[str, str]) -> None:
    """checkAttachableInlineVolume for the in-line sources kubesched can translate."""
    plugin = _SOURCE_PLUGINS.get(v.source)
    if plugin is None or not is_csi_migration_on(csi_node, plugin):
        return
    driver = IN_TREE_DRIVERS[plugin]
    result[f"{driver}/{_translated_handle(v.source, v.disk)}"] = csi_attach_limit_key(driver)


def _csi_driver_info(
    storage: StorageLister, csi_node: CSINode | None, pvc: PersistentVolumeClaim
) -> tuple[str, str]:
    """getCSIDriverInfo: (driver, handle) of a claim, "" when it does not count."""
    if not pvc.volume_name:
        return _driver_info_from_class(storage, csi_node, pvc)
    pv = storage.get_pv(pvc.volume_name)
    if pv is None:
        return _driver_info_from_class(storage, csi_node, pvc)
    return _pv_driver_info(pv, csi_node)


def _pv_driver_info(pv: PersistentVolume, csi_node: CSINode | None) -> tuple[str, str]:
    if pv.source == CSI_SOURCE:
        return pv.csi_driver, pv.volume_handle
    plugin = _SOURCE_PLUGINS.get(pv.source)
    if plugin is None or not is_csi_migration_on(csi_node, plugin):
        return "", ""
    return IN_TREE_DRIVERS[plugin], _translated_handle(pv.source, pv.disk)


def _driver_info_from_class(
    storage: StorageLister, csi_node: CSINode | None, pvc: PersistentVolumeClaim
) -> tuple[str, str]:
    """getCSIDriverInfoFromSC: the class's provisioner and a handle unique to the claim."""
    class_name = claim_class(pvc)
    if not class_name:
        return "", ""
    sc = storage.get_storage_class(class_name)
    if sc is None:
        return "", ""
    handle = f"{UNBOUND_HANDLE_PREFIX}-{pvc.namespace}/{pvc.name}"
    provisioner = sc.provisioner
    if provisioner in IN_TREE_DRIVERS:
        if not is_csi_migration_on(csi_node, provisioner):
            return "", ""
        return IN_TREE_DRIVERS[provisioner], handle
    return provisioner, handle


# --------------------------------------------------------------------------- hints


def is_schedulable_after_csi_node_updated(
    pod: Pod, old: EventObject, new: EventObject
) -> QueueingHint:
    """QUEUE when some driver's ``allocatable.count`` grew (a missing count counts as 0)."""
    if not isinstance(old, CSINode) or not isinstance(new, CSINode):
        return QueueingHint.QUEUE
    before = {d.name: d.allocatable_count or 0 for d in old.drivers}
    for d in new.drivers:
        if d.allocatable_count is not None and d.allocatable_count > before.get(d.name, 0):
            return QueueingHint.QUEUE
    return QueueingHint.SKIP


def is_schedulable_after_pod_deleted(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
    """QUEUE when the deleted pod was assigned (or nominated) and had a volume that
    counts toward attach limits."""
    if not isinstance(old, Pod):
        return QueueingHint.QUEUE
    if not old.spec.volumes or (not old.node_name and not old.nominated_node_name):
        return QueueingHint.SKIP
    if any(counts_toward_limits(v) for v in old.spec.volumes):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def is_schedulable_after_pvc_added(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
    """QUEUE when the new claim is one of the pod's (by name, ephemeral ones included)."""
    if not isinstance(new, PersistentVolumeClaim):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE if pod_uses_claim(pod, new) else QueueingHint.SKIP

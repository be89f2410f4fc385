"""VolumeRestrictions: in-line disk conflicts and ReadWriteOncePod claims
(upstream volumerestrictions/volume_restrictions.go, v1.36).

- PreFilter: a missing claim is UnschedulableAndUnresolvable
  ``persistentvolumeclaim "<name>" not found``; counts how many ReadWriteOncePod
  claims a scheduled pod already uses; Skip without in-line gcePersistentDisk /
  awsElasticBlockStore / rbd / iscsi volumes and such claims in use.
- Filter: Unschedulable ``node(s) had no available disk`` when an in-line disk
  conflicts with a pod's on the node (GCE PD / iSCSI unless both read-only, AWS
  EBS always, RBD on overlapping monitors, equal pool and image, unless both
  read-only); then Unschedulable ``node(s) unavailable due to
  PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by
  another pod`` while the count is positive.
- AddPod / RemovePod keep the count exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubesched.api.storage import (
    AWS_EBS_SOURCE,
    GCE_PD_SOURCE,
    ISCSI_SOURCE,
    PVC_SOURCE,
    RBD_SOURCE,
    READ_WRITE_ONCE_POD,
    PersistentVolumeClaim,
    PodVolume,
)
from kubesched.api.types import Pod
from kubesched.api.volume_helpers import pod_uses_claim
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
from kubesched.framework.results import PreFilterResult
from kubesched.framework.status import SKIP, SUCCESS, Status, error, unresolvable, unschedulable
from kubesched.framework.types import NodeInfo, PodInfo

NAME: Final = "VolumeRestrictions"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
ERR_REASON_DISK_CONFLICT: Final = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT: Final = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
    "already in-use by another pod"
)

_DISK_CONFLICT: Final = unschedulable(ERR_REASON_DISK_CONFLICT)
_RWOP_CONFLICT: Final = unschedulable(ERR_REASON_RWOP_CONFLICT)
_CHECKED_SOURCES: Final = frozenset({GCE_PD_SOURCE, AWS_EBS_SOURCE, RBD_SOURCE, ISCSI_SOURCE})


@dataclass(slots=True)
class PreFilterState:
    """The pod's ReadWriteOncePod claim names and how many uses of them scheduled
    pods hold; AddPod/RemovePod change the count, so it is cloned."""

    rwop_claims: frozenset[str]
    conflicting: int

    def clone(self) -> PreFilterState:
        return PreFilterState(self.rwop_claims, self.conflicting)

    def update_with_pod(self, pod: Pod, multiplier: int) -> None:
        """Upstream updateWithPod: claim names are compared without the namespace."""
        claims = self.rwop_claims
        n = sum(1 for v in pod.spec.volumes if v.source == PVC_SOURCE and v.claim_name in claims)
        self.conflicting += multiplier * n


def needs_restrictions_check(volume: PodVolume) -> bool:
    return volume.source in _CHECKED_SOURCES


def _have_overlap(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    return bool(set(a) & set(b))


def is_volume_conflict(volume: PodVolume, pod: Pod) -> bool:
    """The in-line ``volume`` conflicts with one of ``pod``'s volumes (isVolumeConflict)."""
    for ev in pod.spec.volumes:
        if volume.source != ev.source:
            continue
        both_ro = volume.read_only and ev.read_only
        if volume.source == AWS_EBS_SOURCE:
            if volume.disk == ev.disk:
                return True
        elif volume.source in (GCE_PD_SOURCE, ISCSI_SOURCE):
            if volume.disk == ev.disk and not both_ro:
                return True
        elif volume.source == RBD_SOURCE and volume.rbd is not None and ev.rbd is not None:
            a, b = volume.rbd, ev.rbd
            if (
                _have_overlap(a.monitors, b.monitors)
                and a.pool == b.pool
                and a.image == b.image
                and not both_ro
            ):
                return True
    return False


def satisfy_volume_conflicts(pod: Pod, pods_on_node: list[PodInfo]) -> bool:
    """No in-line disk of ``pod`` conflicts with a pod on the node (satisfyVolumeConflicts)."""
    for v in pod.spec.volumes:
        if not needs_restrictions_check(v):
            continue
        for ev in pods_on_node:
            if is_volume_conflict(v, ev.pod):
                return False
    return True


def claims_in_use(table: NodeTable, namespace: str, names: frozenset[str]) -> int:
    """How many of the claims ``namespace/<name>`` some pod of the snapshot uses
    (upstream StorageInfos().IsPVCUsedByPods, summed over the names)."""
    used: set[str] = set()
    for info in table.infos:
        if info is None:
            continue
        for pi in info.pods:
            p = pi.pod
            if p.namespace != namespace or not p.spec.volumes:
                continue
            for v in p.spec.volumes:
                if v.source == PVC_SOURCE and v.claim_name in names:
                    used.add(v.claim_name)
    return len(used)


class VolumeRestrictions:
    """PreFilter (with AddPod/RemovePod) and Filter plugin; takes no args."""

    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        del args
        self.handle = handle

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """AssignedPod Delete (hint: the pod held a conflicting disk or one of our
        claims), Node Add, PersistentVolumeClaim Add (hint: one of ours)."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
                is_schedulable_after_pod_deleted,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                is_schedulable_after_pvc_added,
            ),
        ]

    # ------------------------------------------------------------------ PreFilter
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        p = pod.pod
        volumes = p.spec.volumes
        if not volumes:
            return None, SKIP
        needs_check = any(needs_restrictions_check(v) for v in volumes)
        storage = self.handle.reader.storage()
        rwop: set[str] = set()
        for v in volumes:
            if v.source != PVC_SOURCE:
                continue
            pvc = storage.get_pvc(p.namespace, v.claim_name)
            if pvc is None:
                return None, unresolvable(f'persistentvolumeclaim "{v.claim_name}" not found')
            if READ_WRITE_ONCE_POD in pvc.access_modes:
                rwop.add(pvc.name)
        claims = frozenset(rwop)
        conflicting = claims_in_use(nodes, p.namespace, claims) if claims else 0
        if not needs_check and conflicting == 0:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(claims, conflicting))
        return None, SUCCESS

    def pre_filter_extensions(self) -> VolumeRestrictions:
        return self

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo) -> Status:
        s = _pre_filter_state(state)
        if isinstance(s, Status):
            return s
        s.update_with_pod(to_add.pod, 1)
        return SUCCESS

    def remove_pod(
        self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo
    ) -> Status:
        s = _pre_filter_state(state)
        if isinstance(s, Status):
            return s
        s.update_with_pod(to_remove.pod, -1)
        return SUCCESS

    # ------------------------------------------------------------------ Filter
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if not satisfy_volume_conflicts(pod.pod, node.pods):
            return _DISK_CONFLICT
        s = _pre_filter_state(state)
        if isinstance(s, Status):
            return s
        return _RWOP_CONFLICT if s.conflicting > 0 else SUCCESS


def _pre_filter_state(state: CycleState) -> PreFilterState | Status:
    value = state.get(PRE_FILTER_STATE_KEY)
    if isinstance(value, PreFilterState):
        return value
    return error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')


def is_schedulable_after_pvc_added(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
    """QUEUE when the new claim, in the pod's namespace, is one of its claims."""
    if not isinstance(new, PersistentVolumeClaim):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE if pod_uses_claim(pod, new, ephemeral=False) else QueueingHint.SKIP


def is_schedulable_after_pod_deleted(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
    """QUEUE when the deleted pod (same namespace) held a conflicting disk or used
    one of the pod's claims (not looked up, as upstream)."""
    if not isinstance(old, Pod):
        return QueueingHint.QUEUE
    if old.namespace != pod.namespace:
        return QueueingHint.SKIP
    if not old.node_name and not old.nominated_node_name:
        return QueueingHint.SKIP
    if not satisfy_volume_conflicts(pod, [PodInfo(old)]):
        return QueueingHint.QUEUE
    claims = {v.claim_name for v in pod.spec.volumes if v.source == PVC_SOURCE}
    for v in old.spec.volumes:
        if v.source == PVC_SOURCE and v.claim_name in claims:
            return QueueingHint.QUEUE
    return QueueingHint.SKIP

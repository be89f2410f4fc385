"""VolumeZone: bound volumes' zone and region labels must match the node's
(upstream volumezone/volume_zone.go, v1.36).

- PreFilter: each claim's bound volume's ``topology.kubernetes.io/zone|region``
  and ``failure-domain.beta.kubernetes.io/zone|region`` labels (values may list
  zones joined by ``__``); WaitForFirstConsumer unbound claims are skipped, other
  unbound or missing claims, classes or volumes are UnschedulableAndUnresolvable;
  Skip when no volume has such a label.
- Filter: a node without any of the four labels passes; else each volume label
  needs the node's (or its GA key's) value in the set, else
  UnschedulableAndUnresolvable ``node(s) had no available volume zone``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubesched.api.storage import (
    PVC_SOURCE,
    WAIT_FOR_FIRST_CONSUMER,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from kubesched.api.types import (
    LABEL_REGION,
    LABEL_REGION_BETA,
    LABEL_ZONE,
    LABEL_ZONE_BETA,
    Pod,
)
from kubesched.api.volume_helpers import claim_class, label_zones_to_set, pod_uses_claim
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
from kubesched.framework.status import SKIP, SUCCESS, Status, unresolvable
from kubesched.framework.types import NodeInfo, PodInfo

NAME: Final = "VolumeZone"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
ERR_REASON_CONFLICT: Final = "node(s) had no available volume zone"

TOPOLOGY_LABELS: Final = (LABEL_ZONE_BETA, LABEL_REGION_BETA, LABEL_ZONE, LABEL_REGION)
_GA_LABEL: Final = {LABEL_REGION_BETA: LABEL_REGION, LABEL_ZONE_BETA: LABEL_ZONE}

_CONFLICT: Final = unresolvable(ERR_REASON_CONFLICT)


@dataclass(frozen=True, slots=True)
class PVTopology:
    """One topology label of a bound volume: its key and allowed values."""

    pv_name: str
    key: str
    values: frozenset[str]


@dataclass(frozen=True, slots=True)
class PreFilterState:
    """The pod's volume topologies; not changed after PreFilter, so clone is itself."""

    topologies: tuple[PVTopology, ...]

    def clone(self) -> PreFilterState:
        return self


def pv_topologies(pv: PersistentVolume) -> list[PVTopology]:
    """The volume's topology labels, in ``TOPOLOGY_LABELS`` order (unparsable
    values are ignored, as upstream logs and skips them)."""
    out = []
    for key in TOPOLOGY_LABELS:
        value = pv.labels.get(key)
        if value is None:
            continue
        zones = label_zones_to_set(value)
        if zones is not None:
            out.append(PVTopology(pv.name, key, zones))
    return out


class VolumeZone:
    """PreFilter and Filter plugin; takes no args."""

    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        del args
        self.handle = handle

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD),
                is_schedulable_after_storage_class_added,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE
                ),
                is_schedulable_after_pvc_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE),
                is_schedulable_after_pv_change,
            ),
        ]

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        if not pod.pod.spec.volumes:
            return None, SKIP
        got = self._topologies(pod.pod)
        if isinstance(got, Status):
            return None, got
        if not got:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(tuple(got)))
        return None, SUCCESS

    def _topologies(self, pod: Pod) -> list[PVTopology] | Status:
        """getPVbyPod."""
        storage = self.handle.reader.storage()
        out: list[PVTopology] = []
        for v in pod.spec.volumes:
            if v.source != PVC_SOURCE:
                continue
            name = v.claim_name
            if not name:
                return unresolvable("PersistentVolumeClaim had no name")
            pvc = storage.get_pvc(pod.namespace, name)
            if pvc is None:
                return unresolvable(f'persistentvolumeclaim "{name}" not found')
            if not pvc.volume_name:
                class_name = claim_class(pvc)
                if not class_name:
                    return unresolvable(
                        "PersistentVolumeClaim had no pv name and storageClass name"
                    )
                sc = storage.get_storage_class(class_name)
                if sc is None:
                    return unresolvable(f'storageclass.storage.k8s.io "{class_name}" not found')
                if sc.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER:
                    continue
                return unresolvable("PersistentVolume had no name")
            pv = storage.get_pv(pvc.volume_name)
            if pv is None:
                return unresolvable(f'persistentvolume "{pvc.volume_name}" not found')
            out.extend(pv_topologies(pv))
        return out

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if not pod.pod.spec.volumes or node.node is None:
            return SUCCESS
        value = state.get(PRE_FILTER_STATE_KEY)
        if isinstance(value, PreFilterState):
            topologies: tuple[PVTopology, ...] | list[PVTopology] = value.topologies
        else:
            got = self._topologies(pod.pod)  # upstream's fallback without PreFilter state
            if isinstance(got, Status):
                return got
            topologies = got
        labels = node.node.labels
        if not any(k in labels for k in TOPOLOGY_LABELS):
            return SUCCESS
        for t in topologies:
            v = labels.get(t.key)
            if v is None:
                v = labels.get(_GA_LABEL.get(t.key, t.key))
            if v is None or v not in t.values:
                return _CONFLICT
        return SUCCESS


# --------------------------------------------------------------------------- hints


def is_schedulable_after_storage_class_added(
    pod: Pod, old: EventObject, new: EventObject
) -> QueueingHint:
    """QUEUE for a new WaitForFirstConsumer class (the pod's unbound claims may use it)."""
    if not isinstance(new, StorageClass):
        return QueueingHint.QUEUE
    if new.volume_binding_mode != WAIT_FOR_FIRST_CONSUMER:
        return QueueingHint.SKIP
    return QueueingHint.QUEUE


def is_schedulable_after_pvc_change(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
    """QUEUE when the claim is one of the pod's ``persistentVolumeClaim`` volumes."""
    if not isinstance(new, PersistentVolumeClaim):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE if pod_uses_claim(pod, new, ephemeral=False) else QueueingHint.SKIP


def is_schedulable_after_pv_change(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
    """QUEUE for a new volume, or one whose topology labels changed."""
    if not isinstance(new, PersistentVolume):
        return QueueingHint.QUEUE
    if not isinstance(old, PersistentVolume):
        return QueueingHint.QUEUE
    if pv_topologies(old) != pv_topologies(new):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP

"""Cluster events and queueing hints (upstream fwk.ClusterEvent / QueueingHint).

A plugin registers the events that may make a pod it rejected schedulable,
each with an optional hint function that looks at the concrete change and
answers QUEUE or SKIP. The scheduling queue uses them to move pods out of
the unschedulable pool.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum, IntFlag
from typing import Final

from kubesched.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
from kubesched.api.types import Node, Pod


class ActionType(IntFlag):
    ADD = 1 << 0
    DELETE = 1 << 1
    UPDATE_NODE_ALLOCATABLE = 1 << 2
    UPDATE_NODE_LABEL = 1 << 3
    UPDATE_NODE_TAINT = 1 << 4
    UPDATE_NODE_CONDITION = 1 << 5
    UPDATE_NODE_ANNOTATION = 1 << 6
    UPDATE_POD_LABEL = 1 << 7
    UPDATE_POD_SCALE_DOWN = 1 << 8
    UPDATE_POD_TOLERATION = 1 << 9
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 10
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 1 << 11
    UPDATE_POD_SCALE_UP = 1 << 12
    UPDATE_NODE_DECLARED_FEATURE = 1 << 13
    UPDATE_NODE_PREEMPTION_POLICY = 1 << 14
    UPDATE = (
        UPDATE_NODE_ALLOCATABLE
        | UPDATE_NODE_LABEL
        | UPDATE_NODE_TAINT
        | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION
        | UPDATE_POD_LABEL
        | UPDATE_POD_SCALE_DOWN
        | UPDATE_POD_TOLERATION
        | UPDATE_POD_SCHEDULING_GATES_ELIMINATED
        | UPDATE_POD_GENERATED_RESOURCE_CLAIM
        | UPDATE_POD_SCALE_UP
        | UPDATE_NODE_DECLARED_FEATURE
        | UPDATE_NODE_PREEMPTION_POLICY
    )
    ALL = ADD | DELETE | UPDATE


_ACTION_LABELS: Final = {
    ActionType.ADD: "Add",
    ActionType.DELETE: "Delete",
    ActionType.UPDATE_NODE_ALLOCATABLE: "UpdateNodeAllocatable",
    ActionType.UPDATE_NODE_LABEL: "UpdateNodeLabel",
    ActionType.UPDATE_NODE_TAINT: "UpdateNodeTaint",
    ActionType.UPDATE_NODE_CONDITION: "UpdateNodeCondition",
    ActionType.UPDATE_NODE_ANNOTATION: "UpdateNodeAnnotation",
    ActionType.UPDATE_POD_LABEL: "UpdatePodLabel",
    ActionType.UPDATE_POD_SCALE_DOWN: "UpdatePodScaleDown",
    ActionType.UPDATE_POD_TOLERATION: "UpdatePodToleration",
    ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED: "UpdatePodSchedulingGatesEliminated",
    ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM: "UpdatePodGeneratedResourceClaim",
    ActionType.UPDATE_POD_SCALE_UP: "UpdatePodScaleUp",
    ActionType.UPDATE_NODE_DECLARED_FEATURE: "UpdateNodeDeclaredFeature",
    ActionType.UPDATE_NODE_PREEMPTION_POLICY: "UpdateNodePreemptionPolicy",
    ActionType.UPDATE: "Update",
    ActionType.ALL: "All",
}


class EventResource:
    POD: Final = "Pod"
    ASSIGNED_POD: Final = "AssignedPod"
    UNSCHEDULED_POD: Final = "UnschedulablePod"
    TARGET_POD: Final = "TargetPod"
    NODE: Final = "Node"
    PERSISTENT_VOLUME: Final = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM: Final = "PersistentVolumeClaim"
    STORAGE_CLASS: Final = "storage.k8s.io/StorageClass"
    CSI_NODE: Final = "storage.k8s.io/CSINode"
    WILDCARD: Final = "*"


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    resource: str
    action_type: ActionType
    custom_label: str = ""

    def label(self) -> str:
        """Upstream's metric label, e.g. ``NodeAdd`` or ``AssignedPodDelete``."""
        if self.custom_label:
            return self.custom_label
        return self.resource + _ACTION_LABELS.get(self.action_type, str(int(self.action_type)))

    def is_wildcard(self) -> bool:
        return self.resource == EventResource.WILDCARD and self.action_type == ActionType.ALL


def match_cluster_events(registered: ClusterEvent, incoming: ClusterEvent) -> bool:
    """``incoming`` is the same as or more specific than ``registered``
    (upstream MatchClusterEvents)."""
    if registered.is_wildcard():
        return True
    return (
        _match_resource(registered.resource, incoming.resource)
        and bool(registered.action_type & incoming.action_type)
        and incoming.action_type <= registered.action_type
    )


def _match_resource(registered: str, incoming: str) -> bool:
    return registered in (EventResource.WILDCARD, incoming) or (
        registered == EventResource.POD
        and incoming
        in (EventResource.ASSIGNED_POD, EventResource.UNSCHEDULED_POD, EventResource.TARGET_POD)
    )


# Special events of the queue.
UNSCHEDULABLE_TIMEOUT: Final = ClusterEvent(
    EventResource.WILDCARD, ActionType.ALL, "UnschedulableTimeout"
)
FORCE_ACTIVATE: Final = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "ForceActivate")
NODE_ADD: Final = ClusterEvent(EventResource.NODE, ActionType.ADD)
NODE_DELETE: Final = ClusterEvent(EventResource.NODE, ActionType.DELETE)
ASSIGNED_POD_ADD: Final = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD)
ASSIGNED_POD_DELETE: Final = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)
UNSCHEDULED_POD_ADD: Final = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD)
UNSCHEDULED_POD_DELETE: Final = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.DELETE)


class QueueingHint(IntEnum):
    SKIP = 0
    QUEUE = 1


EventObject = Pod | Node | PersistentVolumeClaim | PersistentVolume | StorageClass | CSINode | None
QueueingHintFn = Callable[[Pod, EventObject, EventObject], QueueingHint]
"""hint(pod_rejected, old_object, new_object) -> QUEUE or SKIP. Raising counts as QUEUE."""


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    event: ClusterEvent
    hint: QueueingHintFn | None = None

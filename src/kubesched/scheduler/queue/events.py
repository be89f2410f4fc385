"""Classifying object updates into cluster events, and the queue's event labels.

``pod_update_events`` re-expresses upstream ``framework.PodSchedulingPropertiesChange``
and ``node_update_events`` re-expresses ``framework.NodeSchedulingPropertiesChange``
(pkg/scheduler/framework/events.go), pure functions whose events the scheduler's
handlers feed to the queue one at a time.
"""

from __future__ import annotations

from typing import Final

from kubesched.api.resources import pod_requests
from kubesched.api.types import Node, Pod
from kubesched.framework.events import ActionType, ClusterEvent, EventResource

# Labels the queue uses for moves that are not cluster events (metrics label
# ``event`` of ``scheduler_queue_incoming_pods_total``); upstream framework/events.go.
SCHEDULE_ATTEMPT_FAILURE: Final = "ScheduleAttemptFailure"
BACKOFF_COMPLETE: Final = "BackoffComplete"
POP_FROM_BACKOFF_Q: Final = "PopFromBackoffQ"
FORCE_ACTIVATE_LABEL: Final = "ForceActivate"

UNSCHEDULED_POD_UPDATE: Final = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE)
"""Upstream EventUnscheduledPodUpdate: the general update of an unscheduled pod."""
ASSIGNED_POD_UPDATE: Final = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE)


def pod_update_events(old: Pod, new: Pod) -> list[ClusterEvent]:
    """The UpdatePodXYZ events an update of ``old`` into ``new`` represents, on
    ``AssignedPod`` when ``new`` is bound, else ``UnscheduledPod``. Extractors run in
    upstream's order (labels, scale-down, gates eliminated, tolerations; not DRA's:
    no pod has claims); when none applies, the *general* ``Update`` action, which
    matches only ``Pod/Update`` (or wider) registrations.
    """
    if new.labels is old.labels and new.spec is old.spec:
        # A status-only update (the usual case): the general Update action.
        return [ASSIGNED_POD_UPDATE if new.node_name else UNSCHEDULED_POD_UPDATE]
    resource = EventResource.ASSIGNED_POD if new.node_name else EventResource.UNSCHEDULED_POD
    actions: list[ActionType] = []
    if dict(new.labels) != dict(old.labels):
        actions.append(ActionType.UPDATE_POD_LABEL)
    if new.spec is not old.spec:
        if _scaled_down(old, new):
            actions.append(ActionType.UPDATE_POD_SCALE_DOWN)
        if not new.spec.scheduling_gates and old.spec.scheduling_gates:
            actions.append(ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
        # API validation only allows adding tolerations, so a length change
        # is enough to notice any update.
        if len(new.spec.tolerations) != len(old.spec.tolerations):
            actions.append(ActionType.UPDATE_POD_TOLERATION)
    if not actions:
        return [ClusterEvent(resource, ActionType.UPDATE)]
    return [ClusterEvent(resource, a) for a in actions]


def _scaled_down(old: Pod, new: Pod) -> bool:
    """Some request of ``old`` was removed or reduced in ``new`` (extractPodScaleDown)."""
    new_req = pod_requests(new.spec)
    for name, old_amount in pod_requests(old.spec).items():
        new_amount = new_req.get(name)
        if new_amount is None or old_amount > new_amount:
            return True
    return False


def node_update_events(old: Node, new: Node) -> list[ClusterEvent]:
    """The UpdateNodeXYZ events an update of ``old`` into ``new`` represents, in
    upstream's order: spec.unschedulable (turning *false* is ``UpdateNodeTaint``,
    turning true nothing), allocatable, labels, taints, conditions (type -> status),
    annotations. No extractor applying means no event.
    """
    actions: list[ActionType] = []
    if new.unschedulable != old.unschedulable and not new.unschedulable:
        actions.append(ActionType.UPDATE_NODE_TAINT)
    if dict(new.allocatable) != dict(old.allocatable):
        actions.append(ActionType.UPDATE_NODE_ALLOCATABLE)
    if dict(new.labels) != dict(old.labels):
        actions.append(ActionType.UPDATE_NODE_LABEL)
    if tuple(new.taints) != tuple(old.taints):
        actions.append(ActionType.UPDATE_NODE_TAINT)
    if _condition_statuses(new) != _condition_statuses(old):
        actions.append(ActionType.UPDATE_NODE_CONDITION)
    if dict(new.annotations) != dict(old.annotations):
        actions.append(ActionType.UPDATE_NODE_ANNOTATION)
    return [ClusterEvent(EventResource.NODE, a) for a in actions]


def _condition_statuses(node: Node) -> dict[str, str]:
    return {c.type: c.status for c in node.conditions}

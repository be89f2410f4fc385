"""NodeResourcesFit's EventsToRegister and queueing hints (upstream fit.go, v1.36).

Registered events (QueueingHints on, InPlacePodVerticalScaling GA since v1.35):

- ``Pod`` ``Delete | UpdatePodScaleDown`` -> :func:`is_schedulable_after_pod_event`
- ``Node`` ``Add | UpdateNodeAllocatable`` -> :func:`is_schedulable_after_node_change`
"""

from __future__ import annotations

from kubesched.api.resources import is_scalar_resource_name, pod_requests
from kubesched.api.types import CPU, EPHEMERAL_STORAGE, MEMORY, Node, Pod
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventObject,
    EventResource,
    QueueingHint,
)
from kubesched.framework.resources import ResourceFit
from kubesched.framework.types import NodeInfo, Resource, spec_facts
from kubesched.plugins.noderesources.fit_plan import fit_plan, requests_nothing

POD_EVENT = ClusterEvent(EventResource.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN)
NODE_EVENT = ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE)


def events_to_register() -> list[ClusterEventWithHint]:
    return [
        ClusterEventWithHint(POD_EVENT, is_schedulable_after_pod_event),
        ClusterEventWithHint(NODE_EVENT, is_schedulable_after_node_change),
    ]


# --------------------------------------------------------------------------- pods


def is_schedulable_after_pod_event(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
    """Delete (``new is None``): QUEUE if the pod was bound or nominated.
    Scale-down: QUEUE for the rejected pod itself or a bound pod whose request
    dropped for a resource the rejected pod requests; else SKIP. Unexpected
    objects QUEUE."""
    if not isinstance(old, Pod):
        return QueueingHint.QUEUE
    if new is None:
        if old.node_name == "" and old.nominated_node_name == "":
            return QueueingHint.SKIP
        return QueueingHint.QUEUE
    if not isinstance(new, Pod):
        return QueueingHint.QUEUE
    if _scale_down_may_help(pod, old, new):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def _scale_down_may_help(target: Pod, original: Pod, modified: Pod) -> bool:
    if modified.uid == target.uid:
        return True
    if modified.node_name == "":
        return False
    # Upstream reads PodRequests with UseStatusResources (allocated resources of a
    # resize in progress); kubesched pods carry their spec requests only.
    before = spec_facts(original.spec).request
    after = spec_facts(modified.spec).request
    for name, amount in pod_requests(target.spec).items():
        if amount == 0:
            continue
        if name == CPU:
            if before.milli_cpu > after.milli_cpu:
                return True
        elif name == MEMORY:
            if before.memory > after.memory:
                return True
        elif name == EPHEMERAL_STORAGE:
            if before.ephemeral_storage > after.ephemeral_storage:
                return True
        elif is_scalar_resource_name(name) and before.scalar.get(name, 0) > after.scalar.get(
            name, 0
        ):
            return True
    return False


# --------------------------------------------------------------------------- nodes


def is_schedulable_after_node_change(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
    """SKIP when the pod would not fit the node even empty (isFit, no ignored
    resources); QUEUE an added node, or an update growing the pods capacity or an
    amount the pod requests."""
    if not isinstance(new, Node) or (old is not None and not isinstance(old, Node)):
        return QueueingHint.QUEUE
    request = spec_facts(pod.spec).request
    if not is_fit(request, new):
        return QueueingHint.SKIP
    if old is None:
        return QueueingHint.QUEUE
    if not have_any_requested_resources_increased(request, old, new):
        return QueueingHint.SKIP
    return QueueingHint.QUEUE


def is_fit(request: Resource, node: Node) -> bool:
    """Whether the request fits the node with no pods on it (upstream isFit)."""
    return ResourceFit.node(fit_plan(request), NodeInfo(node)).is_success()


def have_any_requested_resources_increased(request: Resource, old: Node, new: Node) -> bool:
    before = Resource.from_list(old.allocatable)
    after = Resource.from_list(new.allocatable)
    if after.allowed_pod_number > before.allowed_pod_number:
        return True
    if requests_nothing(request):
        return False
    if (
        (request.milli_cpu > 0 and after.milli_cpu > before.milli_cpu)
        or (request.memory > 0 and after.memory > before.memory)
        or (request.ephemeral_storage > 0 and after.ephemeral_storage > before.ephemeral_storage)
    ):
        return True
    return any(
        q != 0 and after.scalar.get(name, 0) > before.scalar.get(name, 0)
        for name, q in request.scalar.items()
    )

"""PodTopologySpread's cluster events and queueing hints (upstream plugin.go, v1.36,
with queueing hints on, the default).

Events: Pod Add | UpdatePodLabel | UpdatePodToleration | Delete, and Node Add |
Delete | UpdateNodeLabel | UpdateNodeTaint. The hints read the rejected pod's
DoNotSchedule constraints; QUEUE when they cannot be built.

Pod hint (``isSchedulableAfterPodChange``):
- SKIP when the added/updated/deleted pod is neither the rejected pod itself
  nor an assigned pod of its namespace (checked on both old and new);
- update: QUEUE when it is the rejected pod, its tolerations changed and some
  constraint has nodeTaintsPolicy Honor; SKIP when the labels are unchanged;
  QUEUE when some constraint's selector matches before but not after (or the
  reverse); otherwise SKIP;
- add / delete: QUEUE when some constraint's selector matches the pod.

Node hint (``isSchedulableAfterNodeChange``), "matching" meaning the node has
every topology key:
- update: QUEUE when matching changed, or when the new node matches and a
  topology key's value or the taints changed; otherwise SKIP;
- add: QUEUE when the new node matches; delete: QUEUE when the old one did.
"""

from __future__ import annotations

from collections.abc import Callable

from kubesched.api.types import Node, Pod
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    EventObject,
    EventResource,
    QueueingHint,
)
from kubesched.plugins.podtopologyspread.common import (
    Constraint,
    ConstraintError,
    labels_match_any,
    node_labels_match,
)

ConstraintsOf = Callable[[Pod], tuple[Constraint, ...]]

POD_EVENT = ClusterEvent(
    EventResource.POD,
    ActionType.ADD
    | ActionType.UPDATE_POD_LABEL
    | ActionType.UPDATE_POD_TOLERATION
    | ActionType.DELETE,
)
NODE_EVENT = ClusterEvent(
    EventResource.NODE,
    ActionType.ADD
    | ActionType.DELETE
    | ActionType.UPDATE_NODE_LABEL
    | ActionType.UPDATE_NODE_TAINT,
)


def _involved(incoming: Pod, pod: Pod) -> bool:
    """``involvedInTopologySpreading``: the pod itself, or an assigned pod of its namespace."""
    return incoming.uid == pod.uid or (
        incoming.node_name != "" and incoming.namespace == pod.namespace
    )


def pod_change_hint(
    pod: Pod, old: EventObject, new: EventObject, constraints_of: ConstraintsOf
) -> QueueingHint:
    original = old if isinstance(old, Pod) else None
    modified = new if isinstance(new, Pod) else None
    if (modified is not None and not _involved(modified, pod)) or (
        original is not None and not _involved(original, pod)
    ):
        return QueueingHint.SKIP
    try:
        constraints = constraints_of(pod)
    except ConstraintError:
        return QueueingHint.QUEUE
    if modified is not None and original is not None:
        if (
            pod.uid == modified.uid
            and modified.spec.tolerations != original.spec.tolerations
            and any(c.honors_taints for c in constraints)
        ):
            return QueueingHint.QUEUE
        if dict(modified.labels) == dict(original.labels):
            return QueueingHint.SKIP
        for c in constraints:
            if c.selector.matches(original.labels) != c.selector.matches(modified.labels):
                return QueueingHint.QUEUE
        return QueueingHint.SKIP
    if modified is not None:
        return (
            QueueingHint.QUEUE
            if labels_match_any(constraints, modified.labels)
            else QueueingHint.SKIP
        )
    if original is None:
        return QueueingHint.QUEUE
    return (
        QueueingHint.QUEUE if labels_match_any(constraints, original.labels) else QueueingHint.SKIP
    )


def node_change_hint(
    pod: Pod, old: EventObject, new: EventObject, constraints_of: ConstraintsOf
) -> QueueingHint:
    original = old if isinstance(old, Node) else None
    modified = new if isinstance(new, Node) else None
    try:
        constraints = constraints_of(pod)
    except ConstraintError:
        return QueueingHint.QUEUE
    original_matching = original is not None and node_labels_match(original.labels, constraints)
    modified_matching = modified is not None and node_labels_match(modified.labels, constraints)
    if original is not None and modified is not None:
        if original_matching != modified_matching:
            return QueueingHint.QUEUE
        if modified_matching and (
            any(
                original.labels.get(c.topology_key, "") != modified.labels.get(c.topology_key, "")
                for c in constraints
            )
            or original.taints != modified.taints
        ):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP
    if modified is not None:
        return QueueingHint.QUEUE if modified_matching else QueueingHint.SKIP
    if original is None:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE if original_matching else QueueingHint.SKIP

"""NodeUnschedulable: cordoned nodes reject pods that do not tolerate
``node.kubernetes.io/unschedulable:NoSchedule`` (upstream
nodeunschedulable/node_unschedulable.go, v1.36).

Filter only; the vectorised Filter is derived (reads ``unschedulable`` only).
"""

from __future__ import annotations

from typing import Final

from kubesched.api.taints import tolerates_unschedulable
from kubesched.api.types import Node, Pod
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
from kubesched.framework.reads import Reads
from kubesched.framework.status import SUCCESS, Status, unresolvable
from kubesched.framework.types import NodeInfo, PodInfo

NAME: Final = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE: Final = "node(s) were unschedulable"
"""Filter reason; code UnschedulableAndUnresolvable."""
ERR_REASON_UNKNOWN_CONDITION: Final = "node(s) had unknown conditions"
"""Filter reason when the NodeInfo has no node; code UnschedulableAndUnresolvable."""

_UNSCHEDULABLE: Final = unresolvable(ERR_REASON_UNSCHEDULABLE)
_UNKNOWN: Final = unresolvable(ERR_REASON_UNKNOWN_CONDITION)
_READS_TOLERATING: Final = Reads(unschedulable=True, fragment=True)
_READS_NOT_TOLERATING: Final = Reads(unschedulable=True, fragment=False)


class NodeUnschedulable:
    """Filter plugin; takes no args."""

    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        del args, handle

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Node Add|UpdateNodeTaint (cordon is reported as a taint change) and
        Pod UpdatePodToleration (queueing hints on)."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATION),
                is_schedulable_after_pod_toleration_change,
            ),
        ]

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Success, or UnschedulableAndUnresolvable (``ERR_REASON_UNSCHEDULABLE``, or
        ``ERR_REASON_UNKNOWN_CONDITION`` for a NodeInfo without a node)."""
        n = node.node
        if n is None:
            return _UNKNOWN
        if n.unschedulable and not tolerates_unschedulable(pod.pod.spec.tolerations):
            return _UNSCHEDULABLE
        return SUCCESS

    def filter_reads(self, state: CycleState, pod: PodInfo) -> Reads:
        """The node's ``unschedulable`` flag; whether the pod tolerates it."""
        if tolerates_unschedulable(pod.pod.spec.tolerations):
            return _READS_TOLERATING
        return _READS_NOT_TOLERATING


def is_schedulable_after_node_change(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
    """QUEUE when a node is added schedulable or goes from unschedulable to schedulable."""
    if not isinstance(new, Node):
        return QueueingHint.QUEUE
    was_schedulable = isinstance(old, Node) and not old.unschedulable
    if not was_schedulable and not new.unschedulable:
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def is_schedulable_after_pod_toleration_change(
    pod: Pod, old: EventObject, new: EventObject
) -> QueueingHint:
    """QUEUE when the rejected pod itself now tolerates the unschedulable taint
    (tolerations can only be added, so the old pod did not)."""
    if not isinstance(new, Pod):
        return QueueingHint.QUEUE
    if new.uid == pod.uid and tolerates_unschedulable(new.spec.tolerations):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP

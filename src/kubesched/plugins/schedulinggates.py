"""SchedulingGates: a pod with ``spec.schedulingGates`` waits outside activeQ
(upstream schedulinggates/scheduling_gates.go).

PreEnqueue returns UnschedulableAndUnresolvable
``"waiting for scheduling gates: [a b]"`` (Go's ``%v`` of the gate names)
while any gate is left; the pod is requeued when its last gate is removed.
"""

from __future__ import annotations

from typing import Final

from kubesched.api.types import Pod
from kubesched.framework.config import PluginArgs
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventObject,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interfaces import Handle
from kubesched.framework.status import SUCCESS, Status, unresolvable

NAME: Final = "SchedulingGates"
REASON_FORMAT: Final = "waiting for scheduling gates: [{}]"


class SchedulingGates:
    """PreEnqueue plugin; takes no args."""

    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        del args, handle

    def pre_enqueue(self, pod: Pod) -> Status:
        """Success without gates, else UnschedulableAndUnresolvable naming them in order."""
        gates = pod.spec.scheduling_gates
        if not gates:
            return SUCCESS
        return unresolvable(REASON_FORMAT.format(" ".join(gates)))

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Pod UpdatePodSchedulingGatesEliminated, hint: the gated pod itself."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                is_schedulable_after_gates_eliminated,
            )
        ]


def is_schedulable_after_gates_eliminated(
    pod: Pod, old: EventObject, new: EventObject
) -> QueueingHint:
    """QUEUE when the update (which removed the last gate) is of the gated pod itself."""
    if not isinstance(new, Pod):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE if new.uid == pod.uid else QueueingHint.SKIP

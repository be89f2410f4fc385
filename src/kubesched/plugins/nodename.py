"""NodeName: a pod that names a node fits only that node (upstream nodename/node_name.go).

Filter only (v1.36); ``Pod.node_name`` is ``spec.nodeName``. The vectorised
Filter is derived (reads the node's name).
"""

from __future__ import annotations

from typing import Final

from kubesched.framework.config import PluginArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import NODE_ADD, ClusterEventWithHint
from kubesched.framework.interfaces import Handle
from kubesched.framework.reads import NO_READS, Reads
from kubesched.framework.status import SUCCESS, Status, unresolvable
from kubesched.framework.types import NodeInfo, PodInfo

NAME: Final = "NodeName"
ERR_REASON: Final = "node(s) didn't match the requested node name"
"""Filter reason (upstream ErrReason); code UnschedulableAndUnresolvable."""

_STATUS: Final = unresolvable(ERR_REASON)


class NodeName:
    """Filter plugin; takes no args."""

    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        del args, handle

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Node Add, no hint (queueing hints on: preCheck gone, Add alone suffices)."""
        return [ClusterEventWithHint(NODE_ADD)]

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Success or UnschedulableAndUnresolvable ``ERR_REASON``."""
        want = pod.pod.node_name
        if not want or want == node.name:
            return SUCCESS
        return _STATUS

    def filter_reads(self, state: CycleState, pod: PodInfo) -> Reads:
        """The node's name compared with the wanted one (nothing without one)."""
        want = pod.pod.node_name
        return Reads(names=frozenset((want,)), fragment=want) if want else NO_READS

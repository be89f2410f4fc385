"""NodePorts: a node must have the pod's host ports free (upstream nodeports/node_ports.go).

- PreFilter: Skip when the pod wants no host port; otherwise stores the wanted
  ``(hostIP, protocol, hostPort)`` list under ``"PreFilterNodePorts"``.
- Filter: Unschedulable ``"node(s) didn't have free ports for the requested pod
  ports"`` when a wanted port conflicts with the node's used ports (``0.0.0.0``
  conflicts with every IP).

The vectorised Filter is derived from the node's used host ports, afresh per call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubesched.api.types import Pod
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
from kubesched.framework.reads import Reads
from kubesched.framework.results import PreFilterResult
from kubesched.framework.status import SKIP, SUCCESS, Status, error, unschedulable
from kubesched.framework.types import HostPortInfo, NodeInfo, PodInfo, host_ports

NAME: Final = "NodePorts"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
ERR_REASON: Final = "node(s) didn't have free ports for the requested pod ports"
"""Filter reason; code Unschedulable."""

_CONFLICT: Final = unschedulable(ERR_REASON)

HostPort = tuple[str, str, int]
"""(hostIP, protocol, hostPort)."""


@dataclass(frozen=True, slots=True)
class PreFilterState:
    """The pod's wanted host ports; not changed by AddPod/RemovePod, so clone is itself."""

    ports: tuple[HostPort, ...]

    def clone(self) -> PreFilterState:
        return self


def fits_ports(want: tuple[HostPort, ...], in_use: HostPortInfo) -> bool:
    """True if no wanted port conflicts with ``in_use`` (upstream fitsPorts)."""
    return not any(in_use.check_conflict(ip, proto, port) for ip, proto, port in want)


class NodePorts:
    """PreFilter and Filter plugin; takes no args."""

    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        del args, handle

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Pod Delete (hint: the deleted pod held a port we want) and Node Add (no hint)."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE), is_schedulable_after_pod_deleted
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
        ]

    # ------------------------------------------------------------------ PreFilter
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        """Skip without host ports; else Success with the state written."""
        ports = pod.facts.host_ports
        if not ports:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(ports))
        return None, SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    # ------------------------------------------------------------------ Filter
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Success, Unschedulable ``ERR_REASON``, or Error without PreFilter state."""
        s = _pre_filter_state(state)
        if isinstance(s, Status):
            return s
        return SUCCESS if fits_ports(s.ports, node.used_ports) else _CONFLICT

    def filter_reads(self, state: CycleState, pod: PodInfo) -> Reads | None:
        """The host ports the node's pods use; the wanted ports (None without
        PreFilter state: the per-node path reports the error)."""
        s = _pre_filter_state(state)
        return None if isinstance(s, Status) else Reads(host_ports=True, fragment=s.ports)


def _pre_filter_state(state: CycleState) -> PreFilterState | Status:
    value = state.get(PRE_FILTER_STATE_KEY)
    if isinstance(value, PreFilterState):
        return value
    if value is None:
        return error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
    return error(f"{value!r}  convert to nodeports.preFilterState error")


def is_schedulable_after_pod_deleted(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
    """QUEUE when the deleted pod was assigned (or nominated) and held a host port that
    conflicts with one the rejected pod wants."""
    if not isinstance(old, Pod):
        return QueueingHint.QUEUE
    if not old.node_name and not old.nominated_node_name:
        return QueueingHint.SKIP
    freed = host_ports(old.spec)
    if not freed:
        return QueueingHint.SKIP
    in_use = HostPortInfo()
    for ip, proto, port in freed:
        in_use.add(ip, proto, port)
    if fits_ports(host_ports(pod.spec), in_use):
        return QueueingHint.SKIP
    return QueueingHint.QUEUE

"""Results passed between extension points: NodeToStatus, Diagnosis, FitError,
PreFilterResult, PostFilterResult / NominatingInfo, NodeScore."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Final

from kubesched.api.types import Pod
from kubesched.framework.status import Code, Status

NO_NODE_AVAILABLE_MSG: Final = "0/{} nodes are available"


class NodeToStatus:
    """Filter statuses of the nodes that were evaluated, plus one status for every
    node that was not (``absent``; UnschedulableAndUnresolvable by default)."""

    __slots__ = ("absent", "explicit")

    def __init__(
        self, explicit: dict[str, Status] | None = None, absent: Status | None = None
    ) -> None:
        self.explicit: dict[str, Status] = explicit if explicit is not None else {}
        self.absent: Status = (
            absent if absent is not None else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
        )

    def get(self, node_name: str) -> Status:
        return self.explicit.get(node_name, self.absent)

    def set(self, node_name: str, status: Status) -> None:
        self.explicit[node_name] = status

    def __len__(self) -> int:
        return len(self.explicit)

    def __iter__(self) -> Iterator[tuple[str, Status]]:
        return iter(self.explicit.items())

    def nodes_for_status_code(self, snapshot_names: Sequence[str], code: Code) -> list[str]:
        """Names of nodes whose status has this code (upstream NodesForStatusCode).

        When the absent status has the code, every snapshot node qualifies unless
        an explicit status says otherwise (snapshot order). Otherwise only explicit
        entries qualify; upstream iterates a Go map (random order), kubesched uses
        snapshot order so that runs are reproducible.
        """
        if self.absent.code == code:
            if not self.explicit:
                return list(snapshot_names)
            return [n for n in snapshot_names if self.get(n).code == code]
        return [
            n for n in snapshot_names if (s := self.explicit.get(n)) is not None and s.code == code
        ]


@dataclass(slots=True)
class Diagnosis:
    node_to_status: NodeToStatus = field(default_factory=NodeToStatus)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""

    def add_plugin_status(self, status: Status) -> None:
        if not status.plugin:
            return
        if status.is_rejected():
            self.unschedulable_plugins.add(status.plugin)
        if status.code == Code.PENDING:
            self.pending_plugins.add(status.plugin)


class FitError(Exception):
    """The pod fits no node. ``str()`` is upstream's FitError message:
    ``0/N nodes are available: <histogram>.`` then `` <PostFilterMsg>``."""

    def __init__(self, pod: Pod, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def __str__(self) -> str:
        d = self.diagnosis
        msg = NO_NODE_AVAILABLE_MSG.format(self.num_all_nodes) + ":"
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            hist = reason_histogram(d.node_to_status, self.num_all_nodes)
            if hist:
                msg += " " + ", ".join(hist) + "."
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}"
        return msg


def reason_histogram(statuses: NodeToStatus, num_all_nodes: int) -> list[str]:
    """``"<count> <reason>"`` entries sorted as strings (so "10 x" < "2 y")."""
    counts: dict[str, int] = {}
    for _, status in statuses:
        for r in status.reasons:
            counts[r] = counts.get(r, 0) + 1
    absent = num_all_nodes - len(statuses)
    if absent > 0:
        for r in statuses.absent.reasons:
            counts[r] = counts.get(r, 0) + absent
    return sorted(f"{v} {k}" for k, v in counts.items())


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """``node_names=None`` means all nodes are eligible."""

    node_names: frozenset[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.all_nodes():
            return self
        if self.all_nodes():
            return other
        assert self.node_names is not None and other.node_names is not None
        return PreFilterResult(self.node_names & other.node_names)


class NominatingMode(Enum):
    NOOP = 0
    """Keep whatever nomination the pod has."""
    OVERRIDE = 1
    """Set the nomination to ``node_name`` ("" clears it)."""


@dataclass(frozen=True, slots=True)
class NominatingInfo:
    node_name: str = ""
    mode: NominatingMode = NominatingMode.NOOP


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    nominating_info: NominatingInfo | None = None

    @staticmethod
    def nominated(node_name: str) -> PostFilterResult:
        return PostFilterResult(NominatingInfo(node_name, NominatingMode.OVERRIDE))


@dataclass(slots=True)
class NodeScore:
    name: str
    score: int


MAX_NODE_SCORE: Final = 100
MIN_NODE_SCORE: Final = 0
MAX_TOTAL_SCORE: Final = (1 << 63) - 1

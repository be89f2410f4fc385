"""Results passed between extension points: NodeToStatus, Diagnosis, FitError,
PreFilterResult, PostFilterResult / NominatingInfo, NodeScore."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Final

import numpy as np
import numpy.typing as npt

from kubesched.api.types import Pod
from kubesched.framework.nodetable import IntArray, NodeTable
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
        """Upstream NodesForStatusCode in snapshot order (upstream: a Go map's):
        nodes without an explicit status count when the absent status has the code."""
        if self.absent.code == code:
            if not self.explicit:
                return list(snapshot_names)
            return [n for n in snapshot_names if self.get(n).code == code]
        return [
            n for n in snapshot_names if (s := self.explicit.get(n)) is not None and s.code == code
        ]

    def rows_for_status_code(self, table: NodeTable, code: Code) -> IntArray:
        """``nodes_for_status_code(table.ordered_names, code)`` as table rows."""
        row_of = table.row_of
        names = self.nodes_for_status_code(table.ordered_names, code)
        return np.array([row_of[n] for n in names], dtype=np.int64)

    def status_counts(self) -> list[tuple[Status, int]]:
        """Each distinct explicit Status object with how many nodes carry it."""
        return _count_by_identity((s, 1) for s in self.explicit.values())


def _count_by_identity(pairs: Iterable[tuple[Status, int]]) -> list[tuple[Status, int]]:
    """(status, count) pairs summed per Status object, in first-seen order."""
    counts: dict[int, tuple[Status, int]] = {}
    for s, c in pairs:
        got = counts.get(id(s))
        counts[id(s)] = (s, c if got is None else got[1] + c)
    return list(counts.values())


_EXPLICIT = NodeToStatus.__dict__["explicit"]
"""The ``explicit`` slot of NodeToStatus (a member descriptor)."""


class LazyNodeToStatus(NodeToStatus):
    """A NodeToStatus keeping vector scans' entries as (row, status index) arrays
    until something reads ``explicit`` entry by entry; reads equal eager writes
    in the same order (``set`` writes pending ones first)."""

    __slots__ = ("_pending", "_pending_len")

    def __init__(
        self, explicit: dict[str, Status] | None = None, absent: Status | None = None
    ) -> None:
        self._pending: list[tuple[tuple[str, ...], IntArray, IntArray, list[Status]]] = []
        self._pending_len = 0
        super().__init__(explicit, absent)

    @property
    def explicit(self) -> dict[str, Status]:
        if self._pending:
            self._materialize()
        out: dict[str, Status] = _EXPLICIT.__get__(self)
        return out

    @explicit.setter
    def explicit(self, value: dict[str, Status]) -> None:
        if self._pending:
            self._pending.clear()
            self._pending_len = 0
        _EXPLICIT.__set__(self, value)

    def defer(
        self,
        names: tuple[str, ...],
        rows: Sequence[int] | IntArray,
        index: Sequence[int] | npt.NDArray[np.integer],
        statuses: list[Status],
    ) -> None:
        """Record ``names[rows[i]] -> statuses[index[i]]`` for later, in order. The
        deferred entries must name distinct nodes (one scan visits a node once)."""
        r = np.asarray(rows, dtype=np.int64)
        if len(r) == 0:
            return
        self._pending.append((names, r, np.asarray(index, dtype=np.int64), statuses))
        self._pending_len += len(r)

    def _materialize(self) -> None:
        out: dict[str, Status] = _EXPLICIT.__get__(self)
        for names, rows, index, statuses in self._pending:
            for r, i in zip(rows.tolist(), index.tolist(), strict=True):
                out[names[r]] = statuses[i]
        self._pending.clear()
        self._pending_len = 0

    def __len__(self) -> int:
        n = len(_EXPLICIT.__get__(self))
        if n and self._pending:
            # Pending entries could repeat a node already written: count exactly.
            return len(self.explicit)
        return n + self._pending_len

    def status_counts(self) -> list[tuple[Status, int]]:
        if not self._pending or _EXPLICIT.__get__(self):
            return super().status_counts()
        return _count_by_identity(
            (s, c)
            for _, _, index, statuses in self._pending
            for s, c in zip(
                statuses, np.bincount(index, minlength=len(statuses)).tolist(), strict=True
            )
            if c
        )

    def rows_for_status_code(self, table: NodeTable, code: Code) -> IntArray:
        """As ``NodeToStatus.rows_for_status_code``; the array may be the table's
        own ``order`` (never write into it)."""
        snapshot = table.names_snapshot()
        if not self._pending or any(p[0] is not snapshot for p in self._pending):
            return super().rows_for_status_code(table, code)
        explicit: dict[str, Status] = _EXPLICIT.__get__(self)
        if (
            not explicit
            and len(self._pending) == 1
            and self._pending_len == len(table)
            and all(s.code == code for s in self._pending[0][3])
        ):
            # One scan gave every node a status (it visits a node once), all
            # with the code: every node, in order (the table's own array).
            return table.order
        match = np.full(table.capacity, self.absent.code == code, dtype=np.bool_)
        if explicit:
            row_of = table.row_of
            for name, s in explicit.items():
                row = row_of.get(name)
                if row is not None:
                    match[row] = s.code == code
        for _, rows, index, statuses in self._pending:
            hit = np.array([s.code == code for s in statuses], dtype=np.bool_)
            match[rows] = hit[index]
        order = table.order
        out: IntArray = order[match[order]]
        return out


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
    for status, n in statuses.status_counts():
        for r in status.reasons:
            counts[r] = counts.get(r, 0) + n
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
    explanation: object | None = field(default=None, compare=False)
    """How the plugin decided, for explanations (kubesched; DefaultPreemption's is a
    ``PreemptionOutcome``); never compared."""

    @staticmethod
    def nominated(node_name: str, explanation: object | None = None) -> PostFilterResult:
        return PostFilterResult(NominatingInfo(node_name, NominatingMode.OVERRIDE), explanation)


@dataclass(slots=True)
class NodeScore:
    name: str
    score: int


MAX_NODE_SCORE: Final = 100
MIN_NODE_SCORE: Final = 0
MAX_TOTAL_SCORE: Final = (1 << 63) - 1

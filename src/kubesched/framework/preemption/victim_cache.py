"""Step 1 of the batched dry run, kept per table row (``dry_run.py``).

A node's potential victims — the pods the ``VictimOrder`` allows, sorted most
important first and split by PDB exactly as the per-node SelectVictimsOnNode
does — with each victim's request vector and what is left of the node's
requests without them (``node_victims``). ``VictimCache`` keeps them per row in
arrays when they cannot depend on anything else: default eligibility and
ordering, no PDB, every potential victim with a start time (``cacheable``).
An entry stays valid until the table logs a change of its row (every NodeInfo
change is mirrored there) or the preemptor's priority differs; a batch gathers
its rows with fancy indexing and only rows whose node changed run this Python.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from kubesched.api.types import PodDisruptionBudget
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.preemption.answers import AnswerCache
from kubesched.framework.preemption.policy import VictimOrder
from kubesched.framework.resources import ResourceFilterPlugin
from kubesched.framework.row_answers import RowAnswers, RowEntry
from kubesched.framework.types import NodeInfo, PodInfo


class NodeVictims:
    """A node's ordered potential victims, their requests and what is left without them."""

    __slots__ = ("base", "n_violating", "ordered", "requests")

    def __init__(
        self, ordered: list[PodInfo], n_violating: int, requests: IntArray, base: IntArray
    ) -> None:
        self.ordered = ordered
        self.n_violating = n_violating
        self.requests = requests
        """(victims, width): each victim's request vector (pods column = 1)."""
        self.base = base
        """The node's requests without any potential victim (no nominated pods)."""


class VictimCache(RowEntry):
    """Step 1 per row, as arrays, for one Evaluator (see the module docstring).

    Row ``r`` is valid for a preemptor of priority ``p`` when ``valid[r]`` (no
    change of the row logged by the table since it was stored: the table mirrors
    every NodeInfo change, its vector paths rely on that too) and
    ``priority[r] == p``; ``count[r]``
    victims (0: none), ``ordered[r]`` the PodInfos, ``base[r]`` the requests
    left without them, ``requests[r, j]`` the j-th victim's request vector,
    ``victim_priority[r, j]`` and ``victim_start[r, j]`` its priority and start
    time (cached victims all have one)."""

    __slots__ = (
        "_rows",
        "answers",
        "base",
        "count",
        "layout",
        "ordered",
        "priority",
        "requests",
        "resource_filters",
        "valid",
        "victim_priority",
        "victim_start",
    )

    def __init__(self) -> None:
        self._rows: RowAnswers[VictimCache] = RowAnswers("victims", 1)
        """Follows the table's change log for the arrays below (the only entry)."""
        self.resource_filters: dict[frozenset[str], ResourceFilterPlugin | None] = {}
        """Skipped filters -> ``VictimBatcher._find_resource_filter()`` (the profile's
        filters are fixed; a profile sees a handful of skip sets)."""
        self._allocate(0, 0, -1)

    def sync(self, table: NodeTable) -> None:
        """Mark the rows the table changed stale; start over when the table or its
        array layout (capacity, columns) changed."""
        kept, changed = self._rows.lookup(None, table)
        if kept is None:
            self._allocate(table.capacity, len(table.resources), table.layout_generation)
            self._rows.put(None, table, self)
        elif changed:
            self.valid[changed] = False

    def _allocate(self, cap: int, width: int, layout: int) -> None:
        self.layout = layout
        self.valid = np.zeros(cap, dtype=np.bool_)
        self.priority = np.zeros(cap, dtype=np.int64)
        self.count = np.zeros(cap, dtype=np.int64)
        self.base = np.zeros((cap, width), dtype=np.int64)
        self.requests = np.zeros((cap, 4, width), dtype=np.int64)
        self.victim_priority = np.zeros((cap, 4), dtype=np.int64)
        self.victim_start = np.zeros((cap, 4), dtype=np.int64)
        self.ordered: npt.NDArray[np.object_] = np.empty(cap, dtype=object)
        """Row -> its ordered potential victims (a list; replaced, never mutated)."""
        self.answers = AnswerCache(cap, width, 4)
        """Each row's whole answer on top of its entry (``answers.py``)."""

    def store(self, row: int, priority: int, entry: NodeVictims | None) -> None:
        if entry is None:
            self.count[row] = 0
            self.ordered[row] = None
        else:
            n = len(entry.ordered)
            if n > self.requests.shape[1]:
                cap, slots, width = self.requests.shape
                more = max(n, 2 * slots)
                grown = np.zeros((cap, more, width), dtype=np.int64)
                grown[:, :slots] = self.requests
                self.requests = grown
                self.victim_priority = _grow_slots(self.victim_priority, more)
                self.victim_start = _grow_slots(self.victim_start, more)
            r = entry.requests
            mine = self.requests[row]
            if r.shape[1] == mine.shape[1]:
                mine[:n] = r
                mine[n:] = 0  # slots past n: the reprieve reads them as "nothing"
            else:
                mine[:] = 0
                mine[:n, : r.shape[1]] = r
            self.victim_priority[row, :n] = [q.pod.priority for q in entry.ordered]
            self.victim_start[row, :n] = [q.pod.start_time or 0 for q in entry.ordered]
            b = entry.base
            if b.shape[0] == self.base.shape[1]:
                self.base[row] = b
            else:
                self.base[row] = 0
                self.base[row, : b.shape[0]] = b
            self.count[row] = n
            self.ordered[row] = entry.ordered
        self.valid[row] = True
        self.priority[row] = priority
        self.answers.invalidate(row)


def _grow_slots(a: IntArray, slots: int) -> IntArray:
    out = np.zeros((a.shape[0], slots), dtype=a.dtype)
    out[:, : a.shape[1]] = a
    return out


def node_victims(
    order: VictimOrder,
    table: NodeTable,
    node: NodeInfo,
    pod: PodInfo,
    pdbs: Sequence[PodDisruptionBudget],
    key: Callable[[PodInfo], Any],
    defaults: bool,
) -> NodeVictims | None:
    """Step 1 on one node: its potential victims (``order``; ``defaults``: its
    default policy, every pod of lower priority) sorted by ``key``, split by PDB,
    with their request vectors and what is left of the node's requests without
    them (None: no potential victim)."""
    prio = pod.pod.priority
    if defaults:
        potential = [q for q in node.pods if q.pod.priority < prio]
    else:
        potential = [q for q in node.pods if order.allows(node, q, pod)]
    if not potential:
        return None
    potential.sort(key=key)
    if pdbs:
        violating, non_violating = order.pdb_split(potential, pdbs)
    else:
        violating, non_violating = [], potential
    ordered = violating + non_violating
    vectors = [table.request_vector(q) for q in ordered]
    width = len(table.resources)  # after request_vector may have grown the axis
    if all(len(v) == width for v in vectors):
        requests = np.array(vectors, dtype=np.int64)
    else:
        requests = np.zeros((len(ordered), width), dtype=np.int64)
        for j, v in enumerate(vectors):
            requests[j, : len(v)] = v
    if len(potential) == len(node.pods):
        base = np.zeros(width, dtype=np.int64)  # every pod goes: nothing of them is left
    else:
        base = table.requested[table.row_of[node.name]].copy()
        base[: requests.shape[1]] -= requests.sum(axis=0)
    return NodeVictims(ordered, len(violating), requests, base)


def cacheable(entry: NodeVictims) -> bool:
    """The order of these victims does not depend on the clock."""
    return all(q.pod.start_time is not None for q in entry.ordered)

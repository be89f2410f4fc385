"""The batched dry run's per-row store (``dry_run.py``): step 1 and whole answers.

Step 1 on a node (``node_victims``): the potential victims the ``VictimOrder``
allows, sorted and split by PDB as the per-node SelectVictimsOnNode does, their
request vectors and the node's requests without them. ``VictimCache`` keeps a
row's step 1 (``valid``) when it depends on the row and the preemptor's priority
alone (default policy, no PDB, every victim with a start time) until the table
logs a change of the row.

With spec-determined what-if answers (``Framework.what_if_spec_determined``) the
row's whole SelectVictimsOnNode answer is kept too (``answered``): it depends only
on the row's pods (``store`` drops it), the key of all answers (preemptor spec,
priority, framework, skipped filters, ``NodeTable.node_generation``; ``use``) and
the row's counting nominated load (compared, ``stale``). A burst of identical
preemptors thus recomputes only the rows that changed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from kubesched.api.types import PodDisruptionBudget
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.preemption.batch import VictimBatch
from kubesched.framework.preemption.policy import VictimOrder
from kubesched.framework.preemption.victims import StatColumns
from kubesched.framework.resources import ResourceFilterPlugin
from kubesched.framework.row_answers import PodSignature, RowAnswers, RowEntry
from kubesched.framework.status import Status, StatusList
from kubesched.framework.types import NodeInfo, PodInfo

AnswerKey = tuple[PodSignature, int, int]
"""The preemptor's signature, the table's node and layout generations."""

_STAT_DTYPES = (np.int64, np.int64, np.int64, np.int64, np.int64, np.bool_, np.bool_)
_SLOTTED = ("requests", "victim_priority", "victim_start", "victim_known", "slots")
"""The arrays with a victim-slot axis (axis 1): grown together."""


class NodeVictims(NamedTuple):
    """A node's ordered potential victims (the first ``n_violating`` violate a
    PDB), their request vectors ``(victims, width)`` (pods column = 1) and the
    node's requests without any of them (no nominated pods)."""

    ordered: list[PodInfo]
    n_violating: int
    requests: IntArray
    base: IntArray


class VictimCache(RowEntry):
    """Every row's step 1 and kept answer, as arrays, for one Evaluator. Step 1 of
    row ``r``: ``count[r]`` victims ``ordered[r]`` (first ``n_violating[r]`` violate
    a PDB), ``base[r]``, ``requests[r, j]`` (zero past the count) and the victims'
    priority / start columns; reusable for priority ``p`` when ``valid[r]`` and
    ``priority[r] == p``. Kept answer (for ``key``): ``answered[r]`` at load
    ``nominated[r]``; ``candidate[r]`` with victim ``slots[r]`` and ``stats``, else
    ``statuses[status[r]]``."""

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
        self.n_violating = np.zeros(cap, dtype=np.int64)
        self.base = np.zeros((cap, width), dtype=np.int64)
        self.requests = np.zeros((cap, 4, width), dtype=np.int64)
        self.victim_priority = np.zeros((cap, 4), dtype=np.int64)
        self.victim_start = np.zeros((cap, 4), dtype=np.int64)
        self.victim_known = np.zeros((cap, 4), dtype=np.bool_)
        self.ordered: npt.NDArray[np.object_] = np.empty(cap, dtype=object)
        """Row -> its ordered potential victims (a list; replaced, never mutated)."""
        self.key: AnswerKey | None = None
        self.answered = np.zeros(cap, dtype=np.bool_)
        self.nominated = np.zeros((cap, width), dtype=np.int64)
        self.candidate = np.zeros(cap, dtype=np.bool_)
        self.status = np.zeros(cap, dtype=np.int64)
        self.slots = np.zeros((cap, 4), dtype=np.bool_)
        self.stats: tuple[npt.NDArray[Any], ...] = tuple(
            np.zeros(cap, dtype=d) for d in _STAT_DTYPES
        )
        self._known = StatusList()

    def store(self, row: int, priority: int, entry: NodeVictims | None, keep: bool) -> None:
        """Step 1 of ``row`` (``keep``: it may be reused, see the class docstring);
        drops the row's answer. The entry is on the cache's layout."""
        n = 0 if entry is None else len(entry.ordered)
        if entry is not None:
            if n > self.requests.shape[1]:
                more = max(n, 2 * self.requests.shape[1])
                for name in _SLOTTED:
                    setattr(self, name, _grow(getattr(self, name), more))
            mine = self.requests[row]
            mine[:n] = entry.requests
            mine[n:] = 0  # slots past n: the reprieve reads them as "nothing"
            self.victim_priority[row, :n] = [q.pod.priority for q in entry.ordered]
            self.victim_start[row, :n] = [q.pod.start_time or 0 for q in entry.ordered]
            # A kept entry's victims all have a start time (``cacheable``).
            self.victim_known[row, :n] = keep or [
                q.pod.start_time is not None for q in entry.ordered
            ]
            self.base[row] = entry.base
            self.n_violating[row] = entry.n_violating
        self.count[row] = n
        self.ordered[row] = None if entry is None else entry.ordered
        self.valid[row] = keep
        self.priority[row] = priority
        self.answered[row] = False

    # ------------------------------------------------------------------ answers
    @property
    def statuses(self) -> list[Status]:
        """Every status ``status[row]`` may index (append-only)."""
        return self._known.items

    def use(self, key: AnswerKey) -> None:
        """Answer for ``key`` from now on; forgets every answer if it changed."""
        if self.key != key:
            self.key = key
            self.answered[:] = False
            # A new list: batches and statuses handed out keep the old one.
            self._known = StatusList()

    def stale(self, rows: IntArray, nominated: IntArray | None) -> IntArray:
        """Positions of ``rows`` whose answer is not kept for this nominated load
        (``nominated``: the load over table slots, None: no pod counts)."""
        ok = self.answered.take(rows)
        kept = self.nominated.take(rows, axis=0)
        if nominated is None:
            if kept.any():
                ok &= ~kept.any(axis=1)
        else:
            now = nominated.take(rows, axis=0)
            # Usually no load in the window changed: one comparison of the bytes
            # (both are fresh C-ordered int64 gathers of the same shape).
            if kept.tobytes() != now.tobytes():
                ok &= (kept == now).all(axis=1)
        out: IntArray = (~ok).nonzero()[0]
        return out

    def keep(
        self,
        rows: IntArray,
        statuses: list[Status],
        status_of: list[int],
        fit: list[tuple[int, list[bool]]],
        stats: StatColumns | None,
        nominated: IntArray | None,
    ) -> None:
        """Keep the answers of ``rows`` for this nominated load: row ``rows[i]``
        failed with ``statuses[status_of[i]]``, or is a candidate (``status_of[i]``
        < 0) whose entry in ``fit`` is ``(i, victim flag per potential victim)``;
        ``stats``: the candidates' ``victim_stats`` columns, in ``fit``'s order."""
        ids = self._known.positions(statuses)
        row_list = rows.tolist()
        cand, status, slots = self.candidate, self.status, self.slots
        for i, r in enumerate(row_list):
            cand[r] = status_of[i] < 0
            status[r] = 0 if status_of[i] < 0 else ids[status_of[i]]
        if fit:
            assert stats is not None
            fit_rows = [row_list[i] for i, _ in fit]
            for r, (_, flags) in zip(fit_rows, fit, strict=True):
                slots[r] = False
                slots[r, : len(flags)] = flags
            for mine, got in zip(self.stats, stats, strict=True):
                mine[fit_rows] = got
        self._kept(rows, nominated)

    def _kept(self, rows: IntArray, nominated: IntArray | None) -> None:
        """The answers of ``rows`` were just written, for this nominated load."""
        self.nominated[rows] = 0 if nominated is None else nominated.take(rows, axis=0)
        self.answered[rows] = True

    def batch(self, rows: IntArray, key: Callable[[PodInfo], Any]) -> VictimBatch:
        """The kept answers of ``rows`` as a batch (``key``: the victims' sort key)."""
        cand = self.candidate.take(rows)
        fit = cand.nonzero()[0]
        pos = np.full(len(rows), -1, dtype=np.int64)
        pos[fit] = np.arange(len(fit))
        fit_rows = rows.take(fit)
        slots = np.ascontiguousarray(self.slots.take(fit_rows, axis=0).T)
        nv, high, total, count, earliest, has, unset = (col.take(fit_rows) for col in self.stats)
        return VictimBatch(
            cand,
            np.zeros(len(rows), dtype=np.bool_),
            self.status.take(rows),
            self.statuses,  # append-only (a new key starts a new list)
            pos,
            slots,
            self.ordered[fit_rows],
            np.zeros(len(fit), dtype=np.int64),
            key,
            (nv, high, total, count, earliest, has, unset),
        )


def _grow(a: npt.NDArray[Any], slots: int) -> npt.NDArray[Any]:
    """``a`` with its axis 1 grown to ``slots`` (zeros)."""
    out = np.zeros((a.shape[0], slots, *a.shape[2:]), dtype=a.dtype)
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
    """Step 1 on one node (None: no potential victim; ``defaults``: the default
    policy). The caller checks the table's layout did not change meanwhile."""
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

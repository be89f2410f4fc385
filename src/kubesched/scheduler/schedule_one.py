"""The scheduling algorithm of one cycle: find feasible nodes, score them, pick one.

Upstream: schedule_one.go ``schedulePod``, ``findNodesThatFitPod``,
``findNodesThatPassFilters``, ``numFeasibleNodesToFind``, ``prioritizeNodes`` and
``selectHost``, with parallelism 1: nodes are checked sequentially from the
rotating start index (kubesched is deterministic).

Two paths decide the same: the per-node path (``_scan_per_node``, forced by
``Framework.per_node``) runs every filter node by node; the vectorised path
(``_scan_vectorised``, when every active filter plugin vectorises) filters the
rotated order chunk by chunk (``Framework.filter_rows``) until enough nodes pass,
re-evaluating nodes with nominated pods of equal or higher priority as the
per-node path's two passes do. Rejected nodes' statuses are built lazily
(``LazyNodeToStatus``), never when the pod is scheduled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

from kubesched.api.goformat import go_list
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NodeSet, Verdicts
from kubesched.framework.nodetable import IntArray
from kubesched.framework.results import Diagnosis, FitError, LazyNodeToStatus
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo, SpecFacts
from kubesched.runtime.framework import Framework
from kubesched.runtime.scoring import ScorePart
from kubesched.scheduler.overrides import NO_OVERRIDES, OverrideRows, Overrides

__all__ = [
    "LazyNodeToStatus",
    "NoNodesAvailable",
    "ScheduleOne",
    "ScheduleResult",
    "SchedulingError",
    "num_feasible_nodes_to_find",
    "select_host",
]

MIN_FEASIBLE_NODES_TO_FIND: Final = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: Final = 5

ERR_NO_NODES_AVAILABLE: Final = "no nodes available to schedule pods"


class NoNodesAvailable(Exception):
    def __str__(self) -> str:
        return ERR_NO_NODES_AVAILABLE


class SchedulingError(Exception):
    """A plugin returned Error: the cycle aborts (reason SchedulerError)."""


@dataclass(slots=True)
class ScheduleResult:
    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int
    scores: dict[str, int] = field(default_factory=dict)
    """Per-plugin weighted scores of the chosen node (empty when not scored)."""
    tied_rows: IntArray | None = None
    """Table rows of every node with the chosen node's total score, when there
    was a tie (the pick among them is random, as upstream's selectHost)."""
    names: list[str] | None = None
    """The table's row names when ``tied_rows`` is set (read ``ties`` within the
    cycle: rows are reused once nodes change)."""

    @property
    def ties(self) -> tuple[str, ...]:
        """The tied nodes' names (computed on demand: thousands of identical
        nodes tie in a large cluster, and only shadow mode asks)."""
        if self.tied_rows is None or self.names is None:
            return ()
        names = self.names
        return tuple(names[r] for r in self.tied_rows.tolist())


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """How many feasible nodes to find before scoring (upstream numFeasibleNodesToFind)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = 50 - num_all_nodes // 125
        percentage = max(percentage, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    num = num_all_nodes * percentage // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


class ScheduleOne:
    """Holds the rotating start index across cycles; one per scheduler."""

    def __init__(self, percentage_of_nodes_to_score: int = 0) -> None:
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.next_start_node_index = 0
        self._override_rows = OverrideRows()
        """Per-row answers of ``_nominated_overrides`` in spec-determined cycles."""

    # ------------------------------------------------------------------ entry
    def schedule_pod(self, fwk: Framework, state: CycleState, pod: PodInfo) -> ScheduleResult:
        """Pick a node; raises FitError, NoNodesAvailable or SchedulingError."""
        table = fwk.table
        if len(table) == 0:
            raise NoNodesAvailable()
        feasible, diagnosis = self.find_nodes_that_fit_pod(fwk, state, pod)
        if len(feasible) == 0:
            raise FitError(pod.pod, len(table), diagnosis)
        if len(feasible) == 1:
            return ScheduleResult(
                table.names[int(feasible[0])], 1 + len(diagnosis.node_to_status), 1
            )
        nodes = NodeSet(table, feasible)
        if not fwk.score_plugins:
            totals = np.ones(len(nodes), dtype=np.int64)
            parts: list[ScorePart] = []
        else:
            fwk.run_pre_score_plugins(state, pod, nodes)
            totals, parts = fwk.score_parts(state, pod, nodes)
        idx, tied = select_host(totals, fwk)
        row = int(feasible[idx])
        return ScheduleResult(
            table.names[row],
            len(feasible) + len(diagnosis.node_to_status),
            len(feasible),
            {name: int(s[row if by_slot else idx]) * w for name, w, s, by_slot in parts},
            feasible.take(tied) if len(tied) > 1 else None,
            table.names if len(tied) > 1 else None,
        )

    # ------------------------------------------------------------------ filtering
    def find_nodes_that_fit_pod(
        self, fwk: Framework, state: CycleState, pod: PodInfo
    ) -> tuple[IntArray, Diagnosis]:
        table = fwk.table
        diagnosis = Diagnosis(LazyNodeToStatus())
        pre_res, s, narrowing = fwk.run_pre_filter_plugins(state, pod)
        # Upstream: Diagnosis.UnschedulablePlugins = the plugins whose PreFilterResult
        # narrowed the nodes (so the queue requeues the pod on their events only).
        diagnosis.unschedulable_plugins.update(narrowing)
        if not s.is_success():
            if not s.is_rejected():
                raise SchedulingError(s.message())
            diagnosis.node_to_status.absent = s
            diagnosis.pre_filter_msg = s.message()
            diagnosis.add_plugin_status(s)
            return np.empty(0, dtype=np.int64), diagnosis

        nnn = pod.pod.nominated_node_name
        if nnn and nnn in table.row_of:
            feasible = self._find_nodes_that_pass_filters(
                fwk, state, pod, diagnosis, np.array([table.row_of[nnn]], dtype=np.int64), 0
            )
            if len(feasible):
                return feasible, diagnosis
            # The full scan below visits the nominated node again: write its status
            # now so that the deferred entries of the scan never repeat a node.
            _ = diagnosis.node_to_status.explicit

        order = table.order
        if pre_res is not None and pre_res.node_names is not None:
            wanted = pre_res.node_names
            names = table.ordered_names
            order = order[
                np.fromiter((n in wanted for n in names), dtype=np.bool_, count=len(names))
            ]
            diagnosis.node_to_status.absent = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f"node(s) didn't satisfy plugin(s) {go_list(sorted(narrowing))}",
            )
        start = self.next_start_node_index
        try:
            feasible = self._find_nodes_that_pass_filters(fwk, state, pod, diagnosis, order, start)
        finally:
            processed = len(diagnosis.node_to_status)
            self.next_start_node_index = (start + processed + self._last_feasible) % len(table)
        return feasible, diagnosis

    _last_feasible = 0
    _fitted_none: SpecFacts | None = None
    """The spec facts of the last pod a full scan found no node for."""

    def _find_nodes_that_pass_filters(
        self,
        fwk: Framework,
        state: CycleState,
        pod: PodInfo,
        diagnosis: Diagnosis,
        rows: IntArray,
        start: int,
    ) -> IntArray:
        self._last_feasible = 0
        n = len(rows)
        if n == 0:
            return rows
        num_to_find = num_feasible_nodes_to_find(self._percentage(fwk), n)
        if not fwk.score_plugins:
            num_to_find = 1
        shift = start % n
        if not fwk.filter_plugins:
            feasible = _rotated(rows, shift, 0, num_to_find)
            self._last_feasible = len(feasible)
            return feasible
        # The scan goes through the rotated rows in chunks: usually the first one
        # holds enough feasible nodes and the rest of the table is never filtered.
        if n == 1:
            # One node (the nominated node's own check): the per-node path answers
            # the same for far fewer calls than the vectorised machinery.
            feasible = self._scan_per_node(fwk, state, pod, diagnosis, rows, num_to_find)
            self._last_feasible = len(feasible)
            return feasible
        memo: dict[str, Verdicts] = {}
        # A pod whose spec fitted no node last time (a burst of preemptors) most
        # likely fits none now: filter the whole table in one chunk (chunking
        # never changes the answer, only how much is filtered past the stop).
        first = n if pod.facts is self._fitted_none else _first_chunk(num_to_find, n)
        chunk = _rotated(rows, shift, 0, first)
        vec = fwk.filter_rows(state, pod, chunk, memo)
        if vec is None:
            scan = _rotated(rows, shift, 0, n)
            feasible = self._scan_per_node(fwk, state, pod, diagnosis, scan, num_to_find)
        else:
            feasible = self._scan_vectorised(
                fwk, state, pod, diagnosis, rows, shift, num_to_find, memo, chunk, vec
            )
        if n > _SHORT_SCAN:
            self._fitted_none = pod.facts if len(feasible) == 0 else None
        self._last_feasible = len(feasible)
        return feasible

    def _percentage(self, fwk: Framework) -> int:
        p = fwk.profile.percentage_of_nodes_to_score
        return self.percentage_of_nodes_to_score if p is None else p

    def _scan_per_node(
        self,
        fwk: Framework,
        state: CycleState,
        pod: PodInfo,
        diagnosis: Diagnosis,
        scan: IntArray,
        num_to_find: int,
    ) -> IntArray:
        infos = fwk.table.infos
        feasible: list[int] = []
        for row in scan.tolist():
            info = infos[row]
            assert info is not None
            s = fwk.run_filter_plugins_with_nominated_pods(state, pod, info)
            if s.code == Code.ERROR:
                raise SchedulingError(s.message())
            if s.is_success():
                if len(feasible) >= num_to_find:
                    # Upstream cancels on the first feasible node beyond the number
                    # it needs (and drops it); failures before it are recorded.
                    break
                feasible.append(row)
            else:
                diagnosis.node_to_status.set(info.name, s)
                diagnosis.add_plugin_status(s)
        return np.array(feasible, dtype=np.int64)

    def _scan_vectorised(
        self,
        fwk: Framework,
        state: CycleState,
        pod: PodInfo,
        diagnosis: Diagnosis,
        rows: IntArray,
        shift: int,
        num_to_find: int,
        memo: dict[str, Verdicts],
        chunk: IntArray,
        vec: tuple[npt.NDArray[np.int32], list[Status]],
    ) -> IntArray:
        """Scan the rotated ``rows`` chunk by chunk (``chunk``/``vec``: the first one,
        already filtered) until ``num_to_find`` nodes pass; failing nodes before the
        last feasible one get their statuses, in scan order."""
        n = len(rows)
        overrides = self._nominated_overrides(fwk, state, pod, rows)
        need = num_to_find
        parts: list[IntArray] = []
        pos = 0
        while True:
            index, statuses = vec
            size = len(chunk)
            if not statuses and not overrides:
                # Every row passes: take what is needed, stop at the next row.
                k = min(max(need, 0), size)
                if need > 0:
                    parts.append(chunk[:k].copy())
                    need -= k
                stop = need == 0 and size > k
            else:
                stop, k = self._scan_chunk(
                    fwk, diagnosis, chunk, index, statuses, overrides, need, parts
                )
                need -= k
            if stop:
                break
            pos += size
            if pos >= n:
                break
            found = num_to_find - need
            # Size the next chunk from the pass rate so far (at least double the last).
            est = max(need, 1) * pos // found if found else n
            chunk = _rotated(rows, shift, pos, pos + max(est + est // 8 + 32, 2 * size))
            got = fwk.filter_rows(state, pod, chunk, memo)
            if got is None:
                # A plugin stopped vectorising mid-scan: finish on the per-node path.
                rest = _rotated(rows, shift, pos, n)
                parts.append(self._scan_per_node(fwk, state, pod, diagnosis, rest, need))
                break
            vec = got
        if len(parts) == 1:
            return parts[0]
        return np.concatenate(parts)

    def _scan_chunk(
        self,
        fwk: Framework,
        diagnosis: Diagnosis,
        chunk: IntArray,
        index: npt.NDArray[np.int32],
        statuses: list[Status],
        overrides: Overrides,
        need: int,
        parts: list[IntArray],
    ) -> tuple[bool, int]:
        """One filtered chunk where some row may fail: append up to ``need`` passing
        rows to ``parts`` and record the failures before where the scan stops.
        Returns (stop, rows taken)."""
        size = len(chunk)
        hits = ov_index = None
        passing = index < 0
        if overrides:
            hits, ov_index = overrides.lookup(chunk)
            passing[hits] = ov_index < 0
        ok = passing.nonzero()[0]
        taken = 0
        if need > 0:
            take = ok[:need]
            parts.append(chunk[take])
            taken = len(take)
            beyond = ok[taken:] if taken == need else ok[:0]
        else:
            beyond = ok
        # Upstream (parallelism 1) stops at the first feasible node beyond the
        # number it needs, dropping it; failures up to there are recorded.
        stop = len(beyond) > 0
        cut = int(beyond[0]) if stop else size
        if size and not len(ok) and (hits is not None or not overrides):
            # Nothing in the chunk passes (a burst of pods that fit nowhere):
            # every row fails, and the overrides were looked up above.
            self._add_failures(
                fwk, diagnosis, chunk, index.astype(np.int64), statuses, overrides, hits, ov_index
            )
        elif cut and not passing[:cut].all():
            failing = (~passing[:cut]).nonzero()[0]
            fail_index = index[failing].astype(np.int64)
            self._add_failures(
                fwk, diagnosis, chunk[failing], fail_index, statuses, overrides, None, None
            )
        return stop, taken

    @staticmethod
    def _add_failures(
        fwk: Framework,
        diagnosis: Diagnosis,
        fail_rows: IntArray,
        fail_index: IntArray,
        statuses: list[Status],
        overrides: Overrides,
        hits: IntArray | None,
        ov_index: IntArray | None,
    ) -> None:
        """Statuses of the failing rows into the diagnosis, in scan order: the
        failing rows, their indexes into ``statuses`` (an int64 array this may
        write) and the overridden ones among them (``hits`` positions,
        ``ov_index`` into ``overrides.statuses``; None: looked up here)."""
        if hits is None and overrides:
            hits, ov_index = overrides.lookup(fail_rows)
        every = statuses
        if hits is not None and ov_index is not None and len(hits):
            # A failing overridden row takes its per-node status, numbered after the
            # statuses of the chunk.
            fail_index[hits] = len(statuses) + ov_index
            every = statuses + overrides.statuses
        # The diagnosis only keeps which plugins rejected: once per status suffices,
        # and once in all when every status would record the same.
        first = every[0]
        if len(every) == 1 or all(s.plugin == first.plugin and s.code == first.code for s in every):
            diagnosis.add_plugin_status(first)
        else:
            seen = np.zeros(len(every), dtype=np.bool_)
            seen[fail_index] = True
            for i in seen.nonzero()[0].tolist():
                diagnosis.add_plugin_status(every[i])
        nts = diagnosis.node_to_status
        if isinstance(nts, LazyNodeToStatus):
            nts.defer(fwk.table.names_snapshot(), fail_rows, fail_index, every)
            return
        explicit = nts.explicit
        names = fwk.table.names
        for row, i in zip(fail_rows.tolist(), fail_index.tolist(), strict=True):
            explicit[names[row]] = every[i]

    def _nominated_overrides(
        self, fwk: Framework, state: CycleState, pod: PodInfo, scan: IntArray
    ) -> Overrides:
        """The per-node path's two-pass statuses of the nodes holding nominated
        pods that count (among the rows of the ``scan``; others may be left out).

        When every active filter is static or answers what-ifs on summed requests
        (so it only gets stricter as pods are added), the first pass decides and
        one what-if call answers for all these nodes at once."""
        table = fwk.table
        if fwk.what_if_supported(state, pod):
            index = fwk.nominator.load_index()
            short = len(scan) <= _SHORT_SCAN
            if not short and fwk.what_if_spec_determined(state, pod):
                # Every nominated pod counts for the pod (the common case: a burst
                # of preemptors of one priority): the load as a matrix over slots.
                load = index.dense(pod, table)
                if load is None:
                    if index.empty():  # ``dense`` just brought the index up to date
                        return NO_OVERRIDES
                else:
                    counts = index.dense_counts()
                    dense = self._override_rows.answer_dense(fwk, state, pod, index, load, counts)
                    if dense is not None:
                        return dense
            if short:
                # The nominated node's own check: ask about its rows only (a set
                # beats np.unique's sort machinery on a handful of rows).
                load_rows, load = index.query_rows(pod, table, set(scan.tolist()))
            else:
                load_rows, load = index.query(pod, table)
                if len(scan) < len(load_rows):
                    keep = np.isin(load_rows, scan)
                    load_rows, load = load_rows[keep], load[keep]
            if len(load_rows) == 0:
                return NO_OVERRIDES
            width = len(table.resources)
            if load.shape[1] < width:
                load = np.pad(load, ((0, 0), (0, width - load.shape[1])))
            found: Overrides | None = None
            if fwk.what_if_spec_determined(state, pod):
                # Only rows changed since an earlier cycle are asked (the index's
                # change log is current: ``query`` / ``query_rows`` just synced it).
                found = self._override_rows.answer(fwk, state, pod, load_rows, load, index)
            else:
                answer = fwk.run_filter_what_if(
                    state, pod, load_rows, table.requested[load_rows] + load
                )
                if answer is not None:
                    found = Overrides(load_rows, answer[0].astype(np.int64), answer[1])
            if found is not None:
                return found
        out: dict[int, Status] = {}
        for name in fwk.nominator.nominated_node_names():
            row = table.row_of.get(name)
            if row is None or not fwk.nominated_ge(pod, name):
                continue
            info = table.infos[row]
            assert info is not None
            s = fwk.run_filter_plugins_with_nominated_pods(state, pod, info)
            if s.code == Code.ERROR:
                raise SchedulingError(s.message())
            out[row] = s
        return Overrides.of(out) if out else NO_OVERRIDES


_SHORT_SCAN: Final = 8
"""Scans of at most this many rows ask the nominated-load index about their rows only."""


def _first_chunk(num_to_find: int, n: int) -> int:
    """Rows filtered in the first chunk: what is needed plus a margin for nodes that
    fail, or everything when that is most of the table anyway."""
    size = num_to_find + max(32, num_to_find // 8)
    return n if 2 * size >= n else size


def _rotated(rows: IntArray, shift: int, a: int, b: int) -> IntArray:
    """Positions ``[a, b)`` (clamped to ``len(rows)``) of ``rows`` rotated left by
    ``shift``, without building the whole rotation (often a view: never write)."""
    n = len(rows)
    b = min(b, n)
    s, e = shift + a, shift + b
    if e <= n:
        return rows[s:e]
    if s >= n:
        return rows[s - n : e - n]
    return np.concatenate((rows[s:], rows[: e - n]))


def select_host(totals: IntArray, fwk: Framework) -> tuple[int, IntArray]:
    """Index of a top-scored node, ties broken uniformly by the seeded random
    source, and the indices of every top-scored node."""
    first = int(totals.argmax())
    ties = (totals == totals[first]).nonzero()[0]
    if len(ties) == 1:
        return first, ties
    return int(ties[fwk.rng.randrange(len(ties))]), ties

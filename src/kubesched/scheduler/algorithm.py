"""The scheduling algorithm of one cycle: find feasible nodes, score them, pick one.

Upstream: schedule_one.go ``schedulePod``, ``findNodesThatFitPod``,
``findNodesThatPassFilters``, ``numFeasibleNodesToFind``, ``prioritizeNodes``
and ``selectHost``. Nodes are checked sequentially from the rotating start
index, which is upstream's behaviour with parallelism 1 (upstream's parallel
scan may overshoot; kubesched is deterministic).

The filters run vectorised over all nodes when every filter plugin offers a
vector form; nodes that have nominated pods of equal or higher priority are
then re-evaluated with the exact two-pass per-node path, so the result is
exactly the per-node path's. ``Framework.force_exact`` forces the per-node path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NodeSet
from kubesched.framework.nodetable import IntArray
from kubesched.framework.results import Diagnosis, FitError
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.runtime.framework import Framework, go_list

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


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """How many feasible nodes to find before scoring (upstream numFeasibleNodesToFind)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = 50 - num_all_nodes // 125
        percentage = max(percentage, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    num = num_all_nodes * percentage // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


class Algorithm:
    """Holds the rotating start index across cycles; one per scheduler."""

    def __init__(self, percentage_of_nodes_to_score: int = 0) -> None:
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.next_start_node_index = 0

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
        totals, per_plugin = self.prioritize_nodes(fwk, state, pod, nodes)
        idx = select_host(totals, fwk)
        host = table.names[int(feasible[idx])]
        return ScheduleResult(
            host,
            len(feasible) + len(diagnosis.node_to_status),
            len(feasible),
            {name: int(s[idx]) for name, s in per_plugin.items()},
        )

    # ------------------------------------------------------------------ filtering
    def find_nodes_that_fit_pod(
        self, fwk: Framework, state: CycleState, pod: PodInfo
    ) -> tuple[IntArray, Diagnosis]:
        table = fwk.table
        diagnosis = Diagnosis()
        pre_res, s, narrowing = fwk.run_pre_filter_plugins(state, pod)
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
        if not fwk.has_score_plugins():
            num_to_find = 1
        shift = start % n
        scan = np.concatenate((rows[shift:], rows[:shift])) if shift else rows
        if not fwk.has_filter_plugins():
            feasible = scan[:num_to_find]
            self._last_feasible = len(feasible)
            return feasible
        vec = fwk.filter_vector(state, pod)
        if vec is None:
            feasible = self._exact_scan(fwk, state, pod, diagnosis, scan, num_to_find)
        else:
            feasible = self._vector_scan(fwk, state, pod, diagnosis, scan, num_to_find, vec)
        self._last_feasible = len(feasible)
        return feasible

    def _percentage(self, fwk: Framework) -> int:
        p = fwk.profile.percentage_of_nodes_to_score
        return self.percentage_of_nodes_to_score if p is None else p

    def _exact_scan(
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
                feasible.append(row)
                if len(feasible) >= num_to_find:
                    break
            else:
                diagnosis.node_to_status.set(info.name, s)
                diagnosis.add_plugin_status(s)
        return np.array(feasible, dtype=np.int64)

    def _vector_scan(
        self,
        fwk: Framework,
        state: CycleState,
        pod: PodInfo,
        diagnosis: Diagnosis,
        scan: IntArray,
        num_to_find: int,
        vec: tuple[np.ndarray, list[Status]],
    ) -> IntArray:
        index, statuses = vec
        table = fwk.table
        idx = index[scan]
        passing = idx < 0
        overrides = self._nominated_overrides(fwk, state, pod)
        if overrides:
            for row, st in overrides.items():
                pos = np.flatnonzero(scan == row)
                if len(pos):
                    passing[pos[0]] = st.is_success()
        cum = np.cumsum(passing)
        total = int(cum[-1])
        cut = int(np.searchsorted(cum, num_to_find)) + 1 if total >= num_to_find else len(scan)
        processed = scan[:cut]
        ok = passing[:cut]
        feasible = processed[ok]
        failing = processed[~ok]
        if len(failing):
            nts = diagnosis.node_to_status.explicit
            names = table.names
            seen: set[int] = set()
            for row, i in zip(failing.tolist(), index[failing].tolist(), strict=True):
                override = overrides.get(row) if overrides else None
                if override is None:
                    st = statuses[i]
                    if i not in seen:
                        seen.add(i)
                        diagnosis.add_plugin_status(st)
                else:
                    st = override
                    diagnosis.add_plugin_status(st)
                nts[names[row]] = st
        return feasible

    def _nominated_overrides(
        self, fwk: Framework, state: CycleState, pod: PodInfo
    ) -> dict[int, Status]:
        """Exact two-pass statuses of the nodes holding nominated pods that count."""
        nominator = fwk.nominator
        nodes_fn = getattr(nominator, "nominated_node_names", None)
        if nodes_fn is None:
            return {}
        out: dict[int, Status] = {}
        table = fwk.table
        for name in nodes_fn():
            row = table.row_of.get(name)
            if row is None or not fwk.nominated_ge(pod, name):
                continue
            info = table.infos[row]
            assert info is not None
            s = fwk.run_filter_plugins_with_nominated_pods(state, pod, info)
            if s.code == Code.ERROR:
                raise SchedulingError(s.message())
            out[row] = s
        return out

    # ------------------------------------------------------------------ scoring
    def prioritize_nodes(
        self, fwk: Framework, state: CycleState, pod: PodInfo, nodes: NodeSet
    ) -> tuple[IntArray, dict[str, IntArray]]:
        if not fwk.has_score_plugins():
            return np.ones(len(nodes), dtype=np.int64), {}
        fwk.run_pre_score_plugins(state, pod, nodes)
        return fwk.run_score_plugins(state, pod, nodes)


def select_host(totals: IntArray, fwk: Framework) -> int:
    """Index of a top-scored node; ties broken uniformly by the seeded random source."""
    top = int(totals.max())
    ties = np.flatnonzero(totals == top)
    if len(ties) == 1:
        return int(ties[0])
    return int(ties[fwk.rng.randrange(len(ties))])

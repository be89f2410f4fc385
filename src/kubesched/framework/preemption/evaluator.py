"""The preemption Evaluator: the shared flow of PostFilter preemption plugins.

Upstream pkg/scheduler/framework/preemption (preemption.go); the plugin supplies a
``PreemptionPolicy``. The flow (spec §5): re-read the preemptor and check it may
preempt (R5.1); potential nodes are those exactly Unschedulable (R5.2); a seeded
random offset and a bounded number of candidates (R5.3); the dry run on copies
with the early stop (R5.4, ``candidates.DryRun``); pick the best (R5.8); act on it
(``executor.py``, R5.9-R5.10). Nodes are visited sequentially (parallelism 1), in
snapshot order, the final tie broken by the seeded random source.

With DefaultPreemption's victim selection the dry run answers batches of rows
(``dry_run.VictimBatcher``), the stop rule applied row by row, so the result is
the node-by-node one; only the chosen candidate's victim list is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

from kubesched.api.goformat import go_aggregate
from kubesched.api.types import PodDisruptionBudget
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import Handle
from kubesched.framework.nodetable import IntArray
from kubesched.framework.preemption.candidates import (
    Candidate,
    CandidateSet,
    DryRun,
    criteria,
    default_criteria,
    pick,
    rotated,
)
from kubesched.framework.preemption.dry_run import VictimBatcher, WhatIfRuntime
from kubesched.framework.preemption.executor import Executor
from kubesched.framework.preemption.outcome import PreemptionOutcome
from kubesched.framework.preemption.policy import PreemptionPolicy
from kubesched.framework.preemption.victim_cache import VictimCache
from kubesched.framework.results import Diagnosis, FitError, NodeToStatus, PostFilterResult
from kubesched.framework.status import SUCCESS, Code, Status, error, unresolvable
from kubesched.framework.types import NodeInfo, PodInfo

MSG_NOT_HELPFUL: Final = "Preemption is not helpful for scheduling"
MSG_NO_CANDIDATE: Final = "no candidate node for preemption"
MSG_NO_NODES: Final = "no nodes available"
MSG_WAITING: Final = "waiting for the preemption for this pod to be finished"


class Evaluator(Executor):
    """Runs preemption for one plugin (upstream preemption.Evaluator, which embeds
    the Executor)."""

    def __init__(
        self,
        plugin_name: str,
        handle: Handle,
        policy: PreemptionPolicy,
        *,
        async_preemption: bool = True,
    ) -> None:
        super().__init__(handle, async_preemption=async_preemption)
        self.plugin_name = plugin_name
        self.policy = policy
        self._candidate_rate = 0.0
        """Candidates per node visited in the last batched dry run (sizes the first
        batch of the next one; 0 = unknown)."""
        self._victim_cache = VictimCache()
        """Step 1 of the batched dry run per table row, across dry runs."""
        self._runtime: WhatIfRuntime | None = None
        """The handle as a ``WhatIfRuntime`` (None: not one, the per-node path
        runs), resolved at the first dry run (the profile is built by then)."""
        self._resolved = False

    # ------------------------------------------------------------------ entry
    def preempt(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        h = self.handle
        latest = h.reader.get_pod(pod.pod.namespace, pod.pod.name)
        if latest is None:
            return None, error(f'pod "{pod.pod.name}" not found')
        if latest is not pod.pod:
            pod = PodInfo(latest)
        nnn = pod.pod.nominated_node_name
        ok, msg = self.policy.pod_eligible_to_preempt_others(
            pod, statuses.get(nnn) if nnn else None
        )
        if not ok:
            return None, Status(Code.UNSCHEDULABLE, msg)
        table = h.table
        all_names = table.ordered_names
        if not all_names:
            return None, error(MSG_NO_NODES)
        outcome = PreemptionOutcome()
        candidates, node_statuses, errs = self.find_candidates(state, pod, statuses, outcome)
        outcome.candidate_set, outcome.statuses = candidates, node_statuses
        if errs and not len(candidates):
            return None, error(go_aggregate(errs))
        if not len(candidates):
            node_statuses.absent = unresolvable(MSG_NOT_HELPFUL)
            fit = FitError(pod.pod, len(all_names), Diagnosis(node_to_status=node_statuses))
            return PostFilterResult.nominated("", outcome), Status(Code.UNSCHEDULABLE, str(fit))
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.UNSCHEDULABLE, MSG_NO_CANDIDATE)
        outcome.chosen = best
        info = table.infos[table.row_of[best.name]]
        outcome.chosen_pods = list(info.pods) if info is not None else []
        s = self.prepare_candidate(best, pod)
        if not s.is_success():
            return None, s
        return PostFilterResult.nominated(best.name, outcome), SUCCESS

    # ------------------------------------------------------------------ candidates
    def find_candidates(
        self,
        state: CycleState,
        pod: PodInfo,
        statuses: NodeToStatus,
        outcome: PreemptionOutcome | None = None,
    ) -> tuple[CandidateSet, NodeToStatus, list[str]]:
        """FindCandidates; ``outcome`` (if given) is told the dry run's inputs."""
        table = self.handle.table
        rows = statuses.rows_for_status_code(table, Code.UNSCHEDULABLE)
        if len(rows) == 0:
            return CandidateSet((), ()), NodeToStatus(), []
        pdbs = list(self.handle.pdbs())
        offset, num = self.policy.offset_and_num_candidates(len(rows))
        if outcome is not None:
            outcome.offset, outcome.num_candidates = offset, num
            outcome.pdbs, outcome.order = pdbs, self.policy.victim_order()
        return self._dry_run(state, pod, rows, pdbs, offset, num)

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: PodInfo,
        potential: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], NodeToStatus, list[str]]:
        """Visit nodes from ``offset`` (wrapping) on copies; stop once there is a
        non-violating candidate and ``num_candidates`` in all."""
        row_of = self.handle.table.row_of
        rows = np.array([row_of[n.name] for n in potential], dtype=np.int64)
        candidates, statuses, errs = self._dry_run(state, pod, rows, pdbs, offset, num_candidates)
        return candidates.materialize(), statuses, errs

    def _dry_run(
        self,
        state: CycleState,
        pod: PodInfo,
        rows: IntArray,
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[CandidateSet, NodeToStatus, list[str]]:
        """``dry_run_preemption`` over table rows."""
        run = DryRun(num_candidates)
        table = self.handle.table
        names = table.names_snapshot()
        n = len(rows)
        batcher = self._victim_batcher(state, pod, pdbs)
        i = 0
        size = 0
        while i < n and not run.done:
            if batcher is not None:
                # The first batch holds the fewest nodes that could end the run;
                # later ones grow (at least double) from the candidate rate so far.
                need = max(num_candidates - run.size(), 1)
                if size:
                    found = run.size()
                    est = need * i // found if found else n
                    size = max(2 * size, est + est // 8 + 16)
                elif self._candidate_rate > 0:
                    est = int(need / self._candidate_rate)
                    size = max(need, est + est // 8 + 16)
                else:
                    size = need
                chunk = rotated(rows, offset % n, i, i + size)
                batch = batcher(chunk)
                if batch is None:
                    batcher = None
                    continue
                i += run.take_batch(names, chunk, batch)
                continue
            info = table.infos[int(rows[(offset + i) % n])]
            assert info is not None
            node = info.clone()
            result = self.policy.select_victims_on_node(state.clone(), pod, node, pdbs)
            run.take_one(node.name, result)
            i += 1
        if size and i:
            self._candidate_rate = max(run.non_violating.added + run.violating.added, 1) / i
        return run.candidates(names), run.statuses, run.errs

    # ------------------------------------------------------------------ choice
    def select_candidate(self, candidates: CandidateSet | Sequence[Candidate]) -> Candidate | None:
        """SelectCandidate (R5.8): ``pick`` on the stats columns (default criteria) or
        the policy's ``ordered_score_funcs``."""
        if not isinstance(candidates, CandidateSet):
            candidates = CandidateSet((), candidates)
        n = len(candidates)
        if n <= 1:
            return candidates.at(0) if n else None
        now = self.handle.clock.now()
        columns = candidates.stats()
        if columns is not None:
            rows = default_criteria(columns, now)
        else:
            victims = {c.name: c.victims for c in candidates.materialize()}
            rows = criteria(victims, self.policy.ordered_score_funcs(victims), now)
        return candidates.at(pick(n, rows, self.handle.rng.randrange))

    def _victim_batcher(
        self, state: CycleState, pod: PodInfo, pdbs: Sequence[PodDisruptionBudget]
    ) -> VictimBatcher | None:
        """SelectVictimsOnNode for batches of rows, or None (per-node path)."""
        order = self.policy.victim_order()
        if order is None or not self.handle.what_if_supported(state, pod):
            return None
        if not self._resolved:
            h = self.handle
            self._runtime, self._resolved = (h if isinstance(h, WhatIfRuntime) else None), True
        if self._runtime is None:
            return None
        return VictimBatcher.of(
            self.handle, self._runtime, order, state, pod, pdbs, self._victim_cache
        )

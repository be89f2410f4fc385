"""The preemption Evaluator: the shared logic of PostFilter preemption plugins.

Upstream: pkg/scheduler/framework/preemption (preemption.go, executor.go).
A preemption plugin supplies the policy through the ``PreemptionPolicy``
protocol (which pods may be victims, how victims are chosen on one node,
who is more important); the Evaluator runs the flow of
/work/shared/spec/upstream-behaviour.md §5:

1. re-read the preemptor; check it may preempt (R5.1);
2. potential nodes = nodes whose filter status is exactly Unschedulable (R5.2);
3. a seeded random offset and a bounded number of candidates (R5.3);
4. a dry run on copies of each node's NodeInfo and the CycleState, with two
   bounded candidate lists and the early stop (R5.4);
5. pick the best candidate (R5.8);
6. act on it: mark and delete the victims, clear lower-priority nominations
   (R5.9), return the nominated node (R5.10).

kubesched visits nodes sequentially (upstream's result with parallelism 1),
lists potential nodes in snapshot order where upstream iterates a Go map, and
breaks the final tie between equally good candidates with the seeded random
source.

Speed: a policy may answer the dry run for batches of table rows at once
(``victim_batcher``); batches grow from the candidate rate seen so far, and
the stop rule is applied row by row on their answers, so the result is the
node-by-node one. Candidates from batches stay positions in their batch
(``CandidateSet``) and are picked from ``VictimStats`` columns when the
default criteria apply: only the chosen candidate's victim list is built.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

import numpy as np

from kubesched.api.types import Pod, PodCondition, PodDisruptionBudget
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import Handle
from kubesched.framework.nodetable import BoolArray, IntArray
from kubesched.framework.results import (
    Diagnosis,
    FitError,
    LazyNodeToStatus,
    NodeToStatus,
    PostFilterResult,
)
from kubesched.framework.status import SUCCESS, Code, Status, error, unresolvable
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.framework.victims import (
    StatColumns,
    Victims,
    pick_by_stats,
    pick_index_by_stats,
    pick_one_node_for_preemption,
)

MSG_NO_VICTIMS: Final = "No preemption victims found for incoming pod"
MSG_NOT_HELPFUL: Final = "Preemption is not helpful for scheduling"
MSG_NO_CANDIDATE: Final = "no candidate node for preemption"
MSG_NO_NODES: Final = "no nodes available"
MSG_WAITING: Final = "waiting for the preemption for this pod to be finished"

DISRUPTION_TARGET: Final = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER: Final = "PreemptionByScheduler"


@dataclass(slots=True)
class Candidate:
    name: str
    victims: Victims


class CandidateList:
    """A list that keeps at most ``capacity`` items; further adds are dropped but
    counted (upstream candidateList with its atomic index)."""

    __slots__ = ("_added", "capacity", "items")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.items: list[Candidate] = []
        self._added = 0

    def add(self, c: Candidate) -> None:
        if self._added < self.capacity:
            self.items.append(c)
        self._added += 1

    def size(self) -> int:
        return min(self._added, self.capacity)


class PreemptionPolicy(Protocol):
    """What a preemption plugin decides (upstream preemption.Interface)."""

    def pod_eligible_to_preempt_others(
        self, pod: PodInfo, nominated_node_status: Status | None
    ) -> tuple[bool, str]: ...

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: PodInfo,
        node: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[PodInfo], int, Status]: ...

    def offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]: ...

    def ordered_score_funcs(
        self, victims: dict[str, Victims]
    ) -> list[Callable[[str], int]] | None: ...


class VictimBatch(Protocol):
    """SelectVictimsOnNode's answers for a batch of rows (index ``i`` = ``rows[i]``).

    ``candidate[i]``: success with at least one victim; ``violating[i]``: a
    candidate some of whose victims violate a PDB; a non-candidate's status is
    ``statuses[fail_index[i]]``. ``victims(positions)`` gives those candidates'
    victims (in the per-node path's order) and numbers of PDB violations; the
    Evaluator asks only about the candidates it keeps, before it calls the
    batcher again. ``stats`` (when not None) promises that the policy scores
    candidates with the default criteria (``ordered_score_funcs`` gives None)."""

    candidate: BoolArray
    violating: BoolArray
    fail_index: IntArray
    statuses: list[Status]

    def victims(self, positions: IntArray) -> list[Victims]: ...

    def stats(self, positions: IntArray) -> StatColumns | None:
        """``VictimStats`` of those candidates as columns, or None when the
        default criteria cannot be read off them (then the victims are scored); may
        be views of the batch's arrays: read-only."""
        ...


class VictimBatcher(Protocol):
    """Answers batches of distinct rows for one dry run; None means "use the
    per-node path from here on". A policy may offer one through
    ``victim_batcher(state, pod, pdbs) -> VictimBatcher | None``."""

    def __call__(self, rows: IntArray) -> VictimBatch | None: ...


class PreemptionOutcome:
    """What happened in one Preempt call, for explanations and reports
    (``candidates`` are built when first read)."""

    __slots__ = ("candidate_set", "chosen", "statuses")

    def __init__(self) -> None:
        self.candidate_set: CandidateSet | None = None
        self.chosen: Candidate | None = None
        self.statuses: NodeToStatus | None = None

    @property
    def candidates(self) -> list[Candidate]:
        cs = self.candidate_set
        return cs.materialize() if cs is not None else []


class Evaluator:
    """Runs preemption for one plugin (upstream preemption.Evaluator)."""

    def __init__(
        self,
        plugin_name: str,
        handle: Handle,
        policy: PreemptionPolicy,
        *,
        async_preemption: bool = True,
    ) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.policy = policy
        self.async_preemption = async_preemption
        self.preempting: set[str] = set()
        """Preemptor UIDs whose victims are still being deleted (async path)."""
        self.last_victims_pending: dict[str, tuple[str, str, str]] = {}
        self.last: PreemptionOutcome | None = None
        self._candidate_rate = 0.0
        """Candidates per node visited in the last batched dry run (sizes the first
        batch of the next one; 0 = unknown)."""

    # ------------------------------------------------------------------ entry
    def preempt(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        h = self.handle
        self.last = PreemptionOutcome()
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
        candidates, node_statuses, errs = self._find_candidates(state, pod, statuses)
        self.last.candidate_set = candidates
        self.last.statuses = node_statuses
        if errs and not len(candidates):
            return None, error(go_aggregate(errs))
        if not len(candidates):
            node_statuses.absent = unresolvable(MSG_NOT_HELPFUL)
            fit = FitError(pod.pod, len(all_names), Diagnosis(node_to_status=node_statuses))
            return PostFilterResult.nominated(""), Status(Code.UNSCHEDULABLE, str(fit))
        best = self._select(candidates)
        if best is None or not best.name:
            return None, Status(Code.UNSCHEDULABLE, MSG_NO_CANDIDATE)
        self.last.chosen = best
        s = self.prepare_candidate(best, pod)
        if not s.is_success():
            return None, s
        return PostFilterResult.nominated(best.name), SUCCESS

    # ------------------------------------------------------------------ candidates
    def find_candidates(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[list[Candidate], NodeToStatus, list[str]]:
        candidates, node_statuses, errs = self._find_candidates(state, pod, statuses)
        return candidates.materialize(), node_statuses, errs

    def _find_candidates(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[CandidateSet, NodeToStatus, list[str]]:
        table = self.handle.table
        rows = statuses.rows_for_status_code(table, Code.UNSCHEDULABLE)
        if len(rows) == 0:
            return CandidateSet.empty(), NodeToStatus(), []
        pdbs = list(self.handle.pdbs())
        offset, num = self.policy.offset_and_num_candidates(len(rows))
        return self._dry_run(state, pod, rows, None, pdbs, offset, num)

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
        non-violating candidate and ``num_candidates`` candidates in all.

        A policy with ``victim_batcher`` evaluates batches of nodes at once (each
        node's answer is independent of the others, so batching only changes how
        much work runs past the stop point, never the result)."""
        row_of = self.handle.table.row_of
        rows = np.array([row_of[n.name] for n in potential], dtype=np.int64)
        candidates, statuses, errs = self._dry_run(
            state, pod, rows, potential, pdbs, offset, num_candidates
        )
        return candidates.materialize(), statuses, errs

    def _dry_run(
        self,
        state: CycleState,
        pod: PodInfo,
        rows: IntArray,
        potential: Sequence[NodeInfo] | None,
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[CandidateSet, NodeToStatus, list[str]]:
        """``dry_run_preemption`` over table rows (``potential``: their NodeInfos,
        else the table's)."""
        run = _DryRun(num_candidates)
        table = self.handle.table
        names = table.names_snapshot()
        n = len(rows)
        make = getattr(self.policy, "victim_batcher", None)
        batcher: VictimBatcher | None = make(state, pod, pdbs) if make is not None else None
        i = 0
        size = 0
        while i < n and not run.done:
            if batcher is not None:
                # The first batch holds the fewest nodes that could end the run; later
                # ones grow (at least double) from the candidate rate so far, so that
                # a run that must go far takes a few batches, not one per candidate.
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
                chunk = _rotated(rows, offset % n, i, i + size)
                batch = batcher(chunk)
                if batch is None:
                    batcher = None
                    continue
                i += run.take_batch(names, chunk, batch)
                continue
            row = int(rows[(offset + i) % n])
            if potential is not None:
                info = potential[(offset + i) % n]
            else:
                got = table.infos[row]
                assert got is not None
                info = got
            node = info.clone()
            result = self.policy.select_victims_on_node(state.clone(), pod, node, pdbs)
            run.take_one(node.name, result)
            i += 1
        if size and i:
            self._candidate_rate = max(run.non_violating.added + run.violating.added, 1) / i
        return CandidateSet(names, [run.non_violating, run.violating]), run.statuses, run.errs

    # ------------------------------------------------------------------ choice
    def _select(self, candidates: CandidateSet) -> Candidate | None:
        """``select_candidate`` on a dry run's candidates: when every candidate has
        its stats as columns (the default criteria apply), the pick runs on them
        and only the chosen candidate is built."""
        n = len(candidates)
        if n == 1:
            return candidates.at(0)
        columns = candidates.stats() if n else None
        if columns is None:
            return self.select_candidate(candidates.materialize())
        i = pick_index_by_stats(columns, self.handle.clock.now(), self.handle.rng.randrange)
        return candidates.at(i)

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        victims: dict[str, Victims] = {}
        for c in candidates:
            victims[c.name] = c.victims
        funcs = self.policy.ordered_score_funcs(victims)
        now = self.handle.clock.now()
        if funcs is None and all(c.victims.stats is not None for c in candidates):
            name = pick_by_stats(victims, now, self.handle.rng.randrange)
        else:
            name = pick_one_node_for_preemption(victims, funcs, now, self.handle.rng.randrange)
        for c in candidates:
            if c.name == name:
                return c
        return candidates[0]

    # ------------------------------------------------------------------ acting
    def prepare_candidate(self, c: Candidate, preemptor: PodInfo) -> Status:
        """Mark and delete the victims, clear lower-priority nominations.

        Sync path (``SchedulerAsyncPreemption`` off): every victim not already
        terminating is preempted, then lower-priority nominations on the node
        are cleared. Async path (default since v1.33): victims already
        terminating are dropped first and, if none remain, nothing happens at
        all (nominations stay); otherwise nominations are cleared, then the
        victims are preempted. kubesched's cluster calls complete at once, so
        the async goroutine's work is done here, before the cycle ends; its
        results reach the scheduler as watch events after the cycle either way.
        """
        h = self.handle
        pods = c.victims.pods
        h.recorder.preemption(
            preemptor.pod, c.name, [p.pod for p in pods], c.victims.num_pdb_violations
        )
        if not self.async_preemption:
            h.metrics.preemption_victims(len(pods))
            first_error: Exception | None = None
            for v in pods:
                if v.pod.deletion_timestamp is None:
                    err = self.preempt_pod(c, preemptor, v)
                    first_error = first_error or err
            if first_error is not None:
                return error(str(first_error))
            self._clear_lower_priority_nominations(preemptor, c.name)
            return SUCCESS
        remaining = [v for v in pods if v.pod.deletion_timestamp is None]
        if not remaining:
            return SUCCESS
        h.metrics.preemption_victims(len(pods))
        uid = preemptor.pod.uid
        self.preempting.add(uid)
        failed = False
        try:
            failed = not self._clear_lower_priority_nominations(preemptor, c.name)
            victim_failed = False
            for v in remaining[:-1]:
                victim_failed |= self.preempt_pod(c, preemptor, v) is not None
            if victim_failed:
                failed = True
            else:
                last = remaining[-1]
                self.last_victims_pending[uid] = (last.pod.namespace, last.pod.name, last.pod.uid)
                failed |= self.preempt_pod(c, preemptor, last) is not None
        finally:
            self.preempting.discard(uid)
            self.last_victims_pending.pop(uid, None)
        if failed:
            h.activate([preemptor.pod])
        return SUCCESS

    def preempt_pod(self, c: Candidate, preemptor: PodInfo, victim: PodInfo) -> Exception | None:
        """DisruptionTarget condition, DELETE, and the ``Preempted`` event (R5.9.3).
        Returns the API error, if any (a victim already gone is success)."""
        h = self.handle
        pod = victim.pod
        current = h.reader.get_pod(pod.namespace, pod.name)
        if current is None or current.uid != pod.uid:
            return None  # the victim is gone: success, no event
        cond = PodCondition(
            DISRUPTION_TARGET,
            "True",
            REASON_PREEMPTION_BY_SCHEDULER,
            f"{preemptor.pod.spec.scheduler_name}: preempting to accommodate a higher priority pod",
            h.clock.now(),
        )
        try:
            if not _has_condition(current, cond):
                h.writer.patch_pod_status(current, condition=cond)
            h.writer.delete_pod(current)
        except Exception as err:  # an API error: reported, the rest goes on
            return err
        h.recorder.event(
            pod,
            "Normal",
            "Preempted",
            "Preempting",
            f"Preempted by pod {preemptor.pod.uid} on node {c.name}",
            related=preemptor.pod,
        )
        return None

    def _clear_lower_priority_nominations(self, preemptor: PodInfo, node_name: str) -> bool:
        """Clear ``nominatedNodeName`` of lower-priority pods nominated to the node;
        False if an API call failed (not fatal)."""
        h = self.handle
        prio = preemptor.pod.priority
        ok = True
        for pi in h.nominator.nominated_pods_for_node(node_name):
            if pi.pod.priority >= prio:
                continue
            current = h.reader.get_pod(pi.pod.namespace, pi.pod.name)
            if current is None or not current.nominated_node_name:
                continue
            try:
                h.writer.patch_pod_status(current, nominated_node_name="")
            except Exception:
                ok = False
        return ok

    def is_pod_running_preemption(self, uid: str) -> bool:
        """True while the async preemption of this preemptor is in flight (R5.9.5)."""
        if uid not in self.preempting:
            return False
        last = self.last_victims_pending.get(uid)
        if last is None:
            return True
        ns, name, vuid = last
        victim = self.handle.reader.get_pod(ns, name)
        return victim is not None and victim.uid == vuid and victim.deletion_timestamp is None


class _Pool:
    """One bounded candidate list (upstream candidateList: keeps the first
    ``capacity`` candidates, counts all) whose kept candidates are Candidate
    objects or positions of a VictimBatch, built on demand."""

    __slots__ = ("added", "capacity", "parts")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.added = 0
        self.parts: list[Candidate | tuple[VictimBatch, IntArray, IntArray]] = []

    def size(self) -> int:
        return min(self.added, self.capacity)

    def add(self, c: Candidate) -> None:
        if self.added < self.capacity:
            self.parts.append(c)
        self.added += 1

    def add_batch(self, batch: VictimBatch, positions: IntArray, rows: IntArray) -> None:
        """``add`` for the candidates at ``positions`` of ``batch`` (rows: the batch's)."""
        kept = positions[: max(self.capacity - self.added, 0)]
        if len(kept):
            self.parts.append((batch, kept, rows[kept]))
        self.added += len(positions)


class CandidateSet:
    """A dry run's candidates in upstream's order (non-violating, then violating),
    built as Candidate objects only when asked for."""

    __slots__ = ("_built", "_names", "_parts", "_size")

    def __init__(self, names: tuple[str, ...], pools: Sequence[_Pool]) -> None:
        self._names = names
        self._parts = [part for pool in pools for part in pool.parts]
        self._size = sum(1 if isinstance(p, Candidate) else len(p[1]) for p in self._parts)
        self._built: list[Candidate] | None = None

    @staticmethod
    def empty() -> CandidateSet:
        return CandidateSet((), ())

    def __len__(self) -> int:
        return self._size

    def materialize(self) -> list[Candidate]:
        if self._built is None:
            out: list[Candidate] = []
            names = self._names
            for part in self._parts:
                if isinstance(part, Candidate):
                    out.append(part)
                    continue
                batch, positions, rows = part
                victims = batch.victims(positions)
                out.extend(
                    Candidate(names[r], v) for r, v in zip(rows.tolist(), victims, strict=True)
                )
            self._built = out
        return self._built

    def at(self, i: int) -> Candidate:
        """The i-th candidate (without building the others)."""
        if self._built is not None:
            return self._built[i]
        for part in self._parts:
            if isinstance(part, Candidate):
                if i == 0:
                    return part
                i -= 1
                continue
            batch, positions, rows = part
            if i < len(positions):
                (victims,) = batch.victims(positions[i : i + 1])
                return Candidate(self._names[int(rows[i])], victims)
            i -= len(positions)
        raise IndexError(i)

    def stats(self) -> StatColumns | None:
        """Every candidate's stats as columns, or None if some candidate has none."""
        got: list[StatColumns] = []
        for part in self._parts:
            if isinstance(part, Candidate):
                return None
            batch, positions, _ = part
            columns = batch.stats(positions)
            if columns is None:
                return None
            got.append(columns)
        if len(got) == 1:
            return got[0]
        return (
            np.concatenate([g[0] for g in got]),
            np.concatenate([g[1] for g in got]),
            np.concatenate([g[2] for g in got]),
            np.concatenate([g[3] for g in got]),
            np.concatenate([g[4] for g in got]),
            np.concatenate([g[5] for g in got]),
            np.concatenate([g[6] for g in got]),
        )


class _DryRun:
    """The two bounded candidate lists, the failing nodes' statuses and the errors
    of one dry run, fed node by node or batch by batch in visiting order."""

    __slots__ = ("done", "errs", "non_violating", "num_candidates", "statuses", "violating")

    def __init__(self, num_candidates: int) -> None:
        self.num_candidates = num_candidates
        self.non_violating = _Pool(num_candidates)
        self.violating = _Pool(num_candidates)
        self.statuses = LazyNodeToStatus()
        self.errs: list[str] = []
        self.done = False

    def size(self) -> int:
        return self.non_violating.size() + self.violating.size()

    def take_one(self, name: str, result: tuple[list[PodInfo], int, Status]) -> None:
        victims, num_violations, status = result
        if status.is_success() and victims:
            c = Candidate(name, Victims(victims, num_violations))
            (self.non_violating if num_violations == 0 else self.violating).add(c)
            nv, v = self.non_violating.size(), self.violating.size()
            if nv > 0 and nv + v >= self.num_candidates:
                self.done = True
            return
        if status.is_success():
            status = error(f'expected at least one victim pod on node "{name}"')
        if status.code == Code.ERROR:
            self.errs.append(status.message())
        self.statuses.set(name, status)

    def take_batch(self, names: tuple[str, ...], rows: IntArray, batch: VictimBatch) -> int:
        """Take the answers for ``rows`` in order up to the stop point; returns how
        many rows were taken (all of them unless the run is done)."""
        cand = batch.candidate
        cap = self.num_candidates
        nv_pool, v_pool = self.non_violating, self.violating
        stopped: bool
        if not batch.violating.any():
            # Only non-violating candidates: after its k-th one (k >= 1) the
            # non-violating list holds min(added + k, cap) >= 1, so the stop rule
            # first holds at the t-th with added + t + size(violating) >= cap.
            found = np.flatnonzero(cand)
            t = max(cap - v_pool.size() - nv_pool.added, 1)
            stopped = len(found) >= t
            if stopped:
                found = found[:t]
                end = int(found[-1]) + 1
            else:
                end = len(rows)
            if len(found):
                nv_pool.add_batch(batch, found, rows)
        else:
            nonv = cand & ~batch.violating
            viol = cand & batch.violating
            # List sizes after each row, and the first row where the stop rule holds
            # (it is only checked after adding a candidate).
            nv_size = np.minimum(nv_pool.added + np.cumsum(nonv), cap)
            v_size = np.minimum(v_pool.added + np.cumsum(viol), cap)
            stops = np.flatnonzero(cand & (nv_size > 0) & (nv_size + v_size >= cap))
            stopped = len(stops) > 0
            end = int(stops[0]) + 1 if stopped else len(rows)
            for pool, mask in ((nv_pool, nonv), (v_pool, viol)):
                got = np.flatnonzero(mask[:end])
                if len(got):
                    pool.add_batch(batch, got, rows)
        fails = np.flatnonzero(~cand[:end])
        if len(fails):
            index = batch.fail_index[fails]
            statuses = batch.statuses
            errors = [s.code == Code.ERROR for s in statuses]
            if any(errors):
                is_error = np.array(errors, dtype=np.bool_)
                for i in index[is_error[index]].tolist():
                    self.errs.append(statuses[i].message())
            self.statuses.defer(names, rows[fails], index, statuses)
        if stopped:
            self.done = True
        return end


def _rotated(rows: IntArray, shift: int, a: int, b: int) -> IntArray:
    """Positions ``[a, b)`` (clamped to ``len(rows)``) of ``rows`` rotated left by
    ``shift`` (a copy)."""
    n = len(rows)
    b = min(b, n)
    s, e = shift + a, shift + b
    out: IntArray
    if e <= n:
        out = rows[s:e].copy()
    elif s >= n:
        out = rows[s - n : e - n].copy()
    else:
        out = np.concatenate((rows[s:], rows[: e - n]))
    return out


def go_aggregate(messages: Sequence[str]) -> str:
    """Go's ``utilerrors.NewAggregate(errs).Error()``: duplicates dropped, one message
    as is, several as ``[a, b]``."""
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def _has_condition(pod: Pod, cond: PodCondition) -> bool:
    """The pod already carries this condition (UpdatePodCondition would change nothing)."""
    cur = pod.condition(cond.type)
    return (
        cur is not None
        and cur.status == cond.status
        and cur.reason == cond.reason
        and cur.message == cond.message
    )

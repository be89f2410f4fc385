"""The batched dry run: DefaultPreemption's SelectVictimsOnNode for many nodes at once.

The Evaluator runs it when the policy's victim selection is DefaultPreemption's
(``PreemptionPolicy.victim_order`` gives the ``VictimOrder`` to follow) and
the filters allow it.

When every active filter is static (its answer does not depend on the pods
of a node) or answers what-ifs on summed requests (NodeResourcesFit), and no
active PreFilter plugin keeps AddPod/RemovePod state, victim selection on a
node only depends on the node's summed requests. Then, for a batch of rows:

1. each node's potential victims (lower priority and allowed by the order, in
   NodeInfo order) are sorted by importance and split by PDB exactly as the
   per-node path does (``victim_cache.py``);
2. all of them come off the node's requests, the nominated pods of equal or
   higher priority go on (the first pass of filtering with nominated pods —
   the second pass cannot fail where the first passed, because these
   filters only get stricter as pods are added);
3. one what-if filter call answers "does it fit without any victim?" for the
   whole batch (failing nodes keep their exact status);
4. victims are reprieved slot by slot: slot ``j`` adds the j-th victim of
   every node back, one what-if call decides for all nodes at once. When the
   only active filter that depends on a node's pods is a resource filter
   (NodeResourcesFit, ``resources.ResourceFilterPlugin``), its evaluator's
   ``ResourceFit.reprieve`` does this on the plan alone, with no framework call
   per slot (static filters passed in step 3 already).

Step 1 is cached per row in arrays (``VictimCache``) when it cannot depend on
anything else. Victim lists are built only for the rows the Evaluator
asks about (``VictimBatch.victims``): rows past its stop point cost array
work only. Under the same conditions, with spec-determined filters, each
row's whole answer is kept too (``answers.py``): a batch computes only the
rows whose answer went stale (a few of them straight into the kept answers,
``VictimBatcher._answer_small``) and reads the others. The per-node path
remains the reference; tests compare both on random clusters.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from kubesched.api.types import PodDisruptionBudget
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import FilterPlugin, Handle
from kubesched.framework.nodetable import BoolArray, IntArray
from kubesched.framework.preemption.batch import VictimBatch
from kubesched.framework.preemption.policy import MSG_NO_VICTIMS, VictimOrder
from kubesched.framework.preemption.ports import HandleExtras
from kubesched.framework.preemption.victim_cache import (
    NodeVictims,
    VictimCache,
    cacheable,
    node_victims,
)
from kubesched.framework.preemption.victims import StatColumns, victim_stats
from kubesched.framework.resources import ResourceFilterPlugin, ResourceFit, ResourcePlan
from kubesched.framework.row_answers import PodSignature
from kubesched.framework.status import Status, error, unresolvable
from kubesched.framework.types import PodInfo

_NO_INTS: IntArray = np.zeros((0, 0), dtype=np.int64)


class VictimBatcher:
    """Answers batches of rows for one preemptor in one dry run (``__call__``)."""

    __slots__ = (
        "_answer_key",
        "_cacheable",
        "_default_order",
        "_defaults",
        "_extras",
        "_handle",
        "_key",
        "_load",
        "_order",
        "_pdbs",
        "_pod",
        "_resource_filter",
        "_state",
        "cache",
    )

    def __init__(
        self,
        handle: Handle,
        extras: HandleExtras,
        order: VictimOrder,
        state: CycleState,
        pod: PodInfo,
        pdbs: Sequence[PodDisruptionBudget],
        cache: VictimCache,
    ) -> None:
        self._handle = handle
        self._extras = extras
        self._order = order
        self._state = state
        self._pod = pod
        self._pdbs = pdbs
        self.cache = cache
        self._key = order.sort_key(handle.clock.now())
        self._defaults = order.default_policy
        self._default_order = order.default_order
        """Victims come sorted by priority and the default criteria pick among
        candidates: batches hand out ``victim_stats`` columns."""
        self._cacheable = self._defaults and not pdbs
        self._load: tuple[int, IntArray | None] | None = None
        self._resource_filter: Any = cache.resource_filters.get(state.skip_filter_plugins, _UNKNOWN)
        """``_find_resource_filter()`` once known (it depends on the skipped filters only)."""
        runtime = extras.runtime
        self._answer_key: PodSignature | None = None
        """The preemptor's signature when whole answers may be kept per row
        (``answers.py``), else None."""
        if (
            self._cacheable
            and self._default_order
            and runtime is not None
            and runtime.what_if_spec_determined(state, pod)
        ):
            self._answer_key = PodSignature(
                handle, pod.facts, state.skip_filter_plugins, pod.pod.priority, pod.pod.node_name
            )

    def __call__(self, rows: IntArray) -> VictimBatch | None:
        """The answers for ``rows`` (distinct live rows), or None when the filters
        need the per-node path after all."""
        run = self._run if self._answer_key is None else self._answered
        got = run(rows)
        if got is _RESTART:
            got = run(rows)  # the resource axis grew: once more on the new layout
        assert not isinstance(got, _Restart)
        return got

    def _answered(self, rows: IntArray) -> VictimBatch | _Restart | None:
        """``_run`` with the kept answers of rows whose inputs did not change
        (``answers.py``); only the others are computed."""
        local = self._entries(rows)
        if isinstance(local, _Restart):
            return local
        if local:
            return self._run(rows)  # some row cannot be kept (unknown start times)
        nominated = self._nominated()
        if isinstance(nominated, _Restart):
            return nominated
        table = self._handle.table
        answers = self.cache.answers
        assert self._answer_key is not None
        answers.use((self._answer_key, table.node_generation, table.layout_generation))
        stale = answers.stale(rows, nominated)
        if 0 < len(stale) <= _SMALL and len(stale) < len(rows):
            done = self._answer_small(rows.take(stale), nominated)
            if done is None:
                return None
            if done:
                stale = stale[:0]
        if len(stale):
            computed = rows if len(stale) == len(rows) else rows.take(stale)
            got = self._run(computed, cached=True)
            if got is None or isinstance(got, _Restart):
                return got
            if not answers.store(computed, got, nominated):
                return got if computed is rows else self._run(rows)
            if computed is rows:
                return got
        cand, status, pos, slots, entries, stats = answers.batch(rows, self.cache.ordered)
        b, nf = len(rows), len(entries)
        no = np.zeros(b, dtype=np.bool_)
        return VictimBatch(
            cand,
            no,
            status,
            answers.statuses,  # append-only (a new key starts a new list)
            pos,
            slots,
            entries,
            np.zeros(nf, dtype=np.int64),
            self._key,
            stats,
        )

    def _answer_small(self, rows: IntArray, nominated: IntArray | None) -> bool | None:
        """``_run`` for a few rows, straight into the kept answers (numpy's per-call
        cost dominates there): the same what-if call for "every victim removed",
        then the resource filter's reprieve and the victims' stats row by row.
        False when its condition does not hold (no resource filter alone); None
        when the filters cannot answer (as ``_run``)."""
        resources = self._resources()
        if resources is None:
            return False
        fit, plan = resources
        cache, answers = self.cache, self.cache.answers
        counts = cache.count.take(rows).tolist()
        h = self._handle
        table = h.table
        row_list = rows.tolist()
        live = [i for i, c in enumerate(counts) if c]
        statuses: list[Status] = [unresolvable(MSG_NO_VICTIMS)]
        status_of = [0] * len(row_list)  # index into statuses; -1: a candidate
        passes: list[int] = []
        slots: BoolArray | None = None
        fit_rows: IntArray | None = None
        if live:
            live_rows = rows.take(live)
            base = cache.base.take(live_rows, axis=0)
            if nominated is not None:
                base += nominated.take(live_rows, axis=0)
            if len(live) == 1:
                one = h.run_filter_what_if_row(self._state, self._pod, int(live_rows[0]), base[0])
                if one is None:
                    return None
                if one.is_success():
                    passes.append(0)
                else:
                    status_of[live[0]] = len(statuses)
                    statuses.append(one)
            else:
                what_if = h.run_filter_what_if(self._state, self._pod, live_rows, base)
                if what_if is None:
                    return None
                index, found = what_if
                statuses.extend(found)
                for k, i in enumerate(index.tolist()):
                    if i < 0:
                        passes.append(k)
                    else:
                        status_of[live[k]] = i + 1
            if passes:
                fit_rows = live_rows.take(passes)
                longest = max(counts[live[k]] for k in passes)
                victims = cache.requests.take(fit_rows, axis=0)[:, :longest]
                slots = fit.reprieve(plan, table, fit_rows, base.take(passes, axis=0), victims)
        kept: list[tuple[int, list[bool]]] = []
        stats: StatColumns | None = None
        if slots is not None:
            assert fit_rows is not None
            keep: list[int] = []
            for k, row_stays in enumerate(slots.T.tolist()):
                i = live[passes[k]]
                victim = row_stays[: counts[i]]
                if not any(victim):
                    status_of[i] = len(statuses)
                    name = table.names[row_list[i]]
                    statuses.append(error(f'expected at least one victim pod on node "{name}"'))
                    continue
                status_of[i] = -1
                keep.append(k)
                kept.append((i, victim))
            if keep:
                # Cached rows: no PDB, every start time known, victims in the
                # default order (``VictimCache``).
                n = slots.shape[0]
                stats = victim_stats(
                    slots[:, keep],
                    cache.victim_priority.take(fit_rows[keep], axis=0)[:, :n].T,
                    cache.victim_start.take(fit_rows[keep], axis=0)[:, :n].T,
                )
        answers.keep_few(rows, statuses, status_of, kept, stats, nominated)
        return True

    def _entries(self, rows: IntArray) -> _Restart | dict[int, NodeVictims | None]:
        """Bring the cache up to date for ``rows``; the entries that cannot be cached
        by batch position."""
        pod = self._pod
        table = self._handle.table
        cache = self.cache
        cache.sync(table)
        infos = table.infos
        prio = pod.pod.priority
        if self._cacheable:
            stale = (~cache.valid[rows] | (cache.priority[rows] != prio)).nonzero()[0]
        else:
            stale = np.arange(len(rows))
        local: dict[int, NodeVictims | None] = {}
        for p in stale.tolist():
            row = int(rows[p])
            node = infos[row]
            assert node is not None
            entry = node_victims(
                self._order, table, node, pod, self._pdbs, self._key, self._defaults
            )
            if table.layout_generation != cache.layout:
                return _RESTART
            if self._cacheable and (entry is None or cacheable(entry)):
                cache.store(row, prio, entry)
            else:
                local[p] = entry
        return local

    def _nominated(self) -> _Restart | IntArray | None:
        """The summed requests of the nominated pods that count, as a dense
        (capacity, width) matrix over table slots (None: there are none); built
        once per preemptor and table layout (batches then add it with one gather)."""
        h = self._handle
        table = h.table
        if self._load is None or self._load[0] != table.layout_generation:
            # When the index keeps the load as a matrix over table slots it is
            # handed out as is (nominations do not change during a dry run).
            index = h.nominator.load_index()
            dense = index.dense(self._pod, table)
            if table.layout_generation != self.cache.layout:
                return _RESTART
            if dense is not None:
                self._load = (table.layout_generation, dense)
                return dense
            load_rows, load = index.query(self._pod, table)
            if table.layout_generation != self.cache.layout:
                return _RESTART
            if len(load_rows):
                dense = np.zeros((table.capacity, len(table.resources)), dtype=np.int64)
                dense[load_rows, : load.shape[1]] = load
            self._load = (table.layout_generation, dense)
        return self._load[1]

    def _run(self, rows: IntArray, cached: bool = False) -> VictimBatch | _Restart | None:
        """The batch for ``rows`` computed in full (``cached``: every row's entry was
        just brought up to date in the cache)."""
        h = self._handle
        state, pod = self._state, self._pod
        local = {} if cached else self._entries(rows)
        if isinstance(local, _Restart):
            return local
        nominated = self._nominated()
        if isinstance(nominated, _Restart):
            return nominated
        cache = self.cache
        table = h.table
        width = len(table.resources)
        b = len(rows)
        counts = cache.count[rows]
        if local:
            for p, entry in local.items():
                counts[p] = 0 if entry is None else len(entry.ordered)
        no_victims = unresolvable(MSG_NO_VICTIMS)
        live = (counts > 0).nonzero()[0]
        if len(live) == 0:
            none = np.zeros(b, dtype=np.bool_)
            zeros = np.zeros(b, dtype=np.int64)  # 0: no_victims
            return VictimBatch(
                none,
                none,
                zeros,
                [no_victims],
                np.full(b, -1, dtype=np.int64),
                np.zeros((0, 0), dtype=np.bool_),
                np.empty(0, dtype=object),
                zeros,
                self._key,
                None,
            )
        live_rows = rows[live]
        base_m = cache.base.take(live_rows, axis=0)  # take: much faster than [rows]
        local_live: list[tuple[int, NodeVictims]] = []
        if local:
            at = {int(p): k for k, p in enumerate(live.tolist())}
            for p, entry in local.items():
                if entry is not None:
                    k = at[p]
                    local_live.append((k, entry))
                    base_m[k] = 0
                    base_m[k, : entry.base.shape[0]] = entry.base
        if nominated is not None:
            # The nominated pods of equal or higher priority count (filter pass 1).
            base_m += nominated.take(live_rows, axis=0)
        what_if = h.run_filter_what_if(state, pod, live_rows, base_m)
        if what_if is None:
            return None
        index, statuses = what_if
        fits = (index < 0).nonzero()[0]
        nf = len(fits)
        fit_rows = live_rows[fits]
        fit_pos = live[fits]  # batch positions of the rows that fit without victims
        lens = counts[fit_pos]
        max_len = int(lens.max()) if nf else 0
        with_stats = self._default_order
        entries = cache.ordered[fit_rows]  # the lists as of now (the cache moves on)
        fit_local: list[tuple[int, NodeVictims]] = []
        if local_live:
            fit_at = {int(k): i for i, k in enumerate(fits.tolist())}
            fit_local = [(fit_at[k], e) for k, e in local_live if k in fit_at]
        n_violating = np.zeros(nf, dtype=np.int64)
        v_known: BoolArray | None = None  # None: every victim has a start time
        if fit_local or max_len > cache.requests.shape[1]:
            requests = np.zeros((nf, max_len, width), dtype=np.int64)
            v_prio = np.zeros((nf, max_len), dtype=np.int64)
            v_start = np.zeros((nf, max_len), dtype=np.int64)
            v_known = np.ones((nf, max_len), dtype=np.bool_)
            take = min(max_len, cache.requests.shape[1])
            requests[:, :take] = cache.requests[fit_rows, :take]
            if with_stats:
                v_prio[:, :take] = cache.victim_priority[fit_rows, :take]
                v_start[:, :take] = cache.victim_start[fit_rows, :take]
            for i, entry in fit_local:
                r = entry.requests
                requests[i] = 0
                requests[i, : r.shape[0], : r.shape[1]] = r
                n_violating[i] = entry.n_violating
                entries[i] = entry.ordered
                if with_stats:
                    m = len(entry.ordered)
                    v_prio[i, :m] = [q.pod.priority for q in entry.ordered]
                    starts = [q.pod.start_time for q in entry.ordered]
                    v_start[i, :m] = [0 if t is None else t for t in starts]
                    v_known[i, :m] = [t is not None for t in starts]
        else:
            # Every row is cached: its slots past its count hold zeros (``store``).
            requests = cache.requests.take(fit_rows, axis=0)[:, :max_len]
            if with_stats:
                v_prio = cache.victim_priority.take(fit_rows, axis=0)[:, :max_len]
                v_start = cache.victim_start.take(fit_rows, axis=0)[:, :max_len]
            else:
                v_prio = v_start = _NO_INTS
        cur = base_m.take(fits, axis=0)
        resources = self._resources() if max_len else None
        if resources is not None:
            fit, plan = resources
            victim_slots = fit.reprieve(plan, table, fit_rows, cur, requests)
        else:
            generic = self._reprieve_generic(fit_rows, cur, requests, lens)
            if generic is None:
                return None
            victim_slots = np.ascontiguousarray(generic.T)
        # Statuses: the what-if's, then "no victims", then per-node errors.
        out_statuses = list(statuses)
        fail_index = np.full(b, len(out_statuses), dtype=np.int64)
        out_statuses.append(no_victims)
        fail_index[live] = index
        has: BoolArray = np.asarray(victim_slots.any(axis=0))
        candidate = np.zeros(b, dtype=np.bool_)
        candidate[fit_pos] = has
        violating = np.zeros(b, dtype=np.bool_)
        any_violating = bool(n_violating.any())
        if any_violating:
            viol = (victim_slots & (np.arange(max_len)[:, None] < n_violating)).any(axis=0)
            violating[fit_pos] = viol & has
        all_have = bool(has.all())
        if not all_have:
            names = table.names
            for i in np.flatnonzero(~has).tolist():
                p = int(fit_pos[i])
                fail_index[p] = len(out_statuses)
                out_statuses.append(
                    error(f'expected at least one victim pod on node "{names[int(rows[p])]}"')
                )
        pos = np.full(b, -1, dtype=np.int64)
        pos[fit_pos] = np.arange(nf)
        stats = (
            victim_stats(
                victim_slots,
                np.ascontiguousarray(v_prio.T),
                np.ascontiguousarray(v_start.T),
                known=None if v_known is None else np.ascontiguousarray(v_known.T),
                n_violating=n_violating if any_violating else None,
                nonempty=has if all_have else None,
            )
            if with_stats and nf and (all_have or has.any())
            else None
        )
        return VictimBatch(
            candidate,
            violating,
            fail_index,
            out_statuses,
            pos,
            victim_slots,
            entries,
            n_violating,
            self._key,
            stats,
        )

    def _reprieve_generic(
        self, fit_rows: IntArray, cur: IntArray, requests: IntArray, lens: IntArray
    ) -> BoolArray | None:
        """Step 4 through ``run_filter_what_if_passes``: ``slots[i, j]`` says the j-th
        potential victim of ``fit_rows[i]`` stays a victim (None: a filter cannot
        answer)."""
        h, state, pod = self._handle, self._state, self._pod
        max_len = requests.shape[1]
        victim_slots = np.zeros((len(fit_rows), max_len), dtype=np.bool_)
        for j in range(max_len):
            sel = np.flatnonzero(lens > j) if j else np.arange(len(fit_rows))
            if len(sel) == 0:
                continue
            cand = cur[sel] + requests[sel, j]
            ok = h.run_filter_what_if_passes(state, pod, fit_rows[sel], cand)
            if ok is None:
                return None
            cur[sel[ok]] = cand[ok]
            victim_slots[sel[~ok], j] = True
        return victim_slots

    def _resources(self) -> tuple[ResourceFit, ResourcePlan] | None:
        """The evaluator and this cycle's plan of the only active filter that depends
        on a node's pods, when it is a resource filter; None otherwise (the reprieve
        loop then asks the framework). Static filters need no asking: every row
        reprieved on passed them in the "all victims removed" check."""
        found = self._resource_filter
        if found is _UNKNOWN:
            found = self._resource_filter = self._find_resource_filter()
            self.cache.resource_filters[self._state.skip_filter_plugins] = found
        if found is None:
            return None
        plan = found.resource_plan(self._state, self._pod)
        return None if plan is None else (found.resource_fit, plan)

    def _find_resource_filter(self) -> ResourceFilterPlugin | None:
        """The only active non-static filter if it is a resource filter, or None."""
        runtime = self._extras.runtime
        if runtime is None:
            return None
        skip = self._state.skip_filter_plugins
        static = runtime.static_filters(self._state, self._pod)
        found: FilterPlugin | None = None
        for p in runtime.filter_plugins:
            if p.name in skip or p.name in static:
                continue
            if found is not None:
                return None
            found = p
        return found if isinstance(found, ResourceFilterPlugin) else None


_UNKNOWN: Final = object()
_SMALL: Final = 4
"""Stale rows up to which a batch's answers are computed in plain Python."""


class _Restart:
    """The table's layout changed while a batch was prepared: prepare it again."""


_RESTART = _Restart()

"""The batched dry run: DefaultPreemption's SelectVictimsOnNode for many nodes at once.

Used when the policy's victim selection is DefaultPreemption's (a ``VictimOrder``),
every active filter but one resource filter (``resources.ResourceFilterPlugin``) is
static and no active PreFilter keeps AddPod/RemovePod state: victim selection then
depends on a node's summed requests alone. For a batch of rows:

1. each node's potential victims, sorted and split by PDB as the per-node path
   does (``victim_cache.py``);
2. all of them come off the requests, the nominated pods of >= priority go on
   (the second nominated pass cannot fail where the first passed: these filters
   only get stricter as pods are added);
3. one what-if call answers "fits without any victim?" (failing rows keep their
   exact status);
4. victims are reprieved slot by slot on the plan alone (``ResourceFit.reprieve``).

It needs the runtime ``Framework``'s ``WhatIfRuntime`` (checked once per
Evaluator); with another handle the per-node path, the reference, runs. Rows whose
answer is kept in ``VictimCache`` are read, not recomputed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from kubesched.api.types import PodDisruptionBudget
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import FilterPlugin, Handle
from kubesched.framework.nodetable import BoolArray, IntArray
from kubesched.framework.preemption.batch import VictimBatch
from kubesched.framework.preemption.policy import MSG_NO_VICTIMS, VictimOrder
from kubesched.framework.preemption.victim_cache import VictimCache, node_victims
from kubesched.framework.preemption.victims import StatColumns, victim_stats
from kubesched.framework.resources import ResourceFilterPlugin, ResourceFit, ResourcePlan
from kubesched.framework.row_answers import PodSignature
from kubesched.framework.status import Status, error, unresolvable
from kubesched.framework.types import PodInfo


@runtime_checkable
class WhatIfRuntime(Protocol):
    """The runtime's view of its filters (``runtime.framework.Framework``)."""

    @property
    def filter_plugins(self) -> Sequence[FilterPlugin]:
        """Every Filter plugin of the profile, in order."""
        ...

    def static_filters(self, state: CycleState, pod: PodInfo) -> frozenset[str]:
        """The active filters whose verdicts for this cycle hold whatever pods the
        nodes hold (they need no asking in a dry run)."""
        ...

    def what_if_spec_determined(self, state: CycleState, pod: PodInfo) -> bool:
        """``run_filter_what_if``'s answers may be kept across dry runs (see
        ``Filtering.what_if_spec_determined``)."""
        ...


class VictimBatcher:
    """Answers batches of rows for one preemptor in one dry run (``__call__``); built
    by ``of`` only when the filters allow it (module docstring)."""

    def __init__(
        self,
        handle: Handle,
        runtime: WhatIfRuntime,
        fit: tuple[ResourceFit, ResourcePlan],
        order: VictimOrder,
        state: CycleState,
        pod: PodInfo,
        pdbs: Sequence[PodDisruptionBudget],
        cache: VictimCache,
    ) -> None:
        self._handle = handle
        self._fit, self._plan = fit
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
        self._answer_key: PodSignature | None = None
        """The preemptor's signature when whole answers may be kept per row
        (``victim_cache.py``), else None."""
        if self._cacheable and self._default_order and runtime.what_if_spec_determined(state, pod):
            self._answer_key = PodSignature(
                handle, pod.facts, state.skip_filter_plugins, pod.pod.priority, pod.pod.node_name
            )

    @staticmethod
    def of(
        handle: Handle,
        runtime: WhatIfRuntime,
        order: VictimOrder,
        state: CycleState,
        pod: PodInfo,
        pdbs: Sequence[PodDisruptionBudget],
        cache: VictimCache,
    ) -> VictimBatcher | None:
        """The batcher for this dry run, or None when no resource filter decides the
        reprieve alone (see the class docstring)."""
        skip = state.skip_filter_plugins
        if skip not in cache.resource_filters:
            cache.resource_filters[skip] = _resource_filter(runtime, state, pod)
        found = cache.resource_filters[skip]
        plan = None if found is None else found.resource_plan(state, pod)
        if plan is None:
            return None
        assert found is not None
        fit = (found.resource_fit, plan)
        return VictimBatcher(handle, runtime, fit, order, state, pod, pdbs, cache)

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
        (``victim_cache.py``); only the others are computed."""
        kept = self._entries(rows)
        if isinstance(kept, _Restart):
            return kept
        if not kept:
            return self._run(rows, cached=True)  # some row cannot be kept
        nominated = self._nominated()
        if isinstance(nominated, _Restart):
            return nominated
        table = self._handle.table
        cache = self.cache
        assert self._answer_key is not None
        cache.use((self._answer_key, table.node_generation, table.layout_generation))
        stale = cache.stale(rows, nominated)
        if len(stale) and not self._answer(rows.take(stale), nominated):
            return None
        return cache.batch(rows, self._key)

    def _answer(self, rows: IntArray, nominated: IntArray | None) -> bool:
        """``_run`` for a batch's stale rows (usually one or two: plain Python), straight
        into the kept answers; False when the filters cannot answer."""
        cache = self.cache
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
                    return False
                if one.is_success():
                    passes.append(0)
                else:
                    status_of[live[0]] = len(statuses)
                    statuses.append(one)
            else:
                what_if = h.run_filter_what_if(self._state, self._pod, live_rows, base)
                if what_if is None:
                    return False
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
                slots = self._fit.reprieve(
                    self._plan, table, fit_rows, base.take(passes, axis=0), victims
                )
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
                    statuses.append(_no_victim_error(table.names[row_list[i]]))
                    continue
                status_of[i] = -1
                keep.append(k)
                kept.append((i, victim))
            if keep:
                n = slots.shape[0]
                stats = victim_stats(
                    slots[:, keep],
                    cache.victim_priority.take(fit_rows[keep], axis=0)[:, :n].T,
                    cache.victim_start.take(fit_rows[keep], axis=0)[:, :n].T,
                    cache.victim_known.take(fit_rows[keep], axis=0)[:, :n].T,
                )
        cache.keep(rows, statuses, status_of, kept, stats, nominated)
        return True

    def _entries(self, rows: IntArray) -> _Restart | bool:
        """Bring the cache up to date for ``rows``; True when every entry may be kept
        (``VictimCache.valid``)."""
        pod = self._pod
        table = self._handle.table
        cache = self.cache
        cache.sync(table)
        infos = table.infos
        prio = pod.pod.priority
        if self._cacheable:
            stale = (~cache.valid[rows] | (cache.priority[rows] != prio)).nonzero()[0]
            stale_rows = rows.take(stale).tolist()
        else:
            stale_rows = rows.tolist()
        all_kept = True
        for row in stale_rows:
            node = infos[row]
            assert node is not None
            entry = node_victims(
                self._order, table, node, pod, self._pdbs, self._key, self._defaults
            )
            if table.layout_generation != cache.layout:
                return _RESTART
            # A kept entry's order must not depend on the clock (no unset start time).
            keep = self._cacheable and (
                entry is None or all(q.pod.start_time is not None for q in entry.ordered)
            )
            cache.store(row, prio, entry, keep)
            all_kept = all_kept and keep
        return all_kept

    def _nominated(self) -> _Restart | IntArray | None:
        """The counting nominated pods' summed requests as a (capacity, width) matrix
        (None: none), built once per preemptor and table layout."""
        h = self._handle
        table = h.table
        if self._load is None or self._load[0] != table.layout_generation:
            # When the index keeps the load as a matrix over table slots it is
            # handed out as is (nominations do not change during a dry run).
            index = h.nominator.load_index()
            dense = index.dense(self._pod, table)
            if table.layout_generation != self.cache.layout:
                return _RESTART
            if dense is None:
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
        if not cached:
            got = self._entries(rows)
            if isinstance(got, _Restart):
                return got
        nominated = self._nominated()
        if isinstance(nominated, _Restart):
            return nominated
        h, cache = self._handle, self.cache
        table = h.table
        b = len(rows)
        counts = cache.count.take(rows)
        no_victims = unresolvable(MSG_NO_VICTIMS)
        live = counts.nonzero()[0]
        if len(live) == 0:  # every row fails with no_victims (index 0)
            no, zeros = np.zeros(b, dtype=np.bool_), np.zeros(b, dtype=np.int64)
            empty, none = np.zeros((0, 0), dtype=np.bool_), np.empty(0, dtype=object)
            return VictimBatch(
                no, no, zeros, [no_victims], zeros - 1, empty, none, zeros, self._key, None
            )
        live_rows = rows.take(live)
        base = cache.base.take(live_rows, axis=0)  # take: much faster than [rows]
        if nominated is not None:
            # The nominated pods of equal or higher priority count (filter pass 1).
            base += nominated.take(live_rows, axis=0)
        what_if = h.run_filter_what_if(self._state, self._pod, live_rows, base)
        if what_if is None:
            return None
        index, statuses = what_if
        fits = (index < 0).nonzero()[0]
        nf = len(fits)
        fit_rows = live_rows.take(fits)
        fit_pos = live.take(fits)  # batch positions of the rows that fit without victims
        max_len = int(counts.take(fit_pos).max()) if nf else 0
        # Slots past a row's count hold zero requests (``VictimCache.store``).
        requests = cache.requests.take(fit_rows, axis=0)[:, :max_len]
        victim_slots = self._fit.reprieve(
            self._plan, table, fit_rows, base.take(fits, axis=0), requests
        )
        # Statuses: the what-if's, then "no victims", then per-node errors.
        out_statuses = list(statuses)
        fail_index = np.full(b, len(out_statuses), dtype=np.int64)
        out_statuses.append(no_victims)
        fail_index[live] = index
        has: BoolArray = np.asarray(victim_slots.any(axis=0))
        candidate = np.zeros(b, dtype=np.bool_)
        candidate[fit_pos] = has
        violating = np.zeros(b, dtype=np.bool_)
        n_violating = cache.n_violating.take(fit_rows)
        any_violating = bool(n_violating.any())
        if any_violating:
            viol = (victim_slots & (np.arange(max_len)[:, None] < n_violating)).any(axis=0)
            violating[fit_pos] = viol & has
        all_have = bool(has.all())
        if not all_have:
            for i in np.flatnonzero(~has).tolist():
                p = int(fit_pos[i])
                fail_index[p] = len(out_statuses)
                out_statuses.append(_no_victim_error(table.names[int(rows[p])]))
        pos = np.full(b, -1, dtype=np.int64)
        pos[fit_pos] = np.arange(nf)
        stats = None
        if self._default_order and nf and (all_have or has.any()):
            stats = victim_stats(
                victim_slots,
                np.ascontiguousarray(cache.victim_priority.take(fit_rows, axis=0)[:, :max_len].T),
                np.ascontiguousarray(cache.victim_start.take(fit_rows, axis=0)[:, :max_len].T),
                np.ascontiguousarray(cache.victim_known.take(fit_rows, axis=0)[:, :max_len].T),
                n_violating if any_violating else None,
            )
        return VictimBatch(
            candidate,
            violating,
            fail_index,
            out_statuses,
            pos,
            victim_slots,
            cache.ordered[fit_rows],  # the lists as of now (the cache moves on)
            n_violating,
            self._key,
            stats,
        )


def _resource_filter(
    runtime: WhatIfRuntime, state: CycleState, pod: PodInfo
) -> ResourceFilterPlugin | None:
    """The only active non-static filter if it is a resource filter, or None (it
    depends on the skipped filters only: every derived filter is static here)."""
    skip = state.skip_filter_plugins
    static = runtime.static_filters(state, pod)
    found: FilterPlugin | None = None
    for p in runtime.filter_plugins:
        if p.name in skip or p.name in static:
            continue
        if found is not None:
            return None
        found = p
    return found if isinstance(found, ResourceFilterPlugin) else None


def _no_victim_error(name: str) -> Status:
    return error(f'expected at least one victim pod on node "{name}"')


class _Restart:
    """The table's layout changed while a batch was prepared: prepare it again."""


_RESTART = _Restart()

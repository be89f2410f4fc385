"""SelectVictimsOnNode for many nodes at once, when the filters allow it.

When every active filter is static (its answer does not depend on the pods
of a node) or answers what-ifs on summed requests (NodeResourcesFit), and no
active PreFilter plugin keeps AddPod/RemovePod state, victim selection on a
node only depends on the node's summed requests. Then, for a batch of rows:

1. each node's potential victims (lower priority, in NodeInfo order) are
   sorted by importance and split by PDB exactly as the per-node path does;
2. all of them come off the node's requests, the nominated pods of equal or
   higher priority go on (the first pass of filtering with nominated pods —
   the second pass cannot fail where the first passed, because these
   filters only get stricter as pods are added);
3. one what-if filter call answers "does it fit without any victim?" for the
   whole batch (failing nodes keep their exact status);
4. victims are reprieved slot by slot: slot ``j`` adds the j-th victim of
   every node back, one what-if call decides for all nodes at once. When the
   only active filter that depends on a node's pods is NodeResourcesFit, this
   runs on its checked columns alone (``Fit.what_if_columns``: fits exactly
   when ``allocatable - requested >= need`` on each), column-major, with no
   framework call per slot (static filters passed in step 3 already).

Step 1 is cached per row in arrays (``VictimCache``: valid until the table logs
a change of the row (every NodeInfo change is mirrored there),
the preemptor's priority, what is left without the victims, each victim's
request) when it cannot depend on anything else: default eligibility and
ordering, no PDB, every potential victim with a start time. A batch then
gathers its rows with fancy indexing; only rows whose node changed run the
Python of step 1. Victim lists are built only for the rows the Evaluator
asks about (``VictimBatch.victims``): rows past its stop point cost array
work only. Under the same conditions, with spec-determined filters, each
row's whole answer is kept too (``answers.py``): a batch computes only the
rows whose answer went stale (a few of them in plain Python,
``VictimBatcher._answer_small``) and reads the others. The per-node path
remains the reference; tests compare both on random clusters.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from kubesched.api.types import PodDisruptionBudget
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import is_static_filter
from kubesched.framework.nodetable import BoolArray, IntArray, NodeTable
from kubesched.framework.preemption import (
    MSG_NO_VICTIMS,
)
from kubesched.framework.status import Status, error, unresolvable
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.framework.victims import MAX_INT32_PLUS_1, StatColumns, Victims
from kubesched.plugins.defaultpreemption.answers import AnswerCache, AnswerKey, FewStats

if TYPE_CHECKING:
    from kubesched.plugins.defaultpreemption.plugin import DefaultPreemption

Split = Callable[
    [Sequence[PodInfo], Sequence[PodDisruptionBudget]], tuple[list[PodInfo], list[PodInfo]]
]


class _NodeVictims:
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


class VictimCache:
    """Step 1 per row, as arrays, for one plugin instance (see the module docstring).

    Row ``r`` is valid for a preemptor of priority ``p`` when ``valid[r]`` (no
    change of the row logged by the table since it was stored: the table mirrors
    every NodeInfo change, its vector paths rely on that too) and
    ``priority[r] == p``; ``count[r]``
    victims (0: none), ``ordered[r]`` the PodInfos, ``base[r]`` the requests
    left without them, ``requests[r, j]`` the j-th victim's request vector,
    ``victim_priority[r, j]`` and ``victim_start[r, j]`` its priority and start
    time (cached victims all have one)."""

    __slots__ = (
        "answers",
        "ask_columns",
        "base",
        "count",
        "layout",
        "ordered",
        "priority",
        "requests",
        "seq",
        "table",
        "valid",
        "victim_priority",
        "victim_start",
    )

    def __init__(self) -> None:
        self.table: NodeTable | None = None
        self.layout = -1
        self.valid = np.zeros(0, dtype=np.bool_)
        self.seq = 0
        self.priority = np.zeros(0, dtype=np.int64)
        self.count = np.zeros(0, dtype=np.int64)
        self.base = np.zeros((0, 0), dtype=np.int64)
        self.requests = np.zeros((0, 0, 0), dtype=np.int64)
        self.victim_priority = np.zeros((0, 0), dtype=np.int64)
        self.victim_start = np.zeros((0, 0), dtype=np.int64)
        self.ordered: npt.NDArray[np.object_] = np.empty(0, dtype=object)
        """Row -> its ordered potential victims (a list; replaced, never mutated)."""
        self.answers = AnswerCache(0, 0, 0)
        """Each row's whole answer on top of its entry (``answers.py``)."""
        self.ask_columns: dict[frozenset[str], Any] = {}
        """Skipped filters -> ``VictimBatcher._find_columns()`` (the plugin's filters
        are fixed; a profile sees a handful of skip sets)."""

    def sync(self, table: NodeTable) -> None:
        """Start over when the table or its array layout (capacity, columns) changed."""
        if self.table is table and self.layout == table.layout_generation:
            changed = table.rows_changed_since(self.seq)
            if changed is None:
                self.valid[:] = False
            elif changed:
                self.valid[np.array(changed, dtype=np.int64)] = False
            self.seq = table.change_seq
            return
        cap, width = table.capacity, len(table.resources)
        self.table = table
        self.layout = table.layout_generation
        self.valid = np.zeros(cap, dtype=np.bool_)
        self.seq = table.change_seq
        self.priority = np.zeros(cap, dtype=np.int64)
        self.count = np.zeros(cap, dtype=np.int64)
        self.base = np.zeros((cap, width), dtype=np.int64)
        self.requests = np.zeros((cap, 4, width), dtype=np.int64)
        self.victim_priority = np.zeros((cap, 4), dtype=np.int64)
        self.victim_start = np.zeros((cap, 4), dtype=np.int64)
        self.ordered = np.empty(cap, dtype=object)
        self.answers = AnswerCache(cap, width, 4)

    def store(self, row: int, priority: int, entry: _NodeVictims | None) -> None:
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


class VictimBatch:
    """The answers for one batch of rows (``kubesched.framework.preemption.VictimBatch``).

    ``candidate[i]``: row i has a victim list (success, at least one victim);
    ``violating[i]``: and some of its victims violate a PDB; otherwise
    ``statuses[fail_index[i]]`` is the row's status. Rows that passed the
    "all victims removed" check are numbered by ``pos`` (-1: did not) in
    ``slots`` (``slots[j, k]``: the j-th potential victim of the k-th such row
    stays a victim — slot-major, so that per-row reductions run along axis 0,
    which numpy does much faster for a few slots), ``entries``
    (their ordered potential victims), ``n_violating`` (how many of those come
    first as PDB-violating) and ``stats`` (``VictimStats`` per row, when the
    default importance order sorts the victims)."""

    __slots__ = (
        "_entries",
        "_key",
        "_n_violating",
        "_num_violations",
        "_pos",
        "_slots",
        "_stats",
        "candidate",
        "fail_index",
        "statuses",
        "violating",
    )

    def __init__(
        self,
        candidate: BoolArray,
        violating: BoolArray,
        fail_index: IntArray,
        statuses: list[Status],
        pos: IntArray,
        slots: BoolArray,
        entries: npt.NDArray[np.object_],
        n_violating: IntArray,
        key: Callable[[PodInfo], Any],
        stats: StatColumns | None,
    ) -> None:
        self.candidate = candidate
        self.violating = violating
        self.fail_index = fail_index
        self.statuses = statuses
        self._pos = pos
        self._slots = slots
        self._entries = entries
        self._n_violating = n_violating
        self._key = key
        self._stats = stats
        self._num_violations: list[int] | None = None

    def victims(self, positions: IntArray) -> list[Victims]:
        """Victims of the candidates at ``positions`` (lists built on first use)."""
        ks = self._pos[positions]
        if self._stats is not None:
            if len(ks) == 1:
                # The chosen candidate alone (the usual call): scalars.
                k = ks.item(0)
                v1, h1, t1, c1, e1, has1, unset1 = [col.item(k) for col in self._stats]
                return [
                    Victims(
                        None,
                        v1,
                        make=functools.partial(self._pods, k),
                        stats=(v1, h1, t1, c1, e1 if has1 else None, bool(unset1)),
                    )
                ]
            v, h, t, c, e, has, unset = (col[ks].tolist() for col in self._stats)
            make = self._pods
            partial = functools.partial
            return [
                Victims(
                    None,
                    v[i],
                    make=partial(make, k),
                    stats=(v[i], h[i], t[i], c[i], e[i] if has[i] else None, unset[i]),
                )
                for i, k in enumerate(ks.tolist())
            ]
        if self._num_violations is None:
            n = self._slots.shape[0]
            first = np.arange(n)[:, None] < self._n_violating
            self._num_violations = (self._slots & first).sum(axis=0).tolist()
        return [Victims(self._pods(k), self._num_violations[k]) for k in ks.tolist()]

    def positions(self) -> IntArray:
        """Batch position -> column of ``slot_matrix`` (-1: the row failed before
        victims were chosen)."""
        return self._pos

    def slot_matrix(self) -> BoolArray:
        """``[j, k]``: the j-th potential victim of the k-th row that got as far as
        choosing victims stays a victim."""
        return self._slots

    def stats(self, positions: IntArray) -> StatColumns | None:
        """``VictimStats`` columns of the candidates at ``positions`` (None unless the
        plugin uses the default order and criteria); may be views of the batch's
        own columns: never write into them."""
        if self._stats is None:
            return None
        ks = self._pos[positions]
        v, h, t, c, e, has, unset = self._stats
        n = len(ks)
        if n:
            first = ks.item(0)
            if ks.item(n - 1) - first + 1 == n:
                # Consecutive candidates (the usual run of kept ones): views.
                sl = slice(first, first + n)
                return (v[sl], h[sl], t[sl], c[sl], e[sl], has[sl], unset[sl])
        return (v[ks], h[ks], t[ks], c[ks], e[ks], has[ks], unset[ks])

    def _pods(self, k: int) -> list[PodInfo]:
        slots: list[int] = np.flatnonzero(self._slots[:, k]).tolist()
        ordered: list[PodInfo] = self._entries[k]
        n_violating = int(self._n_violating[k])
        vs = [ordered[j] for j in slots]
        if n_violating and len(ordered) > n_violating:
            vs.sort(key=self._key)
        return vs


def _victim_stats(
    slots: BoolArray,
    n_violating: IntArray | None,
    priority: IntArray,
    start: IntArray,
    known: BoolArray | None,
    nonempty: BoolArray | None,
) -> StatColumns:
    """``VictimStats`` columns of each row's victims, all arrays slot-major:
    ``slots[j, i]`` says the j-th potential victim of row i stays a victim;
    ``priority``, ``start`` and ``known`` (it has a start time; None: all have)
    describe it; the first ``n_violating[i]`` potential victims violate a PDB
    (None: none does). ``nonempty``: ``slots.any(axis=0)`` when every row has a
    victim (None: not known). The victims of a row are sorted by the default
    order, so the first has the highest priority."""
    n, rows = slots.shape
    if n_violating is None:
        num_violations = np.zeros(rows, dtype=np.int64)
    else:
        num_violations = (slots & (np.arange(n)[:, None] < n_violating)).sum(axis=0)
    high = np.where(slots, priority, _INT64_MIN).max(axis=0)
    total = np.where(slots, priority + MAX_INT32_PLUS_1, 0).sum(axis=0)
    count = slots.sum(axis=0)
    top = slots & (priority == high)
    if known is None:
        earliest = np.where(top, start, _INT64_MAX).min(axis=0)
        has = nonempty if nonempty is not None else top.any(axis=0)
        return (num_violations, high, total, count, earliest, has, np.zeros(rows, np.bool_))
    top_known = top & known
    earliest = np.where(top_known, start, _INT64_MAX).min(axis=0)
    return (
        num_violations,
        high,
        total,
        count,
        earliest,
        top_known.any(axis=0),
        (top & ~known).any(axis=0),
    )


_INT64_MIN: Final = int(np.iinfo(np.int64).min)
_INT64_MAX: Final = int(np.iinfo(np.int64).max)
_NO_INTS: IntArray = np.zeros((0, 0), dtype=np.int64)


class VictimBatcher:
    """Answers batches of rows for one preemptor in one dry run (``__call__``)."""

    __slots__ = (
        "_answer_key",
        "_ask_columns",
        "_cacheable",
        "_default_order",
        "_defaults",
        "_key",
        "_load",
        "_pdbs",
        "_plugin",
        "_pod",
        "_split",
        "_state",
        "cache",
    )

    def __init__(
        self,
        plugin: DefaultPreemption,
        state: CycleState,
        pod: PodInfo,
        pdbs: Sequence[PodDisruptionBudget],
        split: Split,
        cache: VictimCache,
    ) -> None:
        self._plugin = plugin
        self._state = state
        self._pod = pod
        self._pdbs = pdbs
        self._split = split
        self.cache = cache
        self._key = _importance_key(plugin, plugin.handle.clock.now())
        self._defaults, self._default_order = _class_defaults(type(plugin))
        """Victims come sorted by priority and the default criteria pick among
        candidates: batches hand out ``VictimStats`` columns."""
        self._cacheable = self._defaults and not pdbs
        self._load: tuple[int, IntArray | None] | None = None
        self._ask_columns: Any = cache.ask_columns.get(state.skip_filter_plugins, _UNKNOWN)
        """``_find_columns()`` once known (it depends on the skipped filters only)."""
        h = plugin.handle
        determined = getattr(h, "what_if_spec_determined", None)
        self._answer_key: tuple[int, int, frozenset[str], int] | None = None
        """(framework, spec facts, skipped filters, priority) when whole answers
        may be kept per row (``answers.py``), else None."""
        if self._cacheable and self._default_order and determined is not None and determined(state):
            self._answer_key = (id(h), id(pod.facts), state.skip_filter_plugins, pod.pod.priority)

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
        table = self._plugin.handle.table
        answers = self.cache.answers
        assert self._answer_key is not None
        key: AnswerKey = (*self._answer_key, table.node_generation, table.layout_generation)
        answers.use(key, self._pod.facts)
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
        cand, status, pos, slots, entries, stats = answers.batch(rows, self.cache)
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
        """``_run`` for a few rows, in plain Python where numpy's per-call cost
        dominates, straight into the kept answers: the same what-if call for
        "every victim removed", then the reprieve on the fit columns and the
        victims' stats row by row. False when its condition does not hold (no
        fit columns); None when the filters cannot answer (as ``_run``)."""
        columns = self._columns()
        if columns is None:
            return False
        cols, need = columns
        cache, answers = self.cache, self.cache.answers
        counts = cache.count.take(rows).tolist()
        h = self._plugin.handle
        table = h.table
        row_list = rows.tolist()
        live = [i for i, c in enumerate(counts) if c]
        statuses: list[Status] = [unresolvable(MSG_NO_VICTIMS)]
        status_of = [0] * len(row_list)  # index into statuses; -1: a candidate
        passes: list[int] = []
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
            base_cols = base[:, cols].tolist() if passes else []
        need_l = need.tolist()
        width = len(need_l)
        kept: list[tuple[int, list[bool], FewStats]] = []
        for k in passes:
            i = live[k]
            r = row_list[i]
            n = counts[i]
            alloc = table.allocatable[r, cols].tolist()
            free = [a - b for a, b in zip(alloc, base_cols[k], strict=True)]
            reqs = cache.requests[r, :n][:, cols].tolist()
            victim = [False] * n
            for j in range(n):
                after = [free[c] - reqs[j][c] for c in range(width)]
                if all(after[c] >= need_l[c] for c in range(width)):
                    free = after
                else:
                    victim[j] = True
            if not any(victim):
                status_of[i] = len(statuses)
                statuses.append(
                    error(f'expected at least one victim pod on node "{table.names[r]}"')
                )
                continue
            status_of[i] = -1
            prios = cache.victim_priority[r, :n].tolist()
            starts = cache.victim_start[r, :n].tolist()
            chosen = [j for j in range(n) if victim[j]]
            high = max(prios[j] for j in chosen)
            total = sum(prios[j] + MAX_INT32_PLUS_1 for j in chosen)
            earliest = min(starts[j] for j in chosen if prios[j] == high)
            kept.append((i, victim, (0, high, total, len(chosen), earliest)))
        answers.keep_few(rows, statuses, status_of, kept, nominated)
        return True

    def _entries(self, rows: IntArray) -> _Restart | dict[int, _NodeVictims | None]:
        """Bring the cache up to date for ``rows``; the entries that cannot be cached
        by batch position."""
        plugin, pod = self._plugin, self._pod
        table = plugin.handle.table
        cache = self.cache
        cache.sync(table)
        infos = table.infos
        prio = pod.pod.priority
        if self._cacheable:
            stale = (~cache.valid[rows] | (cache.priority[rows] != prio)).nonzero()[0]
        else:
            stale = np.arange(len(rows))
        local: dict[int, _NodeVictims | None] = {}
        for p in stale.tolist():
            row = int(rows[p])
            node = infos[row]
            assert node is not None
            entry = _node_victims(
                plugin, table, node, pod, self._pdbs, self._split, self._key, self._defaults
            )
            if table.layout_generation != cache.layout:
                return _RESTART
            if self._cacheable and (entry is None or _cacheable(entry)):
                cache.store(row, prio, entry)
            else:
                local[p] = entry
        return local

    def _nominated(self) -> _Restart | IntArray | None:
        """The summed requests of the nominated pods that count, as a dense
        (capacity, width) matrix over table slots (None: there are none); built
        once per preemptor and table layout (batches then add it with one gather)."""
        h = self._plugin.handle
        table = h.table
        if self._load is None or self._load[0] != table.layout_generation:
            # A nominator that keeps the load as a matrix over table slots hands
            # it out as is (nominations do not change during a dry run).
            shared = getattr(h.nominator, "nominated_load_dense", None)
            dense: IntArray | None = None if shared is None else shared(self._pod, table)
            if table.layout_generation != self.cache.layout:
                return _RESTART
            if dense is not None:
                self._load = (table.layout_generation, dense)
                return dense
            load_rows, load = h.nominator.nominated_load(self._pod, table)
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
        h = self._plugin.handle
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
        local_live: list[tuple[int, _NodeVictims]] = []
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
        fit_local: list[tuple[int, _NodeVictims]] = []
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
        columns = self._columns() if max_len else None
        if columns is not None:
            victim_slots = _reprieve(table, fit_rows, cur, requests, *columns)
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
            _victim_stats(
                victim_slots,
                n_violating if any_violating else None,
                np.ascontiguousarray(v_prio.T),
                np.ascontiguousarray(v_start.T),
                None if v_known is None else np.ascontiguousarray(v_known.T),
                has if all_have else None,
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
        h, state, pod = self._plugin.handle, self._state, self._pod
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

    def _columns(self) -> tuple[IntArray, IntArray] | None:
        """``(cols, need)`` of the only active filter that depends on a node's pods,
        when it answers what-ifs by columns (NodeResourcesFit's
        ``what_if_columns``); None otherwise (the reprieve loop then asks the
        framework). Static filters need no asking: every row reprieved on
        passed them in the "all victims removed" check."""
        ask = self._ask_columns
        if ask is _UNKNOWN:
            ask = self._ask_columns = self._find_columns()
            self.cache.ask_columns[self._state.skip_filter_plugins] = ask
        if ask is None:
            return None
        got: tuple[IntArray, IntArray] | None = ask(self._state, self._pod)
        return got

    def _find_columns(self) -> Any:
        """The ``what_if_columns`` of the only active non-static filter, or None."""
        plugins = getattr(self._plugin.handle, "filter_plugins", None)
        if plugins is None:
            return None
        skip = self._state.skip_filter_plugins
        found: Any = None
        for p in plugins:
            if p.name in skip or is_static_filter(p):
                continue
            if found is not None:
                return None
            found = p
        return None if found is None else getattr(found, "what_if_columns", None)


def _reprieve(
    table: NodeTable,
    rows: IntArray,
    cur: IntArray,
    requests: IntArray,
    cols: IntArray,
    need: IntArray,
) -> BoolArray:
    """Step 4 on the columns a row's fit depends on: a row passes when its free
    amounts (``allocatable - requested``) are at least ``need`` on every column of
    ``cols``. ``cur[i]``: the summed requests of ``rows[i]`` with every potential
    victim gone (it passes); ``requests[i, j]``: the j-th potential victim's
    request (zero past the last: adding nothing keeps the row passing, so padded
    slots are never victims). Returns ``slots[j, i]`` (slot-major): the j-th
    potential victim of row i stays a victim. Works column-major: reductions
    over a few columns are several times faster along axis 0."""
    n, m = requests.shape[0], requests.shape[1]
    free = np.ascontiguousarray((table.allocatable.take(rows, axis=0)[:, cols] - cur[:, cols]).T)
    reqs = np.ascontiguousarray(requests[:, :, cols].transpose(1, 2, 0))  # (slot, col, row)
    need_c = need[:, None]
    slots = np.empty((m, n), dtype=np.bool_)
    for j in range(m):
        after = free - reqs[j]
        ok = np.logical_and.reduce(after >= need_c, axis=0)
        np.logical_not(ok, out=slots[j])
        np.copyto(free, after, where=ok)
    return slots


_UNKNOWN: Final = object()
_SMALL: Final = 4
"""Stale rows up to which a batch's answers are computed in plain Python."""


class _Restart:
    """The table's layout changed while a batch was prepared: prepare it again."""


_RESTART = _Restart()


def _node_victims(
    plugin: DefaultPreemption,
    table: NodeTable,
    node: NodeInfo,
    pod: PodInfo,
    pdbs: Sequence[PodDisruptionBudget],
    split: Split,
    key: Callable[[PodInfo], Any],
    defaults: bool,
) -> _NodeVictims | None:
    prio = pod.pod.priority
    if defaults:
        potential = [q for q in node.pods if q.pod.priority < prio]
    else:
        potential = [q for q in node.pods if plugin.is_preemption_allowed(node, q, pod)]
    if not potential:
        return None
    potential.sort(key=key)
    if pdbs:
        violating, non_violating = split(potential, pdbs)
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
    return _NodeVictims(ordered, len(violating), requests, base)


def _cacheable(entry: _NodeVictims) -> bool:
    """The order of these victims does not depend on the clock."""
    return all(q.pod.start_time is not None for q in entry.ordered)


_CLASS_DEFAULTS: dict[type, tuple[bool, bool]] = {}


def _class_defaults(cls: type[DefaultPreemption]) -> tuple[bool, bool]:
    """(``_default_policy``, ``_default_order``) of a plugin class, decided once."""
    got = _CLASS_DEFAULTS.get(cls)
    if got is None:
        got = _CLASS_DEFAULTS[cls] = (_default_policy(cls), _default_order(cls))
    return got


def _default_order(cls: type[DefaultPreemption]) -> bool:
    """The plugin uses the default importance order (victims sorted by priority)
    and the default criteria to pick a candidate (no ``ordered_score_funcs``)."""
    from kubesched.plugins.defaultpreemption.plugin import DefaultPreemption as Default

    return (
        cls.more_important_pod is Default.more_important_pod
        and cls.ordered_score_funcs is Default.ordered_score_funcs
    )


def _default_policy(cls: type[DefaultPreemption]) -> bool:
    """The plugin uses the default victim eligibility (strictly lower priority) and
    the default importance order."""
    from kubesched.plugins.defaultpreemption.plugin import DefaultPreemption as Default

    return (
        cls.is_preemption_allowed is Default.is_preemption_allowed
        and cls.is_eligible_pod is Default.is_eligible_pod
        and cls.more_important_pod is Default.more_important_pod
    )


def _importance_key(plugin: DefaultPreemption, now: int) -> Callable[[PodInfo], Any]:
    """Sort key for "more important first": a plain key for the default ordering
    (priority, then earlier start time; unset = now), else the plugin's comparator."""
    from kubesched.plugins.defaultpreemption.plugin import DefaultPreemption as Default

    if type(plugin).more_important_pod is Default.more_important_pod:

        def key(p: PodInfo) -> tuple[int, int]:
            t = p.pod.start_time
            return (-p.pod.priority, now if t is None else t)

        return key
    return functools.cmp_to_key(plugin._importance_cmp(now))

"""SelectVictimsOnNode for many nodes at once, when the filters allow it.

When every active filter is static (its answer does not depend on the pods
of a node) or answers what-ifs on summed requests (NodeResourcesFit), and no
active PreFilter plugin keeps AddPod/RemovePod state, victim selection on a
node only depends on the node's summed requests. Then, for a batch of nodes:

1. each node's potential victims (lower priority, in NodeInfo order) are
   sorted by importance and split by PDB exactly as the per-node path does;
2. all of them come off the node's requests, the nominated pods of equal or
   higher priority go on (the first pass of filtering with nominated pods —
   the second pass cannot fail where the first passed, because these
   filters only get stricter as pods are added);
3. one what-if filter call answers "does it fit without any victim?" for the
   whole batch (failing nodes keep their exact status);
4. victims are reprieved slot by slot: slot ``j`` adds the j-th victim of
   every node back, one what-if call decides for all nodes at once.

Step 1 is cached per node (its generation and the preemptor's priority) when
it cannot depend on anything else: default eligibility and ordering, no PDB,
every potential victim with a start time. The per-node path remains the
reference; tests compare both on random clusters.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from kubesched.api.types import PodDisruptionBudget
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.preemption import MSG_NO_VICTIMS
from kubesched.framework.status import SUCCESS, Status, unresolvable
from kubesched.framework.types import NodeInfo, PodInfo

if TYPE_CHECKING:
    from kubesched.plugins.defaultpreemption.plugin import DefaultPreemption

VictimResult = tuple[list[PodInfo], int, Status]
Split = Callable[
    [Sequence[PodInfo], Sequence[PodDisruptionBudget]], tuple[list[PodInfo], list[PodInfo]]
]


class _NodeVictims:
    """A node's ordered potential victims, their requests and what is left without them."""

    __slots__ = ("base", "generation", "n_violating", "ordered", "priority", "requests")

    def __init__(
        self,
        generation: int,
        priority: int,
        ordered: list[PodInfo],
        n_violating: int,
        requests: IntArray,
        base: IntArray,
    ) -> None:
        self.generation = generation
        self.priority = priority
        self.ordered = ordered
        self.n_violating = n_violating
        self.requests = requests
        """(victims, width): each victim's request vector (pods column = 1)."""
        self.base = base
        """The node's requests without any potential victim (no nominated pods)."""


class VictimCache:
    """Per-row cache of ``_NodeVictims`` for one plugin instance."""

    __slots__ = ("entries", "table")

    def __init__(self) -> None:
        self.table: NodeTable | None = None
        self.entries: dict[int, _NodeVictims] = {}


def select_victims_on_nodes(
    plugin: DefaultPreemption,
    state: CycleState,
    pod: PodInfo,
    nodes: Sequence[NodeInfo],
    pdbs: Sequence[PodDisruptionBudget],
    split: Split,
    cache: VictimCache,
) -> list[VictimResult] | None:
    """Results in ``nodes`` order, or None when the filters need the per-node path."""
    h = plugin.handle
    if not h.what_if_supported(state):
        return None
    table = h.table
    if cache.table is not table:
        cache.table = table
        cache.entries = {}
    now = h.clock.now()
    key = _importance_key(plugin, now)
    defaults = _default_policy(plugin)
    prio = pod.pod.priority
    results: list[VictimResult | None] = [None] * len(nodes)
    live: list[int] = []
    groups: list[_NodeVictims] = []
    rows: list[int] = []
    for pos, node in enumerate(nodes):
        row = table.row_of[node.name]
        entry = cache.entries.get(row) if defaults and not pdbs else None
        if entry is None or entry.generation != node.generation or entry.priority != prio:
            entry = _node_victims(plugin, table, node, pod, pdbs, split, key, defaults)
            if entry is None:
                results[pos] = ([], 0, unresolvable(MSG_NO_VICTIMS))
                continue
            if defaults and not pdbs and _cacheable(entry):
                cache.entries[row] = entry
        live.append(pos)
        groups.append(entry)
        rows.append(row)
    if not live:
        return [r for r in results if r is not None]
    width = len(table.resources)
    row_arr = np.array(rows, dtype=np.int64)
    base_m = np.zeros((len(rows), width), dtype=np.int64)
    for i, g in enumerate(groups):
        base_m[i, : g.base.shape[0]] = g.base
    load_rows, load = h.nominator.nominated_load(pod, table)
    width = len(table.resources)  # request_vector may have grown the axis
    if base_m.shape[1] < width:
        base_m = _widen(base_m, width)
    if len(load_rows):
        # The nominated pods of equal or higher priority count (filter pass 1).
        pos_of = np.searchsorted(load_rows, row_arr)
        pos_of[pos_of >= len(load_rows)] = 0
        hit = load_rows[pos_of] == row_arr
        if hit.any():
            base_m[hit, : load.shape[1]] += load[pos_of[hit]]
    what_if = h.run_filter_what_if(state, pod, row_arr, base_m)
    if what_if is None:
        return None
    index, statuses = what_if
    fits_all_removed = index < 0
    lens = np.array([len(g.ordered) for g in groups], dtype=np.int64)
    max_len = int(lens[fits_all_removed].max()) if fits_all_removed.any() else 0
    requests = np.zeros((len(groups), max_len, width), dtype=np.int64)
    for i, g in enumerate(groups):
        if fits_all_removed[i]:
            r = g.requests
            requests[i, : r.shape[0], : r.shape[1]] = r
    victim_slots = np.zeros((len(groups), max_len), dtype=np.bool_)
    for j in range(max_len):
        sel = np.flatnonzero(fits_all_removed & (lens > j))
        if len(sel) == 0:
            continue
        cand = base_m[sel] + requests[sel, j]
        ok = h.run_filter_what_if_passes(state, pod, row_arr[sel], cand)
        if ok is None:
            return None
        base_m[sel[ok]] = cand[ok]
        victim_slots[sel[~ok], j] = True
    for i, pos in enumerate(live):
        if not fits_all_removed[i]:
            results[pos] = ([], 0, statuses[int(index[i])])
            continue
        g = groups[i]
        slots = np.flatnonzero(victim_slots[i]).tolist()
        vs = [g.ordered[j] for j in slots]
        violated = sum(1 for j in slots if j < g.n_violating)
        if g.n_violating and len(g.ordered) > g.n_violating:
            vs.sort(key=key)
        results[pos] = (vs, violated, SUCCESS)
    return [r for r in results if r is not None]


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
    row = table.row_of[node.name]
    vectors = [table.request_vector(q) for q in potential]
    width = len(table.resources)
    base = table.requested[row].copy()
    if len(potential) == len(node.pods):
        base[:] = 0  # every pod goes: nothing of them is left
    else:
        for v in vectors:
            base[: len(v)] -= v
    by_pod = {id(q): v for q, v in zip(potential, vectors, strict=True)}
    potential.sort(key=key)
    if pdbs:
        violating, non_violating = split(potential, pdbs)
    else:
        violating, non_violating = [], potential
    ordered = violating + non_violating
    requests = np.zeros((len(ordered), width), dtype=np.int64)
    for j, q in enumerate(ordered):
        v = by_pod[id(q)]
        requests[j, : len(v)] = v
    return _NodeVictims(node.generation, prio, ordered, len(violating), requests, base)


def _cacheable(entry: _NodeVictims) -> bool:
    """The order of these victims does not depend on the clock."""
    return all(q.pod.start_time is not None for q in entry.ordered)


def _widen(m: npt.NDArray[np.int64], width: int) -> npt.NDArray[np.int64]:
    out = np.zeros((m.shape[0], width), dtype=np.int64)
    out[:, : m.shape[1]] = m
    return out


def _default_policy(plugin: DefaultPreemption) -> bool:
    """The plugin uses the default victim eligibility (strictly lower priority) and
    the default importance order."""
    from kubesched.plugins.defaultpreemption.plugin import DefaultPreemption as Default

    cls = type(plugin)
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

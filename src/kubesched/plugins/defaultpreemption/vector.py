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

The per-node path remains the reference; tests compare both on random clusters.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.types import PodDisruptionBudget
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.preemption import MSG_NO_VICTIMS
from kubesched.framework.status import SUCCESS, Status, unresolvable
from kubesched.framework.types import NodeInfo, PodInfo

if TYPE_CHECKING:
    from kubesched.plugins.defaultpreemption.plugin import DefaultPreemption

VictimResult = tuple[list[PodInfo], int, Status]


def select_victims_on_nodes(
    plugin: DefaultPreemption,
    state: CycleState,
    pod: PodInfo,
    nodes: Sequence[NodeInfo],
    pdbs: Sequence[PodDisruptionBudget],
    split: Callable[
        [Sequence[PodInfo], Sequence[PodDisruptionBudget]], tuple[list[PodInfo], list[PodInfo]]
    ],
) -> list[VictimResult] | None:
    """Results in ``nodes`` order, or None when the filters need the per-node path."""
    h = plugin.handle
    if not h.what_if_supported(state):
        return None
    table = h.table
    now = h.clock.now()
    key = functools.cmp_to_key(plugin._importance_cmp(now))
    width = len(table.resources)
    results: list[VictimResult | None] = [None] * len(nodes)
    live: list[int] = []  # positions in `nodes` that have potential victims
    ordered: list[list[PodInfo]] = []
    n_violating: list[int] = []
    rows: list[int] = []
    base_rows: list[np.ndarray] = []
    prio = pod.pod.priority
    uid = pod.pod.uid
    for pos, node in enumerate(nodes):
        potential = [q for q in node.pods if plugin.is_preemption_allowed(node, q, pod)]
        if not potential:
            results[pos] = ([], 0, unresolvable(MSG_NO_VICTIMS))
            continue
        row = table.row_of[node.name]
        base = table.requested[row].copy()
        for q in potential:
            base[:width] -= table.request_vector(q)[:width]
        for nom in h.nominator.nominated_pods_for_node(node.name):
            if nom.pod.priority >= prio and nom.pod.uid != uid:
                base[:width] += table.request_vector(nom)[:width]
        potential.sort(key=key)
        violating, non_violating = split(potential, pdbs)
        live.append(pos)
        ordered.append(violating + non_violating)
        n_violating.append(len(violating))
        rows.append(row)
        base_rows.append(base)
    if not live:
        return [r for r in results if r is not None]
    width = len(table.resources)  # request_vector may have grown the axis
    row_arr = np.array(rows, dtype=np.int64)
    base_m = np.zeros((len(rows), width), dtype=np.int64)
    for i, b in enumerate(base_rows):
        base_m[i, : len(b)] = b
    what_if = h.run_filter_what_if(state, pod, row_arr, base_m)
    if what_if is None:
        return None
    index, statuses = what_if
    fits_all_removed = index < 0
    victims: list[list[PodInfo]] = [[] for _ in live]
    violated = [0] * len(live)
    active = np.flatnonzero(fits_all_removed)
    max_len = max((len(ordered[i]) for i in active.tolist()), default=0)
    vec_cache: dict[int, np.ndarray] = {}
    for j in range(max_len):
        idx = [i for i in active.tolist() if j < len(ordered[i])]
        if not idx:
            continue
        sel = np.array(idx, dtype=np.int64)
        cand = base_m[sel].copy()
        for k, i in enumerate(idx):
            q = ordered[i][j]
            v = vec_cache.get(id(q))
            if v is None:
                v = table.request_vector(q)
                vec_cache[id(q)] = v
            cand[k, : len(v)] += v
        verdict = h.run_filter_what_if(state, pod, row_arr[sel], cand)
        if verdict is None:
            return None
        ok = verdict[0] < 0
        base_m[sel[ok]] = cand[ok]
        for k, i in enumerate(idx):
            if not ok[k]:
                victims[i].append(ordered[i][j])
                if j < n_violating[i]:
                    violated[i] += 1
    for i, pos in enumerate(live):
        if not fits_all_removed[i]:
            results[pos] = ([], 0, statuses[int(index[i])])
            continue
        vs = victims[i]
        if n_violating[i] and len(ordered[i]) > n_violating[i]:
            vs.sort(key=key)
        results[pos] = (vs, violated[i], SUCCESS)
    return [r for r in results if r is not None]

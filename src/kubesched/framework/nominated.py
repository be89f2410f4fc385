"""The load nominated pods put on nodes, computed from the Nominator's two lookups.

The scheduler's queue answers ``nominated_load`` from a cache; this plain
version is what it must equal, and what small nominators (test fakes) use.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import numpy as np

from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.types import PodInfo


class _Lookups(Protocol):
    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]: ...

    def nominated_node_names(self) -> list[str]: ...


def nominated_load(
    nominator: _Lookups, pod: PodInfo, table: NodeTable, nodes: Iterable[str] | None = None
) -> tuple[IntArray, IntArray]:
    """(rows, summed request vectors) of the nominated pods of priority >= the pod's
    (not the pod itself), per node with any, rows ascending; ``nodes``: only
    these nodes (default: every node with nominated pods)."""
    prio = pod.pod.priority
    uid = pod.pod.uid
    found: list[tuple[int, IntArray]] = []
    for name in nominator.nominated_node_names() if nodes is None else nodes:
        row = table.row_of.get(name)
        if row is None:
            continue
        for pi in nominator.nominated_pods_for_node(name):
            if pi.pod.priority >= prio and pi.pod.uid != uid:
                found.append((row, table.request_vector(pi)))
    width = len(table.resources)  # after request_vector may have grown the axis
    rows = sorted({r for r, _ in found})
    pos = {r: i for i, r in enumerate(rows)}
    out = np.zeros((len(rows), width), dtype=np.int64)
    for r, v in found:
        out[pos[r], : len(v)] += v
    return np.array(rows, dtype=np.int64), out

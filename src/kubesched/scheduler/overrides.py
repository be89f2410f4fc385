"""Exact statuses of the nodes holding nominated pods, and their per-row cache.

Filtering with nominated pods (upstream ``RunFilterPluginsWithNominatedPods``)
gives a node that holds nominated pods of equal or higher priority its own
answer: ``Overrides`` carries those answers for one scheduling cycle.

When the answer of every active filter is a function of the pod's spec, the
nodes' own state and a node's summed requests alone
(``Framework.what_if_spec_determined``), a row's answer can be reused for as
long as those inputs stay the same. ``OverrideRows`` keeps, per spec, each
row's last answer with the summed requests it was for; a cycle asks the
filters again only about the rows whose summed requests changed (a burst of
preemptors changes a node or two per cycle while a thousand hold nominated
pods).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo, SpecFacts
from kubesched.runtime.framework import Framework

NOT_OVERRIDDEN: Final = -2


@dataclass(slots=True)
class Overrides:
    """Exact statuses of the nodes holding nominated pods that count, as arrays:
    ``rows`` ascending, ``index[i]`` into ``statuses`` (-1 = the node passes).
    ``statuses`` may be shared with later answers, which only append to it."""

    rows: IntArray
    index: IntArray
    statuses: list[Status]
    _dense: IntArray | None = None
    """Row -> override index, ``NOT_OVERRIDDEN`` elsewhere; one slot past the
    largest row holds ``NOT_OVERRIDDEN`` too (rows beyond are clipped to it).
    Built on the first lookup (an answer may be reused over many cycles)."""

    def __bool__(self) -> bool:
        return len(self.rows) > 0

    def lookup(self, rows: IntArray) -> tuple[IntArray, IntArray]:
        """(positions of ``rows`` that are overridden, their override index)."""
        dense = self._dense
        if dense is None:
            dense = np.full(int(self.rows.max()) + 2, NOT_OVERRIDDEN, dtype=np.int64)
            dense[self.rows] = self.index
            self._dense = dense
        got = dense.take(rows, mode="clip")
        hit = (got != NOT_OVERRIDDEN).nonzero()[0]
        return hit, got[hit]

    @staticmethod
    def of(statuses: dict[int, Status]) -> Overrides:
        rows = sorted(statuses)
        out: list[Status] = []
        index: list[int] = []
        for row in rows:
            st = statuses[row]
            if st.is_success():
                index.append(-1)
            else:
                index.append(len(out))
                out.append(st)
        return Overrides(np.array(rows, dtype=np.int64), np.array(index, dtype=np.int64), out)


NO_OVERRIDES: Final = Overrides(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), [])

_UNKNOWN: Final = -3
_ENTRIES: Final = 8
"""Specs whose row answers are kept (workloads interleave a few pod templates)."""

_Key = tuple[int, int, frozenset[str], int, int, int]
"""(framework, spec facts, skipped filters, table, node generation, layout
generation): what a spec-determined what-if answer depends on besides the row
and its summed requests."""


class _Entry:
    """Row answers for one key: ``index[row]`` (-1 pass, else into ``statuses``,
    ``_UNKNOWN`` not asked yet) for summed requests ``summed[row]``."""

    __slots__ = ("facts", "fwk", "index", "status_pos", "statuses", "summed")

    def __init__(self, fwk: Framework, facts: SpecFacts, table: NodeTable) -> None:
        self.fwk = fwk
        self.facts = facts  # kept alive: the key holds its id
        self.index = np.full(table.capacity, _UNKNOWN, dtype=np.int64)
        self.summed = np.zeros((table.capacity, len(table.resources)), dtype=np.int64)
        self.statuses: list[Status] = []
        self.status_pos: dict[tuple[str, int, tuple[str, ...]], int] = {}

    def add(self, answers: list[Status]) -> IntArray:
        """Positions in ``statuses`` of ``answers`` (equal statuses share one)."""
        pos = self.status_pos
        out = np.empty(len(answers), dtype=np.int64)
        for i, s in enumerate(answers):
            k = (s.plugin, int(s.code), s.reasons)
            j = pos.get(k)
            if j is None:
                j = pos[k] = len(self.statuses)
                self.statuses.append(s)
            out[i] = j
        return out


class OverrideRows:
    """Per-row what-if answers of spec-determined cycles (see the module docstring)."""

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[_Key, _Entry] = {}

    def answer(
        self,
        fwk: Framework,
        state: CycleState,
        pod: PodInfo,
        rows: IntArray,
        summed: IntArray,
    ) -> Overrides | None:
        """``run_filter_what_if(state, pod, rows, summed)`` as ``Overrides`` (``rows``
        ascending and distinct; ``summed`` table-shaped); only rows whose summed
        requests differ from the last time are asked about. None when the
        framework cannot answer. Only for ``fwk.what_if_spec_determined(state)``."""
        table = fwk.table
        facts = pod.facts
        key = (
            id(fwk),
            id(facts),
            state.skip_filter_plugins,
            id(table),
            table.node_generation,
            table.layout_generation,
        )
        entry = self._entries.get(key)
        if entry is None or entry.facts is not facts or entry.fwk is not fwk:
            if len(self._entries) >= _ENTRIES:
                del self._entries[next(iter(self._entries))]
            entry = self._entries[key] = _Entry(fwk, facts, table)
        index = entry.index.take(rows)
        stale = index == _UNKNOWN
        stale |= (entry.summed.take(rows, axis=0) != summed).any(axis=1)
        ask = stale.nonzero()[0]
        if len(ask):
            ask_rows = rows.take(ask)
            got = fwk.run_filter_what_if(state, pod, ask_rows, summed.take(ask, axis=0))
            if got is None:
                return None
            found, statuses = got
            new = found.astype(np.int64)
            failing = new >= 0
            if failing.any():
                new[failing] = entry.add(statuses)[new[failing]]
            entry.index[ask_rows] = new
            entry.summed[ask_rows] = summed.take(ask, axis=0)
            index[ask] = new
        return Overrides(rows, index, entry.statuses)

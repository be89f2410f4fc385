"""Scoring: the PreScore and Score plugins of one profile over a set of nodes.

As upstream frameworkImpl: a failing PreScore fails the cycle (``ScoreError``);
PreScore Skips are left out of Score; each plugin's scores are normalised,
range-checked against [MIN_NODE_SCORE, MAX_NODE_SCORE] (the first out of range
fails the cycle) and weighted. Per-node ``score`` is the definition;
``score_vector`` / ``score_slots`` (own or derived) are faster forms, and
per-slot scores are summed across cycles (``_SlotTotal``). ``per_node`` forces
the per-node path.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    NodeSet,
    PreScorePlugin,
    ScorePlugin,
    SlotScorePlugin,
    VectorScorePlugin,
)
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.results import MAX_NODE_SCORE, MIN_NODE_SCORE, NodeScore
from kubesched.framework.status import Code
from kubesched.framework.types import PodInfo
from kubesched.runtime.derived_forms import DerivedAnswers, ScoreSlotsFn, ScoreVectorFn

_OK: Final = Code.SUCCESS
_SKIP: Final = Code.SKIP


_NO_SLOT_SCORERS: Final[Mapping[str, ScoreSlotsFn]] = {}


class ScoreError(Exception):
    """A Score / NormalizeScore / PreScore failure (the cycle ends with an error)."""


class Scoring:
    """The PreScore and Score plugins of one profile, the Score weights, and the
    per-slot totals."""

    def __init__(
        self,
        pre_score_plugins: Sequence[PreScorePlugin],
        score_plugins: Sequence[ScorePlugin],
        weights: Mapping[str, int],
        derived: DerivedAnswers | None = None,
    ) -> None:
        self.pre_score_plugins = pre_score_plugins
        self.score_plugins = score_plugins
        self.score_weights = weights
        # isinstance on Protocols is slow: resolve the vectorised forms once.
        self._score_vector: dict[str, ScoreVectorFn] = {}
        self._score_slots: dict[str, ScoreSlotsFn] = {}
        derived = derived or DerivedAnswers()
        for p in score_plugins:
            vector, slots = derived.score_forms(p)
            if vector is None and isinstance(p, VectorScorePlugin):
                vector = p.score_vector
            if slots is None and isinstance(p, SlotScorePlugin):
                slots = p.score_slots
            if vector is not None:
                self._score_vector[p.name] = vector
            if slots is not None:
                self._score_slots[p.name] = slots
        self._slot_totals: dict[tuple[tuple[str, int, int], ...], _SlotTotal] = {}
        self.per_node = False
        """Score with every plugin's per-node code only (``Framework.per_node``)."""

    def run_pre_score_plugins(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> None:
        skip: set[str] = set()
        for p in self.pre_score_plugins:
            s = p.pre_score(state, pod, nodes)
            code = s.code
            if code == _SKIP:
                skip.add(p.name)
            elif code != _OK:
                raise ScoreError(f'running PreScore plugin "{p.name}": {s.message()}')
        state.skip_score_plugins = frozenset(skip)

    def run_score_plugins(
        self, state: CycleState, pod: PodInfo, nodes: NodeSet
    ) -> tuple[IntArray, dict[str, IntArray]]:
        """(total weighted score per node, per-plugin weighted scores). Raises
        ScoreError for the first plugin (in order) that fails or returns a score
        outside [MIN_NODE_SCORE, MAX_NODE_SCORE]."""
        total, parts = self.score_parts(state, pod, nodes)
        return total, {name: s * w for name, w, s in _aligned(parts, nodes.rows)}

    def score_parts(
        self, state: CycleState, pod: PodInfo, nodes: NodeSet
    ) -> tuple[IntArray, list[ScorePart]]:
        """``run_score_plugins`` ungathered: parts (plugin, weight, unweighted scores,
        by_slot); a ``by_slot`` part covers every slot (index with ``nodes.rows``),
        the others align with ``nodes``. ``score_slots`` plugins come as one
        kept total (``_SlotTotal``)."""
        skip = state.skip_score_plugins
        weights = self.score_weights
        table = nodes.table
        slot_scorers = self._score_slots if not self.per_node else _NO_SLOT_SCORERS
        parts: list[ScorePart] = []
        n_slot = 0
        for p in self.score_plugins:
            name = p.name
            if name in skip:
                continue
            w = weights.get(name, 1)
            score_slots = slot_scorers.get(name)
            if score_slots is not None:
                v = score_slots(state, pod, table)
                if v is not None:
                    parts.append((name, w, v, True))
                    n_slot += 1
                    continue
            try:
                scores = self._plugin_scores(state, pod, nodes, p)
            except ScoreError:
                # An earlier plugin's out-of-range score is reported first.
                _check_score_range(_aligned(parts, nodes.rows))
                raise
            parts.append((name, w, scores, False))
        rows = nodes.rows
        n = len(rows)
        total: IntArray | None = None
        if n_slot:
            slot_total = self._slot_total(table, parts, n_slot)
            if slot_total is None:
                # Some slot holds an out-of-range score: check and sum as usual.
                parts = [
                    (nm, w, v[rows], False) if by_slot else (nm, w, v, False)
                    for nm, w, v, by_slot in parts
                ]
                n_slot = 0
            else:
                total = slot_total[rows]
        if len(parts) > n_slot:
            aligned = [(nm, w, v) for nm, w, v, by_slot in parts if not by_slot]
            if len(aligned) == 1:
                stacked = aligned[0][2]
            else:
                # One (plugins x nodes) matrix: the range check and the weighted sum
                # are a few numpy calls whatever the number of plugins.
                stacked = np.array([a[2] for a in aligned], dtype=np.int64)
            if n:
                flat = stacked.ravel()
                # argmax/argmin are much cheaper than max/min reductions for int64.
                if flat[flat.argmax()] > MAX_NODE_SCORE or flat[flat.argmin()] < MIN_NODE_SCORE:
                    _check_score_range(aligned)
            if len(aligned) == 1:
                w = aligned[0][1]
                rest: IntArray = stacked * w if w != 1 else stacked
                total = rest.astype(np.int64) if total is None else total + rest
            else:
                w_arr = np.array([a[1] for a in aligned], dtype=np.int64)
                rest = w_arr @ stacked
                total = rest if total is None else total + rest
        if total is None:
            total = np.zeros(n, dtype=np.int64)
        return total, parts

    def _slot_total(self, table: NodeTable, parts: list[ScorePart], n_slot: int) -> IntArray | None:
        """The weighted sum of the by-slot parts for every slot, up to date; None
        when a live slot holds a score out of range (callers then check as usual)."""
        slot_parts = [(nm, w, v) for nm, w, v, by_slot in parts if by_slot]
        key = tuple((nm, w, id(v)) for nm, w, v in slot_parts)
        totals = self._slot_totals
        e = totals.pop(key, None)
        if e is not None and not e.valid_for(table, slot_parts):
            e = None
        if e is None:
            e = _SlotTotal(table, slot_parts)
        else:
            e.sync(table)
        totals[key] = e
        if len(totals) > 8:
            del totals[next(iter(totals))]
        return e.total if e.ok else None

    def _plugin_scores(
        self, state: CycleState, pod: PodInfo, nodes: NodeSet, p: ScorePlugin
    ) -> IntArray:
        score_vector = None if self.per_node else self._score_vector.get(p.name)
        if score_vector is not None:
            v = score_vector(state, pod, nodes)
            if v is not None:
                return v
        lst: list[NodeScore] = []
        for info in nodes.infos:
            score, s = p.score(state, pod, info)
            if not s.is_success():
                raise ScoreError(
                    f'running Score plugins: plugin "{p.name}" failed with: {s.message()}'
                )
            lst.append(NodeScore(info.name, score))
        ext = p.score_extensions()
        if ext is not None:
            s = ext.normalize_score(state, pod, lst)
            if not s.is_success():
                raise ScoreError(
                    "running Normalize on Score plugins: "
                    f'plugin "{p.name}" failed with: {s.message()}'
                )
        return np.fromiter((x.score for x in lst), dtype=np.int64, count=len(lst))


ScorePart = tuple[str, int, IntArray, bool]
"""(plugin, weight, unweighted scores, by_slot): see ``Framework.score_parts``."""


def _aligned(parts: Sequence[ScorePart], rows: IntArray) -> list[tuple[str, int, IntArray]]:
    return [(nm, w, v[rows] if by_slot else v) for nm, w, v, by_slot in parts]


class _SlotTotal:
    """The weighted per-slot sum of some plugins' ``score_slots``, kept current from
    the change log; ``ok`` False once a live slot is out of range."""

    __slots__ = ("arrays", "layout", "ok", "seq", "table", "total", "weights")

    def __init__(self, table: NodeTable, parts: Sequence[tuple[str, int, IntArray]]) -> None:
        self.table = weakref.ref(table)
        self.layout = table.layout_generation
        self.seq = table.change_seq
        self.arrays = [v for _, _, v in parts]
        self.weights = [w for _, w, _ in parts]
        self.total = np.zeros(table.capacity, dtype=np.int64)
        self.ok = True
        self._refresh(np.flatnonzero(table.alive))

    def _refresh(self, rows: IntArray) -> None:
        """Recompute the totals of the live ``rows`` (clearing ``ok`` when one
        holds a score out of range)."""
        sub = np.zeros(len(rows), dtype=np.int64)
        for v, w in zip(self.arrays, self.weights, strict=True):
            vals = v[rows]
            if len(vals) and (
                vals[vals.argmax()] > MAX_NODE_SCORE or vals[vals.argmin()] < MIN_NODE_SCORE
            ):
                self.ok = False
            sub += vals * w
        self.total[rows] = sub

    def valid_for(self, table: NodeTable, parts: Sequence[tuple[str, int, IntArray]]) -> bool:
        return (
            self.table() is table
            and self.layout == table.layout_generation
            and all(a is v for a, (_, _, v) in zip(self.arrays, parts, strict=True))
        )

    def sync(self, table: NodeTable) -> None:
        seq = table.change_seq
        if self.seq == seq:
            return
        changed = table.rows_changed_since(self.seq)
        self.seq = seq
        if changed is None or len(changed) > 64:
            rows = np.arange(table.capacity) if changed is None else np.unique(changed)
            self._refresh(rows[table.alive[rows]])
            return
        alive = table.alive
        pairs = list(zip(self.arrays, self.weights, strict=True))
        total = self.total
        for r in set(changed):
            if not alive[r]:
                continue
            acc = 0
            for v, w in pairs:
                x = int(v[r])
                if x > MAX_NODE_SCORE or x < MIN_NODE_SCORE:
                    self.ok = False
                acc += x * w
            total[r] = acc


def _check_score_range(raw: Sequence[tuple[str, int, IntArray]]) -> None:
    """Raise ScoreError for the first plugin with a score outside the node-score range."""
    for name, _, scores in raw:
        bad = (scores > MAX_NODE_SCORE) | (scores < MIN_NODE_SCORE)
        if bad.any():
            raise ScoreError(
                f'applying score defaultWeights on Score plugins: plugin "{name}" returns an '
                f"invalid score {int(scores[bad][0])}, it should in the range of "
                f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
            )

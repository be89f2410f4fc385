"""The generic exact-versus-vector checkers of the plugin tests (the plugins'
``FakeHandle`` is in ``tests/fakes.py``).

``check_filter`` / ``check_score`` run a plugin's per-node path over
every node and assert that its vectorised path (its own or the runtime's derived one) gives the same
statuses and scores, then return the exact results for the test to assert.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    FilterPlugin,
    NodeSet,
    PreScorePlugin,
    ScorePlugin,
    SlotScorePlugin,
    VectorScorePlugin,
)
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.results import NodeScore
from kubesched.framework.status import SUCCESS, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.derived_forms import DerivedAnswers, FilterForms

# --------------------------------------------------------------------------- checkers


def table_infos(table: NodeTable) -> list[NodeInfo]:
    """NodeInfos in the order the nodes were added (row order for a fresh table)."""
    rows = sorted(table.row_of.values())
    return [table.infos[r] for r in rows]  # type: ignore[misc]


def check_filter(
    plugin: object, state: CycleState, pod: PodInfo, table: NodeTable
) -> dict[str, Status]:
    """Exact Filter statuses by node name; asserts the vector path agrees on every node."""

    assert isinstance(plugin, FilterPlugin)
    exact = {info.name: plugin.filter(state, pod, info) for info in table_infos(table)}
    # The vectorised form the runtime uses: the plugin's own or the derived one.
    vector = FilterForms.of(plugin).vector
    if vector is not None:
        v = vector(state, pod, table)
        if v is not None:
            assert len(v.index) == table.capacity
            for name, status in exact.items():
                i = int(v.index[table.row_of[name]])
                got = SUCCESS if i < 0 else v.statuses[i]
                assert got == status, f"{name}: vector {got!r} != exact {status!r}"
                assert got.code == status.code
    return exact


def check_score(
    plugin: object,
    state: CycleState,
    pod: PodInfo,
    table: NodeTable,
    names: Sequence[str] | None = None,
) -> tuple[Status, dict[str, int]]:
    """(PreScore status, final scores by node name) on the exact path, asserting the
    vector path gives the same scores (``score_vector``, and ``score_slots`` when it
    answers). Scores are empty when PreScore did not succeed."""
    assert isinstance(plugin, ScorePlugin)
    infos = table_infos(table)
    if names is not None:
        infos = [i for i in infos if i.name in names]
    rows = np.array([table.row_of[i.name] for i in infos], dtype=np.int64)
    nodes = NodeSet(table, rows, infos)
    pre = SUCCESS
    if isinstance(plugin, PreScorePlugin):
        pre = plugin.pre_score(state, pod, nodes)
        if not pre.is_success():
            return pre, {}
    scores: list[NodeScore] = []
    for info in infos:
        score, s = plugin.score(state, pod, info)
        assert s.is_success(), s
        scores.append(NodeScore(info.name, score))
    ext = plugin.score_extensions()
    if ext is not None:
        s = ext.normalize_score(state, pod, scores)
        assert s.is_success(), s
    exact = {x.name: x.score for x in scores}
    score_vector, score_slots = DerivedAnswers().score_forms(plugin)
    if score_vector is None and isinstance(plugin, VectorScorePlugin):
        score_vector = plugin.score_vector
    if score_slots is None and isinstance(plugin, SlotScorePlugin):
        score_slots = plugin.score_slots
    if score_vector is not None:
        v = score_vector(state, pod, nodes)
        if v is not None:
            assert v.dtype == np.int64
            got = {info.name: int(x) for info, x in zip(infos, v.tolist(), strict=True)}
            assert got == exact, f"vector {got} != exact {exact}"
    if score_slots is not None:
        slots = score_slots(state, pod, table)
        if slots is not None:
            assert len(slots) == table.capacity
            got = {info.name: int(slots[table.row_of[info.name]]) for info in infos}
            assert got == exact, f"slots {got} != exact {exact}"
    return pre, exact

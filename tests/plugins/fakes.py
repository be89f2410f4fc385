"""Test doubles for plugins, and the generic exact-versus-vector checkers.

``FakeHandle`` implements the ``Handle`` Protocol with a table, a seeded random
source and a writer that records binds; the rest raises if a plugin reaches
for it. ``check_filter`` / ``check_score`` run a plugin's per-node path over
every node and assert that its vector path (when it offers one) gives the same
statuses and scores, then return the exact results for the test to assert.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from kubesched.api.storage import PersistentVolume, PersistentVolumeClaim
from kubesched.api.types import Namespace, Pod, PodCondition, PodDisruptionBudget, Time
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    FilterPlugin,
    NodeSet,
    Nominator,
    PreScorePlugin,
    ScorePlugin,
    VectorFilterPlugin,
    VectorScorePlugin,
)
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.ports import Clock, ClusterReader, ClusterWriter, EventRecorder
from kubesched.framework.results import NodeScore
from kubesched.framework.status import SUCCESS, Status
from kubesched.framework.types import NodeInfo, PodInfo
from tests.storage_fakes import FakeStorage

# --------------------------------------------------------------------------- ports


@dataclass
class RecordingWriter:
    """A ClusterWriter that records calls; ``fail`` makes ``bind`` raise it."""

    binds: list[tuple[Pod, str]] = field(default_factory=list)
    fail: Exception | None = None

    def bind(self, pod: Pod, node_name: str) -> None:
        if self.fail is not None:
            raise self.fail
        self.binds.append((pod, node_name))

    def patch_pod_status(
        self,
        pod: Pod,
        *,
        condition: PodCondition | None = None,
        nominated_node_name: str | None = None,
    ) -> None:
        raise NotImplementedError

    def delete_pod(self, pod: Pod) -> None:
        raise NotImplementedError

    def update_pv(self, pv: PersistentVolume) -> None:
        raise NotImplementedError

    def update_pvc(self, pvc: PersistentVolumeClaim) -> None:
        raise NotImplementedError


class _NoNominations:
    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return []

    def nominated_node_names(self) -> list[str]:
        return []

    def nominated_load(self, pod: PodInfo, table: NodeTable) -> tuple[IntArray, IntArray]:
        return np.zeros(0, dtype=np.int64), np.zeros((0, len(table.resources)), dtype=np.int64)


class _ZeroClock:
    def now(self) -> Time:
        return 0


class _EmptyReader:
    def get_pod(self, namespace: str, name: str) -> Pod | None:
        return None

    def pdbs(self) -> Sequence[PodDisruptionBudget]:
        return ()

    def namespace(self, name: str) -> Namespace | None:
        return None

    def storage(self) -> FakeStorage:
        return FakeStorage()


class FakeHandle:
    """The parts of ``Handle`` plugins in these tests use."""

    def __init__(self, table: NodeTable | None = None, seed: int = 4) -> None:
        self._table = table if table is not None else NodeTable()
        self._rng = random.Random(seed)
        self.writer_impl = RecordingWriter()

    @property
    def table(self) -> NodeTable:
        return self._table

    @property
    def nominator(self) -> Nominator:
        return _NoNominations()

    @property
    def clock(self) -> Clock:
        return _ZeroClock()

    @property
    def rng(self) -> random.Random:
        return self._rng

    @property
    def reader(self) -> ClusterReader:
        return _EmptyReader()

    @property
    def writer(self) -> ClusterWriter:
        return self.writer_impl

    @property
    def recorder(self) -> EventRecorder:
        raise AssertionError("plugin used the event recorder")

    @property
    def scheduler_name(self) -> str:
        return "default-scheduler"

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node: NodeInfo
    ) -> Status:
        raise AssertionError("plugin ran filter plugins")

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo
    ) -> Status:
        raise AssertionError("plugin ran AddPod")

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo
    ) -> Status:
        raise AssertionError("plugin ran RemovePod")

    def activate(self, pods: Sequence[Pod]) -> None:
        raise AssertionError("plugin activated pods")

    def pdbs(self) -> Sequence[PodDisruptionBudget]:
        return ()


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
    if isinstance(plugin, VectorFilterPlugin):
        v = plugin.filter_vector(state, pod, table)
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
    vector path gives the same scores. Scores are empty when PreScore did not succeed."""
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
    if isinstance(plugin, VectorScorePlugin):
        v = plugin.score_vector(state, pod, nodes)
        if v is not None:
            assert v.dtype == np.int64
            got = {info.name: int(x) for info, x in zip(infos, v.tolist(), strict=True)}
            assert got == exact, f"vector {got} != exact {exact}"
    return pre, exact

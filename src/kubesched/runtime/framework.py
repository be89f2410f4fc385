"""Framework: the plugins of one profile and the runner of each extension point.

Built from a ``Profile`` and a registry (plugin name -> factory). It is also
the ``Handle`` its plugins receive: the handle's services (node table, nominator,
clock, random source, cluster reader/writer, recorder) come from a
``Services`` object the scheduler supplies.

Runner semantics follow upstream's frameworkImpl (runtime/framework.go):
PreFilter runs all plugins when one says Unschedulable and stops at the
first UnschedulableAndUnresolvable; Filter stops at the first non-success
and wraps non-rejections as errors; PostFilter stops at the first success,
UnschedulableAndUnresolvable or error; PreScore/Score skip plugins that
returned Skip; scores are normalised, range-checked and weighted.
"""

from __future__ import annotations

import functools
import random
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from kubesched.api.errors import InputError
from kubesched.api.types import Pod, PodDisruptionBudget
from kubesched.framework.config import (
    BIND,
    FILTER,
    PERMIT,
    POST_BIND,
    POST_FILTER,
    PRE_BIND,
    PRE_ENQUEUE,
    PRE_FILTER,
    PRE_SCORE,
    QUEUE_SORT,
    RESERVE,
    SCORE,
    PluginArgs,
    Profile,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.interfaces import (
    BindPlugin,
    EnqueueExtensions,
    FilterPlugin,
    NodeSet,
    Nominator,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueuedInfo,
    QueueSortPlugin,
    ReservePlugin,
    RowFilterPlugin,
    ScorePlugin,
    SlotScorePlugin,
    VectorFilterPlugin,
    VectorScorePlugin,
    Verdicts,
    WhatIfFilterPlugin,
    is_static_filter,
    pass_index,
)
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.ports import (
    Clock,
    ClusterReader,
    ClusterWriter,
    EventRecorder,
    MetricsRecorder,
)
from kubesched.framework.results import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    NodeScore,
    NodeToStatus,
    NominatingMode,
    PostFilterResult,
    PreFilterResult,
)
from kubesched.framework.status import SUCCESS, Code, Status, error, unresolvable
from kubesched.framework.types import NodeInfo, PodInfo

PluginFactory = Callable[[PluginArgs | None, "Framework"], Plugin]


@dataclass(slots=True)
class Services:
    """What the scheduler lends every profile's framework."""

    table: NodeTable
    nominator: Nominator
    clock: Clock
    rng: random.Random
    reader: ClusterReader
    writer: ClusterWriter
    recorder: EventRecorder
    metrics: MetricsRecorder
    activate: Callable[[Sequence[Pod]], None]


class ScoreError(Exception):
    """A Score / NormalizeScore / PreScore failure (the cycle ends with an error)."""


class Framework:
    """One profile's plugins, by extension point, and their runners."""

    def __init__(
        self,
        profile: Profile,
        registry: Mapping[str, PluginFactory],
        services: Services,
    ) -> None:
        self.profile = profile
        self.services = services
        self._instances: dict[str, Plugin] = {}

        def get(name: str) -> Plugin:
            inst = self._instances.get(name)
            if inst is None:
                factory = registry.get(name)
                if factory is None:
                    raise KeyError(f"plugin {name!r} does not exist")
                inst = factory(profile.plugin_args.get(name), self)
                self._instances[name] = inst
            return inst

        def point(name: str) -> list[Plugin]:
            plugins = [get(ref.name) for ref in profile.enabled(name)]
            kind = _POINT_PROTOCOLS[name]
            for ref, p in zip(profile.enabled(name), plugins, strict=True):
                if not isinstance(p, kind):
                    raise InputError(
                        f'plugin "{ref.name}" does not extend {kind.__name__} plugin',
                        obj="KubeSchedulerConfiguration",
                        field=f"profiles[{profile.scheduler_name}].plugins.{name}",
                    )
            return plugins

        self.pre_enqueue_plugins = [
            p for p in point(PRE_ENQUEUE) if isinstance(p, PreEnqueuePlugin)
        ]
        qs = [p for p in point(QUEUE_SORT) if isinstance(p, QueueSortPlugin)]
        self.queue_sort: QueueSortPlugin | None = qs[0] if qs else None
        self.pre_filter_plugins = [p for p in point(PRE_FILTER) if isinstance(p, PreFilterPlugin)]
        self.filter_plugins = [p for p in point(FILTER) if isinstance(p, FilterPlugin)]
        self.post_filter_plugins = [
            p for p in point(POST_FILTER) if isinstance(p, PostFilterPlugin)
        ]
        self.pre_score_plugins = [p for p in point(PRE_SCORE) if isinstance(p, PreScorePlugin)]
        self.score_plugins = [p for p in point(SCORE) if isinstance(p, ScorePlugin)]
        self.score_weights = {ref.name: ref.weight or 1 for ref in profile.enabled(SCORE)}
        self.reserve_plugins = [p for p in point(RESERVE) if isinstance(p, ReservePlugin)]
        self.permit_plugins = [p for p in point(PERMIT) if isinstance(p, PermitPlugin)]
        self.pre_bind_plugins = [p for p in point(PRE_BIND) if isinstance(p, PreBindPlugin)]
        self.bind_plugins = [p for p in point(BIND) if isinstance(p, BindPlugin)]
        self.post_bind_plugins = [p for p in point(POST_BIND) if isinstance(p, PostBindPlugin)]
        # isinstance on Protocols is slow: decide once which plugins have vector forms.
        self._non_vector_filters = frozenset(
            p.name for p in self.filter_plugins if not isinstance(p, VectorFilterPlugin)
        )
        self._vector_by_skip: dict[frozenset[str], bool] = {}
        self._active_filters: dict[frozenset[str], tuple[FilterPlugin, ...]] = {}
        self._vector_scorers = frozenset(
            p.name for p in self.score_plugins if isinstance(p, VectorScorePlugin)
        )
        self._slot_scorers = frozenset(
            p.name for p in self.score_plugins if isinstance(p, SlotScorePlugin)
        )
        self._slot_totals: dict[tuple[tuple[str, int, int], ...], _SlotTotal] = {}
        self._row_filters = {
            p.name: p.filter_rows for p in self.filter_plugins if isinstance(p, RowFilterPlugin)
        }
        # (plugin, status) -> the status stamped with the plugin: plugins return the
        # same few statuses every cycle, so stamping allocates nothing.
        self._stamped: dict[tuple[str, Status], Status] = {}
        self._spec_steps: dict[
            tuple[int, frozenset[str], int, int, int], tuple[object, object]
        ] = {}
        """``_what_if_steps`` across cycles when they are spec-determined: (spec
        facts id, skipped plugins, table id, node and layout generations) ->
        (the facts, held so that the id stays theirs; the steps)."""
        self._skip_sets: dict[frozenset[str], frozenset[str]] = {}
        self._skip_answers_memo: dict[frozenset[str], tuple[bool, bool]] = {}
        self.per_node = False
        """Run every point through the plugins' per-node code only (no vectorised
        path): ``--exact`` / ``--per-node`` and the tests that compare both paths."""

    # ------------------------------------------------------------------ Handle
    @property
    def scheduler_name(self) -> str:
        return self.profile.scheduler_name

    @property
    def table(self) -> NodeTable:
        return self.services.table

    @property
    def nominator(self) -> Nominator:
        return self.services.nominator

    @property
    def clock(self) -> Clock:
        return self.services.clock

    @property
    def rng(self) -> random.Random:
        return self.services.rng

    @property
    def reader(self) -> ClusterReader:
        return self.services.reader

    @property
    def writer(self) -> ClusterWriter:
        return self.services.writer

    @property
    def recorder(self) -> EventRecorder:
        return self.services.recorder

    @property
    def metrics(self) -> MetricsRecorder:
        return self.services.metrics

    def activate(self, pods: Sequence[Pod]) -> None:
        self.services.activate(pods)

    def pdbs(self) -> Sequence[PodDisruptionBudget]:
        return self.services.reader.pdbs()

    def plugins(self) -> list[Plugin]:
        """Every instantiated plugin of this profile (each once)."""
        return list(self._instances.values())

    def events_to_register(self) -> dict[str, list[ClusterEventWithHint]]:
        """Plugin name -> events that may make a pod it rejected schedulable."""
        return {
            p.name: p.events_to_register()
            for p in self._instances.values()
            if isinstance(p, EnqueueExtensions)
        }

    # ------------------------------------------------------------------ queue
    def less(self, a: QueuedInfo, b: QueuedInfo) -> bool:
        assert self.queue_sort is not None
        return self.queue_sort.less(a, b)

    def run_pre_enqueue_plugins(self, pod: Pod) -> Status:
        for p in self.pre_enqueue_plugins:
            s = p.pre_enqueue(pod)
            if not s.is_success():
                if s.is_rejected():
                    return s.with_plugin(p.name)
                return Status(
                    Code.ERROR,
                    f'running PreEnqueue plugin "{p.name}": {s.message()}',
                    plugin=p.name,
                )
        return SUCCESS

    # ------------------------------------------------------------------ PreFilter
    def run_pre_filter_plugins(
        self, state: CycleState, pod: PodInfo
    ) -> tuple[PreFilterResult | None, Status, list[str]]:
        """(merged result, status, plugins that narrowed the node set)."""
        result: PreFilterResult | None = None
        plugins_with_nodes: list[str] = []
        skip: set[str] = set()
        ret = SUCCESS
        table = self.table
        for p in self.pre_filter_plugins:
            r, s = p.pre_filter(state, pod, table)
            code = s.code
            if code == _SKIP:
                skip.add(p.name)
                continue
            if code != _OK:
                s = s.with_plugin(p.name)
                if s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return None, s, []
                if s.code == Code.UNSCHEDULABLE:
                    ret = s
                    continue
                return (
                    None,
                    Status(
                        Code.ERROR,
                        f'running PreFilter plugin "{p.name}": {s.message()}',
                        plugin=p.name,
                    ),
                    [],
                )
            if r is not None and not r.all_nodes():
                plugins_with_nodes.append(p.name)
            result = r if result is None else result.merge(r)
            if result is not None and result.node_names is not None and not result.node_names:
                if len(plugins_with_nodes) == 1:
                    msg = f"node(s) didn't satisfy plugin {plugins_with_nodes[0]}"
                else:
                    names = go_list(sorted(plugins_with_nodes))
                    msg = f"node(s) didn't satisfy plugin(s) {names} simultaneously"
                return result, unresolvable(msg), plugins_with_nodes
        fs = frozenset(skip)
        # One object per distinct set, so that per-skip-set memos compare by identity.
        state.skip_filter_plugins = self._skip_sets.setdefault(fs, fs)
        return result, ret, plugins_with_nodes

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo
    ) -> Status:
        """AddPod of every PreFilter extension not skipped, in order; stops at an error."""
        return self._run_pre_filter_extension(state, pod, to_add, node, add=True)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo
    ) -> Status:
        """RemovePod of every PreFilter extension not skipped, in order; stops at an error."""
        return self._run_pre_filter_extension(state, pod, to_remove, node, add=False)

    def _run_pre_filter_extension(
        self, state: CycleState, pod: PodInfo, other: PodInfo, node: NodeInfo, *, add: bool
    ) -> Status:
        for p in self.pre_filter_plugins:
            if p.name in state.skip_filter_plugins:
                continue
            ext = p.pre_filter_extensions()
            if ext is None:
                continue
            if add:
                s = ext.add_pod(state, pod, other, node)
            else:
                s = ext.remove_pod(state, pod, other, node)
            if not s.is_success():
                what = "AddPod" if add else "RemovePod"
                return error(f'running {what} on PreFilter plugin "{p.name}": {s.message()}')
        return SUCCESS

    # ------------------------------------------------------------------ Filter
    def has_filter_plugins(self) -> bool:
        return bool(self.filter_plugins)

    def active_filters(self, skip: frozenset[str]) -> tuple[FilterPlugin, ...]:
        """The filter plugins not in ``skip``, in order (decided once per distinct
        set: a plugin skipped at PreFilter then costs nothing per node)."""
        got = self._active_filters.get(skip)
        if got is None:
            got = self._active_filters[skip] = tuple(
                p for p in self.filter_plugins if p.name not in skip
            )
        return got

    def run_filter_plugins(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Filters in order; the first non-success is returned with the plugin stamped."""
        for p in self.active_filters(state.skip_filter_plugins):
            s = p.filter(state, pod, node)
            if s.code != _OK:
                if not s.is_rejected():
                    return Status(
                        Code.ERROR,
                        f'running "{p.name}" filter plugin: {s.message()}',
                        plugin=p.name,
                    )
                return s.with_plugin(p.name)
        return SUCCESS

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node: NodeInfo
    ) -> Status:
        """Two passes as upstream: with the nominated pods of >= priority added, then
        (only if some were added and pass 1 succeeded) without them."""
        status = SUCCESS
        pods_added = False
        for i in range(2):
            state_to_use = state
            node_to_use = node
            if i == 0:
                pods_added, state_to_use, node_to_use, s = self._add_ge_nominated_pods(
                    state, pod, node
                )
                if not s.is_success():
                    return s
            elif not pods_added or not status.is_success():
                break
            status = self.run_filter_plugins(state_to_use, pod, node_to_use)
            if not status.is_success() and not status.is_rejected():
                return status
        return status

    def nominated_ge(self, pod: PodInfo, node_name: str) -> list[PodInfo]:
        """Pods nominated to this node with priority >= the pod's (not the pod itself)."""
        noms = self.nominator.nominated_pods_for_node(node_name)
        if not noms:
            return []
        prio = pod.pod.priority
        uid = pod.pod.uid
        return [n for n in noms if n.pod.priority >= prio and n.pod.uid != uid]

    def _add_ge_nominated_pods(
        self, state: CycleState, pod: PodInfo, node: NodeInfo
    ) -> tuple[bool, CycleState, NodeInfo, Status]:
        noms = self.nominated_ge(pod, node.name)
        if not noms:
            return False, state, node, SUCCESS
        node_out = node.clone()
        state_out = state.clone()
        for n in noms:
            node_out.add_pod(n)
            s = self.run_pre_filter_extension_add_pod(state_out, pod, n, node_out)
            if not s.is_success():
                return False, state, node, s
        return True, state_out, node_out, SUCCESS

    def filter_vector(
        self, state: CycleState, pod: PodInfo
    ) -> tuple[np.ndarray, list[Status]] | None:
        """All filter plugins over all table rows, without nominated pods:
        (index per row, -1 = pass; statuses). None if some plugin cannot vectorise."""
        if self.per_node or not self._vector_filters(state.skip_filter_plugins):
            return None
        table = self.table
        result = np.full(table.capacity, -1, dtype=np.int32)
        statuses: list[Status] = []
        for p in self.active_filters(state.skip_filter_plugins):
            v = p.filter_vector(state, pod, table)  # type: ignore[attr-defined]
            if v is None:
                return None
            if not v.statuses:
                continue
            fail = (result < 0) & (v.index >= 0)
            if fail.any():
                result[fail] = v.index[fail] + len(statuses)
            statuses.extend(self._stamp(p.name, v.statuses))
        return result, statuses

    def filter_rows(
        self,
        state: CycleState,
        pod: PodInfo,
        rows: IntArray,
        memo: dict[str, Verdicts],
    ) -> tuple[npt.NDArray[np.int32], list[Status]] | None:
        """``filter_vector`` for some rows only, without nominated pods: (index
        aligned with ``rows``, -1 = pass; statuses). The scheduling cycle calls it
        for the rows it scans, chunk by chunk, with one ``memo`` per cycle: plugins
        with ``filter_rows`` evaluate just those rows, the others' whole-table
        verdicts are computed once per cycle (kept in ``memo``) and indexed.
        The returned index may be a shared read-only array. None if some plugin
        cannot vectorise."""
        if self.per_node or not self._vector_filters(state.skip_filter_plugins):
            return None
        table = self.table
        row_filters = self._row_filters
        result: npt.NDArray[np.int32] | None = None
        statuses: list[Status] = []
        for p in self.active_filters(state.skip_filter_plugins):
            name = p.name
            rf = row_filters.get(name)
            if rf is not None:
                v = rf(state, pod, table, rows)
                if v is None:
                    return None
                if not v.statuses:
                    continue
                index = v.index
            else:
                v = memo.get(name)
                if v is None:
                    v = p.filter_vector(state, pod, table)  # type: ignore[attr-defined]
                    if v is None:
                        return None
                    memo[name] = v
                if not v.statuses:
                    continue
                index = v.index[rows]
            if result is None:
                # The first plugin that rejects something: its index as is (a copy).
                result = np.array(index, dtype=np.int32)
            else:
                fail = (result < 0) & (index >= 0)
                if fail.any():
                    result[fail] = index[fail] + len(statuses)
            statuses.extend(self._stamp(name, v.statuses))
        if result is None:
            return pass_index(len(rows)), statuses
        return result, statuses

    def _vector_filters(self, skip: frozenset[str]) -> bool:
        """Every filter not skipped for this cycle has a vector form. Plugins
        without one (the volume plugins) then cost nothing on the vector path for
        pods that make them Skip at PreFilter; otherwise the per-node path runs."""
        if not self._non_vector_filters:
            return True
        got = self._vector_by_skip.get(skip)
        if got is None:
            got = self._vector_by_skip[skip] = self._non_vector_filters <= skip
        return got

    def _stamp(self, plugin: str, statuses: Sequence[Status]) -> list[Status]:
        """``[s.with_plugin(plugin) for s in statuses]``, reusing earlier stamps."""
        stamped = self._stamped
        out: list[Status] = []
        for st in statuses:
            key = (plugin, st)
            got = stamped.get(key)
            if got is None:
                if len(stamped) > 4096:
                    stamped.clear()
                got = st.with_plugin(plugin)
                stamped[key] = got
            out.append(got)
        return out

    def what_if_supported(self, state: CycleState) -> bool:
        """Can ``run_filter_what_if`` answer for this cycle? Every active filter must
        be static or answer what-ifs, and no active PreFilter plugin may keep
        per-pod state that AddPod/RemovePod would change."""
        if self.per_node:
            return False
        return self._skip_answers(state.skip_filter_plugins)[0]

    def what_if_spec_determined(self, state: CycleState) -> bool:
        """True when ``run_filter_what_if``'s answer for this cycle is a function
        of the pod's spec (``PodInfo.facts``), the skipped plugins, the nodes'
        own state (``NodeTable.node_generation``) and the rows and ``requested``
        asked about alone: every active filter is one of the in-tree filters known
        to read nothing else. The scheduling cycle may then reuse an earlier
        answer for equal inputs."""
        return self._skip_answers(state.skip_filter_plugins)[1]

    def _skip_answers(self, skip: frozenset[str]) -> tuple[bool, bool]:
        """(``what_if_supported``, ``what_if_spec_determined``) without per_node:
        both depend only on the set of skipped plugins, so they are decided once
        per distinct set (a profile sees a handful)."""
        got = self._skip_answers_memo.get(skip)
        if got is None:
            active = [p.name for p in self.filter_plugins if p.name not in skip]
            supported = not any(name not in skip for name in self._what_if_blockers)
            determined = all(name in _SPEC_DETERMINED_FILTERS for name in active)
            got = self._skip_answers_memo[skip] = (supported, determined)
        return got

    @functools.cached_property
    def _what_if_blockers(self) -> frozenset[str]:
        """Plugins whose being active rules the what-if path out (decided once:
        isinstance on Protocols is slow)."""
        out = {p.name for p in self.pre_filter_plugins if p.pre_filter_extensions() is not None}
        for f in self.filter_plugins:
            if is_static_filter(f):
                if not isinstance(f, VectorFilterPlugin):
                    out.add(f.name)
            elif not isinstance(f, WhatIfFilterPlugin):
                out.add(f.name)
        return frozenset(out)

    def run_filter_what_if_passes(
        self, state: CycleState, pod: PodInfo, rows: IntArray, requested: IntArray
    ) -> npt.NDArray[np.bool_] | None:
        """Like ``run_filter_what_if`` but only whether each node passes (cheaper:
        no statuses are built).

        The static filters' combined answer over the whole table is kept in the
        CycleState (keyed by table, node generation, skipped plugins and pod): it
        does not depend on ``requested``, and preemption's reprieve steps ask
        again and again for the same pod."""
        steps = self._what_if_steps(state, pod)
        if steps is None:
            return None
        key = "kubesched.runtime/what-if-static-pass"
        found, memo = self._cycle_memo(state, pod, key)
        static: npt.NDArray[np.bool_] | None
        if found:
            static = memo  # type: ignore[assignment]
        else:
            static = None
            for _, v in steps:
                if v is not None:
                    m = v.index < 0
                    static = m if static is None else static & m
            self._keep_cycle_memo(state, pod, key, static)
        ok = np.ones(len(rows), dtype=np.bool_) if static is None else static[rows]
        for p, v in steps:
            if v is not None:
                continue  # static: in the mask above
            passes = getattr(p, "passes_what_if", None)
            if passes is not None:
                got: npt.NDArray[np.bool_] | None = passes(state, pod, rows, requested)
                if got is None:
                    return None
                ok &= got
                continue
            w = p.filter_what_if(state, pod, rows, requested)  # type: ignore[attr-defined]
            if w is None:
                return None
            if w.statuses:
                ok &= w.index < 0
        return ok

    def run_filter_what_if(
        self, state: CycleState, pod: PodInfo, rows: IntArray, requested: IntArray
    ) -> tuple[np.ndarray, list[Status]] | None:
        """The filters over ``rows`` if their summed requests were ``requested``:
        (index aligned with rows, -1 = pass; statuses). Static filters are read
        from their vector form; the others answer the what-if. None if some
        plugin cannot answer."""
        steps = self._what_if_steps(state, pod)
        if steps is None:
            return None
        result: np.ndarray | None = None  # None: every row passes so far
        statuses: list[Status] = []
        for p, static in steps:
            if static is not None:
                v = static
                index = v.index.take(rows)
            else:
                got = p.filter_what_if(state, pod, rows, requested)  # type: ignore[attr-defined]
                if got is None:
                    return None
                v = got
                if not v.statuses:
                    continue
                index = v.index
            if result is None:
                # Nothing failed before: the plugin's index is the answer (-1 = pass).
                result = index.astype(np.int32)
            else:
                fail = (result < 0) & (index >= 0)
                if fail.any():
                    result[fail] = index[fail] + len(statuses)
            statuses.extend(s.with_plugin(p.name) for s in v.statuses)
        if result is None:
            result = np.full(len(rows), -1, dtype=np.int32)
        return result, statuses

    def run_filter_what_if_row(
        self, state: CycleState, pod: PodInfo, row: int, requested: IntArray
    ) -> Status | None:
        """``run_filter_what_if`` for one row (``requested``: its summed requests,
        one vector): the status the row would get (SUCCESS when it passes), with
        Python scalars where the filters offer it (``filter_what_if_row``);
        None if some plugin cannot answer."""
        steps = self._what_if_steps(state, pod)
        if steps is None:
            return None
        q: list[int] | None = None
        for p, static in steps:
            if static is not None:
                i = int(static.index[row])
                if i < 0:
                    continue
                return self._stamp(p.name, (static.statuses[i],))[0]
            one = getattr(p, "filter_what_if_row", None)
            got: Status | None = None
            if one is not None:
                if q is None:
                    q = requested.tolist()
                got = one(state, pod, row, q)
            if got is None:
                rows = np.array([row], dtype=np.int64)
                v = p.filter_what_if(state, pod, rows, requested[None, :])  # type: ignore[attr-defined]
                if v is None:
                    return None
                i = int(v.index[0])
                got = v.statuses[i] if i >= 0 else SUCCESS
            if not got.is_success():
                return self._stamp(p.name, (got,))[0]
        return SUCCESS

    def _what_if_steps(
        self, state: CycleState, pod: PodInfo
    ) -> list[tuple[FilterPlugin, Verdicts | None]] | None:
        """The active filters the what-if runners must consult, in order: the
        static ones that fail some node (with their verdicts over the table) and
        the others (None: asked each time). Kept in the CycleState like
        ``run_filter_what_if_passes``'s static mask (keyed by table, node
        generation, skipped plugins and pod); None if a static filter cannot
        vectorise."""
        skip = state.skip_filter_plugins
        table = self.table
        key = "kubesched.runtime/what-if-steps"
        found, memo = self._cycle_memo(state, pod, key)
        if found:
            return memo  # type: ignore[return-value]
        spec_key = None
        if self.what_if_spec_determined(state):
            # Static filters then answer from the spec and the nodes alone: the
            # steps of an earlier pod of this spec hold while no node changed.
            spec_key = (
                id(pod.facts),
                skip,
                id(table),
                table.node_generation,
                table.layout_generation,
            )
            kept = self._spec_steps.get(spec_key)
            if kept is not None and kept[0] is pod.facts:
                self._keep_cycle_memo(state, pod, key, kept[1])
                return kept[1]  # type: ignore[return-value]
        steps: list[tuple[FilterPlugin, Verdicts | None]] = []
        answer: list[tuple[FilterPlugin, Verdicts | None]] | None = steps
        for p in self.filter_plugins:
            if p.name in skip:
                continue
            if not is_static_filter(p):
                steps.append((p, None))
                continue
            v = p.filter_vector(state, pod, table)  # type: ignore[attr-defined]
            if v is None:
                answer = None
                break
            if v.statuses:
                steps.append((p, v))
        self._keep_cycle_memo(state, pod, key, answer)
        if spec_key is not None:
            if len(self._spec_steps) >= 8:
                del self._spec_steps[next(iter(self._spec_steps))]
            self._spec_steps[spec_key] = (pod.facts, answer)
        return answer

    def _cycle_memo(self, state: CycleState, pod: PodInfo, key: str) -> tuple[bool, object]:
        """(found, value) of what ``_keep_cycle_memo`` kept under ``key`` in this
        cycle, if it still holds: same table, node generation, skipped plugins and
        pod (static filters answer from nothing else)."""
        memo = state.get(key)
        table = self.table
        if (
            isinstance(memo, tuple)
            and memo[0] is table
            and memo[1] == table.node_generation
            and memo[2] is state.skip_filter_plugins
            and memo[3] is pod.pod
        ):
            return True, memo[4]
        return False, None

    def _keep_cycle_memo(self, state: CycleState, pod: PodInfo, key: str, value: object) -> None:
        table = self.table
        state.write(key, (table, table.node_generation, state.skip_filter_plugins, pod.pod, value))

    # ------------------------------------------------------------------ PostFilter
    def has_post_filter_plugins(self) -> bool:
        return bool(self.post_filter_plugins)

    def run_post_filter_plugins(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for p in self.post_filter_plugins:
            r, s = p.post_filter(state, pod, statuses)
            if s.is_success():
                return r, s.with_plugin(p.name)
            if s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return r, s.with_plugin(p.name)
            if not s.is_rejected():
                return None, Status(Code.ERROR, *s.reasons, plugin=p.name)
            if (
                r is not None
                and r.nominating_info is not None
                and r.nominating_info.mode == NominatingMode.OVERRIDE
            ):
                result = r
            reasons.extend(s.reasons)
            rejector = rejector or p.name
        return result, Status(Code.UNSCHEDULABLE, *reasons, plugin=rejector)

    # ------------------------------------------------------------------ Score
    def has_score_plugins(self) -> bool:
        return bool(self.score_plugins)

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
        """(total weighted score per node, per-plugin weighted scores)."""
        total, raw = self.score_nodes(state, pod, nodes)
        return total, {name: scores * weight for name, weight, scores in raw}

    def score_nodes(
        self, state: CycleState, pod: PodInfo, nodes: NodeSet
    ) -> tuple[IntArray, list[tuple[str, int, IntArray]]]:
        """(total weighted score per node, [(plugin, weight, unweighted scores)] in
        plugin order). Raises ScoreError for the first plugin (in order) that
        fails or returns a score outside [MIN_NODE_SCORE, MAX_NODE_SCORE]."""
        total, parts = self.score_parts(state, pod, nodes)
        rows = nodes.rows
        return total, [(n, w, v[rows] if by_slot else v) for n, w, v, by_slot in parts]

    def score_parts(
        self, state: CycleState, pod: PodInfo, nodes: NodeSet
    ) -> tuple[IntArray, list[ScorePart]]:
        """``score_nodes`` without gathering what need not be: each part is
        (plugin, weight, unweighted scores, by_slot); a ``by_slot`` part holds the
        scores of every table slot (index it with ``nodes.rows``), the others are
        aligned with ``nodes``.

        Plugins answering ``score_slots`` for this pod are summed per slot once
        and kept up to date across cycles (``_SlotTotal``): a cycle gathers one
        total instead of combining every plugin's scores."""
        skip = state.skip_score_plugins
        weights = self.score_weights
        table = nodes.table
        slot_scorers = self._slot_scorers if not self.per_node else ()
        parts: list[ScorePart] = []
        n_slot = 0
        for p in self.score_plugins:
            name = p.name
            if name in skip:
                continue
            w = weights.get(name, 1)
            if name in slot_scorers:
                v = p.score_slots(state, pod, table)  # type: ignore[attr-defined]
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
        if not self.per_node and p.name in self._vector_scorers:
            v: IntArray | None = p.score_vector(state, pod, nodes)  # type: ignore[attr-defined]
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

    # ------------------------------------------------------------------ binding cycle
    def run_reserve_plugins_reserve(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        for p in self.reserve_plugins:
            s = p.reserve(state, pod, node)
            if not s.is_success():
                if s.is_rejected():
                    return s.with_plugin(p.name)
                return Status(
                    Code.ERROR, f'running Reserve plugin "{p.name}": {s.message()}', plugin=p.name
                )
        return SUCCESS

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: PodInfo, node: str) -> None:
        for p in reversed(self.reserve_plugins):
            p.unreserve(state, pod, node)

    def run_permit_plugins(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        for p in self.permit_plugins:
            s, _timeout = p.permit(state, pod, node)
            if not s.is_success():
                if s.is_rejected():
                    return s.with_plugin(p.name)
                if s.is_wait():
                    # kubesched binds synchronously: a waiting pod is not supported yet.
                    return Status(
                        Code.ERROR, f'Permit plugin "{p.name}" asked to wait', plugin=p.name
                    )
                return Status(
                    Code.ERROR, f'running Permit plugin "{p.name}": {s.message()}', plugin=p.name
                )
        return SUCCESS

    def run_pre_bind_plugins(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        for p in self.pre_bind_plugins:
            s = p.pre_bind(state, pod, node)
            if not s.is_success():
                if s.is_rejected():
                    return s.with_plugin(p.name)
                return Status(
                    Code.ERROR, f'running PreBind plugin "{p.name}": {s.message()}', plugin=p.name
                )
        return SUCCESS

    def run_bind_plugins(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        if not self.bind_plugins:
            return Status(Code.SKIP)
        s: Status = SUCCESS
        for p in self.bind_plugins:
            s = p.bind(state, pod, node)
            if s.is_skip():
                continue
            if not s.is_success():
                if s.is_rejected():
                    return s.with_plugin(p.name)
                return Status(
                    Code.ERROR, f'running Bind plugin "{p.name}": {s.message()}', plugin=p.name
                )
            return s
        return s

    def run_post_bind_plugins(self, state: CycleState, pod: PodInfo, node: str) -> None:
        for p in self.post_bind_plugins:
            p.post_bind(state, pod, node)


_OK: Final = Code.SUCCESS
_SKIP: Final = Code.SKIP

ScorePart = tuple[str, int, IntArray, bool]
"""(plugin, weight, unweighted scores, by_slot): see ``Framework.score_parts``."""


def _aligned(parts: Sequence[ScorePart], rows: IntArray) -> list[tuple[str, int, IntArray]]:
    return [(nm, w, v[rows] if by_slot else v) for nm, w, v, by_slot in parts]


class _SlotTotal:
    """The weighted sum over every table slot of some plugins' ``score_slots``
    arrays, kept current from the table's change log (the plugins keep their
    arrays current the same way). ``ok`` is False once a live slot holds a score
    outside [MIN_NODE_SCORE, MAX_NODE_SCORE]."""

    __slots__ = ("arrays", "layout", "ok", "seq", "table", "total", "weights")

    def __init__(self, table: NodeTable, parts: Sequence[tuple[str, int, IntArray]]) -> None:
        self.table = weakref.ref(table)
        self.layout = table.layout_generation
        self.seq = table.change_seq
        self.arrays = [v for _, _, v in parts]
        self.weights = [w for _, w, _ in parts]
        alive = table.alive
        total = np.zeros(table.capacity, dtype=np.int64)
        ok = True
        for v, w in zip(self.arrays, self.weights, strict=True):
            live = v[alive]
            if len(live) and (
                live[live.argmax()] > MAX_NODE_SCORE or live[live.argmin()] < MIN_NODE_SCORE
            ):
                ok = False
            total += v * w
        self.total = total
        self.ok = ok

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
            rows = rows[table.alive[rows]]
            sub = np.zeros(len(rows), dtype=np.int64)
            for v, w in zip(self.arrays, self.weights, strict=True):
                vals = v[rows]
                if len(vals) and (
                    vals[vals.argmax()] > MAX_NODE_SCORE or vals[vals.argmin()] < MIN_NODE_SCORE
                ):
                    self.ok = False
                sub += vals * w
            self.total[rows] = sub
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


_SPEC_DETERMINED_FILTERS: frozenset[str] = frozenset(
    {"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodeResourcesFit"}
)
"""In-tree filters whose verdict on a node depends only on the pod's spec, the
plugin's args, the node itself and (NodeResourcesFit) the node's summed requests:
see ``Framework.what_if_spec_determined``."""

_POINT_PROTOCOLS: dict[str, type] = {
    PRE_ENQUEUE: PreEnqueuePlugin,
    QUEUE_SORT: QueueSortPlugin,
    PRE_FILTER: PreFilterPlugin,
    FILTER: FilterPlugin,
    POST_FILTER: PostFilterPlugin,
    PRE_SCORE: PreScorePlugin,
    SCORE: ScorePlugin,
    RESERVE: ReservePlugin,
    PERMIT: PermitPlugin,
    PRE_BIND: PreBindPlugin,
    BIND: BindPlugin,
    POST_BIND: PostBindPlugin,
}


def go_list(items: Sequence[str]) -> str:
    """Go's ``%v`` of a []string: ``[a b c]``."""
    return "[" + " ".join(items) + "]"

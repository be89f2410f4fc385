"""The Filter point of one profile on every path, for the ``Framework``:

- ``run_filter_plugins`` (upstream RunFilterPlugins) and
  ``run_filter_plugins_with_nominated_pods`` (its two passes), with the PreFilter
  extensions' AddPod / RemovePod runners;
- ``filter_rows``: every active filter over table rows at once, without nominated
  pods; None when some active filter has no vectorised form for the pod;
- ``run_filter_what_if`` / ``run_filter_what_if_row``: the filters over rows as if
  their summed requests were ``requested`` (preemption's dry run, the
  nominated-pods check). Static filters (declared, or derived ones whose ``Reads``
  say so) answer from their vectorised form, kept for the cycle.

Statuses are stamped with their plugin; a non-rejection becomes an Error naming
it. ``per_node`` turns the vectorised and what-if paths off.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Protocol

import numpy as np
import numpy.typing as npt

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    FilterPlugin,
    Nominator,
    PreFilterPlugin,
    Verdicts,
    pass_index,
)
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.status import SUCCESS, Code, Status, error
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.derived_forms import (
    DerivedAnswers,
    FilterForms,
    RowsFn,
    VectorFn,
    static_for,
)

_OK: Final = Code.SUCCESS


class FilterServices(Protocol):
    """What filtering reads of the scheduler's services (``runtime.framework.Services``)."""

    table: NodeTable
    nominator: Nominator


Vectorised = tuple[tuple[str, VectorFn, RowsFn | None], ...]
"""The active filters of a skip set, each with its vectorised forms."""

Step = tuple[FilterForms, Verdicts | None]
"""A filter the what-if runners consult: a static one with its verdicts over the
table, or another (None) that answers each what-if itself."""


class _CycleSteps:
    """``Filtering._cycle_steps``'s answer for one cycle and pod, kept in the
    CycleState: it holds while the table, its node generation, the skipped
    plugins and the pod are the same (static filters answer from nothing else)."""

    __slots__ = (
        "derived_static",
        "generation",
        "pod",
        "skip",
        "steps",
        "steps_known",
        "table",
    )

    def __init__(self, state: CycleState, pod: PodInfo, table: NodeTable) -> None:
        self.table = table
        self.generation = table.node_generation
        self.skip = state.skip_filter_plugins
        self.pod = pod.pod
        self.steps: list[Step] | None = None
        self.steps_known = False
        self.derived_static: bool | None = None
        """Every active derived filter is static for the pod (``static_for``)."""

    def clone(self) -> _CycleSteps:
        """StateData: one memo for the cycle, shared by its CycleState's copies."""
        return self

    def holds(self, state: CycleState, pod: PodInfo, table: NodeTable) -> bool:
        return (
            self.table is table
            and self.generation == table.node_generation
            and self.skip is state.skip_filter_plugins
            and self.pod is pod.pod
        )


_STEPS_KEY: Final = "kubesched.runtime/what-if-steps"


class Filtering:
    """The Filter point of one profile: per node (with nominated pods), over
    table rows, and the what-if runners; and the PreFilter extensions' runners."""

    def __init__(
        self,
        services: FilterServices,
        pre_filter_plugins: Sequence[PreFilterPlugin],
        filter_plugins: Sequence[FilterPlugin],
        derived: DerivedAnswers | None = None,
    ) -> None:
        self._services = services
        self.pre_filter_plugins = pre_filter_plugins
        self.filter_plugins = filter_plugins
        self._forms = tuple(FilterForms.of(p, derived) for p in filter_plugins)
        self._active_filters: dict[frozenset[str], tuple[FilterPlugin, ...]] = {}
        self._vectorised: dict[frozenset[str], Vectorised | None] = {}
        # (plugin, status) -> the status stamped with the plugin: plugins return the
        # same few statuses every cycle, so stamping allocates nothing.
        self._stamped: dict[tuple[str, Status], Status] = {}
        self._skip_answers_memo: dict[frozenset[str], tuple[bool, bool]] = {}
        blockers = {p.name for p in pre_filter_plugins if p.pre_filter_extensions() is not None}
        blockers.update(
            f.name for f in self._forms if f.static_vector is None and f.what_if is None
        )
        self._what_if_blockers = frozenset(blockers)
        """Plugins whose being active rules the what-if path out."""
        self.per_node = False
        """Take no vectorised or what-if path (``Framework.per_node``)."""

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
            s = (ext.add_pod if add else ext.remove_pod)(state, pod, other, node)
            if not s.is_success():
                what = "AddPod" if add else "RemovePod"
                return error(f'running {what} on PreFilter plugin "{p.name}": {s.message()}')
        return SUCCESS

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
        noms = self.nominated_ge(pod, node.name)
        if not noms:
            return self.run_filter_plugins(state, pod, node)
        node_with = node.clone()
        state_with = state.clone()
        for n in noms:
            node_with.add_pod(n)
            s = self.run_pre_filter_extension_add_pod(state_with, pod, n, node_with)
            if not s.is_success():
                return s
        status = self.run_filter_plugins(state_with, pod, node_with)
        if not status.is_success():
            return status
        return self.run_filter_plugins(state, pod, node)

    def nominated_ge(self, pod: PodInfo, node_name: str) -> list[PodInfo]:
        """Pods nominated to this node with priority >= the pod's (not the pod itself)."""
        noms = self._services.nominator.nominated_pods_for_node(node_name)
        if not noms:
            return []
        prio = pod.pod.priority
        uid = pod.pod.uid
        return [n for n in noms if n.pod.priority >= prio and n.pod.uid != uid]

    def filter_rows(
        self,
        state: CycleState,
        pod: PodInfo,
        rows: IntArray,
        memo: dict[str, Verdicts],
    ) -> tuple[npt.NDArray[np.int32], list[Status]] | None:
        """Every active filter over ``rows``, without nominated pods: (index aligned
        with ``rows``, -1 = pass, maybe shared read-only; statuses); None if some
        plugin cannot vectorise. Whole-table verdicts are kept in the cycle's
        ``memo``; ``filter_rows`` plugins evaluate just the rows asked."""
        forms = None if self.per_node else self.vectorised(state.skip_filter_plugins)
        if forms is None:
            return None
        table = self._services.table
        result: npt.NDArray[np.int32] | None = None
        statuses: list[Status] = []
        for name, vector, rf in forms:
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
                    v = vector(state, pod, table)
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

    def vectorised(self, skip: frozenset[str]) -> Vectorised | None:
        """The filters not in ``skip`` with their vectorised forms; None when one has
        none (decided once per distinct set)."""
        try:
            return self._vectorised[skip]
        except KeyError:
            pass
        active = [f for f in self._forms if f.name not in skip]
        got: Vectorised | None = None
        if all(f.vector is not None for f in active):
            got = tuple((f.name, f.vector, f.rows) for f in active if f.vector is not None)
        self._vectorised[skip] = got
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

    def what_if_supported(self, state: CycleState, pod: PodInfo) -> bool:
        """Can ``run_filter_what_if`` answer this cycle: every active filter static
        (for this pod) or a what-if filter, no active PreFilter with AddPod/RemovePod
        state."""
        if self.per_node:
            return False
        return self._skip_answers(state.skip_filter_plugins)[0] and self._derived_static(state, pod)

    def static_filters(self, state: CycleState, pod: PodInfo) -> frozenset[str]:
        """The active filters whose verdicts for this cycle hold whatever pods the
        nodes hold (``StaticFilterPlugin``; a derived filter static for the pod)."""
        skip = state.skip_filter_plugins
        return frozenset(
            f.name
            for f in self._forms
            if f.name not in skip
            and f.static_vector is not None
            and (f.reads is None or static_for(f.reads(state, pod)))
        )

    def _derived_static(self, state: CycleState, pod: PodInfo) -> bool:
        """Every active derived filter is static for the pod (kept for the cycle)."""
        memo = self._memo(state, pod)
        got = memo.derived_static
        if got is None:
            skip = state.skip_filter_plugins
            got = memo.derived_static = all(
                static_for(f.reads(state, pod))
                for f in self._forms
                if f.reads is not None and f.name not in skip
            )
        return got

    def what_if_spec_determined(self, state: CycleState, pod: PodInfo) -> bool:
        """``run_filter_what_if``'s answer is a function of the pod's spec, the skipped
        plugins, ``NodeTable.node_generation`` and the rows and ``requested`` alone:
        every active filter is ``SpecDeterminedFilterPlugin`` (or derived and static
        for the pod), so earlier answers may be reused."""
        return self._skip_answers(state.skip_filter_plugins)[1] and self._derived_static(state, pod)

    def _skip_answers(self, skip: frozenset[str]) -> tuple[bool, bool]:
        """(``what_if_supported``, ``what_if_spec_determined``) counting derived filters
        as static, once per distinct skip set."""
        got = self._skip_answers_memo.get(skip)
        if got is None:
            supported = not any(name not in skip for name in self._what_if_blockers)
            determined = all(f.spec_determined for f in self._forms if f.name not in skip)
            got = self._skip_answers_memo[skip] = (supported, determined)
        return got

    def run_filter_what_if(
        self, state: CycleState, pod: PodInfo, rows: IntArray, requested: IntArray
    ) -> tuple[np.ndarray, list[Status]] | None:
        """The filters over ``rows`` if their summed requests were ``requested``:
        (index aligned with rows, -1 = pass; statuses); None if some cannot answer."""
        steps = self._cycle_steps(state, pod).steps
        if steps is None:
            return None
        result: np.ndarray | None = None  # None: every row passes so far
        statuses: list[Status] = []
        for f, static in steps:
            if static is not None:
                v = static
                index = v.index.take(rows)
            else:
                what_if = f.what_if
                got = None if what_if is None else what_if(state, pod, rows, requested)
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
            statuses.extend(s.with_plugin(f.name) for s in v.statuses)
        if result is None:
            result = np.full(len(rows), -1, dtype=np.int32)
        return result, statuses

    def run_filter_what_if_row(
        self, state: CycleState, pod: PodInfo, row: int, requested: IntArray
    ) -> Status | None:
        """``run_filter_what_if`` for one row as a Status (``filter_what_if_row``
        where offered); None if some plugin cannot answer."""
        steps = self._cycle_steps(state, pod).steps
        if steps is None:
            return None
        q: list[int] | None = None
        for f, static in steps:
            if static is not None:
                i = int(static.index[row])
                if i < 0:
                    continue
                return self._stamp(f.name, (static.statuses[i],))[0]
            one = f.row
            got: Status | None = None
            if one is not None:
                if q is None:
                    q = requested.tolist()
                got = one(state, pod, row, q)
            if got is None:
                what_if = f.what_if
                rows = np.array([row], dtype=np.int64)
                v = None if what_if is None else what_if(state, pod, rows, requested[None, :])
                if v is None:
                    return None
                i = int(v.index[0])
                got = v.statuses[i] if i >= 0 else SUCCESS
            if not got.is_success():
                return self._stamp(f.name, (got,))[0]
        return SUCCESS

    def _cycle_steps(self, state: CycleState, pod: PodInfo) -> _CycleSteps:
        """The filters the what-if runners consult, in order: static ones failing some
        node with their verdicts, the others with None; ``steps`` None if a static
        filter cannot vectorise. Kept for the cycle."""
        memo = self._memo(state, pod)
        if memo.steps_known:
            return memo
        memo.steps_known = True
        table = memo.table
        skip = state.skip_filter_plugins
        steps: list[Step] = []
        for f in self._forms:
            if f.name in skip:
                continue
            vector = f.static_vector
            if vector is None:
                steps.append((f, None))
                continue
            # None: no vector form, or a derived filter the pod's reads make non-static.
            reads = f.reads
            v = None if reads and not static_for(reads(state, pod)) else vector(state, pod, table)
            if v is None:
                return memo
            if v.statuses:
                steps.append((f, v))
        memo.steps = steps
        return memo

    def _memo(self, state: CycleState, pod: PodInfo) -> _CycleSteps:
        """This cycle's ``_CycleSteps`` (created and written to the CycleState when
        it holds none for this table, node generation, skip set and pod)."""
        table = self._services.table
        memo = state.get(_STEPS_KEY)
        if isinstance(memo, _CycleSteps) and memo.holds(state, pod, table):
            return memo
        memo = _CycleSteps(state, pod, table)
        state.write(_STEPS_KEY, memo)
        return memo

"""Framework: the plugins of one profile and the runner of each extension point.

Built from a ``Profile`` and a registry (name -> factory); it is also the
``Handle`` its plugins receive, its services from the scheduler's ``Services``.
Runners follow upstream frameworkImpl (runtime/framework.go): PreFilter runs on
past Unschedulable and stops at the first UnschedulableAndUnresolvable;
PostFilter stops at the first success, UnschedulableAndUnresolvable or error.
Filter and Score run in ``runtime.filtering`` / ``runtime.scoring``, their entry
points bound as attributes (no wrapper call).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TypeVar, cast

from kubesched.api.errors import InputError
from kubesched.api.goformat import go_list
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
    Nominator,
    PermitPlugin,
    Plugin,
    PollCheck,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueuedInfo,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
)
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.ports import (
    Clock,
    ClusterReader,
    ClusterWriter,
    EventRecorder,
    MetricsRecorder,
)
from kubesched.framework.results import (
    NodeToStatus,
    NominatingMode,
    PostFilterResult,
    PreFilterResult,
)
from kubesched.framework.status import SUCCESS, Code, Status, unresolvable
from kubesched.framework.types import PodInfo
from kubesched.runtime.derived_forms import DerivedAnswers
from kubesched.runtime.filtering import Filtering
from kubesched.runtime.scoring import ScoreError, Scoring

__all__ = ["Framework", "PluginFactory", "ScoreError", "Services"]

PluginFactory = Callable[[PluginArgs | None, "Framework"], Plugin]
P = TypeVar("P")


def run_now(work: Callable[[], Status], done: Callable[[Status], None]) -> None:
    """``Handle.run_async`` of a backend without threads: ``work``, then ``done``."""
    done(work())


DEADLINE_EXCEEDED: Final = "context deadline exceeded"
"""The error of a ``poll_until`` whose timeout passed (Go's ``context.DeadlineExceeded``)."""

Poller = Callable[[PollCheck, float, float], str | None]
"""``Handle.poll_until(check, interval, timeout)``."""


def poll_once(check: PollCheck, interval: float, timeout: float) -> str | None:
    """``Handle.poll_until`` of a backend whose state is final at once (the
    simulator): ``check`` once; still pending is the deadline."""
    done, err = check()
    if err is not None:
        return err
    return None if done else DEADLINE_EXCEEDED


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
    run_async: Callable[[Callable[[], Status], Callable[[Status], None]], None] = run_now
    poll_until: Poller = poll_once


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
        self.scheduler_name = profile.scheduler_name
        # The Handle's services, as plain attributes (fixed for the framework's life).
        self.table: NodeTable = services.table
        self.nominator: Nominator = services.nominator
        self.clock: Clock = services.clock
        self.rng: random.Random = services.rng
        self.reader: ClusterReader = services.reader
        self.writer: ClusterWriter = services.writer
        self.recorder: EventRecorder = services.recorder
        self.metrics: MetricsRecorder = services.metrics
        self.activate: Callable[[Sequence[Pod]], None] = services.activate
        self.run_async: Callable[[Callable[[], Status], Callable[[Status], None]], None] = (
            services.run_async
        )
        self.poll_until: Poller = services.poll_until
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

        def point(name: str, kind: Callable[..., P]) -> list[P]:
            """The plugins enabled at ``name``; each must implement ``kind``."""
            plugins: list[P] = []
            cls = cast(type, kind)  # a Protocol class (mypy: not a concrete type[P])
            for ref in profile.enabled(name):
                p = get(ref.name)
                if not isinstance(p, cls):
                    raise InputError(
                        f'plugin "{ref.name}" does not extend {cls.__name__} plugin',
                        obj="KubeSchedulerConfiguration",
                        field=f"profiles[{profile.scheduler_name}].plugins.{name}",
                    )
                plugins.append(cast(P, p))
            return plugins

        self.pre_enqueue_plugins = point(PRE_ENQUEUE, PreEnqueuePlugin)
        qs = point(QUEUE_SORT, QueueSortPlugin)
        self.queue_sort: QueueSortPlugin | None = qs[0] if qs else None
        self.pre_filter_plugins = point(PRE_FILTER, PreFilterPlugin)
        self.filter_plugins = point(FILTER, FilterPlugin)
        self.post_filter_plugins = point(POST_FILTER, PostFilterPlugin)
        self.pre_score_plugins = point(PRE_SCORE, PreScorePlugin)
        self.score_plugins = point(SCORE, ScorePlugin)
        self.score_weights = {ref.name: ref.weight or 1 for ref in profile.enabled(SCORE)}
        self.reserve_plugins = point(RESERVE, ReservePlugin)
        self.permit_plugins = point(PERMIT, PermitPlugin)
        self.pre_bind_plugins = point(PRE_BIND, PreBindPlugin)
        self.bind_plugins = point(BIND, BindPlugin)
        self.post_bind_plugins = point(POST_BIND, PostBindPlugin)
        self._skip_sets: dict[frozenset[str], frozenset[str]] = {}
        # The Filter and Score points' runners (runtime.filtering, runtime.scoring),
        # bound as attributes: callers reach them without a wrapper call.
        derived = DerivedAnswers()
        self._filtering = fl = Filtering(
            services, self.pre_filter_plugins, self.filter_plugins, derived
        )
        self.run_pre_filter_extension_add_pod = fl.run_pre_filter_extension_add_pod
        self.run_pre_filter_extension_remove_pod = fl.run_pre_filter_extension_remove_pod
        self.run_filter_plugins = fl.run_filter_plugins
        self.run_filter_plugins_with_nominated_pods = fl.run_filter_plugins_with_nominated_pods
        self.nominated_ge = fl.nominated_ge
        self.filter_rows = fl.filter_rows
        self.what_if_supported = fl.what_if_supported
        self.what_if_spec_determined = fl.what_if_spec_determined
        self.static_filters = fl.static_filters
        self.run_filter_what_if = fl.run_filter_what_if
        self.run_filter_what_if_row = fl.run_filter_what_if_row
        self._scoring = sc = Scoring(
            self.pre_score_plugins, self.score_plugins, self.score_weights, derived
        )
        self.run_pre_score_plugins = sc.run_pre_score_plugins
        self.run_score_plugins = sc.run_score_plugins
        self.score_parts = sc.score_parts

    @property
    def per_node(self) -> bool:
        """Run every point through the plugins' per-node code only (no vectorised
        path): ``--exact`` / ``--per-node`` and the tests that compare both paths."""
        return self._filtering.per_node

    @per_node.setter
    def per_node(self, on: bool) -> None:
        self._filtering.per_node = on
        self._scoring.per_node = on

    # ------------------------------------------------------------------ Handle
    def pdbs(self) -> Sequence[PodDisruptionBudget]:
        return self.reader.pdbs()

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
                return _failed(s, "PreEnqueue", p.name)
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

    # ------------------------------------------------------------------ PostFilter
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

    # ------------------------------------------------------------------ binding cycle
    def run_reserve_plugins_reserve(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        for p in self.reserve_plugins:
            s = p.reserve(state, pod, node)
            if not s.is_success():
                return _failed(s, "Reserve", p.name)
        return SUCCESS

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: PodInfo, node: str) -> None:
        for p in reversed(self.reserve_plugins):
            p.unreserve(state, pod, node)

    def run_permit_plugins(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        for p in self.permit_plugins:
            s, _timeout = p.permit(state, pod, node)
            if s.is_wait():
                # kubesched binds synchronously: a waiting pod is not supported yet.
                return Status(Code.ERROR, f'Permit plugin "{p.name}" asked to wait', plugin=p.name)
            if not s.is_success():
                return _failed(s, "Permit", p.name)
        return SUCCESS

    def run_pre_bind_plugins(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        for p in self.pre_bind_plugins:
            s = p.pre_bind(state, pod, node)
            if not s.is_success():
                return _failed(s, "PreBind", p.name)
        return SUCCESS

    def run_bind_plugins(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        if not self.bind_plugins:
            return Status(Code.SKIP)
        s: Status = SUCCESS
        for p in self.bind_plugins:
            s = p.bind(state, pod, node)
            if s.is_skip():
                continue
            return s if s.is_success() else _failed(s, "Bind", p.name)
        return s

    def run_post_bind_plugins(self, state: CycleState, pod: PodInfo, node: str) -> None:
        for p in self.post_bind_plugins:
            p.post_bind(state, pod, node)


_OK: Final = Code.SUCCESS
_SKIP: Final = Code.SKIP


def _failed(s: Status, point: str, plugin: str) -> Status:
    """A plugin's non-success at ``point``: a rejection stamped with the plugin,
    anything else an Error naming it (upstream's wrapping)."""
    if s.is_rejected():
        return s.with_plugin(plugin)
    return Status(Code.ERROR, f'running {point} plugin "{plugin}": {s.message()}', plugin=plugin)

"""Trace objects straight into a scenario, without writing and parsing YAML.

``build_scenario`` does for :class:`~kubesched.sim.traces.TraceObjects` what
``kubesched.sim.scenario.load_scenario`` does for manifests of the same objects
(PriorityClasses registered first, Priority admission and create-time mutations
for every pod, the simulation annotations read, items ordered by creation time
then input order), so a replay built either way makes the same decisions
(tests/sim/traces check that). It is the fast path of
``kubesched simulate --trace``: parsing the YAML of the full openb trace costs
seconds, building its scenario here a fraction of one.

``loaded_objects`` offers the same objects as ``kubesched.api.load.Loaded``
entries, for a caller that merges a trace with ``-f`` manifests and then
builds the scenario from the merged ``LoadResult``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from typing import Any, Final

from kubesched.api.admission import PriorityClasses, admit_pod, prepare_pod_for_create
from kubesched.api.duration import HOUR, parse_duration
from kubesched.api.errors import InputError
from kubesched.api.load import Loaded, LoadedObject
from kubesched.framework.config import SchedulerConfig
from kubesched.scheduler.config import default_config
from kubesched.scheduler.registry import in_tree_registry
from kubesched.sim.scenario import CREATE_AT, DELETE_AT, RUN_FOR, Item, Scenario
from kubesched.sim.traces import TraceObjects

SOURCE: Final = "<trace>"
HORIZON_MARGIN: Final = 24 * HOUR
"""The least time beyond a trace's last event: pods the replay delays still finish."""


def horizon(trace: TraceObjects, margin: int | None = None) -> int:
    """A safety horizon for ``run_scenario`` that follows the trace: its last event
    plus ``margin`` (default: the trace's own span, at least a day), so that pods the
    replay delays — even by as long again as the trace lasts — still finish. A
    replay normally ends before it, when nothing is left to happen."""
    if margin is None:
        margin = max(HORIZON_MARGIN, trace.last_event)
    return trace.last_event + margin


def loaded_objects(trace: TraceObjects) -> list[Loaded[LoadedObject]]:
    """PriorityClasses, nodes, pods as ``Loaded`` entries (source ``<trace>``, index =
    position), the order ``manifests.trace_manifests`` writes them."""
    objs: list[Any] = [*trace.priority_classes, *trace.nodes, *trace.pods]
    out: list[Loaded[LoadedObject]] = []
    for i, obj in enumerate(objs):
        kind = type(obj).__name__
        annotations = getattr(obj, "annotations", {})
        out.append(Loaded(kind, obj, annotations, SOURCE, i))
    return out


def _duration(annotations: Any, key: str, where: str) -> int | None:
    text = annotations.get(key)
    if text is None:
        return None
    try:
        return parse_duration(text)
    except ValueError as err:
        raise InputError(str(err), source=SOURCE, obj=where, field=key) from None


def build_scenario(
    trace: TraceObjects,
    config: SchedulerConfig | None = None,
    *,
    base: Scenario | None = None,
    supported: Collection[str] | None = None,
) -> Scenario:
    """A scenario of the trace's objects (which it admits, i.e. mutates: load the
    trace again for another scenario).

    With ``base`` (a scenario loaded from ``-f`` files), the trace's classes join
    its PriorityClasses (a class of the same name is an error, as the API server
    says) and its objects come after the base's objects in input order; the
    base's configuration is kept. Otherwise ``config`` defaults to the default
    profile."""
    if base is not None:
        config = base.config
        classes = base.classes
        items = list(base.items)
        order = max((i.order for i in items), default=-1) + 1
        ignored = Counter(base.ignored)
    else:
        if config is None:
            config = default_config(supported=supported or in_tree_registry().keys())
        classes = PriorityClasses()
        items = []
        order = 0
        ignored = Counter()
    for pc in trace.priority_classes:
        try:
            classes.add(pc)
        except InputError as err:
            raise err.with_context(source=SOURCE) from None
    order += len(trace.priority_classes)  # as load_scenario numbers input objects
    for node in trace.nodes:
        at = _duration(node.annotations, CREATE_AT, f"node {node.name}") or 0
        gone = _duration(node.annotations, DELETE_AT, f"node {node.name}")
        items.append(Item("Node", node, at, gone, None, order))
        order += 1
    for pod in trace.pods:
        where = f"pod {pod.key}"
        ann = pod.annotations
        at = _duration(ann, CREATE_AT, where) or 0
        gone = _duration(ann, DELETE_AT, where)
        run_for = _duration(ann, RUN_FOR, where)
        try:
            admit_pod(pod, classes, None, None)
        except InputError as err:
            raise err.with_context(source=SOURCE, obj=where) from None
        prepare_pod_for_create(pod)
        items.append(Item("Pod", pod, at, gone, run_for, order))
        order += 1
    items.sort(key=lambda i: (i.create_at, i.order))
    return Scenario(config, classes, items, ignored)

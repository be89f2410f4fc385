"""Trace objects straight into a scenario, without writing and parsing YAML.

``build_scenario`` does for :class:`~kubesched.sim.traces.TraceObjects` what
``kubesched.sim.scenario.load_scenario`` does for manifests of the same objects,
so a replay built either way makes the same decisions (tests/sim/traces check
that), in a fraction of the time. ``loaded_objects`` offers the same objects as
``kubesched.api.load.Loaded`` entries, to merge a trace with ``-f`` manifests.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

from kubesched.api.duration import HOUR
from kubesched.api.load import Loaded, LoadedObject, LoadResult
from kubesched.api.types import Node, Pod, PriorityClass
from kubesched.framework.config import SchedulerConfig
from kubesched.scheduler.config import default_config
from kubesched.scheduler.registry import in_tree_registry
from kubesched.sim.scenario import Scenario, scenario_from_result
from kubesched.sim.traces import TraceObjects

SOURCE: Final = "<trace>"
HORIZON_MARGIN: Final = 24 * HOUR
"""The least time beyond a trace's last event: pods the replay delays still finish."""


def horizon(trace: TraceObjects, margin: int | None = None) -> int:
    """A safety horizon past the trace's last event by ``margin`` (default: the
    trace's own span, at least a day), so that pods the replay delays still finish."""
    if margin is None:
        margin = max(HORIZON_MARGIN, trace.last_event)
    return trace.last_event + margin


def loaded_objects(trace: TraceObjects) -> list[Loaded[LoadedObject]]:
    """PriorityClasses, nodes, pods as ``Loaded`` entries (source ``<trace>``, index =
    position), the order ``manifests.trace_manifests`` writes them."""
    objs: list[PriorityClass | Node | Pod] = [*trace.priority_classes, *trace.nodes, *trace.pods]
    out: list[Loaded[LoadedObject]] = []
    for i, obj in enumerate(objs):
        kind = type(obj).__name__
        annotations = {} if isinstance(obj, PriorityClass) else obj.annotations
        out.append(Loaded(kind, obj, annotations, SOURCE, i))
    return out


def build_scenario(
    trace: TraceObjects,
    config: SchedulerConfig | None = None,
    *,
    base: Scenario | None = None,
    supported: Collection[str] | None = None,
) -> Scenario:
    """A scenario of the trace's objects (admitted, i.e. mutated), checked and ordered
    exactly as ``load_scenario`` takes manifests. With ``base`` (from ``-f`` files)
    the trace's classes join its PriorityClasses (a duplicate name is an error), its
    objects follow the base's and the base's configuration is kept; otherwise
    ``config`` defaults to the default profile."""
    if config is None:
        config = default_config(supported=supported or in_tree_registry().keys())
    return scenario_from_result(LoadResult(loaded_objects(trace)), config, base=base)

"""The internal schema of scheduler configuration that plugins and the runtime consume.

``kubesched.scheduler.config`` turns a ``KubeSchedulerConfiguration``
(``kubescheduler.config.k8s.io/v1``) into these objects, applying upstream's
defaults and validation. Plugin args keep upstream's type names
(``NodeResourcesFitArgs`` ...) and field meanings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from kubesched.api.types import NodeAffinity, TopologySpreadConstraint

# Extension point names, as in KubeSchedulerConfiguration ``plugins``.
PRE_ENQUEUE: Final = "preEnqueue"
QUEUE_SORT: Final = "queueSort"
PRE_FILTER: Final = "preFilter"
FILTER: Final = "filter"
POST_FILTER: Final = "postFilter"
PRE_SCORE: Final = "preScore"
SCORE: Final = "score"
RESERVE: Final = "reserve"
PERMIT: Final = "permit"
PRE_BIND: Final = "preBind"
BIND: Final = "bind"
POST_BIND: Final = "postBind"

EXTENSION_POINTS: Final = (
    PRE_ENQUEUE,
    QUEUE_SORT,
    PRE_FILTER,
    FILTER,
    POST_FILTER,
    PRE_SCORE,
    SCORE,
    RESERVE,
    PERMIT,
    PRE_BIND,
    BIND,
    POST_BIND,
)

# Scoring strategy types (NodeResourcesFitArgs.scoringStrategy.type).
LEAST_ALLOCATED: Final = "LeastAllocated"
MOST_ALLOCATED: Final = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO: Final = "RequestedToCapacityRatio"

# PodTopologySpreadArgs.defaultingType.
SYSTEM_DEFAULTING: Final = "System"
LIST_DEFAULTING: Final = "List"


@dataclass(frozen=True, slots=True)
class PluginRef:
    """One enabled plugin at one extension point; ``weight`` matters for Score only."""

    name: str
    weight: int = 0


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    name: str
    weight: int = 1


@dataclass(frozen=True, slots=True)
class UtilizationShapePoint:
    utilization: int
    score: int


@dataclass(frozen=True, slots=True)
class ScoringStrategy:
    type: str = LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
    shape: tuple[UtilizationShapePoint, ...] = ()
    """RequestedToCapacityRatio ``requestedToCapacityRatio.shape``."""


@dataclass(frozen=True, slots=True)
class NodeResourcesFitArgs:
    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = field(default_factory=ScoringStrategy)


@dataclass(frozen=True, slots=True)
class NodeResourcesBalancedAllocationArgs:
    resources: tuple[ResourceSpec, ...] = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


@dataclass(frozen=True, slots=True)
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100


@dataclass(frozen=True, slots=True)
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False


@dataclass(frozen=True, slots=True)
class PodTopologySpreadArgs:
    default_constraints: tuple[TopologySpreadConstraint, ...] = ()
    defaulting_type: str = SYSTEM_DEFAULTING


@dataclass(frozen=True, slots=True)
class NodeAffinityArgs:
    added_affinity: NodeAffinity | None = None


@dataclass(frozen=True, slots=True)
class VolumeBindingArgs:
    bind_timeout_seconds: int = 600
    """How long PreBind waits for the claims to be bound (upstream's default 600)."""


PluginArgs = (
    NodeResourcesFitArgs
    | NodeResourcesBalancedAllocationArgs
    | DefaultPreemptionArgs
    | InterPodAffinityArgs
    | PodTopologySpreadArgs
    | NodeAffinityArgs
    | VolumeBindingArgs
)


@dataclass(frozen=True, slots=True)
class Profile:
    """One ``KubeSchedulerProfile`` after defaulting: the enabled plugins of each
    extension point, in order, and the args of each plugin that takes any."""

    scheduler_name: str
    plugins: dict[str, tuple[PluginRef, ...]]
    plugin_args: dict[str, PluginArgs] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None

    def enabled(self, point: str) -> tuple[PluginRef, ...]:
        return self.plugins.get(point, ())


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    profiles: tuple[Profile, ...]
    percentage_of_nodes_to_score: int = 0
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    parallelism: int = 16

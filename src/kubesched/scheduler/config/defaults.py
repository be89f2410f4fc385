"""Upstream v1.36 facts the configuration is built from.

- ``PLUGIN_POINTS``: the extension points each in-tree plugin implements (the
  ``var _ fwk.XPlugin = &P{}`` assertions), where multiPoint enables it.
- ``DEFAULT_PLUGINS``: ``getDefaultPlugins()`` of pkg/scheduler/apis/config/v1/
  default_plugins.go with v1.36's default feature gates applied
  (DynamicResourceAllocation GA: DynamicResources before DefaultPreemption;
  NodeDeclaredFeatures beta, on: appended last). The weights are the
  multiPoint weights; a plugin without one scores with weight 1.
- ``SYSTEM_DEFAULT_CONSTRAINTS``: PodTopologySpread's constraints for
  ``defaultingType: System`` (podtopologyspread/plugin.go).
- Numeric defaults of pkg/scheduler/apis/config/v1/defaults.go.
"""

from __future__ import annotations

from typing import Final

from kubesched.api.types import LABEL_HOSTNAME, LABEL_ZONE, TopologySpreadConstraint
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
)

API_VERSION: Final = "kubescheduler.config.k8s.io/v1"
API_GROUP: Final = "kubescheduler.config.k8s.io"
KIND: Final = "KubeSchedulerConfiguration"
MULTI_POINT: Final = "multiPoint"

DEFAULT_SCHEDULER_NAME: Final = "default-scheduler"
DEFAULT_PARALLELISM: Final = 16
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE: Final = 0
DEFAULT_POD_INITIAL_BACKOFF_SECONDS: Final = 1
DEFAULT_POD_MAX_BACKOFF_SECONDS: Final = 10

# framework.MaxNodeScore and framework.MaxTotalScore (math.MaxInt64).
MAX_NODE_SCORE: Final = 100
MAX_TOTAL_SCORE: Final = 2**63 - 1
# config.MaxCustomPriorityScore: the top of a RequestedToCapacityRatio shape.
MAX_CUSTOM_PRIORITY_SCORE: Final = 10

# Plugin names (pkg/scheduler/framework/plugins/names).
SCHEDULING_GATES: Final = "SchedulingGates"
PRIORITY_SORT: Final = "PrioritySort"
NODE_UNSCHEDULABLE: Final = "NodeUnschedulable"
NODE_NAME: Final = "NodeName"
TAINT_TOLERATION: Final = "TaintToleration"
NODE_AFFINITY: Final = "NodeAffinity"
NODE_PORTS: Final = "NodePorts"
NODE_RESOURCES_FIT: Final = "NodeResourcesFit"
VOLUME_RESTRICTIONS: Final = "VolumeRestrictions"
NODE_VOLUME_LIMITS: Final = "NodeVolumeLimits"
VOLUME_BINDING: Final = "VolumeBinding"
VOLUME_ZONE: Final = "VolumeZone"
POD_TOPOLOGY_SPREAD: Final = "PodTopologySpread"
INTER_POD_AFFINITY: Final = "InterPodAffinity"
DYNAMIC_RESOURCES: Final = "DynamicResources"
DEFAULT_PREEMPTION: Final = "DefaultPreemption"
NODE_RESOURCES_BALANCED_ALLOCATION: Final = "NodeResourcesBalancedAllocation"
IMAGE_LOCALITY: Final = "ImageLocality"
DEFAULT_BINDER: Final = "DefaultBinder"
NODE_DECLARED_FEATURES: Final = "NodeDeclaredFeatures"
GANG_SCHEDULING: Final = "GangScheduling"

PLUGIN_POINTS: Final[dict[str, frozenset[str]]] = {
    SCHEDULING_GATES: frozenset({PRE_ENQUEUE}),
    PRIORITY_SORT: frozenset({QUEUE_SORT}),
    NODE_UNSCHEDULABLE: frozenset({FILTER}),
    NODE_NAME: frozenset({FILTER}),
    TAINT_TOLERATION: frozenset({FILTER, PRE_SCORE, SCORE}),
    NODE_AFFINITY: frozenset({PRE_FILTER, FILTER, PRE_SCORE, SCORE}),
    NODE_PORTS: frozenset({PRE_FILTER, FILTER}),
    NODE_RESOURCES_FIT: frozenset({PRE_FILTER, FILTER, PRE_SCORE, SCORE}),
    VOLUME_RESTRICTIONS: frozenset({PRE_FILTER, FILTER}),
    NODE_VOLUME_LIMITS: frozenset({PRE_FILTER, FILTER}),
    VOLUME_BINDING: frozenset({PRE_FILTER, FILTER, RESERVE, PRE_BIND, PRE_SCORE, SCORE}),
    VOLUME_ZONE: frozenset({PRE_FILTER, FILTER}),
    POD_TOPOLOGY_SPREAD: frozenset({PRE_FILTER, FILTER, PRE_SCORE, SCORE}),
    INTER_POD_AFFINITY: frozenset({PRE_FILTER, FILTER, PRE_SCORE, SCORE}),
    DYNAMIC_RESOURCES: frozenset(
        {PRE_ENQUEUE, PRE_FILTER, FILTER, POST_FILTER, SCORE, RESERVE, PRE_BIND}
    ),
    # PreEnqueue holds back a pod while its own async preemption is in flight.
    DEFAULT_PREEMPTION: frozenset({PRE_ENQUEUE, POST_FILTER}),
    NODE_RESOURCES_BALANCED_ALLOCATION: frozenset({PRE_SCORE, SCORE}),
    IMAGE_LOCALITY: frozenset({SCORE}),
    DEFAULT_BINDER: frozenset({BIND}),
    NODE_DECLARED_FEATURES: frozenset({PRE_FILTER, FILTER}),
    # In the registry but not enabled by default (GenericWorkload is alpha).
    GANG_SCHEDULING: frozenset({PRE_ENQUEUE, PERMIT}),
}

DEFAULT_PLUGINS: Final[tuple[tuple[str, int | None], ...]] = (
    (SCHEDULING_GATES, None),
    (PRIORITY_SORT, None),
    (NODE_UNSCHEDULABLE, None),
    (NODE_NAME, None),
    (TAINT_TOLERATION, 3),
    (NODE_AFFINITY, 2),
    (NODE_PORTS, None),
    (NODE_RESOURCES_FIT, 1),
    (VOLUME_RESTRICTIONS, None),
    (NODE_VOLUME_LIMITS, None),
    (VOLUME_BINDING, None),
    (VOLUME_ZONE, None),
    (POD_TOPOLOGY_SPREAD, 2),
    (INTER_POD_AFFINITY, 2),
    (DYNAMIC_RESOURCES, 2),
    (DEFAULT_PREEMPTION, None),
    (NODE_RESOURCES_BALANCED_ALLOCATION, 1),
    (IMAGE_LOCALITY, 1),
    (DEFAULT_BINDER, None),
    (NODE_DECLARED_FEATURES, None),
)
"""The default multiPoint list, in upstream's order: (name, weight or None)."""

# Plugins removed from kubescheduler.config.k8s.io/v1 (validation.go invalidPluginsByVersion).
REMOVED_PLUGINS: Final = frozenset({"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"})

# The framework's Go interface name per extension point, used in its error messages.
INTERFACE_NAMES: Final[dict[str, str]] = {
    PRE_ENQUEUE: "PreEnqueuePlugin",
    QUEUE_SORT: "QueueSortPlugin",
    PRE_FILTER: "PreFilterPlugin",
    FILTER: "FilterPlugin",
    POST_FILTER: "PostFilterPlugin",
    PRE_SCORE: "PreScorePlugin",
    SCORE: "ScorePlugin",
    RESERVE: "ReservePlugin",
    PERMIT: "PermitPlugin",
    PRE_BIND: "PreBindPlugin",
    BIND: "BindPlugin",
    POST_BIND: "PostBindPlugin",
}

# frameworkImpl.getExtensionPoints order: the order the framework builds (and fails).
FRAMEWORK_ORDER: Final = (
    PRE_FILTER,
    FILTER,
    POST_FILTER,
    RESERVE,
    PRE_SCORE,
    SCORE,
    PRE_BIND,
    BIND,
    POST_BIND,
    PERMIT,
    PRE_ENQUEUE,
    QUEUE_SORT,
)

SYSTEM_DEFAULT_CONSTRAINTS: Final[tuple[TopologySpreadConstraint, ...]] = (
    TopologySpreadConstraint(
        max_skew=3, topology_key=LABEL_HOSTNAME, when_unsatisfiable="ScheduleAnyway"
    ),
    TopologySpreadConstraint(
        max_skew=5, topology_key=LABEL_ZONE, when_unsatisfiable="ScheduleAnyway"
    ),
)
"""PodTopologySpread's system defaults (hostname maxSkew 3, zone maxSkew 5, both
ScheduleAnyway), used when ``defaultingType`` is ``System`` and a pod has no
constraints of its own."""

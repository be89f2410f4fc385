"""Typed, compact Kubernetes objects holding only what scheduling needs.

Conventions:
- Specs and other sub-structures are frozen dataclasses compared by identity
  (``eq=False``): pods made from one template share one ``PodSpec`` object.
- Resource amounts are integers in canonical units (``ResourceList``): ``cpu``
  in milli-CPU, every other resource in its base unit (bytes, count).
- Times are integer nanoseconds of the run's clock (simulated or wall).
- ``Pod`` and ``Node`` are the only mutable objects: the cluster (simulated or
  live) updates their status fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from kubesched.api.storage import PodVolume

ResourceList = Mapping[str, int]
"""Resource name -> amount; ``cpu`` in milli-CPU, everything else in base units."""

Time = int
"""Nanoseconds since the start of the run."""

NANOS: Final = 1_000_000_000

# Resource names (core/v1).
CPU: Final = "cpu"
MEMORY: Final = "memory"
EPHEMERAL_STORAGE: Final = "ephemeral-storage"
PODS: Final = "pods"

# Well-known labels.
LABEL_HOSTNAME: Final = "kubernetes.io/hostname"
LABEL_ZONE: Final = "topology.kubernetes.io/zone"
LABEL_REGION: Final = "topology.kubernetes.io/region"
LABEL_ZONE_BETA: Final = "failure-domain.beta.kubernetes.io/zone"
LABEL_REGION_BETA: Final = "failure-domain.beta.kubernetes.io/region"

# Taint effects.
NO_SCHEDULE: Final = "NoSchedule"
PREFER_NO_SCHEDULE: Final = "PreferNoSchedule"
NO_EXECUTE: Final = "NoExecute"

# Preemption policies.
PREEMPT_LOWER_PRIORITY: Final = "PreemptLowerPriority"
PREEMPT_NEVER: Final = "Never"

# Pod phases.
PENDING: Final = "Pending"
RUNNING: Final = "Running"
SUCCEEDED: Final = "Succeeded"
FAILED: Final = "Failed"

# The condition the scheduler puts on a preemption victim (core/v1).
DISRUPTION_TARGET: Final = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER: Final = "PreemptionByScheduler"

DEFAULT_SCHEDULER_NAME: Final = "default-scheduler"
DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS: Final = 30


# --------------------------------------------------------------------------- selectors


@dataclass(frozen=True, slots=True, eq=False)
class LabelSelectorRequirement:
    """``matchExpressions`` item: operator In, NotIn, Exists or DoesNotExist."""

    key: str
    operator: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class LabelSelector:
    """metav1.LabelSelector. An empty selector (no labels, no expressions) selects
    everything when converted with ``LabelSelectorAsSelector``; a missing one
    (``None`` where it is optional) selects nothing."""

    match_labels: Mapping[str, str] = field(default_factory=dict)
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()

    def is_empty(self) -> bool:
        return not self.match_labels and not self.match_expressions


@dataclass(frozen=True, slots=True, eq=False)
class NodeSelectorRequirement:
    """Operator In, NotIn, Exists, DoesNotExist, Gt or Lt."""

    key: str
    operator: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class NodeSelectorTerm:
    """Requirements ANDed; ``match_fields`` supports only ``metadata.name``."""

    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class NodeSelector:
    """Terms ORed."""

    terms: tuple[NodeSelectorTerm, ...]


@dataclass(frozen=True, slots=True, eq=False)
class PreferredSchedulingTerm:
    weight: int
    preference: NodeSelectorTerm


@dataclass(frozen=True, slots=True, eq=False)
class NodeAffinity:
    required: NodeSelector | None = None
    preferred: tuple[PreferredSchedulingTerm, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class PodAffinityTerm:
    label_selector: LabelSelector | None
    topology_key: str
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True, slots=True, eq=False)
class PodAffinity:
    """Used for both podAffinity and podAntiAffinity."""

    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class Affinity:
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


# --------------------------------------------------------------------------- taints


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str = ""
    effect: str = NO_SCHEDULE


@dataclass(frozen=True, slots=True)
class Toleration:
    """operator ``Equal`` (default) or ``Exists``; empty effect matches all effects."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


@dataclass(frozen=True, slots=True, eq=False)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: tuple[str, ...] = ()


# --------------------------------------------------------------------------- pods


@dataclass(frozen=True, slots=True)
class ContainerPort:
    container_port: int
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = ""


@dataclass(frozen=True, slots=True, eq=False)
class Container:
    name: str
    image: str = ""
    requests: ResourceList = field(default_factory=dict)
    ports: tuple[ContainerPort, ...] = ()
    restart_policy: str | None = None
    """Only init containers: ``Always`` makes it a sidecar."""


@dataclass(frozen=True, slots=True)
class OwnerReference:
    api_version: str
    kind: str
    name: str
    uid: str = ""
    controller: bool = False


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)
class PodSpec:
    """The scheduling-relevant part of ``spec``, immutable once admitted."""

    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    overhead: ResourceList = field(default_factory=dict)
    resources: ResourceList = field(default_factory=dict)
    """Pod-level ``spec.resources.requests`` (PodLevelResources)."""
    node_selector: Mapping[str, str] = field(default_factory=dict)
    affinity: Affinity | None = None
    tolerations: tuple[Toleration, ...] = ()
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    termination_grace_period_seconds: int | None = None
    scheduling_gates: tuple[str, ...] = ()
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    host_network: bool = False
    volumes: tuple[PodVolume, ...] = ()
    """``spec.volumes`` (``kubesched.api.storage.PodVolume``)."""
    derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False)
    """What the scheduler derives from this spec, by deriver (``SpecFacts``, a
    plugin's parsed terms ...): the spec never changes, so nothing in it goes
    stale, and it lives exactly as long as the spec. Not copied by ``replace``."""


@dataclass(frozen=True, slots=True)
class PodCondition:
    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_transition_time: Time | None = None


class Pod:
    """A pod: identity, admitted spec, and the status the cluster keeps current.

    ``priority`` is the admitted (effective) priority; ``node_name`` is
    ``spec.nodeName`` ("" while unbound).
    """

    __slots__ = (
        "annotations",
        "conditions",
        "creation_timestamp",
        "deletion_timestamp",
        "key",
        "labels",
        "name",
        "namespace",
        "node_name",
        "nominated_node_name",
        "owner_references",
        "phase",
        "preemption_policy",
        "priority",
        "priority_class_name",
        "spec",
        "start_time",
        "uid",
    )

    def __init__(
        self,
        name: str,
        namespace: str = "default",
        *,
        uid: str = "",
        labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
        owner_references: tuple[OwnerReference, ...] = (),
        spec: PodSpec | None = None,
        priority: int = 0,
        priority_class_name: str = "",
        preemption_policy: str = PREEMPT_LOWER_PRIORITY,
        node_name: str = "",
        nominated_node_name: str = "",
        phase: str = PENDING,
        start_time: Time | None = None,
        deletion_timestamp: Time | None = None,
        conditions: list[PodCondition] | None = None,
        creation_timestamp: Time = 0,
    ) -> None:
        self.name = name
        self.namespace = namespace
        self.key = f"{namespace}/{name}"
        """``namespace/name`` (name and namespace never change after creation)."""
        self.uid = uid or self.key
        self.labels: Mapping[str, str] = labels if labels is not None else {}
        self.annotations: Mapping[str, str] = annotations if annotations is not None else {}
        self.owner_references = owner_references
        self.spec = spec if spec is not None else PodSpec()
        self.priority = priority
        self.priority_class_name = priority_class_name
        self.preemption_policy = preemption_policy
        self.node_name = node_name
        self.nominated_node_name = nominated_node_name
        self.phase = phase
        self.start_time = start_time
        self.deletion_timestamp = deletion_timestamp
        self.conditions: list[PodCondition] = conditions if conditions is not None else []
        self.creation_timestamp = creation_timestamp

    @property
    def termination_grace_period_seconds(self) -> int:
        g = self.spec.termination_grace_period_seconds
        return DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS if g is None else g

    def controller_ref(self) -> OwnerReference | None:
        for ref in self.owner_references:
            if ref.controller:
                return ref
        return None

    def condition(self, type_: str) -> PodCondition | None:
        """The first condition of this type, as upstream's GetPodCondition."""
        for c in self.conditions:
            if c.type == type_:
                return c
        return None

    def preemption_condition(self) -> PodCondition | None:
        """The first ``DisruptionTarget`` condition if its reason is
        ``PreemptionByScheduler`` (the scheduler marked this pod as a preemption
        victim), else None; whatever its ``status``."""
        c = self.condition(DISRUPTION_TARGET)
        return c if c is not None and c.reason == REASON_PREEMPTION_BY_SCHEDULER else None

    def copy(self) -> Pod:
        """A shallow copy (spec and labels shared, conditions list copied): the cluster
        replaces a pod by a changed copy so that watchers see (old, new) pairs."""
        c = Pod.__new__(Pod)
        c.annotations = self.annotations
        c.conditions = list(self.conditions)
        c.creation_timestamp = self.creation_timestamp
        c.deletion_timestamp = self.deletion_timestamp
        c.key = self.key
        c.labels = self.labels
        c.name = self.name
        c.namespace = self.namespace
        c.node_name = self.node_name
        c.nominated_node_name = self.nominated_node_name
        c.owner_references = self.owner_references
        c.phase = self.phase
        c.preemption_policy = self.preemption_policy
        c.priority = self.priority
        c.priority_class_name = self.priority_class_name
        c.spec = self.spec
        c.start_time = self.start_time
        c.uid = self.uid
        return c

    def __repr__(self) -> str:
        return f"Pod({self.key}, prio={self.priority}, node={self.node_name!r})"


# --------------------------------------------------------------------------- nodes


@dataclass(frozen=True, slots=True)
class NodeCondition:
    type: str
    status: str
    reason: str = ""
    message: str = ""


@dataclass(frozen=True, slots=True)
class ContainerImage:
    names: tuple[str, ...]
    size_bytes: int = 0


class Node:
    """A node: labels, taints, allocatable, schedulability."""

    __slots__ = (
        "allocatable",
        "annotations",
        "conditions",
        "creation_timestamp",
        "images",
        "labels",
        "name",
        "taints",
        "uid",
        "unschedulable",
    )

    def __init__(
        self,
        name: str,
        *,
        uid: str = "",
        labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
        taints: tuple[Taint, ...] = (),
        unschedulable: bool = False,
        allocatable: ResourceList | None = None,
        conditions: tuple[NodeCondition, ...] = (),
        images: tuple[ContainerImage, ...] = (),
        creation_timestamp: Time = 0,
    ) -> None:
        self.name = name
        self.uid = uid or name
        self.labels: Mapping[str, str] = labels if labels is not None else {}
        self.annotations: Mapping[str, str] = annotations if annotations is not None else {}
        self.taints = taints
        self.unschedulable = unschedulable
        self.allocatable: ResourceList = allocatable if allocatable is not None else {}
        self.conditions = conditions
        self.images = images
        self.creation_timestamp = creation_timestamp

    def __repr__(self) -> str:
        return f"Node({self.name})"


# --------------------------------------------------------------------------- policy objects


@dataclass(frozen=True, slots=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool = False
    preemption_policy: str = PREEMPT_LOWER_PRIORITY
    description: str = ""


IntOrString = int | str
"""An int, or a percentage string like ``"50%"``."""


@dataclass(slots=True)
class PodDisruptionBudgetStatus:
    disruptions_allowed: int = 0
    current_healthy: int = 0
    desired_healthy: int = 0
    expected_pods: int = 0
    disrupted_pods: dict[str, Time] = field(default_factory=dict)
    observed_generation: int = 0


@dataclass(slots=True, eq=False)
class PodDisruptionBudget:
    name: str
    namespace: str = "default"
    selector: LabelSelector | None = None
    min_available: IntOrString | None = None
    max_unavailable: IntOrString | None = None
    unhealthy_pod_eviction_policy: str | None = None
    status: PodDisruptionBudgetStatus = field(default_factory=PodDisruptionBudgetStatus)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class Namespace:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)

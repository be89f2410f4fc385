"""PodTopologySpread's constraints as the plugin evaluates them (upstream
podtopologyspread/common.go and plugin.go, v1.36).

A pod's ``topologySpreadConstraints`` of one ``whenUnsatisfiable`` kind become
:class:`Constraint` values: the selector parsed (nil selects nothing, ``{}``
everything), ``matchLabelKeys`` merged in (already merged at admission since v1.34;
merging again repeats ``key In (value)`` and selects the same pods),
``minDomains`` 1, ``nodeAffinityPolicy`` Honor and ``nodeTaintsPolicy`` Ignore by
default. A pod without constraints gets the default constraints only when a
selector derives from its controller (:func:`default_selector`).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Protocol, runtime_checkable

from kubesched.api.selectors import (
    IN,
    LabelMatcher,
    compile_label_selector,
    label_selector_parse_error,
    match_node_selector_map,
    node_selector_matches,
)
from kubesched.api.taints import do_not_schedule_taint, find_matching_untolerated_taint
from kubesched.api.types import (
    LABEL_HOSTNAME,
    LABEL_ZONE,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    OwnerReference,
    Pod,
    PodSpec,
    TopologySpreadConstraint,
)
from kubesched.framework.types import PodInfo

NAME: Final = "PodTopologySpread"

ERR_REASON_CONSTRAINTS_NOT_MATCH: Final = "node(s) didn't match pod topology spread constraints"
"""Filter reason when the skew would exceed maxSkew; code Unschedulable (preemption may help)."""
ERR_REASON_NODE_LABEL_NOT_MATCH: Final = (
    ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
)
"""Filter reason when the node lacks a topology key; code UnschedulableAndUnresolvable."""

DO_NOT_SCHEDULE: Final = "DoNotSchedule"
SCHEDULE_ANYWAY: Final = "ScheduleAnyway"
HONOR: Final = "Honor"
IGNORE: Final = "Ignore"

MAX_INT32: Final = 2**31 - 1
"""The minimum matching number of a constraint without any eligible domain
(upstream initialises its critical paths with ``math.MaxInt32``)."""

SYSTEM_DEFAULT_CONSTRAINTS: Final[tuple[TopologySpreadConstraint, ...]] = (
    TopologySpreadConstraint(
        max_skew=3, topology_key=LABEL_HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY
    ),
    TopologySpreadConstraint(
        max_skew=5, topology_key=LABEL_ZONE, when_unsatisfiable=SCHEDULE_ANYWAY
    ),
)
"""``systemDefaultConstraints`` of plugin.go (``defaultingType: System``); the
scheduler config keeps a copy (plugins may not import it)."""

# Controllers helper.DefaultSelector derives a selector from (besides Services).
_RC: Final = ("v1", "ReplicationController")
_RS: Final = ("apps/v1", "ReplicaSet")
_SS: Final = ("apps/v1", "StatefulSet")
_SELECTOR_KINDS: Final = frozenset({_RC, _RS, _SS})


class ConstraintError(Exception):
    """A constraint's label selector does not parse; the message is upstream's error text."""


# --------------------------------------------------------------------------- selectors


SelectorKey = tuple[object, ...]


class Selector:
    """A parsed label selector (``labels.Selector``): ``None`` selects nothing,
    an empty one everything. ``key`` is hashable and equal for selectors that
    match the same requirements (in the same order)."""

    __slots__ = ("_match", "key", "label_selector")

    def __init__(self, label_selector: LabelSelector | None) -> None:
        self.label_selector = label_selector
        self._match: LabelMatcher = compile_label_selector(label_selector)
        if label_selector is None:
            self.key: SelectorKey = ("nothing",)
        else:
            self.key = (
                "selector",
                tuple(sorted(label_selector.match_labels.items())),
                tuple((r.key, r.operator, r.values) for r in label_selector.match_expressions),
            )

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self._match(labels)

    def is_empty(self) -> bool:
        """``Selector.Empty()``: selects everything without any requirement. Such a
        selector counts no pod at all (upstream ``countPodsMatchSelector``)."""
        return self.label_selector is not None and self.label_selector.is_empty()

    def __repr__(self) -> str:
        return f"Selector({self.key!r})"


def merge_match_label_keys(
    sel: LabelSelector | None, keys: Iterable[str], pod_labels: Mapping[str, str]
) -> LabelSelector | None:
    """``mergeLabelSetWithSelector``: ``key In (value)`` for each key the pod has a
    label for, ANDed with the selector. A nil selector (selects nothing) stays nil."""
    extra = tuple(
        LabelSelectorRequirement(k, IN, (pod_labels[k],)) for k in keys if k in pod_labels
    )
    if sel is None or not extra:
        return sel
    return LabelSelector(sel.match_labels, (*sel.match_expressions, *extra))


# --------------------------------------------------------------------------- constraints


@dataclass(frozen=True, slots=True, eq=False)
class Constraint:
    """Upstream's internal ``topologySpreadConstraint``: a constraint with its
    selector parsed and its optional fields defaulted."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE

    @property
    def honors_affinity(self) -> bool:
        return self.node_affinity_policy == HONOR

    @property
    def honors_taints(self) -> bool:
        return self.node_taints_policy == HONOR


def filter_constraints(
    constraints: Iterable[TopologySpreadConstraint], pod_labels: Mapping[str, str], action: str
) -> tuple[Constraint, ...]:
    """``filterTopologySpreadConstraints``: the constraints of kind ``action``,
    parsed. Raises ConstraintError when a selector does not parse."""
    out: list[Constraint] = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        err = label_selector_parse_error(c.label_selector)
        if err is not None:
            raise ConstraintError(err)
        sel = c.label_selector
        if c.match_label_keys:
            sel = merge_match_label_keys(sel, c.match_label_keys, pod_labels)
        out.append(
            Constraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=Selector(sel),
                min_domains=1 if c.min_domains is None else c.min_domains,
                node_affinity_policy=c.node_affinity_policy or HONOR,
                node_taints_policy=c.node_taints_policy or IGNORE,
            )
        )
    return tuple(out)


@runtime_checkable
class WorkloadSelectorReader(Protocol):
    """Optional extension of the handle's ``ClusterReader``: the label selector of
    the ReplicaSet / StatefulSet (or ReplicationController, as matchLabels) a
    controller reference names, or None when no such object exists."""

    def workload_selector(self, namespace: str, ref: OwnerReference) -> LabelSelector | None: ...


def default_selector(pod: Pod, reader: object) -> Selector:
    """``helper.DefaultSelector`` without Services (kubesched has none): the
    controller's selector from a :class:`WorkloadSelectorReader`; else, for a
    ReplicaSet's pod, its own labels (its replicas carry identical labels, so the
    same pods are selected); else empty ("no default constraints")."""
    ref = pod.controller_ref()
    if ref is None or (ref.api_version, ref.kind) not in _SELECTOR_KINDS:
        return Selector(LabelSelector())
    if isinstance(reader, WorkloadSelectorReader):
        sel = reader.workload_selector(pod.namespace, ref)
        if sel is None or label_selector_parse_error(sel) is not None:
            return Selector(LabelSelector())
        return Selector(sel)
    if (ref.api_version, ref.kind) == _RS:
        return Selector(LabelSelector(match_labels=dict(pod.labels)))
    return Selector(LabelSelector())


class ConstraintSource:
    """The constraints the plugin applies to a pod (upstream ``getConstraints`` for
    DoNotSchedule and ``initPreScoreState`` for ScheduleAnyway), cached per pod
    spec and the few pod fields they depend on."""

    __slots__ = ("_cache", "defaults", "reader")

    def __init__(self, defaults: tuple[TopologySpreadConstraint, ...], reader: object) -> None:
        self.defaults = defaults
        self.reader = reader
        self._cache: weakref.WeakKeyDictionary[
            PodSpec, dict[tuple[object, ...], tuple[Constraint, ...]]
        ] = weakref.WeakKeyDictionary()

    def hard(self, pod: Pod) -> tuple[Constraint, ...]:
        """DoNotSchedule constraints; ConstraintError text as upstream's
        (``obtaining pod's hard ...`` / ``setting default hard ...``)."""
        return self._get(pod, DO_NOT_SCHEDULE, "hard")

    def soft(self, pod: Pod) -> tuple[Constraint, ...]:
        """ScheduleAnyway constraints (PreScore / Score)."""
        return self._get(pod, SCHEDULE_ANYWAY, "soft")

    def _get(self, pod: Pod, action: str, word: str) -> tuple[Constraint, ...]:
        spec = pod.spec
        own = spec.topology_spread_constraints
        if own:
            key: tuple[object, ...] = (
                action,
                *((k, pod.labels.get(k)) for c in own for k in c.match_label_keys),
            )
        else:
            if not any(c.when_unsatisfiable == action for c in self.defaults):
                return ()
            key = (action, pod.namespace, pod.controller_ref(), tuple(sorted(pod.labels.items())))
        per_spec = self._cache.get(spec)
        if per_spec is None:
            per_spec = {}
            self._cache[spec] = per_spec
        found = per_spec.get(key)
        if found is not None:
            return found
        try:
            if own:
                out = filter_constraints(own, pod.labels, action)
            else:
                out = self._defaults_for(pod, action)
        except ConstraintError as err:
            what = "obtaining pod's" if own else "setting default"
            raise ConstraintError(f"{what} {word} topology spread constraints: {err}") from None
        if len(per_spec) > 64:
            per_spec.clear()
        per_spec[key] = out
        return out

    def _defaults_for(self, pod: Pod, action: str) -> tuple[Constraint, ...]:
        """``buildDefaultConstraints``: the default constraints of kind ``action`` with
        the pod's default selector; none when that selector is empty."""
        constraints = filter_constraints(self.defaults, pod.labels, action)
        if not constraints:
            return ()
        sel = default_selector(pod, self.reader)
        if sel.is_empty():
            return ()
        return tuple(
            Constraint(
                c.max_skew,
                c.topology_key,
                sel,
                c.min_domains,
                c.node_affinity_policy,
                c.node_taints_policy,
            )
            for c in constraints
        )


# --------------------------------------------------------------------------- nodes and pods


def node_labels_match(labels: Mapping[str, str], constraints: Iterable[Constraint]) -> bool:
    """``nodeLabelsMatchSpreadConstraints``: the node has every topology key."""
    return all(c.topology_key in labels for c in constraints)


def required_affinity_matches(spec: PodSpec, node: Node) -> bool:
    """``nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)`` with parse errors
    ignored (a term that does not parse matches nothing)."""
    if not match_node_selector_map(spec.node_selector, node.labels):
        return False
    aff = spec.affinity
    if aff is None or aff.node_affinity is None or aff.node_affinity.required is None:
        return True
    return node_selector_matches(aff.node_affinity.required, node.name, node.labels)


def untolerated(spec: PodSpec, node: Node) -> bool:
    """The node has a NoSchedule/NoExecute taint the pod does not tolerate."""
    taint = find_matching_untolerated_taint(node.taints, spec.tolerations, do_not_schedule_taint)
    return taint is not None


def node_included(c: Constraint, spec: PodSpec, node: Node) -> bool:
    """``matchNodeInclusionPolicies``: whether the node's domain counts for ``c``."""
    if c.honors_affinity and not required_affinity_matches(spec, node):
        return False
    return not (c.honors_taints and untolerated(spec, node))


def count_pods_match(pods: Iterable[PodInfo], selector: Selector, namespace: str) -> int:
    """``countPodsMatchSelector``: pods of the namespace, not terminating, whose
    labels match; 0 for an empty selector."""
    if selector.is_empty():
        return 0
    n = 0
    for pi in pods:
        p = pi.pod
        if p.deletion_timestamp is not None or p.namespace != namespace:
            continue
        if selector.matches(p.labels):
            n += 1
    return n


def labels_match_any(constraints: Iterable[Constraint], labels: Mapping[str, str]) -> bool:
    """``podLabelsMatchSpreadConstraints``."""
    return any(c.selector.matches(labels) for c in constraints)

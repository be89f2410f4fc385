"""What the API server does to a PriorityClass or a Pod on create, before any scheduler
sees it (upstream-behaviour.md §1, R1.2–R1.7).

- :func:`validate_priority_class`: PriorityClass API validation
  (pkg/apis/scheduling/validation);
- :class:`PriorityClasses`: the cluster's classes with the two built-in system
  classes, and the Priority admission plugin's check of a second ``globalDefault``;
- :func:`admit_pod`: the Priority admission plugin on Pod create
  (plugin/pkg/admission/priority);
- :func:`prepare_pod_for_create`: the pod registry's create-time mutation
  (pkg/registry/core/pod/strategy.go).

Error messages are upstream's, without the ``pods "x" is forbidden:`` prefix;
``InputError.obj``/``field`` say which object and field.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Final

from kubesched.api.errors import InputError
from kubesched.api.types import (
    PREEMPT_LOWER_PRIORITY,
    PREEMPT_NEVER,
    Affinity,
    LabelSelector,
    LabelSelectorRequirement,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodCondition,
    PodSpec,
    PriorityClass,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)

DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS: Final = 0
HIGHEST_USER_DEFINABLE_PRIORITY: Final = 1_000_000_000
SYSTEM_CRITICAL_PRIORITY: Final = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
SYSTEM_PRIORITY_CLASS_PREFIX: Final = "system-"
SYSTEM_CLUSTER_CRITICAL: Final = "system-cluster-critical"
SYSTEM_NODE_CRITICAL: Final = "system-node-critical"

SYSTEM_PRIORITY_CLASSES: Final = (
    PriorityClass(
        name=SYSTEM_NODE_CRITICAL,
        value=SYSTEM_CRITICAL_PRIORITY + 1000,
        description="Used for system critical pods that must not be moved from their current node.",
    ),
    PriorityClass(
        name=SYSTEM_CLUSTER_CRITICAL,
        value=SYSTEM_CRITICAL_PRIORITY,
        description=(
            "Used for system critical pods that must run in the cluster, "
            "but can be moved to another node if necessary."
        ),
    ),
)

_PREEMPTION_POLICIES: Final = (PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER)


def known_system_priority_class_error(pc: PriorityClass) -> str | None:
    """None when ``pc`` is exactly a built-in system class (name, value, globalDefault),
    else why not (IsKnownSystemPriorityClass)."""
    for spc in SYSTEM_PRIORITY_CLASSES:
        if spc.name == pc.name:
            if spc.value != pc.value:
                return f"value of {spc.name} PriorityClass must be {spc.value}"
            if spc.global_default != pc.global_default:
                gd = "true" if spc.global_default else "false"
                return f"globalDefault of {spc.name} PriorityClass must be {gd}"
            return None
    return f"{pc.name} is not a known system priority class"


def priority_class_errors(pc: PriorityClass) -> list[tuple[str, str]]:
    """(field, message) pairs of ValidatePriorityClass, in upstream's order."""
    errs: list[tuple[str, str]] = []
    if pc.name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
        why = known_system_priority_class_error(pc)
        if why is not None:
            errs.append(
                (
                    "metadata.name",
                    "Forbidden: priority class names with 'system-' prefix are reserved "
                    f"for system use only. error: {why}",
                )
            )
    elif pc.value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(
            (
                "value",
                "Forbidden: maximum allowed value of a user defined priority is "
                f"{HIGHEST_USER_DEFINABLE_PRIORITY}",
            )
        )
    if pc.preemption_policy == "":
        errs.append(("preemptionPolicy", "Required value"))
    elif pc.preemption_policy not in _PREEMPTION_POLICIES:
        errs.append(
            (
                "preemptionPolicy",
                f'Unsupported value: "{pc.preemption_policy}": supported values: '
                + ", ".join(f'"{p}"' for p in _PREEMPTION_POLICIES),
            )
        )
    return errs


def validate_priority_class(pc: PriorityClass) -> list[str]:
    """API validation of a PriorityClass: ``["<field>: <message>", ...]``, empty if valid."""
    return [f"{f}: {m}" for f, m in priority_class_errors(pc)]


def _pc_obj(name: str) -> str:
    return f"priorityclass {name}"


class PriorityClasses:
    """The PriorityClasses of a cluster, the built-in system classes always present.
    ``add`` raises :class:`InputError` for an invalid class or a second global
    default; a class identical to a built-in one (a dump's) changes nothing."""

    def __init__(self) -> None:
        self._by_name: dict[str, PriorityClass] = {pc.name: pc for pc in SYSTEM_PRIORITY_CLASSES}

    def add(self, pc: PriorityClass) -> None:
        obj = _pc_obj(pc.name)
        errs = priority_class_errors(pc)
        if errs:
            field, message = errs[0]
            raise InputError(message, obj=obj, field=field)
        if pc.name in self._by_name:
            if any(pc.name == s.name for s in SYSTEM_PRIORITY_CLASSES):
                return  # validated above to be identical in value and globalDefault
            raise InputError(
                f'priorityclasses.scheduling.k8s.io "{pc.name}" already exists', obj=obj
            )
        if pc.global_default:
            current = self.default()
            if current is not None:
                raise InputError(
                    f"PriorityClass {current.name} is already marked as default. "
                    "Only one default can exist",
                    obj=obj,
                    field="globalDefault",
                )
        self._by_name[pc.name] = pc

    def remove(self, name: str) -> None:
        """Delete a class (absent: nothing happens). The built-in system classes
        cannot be deleted: InputError with the registry's Forbidden message."""
        if any(name == s.name for s in SYSTEM_PRIORITY_CLASSES):
            raise InputError(
                f'priorityclasses.scheduling.k8s.io "{name}" is forbidden: '
                "this is a system priority class and cannot be deleted",
                obj=_pc_obj(name),
            )
        self._by_name.pop(name, None)

    def get(self, name: str) -> PriorityClass | None:
        return self._by_name.get(name)

    def default(self) -> PriorityClass | None:
        """The global default class; if several (a race upstream), the lowest value."""
        best: PriorityClass | None = None
        for pc in self._by_name.values():
            if pc.global_default and (best is None or pc.value < best.value):
                best = pc
        return best

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[PriorityClass]:
        return iter(self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)


def admit_pod(
    pod: Pod,
    classes: PriorityClasses,
    spec_priority: int | None,
    spec_preemption_policy: str | None,
) -> None:
    """The Priority admission plugin on Pod create: sets ``pod.priority``,
    ``priority_class_name`` (the default class's when none was written) and
    ``preemption_policy``. ``spec_priority``/``spec_preemption_policy`` are the
    values as written (None when absent). Raises :class:`InputError` (Forbidden
    upstream), the pod untouched, when the class is missing or a value disagrees.
    """
    obj = f"pod {pod.namespace}/{pod.name}"
    name = pod.priority_class_name
    if not name:
        dpc = classes.default()
        if dpc is not None:
            name, priority, policy = dpc.name, dpc.value, dpc.preemption_policy
        else:
            priority = DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS
            policy = PREEMPT_LOWER_PRIORITY
    else:
        pc = classes.get(name)
        if pc is None:
            raise InputError(
                f"no PriorityClass with name {name} was found",
                obj=obj,
                field="spec.priorityClassName",
            )
        priority, policy = pc.value, pc.preemption_policy
    if spec_priority is not None and spec_priority != priority:
        raise InputError(
            f"the integer value of priority ({spec_priority}) must not be provided in pod spec; "
            f"priority admission controller computed {priority} from the given PriorityClass name",
            obj=obj,
            field="spec.priority",
        )
    if spec_preemption_policy is not None and spec_preemption_policy != policy:
        raise InputError(
            f"the string value of PreemptionPolicy ({spec_preemption_policy}) must not be "
            f"provided in pod spec; priority admission controller computed {policy} from the "
            "given PriorityClass name",
            obj=obj,
            field="spec.preemptionPolicy",
        )
    pod.priority = priority
    pod.priority_class_name = name
    pod.preemption_policy = policy


# --------------------------------------------------------------------------- create mutations

POD_SCHEDULED: Final = "PodScheduled"
REASON_SCHEDULING_GATED: Final = "SchedulingGated"
SCHEDULING_GATED_MESSAGE: Final = "Scheduling is blocked due to non-empty scheduling gates"

# spec -> {(relevant label items) -> mutated spec}: pods of one template share a spec
# and usually the label values their selectors merge, so they share the result too.
_MERGED: Final = "admission/merged"
"""``PodSpec.derived`` key: (relevant label items) -> the mutated spec."""


def _label_keys(spec: PodSpec) -> set[str]:
    keys: set[str] = set()
    aff = spec.affinity
    if aff is not None:
        for pa in (aff.pod_affinity, aff.pod_anti_affinity):
            if pa is None:
                continue
            for t in (*pa.required, *(w.term for w in pa.preferred)):
                if t.label_selector is not None:
                    keys.update(t.match_label_keys, t.mismatch_label_keys)
    for c in spec.topology_spread_constraints:
        if c.label_selector is not None:
            keys.update(c.match_label_keys)
    return keys


def _merge(
    selector: LabelSelector,
    match: tuple[str, ...],
    mismatch: tuple[str, ...],
    labels: Mapping[str, str],
) -> LabelSelector:
    extra = [LabelSelectorRequirement(k, "In", (labels[k],)) for k in match if k in labels]
    extra += [LabelSelectorRequirement(k, "NotIn", (labels[k],)) for k in mismatch if k in labels]
    if not extra:
        return selector
    return LabelSelector(selector.match_labels, (*selector.match_expressions, *extra))


def _merge_term(term: PodAffinityTerm, labels: Mapping[str, str]) -> PodAffinityTerm:
    if term.label_selector is None or not (term.match_label_keys or term.mismatch_label_keys):
        return term  # a nil selector matches nothing; nothing to merge into
    sel = _merge(term.label_selector, term.match_label_keys, term.mismatch_label_keys, labels)
    return term if sel is term.label_selector else replace(term, label_selector=sel)


def _merge_affinity(pa: PodAffinity | None, labels: Mapping[str, str]) -> PodAffinity | None:
    if pa is None:
        return None
    return PodAffinity(
        required=tuple(_merge_term(t, labels) for t in pa.required),
        preferred=tuple(
            WeightedPodAffinityTerm(w.weight, _merge_term(w.term, labels)) for w in pa.preferred
        ),
    )


def _merge_spread(
    c: TopologySpreadConstraint, labels: Mapping[str, str]
) -> TopologySpreadConstraint:
    if c.label_selector is None or not c.match_label_keys:
        return c
    sel = _merge(c.label_selector, c.match_label_keys, (), labels)
    return c if sel is c.label_selector else replace(c, label_selector=sel)


def _merged_spec(spec: PodSpec, labels: Mapping[str, str]) -> PodSpec:
    aff = spec.affinity
    new_aff = aff
    if aff is not None and (aff.pod_affinity is not None or aff.pod_anti_affinity is not None):
        new_aff = Affinity(
            node_affinity=aff.node_affinity,
            pod_affinity=_merge_affinity(aff.pod_affinity, labels),
            pod_anti_affinity=_merge_affinity(aff.pod_anti_affinity, labels),
        )
    return replace(
        spec,
        affinity=new_aff,
        topology_spread_constraints=tuple(
            _merge_spread(c, labels) for c in spec.topology_spread_constraints
        ),
    )


def prepare_pod_for_create(pod: Pod) -> None:
    """The pod registry's create-time mutations, applied once when a pod is created:

    - MatchLabelKeysInPodAffinity (GA): each ``matchLabelKeys`` key the pod has a
      label for adds ``key In (value)`` to the term's label selector (terms without
      one match nothing and are left alone), ``mismatchLabelKeys`` ``key NotIn``;
    - MatchLabelKeysInPodTopologySpreadSelectorMerge (beta, on since v1.34): the
      same for topology spread constraints' ``matchLabelKeys`` (``In`` only); the
      fields are kept, so merging again (as PodTopologySpread does) only duplicates;
    - a pod with scheduling gates and no ``PodScheduled`` condition gets
      ``PodScheduled=False`` with reason ``SchedulingGated``.
    """
    spec = pod.spec
    keys = _label_keys(spec)
    if keys:
        relevant = tuple(sorted((k, pod.labels[k]) for k in keys if k in pod.labels))
        if relevant:
            cache: dict[tuple[tuple[str, str], ...], PodSpec] = spec.derived.setdefault(_MERGED, {})
            merged = cache.get(relevant)
            if merged is None:
                merged = _merged_spec(spec, pod.labels)
                cache[relevant] = merged
            pod.spec = merged
    if spec.scheduling_gates and pod.condition(POD_SCHEDULED) is None:
        pod.conditions.append(
            PodCondition(
                type=POD_SCHEDULED,
                status="False",
                reason=REASON_SCHEDULING_GATED,
                message=SCHEDULING_GATED_MESSAGE,
            )
        )

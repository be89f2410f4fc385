"""The pre-check of AssignedPodAdded / AssignedPodUpdated events
(upstream getUnschedulablePodsWithCrossTopologyTerm).

A bound pod appearing or changing can only help an unschedulable pod that
was rejected by PodTopologySpread in the same namespace, or that has a
*required pod affinity* term matching the bound pod. (Anti-affinity terms are
not considered: a new pod never relieves them.)
"""

from __future__ import annotations

from collections.abc import Mapping

from kubesched.api.types import LabelSelector, Pod, PodAffinityTerm

POD_TOPOLOGY_SPREAD = "PodTopologySpread"


def selector_matches(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """metav1.LabelSelectorAsSelector(selector).Matches(labels): a missing selector
    matches nothing, an empty one everything."""
    if selector is None:
        return False
    for k, v in selector.match_labels.items():
        if labels.get(k) != v:
            return False
    for req in selector.match_expressions:
        present = req.key in labels
        op = req.operator
        if op == "In":
            if not present or labels[req.key] not in req.values:
                return False
        elif op == "NotIn":
            if present and labels[req.key] in req.values:
                return False
        elif op == "Exists":
            if not present:
                return False
        elif op == "DoesNotExist":
            if present:
                return False
        else:
            return False
    return True


def affinity_term_matches(
    owner: Pod, term: PodAffinityTerm, pod: Pod, ns_labels: Mapping[str, str]
) -> bool:
    """upstream AffinityTerm.Matches for a term of ``owner`` against ``pod``.

    The term's namespaces default to the owner's namespace when it lists none
    and has no namespace selector.
    """
    if term.namespaces or term.namespace_selector is not None:
        namespaces: tuple[str, ...] = term.namespaces
    else:
        namespaces = (owner.namespace,)
    if pod.namespace in namespaces or selector_matches(term.namespace_selector, ns_labels):
        return selector_matches(term.label_selector, pod.labels)
    return False


def required_affinity_matches(owner: Pod, pod: Pod, ns_labels: Mapping[str, str]) -> bool:
    aff = owner.spec.affinity
    if aff is None or aff.pod_affinity is None:
        return False
    return any(affinity_term_matches(owner, t, pod, ns_labels) for t in aff.pod_affinity.required)

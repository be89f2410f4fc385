"""The pre-check of AssignedPodAdded / AssignedPodUpdated events
(upstream getUnschedulablePodsWithCrossTopologyTerm).

A bound pod appearing or changing can only help an unschedulable pod that
was rejected by PodTopologySpread in the same namespace, or that has a
*required pod affinity* term matching the bound pod. (Anti-affinity terms are
not considered: a new pod never relieves them.)
"""

from __future__ import annotations

from collections.abc import Mapping

from kubesched.api.selectors import label_selector_matches
from kubesched.api.types import Pod, PodAffinityTerm

POD_TOPOLOGY_SPREAD = "PodTopologySpread"


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
    if pod.namespace in namespaces or label_selector_matches(term.namespace_selector, ns_labels):
        return label_selector_matches(term.label_selector, pod.labels)
    return False


def required_affinity_matches(owner: Pod, pod: Pod, ns_labels: Mapping[str, str]) -> bool:
    aff = owner.spec.affinity
    if aff is None or aff.pod_affinity is None:
        return False
    return any(affinity_term_matches(owner, t, pod, ns_labels) for t in aff.pod_affinity.required)

"""Parsed pod (anti-)affinity terms and how they match pods (upstream fwk.AffinityTerm).

Upstream (v1.36) ``newAffinityTerm``, ``GetAffinityTerms``, ``AffinityTerm.Matches``,
``mergeAffinityTermNamespacesIfNotEmpty``:

- namespaces: ``term.namespaces``, or the pod's own when neither ``namespaces``
  nor ``namespaceSelector`` is set; an absent selector selects nothing, ``{}``
  every namespace;
- ``Matches(pod, nsLabels)``: ``(pod.ns in namespaces or
  namespaceSelector.Matches(nsLabels)) and selector.Matches(pod.labels)``; an
  existing pod's terms see the incoming pod's namespace labels (:func:`matches`),
  the incoming pod's non-empty selector is unrolled into the matching existing
  namespaces (:func:`matches_resolved`, lazily via :class:`NamespaceResolver`);
- ``matchLabelKeys`` / ``mismatchLabelKeys`` are not read: admission merged them
  into the selector (KEP-3633);
- a group of terms with an unparsable selector is dropped with its error kept:
  the incoming pod is rejected at PreFilter (``parsing pod: ...``), an existing
  pod just has no terms of that group.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from kubesched.api.selectors import (
    LabelMatcher,
    compile_label_selector,
    label_selector_parse_error,
)
from kubesched.api.types import (
    Affinity,
    LabelSelector,
    Namespace,
    Pod,
    PodAffinityTerm,
    PodSpec,
    WeightedPodAffinityTerm,
)

EMPTY_LABELS: Final[Mapping[str, str]] = {}


@dataclass(frozen=True, slots=True, eq=False)
class AffinityTerm:
    """One processed ``PodAffinityTerm`` (upstream fwk.AffinityTerm)."""

    selector: LabelMatcher
    """The compiled ``labelSelector`` (absent matches nothing)."""
    namespaces: frozenset[str]
    ns_matcher: LabelMatcher
    """The compiled ``namespaceSelector`` (absent matches nothing, ``{}`` everything)."""
    ns_all: bool
    """``namespaceSelector`` is ``{}``: every namespace."""
    ns_selector_set: bool
    """``namespaceSelector`` is present and not empty (needs namespace labels)."""
    topology_key: str


@dataclass(frozen=True, slots=True, eq=False)
class WeightedTerm:
    term: AffinityTerm
    weight: int


@dataclass(frozen=True, slots=True, eq=False)
class PodTerms:
    """All processed terms of one pod spec in one namespace."""

    required_affinity: tuple[AffinityTerm, ...]
    required_anti: tuple[AffinityTerm, ...]
    preferred_affinity: tuple[WeightedTerm, ...]
    preferred_anti: tuple[WeightedTerm, ...]
    errors: tuple[str, ...]
    """Parse errors, one per failed group, prefixed like upstream
    (``requiredAffinityTerms: ...``)."""

    @property
    def has_required(self) -> bool:
        return bool(self.required_affinity or self.required_anti)

    def error_message(self) -> str:
        """``utilerrors.NewAggregate(errs).Error()``: one message as is, several
        (deduplicated) joined by ", " inside brackets."""
        unique = list(dict.fromkeys(self.errors))
        return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


NO_TERMS: Final = PodTerms((), (), (), (), ())


# --------------------------------------------------------------------------- parsing


def _term_error(t: PodAffinityTerm) -> str | None:
    # newAffinityTerm converts the label selector first, then the namespace selector.
    return label_selector_parse_error(t.label_selector) or label_selector_parse_error(
        t.namespace_selector
    )


def _new_term(t: PodAffinityTerm, namespace: str) -> AffinityTerm:
    ns_sel: LabelSelector | None = t.namespace_selector
    if not t.namespaces and ns_sel is None:
        namespaces = frozenset((namespace,))
    else:
        namespaces = frozenset(t.namespaces)
    return AffinityTerm(
        selector=compile_label_selector(t.label_selector),
        namespaces=namespaces,
        ns_matcher=compile_label_selector(ns_sel),
        ns_all=ns_sel is not None and ns_sel.is_empty(),
        ns_selector_set=ns_sel is not None and not ns_sel.is_empty(),
        topology_key=t.topology_key,
    )


def _group(
    terms: Sequence[PodAffinityTerm], namespace: str, what: str, errors: list[str]
) -> tuple[AffinityTerm, ...]:
    for t in terms:
        err = _term_error(t)
        if err is not None:
            errors.append(f"{what}: {err}")
            return ()
    return tuple(_new_term(t, namespace) for t in terms)


def _weighted_group(
    terms: Sequence[WeightedPodAffinityTerm], namespace: str, what: str, errors: list[str]
) -> tuple[WeightedTerm, ...]:
    for w in terms:
        err = _term_error(w.term)
        if err is not None:
            errors.append(f"{what}: {err}")
            return ()
    return tuple(WeightedTerm(_new_term(w.term, namespace), w.weight) for w in terms)


def parse_terms(affinity: Affinity | None, namespace: str) -> PodTerms:
    """All groups of terms of a pod spec's affinity for a pod in ``namespace``."""
    if affinity is None or (affinity.pod_affinity is None and affinity.pod_anti_affinity is None):
        return NO_TERMS
    pa = affinity.pod_affinity
    paa = affinity.pod_anti_affinity
    errors: list[str] = []
    req_aff = _group(pa.required if pa else (), namespace, "requiredAffinityTerms", errors)
    req_anti = _group(paa.required if paa else (), namespace, "requiredAntiAffinityTerms", errors)
    pref_aff = _weighted_group(
        pa.preferred if pa else (), namespace, "preferredAffinityTerms", errors
    )
    pref_anti = _weighted_group(
        paa.preferred if paa else (), namespace, "preferredAntiAffinityTerms", errors
    )
    return PodTerms(req_aff, req_anti, pref_aff, pref_anti, tuple(errors))


_CACHE: weakref.WeakKeyDictionary[PodSpec, dict[str, PodTerms]] = weakref.WeakKeyDictionary()


def pod_terms(pod: Pod) -> PodTerms:
    """The pod's processed terms, cached per (spec object, namespace): pods made
    from one template share the result."""
    spec = pod.spec
    if spec.affinity is None:
        return NO_TERMS
    by_ns = _CACHE.get(spec)
    if by_ns is None:
        by_ns = {}
        _CACHE[spec] = by_ns
    terms = by_ns.get(pod.namespace)
    if terms is None:
        terms = parse_terms(spec.affinity, pod.namespace)
        by_ns[pod.namespace] = terms
    return terms


# --------------------------------------------------------------------------- matching


def matches(term: AffinityTerm, pod: Pod, ns_labels: Mapping[str, str]) -> bool:
    """Upstream ``AffinityTerm.Matches(pod, nsLabels)``: for the terms of an existing
    pod (``ns_labels`` = the incoming pod's namespace labels), and for the queueing
    hints (``ns_labels`` = ``{}``, as upstream passes nil)."""
    if not (pod.namespace in term.namespaces or term.ns_matcher(ns_labels)):
        return False
    return term.selector(pod.labels)


def matches_all(terms: Sequence[AffinityTerm], pod: Pod, ns_labels: Mapping[str, str]) -> bool:
    """Upstream ``podMatchesAllAffinityTerms`` with unresolved terms: False for no terms."""
    return bool(terms) and all(matches(t, pod, ns_labels) for t in terms)


class NamespaceResolver:
    """Lazily: does an incoming term's namespace selector select this namespace
    (``mergeAffinityTermNamespacesIfNotEmpty``)? One per cycle."""

    __slots__ = ("_cache", "_lookup")

    def __init__(self, lookup: Callable[[str], Namespace | None]) -> None:
        self._lookup = lookup
        self._cache: dict[str, Mapping[str, str] | None] = {}

    def labels(self, namespace: str) -> Mapping[str, str] | None:
        """The namespace's labels, or None when it does not exist."""
        try:
            return self._cache[namespace]
        except KeyError:
            ns = self._lookup(namespace)
            found = ns.labels if ns is not None else None
            self._cache[namespace] = found
            return found


def namespace_selected(term: AffinityTerm, namespace: str, resolver: NamespaceResolver) -> bool:
    """The namespace half of an incoming (resolved) term."""
    if namespace in term.namespaces or term.ns_all:
        return True
    if not term.ns_selector_set:
        return False
    labels = resolver.labels(namespace)
    return labels is not None and term.ns_matcher(labels)


def matches_resolved(
    term: AffinityTerm,
    namespace: str,
    labels: Mapping[str, str],
    resolver: NamespaceResolver,
) -> bool:
    """An incoming pod's term (namespace selector unrolled) against a pod given by
    namespace and labels (upstream ``Matches(pod, nil)`` after the merge)."""
    return term.selector(labels) and namespace_selected(term, namespace, resolver)


def matches_all_resolved(
    terms: Sequence[AffinityTerm],
    namespace: str,
    labels: Mapping[str, str],
    resolver: NamespaceResolver,
) -> bool:
    """Upstream ``podMatchesAllAffinityTerms`` for the incoming pod's terms."""
    return bool(terms) and all(matches_resolved(t, namespace, labels, resolver) for t in terms)

"""Selectors and affinity: ``metav1.LabelSelector``, node selector terms, a required
``NodeSelector``, node affinity and pod (anti-)affinity, validated as the API
server validates them (ValidateLabelSelector, ValidateNodeSelectorTerm,
validatePodAffinityTerm) with upstream's wording."""

from __future__ import annotations

from typing import Any, Final

from kubesched.api.convert.meta import check_dns_label
from kubesched.api.messages import child, fail, forbidden, invalid, required, unsupported
from kubesched.api.reader import (
    Raw,
    as_map,
    get_int,
    get_map,
    get_str,
    get_str_list,
    get_str_map,
    map_list,
    opt_map,
    req_str,
)
from kubesched.api.types import (
    Affinity,
    LabelSelector,
    LabelSelectorRequirement,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodAffinity,
    PodAffinityTerm,
    PreferredSchedulingTerm,
    WeightedPodAffinityTerm,
)

LABEL_SELECTOR_OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist")


def _label_requirement(raw: Raw, path: str) -> LabelSelectorRequirement:
    key = req_str(raw, "key", path)
    op = get_str(raw, "operator", path)
    values = get_str_list(raw, "values", path)
    if op in ("In", "NotIn"):
        if not values:
            raise fail(
                child(path, "values"),
                required("must be specified when `operator` is 'In' or 'NotIn'"),
            )
    elif op in ("Exists", "DoesNotExist"):
        if values:
            raise fail(
                child(path, "values"),
                forbidden("may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
            )
    else:
        raise fail(child(path, "operator"), unsupported(op, LABEL_SELECTOR_OPERATORS))
    return LabelSelectorRequirement(key=key, operator=op, values=values)


def label_selector(value: Any, path: str) -> LabelSelector | None:
    """metav1.LabelSelector; ``None`` when absent (selects nothing where optional)."""
    if value is None:
        return None
    raw = as_map(value, path)
    return LabelSelector(
        match_labels=get_str_map(raw, "matchLabels", path),
        match_expressions=map_list(raw, "matchExpressions", path, _label_requirement),
    )


def _node_requirement(raw: Raw, path: str) -> NodeSelectorRequirement:
    key = req_str(raw, "key", path)
    op = get_str(raw, "operator", path)
    values = get_str_list(raw, "values", path)
    vpath = child(path, "values")
    if op in ("In", "NotIn"):
        if not values:
            raise fail(vpath, required("must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            raise fail(
                vpath,
                forbidden("may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
            )
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            raise fail(
                vpath, required("must be specified single value when `operator` is 'Lt' or 'Gt'")
            )
    else:
        raise fail(child(path, "operator"), invalid(op, "not a valid selector operator"))
    return NodeSelectorRequirement(key=key, operator=op, values=values)


def _node_field_requirement(raw: Raw, path: str) -> NodeSelectorRequirement:
    key = get_str(raw, "key", path)
    op = get_str(raw, "operator", path)
    values = get_str_list(raw, "values", path)
    if op in ("In", "NotIn"):
        if len(values) != 1:
            raise fail(
                child(path, "values"),
                required(
                    "must be only one value when `operator` is 'In' or 'NotIn' "
                    "for node field selector"
                ),
            )
    else:
        raise fail(child(path, "operator"), invalid(op, "not a valid selector operator"))
    if key != "metadata.name":
        raise fail(child(path, "key"), invalid(key, "not a valid field selector key"))
    return NodeSelectorRequirement(key=key, operator=op, values=values)


def node_selector_term(raw: Raw, path: str) -> NodeSelectorTerm:
    return NodeSelectorTerm(
        match_expressions=map_list(raw, "matchExpressions", path, _node_requirement),
        match_fields=map_list(raw, "matchFields", path, _node_field_requirement),
    )


def node_selector(raw: Raw, path: str) -> NodeSelector:
    """A required ``NodeSelector`` (a pod's node affinity, a PersistentVolume's):
    at least one term."""
    terms = map_list(raw, "nodeSelectorTerms", path, node_selector_term)
    if not terms:
        raise fail(
            child(path, "nodeSelectorTerms"),
            required("must have at least one node selector term"),
        )
    return NodeSelector(terms)


def _weight(raw: Raw, path: str) -> int:
    weight = get_int(raw, "weight", path, bits=32)
    if not 1 <= weight <= 100:
        raise fail(child(path, "weight"), invalid(weight, "must be in the range 1-100"))
    return weight


def _preferred_term(raw: Raw, path: str) -> PreferredSchedulingTerm:
    weight = _weight(raw, path)
    pref = get_map(raw, "preference", path)
    return PreferredSchedulingTerm(weight, node_selector_term(pref, child(path, "preference")))


def node_affinity(raw: Raw, path: str) -> NodeAffinity:
    req_raw = opt_map(raw, "requiredDuringSchedulingIgnoredDuringExecution", path)
    required_sel = None
    if req_raw is not None:
        rp = child(path, "requiredDuringSchedulingIgnoredDuringExecution")
        required_sel = node_selector(req_raw, rp)
    preferred = map_list(
        raw, "preferredDuringSchedulingIgnoredDuringExecution", path, _preferred_term
    )
    return NodeAffinity(required=required_sel, preferred=preferred)


def pod_affinity_term(raw: Raw, path: str) -> PodAffinityTerm:
    topology_key = get_str(raw, "topologyKey", path)
    if not topology_key:
        raise fail(child(path, "topologyKey"), required("can not be empty"))
    namespaces = get_str_list(raw, "namespaces", path)
    for i, ns in enumerate(namespaces):
        check_dns_label(ns, f"{child(path, 'namespaces')}[{i}]")
    return PodAffinityTerm(
        label_selector=label_selector(raw.get("labelSelector"), child(path, "labelSelector")),
        topology_key=topology_key,
        namespaces=namespaces,
        namespace_selector=label_selector(
            raw.get("namespaceSelector"), child(path, "namespaceSelector")
        ),
        match_label_keys=get_str_list(raw, "matchLabelKeys", path),
        mismatch_label_keys=get_str_list(raw, "mismatchLabelKeys", path),
    )


def _weighted_term(raw: Raw, path: str) -> WeightedPodAffinityTerm:
    weight = _weight(raw, path)
    term_raw = get_map(raw, "podAffinityTerm", path)
    return WeightedPodAffinityTerm(
        weight, pod_affinity_term(term_raw, child(path, "podAffinityTerm"))
    )


def pod_affinity(raw: Raw, path: str) -> PodAffinity:
    return PodAffinity(
        required=map_list(
            raw, "requiredDuringSchedulingIgnoredDuringExecution", path, pod_affinity_term
        ),
        preferred=map_list(
            raw, "preferredDuringSchedulingIgnoredDuringExecution", path, _weighted_term
        ),
    )


def affinity(raw: Raw, path: str) -> Affinity:
    na = opt_map(raw, "nodeAffinity", path)
    pa = opt_map(raw, "podAffinity", path)
    paa = opt_map(raw, "podAntiAffinity", path)
    return Affinity(
        node_affinity=None if na is None else node_affinity(na, child(path, "nodeAffinity")),
        pod_affinity=None if pa is None else pod_affinity(pa, child(path, "podAffinity")),
        pod_anti_affinity=None
        if paa is None
        else pod_affinity(paa, child(path, "podAntiAffinity")),
    )

"""core/v1 structures inside plugin args (``NodeAffinityArgs.addedAffinity``,
``PodTopologySpreadArgs.defaultConstraints``), read strictly into ``api.types``.
Reading a node selector also returns the errors ``nodeaffinity.NewNodeSelector`` /
``NewPreferredSchedulingTerms`` report (``ValidateNodeAffinityArgs``): they depend
on details the typed objects do not keep (a missing vs an empty ``values``).
"""

from __future__ import annotations

from collections.abc import Mapping

from kubesched.api.goformat import go_string_slice
from kubesched.api.messages import child
from kubesched.api.selectors import label_value_errors, qualified_name_errors
from kubesched.api.types import (
    LabelSelector,
    LabelSelectorRequirement,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
    TopologySpreadConstraint,
)
from kubesched.scheduler.config.decode import (
    as_int,
    as_mapping,
    check_fields,
    get_int,
    get_list,
    get_mapping,
    get_str,
    get_str_list,
    get_str_map,
)
from kubesched.scheduler.config.field_errors import (
    FieldError,
    GoValue,
    index,
    invalid,
    not_supported,
)

_LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _requirement_errors(
    key: str, op: str, values: tuple[str, ...] | None, path: str
) -> list[FieldError]:
    """``labels.NewRequirement`` for one node selector ``matchExpressions`` item."""
    errs: list[FieldError] = []
    if op not in _LABEL_OPERATORS:
        # nodeSelectorRequirementsAsSelector rejects the operator before anything else.
        return [not_supported(child(path, "operator"), op, ())]
    msgs = qualified_name_errors(key)
    if msgs:
        errs.append(invalid(child(path, "key"), key, "; ".join(msgs)))
    vpath = child(path, "values")
    vals = values or ()
    shown = GoValue(go_string_slice(values))
    if op in ("In", "NotIn") and not vals:
        errs.append(invalid(vpath, shown, "for 'in', 'notin' operators, values set can't be empty"))
    elif op in ("Exists", "DoesNotExist") and vals:
        errs.append(invalid(vpath, shown, "values set must be empty for exists and does not exist"))
    elif op in ("Gt", "Lt"):
        if len(vals) != 1:
            errs.append(
                invalid(vpath, shown, "for 'Gt', 'Lt' operators, exactly one value is required")
            )
        for i, v in enumerate(vals):
            try:
                int(v, 10)
            except ValueError:
                errs.append(
                    invalid(
                        index(vpath, i), v, "for 'Gt', 'Lt' operators, the value must be an integer"
                    )
                )
    for i, v in enumerate(vals):
        msgs = label_value_errors(v)
        if msgs:
            errs.append(invalid(f"{index(vpath, i)}[{key}]", v, "; ".join(msgs)))
    return errs


def _field_requirement_errors(
    op: str, values: tuple[str, ...] | None, path: str
) -> list[FieldError]:
    """``nodeSelectorRequirementsAsFieldSelector`` for one ``matchFields`` item."""
    if op not in ("In", "NotIn"):
        return [not_supported(child(path, "operator"), op, ("In", "NotIn"))]
    if len(values or ()) != 1:
        shown = GoValue(go_string_slice(values))
        return [invalid(child(path, "values"), shown, "must have one element")]
    return []


def _read_requirements(
    raw: Mapping[str, object], key: str, path: str, fields: bool
) -> tuple[tuple[NodeSelectorRequirement, ...], list[FieldError]]:
    reqs: list[NodeSelectorRequirement] = []
    errs: list[FieldError] = []
    for i, item in enumerate(get_list(raw, key, path) or ()):
        p = index(child(path, key), i)
        m = as_mapping(item, p)
        check_fields(m, p, ("key", "operator", "values"))
        k = get_str(m, "key", p) or ""
        op = get_str(m, "operator", p) or ""
        values = get_str_list(m, "values", p)
        if fields:
            errs.extend(_field_requirement_errors(op, values, p))
        else:
            errs.extend(_requirement_errors(k, op, values, p))
        reqs.append(NodeSelectorRequirement(k, op, values or ()))
    return tuple(reqs), errs


def read_node_selector_term(
    raw: Mapping[str, object], path: str, error_path: str | None = None
) -> tuple[NodeSelectorTerm, list[FieldError]]:
    """A term and its errors; ``error_path`` is where upstream's parser reports them."""
    check_fields(raw, path, ("matchExpressions", "matchFields"))
    exprs, errs = _read_requirements(raw, "matchExpressions", path, fields=False)
    fields, field_errs = _read_requirements(raw, "matchFields", path, fields=True)
    errs += field_errs
    if error_path is not None:
        # Decoding paths name the term; the parser's error paths use error_path instead.
        errs = [FieldError(error_path + e.path[len(path) :], e.body) for e in errs]
    return NodeSelectorTerm(exprs, fields), errs


def read_node_affinity(
    raw: Mapping[str, object], path: str
) -> tuple[NodeAffinity, list[FieldError]]:
    """A ``v1.NodeAffinity`` and the errors ``ValidateNodeAffinityArgs`` reports for it."""
    req_key = "requiredDuringSchedulingIgnoredDuringExecution"
    pref_key = "preferredDuringSchedulingIgnoredDuringExecution"
    check_fields(raw, path, (req_key, pref_key))
    errs: list[FieldError] = []
    required = None
    req = get_mapping(raw, req_key, path)
    if req is not None:
        rpath = child(path, req_key)
        check_fields(req, rpath, ("nodeSelectorTerms",))
        terms = []
        for i, item in enumerate(get_list(req, "nodeSelectorTerms", rpath) or ()):
            p = index(child(rpath, "nodeSelectorTerms"), i)
            term, term_errs = read_node_selector_term(as_mapping(item, p), p)
            terms.append(term)
            errs.extend(term_errs)
        required = NodeSelector(tuple(terms))
    preferred = []
    for i, item in enumerate(get_list(raw, pref_key, path) or ()):
        p = index(child(path, pref_key), i)
        m = as_mapping(item, p)
        check_fields(m, p, ("weight", "preference"))
        # NewPreferredSchedulingTerms reports errors under the term's index, without
        # ".preference" (TestValidateNodeAffinityArgs/invalid added affinity).
        term, term_errs = read_node_selector_term(
            get_mapping(m, "preference", p) or {}, child(p, "preference"), error_path=p
        )
        errs.extend(term_errs)
        preferred.append(PreferredSchedulingTerm(get_int(m, "weight", p) or 0, term))
    return NodeAffinity(required, tuple(preferred)), errs


def read_label_selector(raw: Mapping[str, object], path: str) -> LabelSelector:
    check_fields(raw, path, ("matchLabels", "matchExpressions"))
    exprs = []
    for i, item in enumerate(get_list(raw, "matchExpressions", path) or ()):
        p = index(child(path, "matchExpressions"), i)
        m = as_mapping(item, p)
        check_fields(m, p, ("key", "operator", "values"))
        exprs.append(
            LabelSelectorRequirement(
                get_str(m, "key", p) or "",
                get_str(m, "operator", p) or "",
                get_str_list(m, "values", p) or (),
            )
        )
    return LabelSelector(get_str_map(raw, "matchLabels", path) or {}, tuple(exprs))


_TSC_FIELDS = (
    "maxSkew",
    "topologyKey",
    "whenUnsatisfiable",
    "labelSelector",
    "minDomains",
    "nodeAffinityPolicy",
    "nodeTaintsPolicy",
    "matchLabelKeys",
)


def read_topology_spread_constraint(
    raw: Mapping[str, object], path: str
) -> TopologySpreadConstraint:
    check_fields(raw, path, _TSC_FIELDS)
    selector = get_mapping(raw, "labelSelector", path)
    max_skew = raw.get("maxSkew")
    return TopologySpreadConstraint(
        max_skew=0 if max_skew is None else as_int(max_skew, child(path, "maxSkew")),
        topology_key=get_str(raw, "topologyKey", path) or "",
        when_unsatisfiable=get_str(raw, "whenUnsatisfiable", path) or "",
        label_selector=None
        if selector is None
        else read_label_selector(selector, child(path, "labelSelector")),
        min_domains=get_int(raw, "minDomains", path),
        node_affinity_policy=get_str(raw, "nodeAffinityPolicy", path),
        node_taints_policy=get_str(raw, "nodeTaintsPolicy", path),
        match_label_keys=get_str_list(raw, "matchLabelKeys", path) or (),
    )

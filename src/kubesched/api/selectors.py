"""Label and node selectors: matching and validation, as upstream evaluates them.

Pure functions over the frozen selector types of ``api/types.py``, following
apimachinery / component-helpers at v1.36: ``labels.Requirement.Matches`` (NotIn
and DoesNotExist match an absent key; Gt / Lt need the key, a label value
``strconv.ParseInt`` accepts and exactly one integer value),
``metav1.LabelSelectorAsSelector``, ``labels.NewRequirement`` validation (whose
errors make a node selector term "fail to parse"),
``nodeaffinity.LazyErrorNodeSelector`` (matchFields: In / NotIn with one value,
``metadata.name`` only, skipped for a nameless node) and ``util/validation/field``
formatting. Messages follow master's ``api/validate/content`` texts except
``MaxLenError`` ("must be no more than 63 characters"; master says "bytes", as
``kubesched.api.meta_validation`` does via the name rules' ``unit``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Final

from kubesched.api.goformat import go_aggregate, go_quote, go_string_slice
from kubesched.api.messages import child
from kubesched.api.types import (
    LabelSelector,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodSpec,
)

# Operators (core/v1 and meta/v1 spell them the same).
IN: Final = "In"
NOT_IN: Final = "NotIn"
EXISTS: Final = "Exists"
DOES_NOT_EXIST: Final = "DoesNotExist"
GT: Final = "Gt"
LT: Final = "Lt"

NODE_SELECTOR_OPERATORS: Final = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT)
NODE_FIELD_OPERATORS: Final = (IN, NOT_IN)
FIELD_METADATA_NAME: Final = "metadata.name"

LabelMatcher = Callable[[Mapping[str, str]], bool]

_MIN_INT64: Final = -(2**63)
_MAX_INT64: Final = 2**63 - 1
_DIGITS: Final = frozenset("0123456789")


# --------------------------------------------------------------------------- int64 labels


def parse_int64_label(value: str) -> int | None:
    """``strconv.ParseInt(value, 10, 64)``: an optional sign then ASCII digits only,
    within int64; else None. Any vectorised Gt / Lt must agree with it."""
    body = value[1:] if value[:1] in ("+", "-") else value
    if not body or not all(c in _DIGITS for c in body):
        return None
    n = int(body)
    if value[:1] == "-":
        n = -n
    return n if _MIN_INT64 <= n <= _MAX_INT64 else None


def _invalid(path: str, bad_value: str, detail: str) -> str:
    return f"{path}: Invalid value: {bad_value}: {detail}"


# --------------------------------------------------------------------------- name rules

_LABEL_KEY_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_MSG: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character"
)
_LABEL_VALUE_FMT: Final = "(" + _LABEL_KEY_FMT + ")?"
_LABEL_VALUE_MSG: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, "
    "'-', '_' or '.', and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT: Final = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
    "characters, '-' or '.', and must start and end with an alphanumeric character"
)
# fullmatch, never "$": Python's "$" also matches before a trailing newline.
_LABEL_KEY_RE: Final = re.compile(_LABEL_KEY_FMT)
_LABEL_VALUE_RE: Final = re.compile(_LABEL_VALUE_FMT)
_DNS1123_SUBDOMAIN_RE: Final = re.compile(_DNS1123_SUBDOMAIN_FMT)
_MAX_LABEL: Final = 63
_MAX_SUBDOMAIN: Final = 253


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len_error(n: int, unit: str) -> str:
    return f"must be no more than {n} {unit}"


def _byte_len(s: str) -> int:
    # Go's len() counts UTF-8 bytes.
    return len(s.encode("utf-8", "surrogatepass"))


def dns1123_subdomain_errors(value: str, unit: str = "characters") -> list[str]:
    """``IsDNS1123Subdomain``; ``unit`` is the length limit's wording (see the module
    docstring: "characters" here, "bytes" in ``kubesched.api.meta_validation``)."""
    errs = []
    if _byte_len(value) > _MAX_SUBDOMAIN:
        errs.append(_max_len_error(_MAX_SUBDOMAIN, unit))
    if _DNS1123_SUBDOMAIN_RE.fullmatch(value) is None:
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def label_key_errors(key: str) -> list[str]:
    """``content.IsLabelKey``: ``[prefix/]name``; empty if valid."""
    return qualified_name_errors(key, "a valid label key")


def qualified_name_errors(
    value: str, what: str = "a qualified name", unit: str = "characters"
) -> list[str]:
    """``IsQualifiedName``: ``[prefix/]name``; empty if valid. ``what`` names the
    value in the message for a value with more than one ``/``; ``unit`` words the
    length limits."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain_errors(prefix, unit))
    else:
        return [
            what
            + " "
            + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif _byte_len(name) > _MAX_LABEL:
        errs.append("name part " + _max_len_error(_MAX_LABEL, unit))
    if _LABEL_KEY_RE.fullmatch(name) is None:
        errs.append(
            "name part "
            + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def label_value_errors(value: str, unit: str = "characters") -> list[str]:
    """``IsValidLabelValue`` / ``content.IsLabelValue``; empty if valid ("" is valid)."""
    errs = []
    if _byte_len(value) > _MAX_LABEL:
        errs.append(_max_len_error(_MAX_LABEL, unit))
    if _LABEL_VALUE_RE.fullmatch(value) is None:
        errs.append(
            _regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345")
        )
    return errs


# --------------------------------------------------------------------------- requirements


def _requirement_matches(
    key: str, op: str, values: Sequence[str], labels: Mapping[str, str]
) -> bool:
    """``labels.Requirement.Matches`` (unknown operators match nothing)."""
    if op == IN:
        v = labels.get(key)
        return v is not None and v in values
    if op == NOT_IN:
        v = labels.get(key)
        return v is None or v not in values
    if op == EXISTS:
        return key in labels
    if op == DOES_NOT_EXIST:
        return key not in labels
    if op in (GT, LT):
        v = labels.get(key)
        if v is None or len(values) != 1:
            return False
        have = parse_int64_label(v)
        want = parse_int64_label(values[0])
        if have is None or want is None:
            return False
        return have > want if op == GT else have < want
    return False


def _new_requirement_errors(key: str, op: str, values: Sequence[str], path: str) -> list[str]:
    """Field errors of ``labels.NewRequirement(key, op, values, WithPath(path))``
    for the operators a selector can name (``op`` already known to be valid)."""
    errs: list[str] = []
    key_errs = label_key_errors(key)
    if key_errs:
        errs.append(_invalid(child(path, "key"), go_quote(key), "; ".join(key_errs)))
    values_path = child(path, "values")
    if op in (IN, NOT_IN):
        if not values:
            errs.append(
                _invalid(
                    values_path,
                    go_string_slice(values or None),
                    "for 'in', 'notin' operators, values set can't be empty",
                )
            )
    elif op in (EXISTS, DOES_NOT_EXIST):
        if values:
            errs.append(
                _invalid(
                    values_path,
                    go_string_slice(values or None),
                    "values set must be empty for exists and does not exist",
                )
            )
    elif op in (GT, LT):
        if len(values) != 1:
            errs.append(
                _invalid(
                    values_path,
                    go_string_slice(values or None),
                    "for 'Gt', 'Lt' operators, exactly one value is required",
                )
            )
        for i, v in enumerate(values):
            if parse_int64_label(v) is None:
                errs.append(
                    _invalid(
                        f"{values_path}[{i}]",
                        go_quote(v),
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                )
    for i, v in enumerate(values):
        v_errs = label_value_errors(v)
        if v_errs:
            errs.append(_invalid(f"{values_path}[{i}][{key}]", go_quote(v), "; ".join(v_errs)))
    return errs


# --------------------------------------------------------------------------- label selectors

_LABEL_SELECTOR_OPERATORS: Final = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST)


def label_selector_matches(sel: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """Whether ``labels`` match ``sel`` converted by ``LabelSelectorAsSelector``: None
    selects nothing, an empty selector everything, matchLabels and matchExpressions
    ANDed. Assumes a valid selector; an unknown operator matches nothing."""
    if sel is None:
        return False
    for k, v in sel.match_labels.items():
        if labels.get(k) != v:
            return False
    return all(
        _requirement_matches(r.key, r.operator, r.values, labels) for r in sel.match_expressions
    )


def compile_label_selector(sel: LabelSelector | None) -> LabelMatcher:
    """A matcher equal to ``label_selector_matches(sel, .)``, for callers that
    test one selector against many label sets (cache it per pod spec)."""
    if sel is None:
        return _match_nothing
    if sel.is_empty():
        return _match_everything
    pairs = tuple(sel.match_labels.items())
    exprs = tuple((r.key, r.operator, frozenset(r.values), r.values) for r in sel.match_expressions)

    def match(labels: Mapping[str, str]) -> bool:
        for k, v in pairs:
            if labels.get(k) != v:
                return False
        for key, op, value_set, values in exprs:
            if op == IN:
                have = labels.get(key)
                if have is None or have not in value_set:
                    return False
            elif op == NOT_IN:
                have = labels.get(key)
                if have is not None and have in value_set:
                    return False
            elif op == EXISTS:
                if key not in labels:
                    return False
            elif op == DOES_NOT_EXIST:
                if key in labels:
                    return False
            elif not _requirement_matches(key, op, values, labels):
                return False
        return True

    return match


def _match_nothing(labels: Mapping[str, str]) -> bool:
    return False


def _match_everything(labels: Mapping[str, str]) -> bool:
    return True


def label_selector_parse_error(sel: LabelSelector | None) -> str | None:
    """The error ``metav1.LabelSelectorAsSelector`` returns, or None: the first bad
    requirement, matchLabels first (sorted keys for Go's map order), then
    matchExpressions. An unknown operator reads ``"Foo" is not a valid pod selector
    operator``, a bad key or value ``key: Invalid value: "a b": ...``."""
    if sel is None:
        return None
    for k in sorted(sel.match_labels):
        errs = _new_requirement_errors(k, IN, (sel.match_labels[k],), "")
        if errs:
            return go_aggregate(errs)
    for r in sel.match_expressions:
        if r.operator not in _LABEL_SELECTOR_OPERATORS:
            return f"{go_quote(r.operator)} is not a valid pod selector operator"
        errs = _new_requirement_errors(r.key, r.operator, r.values, "")
        if errs:
            return go_aggregate(errs)
    return None


# --------------------------------------------------------------------------- node selectors


def _field_requirement_matches(req: NodeSelectorRequirement, node_name: str) -> bool:
    # fields.Set{"metadata.name": name}.Get(key): any other key reads as "".
    have = node_name if req.key == FIELD_METADATA_NAME else ""
    if req.operator == IN:
        return have == req.values[0]
    return have != req.values[0]


def _supported_values(values: Sequence[str]) -> str:
    return "supported values: " + ", ".join(go_quote(v) for v in values)


def node_selector_term_errors(term: NodeSelectorTerm, path: str = "") -> list[str]:
    """Why a node selector term fails to parse (``newNodeSelectorTerm``), one
    message per field error; empty when it parses. ``path`` is the term's field
    path (e.g. ``nodeSelectorTerms[0]``)."""
    return list(_term_errors(term, path))


@lru_cache(maxsize=4096)
def _term_errors(term: NodeSelectorTerm, path: str) -> tuple[str, ...]:
    # Terms compare by identity (eq=False), so this caches per spec object and
    # keeps it alive while cached.
    errs: list[str] = []
    exprs_path = child(path, "matchExpressions")
    for i, r in enumerate(term.match_expressions):
        p = f"{exprs_path}[{i}]"
        if r.operator not in NODE_SELECTOR_OPERATORS:
            errs.append(
                f"{child(p, 'operator')}: Unsupported value: {go_quote(r.operator)}: "
                + _supported_values(NODE_SELECTOR_OPERATORS)
            )
            continue
        errs.extend(_new_requirement_errors(r.key, r.operator, r.values, p))
    fields_path = child(path, "matchFields")
    for i, r in enumerate(term.match_fields):
        p = f"{fields_path}[{i}]"
        if r.operator in NODE_FIELD_OPERATORS:
            if len(r.values) != 1:
                errs.append(
                    _invalid(
                        child(p, "values"),
                        go_string_slice(r.values or None),
                        "must have one element",
                    )
                )
        else:
            errs.append(
                f"{child(p, 'operator')}: Unsupported value: {go_quote(r.operator)}: "
                + _supported_values(NODE_FIELD_OPERATORS)
            )
    return tuple(errs)


def node_selector_term_matches(
    term: NodeSelectorTerm, node_name: str, labels: Mapping[str, str]
) -> bool:
    """Whether one term matches a node: its requirements ANDed. A term with
    neither expressions nor fields, or one that fails to parse, matches nothing.
    matchFields are ignored for a node without a name, as upstream does."""
    if not term.match_expressions and not term.match_fields:
        return False
    if _term_errors(term, ""):
        return False
    for r in term.match_expressions:
        if not _requirement_matches(r.key, r.operator, r.values, labels):
            return False
    if node_name:
        for r in term.match_fields:
            if not _field_requirement_matches(r, node_name):
                return False
    return True


def node_selector_matches(sel: NodeSelector, node_name: str, labels: Mapping[str, str]) -> bool:
    """``LazyErrorNodeSelector.Match``: terms ORed; empty and unparsable terms are
    skipped, so a selector with no usable term matches nothing."""
    return any(node_selector_term_matches(t, node_name, labels) for t in sel.terms)


def match_node_selector_map(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    """``spec.nodeSelector`` (``labels.SelectorFromSet``): every pair must be
    present with an equal value; an empty map matches every node."""
    return all(labels.get(k) == v for k, v in selector.items())


def required_node_affinity_matches(spec: PodSpec, node: Node) -> bool:
    """``nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)``: the pod's
    ``nodeSelector`` and its required node affinity (parse errors ignored: a term
    that does not parse matches nothing)."""
    if not match_node_selector_map(spec.node_selector, node.labels):
        return False
    aff = spec.affinity
    if aff is None or aff.node_affinity is None or aff.node_affinity.required is None:
        return True
    return node_selector_matches(aff.node_affinity.required, node.name, node.labels)

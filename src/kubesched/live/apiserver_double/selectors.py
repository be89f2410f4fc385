"""Label and field selectors with the API server's grammar and supported fields.

Field selectors accept only the fields each resource's registry publishes
(upstream's `...ToSelectableFields` plus `metadata.name`/`metadata.namespace`);
any other field is `400 BadRequest: field label not supported: <field>`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.live.apiserver_double.errors import ApiError, bad_request

Obj = dict[str, Any]


def dig(obj: Obj, *path: str) -> Any:
    """``obj[path[0]][path[1]]...``, None where a step is missing or not a mapping."""
    cur: Any = obj
    for part in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def _s(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


FieldGetter = Callable[[Obj], str]


def _field(*path: str) -> FieldGetter:
    return lambda obj: _s(dig(obj, *path))


_COMMON: dict[str, FieldGetter] = {
    "metadata.name": _field("metadata", "name"),
    "metadata.namespace": _field("metadata", "namespace"),
}

_EVENT_FIELDS: dict[str, FieldGetter] = {
    "involvedObject.kind": _field("involvedObject", "kind"),
    "involvedObject.namespace": _field("involvedObject", "namespace"),
    "involvedObject.name": _field("involvedObject", "name"),
    "involvedObject.uid": _field("involvedObject", "uid"),
    "involvedObject.apiVersion": _field("involvedObject", "apiVersion"),
    "involvedObject.resourceVersion": _field("involvedObject", "resourceVersion"),
    "involvedObject.fieldPath": _field("involvedObject", "fieldPath"),
    "reason": _field("reason"),
    "reportingComponent": _field("reportingComponent"),
    "source": lambda o: _s(dig(o, "source", "component")),
    "type": _field("type"),
}

SELECTABLE: dict[str, dict[str, FieldGetter]] = {
    "pods": {
        "spec.nodeName": _field("spec", "nodeName"),
        "spec.restartPolicy": _field("spec", "restartPolicy"),
        "spec.schedulerName": _field("spec", "schedulerName"),
        "spec.serviceAccountName": _field("spec", "serviceAccountName"),
        "spec.hostNetwork": lambda o: _s(bool(dig(o, "spec", "hostNetwork"))),
        "status.phase": _field("status", "phase"),
        "status.podIP": _field("status", "podIP"),
        "status.nominatedNodeName": _field("status", "nominatedNodeName"),
    },
    "nodes": {"spec.unschedulable": lambda o: _s(bool(dig(o, "spec", "unschedulable")))},
    "namespaces": {"status.phase": _field("status", "phase")},
    "events": _EVENT_FIELDS,
}

# events.k8s.io/v1 names of the same event fields (the store keeps core v1 form).
EVENTS_V1_FIELD_ALIASES = {
    "regarding.kind": "involvedObject.kind",
    "regarding.namespace": "involvedObject.namespace",
    "regarding.name": "involvedObject.name",
    "regarding.uid": "involvedObject.uid",
    "regarding.apiVersion": "involvedObject.apiVersion",
    "regarding.resourceVersion": "involvedObject.resourceVersion",
    "regarding.fieldPath": "involvedObject.fieldPath",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
}


@dataclass(frozen=True)
class FieldTerm:
    field: str
    op: str  # "=" or "!="
    value: str
    getter: FieldGetter


@dataclass(frozen=True)
class FieldSelector:
    terms: tuple[FieldTerm, ...]

    def matches(self, obj: Obj) -> bool:
        for term in self.terms:
            actual = term.getter(obj)
            if (actual == term.value) != (term.op == "="):
                return False
        return True

    def exact(self, field: str) -> str | None:
        for term in self.terms:
            if term.field == field and term.op == "=":
                return term.value
        return None


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts, cur, i = [], [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            cur.append(text[i : i + 2])
            i += 2
            continue
        if ch == sep:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    parts.append("".join(cur))
    return parts


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def parse_field_selector(text: str, store: str, events_v1: bool = False) -> FieldSelector:
    """Parse `a=b,c!=d`; raise ApiError 400 for bad syntax or unsupported fields."""
    if not text:
        return FieldSelector(())
    fields = {**_COMMON, **SELECTABLE.get(store, {})}
    terms = []
    for raw in _split_unescaped(text, ","):
        match = re.match(r"^([^=!]+?)(==|!=|=)(.*)$", raw)
        if match is None:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{raw}'")
        name, op, value = match.group(1).strip(), match.group(2), _unescape(match.group(3))
        lookup = EVENTS_V1_FIELD_ALIASES.get(name, name) if events_v1 else name
        getter = fields.get(lookup)
        if getter is None:
            raise bad_request(f"field label not supported: {name}")
        terms.append(FieldTerm(lookup, "!=" if op == "!=" else "=", value, getter))
    return FieldSelector(tuple(terms))


@dataclass(frozen=True)
class LabelRequirement:
    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!", "gt", "lt"
    values: tuple[str, ...]

    def matches(self, labels: dict[str, str]) -> bool:
        has = self.key in labels
        value = labels.get(self.key, "")
        if self.op in ("=", "in"):
            return has and value in self.values
        if self.op in ("!=", "notin"):
            return not has or value not in self.values
        if self.op == "exists":
            return has
        if self.op == "!":
            return not has
        try:
            number, bound = int(value), int(self.values[0])
        except ValueError:
            return False
        return has and (number > bound if self.op == "gt" else number < bound)


@dataclass(frozen=True)
class LabelSelector:
    requirements: tuple[LabelRequirement, ...]

    def matches(self, labels: dict[str, str] | None) -> bool:
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)


_LABEL_TERM = re.compile(
    r"\s*(?:(?P<not>!)\s*(?P<nkey>[^\s,!=<>()]+)"
    r"|(?P<key>[^\s,!=<>()]+)\s*(?:(?P<op>==|!=|=|<|>)\s*(?P<val>[^\s,()]*)"
    r"|\s+(?P<setop>in|notin)\s*\((?P<set>[^)]*)\)"
    r"|))\s*(?:,|$)"
)


def parse_label_selector(text: str) -> LabelSelector:
    """Parse the label selector grammar (=, ==, !=, in, notin, exists, !key, <, >)."""
    reqs: list[LabelRequirement] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        match = _LABEL_TERM.match(text, pos)
        if match is None or match.end() == pos:
            raise bad_request(f"unable to parse requirement: found '{text[pos:]}'")
        if match.group("not"):
            reqs.append(LabelRequirement(match.group("nkey"), "!", ()))
        elif match.group("op"):
            op = {"==": "=", "=": "=", "!=": "!=", "<": "lt", ">": "gt"}[match.group("op")]
            reqs.append(LabelRequirement(match.group("key"), op, (match.group("val"),)))
        elif match.group("setop"):
            values = tuple(v.strip() for v in match.group("set").split(",") if v.strip())
            reqs.append(LabelRequirement(match.group("key"), match.group("setop"), values))
        else:
            reqs.append(LabelRequirement(match.group("key"), "exists", ()))
        pos = match.end()
    return LabelSelector(tuple(reqs))


def selector_from_label_selector_object(sel: Obj | None) -> LabelSelector | None:
    """metav1.LabelSelector (matchLabels/matchExpressions) -> LabelSelector; None stays None."""
    if sel is None:
        return None
    reqs = [LabelRequirement(k, "=", (str(v),)) for k, v in (sel.get("matchLabels") or {}).items()]
    ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}
    for expr in sel.get("matchExpressions") or []:
        op = ops.get(str(expr.get("operator")))
        if op is None:
            raise ApiError(
                400, "BadRequest", f"{expr.get('operator')!r} is not a valid pod selector operator"
            )
        reqs.append(LabelRequirement(str(expr.get("key")), op, tuple(expr.get("values") or ())))
    return LabelSelector(tuple(reqs))

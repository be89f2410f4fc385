"""What the workload kinds share (``convert.workloads``, ``convert.batch``): pod
templates and their canonical key, selectors that must match the template,
enums with a default, non-negative counts, and the :class:`Workload` made of them,
with upstream's validation wording.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.convert.meta import owner_reference, read_meta
from kubesched.api.convert.pod import SpecFields, pod_spec
from kubesched.api.convert.selectors import label_selector
from kubesched.api.convert.values import opt_int_or_percent, opt_time
from kubesched.api.messages import child, fail, invalid, required, unsupported
from kubesched.api.reader import (
    Raw,
    as_map,
    get_int,
    get_map,
    get_str_map,
    map_list,
    opt_int,
    opt_str,
)
from kubesched.api.selectors import label_selector_matches
from kubesched.api.types import IntOrString, LabelSelector
from kubesched.api.workloads import POD_TEMPLATE_HASH, Workload


def _normalized(value: Any) -> Any:
    """Null, empty maps and empty lists dropped (absent and empty serialize alike)."""
    if isinstance(value, Mapping):
        out = {str(k): _normalized(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [_normalized(v) for v in value]
    return value


def template_key(template: Raw) -> str:
    """The pod template as canonical text without ``pod-template-hash``: upstream's
    ``EqualIgnoreHash`` compares a Deployment's template with its ReplicaSets'."""
    t = dict(_normalized(template))
    meta = dict(t.get("metadata", {}))
    labels = {k: v for k, v in dict(meta.get("labels", {})).items() if k != POD_TEMPLATE_HASH}
    meta["labels"] = labels
    t["metadata"] = _normalized(meta)
    return json.dumps(t, sort_keys=True, separators=(",", ":"), default=str)


def nonnegative(raw: Raw, key: str, path: str, default: int = 0) -> int:
    value = get_int(raw, key, path, default, bits=32)
    if value < 0:
        raise fail(child(path, key), invalid(value, "must be greater than or equal to 0"))
    return value


def opt_nonnegative(raw: Raw, key: str, path: str, *, bits: int = 32) -> int | None:
    value = opt_int(raw, key, path, bits=bits)
    if value is not None and value < 0:
        raise fail(child(path, key), invalid(value, "must be greater than or equal to 0"))
    return value


def enum_or(raw: Raw, key: str, path: str, supported: tuple[str, ...], default: str) -> str:
    value = opt_str(raw, key, path)
    if value is None or value == "":
        return default
    if value not in supported:
        raise fail(child(path, key), unsupported(value, supported))
    return value


def int_or_percent(raw: Raw, key: str, path: str, default: IntOrString) -> IntOrString:
    """A non-negative IntOrString (``ValidatePositiveIntOrPercent``), ``default`` if absent."""
    value = opt_int_or_percent(raw, key, path)
    return default if value is None else value


def int_or_percent_value(v: IntOrString) -> int:
    return v if isinstance(v, int) else int(v[:-1])


@dataclass(frozen=True, slots=True)
class Template:
    labels: dict[str, str]
    annotations: dict[str, str]
    fields: SpecFields
    restart_policy: str
    key: str


def read_template(raw: Raw, path: str) -> Template:
    """A pod template (``path`` is its JSON path, e.g. ``spec.template``)."""
    tmeta = get_map(raw, "metadata", path)
    mpath = child(path, "metadata")
    spath = child(path, "spec")
    spec_raw = raw.get("spec")
    fields = pod_spec(spec_raw, spath)
    restart = opt_str(as_map(spec_raw, spath), "restartPolicy", spath) or "Always"
    return Template(
        labels=get_str_map(tmeta, "labels", mpath),
        annotations=get_str_map(tmeta, "annotations", mpath),
        fields=fields,
        restart_policy=restart,
        key=template_key(raw),
    )


def read_selector(spec: Raw, what: str, *, required_: bool = True) -> LabelSelector | None:
    selector = label_selector(spec.get("selector"), "spec.selector")
    if selector is None:
        if required_:
            raise fail("spec.selector", required())
        return None
    if selector.is_empty():
        raise fail("spec.selector", invalid("{}", f"empty selector is invalid for {what}"))
    return selector


def check_matches(selector: LabelSelector | None, labels: Mapping[str, str], path: str) -> None:
    if selector is not None and not label_selector_matches(selector, labels):
        raise fail(
            path,
            f"Invalid value: {json.dumps(dict(labels), sort_keys=True)}: "
            "`selector` does not match template `labels`",
        )


def restart_policy(t: Template, path: str, supported: tuple[str, ...]) -> None:
    if t.restart_policy not in supported:
        raise fail(child(path, "spec.restartPolicy"), unsupported(t.restart_policy, supported))


def make_workload(
    kind: str,
    raw: Raw,
    t: Template,
    *,
    replicas: int,
    selector: LabelSelector | None,
    details: object,
    labels: Mapping[str, str] | None = None,
) -> Workload:
    meta = read_meta(raw, namespaced=True)
    mraw = get_map(raw, "metadata", "")
    f = t.fields
    return Workload(
        kind=kind,
        namespace=meta.namespace,
        name=meta.name,
        uid=meta.uid or f"{kind.lower()}/{meta.namespace}/{meta.name}",
        labels=meta.labels,
        replicas=replicas,
        selector=selector,
        template_labels=t.labels if labels is None else labels,
        template_annotations=t.annotations,
        template_spec=f.spec,
        template_node_name=f.node_name,
        template_priority=f.priority,
        template_priority_class_name=f.priority_class_name,
        template_preemption_policy=f.preemption_policy,
        annotations=meta.annotations,
        owner_references=map_list(mraw, "ownerReferences", "metadata", owner_reference),
        creation_timestamp=opt_time(mraw, "creationTimestamp", "metadata"),
        template_key=t.key,
        details=details,
    )

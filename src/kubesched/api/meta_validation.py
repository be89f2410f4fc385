"""The API server's validation of labels, annotations and container resources.

:func:`validate_object` runs after an object converted (fields have their types)
and raises :class:`InputError` with ``field`` set and upstream's wording:

- label keys and values (``ValidateLabels``) of ``metadata.labels``, pod template
  labels, ``nodeSelector`` and a PDB's or workload's ``spec.selector`` keys, e.g.
  ``metadata.labels: Invalid value: "bad key!": name part must consist of ...``;
- annotation keys (qualified names, case-insensitive) and their total size
  (``ValidateAnnotations``);
- each container's requests against its limits (``ValidateResourceRequirements``:
  ``...requests: Invalid value: "2": must be less than or equal to cpu limit of
  1``); extended resources and hugepages need request == limit, extended ones are
  integers; values print as ``Quantity.String()`` does;
- each container's ``resources.claims`` names one of ``spec.resourceClaims``.

The first problem found is reported (upstream lists them all); labels are
checked in the order written (Go iterates its maps in random order).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any, Final

from kubesched.api import selectors
from kubesched.api.messages import child, fail, invalid, required
from kubesched.api.quantity import canonical_string, parse_quantity_json
from kubesched.api.reader import Raw
from kubesched.api.resources import HUGEPAGES_PREFIX, is_native_resource

TOTAL_ANNOTATION_SIZE_LIMIT: Final = 256 * (1 << 10)


def _nbytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def qualified_name_errors(value: str) -> list[str]:
    """IsQualifiedName (content.IsLabelKey): an optional DNS subdomain prefix and
    '/', then a name of at most 63 bytes (``kubesched.api.selectors``' rules, with
    the limits worded in bytes)."""
    return selectors.qualified_name_errors(value, "a valid label key", unit="bytes")


def label_value_errors(value: str) -> list[str]:
    """IsValidLabelValue: empty, or at most 63 bytes of the label-key alphabet."""
    return selectors.label_value_errors(value, unit="bytes")


def check_labels(labels: Any, path: str) -> None:
    """ValidateLabels of a ``map[string]string`` at ``path`` (null values are "")."""
    if not isinstance(labels, Mapping):
        return
    for key, value in labels.items():
        if not isinstance(key, str):
            continue  # the conversion reports types
        for msg in qualified_name_errors(key):
            raise fail(path, invalid(key, msg))
        text = "" if value is None else value
        for msg in label_value_errors(text) if isinstance(text, str) else ():
            raise fail(path, invalid(text, msg))


def check_annotations(annotations: Any, path: str) -> None:
    """ValidateAnnotations: keys are qualified names once lowercased; 256 KiB in all."""
    if not isinstance(annotations, Mapping):
        return
    total = 0
    for key, value in annotations.items():
        if not isinstance(key, str) or not isinstance(value, str | None):
            continue  # the conversion reports types
        for msg in qualified_name_errors(key.lower()):
            raise fail(path, invalid(key, msg))
        total += _nbytes(key) + _nbytes(value or "")
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        raise fail(path, f"Too long: must have at most {TOTAL_ANNOTATION_SIZE_LIMIT} bytes")


def check_selector(selector: Any, path: str) -> None:
    """ValidateLabelSelector's label checks: ``matchLabels`` and expression keys."""
    if not isinstance(selector, Mapping):
        return
    check_labels(selector.get("matchLabels"), child(path, "matchLabels"))
    expressions = selector.get("matchExpressions")
    for i, expr in enumerate(expressions if isinstance(expressions, list) else []):
        key = expr.get("key") if isinstance(expr, Mapping) else None
        if isinstance(key, str):
            kp = f"{child(path, 'matchExpressions')}[{i}].key"
            for msg in qualified_name_errors(key):
                raise fail(kp, invalid(key, msg))


def check_metadata(raw: Raw, path: str = "metadata") -> None:
    meta = raw.get("metadata")
    if not isinstance(meta, Mapping):
        return
    check_labels(meta.get("labels"), child(path, "labels"))
    check_annotations(meta.get("annotations"), child(path, "annotations"))


# --------------------------------------------------------------------------- resources


def overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: native resources other than hugepages."""
    return is_native_resource(name) and not name.startswith(HUGEPAGES_PREFIX)


def is_extended(name: str) -> bool:
    """helper.IsExtendedResourceName (the integer resources of a container)."""
    return not is_native_resource(name) and not name.startswith("requests.")


def _resource_map(raw: Any) -> Mapping[str, Any]:
    return raw if isinstance(raw, Mapping) else {}


def check_resources(resources: Any, path: str) -> None:
    """ValidateResourceRequirements of a container's ``resources`` at ``path``
    (values were parsed by the conversion already)."""
    if not isinstance(resources, Mapping):
        return
    limits = _resource_map(resources.get("limits"))
    requests = _resource_map(resources.get("requests"))
    lim_path, req_path = child(path, "limits"), child(path, "requests")
    for name, text in limits.items():
        _check_integer(name, text, f"{lim_path}.{name}")
    for name, text in requests.items():
        _check_integer(name, text, f"{req_path}.{name}")
        if name in limits:
            request, limit = _quantity(text), _quantity(limits[name])
            if request == limit or (request < limit and overcommit_allowed(name)):
                continue
            shown, limit_shown = canonical_string(text), canonical_string(limits[name])
            if request != limit and not overcommit_allowed(name):
                rule = "equal to"  # no overcommit: not below the limit either
            else:
                rule = "less than or equal to"
            raise fail(req_path, invalid(shown, f"must be {rule} {name} limit of {limit_shown}"))
        if not overcommit_allowed(name):
            raise fail(lim_path, required("Limit must be set for non overcommitable resources"))


# (type, text) -> value: inputs repeat the same few quantities endlessly.
_QUANTITIES: dict[tuple[type, Any], Fraction] = {}


def _quantity(text: Any) -> Fraction:
    key = (type(text), text)
    value = _QUANTITIES.get(key)
    if value is None:
        value = parse_quantity_json(text)
        if len(_QUANTITIES) < 65536:
            _QUANTITIES[key] = value
    return value


def _check_integer(name: str, text: Any, path: str) -> None:
    if is_extended(name) and _quantity(text).denominator != 1:
        raise fail(path, invalid(canonical_string(text), "must be an integer"))


def check_claim_names(container: Raw, path: str, pod_claims: list[str]) -> None:
    """validateResourceClaimNames: each ``resources.claims[i]`` names one of the
    pod's ``spec.resourceClaims``."""
    resources = container.get("resources")
    claims = resources.get("claims") if isinstance(resources, Mapping) else None
    for i, claim in enumerate(claims if isinstance(claims, list) else []):
        name = claim.get("name") if isinstance(claim, Mapping) else None
        cp = f"{child(path, 'resources.claims')}[{i}]"
        if not isinstance(name, str) or not name:
            raise fail(cp, required())
        if name not in pod_claims:
            names = ", ".join(sorted(set(pod_claims)))
            detail = "must be one of the names in pod.spec.resourceClaims" + (
                f": {names}" if names else " which is empty"
            )
            raise fail(cp, f'Not found: "{name}": {detail}')


def check_pod_spec(spec: Any, path: str) -> None:
    """The checks of this module that concern a pod spec at ``path``."""
    if not isinstance(spec, Mapping):
        return
    claims = spec.get("resourceClaims")
    pod_claims = [
        c["name"]
        for c in (claims if isinstance(claims, list) else [])
        if isinstance(c, Mapping) and isinstance(c.get("name"), str)
    ]
    for key in ("containers", "initContainers"):
        containers = spec.get(key)
        for i, container in enumerate(containers if isinstance(containers, list) else []):
            if not isinstance(container, Mapping):
                continue
            cpath = f"{child(path, key)}[{i}]"
            check_resources(container.get("resources"), child(cpath, "resources"))
            check_claim_names(container, cpath, pod_claims)
    check_labels(spec.get("nodeSelector"), child(path, "nodeSelector"))


TEMPLATE_KINDS: Final = frozenset({"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job"})
"""Kinds whose ``spec.template`` is a pod template the conversion has read (a
branch adding a workload kind adds it here)."""


def validate_object(kind: str, raw: Raw) -> None:
    """Every check of this module that applies to an object of ``kind``."""
    check_metadata(raw)
    spec = raw.get("spec")
    if not isinstance(spec, Mapping):
        return
    if kind == "Pod":
        check_pod_spec(spec, "spec")
    elif kind in TEMPLATE_KINDS and isinstance(spec.get("template"), Mapping):
        check_selector(spec.get("selector"), "spec.selector")
        template = spec["template"]
        check_metadata(template, "spec.template.metadata")
        check_pod_spec(template.get("spec"), "spec.template.spec")
    elif kind == "PodDisruptionBudget":
        check_selector(spec.get("selector"), "spec.selector")

"""The validation and admission rules the double enforces, with upstream's messages.

Only what a scheduler and its tests meet is checked: object names, required
pod fields, events (legacy core v1 rules and the strict events.k8s.io/v1 ones
of pkg/apis/core/validation/events.go), leases, PriorityClasses, PDBs, and the
Priority / DefaultTolerationSeconds admission plugins.
"""

from __future__ import annotations

import re
from typing import Any

from kubesched.live.apiserver_double.errors import FieldError, forbidden

Obj = dict[str, Any]

DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASSES = {
    "system-node-critical": 2_000_001_000,
    "system-cluster-critical": 2_000_000_000,
}


def validate_name(name: str, label_only: bool) -> list[FieldError]:
    if not name:
        return [
            FieldError("FieldValueRequired", "metadata.name", "name or generateName is required")
        ]
    limit, pattern, msg = (
        (63, _LABEL, DNS1123_LABEL_MSG) if label_only else (253, _SUBDOMAIN, DNS1123_SUBDOMAIN_MSG)
    )
    if len(name) > limit:
        msg = f"must be no more than {limit} characters"
    elif pattern.match(name):
        return []
    return [FieldError("FieldValueInvalid", "metadata.name", msg, name)]


def validate_pod(pod: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    containers = (pod.get("spec") or {}).get("containers")
    if not containers:
        errs.append(FieldError("FieldValueRequired", "spec.containers", ""))
    for i, container in enumerate(containers or []):
        if not container.get("name"):
            errs.append(FieldError("FieldValueRequired", f"spec.containers[{i}].name", ""))
        if not container.get("image"):
            errs.append(FieldError("FieldValueRequired", f"spec.containers[{i}].image", ""))
    return errs


def validate_event(event: Obj, namespace: str, strict_v1: bool) -> list[FieldError]:
    """ValidateEventCreate (event in core v1 storage form)."""
    errs: list[FieldError] = []
    involved = event.get("involvedObject") or {}
    controller_field = "reportingController" if strict_v1 else "reportingComponent"
    if not event.get("eventTime"):
        inv_ns = str(involved.get("namespace") or "")
        if inv_ns != namespace and (inv_ns or namespace != "default"):
            errs.append(
                FieldError(
                    "FieldValueInvalid",
                    "involvedObject.namespace",
                    "does not match event.namespace",
                    inv_ns,
                )
            )
    else:
        if not involved.get("namespace") and namespace not in ("default", "kube-system"):
            errs.append(
                FieldError(
                    "FieldValueInvalid",
                    "involvedObject.namespace",
                    "does not match event.namespace",
                    "",
                )
            )
        if not event.get("reportingComponent"):
            errs.append(FieldError("FieldValueRequired", controller_field, ""))
        if not event.get("reportingInstance"):
            errs.append(FieldError("FieldValueRequired", "reportingInstance", ""))
        for field, limit in (("action", 128), ("reason", 128)):
            if not event.get(field):
                errs.append(FieldError("FieldValueRequired", field, ""))
            elif len(str(event[field])) > limit:
                errs.append(
                    FieldError(
                        "FieldValueInvalid", field, f"can have at most {limit} characters", ""
                    )
                )
        if len(str(event.get("message") or "")) > 1024:
            errs.append(
                FieldError("FieldValueInvalid", "message", "can have at most 1024 characters", "")
            )
    if not strict_v1:
        return errs
    series = event.get("series")
    if series is not None:
        if int(series.get("count") or 0) < 2:
            errs.append(FieldError("FieldValueInvalid", "series.count", "should be at least 2", ""))
        if not series.get("lastObservedTime"):
            errs.append(FieldError("FieldValueRequired", "series.lastObservedTime", ""))
    if not event.get("eventTime"):
        errs.append(FieldError("FieldValueRequired", "eventTime", ""))
    if event.get("type") not in ("Normal", "Warning"):
        errs.append(
            FieldError(
                "FieldValueInvalid", "type", f"has invalid value: {event.get('type') or ''}", ""
            )
        )
    for field in ("firstTimestamp", "lastTimestamp"):
        if event.get(field):
            errs.append(FieldError("FieldValueInvalid", field, "needs to be unset", ""))
    if event.get("count"):
        errs.append(FieldError("FieldValueInvalid", "count", "needs to be unset", ""))
    source = event.get("source") or {}
    if source.get("component") or source.get("host"):
        errs.append(FieldError("FieldValueInvalid", "source", "needs to be unset", ""))
    return errs


def validate_lease(lease: Obj) -> list[FieldError]:
    spec = lease.get("spec") or {}
    errs: list[FieldError] = []
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and int(duration) <= 0:
        errs.append(
            FieldError(
                "FieldValueInvalid",
                "spec.leaseDurationSeconds",
                "must be greater than 0",
                int(duration),
            )
        )
    transitions = spec.get("leaseTransitions")
    if transitions is not None and int(transitions) < 0:
        errs.append(
            FieldError(
                "FieldValueInvalid",
                "spec.leaseTransitions",
                "must be greater than or equal to 0",
                int(transitions),
            )
        )
    return errs


def validate_priority_class(pc: Obj) -> list[FieldError]:
    name = str((pc.get("metadata") or {}).get("name") or "")
    value = pc.get("value")
    errs: list[FieldError] = []
    if name in SYSTEM_PRIORITY_CLASSES:
        if value != SYSTEM_PRIORITY_CLASSES[name]:
            errs.append(
                FieldError(
                    "FieldValueForbidden",
                    "metadata.name",
                    f"{name!r} is a reserved name".replace("'", ""),
                )
            )
        return errs
    if name.startswith("system-"):
        errs.append(
            FieldError(
                "FieldValueForbidden",
                "metadata.name",
                "priority class names with 'system-' prefix are reserved",
            )
        )
    if isinstance(value, int) and value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(
            FieldError(
                "FieldValueForbidden",
                "value",
                "maximum allowed value of a user defined priority is "
                f"{HIGHEST_USER_DEFINABLE_PRIORITY}",
            )
        )
    return errs


def admit_priority(pod: Obj, classes: list[Obj]) -> None:
    """The Priority admission plugin on pod create (mutates `pod`)."""
    spec = pod.setdefault("spec", {})
    name = str((pod.get("metadata") or {}).get("name") or "")
    class_name = spec.get("priorityClassName") or ""
    policy: str | None = None
    if not class_name:
        defaults = [c for c in classes if c.get("globalDefault")]
        if defaults:
            chosen = min(defaults, key=lambda c: int(c.get("value", 0)))
            priority = int(chosen.get("value", 0))
            policy = chosen.get("preemptionPolicy")
            spec["priorityClassName"] = chosen["metadata"]["name"]
        else:
            priority = 0
    else:
        found = [c for c in classes if c["metadata"]["name"] == class_name]
        if not found:
            raise forbidden("pods", "", name, f"no PriorityClass with name {class_name} was found")
        priority = int(found[0].get("value", 0))
        policy = found[0].get("preemptionPolicy")
    if spec.get("priority") is not None and spec["priority"] != priority:
        raise forbidden(
            "pods",
            "",
            name,
            f"the integer value of priority ({spec['priority']}) must not be provided in pod spec; "
            f"priority admission controller computed {priority} from the given PriorityClass name",
        )
    spec["priority"] = priority
    if policy is not None:
        if spec.get("preemptionPolicy") not in (None, policy):
            raise forbidden(
                "pods",
                "",
                name,
                f"the string value of PreemptionPolicy ({spec['preemptionPolicy']}) must not be "
                "provided "
                f"in pod spec; priority admission controller computed {policy} from the given "
                "PriorityClass name",
            )
        spec["preemptionPolicy"] = policy
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")


def admit_default_toleration_seconds(pod: Obj, seconds: int = 300) -> None:
    """DefaultTolerationSeconds: tolerate not-ready and unreachable NoExecute for 300s."""
    spec = pod.setdefault("spec", {})
    tolerations = spec.get("tolerations") or []

    def tolerated(key: str) -> bool:
        for tol in tolerations:
            effect_ok = tol.get("effect") in (None, "", "NoExecute")
            key_ok = (
                tol.get("key") in (None, "", key)
                if tol.get("operator") == "Exists"
                else tol.get("key") == key
            )
            if effect_ok and key_ok:
                return True
        return False

    added = list(tolerations)
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
        if not tolerated(key):
            added.append(
                {
                    "key": key,
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": seconds,
                }
            )
    spec["tolerations"] = added

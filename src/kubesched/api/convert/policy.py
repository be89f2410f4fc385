"""The scheduling-policy kinds: PriorityClass (defaulted here, validated by
``kubesched.api.admission``) and policy/v1 PodDisruptionBudget."""

from __future__ import annotations

from typing import Final

from kubesched.api.convert.meta import check_dns_subdomain, read_meta
from kubesched.api.convert.selectors import label_selector
from kubesched.api.convert.values import opt_int_or_percent, parse_time
from kubesched.api.messages import child, describe, fail
from kubesched.api.reader import Raw, as_map, get_bool, get_int, get_map, get_str, opt_enum, opt_str
from kubesched.api.types import (
    PREEMPT_LOWER_PRIORITY,
    PodDisruptionBudget,
    PodDisruptionBudgetStatus,
    PriorityClass,
    Time,
)

UNHEALTHY_POD_EVICTION_POLICIES: Final = ("AlwaysAllow", "IfHealthyBudget")


def convert_priority_class(raw: Raw) -> tuple[PriorityClass, dict[str, str]]:
    """A PriorityClass, defaulted (preemptionPolicy) but not validated: see
    ``admission.validate_priority_class``."""
    meta = read_meta(raw, namespaced=False)
    check_dns_subdomain(meta.name, "metadata.name")
    policy = opt_str(raw, "preemptionPolicy", "")
    pc = PriorityClass(
        name=meta.name,
        value=get_int(raw, "value", "", bits=32),
        global_default=get_bool(raw, "globalDefault", ""),
        preemption_policy=PREEMPT_LOWER_PRIORITY if policy is None else policy,
        description=get_str(raw, "description", ""),
    )
    return pc, meta.annotations


def _disrupted_pods(raw: Raw, path: str) -> dict[str, Time]:
    p = child(path, "disruptedPods")
    out: dict[str, Time] = {}
    for name, when in as_map(raw.get("disruptedPods"), p).items():
        if not isinstance(name, str):
            raise fail(p, f"expected string keys, got {describe(name)}")
        out[name] = parse_time(when, f"{p}[{name}]")
    return out


def convert_pdb(raw: Raw) -> tuple[PodDisruptionBudget, dict[str, str]]:
    """A policy/v1 PodDisruptionBudget: a missing selector selects no pods, an empty
    one all pods of the namespace."""
    meta = read_meta(raw, namespaced=True)
    check_dns_subdomain(meta.name, "metadata.name")
    spec = get_map(raw, "spec", "")
    min_available = opt_int_or_percent(spec, "minAvailable", "spec", at_most_100=True)
    max_unavailable = opt_int_or_percent(spec, "maxUnavailable", "spec", at_most_100=True)
    if min_available is not None and max_unavailable is not None:
        raise fail("spec", "minAvailable and maxUnavailable cannot be both set")
    status = get_map(raw, "status", "")
    pdb = PodDisruptionBudget(
        name=meta.name,
        namespace=meta.namespace,
        selector=label_selector(spec.get("selector"), "spec.selector"),
        min_available=min_available,
        max_unavailable=max_unavailable,
        unhealthy_pod_eviction_policy=opt_enum(
            spec, "unhealthyPodEvictionPolicy", "spec", UNHEALTHY_POD_EVICTION_POLICIES
        ),
        status=PodDisruptionBudgetStatus(
            disruptions_allowed=get_int(status, "disruptionsAllowed", "status", bits=32),
            current_healthy=get_int(status, "currentHealthy", "status", bits=32),
            desired_healthy=get_int(status, "desiredHealthy", "status", bits=32),
            expected_pods=get_int(status, "expectedPods", "status", bits=32),
            disrupted_pods=_disrupted_pods(status, "status"),
            observed_generation=get_int(status, "observedGeneration", "status"),
        ),
    )
    return pdb, meta.annotations

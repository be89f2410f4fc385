"""Effective pod requests, computed as upstream's ``resourcehelper.PodRequests``.

The request of a pod is the sum of its regular containers and its sidecars
(init containers with ``restartPolicy: Always``), raised to the largest
need of any init container while it runs (plus the sidecars started before
it), overridden by pod-level ``spec.resources.requests`` for cpu, memory and
hugepages, plus ``spec.overhead``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from kubesched.api.types import CPU, MEMORY, Container, PodSpec, ResourceList

DEFAULT_MILLI_CPU_REQUEST: Final = 100
"""Used for scoring a container that sets no cpu request (schedutil)."""
DEFAULT_MEMORY_REQUEST: Final = 200 * 1024 * 1024
"""Used for scoring a container that sets no memory request (schedutil)."""

NON_ZERO_DEFAULTS: Final[Mapping[str, int]] = {
    CPU: DEFAULT_MILLI_CPU_REQUEST,
    MEMORY: DEFAULT_MEMORY_REQUEST,
}

HUGEPAGES_PREFIX: Final = "hugepages-"


def is_native_resource(name: str) -> bool:
    """No domain, or a ``kubernetes.io/`` one (v1helper.IsNativeResource)."""
    return "/" not in name or "kubernetes.io/" in name


def is_scalar_resource_name(name: str) -> bool:
    """Extended, hugepages, prefixed-native and attachable-volume resources: the ones
    NodeInfo tracks in ``ScalarResources`` (schedutil.IsScalarResourceName)."""
    extended = not is_native_resource(name) and not name.startswith("requests.")
    return (
        extended
        or name.startswith((HUGEPAGES_PREFIX, "attachable-volumes-"))
        or ("/" in name and "kubernetes.io/" in name)
    )


def is_supported_pod_level_resource(name: str) -> bool:
    return name in (CPU, MEMORY) or name.startswith(HUGEPAGES_PREFIX)


def _add(into: dict[str, int], other: ResourceList) -> None:
    for k, v in other.items():
        into[k] = into.get(k, 0) + v


def _max(into: dict[str, int], other: ResourceList) -> None:
    for k, v in other.items():
        if k not in into or v > into[k]:
            into[k] = v


def _container_requests(c: Container, non_missing: ResourceList | None) -> ResourceList:
    if not non_missing:
        return c.requests
    out = dict(c.requests)
    for k, v in non_missing.items():
        if k not in c.requests:
            out[k] = v
    return out


def pod_requests(spec: PodSpec, non_missing: ResourceList | None = None) -> dict[str, int]:
    """The pod's effective requests; ``non_missing`` fills requests a container omits
    (``NonMissingContainerRequests``: an explicit zero is kept)."""
    result: dict[str, int] = {}
    for c in spec.containers:
        _add(result, _container_requests(c, non_missing))
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for c in spec.init_containers:
        reqs = _container_requests(c, non_missing)
        if c.restart_policy == "Always":
            _add(result, reqs)
            _add(sidecars, reqs)
            _max(init_max, sidecars)
        else:
            combined = dict(reqs)
            _add(combined, sidecars)
            _max(init_max, combined)
    _max(result, init_max)
    if spec.resources:
        for k, v in spec.resources.items():
            if is_supported_pod_level_resource(k):
                result[k] = v
    if spec.overhead:
        _add(result, spec.overhead)
    return result


def pod_level_requests_set(spec: PodSpec) -> bool:
    return any(is_supported_pod_level_resource(k) for k in spec.resources)


def pod_non_zero_requests(spec: PodSpec, requests: ResourceList | None = None) -> tuple[int, int]:
    """(milli-CPU, memory bytes) as NodeInfo's ``NonZeroRequested`` counts a pod: the
    scoring defaults fill a cpu/memory request that a container omits (or, with
    pod-level requests, that the whole pod omits)."""
    if requests is None:
        requests = pod_requests(spec)
    if not pod_level_requests_set(spec):
        non_missing: ResourceList = NON_ZERO_DEFAULTS
    else:
        non_missing = {k: v for k, v in NON_ZERO_DEFAULTS.items() if k not in requests}
    reqs = pod_requests(spec, non_missing) if non_missing else requests
    return reqs.get(CPU, 0), reqs.get(MEMORY, 0)

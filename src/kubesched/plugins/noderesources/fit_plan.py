"""NodeResourcesFit's Filter, declared: the pod's request as a ``ResourcePlan``.

After "Too many pods", fit.go ``fitsRequest`` (v1.36) checks ``Insufficient cpu`` /
``memory`` / ``ephemeral-storage`` for non-zero requests, then ``Insufficient
<name>`` for every non-zero scalar resource except extended resources named in
``ignoredResources`` or of a group in ``ignoredResourceGroups``; scalars sorted
by name (upstream: Go map order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubesched.api.resources import is_native_resource
from kubesched.api.types import CPU, EPHEMERAL_STORAGE, MEMORY
from kubesched.framework.resources import REASON_TOO_MANY_PODS, ResourceCheck, ResourcePlan
from kubesched.framework.types import Resource

__all__ = [
    "NO_IGNORED",
    "REASON_INSUFFICIENT_CPU",
    "REASON_INSUFFICIENT_EPHEMERAL_STORAGE",
    "REASON_INSUFFICIENT_MEMORY",
    "REASON_TOO_MANY_PODS",
    "IgnoredResources",
    "fit_plan",
    "insufficient_reason",
    "is_extended_resource_name",
    "requests_nothing",
]

REASON_INSUFFICIENT_CPU: Final = "Insufficient cpu"
REASON_INSUFFICIENT_MEMORY: Final = "Insufficient memory"
REASON_INSUFFICIENT_EPHEMERAL_STORAGE: Final = "Insufficient ephemeral-storage"
REQUESTS_PREFIX: Final = "requests."


def insufficient_reason(resource: str) -> str:
    """``Insufficient <resource>`` (upstream ``fmt.Sprintf("Insufficient %v", name)``)."""
    if resource == CPU:
        return REASON_INSUFFICIENT_CPU
    if resource == MEMORY:
        return REASON_INSUFFICIENT_MEMORY
    if resource == EPHEMERAL_STORAGE:
        return REASON_INSUFFICIENT_EPHEMERAL_STORAGE
    return f"Insufficient {resource}"


def is_extended_resource_name(name: str) -> bool:
    """Not native (no domain, or a ``kubernetes.io/`` one) and not ``requests.*``
    (v1helper.IsExtendedResourceName; API validation guarantees the rest)."""
    return not is_native_resource(name) and not name.startswith(REQUESTS_PREFIX)


@dataclass(frozen=True, slots=True)
class IgnoredResources:
    """``ignoredResources`` / ``ignoredResourceGroups`` of NodeResourcesFitArgs."""

    names: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()

    def ignores(self, name: str) -> bool:
        """Whether the Filter skips this resource (extended resources only)."""
        if not is_extended_resource_name(name):
            return False
        if name in self.names:
            return True
        # The name has a domain (API validation), so split("/")[0] is it.
        return bool(self.groups) and name.split("/", 1)[0] in self.groups


NO_IGNORED: Final = IgnoredResources()


def requests_nothing(request: Resource) -> bool:
    """upstream's "the pod requests nothing" test (a zero scalar entry counts as
    requesting something, as there)."""
    return (
        request.milli_cpu == 0
        and request.memory == 0
        and request.ephemeral_storage == 0
        and not request.scalar
    )


def fit_plan(request: Resource, ignored: IgnoredResources = NO_IGNORED) -> ResourcePlan:
    """The Filter's plan for a pod's effective request (PodRequests)."""
    checks = [
        ResourceCheck(name, q, insufficient_reason(name))
        for name, q in (
            (CPU, request.milli_cpu),
            (MEMORY, request.memory),
            (EPHEMERAL_STORAGE, request.ephemeral_storage),
        )
        if q > 0
    ]
    checks.extend(
        ResourceCheck(name, q, insufficient_reason(name))
        for name, q in sorted(request.scalar.items())
        if q != 0 and not ignored.ignores(name)
    )
    return ResourcePlan(tuple(checks))

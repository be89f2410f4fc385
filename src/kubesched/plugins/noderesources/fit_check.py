"""Does a pod's request fit a node? (upstream fit.go fitsRequest / Fits).

Checked in this order, every failure collected into ONE status:

1. ``Too many pods``: the node's pod count + 1 exceeds its ``pods`` allocatable.
   Checked even for a pod that requests nothing.
2. If the pod requests nothing else, stop.
3. ``Insufficient cpu`` / ``Insufficient memory`` /
   ``Insufficient ephemeral-storage``: a non-zero request greater than
   allocatable minus what the node's pods already request.
4. ``Insufficient <name>`` for every scalar resource (extended, hugepages,
   ``*kubernetes.io/*``, attachable volumes) with a non-zero request, the same
   comparison (a node lacking the resource has 0 of it). Extended resources
   (a domain other than ``kubernetes.io``) named in ``ignoredResources``, or
   whose domain is in ``ignoredResourceGroups``, are not checked.

The status is Unschedulable, or UnschedulableAndUnresolvable when some failing
resource's request exceeds the node's *total* allocatable (even an empty node
could not hold the pod, so preemption cannot help). That rule is released
behaviour since v1.34 (kubernetes PR #131345, no feature gate) and is still
in v1.36.2. ``Too many pods`` alone is always Unschedulable.

Upstream walks scalar resources in Go map order (random); kubesched reports
them sorted by name so statuses are reproducible.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np

from kubesched.api.resources import is_native_resource
from kubesched.api.types import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubesched.framework.interfaces import Verdicts
from kubesched.framework.nodetable import COL_PODS, IntArray, NodeTable
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, Resource

REASON_TOO_MANY_PODS: Final = "Too many pods"
REASON_INSUFFICIENT_CPU: Final = "Insufficient cpu"
REASON_INSUFFICIENT_MEMORY: Final = "Insufficient memory"
REASON_INSUFFICIENT_EPHEMERAL_STORAGE: Final = "Insufficient ephemeral-storage"
REQUESTS_PREFIX: Final = "requests."

MAX_VECTOR_CHECKS: Final = 60
"""Resources the vector path can encode in one int64 bit mask (bits 0, 1 are
"too many pods" and "unresolvable")."""


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


@dataclass(frozen=True, slots=True)
class InsufficientResource:
    """One failed resource (upstream InsufficientResource)."""

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


@dataclass(frozen=True, slots=True)
class PodRequest:
    """The pod's effective request as the Filter reads it; the PreFilter state
    (immutable, so ``clone`` returns itself).

    ``checks``: the (resource, amount) pairs Filter compares, in reason order
    (cpu, memory, ephemeral-storage, then scalar resources sorted by name),
    leaving out zero amounts and ignored extended resources."""

    milli_cpu: int
    memory: int
    ephemeral_storage: int
    scalar: tuple[tuple[str, int], ...]
    checks: tuple[tuple[str, int], ...] = field(default=())

    def clone(self) -> PodRequest:
        return self

    def is_zero(self) -> bool:
        return (
            self.milli_cpu == 0
            and self.memory == 0
            and self.ephemeral_storage == 0
            and len(self.scalar) == 0
        )

    @staticmethod
    def of(request: Resource, ignored: IgnoredResources = NO_IGNORED) -> PodRequest:
        scalar = tuple(sorted(request.scalar.items()))
        checks: list[tuple[str, int]] = [
            (name, q)
            for name, q in (
                (CPU, request.milli_cpu),
                (MEMORY, request.memory),
                (EPHEMERAL_STORAGE, request.ephemeral_storage),
            )
            if q > 0
        ]
        checks.extend((n, q) for n, q in scalar if q != 0 and not ignored.ignores(n))
        return PodRequest(
            request.milli_cpu, request.memory, request.ephemeral_storage, scalar, tuple(checks)
        )


def _node_amount(r: Resource, name: str) -> int:
    if name == CPU:
        return r.milli_cpu
    if name == MEMORY:
        return r.memory
    if name == EPHEMERAL_STORAGE:
        return r.ephemeral_storage
    return r.scalar.get(name, 0)


def fits_request(req: PodRequest, node: NodeInfo) -> list[InsufficientResource]:
    """Exact path: every insufficient resource of ``node`` for ``req`` (empty = fits)."""
    out: list[InsufficientResource] = []
    allowed = node.allocatable.allowed_pod_number
    num_pods = len(node.pods)
    if num_pods + 1 > allowed:
        out.append(InsufficientResource(PODS, REASON_TOO_MANY_PODS, 1, num_pods, allowed))
    if req.is_zero():
        return out
    alloc, used = node.allocatable, node.requested
    for name, q in req.checks:
        a = _node_amount(alloc, name)
        u = _node_amount(used, name)
        if q > a - u:
            out.append(InsufficientResource(name, insufficient_reason(name), q, u, a, q > a))
    return out


def status_of(insufficient: Sequence[InsufficientResource]) -> Status:
    """The Filter status for a non-empty list of failures."""
    code = Code.UNSCHEDULABLE
    if any(r.unresolvable for r in insufficient):
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    return Status(code, *(r.reason for r in insufficient))


def fits_vector(req: PodRequest, table: NodeTable) -> Verdicts | None:
    """Vector path: :func:`fits_request` for every table row at once (``None`` when
    the pod has more checks than a mask can hold)."""
    masks = failure_masks(req, table.allocatable, table.requested, table.res_index)
    if masks is None:
        return None
    return verdicts_from_masks(req, masks)


def failure_masks(
    req: PodRequest, allocatable: IntArray, requested: IntArray, res_index: Mapping[str, int]
) -> IntArray | None:
    """One int64 failure mask per row of ``allocatable`` / ``requested`` (table-shaped
    matrices whose ``pods`` column counts pods): bit 0 too many pods, bit 1
    unresolvable, bit 2+i the i-th of ``req.checks`` failed; 0 = fits.

    Callers may pass adjusted matrices (e.g. ``requested`` minus preemption victims)
    to evaluate "what if" states; ``None`` when the pod has more checks than fit."""
    checks = req.checks if not req.is_zero() else ()
    if len(checks) > MAX_VECTOR_CHECKS:
        return None
    n = allocatable.shape[0]
    mask = (requested[:, COL_PODS] + 1 > allocatable[:, COL_PODS]).astype(np.int64)
    if checks:
        unresolvable = np.zeros(n, dtype=np.bool_)
        for bit, (name, q) in enumerate(checks, start=2):
            col = res_index.get(name)
            if col is None:
                # No node has ever had this resource: it is 0 everywhere.
                mask |= np.int64(1 << bit)
                unresolvable[:] = True
                continue
            a = allocatable[:, col]
            fail = q > a - requested[:, col]
            mask |= fail.astype(np.int64) << bit
            unresolvable |= fail & (q > a)
        mask |= unresolvable.astype(np.int64) << 1
    return mask


def verdicts_from_masks(req: PodRequest, masks: IntArray) -> Verdicts:
    """One Status per distinct non-zero mask; rows with mask 0 pass (-1)."""
    checks = req.checks if not req.is_zero() else ()
    index = np.full(len(masks), -1, dtype=np.int32)
    failing = np.flatnonzero(masks)
    if failing.size == 0:
        return Verdicts(index, ())
    uniq, inverse = np.unique(masks[failing], return_inverse=True)
    index[failing] = inverse.astype(np.int32)
    return Verdicts(index, [_status_for_mask(int(m), checks) for m in uniq])


def _status_for_mask(mask: int, checks: Sequence[tuple[str, int]]) -> Status:
    reasons: list[str] = []
    if mask & 1:
        reasons.append(REASON_TOO_MANY_PODS)
    reasons.extend(_reasons(mask, checks))
    code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if mask & 2 else Code.UNSCHEDULABLE
    return Status(code, *reasons)


def _reasons(mask: int, checks: Sequence[tuple[str, int]]) -> Iterable[str]:
    for bit, (name, _) in enumerate(checks, start=2):
        if mask >> bit & 1:
            yield insufficient_reason(name)

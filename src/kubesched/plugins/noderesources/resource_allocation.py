"""The amounts a resource-allocation scorer looks at (upstream resource_allocation.go).

Shared by NodeResourcesFit's scoring strategies and NodeResourcesBalancedAllocation.
For every configured resource (in configuration order) a node contributes three
amounts: ``allocatable``, ``requested`` (what is already requested on the node
*plus* the incoming pod) and ``allocated`` (without the pod). A resource whose
allocatable amount is 0 contributes nothing (all three are 0) and scorers skip it.

Upstream v1.36 rules (calculateResourceAllocatableRequest):

- ``cpu`` / ``memory``: the node's NonZeroRequested (defaults 100m / 200Mi for
  containers that omit a request), or its plain Requested when the scorer
  ``use_requested`` (BalancedAllocation does, NodeResourcesFit does not).
- ``ephemeral-storage``: always the node's plain Requested.
- a scalar resource (extended, hugepages, ``*kubernetes.io/*``, attachable
  volumes): skipped when the incoming pod requests 0 of it; otherwise the
  node's allocatable and Requested amounts (0 when the node lacks it).
- anything else (``pods``, unknown names): skipped.

The pod's own amounts (``pod_request_list``) are upstream's
calculatePodResourceRequest: effective requests, with the non-zero defaults
filled in per container when the scorer does not ``use_requested``.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple, Protocol

import numpy as np

from kubesched.api.resources import NON_ZERO_DEFAULTS, is_scalar_resource_name, pod_requests
from kubesched.api.types import CPU, EPHEMERAL_STORAGE, MEMORY, PodSpec
from kubesched.framework.config import ResourceSpec
from kubesched.framework.nodetable import COL_CPU, COL_EPHEMERAL, COL_MEMORY, IntArray, NodeTable
from kubesched.framework.scoring import RowScoreCache
from kubesched.framework.status import Status, error
from kubesched.framework.types import NodeInfo, PodInfo

ERR_RESOURCES_NOT_FOUND: Final = "resources not found"
"""Score's error when no resource is configured (upstream wording)."""

# How a configured resource is read.
KIND_CPU: Final = 0
KIND_MEMORY: Final = 1
KIND_EPHEMERAL: Final = 2
KIND_SCALAR: Final = 3
KIND_NONE: Final = 4


def resource_kind(name: str) -> int:
    if name == CPU:
        return KIND_CPU
    if name == MEMORY:
        return KIND_MEMORY
    if name == EPHEMERAL_STORAGE:
        return KIND_EPHEMERAL
    if is_scalar_resource_name(name):
        return KIND_SCALAR
    return KIND_NONE


class Scorer(Protocol):
    """One scoring function over the per-resource amounts of a node.

    ``score`` is the exact (Python int) form, ``score_vector`` the same function
    over many nodes (each argument holds one int64 array per resource)."""

    def score(
        self, requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]
    ) -> int: ...

    def score_vector(
        self,
        requested: Sequence[IntArray],
        allocated: Sequence[IntArray],
        allocatable: Sequence[IntArray],
    ) -> IntArray: ...


_NON_ZERO_CACHE: weakref.WeakKeyDictionary[PodSpec, dict[str, int]] = weakref.WeakKeyDictionary()


def _non_zero_requests(spec: PodSpec) -> dict[str, int]:
    """Effective requests with 100m / 200Mi filled into every container (init
    containers included) that omits cpu / memory, pod-level requests and overhead
    applied: upstream's PodRequests with NonMissingContainerRequests."""
    reqs = _NON_ZERO_CACHE.get(spec)
    if reqs is None:
        reqs = pod_requests(spec, NON_ZERO_DEFAULTS)
        _NON_ZERO_CACHE[spec] = reqs
    return reqs


class Amounts(NamedTuple):
    """Per-resource amounts of one node, in configuration order (a NamedTuple: the
    exact path builds one per node and score, so construction must be cheap)."""

    requested: tuple[int, ...]
    allocated: tuple[int, ...]
    allocatable: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class VectorAmounts:
    """Per-resource amounts of many nodes: one int64 array per resource."""

    requested: list[IntArray]
    allocated: list[IntArray]
    allocatable: list[IntArray]


class ResourceAllocation:
    """Reads the configured resources of the pod and of nodes for one scorer."""

    __slots__ = ("_cpu_memory", "_kinds", "names", "resources", "use_requested", "weights")

    def __init__(self, resources: Sequence[ResourceSpec], use_requested: bool) -> None:
        self.resources = tuple(resources)
        self.names = tuple(r.name for r in self.resources)
        self.weights = tuple(r.weight for r in self.resources)
        self.use_requested = use_requested
        self._kinds = tuple(resource_kind(n) for n in self.names)
        self._cpu_memory = self._kinds == (KIND_CPU, KIND_MEMORY)
        """The default configuration: ``node_amounts`` takes a straight path."""

    # ------------------------------------------------------------------ the pod
    def pod_request_list(self, pi: PodInfo) -> tuple[int, ...]:
        """The pod's amount of every configured resource (upstream
        calculatePodResourceRequestList)."""
        reqs = pi.requests if self.use_requested else _non_zero_requests(pi.pod.spec)
        return tuple(reqs.get(n, 0) for n in self.names)

    @staticmethod
    def is_best_effort(pod_requests_list: Sequence[int]) -> bool:
        return all(r == 0 for r in pod_requests_list)

    # ------------------------------------------------------------------ one node
    def node_amounts(self, node: NodeInfo, pod_req: Sequence[int]) -> Amounts:
        """Exact path: the amounts of one node (upstream score())."""
        base = node.requested if self.use_requested else node.non_zero_requested
        alloc_r = node.allocatable
        if self._cpu_memory:
            # The loop below for (cpu, memory), unrolled: it runs for every changed
            # node of every cycle (RowScoreCache), so it is worth the duplication.
            a0, a1 = alloc_r.milli_cpu, alloc_r.memory
            u0, u1 = base.milli_cpu, base.memory
            p0, p1 = pod_req
            if a0 == 0:
                u0 = p0 = 0
            if a1 == 0:
                u1 = p1 = 0
            return Amounts((u0 + p0, u1 + p1), (u0, u1), (a0, a1))
        requested: list[int] = []
        allocated: list[int] = []
        allocatable: list[int] = []
        for name, kind, pr in zip(self.names, self._kinds, pod_req, strict=True):
            if kind == KIND_CPU:
                a, used = alloc_r.milli_cpu, base.milli_cpu
            elif kind == KIND_MEMORY:
                a, used = alloc_r.memory, base.memory
            elif kind == KIND_EPHEMERAL:
                a, used = alloc_r.ephemeral_storage, node.requested.ephemeral_storage
            elif kind == KIND_SCALAR and pr != 0 and name in alloc_r.scalar:
                a, used = alloc_r.scalar[name], node.requested.scalar.get(name, 0)
            else:
                a = used = 0
            if a == 0:
                # Only resources the node has take part.
                used = pr = 0
            requested.append(used + pr)
            allocated.append(used)
            allocatable.append(a)
        return Amounts(tuple(requested), tuple(allocated), tuple(allocatable))

    # ------------------------------------------------------------------ many nodes
    def table_amounts(
        self,
        alloc: IntArray,
        req: IntArray,
        non_zero: IntArray,
        res_index: dict[str, int],
        pod_req: Sequence[int],
    ) -> VectorAmounts:
        """Vector path: the amounts of the rows whose ``allocatable`` /
        ``requested`` / ``non_zero`` matrices are given (already row-selected)."""
        n = alloc.shape[0]
        zeros = np.zeros(n, dtype=np.int64)
        requested: list[IntArray] = []
        allocated: list[IntArray] = []
        allocatable: list[IntArray] = []
        for name, kind, pr in zip(self.names, self._kinds, pod_req, strict=True):
            if kind == KIND_CPU:
                a = alloc[:, COL_CPU]
                used = req[:, COL_CPU] if self.use_requested else non_zero[:, 0]
            elif kind == KIND_MEMORY:
                a = alloc[:, COL_MEMORY]
                used = req[:, COL_MEMORY] if self.use_requested else non_zero[:, 1]
            elif kind == KIND_EPHEMERAL:
                a = alloc[:, COL_EPHEMERAL]
                used = req[:, COL_EPHEMERAL]
            elif kind == KIND_SCALAR and pr != 0 and (col := res_index.get(name)) is not None:
                a = alloc[:, col]
                used = req[:, col]
            else:
                requested.append(zeros)
                allocated.append(zeros)
                allocatable.append(zeros)
                continue
            has = a != 0
            allocatable.append(np.where(has, a, 0))
            allocated.append(np.where(has, used, 0))
            requested.append(np.where(has, used + pr, 0))
        return VectorAmounts(requested, allocated, allocatable)


class AllocationScores:
    """A ``Scorer`` applied through ``ResourceAllocation``'s amounts: one node at a
    time (the exact path) or many table rows at once through a per-row cache
    (``RowScoreCache``: scores depend only on a row's amounts and the pod's
    ``reqs``). One per plugin object, since scores depend on the plugin's args."""

    __slots__ = ("allocation", "cache", "scorer")

    def __init__(self, allocation: ResourceAllocation, scorer: Scorer) -> None:
        self.allocation = allocation
        self.scorer = scorer
        self.cache = RowScoreCache()

    def node(self, node: NodeInfo, reqs: Sequence[int]) -> int:
        """The exact per-node score."""
        a = self.allocation.node_amounts(node, reqs)
        return self.scorer.score(a.requested, a.allocated, a.allocatable)

    def rows(self, t: NodeTable, rows: IntArray, reqs: tuple[int, ...]) -> IntArray:
        """The scores of ``rows`` (a new array), from the cache where it can."""
        return self.cache.scores(
            t, reqs, rows, lambda r: self._vector(t, r, reqs), lambda r: self._one(t, r, reqs)
        )

    def slots(self, t: NodeTable, reqs: tuple[int, ...]) -> IntArray | None:
        """Every slot's score (``RowScoreCache.slots``)."""
        return self.cache.slots(
            t, reqs, lambda r: self._vector(t, r, reqs), lambda r: self._one(t, r, reqs)
        )

    def _vector(self, t: NodeTable, rows: IntArray, reqs: tuple[int, ...]) -> IntArray:
        a = self.allocation.table_amounts(
            t.allocatable[rows], t.requested[rows], t.non_zero[rows], t.res_index, reqs
        )
        return self.scorer.score_vector(a.requested, a.allocated, a.allocatable)

    def _one(self, t: NodeTable, row: int, reqs: tuple[int, ...]) -> int:
        info = t.infos[row]
        assert info is not None
        return self.node(info, reqs)


def resources_not_found() -> Status:
    return error(ERR_RESOURCES_NOT_FOUND)

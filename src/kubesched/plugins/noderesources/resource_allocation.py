"""The amounts a resource-allocation scorer looks at (upstream resource_allocation.go),
and the PreScore and Score shared by NodeResourcesFit's scoring strategies and
NodeResourcesBalancedAllocation (``AllocationScores``).

Per configured resource a node contributes ``allocatable``, ``requested`` (with
the incoming pod) and ``allocated`` (without); all 0 where allocatable is 0.
Upstream v1.36 calculateResourceAllocatableRequest: ``cpu`` / ``memory`` use
NonZeroRequested (100m / 200Mi defaults) unless the scorer ``use_requested``
(BalancedAllocation); ``ephemeral-storage`` plain Requested; a scalar resource is
skipped when the pod requests 0 of it; anything else (``pods``) is skipped. The
pod's amounts (``pod_request_list``) are calculatePodResourceRequest.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

import numpy as np

from kubesched.api.goformat import MANY, ONE, Num, Ops
from kubesched.api.resources import NON_ZERO_DEFAULTS, is_scalar_resource_name, pod_requests
from kubesched.api.types import CPU, EPHEMERAL_STORAGE, MEMORY, PodSpec
from kubesched.framework.config import ResourceSpec
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NodeSet
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.scoring import RowScoreCache
from kubesched.framework.status import SKIP, SUCCESS, Status, error
from kubesched.framework.types import NodeInfo, PodInfo

ERR_RESOURCES_NOT_FOUND: Final = "resources not found"
"""Score's error when no resource is configured (upstream wording)."""

NON_ZERO_COLUMNS: Final = {CPU: 0, MEMORY: 1}
"""The columns of ``NodeTable.non_zero``."""

Scorer = Callable[[Ops, Sequence[Num], Sequence[Num], Sequence[Num]], Num]
"""A scoring strategy ``scorer(xp, requested, allocated, allocatable)`` -> score(s),
written once over ``xp`` (``ONE``: one node, ``MANY``: many at once)."""


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


Amounts = tuple[list[Num], list[Num], list[Num]]
"""``(requested, allocated, allocatable)``: one value per configured resource."""

ABSENT: Final = ""
"""A name no resource has: reading it gives 0 (a resource that does not take part)."""


class _Scalars(Protocol):
    def get(self, name: str, default: int, /) -> Num: ...


class Source(Protocol):
    """Amounts read as a ``Resource``'s: a ``Resource`` (one node) or ``Columns`` (rows)."""

    @property
    def milli_cpu(self) -> Num: ...
    @property
    def memory(self) -> Num: ...
    @property
    def ephemeral_storage(self) -> Num: ...
    @property
    def scalar(self) -> _Scalars: ...


_ATTRIBUTES: Final = {CPU: "milli_cpu", MEMORY: "memory", EPHEMERAL_STORAGE: "ephemeral_storage"}
"""The ``Resource`` attributes of the resources that are not scalar ones."""


class Columns:
    """Named columns of a matrix, read as a ``Source``: one element per row, zeros
    for a name without a column."""

    __slots__ = ("index", "matrix", "zeros")

    def __init__(self, matrix: IntArray, index: Mapping[str, int]) -> None:
        self.matrix = matrix
        self.index = index
        self.zeros = np.zeros(len(matrix), dtype=np.int64)

    def get(self, name: str, default: int = 0, /) -> IntArray:
        """The column of ``name`` (zeros without one: ``default`` is not read)."""
        col = self.index.get(name)
        return self.zeros if col is None else self.matrix[:, col]

    @property
    def milli_cpu(self) -> IntArray:
        return self.get(CPU)

    @property
    def memory(self) -> IntArray:
        return self.get(MEMORY)

    @property
    def ephemeral_storage(self) -> IntArray:
        return self.get(EPHEMERAL_STORAGE)

    @property
    def scalar(self) -> Columns:
        return self


class ResourceAllocation:
    """Reads the configured resources of the pod and of nodes for one scorer."""

    __slots__ = ("_reads", "names", "resources", "use_requested")

    def __init__(self, resources: Sequence[ResourceSpec], use_requested: bool) -> None:
        self.resources = tuple(resources)
        self.names = tuple(r.name for r in self.resources)
        self.use_requested = use_requested
        self._reads = tuple(
            (
                _ATTRIBUTES.get(n, ""),
                n if is_scalar_resource_name(n) else ABSENT,
                n in (CPU, MEMORY) and not use_requested,
            )
            for n in self.names
        )
        """Per resource: its ``Resource`` attribute ("": read ``scalar``), its scalar
        name (ABSENT: never read), whether its non-zero requested amount is read."""

    # ------------------------------------------------------------------ the pod
    def pod_request_list(self, pi: PodInfo) -> tuple[int, ...]:
        """The pod's amount of every configured resource (upstream
        calculatePodResourceRequestList)."""
        reqs = pi.requests if self.use_requested else _non_zero_requests(pi.pod.spec)
        return tuple(reqs.get(n, 0) for n in self.names)

    # ------------------------------------------------------------------ the nodes
    def amounts(
        self, allocatable: Source, requested: Source, non_zero: Source, pod_req: Sequence[int]
    ) -> Amounts:
        """Per configured resource (``requested``, ``allocated``, ``allocatable``) of
        the node(s) given (upstream score()); all 0 where the resource takes no part.
        Python ints for one NodeInfo, int64 arrays for ``rows_amounts``."""
        with_pod: list[Num] = []
        without_pod: list[Num] = []
        alloc: list[Num] = []
        for (attr, name, nz), pr in zip(self._reads, pod_req, strict=True):
            if attr:
                a = getattr(allocatable, attr)
                used = getattr(non_zero if nz else requested, attr)
            else:  # scalar resources take part when the pod requests them
                name = name if pr else ABSENT
                a = allocatable.scalar.get(name, 0)
                used = requested.scalar.get(name, 0)
            has = a != 0  # only resources the node has take part
            with_pod.append((used + pr) * has)
            without_pod.append(used * has)
            alloc.append(a)
        return with_pod, without_pod, alloc

    def rows_amounts(self, t: NodeTable, rows: IntArray, pod_req: Sequence[int]) -> Amounts:
        """``amounts`` of table rows (int64 arrays, one element per row)."""
        return self.amounts(
            Columns(t.allocatable[rows], t.res_index),
            Columns(t.requested[rows], t.res_index),
            Columns(t.non_zero[rows], NON_ZERO_COLUMNS),
            pod_req,
        )


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    pod_requests: tuple[int, ...]

    def clone(self) -> _PreScoreState:
        return self


class AllocationScores:
    """PreScore and Score with ``scorer`` over ``allocation``'s amounts, one per
    plugin object. PreScore keeps the pod's amounts under ``state_key`` (Score
    computes them otherwise). Score: Error "resources not found" without
    resources; with ``skip_best_effort`` a pod requesting none of them is skipped
    at PreScore (BalancedAllocation, upstream #129138). Rows go through a
    ``RowScoreCache``."""

    __slots__ = ("_memo", "allocation", "cache", "scorer", "skip_best_effort", "state_key")

    def __init__(
        self,
        allocation: ResourceAllocation,
        scorer: Scorer,
        state_key: str,
        skip_best_effort: bool = False,
    ) -> None:
        self.allocation = allocation
        self.scorer = scorer
        self.state_key = state_key
        self.skip_best_effort = skip_best_effort
        self.cache = RowScoreCache()
        self._memo = object()
        """This object's key in a spec's memo (its PreScore state or SKIP)."""

    def _skips(self, reqs: Sequence[int]) -> bool:
        return self.skip_best_effort and all(r == 0 for r in reqs)

    def pre_score(self, state: CycleState, pod: PodInfo) -> Status:
        """Success, or Skip for a skipped pod."""
        memo = pod.facts.memo
        ps = memo.get(self._memo)
        if ps is None:
            reqs = self.allocation.pod_request_list(pod)
            ps = SKIP if self._skips(reqs) else _PreScoreState(reqs)
            memo[self._memo] = ps
        if not isinstance(ps, _PreScoreState):
            return SKIP
        state.write(self.state_key, ps)
        return SUCCESS

    def _requests(self, state: CycleState, pod: PodInfo) -> tuple[int, ...] | None:
        """The pod's amounts; None for a skipped pod (it scores 0)."""
        s = state.get(self.state_key)
        if isinstance(s, _PreScoreState):
            return s.pod_requests
        reqs = self.allocation.pod_request_list(pod)
        return None if self._skips(reqs) else reqs

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        if not self.allocation.resources:
            return 0, error(ERR_RESOURCES_NOT_FOUND)
        reqs = self._requests(state, pod)
        return (0 if reqs is None else self._one_node(node, reqs)), SUCCESS

    def score_vector(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> IntArray | None:
        """The scores of ``nodes`` (a new array), from the cache where it can."""
        if not self.allocation.resources:
            return None  # the per-node path reports the error
        reqs = self._requests(state, pod)
        if reqs is None:
            return np.zeros(len(nodes), dtype=np.int64)
        t = nodes.table
        return self.cache.scores(t, reqs, nodes.rows, *self._forms(t, reqs))

    def score_slots(self, state: CycleState, pod: PodInfo, table: NodeTable) -> IntArray | None:
        """Every slot's score (``RowScoreCache.slots``: a node's score depends on its
        own amounts only)."""
        if not self.allocation.resources:
            return None
        reqs = self._requests(state, pod)
        return None if reqs is None else self.cache.slots(table, reqs, *self._forms(table, reqs))

    def _one_node(self, node: NodeInfo, reqs: Sequence[int]) -> int:
        req, alloc, allocatable = self.allocation.amounts(
            node.allocatable, node.requested, node.non_zero_requested, reqs
        )
        score: int = self.scorer(ONE, req, alloc, allocatable)
        return score

    def _forms(
        self, t: NodeTable, reqs: tuple[int, ...]
    ) -> tuple[Callable[[IntArray], IntArray], Callable[[int], int]]:
        """``RowScoreCache``'s ``vector`` (rows) and ``one`` (a live row) functions."""

        def vector(rows: IntArray) -> IntArray:
            out: IntArray = self.scorer(MANY, *self.allocation.rows_amounts(t, rows, reqs))
            return out

        def one(row: int) -> int:
            info = t.infos[row]
            assert info is not None
            return self._one_node(info, reqs)

        return vector, one

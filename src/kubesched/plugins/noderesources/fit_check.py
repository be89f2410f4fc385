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

import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

from kubesched.api.resources import is_native_resource
from kubesched.api.types import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubesched.framework.interfaces import Verdicts, pass_index
from kubesched.framework.nodetable import COL_PODS, IntArray, NodeTable
from kubesched.framework.status import SUCCESS, Code, Status
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
    the pod has more checks than a mask can hold). Free slots of the table pass."""
    plan = _plan(req, table)
    if plan.need is None:
        masks = failure_masks(req, table.allocatable, table.requested, table.res_index)
        if masks is None:
            return None
        return plan.verdicts(masks)
    return plan.verdicts_of(req, table, None)


def fits_rows(req: PodRequest, table: NodeTable, rows: IntArray) -> Verdicts | None:
    """:func:`fits_vector` for ``rows`` only: ``index[i]`` is the verdict of
    ``rows[i]``. Which rows lack room, and how, is kept up to date
    incrementally (see ``_Plan``): when no node lacks room this costs no array
    operation, otherwise one gather. ``statuses`` may hold statuses that none
    of ``rows`` uses."""
    plan = _plan(req, table)
    if plan.need is None:
        masks = failure_masks(req, table.allocatable[rows], table.requested[rows], table.res_index)
        if masks is None:
            return None
        return plan.verdicts(masks)
    return plan.verdicts_of(req, table, rows)


_INT64_MIN: Final = np.iinfo(np.int64).min


class _Plan:
    """What Filter compares for one PodRequest on one table's resource axis.

    - ``need[col]``: the smallest free amount (``allocatable - requested``) that
      fits: the request for checked columns, 1 for ``pods``, ``_INT64_MIN`` for
      the others; None when some checked resource has no column (every row
      fails it; the general mask path handles that) or there are too many
      checks for a mask.
    - The Status of every failure mask met, with a stable id (``_statuses``).
    - Once the request comes back a second time: the status id of every table
      slot (-1 = fits, or a free slot) and how many live rows fail, brought up
      to date from the table's change log. A cycle then costs the rows changed
      since the previous one (usually the node last bound to), nothing more
      when every node has room, and one gather otherwise.
    """

    __slots__ = (
        "_alloc_key",
        "_alloc_t",
        "_checked",
        "_ids",
        "_layout",
        "_n_fail",
        "_seen",
        "_seq",
        "_sid",
        "_statuses",
        "_terms",
        "bits",
        "checks",
        "cols",
        "need",
        "need_cols",
        "resolvable",
        "table",
        "width",
    )

    def __init__(self, req: PodRequest, table: NodeTable) -> None:
        self.table: weakref.ref[NodeTable] = weakref.ref(table)
        self.width = width = len(table.resources)
        self.checks = req.checks if not req.is_zero() else ()
        self._statuses: list[Status] = []
        self._ids: dict[int, int] = {}
        """Failure mask -> index of its status in ``_statuses``."""
        self._sid: npt.NDArray[np.int32] | None = None
        self._n_fail = 0
        self._layout = -1
        self._seq = -1
        self._seen = -1
        """``table.change_seq`` when the request was first met without state."""
        need: IntArray | None = np.full(width, _INT64_MIN, dtype=np.int64)
        assert need is not None
        need[COL_PODS] = 1
        if len(self.checks) > MAX_VECTOR_CHECKS:
            need = None
        for name, q in self.checks:
            col = table.res_index.get(name)
            if col is None or need is None:
                need = None
                break
            need[col] = q
        self.need = need
        self._checked: list[tuple[int, int]] = []
        """(column, need) of the checked columns, for row-by-row updates."""
        self._terms: list[tuple[int, int, int]] = []
        """(bit, column, request) of each of ``checks``, in order: ``failure_masks``
        on one row, in plain Python (set with ``need``)."""
        self.cols: IntArray | None = None
        """The checked columns (``pods`` included), ascending; None when ``need`` is."""
        self.need_cols: IntArray | None = None
        """``need`` on ``cols``."""
        self._alloc_key: tuple[int, int, int] | None = None
        self._alloc_t: tuple[IntArray, IntArray] | None = None
        """``allocatable[:, cols]`` transposed (contiguous), and per slot the OR of
        the ``bits`` of the checked resources (not ``pods``) whose need exceeds the
        slot's allocatable, for ``_alloc_key`` = (id of the table's matrix, its
        layout and node generations): allocatable only changes with a node, which
        bumps the node generation."""
        self.bits: IntArray | None = None
        """Per column of ``cols``: its bit of a failure mask (``pods`` 1, the i-th
        check ``1 << (2 + i)``)."""
        self.resolvable: npt.NDArray[np.bool_] | None = None
        """Per column of ``cols``: True for ``pods`` (its failure is never unresolvable)."""
        if need is not None:
            self._checked = [(c, int(q)) for c, q in enumerate(need.tolist()) if q != _INT64_MIN]
            self.cols = np.array([c for c, _ in self._checked], dtype=np.int64)
            self.need_cols = need[self.cols]
            bit_of = {COL_PODS: 1}
            for bit, (name, _) in enumerate(self.checks, start=2):
                bit_of[table.res_index[name]] = 1 << bit
            self.bits = np.array([bit_of[c] for c, _ in self._checked], dtype=np.int64)
            self.resolvable = np.array([c == COL_PODS for c, _ in self._checked])
            self._terms = [
                (1 << bit, table.res_index[name], q)
                for bit, (name, q) in enumerate(self.checks, start=2)
            ]

    def alloc_cols(self, table: NodeTable, rows: IntArray) -> tuple[IntArray, IntArray]:
        """``allocatable[rows][:, cols].T`` as a contiguous (checks, rows) matrix, and
        per row the bits of the checked resources it cannot hold even empty (a
        failure on one of them is unresolvable). Requires ``cols``."""
        key = (id(table.allocatable), table.layout_generation, table.node_generation)
        got = self._alloc_t
        if got is None or key != self._alloc_key:
            assert self.cols is not None and self.need_cols is not None
            assert self.bits is not None and self.resolvable is not None
            at = np.ascontiguousarray(table.allocatable[:, self.cols].T)
            big = (self.need_cols[:, None] > at) & ~self.resolvable[:, None]
            # Distinct powers of two: their sum is their OR.
            over = np.where(big, self.bits[:, None], 0).sum(axis=0)
            got = (at, over)
            self._alloc_t = got
            self._alloc_key = key
        return got[0].take(rows, axis=1), got[1].take(rows)

    def verdicts_of(self, req: PodRequest, table: NodeTable, rows: IntArray | None) -> Verdicts:
        """Verdicts of ``rows`` (None = every slot; free slots pass). Requires ``need``."""
        sid = self._sid
        if sid is not None and self._layout == table.layout_generation:
            if self._seq != table.change_seq:
                changed = table.rows_changed_since(self._seq)
                if changed is None or len(changed) > len(sid) // 4:
                    sid = None
                else:
                    self._update_rows(req, table, sid, set(changed))
        else:
            sid = None
        if sid is None:
            if rows is not None and self._seen in (-1, table.change_seq):
                # A request met in one cycle only is evaluated on the rows asked for.
                self._seen = table.change_seq
                return self._evaluate(req, table, rows)
            sid = self._build(req, table)
        self._seq = table.change_seq
        if self._n_fail == 0:
            return Verdicts(pass_index(table.capacity if rows is None else len(rows)), ())
        if rows is None:
            return Verdicts(sid.copy(), list(self._statuses))
        return Verdicts(sid[rows], list(self._statuses))

    def _evaluate(self, req: PodRequest, table: NodeTable, rows: IntArray) -> Verdicts:
        """The verdicts of ``rows`` computed from scratch (masks for failing rows only)."""
        need = self.need
        assert need is not None
        fail: npt.NDArray[np.bool_] = np.asarray((table.free[rows] < need).any(axis=1))
        pos = fail.nonzero()[0]
        if len(pos) == 0:
            return Verdicts(pass_index(len(rows)), ())
        sub = rows[pos]
        masks = failure_masks(req, table.allocatable[sub], table.requested[sub], table.res_index)
        assert masks is not None  # need is None when the checks do not fit a mask
        index = np.full(len(rows), -1, dtype=np.int32)
        first = int(masks[0])
        if bool((masks == first).all()):
            # Usually every failing row fails the same way: one status, no np.unique.
            index[pos] = 0
            return Verdicts(index, (self.status(first),))
        uniq, inverse = np.unique(masks, return_inverse=True)
        index[pos] = inverse.astype(np.int32)
        return Verdicts(index, [self.status(int(m)) for m in uniq])

    def _build(self, req: PodRequest, table: NodeTable) -> npt.NDArray[np.int32]:
        """Status ids of every slot, from scratch."""
        need = self.need
        assert need is not None
        fail = np.asarray((table.free < need).any(axis=1))
        fail &= table.alive
        pos = fail.nonzero()[0]
        sid = np.full(table.capacity, -1, dtype=np.int32)
        if len(pos):
            masks = failure_masks(
                req, table.allocatable[pos], table.requested[pos], table.res_index
            )
            assert masks is not None
            uniq, inverse = np.unique(masks, return_inverse=True)
            ids = np.array([self._id(int(m)) for m in uniq], dtype=np.int32)
            sid[pos] = ids[inverse]
        self._sid = sid
        self._n_fail = len(pos)
        self._layout = table.layout_generation
        return sid

    def _update_rows(
        self, req: PodRequest, table: NodeTable, sid: npt.NDArray[np.int32], rows: set[int]
    ) -> None:
        """Re-evaluate a few changed rows (plain Python on a row is cheaper than
        numpy calls; the mask of a failing row is ``_row_mask``'s)."""
        free = table.free
        alive = table.alive
        checked = self._checked
        for r in rows:
            row = free[r].tolist()
            new = -1
            if alive[r] and any(row[c] < q for c, q in checked):
                new = self._id(self._row_mask(table, r, row))
            old = int(sid[r])
            if new != old:
                sid[r] = new
                self._n_fail += (new >= 0) - (old >= 0)

    def _row_mask(self, table: NodeTable, r: int, free: list[int]) -> int:
        """``failure_masks`` of row ``r`` (``free``: its free amounts as a list), in
        plain Python: every check has a column (``need`` is set), so no bit of an
        unknown resource; requests fit int64, so comparisons match numpy's."""
        alloc = table.allocatable[r].tolist()
        mask = int(int(table.requested[r, COL_PODS]) >= alloc[COL_PODS])
        unresolvable = False
        for bit, col, q in self._terms:
            if q > free[col]:
                mask |= bit
                if q > alloc[col]:
                    unresolvable = True
        return mask | 2 if unresolvable else mask

    def mask_what_if(self, alloc: list[int], q: list[int]) -> int:
        """``failure_masks`` of one row with allocatable ``alloc`` and summed
        requests ``q`` (both as lists), in plain Python. Requires ``need``."""
        mask = int(q[COL_PODS] >= alloc[COL_PODS])
        unresolvable = False
        for bit, col, need in self._terms:
            if need > alloc[col] - q[col]:
                mask |= bit
                if need > alloc[col]:
                    unresolvable = True
        return mask | 2 if unresolvable else mask

    def verdicts_small(self, table: NodeTable, rows: IntArray, requested: IntArray) -> Verdicts:
        """``verdicts_rows`` for a few rows in plain Python (numpy's per-call cost
        dominates there): the same masks as ``_row_mask``, with the summed
        requests ``requested`` instead of the table's. Requires ``need``."""
        alloc_all = table.allocatable
        masks = [
            self.mask_what_if(alloc_all[r].tolist(), q)
            for r, q in zip(rows.tolist(), requested.tolist(), strict=True)
        ]
        # As np.unique orders them: statuses by ascending mask.
        uniq = sorted({m for m in masks if m})
        if not uniq:
            return Verdicts(pass_index(len(masks)), ())
        at = {m: i for i, m in enumerate(uniq)}
        at[0] = -1
        index = np.array([at[m] for m in masks], dtype=np.int32)
        return Verdicts(index, [self.status(m) for m in uniq])

    def _id(self, mask: int) -> int:
        i = self._ids.get(mask)
        if i is None:
            i = len(self._statuses)
            self._statuses.append(_status_for_mask(mask, self.checks))
            self._ids[mask] = i
        return i

    def status(self, mask: int) -> Status:
        """The (shared) Status of a non-zero failure mask."""
        return self._statuses[self._id(mask)]

    def verdicts(self, masks: IntArray) -> Verdicts:
        index = np.full(len(masks), -1, dtype=np.int32)
        failing = np.flatnonzero(masks)
        if failing.size == 0:
            return Verdicts(index, ())
        uniq, inverse = np.unique(masks[failing], return_inverse=True)
        index[failing] = inverse.astype(np.int32)
        return Verdicts(index, [self.status(int(m)) for m in uniq])


_PLANS: weakref.WeakKeyDictionary[NodeTable, dict[tuple[PodRequest, int], _Plan]] = (
    weakref.WeakKeyDictionary()
)
_LAST: list[tuple[PodRequest, _Plan]] = []
"""The last (request, plan) handed out: consecutive pods usually share both."""


def _plan(req: PodRequest, table: NodeTable) -> _Plan:
    """The cached plan of ``req`` for this table (columns are append-only, so the
    axis width pins the mapping)."""
    width = len(table.resources)
    if _LAST:
        last_req, last = _LAST[0]
        if last_req is req and last.width == width and last.table() is table:
            return last
    plans = _PLANS.get(table)
    if plans is None:
        plans = {}
        _PLANS[table] = plans
    key = (req, width)
    plan = plans.get(key)
    if plan is None:
        if len(plans) > 1024:
            plans.clear()
        plan = _Plan(req, table)
        plans[key] = plan
    _LAST[:] = [(req, plan)]
    return plan


def what_if_columns(req: PodRequest, table: NodeTable) -> tuple[IntArray, IntArray] | None:
    """``(cols, need)`` such that a row whose summed requests are ``requested`` passes
    Filter exactly when ``allocatable[cols] - requested[cols] >= need`` holds
    everywhere (``pods`` is among the columns with need 1). None when some checked
    resource has no column or the checks do not fit a mask (use
    :func:`failure_masks`). The arrays are shared: never write into them."""
    plan = _plan(req, table)
    if plan.cols is None or plan.need_cols is None:
        return None
    return plan.cols, plan.need_cols


def passes_rows(
    req: PodRequest, table: NodeTable, rows: IntArray, requested: IntArray
) -> npt.NDArray[np.bool_] | None:
    """``failure_masks(...) == 0`` for ``rows`` of the table with summed requests
    ``requested`` (table-shaped), without building the masks."""
    plan = _plan(req, table)
    cols, need = plan.cols, plan.need_cols
    if cols is None or need is None:
        masks = failure_masks(req, table.allocatable[rows], requested, table.res_index)
        if masks is None:
            return None
        passed: npt.NDArray[np.bool_] = masks == 0
        return passed
    # Column-major (checks, rows): numpy reduces over a few checks much faster
    # along axis 0; ``take`` gathers rows much faster than fancy indexing.
    alloc, _ = plan.alloc_cols(table, rows)
    free = alloc - np.ascontiguousarray(requested[:, cols].T)
    ok: npt.NDArray[np.bool_] = np.logical_and.reduce(free >= need[:, None], axis=0)
    return ok


_SMALL: Final = 4
"""Rows up to which ``verdicts_rows`` runs in plain Python."""


def verdicts_rows(
    req: PodRequest, table: NodeTable, rows: IntArray, requested: IntArray
) -> Verdicts | None:
    """``verdicts_from_masks(req, failure_masks(...))`` for ``rows`` of the table with
    summed requests ``requested``: masks are built for the failing rows only and
    the statuses are the plan's shared ones."""
    plan = _plan(req, table)
    cols, need = plan.cols, plan.need_cols
    if cols is None or need is None:
        masks = failure_masks(req, table.allocatable[rows], requested, table.res_index)
        if masks is None:
            return None
        return verdicts_from_masks(req, masks)
    if len(rows) <= _SMALL:
        return plan.verdicts_small(table, rows, requested)
    # Column-major (checks, rows): numpy reduces over a few checks much faster
    # along axis 0; ``take`` gathers much faster than fancy indexing.
    alloc, over = plan.alloc_cols(table, rows)
    need_c = need[:, None]
    fail = alloc - np.ascontiguousarray(requested[:, cols].T) < need_c
    pos = np.logical_or.reduce(fail, axis=0).nonzero()[0]
    if len(pos) == 0:
        return Verdicts(pass_index(len(rows)), ())
    # failure_masks on the checked columns of the failing rows: the bits of the
    # failed columns, and bit 1 when a failed resource exceeds the allocatable.
    if len(pos) < len(rows):
        fail = fail.take(pos, axis=1)
        over = over.take(pos)
    assert plan.bits is not None
    masks = plan.bits @ fail
    masks |= ((masks & over) != 0).astype(np.int64) << 1
    index = np.full(len(rows), -1, dtype=np.int32)
    first = int(masks[0])
    if len(masks) == 1 or bool((masks == first).all()):
        index[pos] = 0
        return Verdicts(index, (plan.status(first),))
    uniq, inverse = np.unique(masks, return_inverse=True)
    index[pos] = inverse.astype(np.int32)
    return Verdicts(index, [plan.status(int(m)) for m in uniq])


def status_what_if(
    req: PodRequest, table: NodeTable, row: int, requested: list[int]
) -> Status | None:
    """``verdicts_rows`` for the single ``row`` with summed requests ``requested``
    (a list over the table's resource axis): SUCCESS or the plan's shared
    status; None when the plan has no column form (ask ``verdicts_rows``)."""
    plan = _plan(req, table)
    if plan.need_cols is None:
        return None
    mask = plan.mask_what_if(table.allocatable[row].tolist(), requested)
    return plan.status(mask) if mask else SUCCESS


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
    # requested + 1 > allocatable, for integers.
    mask = (requested[:, COL_PODS] >= allocatable[:, COL_PODS]).astype(np.int64)
    if not checks:
        return mask
    cols: list[int] = []
    needs: list[int] = []
    bits: list[int] = []
    missing = 0
    for bit, (name, q) in enumerate(checks, start=2):
        col = res_index.get(name)
        if col is None:
            # No node has ever had this resource: it is 0 everywhere.
            missing |= 1 << bit
            continue
        cols.append(col)
        needs.append(q)
        bits.append(1 << bit)
    if missing:
        mask |= np.int64(missing | 2)  # failing everywhere, and unresolvable
    if not cols:
        return mask
    try:
        need = np.array(needs, dtype=np.int64)
    except OverflowError:
        return _failure_masks_by_column(checks, allocatable, requested, res_index, mask)
    # All checks at once: a (rows, checks) failure matrix, its bits summed (distinct
    # powers of two, so the sum is the OR).
    alloc = allocatable[:, cols]
    fail = need > alloc - requested[:, cols]
    mask |= fail @ np.array(bits, dtype=np.int64)
    if not missing:
        mask |= (fail & (need > alloc)).any(axis=1).astype(np.int64) << 1
    return mask


def _failure_masks_by_column(
    checks: Sequence[tuple[str, int]],
    allocatable: IntArray,
    requested: IntArray,
    res_index: Mapping[str, int],
    mask: IntArray,
) -> IntArray:
    """``failure_masks`` check by check (requests beyond int64), onto ``mask``
    (which already holds the pods bit and the bits of unknown resources)."""
    unresolvable = np.zeros(allocatable.shape[0], dtype=np.bool_)
    for bit, (name, q) in enumerate(checks, start=2):
        col = res_index.get(name)
        if col is None:
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
    failed = masks[failing]
    first = failed[0]
    if (failed == first).all():
        # Usually every failing row fails the same way: one status, no sort.
        index[failing] = 0
        return Verdicts(index, [_status_for_mask(int(first), checks)])
    uniq, inverse = np.unique(failed, return_inverse=True)
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

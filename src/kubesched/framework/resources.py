"""Resource fit: upstream fit.go ``fitsRequest`` (v1.36) as a declared
``ResourcePlan`` and its one evaluator ``ResourceFit``, on every shape asked: one
NodeInfo (``node``, the reference), table rows with current requests (``rows``,
verdicts kept across cycles from the change log), rows as if their summed requests
were given (``what_if`` / ``what_if_row``) and the dry run's greedy ``reprieve``.

Semantics: "Too many pods" when pod count + 1 exceeds the ``pods`` allocatable
(never unresolvable by itself); each check in order fails when ``need >
allocatable - requested`` (a missing resource is 0) and adds its reason; the status
is UnschedulableAndUnresolvable when a failed need exceeds the node's total
allocatable (kubernetes PR #131345, v1.34+), else Unschedulable.

Every route computes one failure mask per row (bit 0 too many pods, bit 1
unresolvable, bit ``2 + i`` check ``i``; 0 fits) and ``status_for_mask`` turns it
into the Status. Batched routes hold it in an int64 and answer None past
``MAX_MASK_CHECKS`` checks (the caller goes per node).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import FilterPlugin, Verdicts, pass_index
from kubesched.framework.nodetable import COL_PODS, BoolArray, IntArray, NodeTable
from kubesched.framework.row_answers import RowAnswers, RowEntry
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo

REASON_TOO_MANY_PODS: Final = "Too many pods"
POD_BIT: Final = 1
UNRESOLVABLE_BIT: Final = 2
MAX_MASK_CHECKS: Final = 60
"""Checks an int64 mask holds next to the pods and unresolvable bits."""

_INT64_MIN: Final = int(np.iinfo(np.int64).min)
_INT64_MAX: Final = int(np.iinfo(np.int64).max)
_SMALL: Final = 4
"""Rows up to which the batched entry points run in plain Python (numpy's per-call
cost dominates there); a private speed detail, the answers are the same."""
_MAX_PLANS: Final = 1024


@dataclass(frozen=True, slots=True)
class ResourceCheck:
    """One resource the pod needs: fails when ``need > allocatable - requested``."""

    resource: str
    """The table's resource name (``cpu`` in milli)."""
    need: int
    reason: str
    """Upstream's reason when it fails ("Insufficient cpu")."""


@dataclass(frozen=True, slots=True)
class ResourcePlan:
    """fitsRequest's checks in reason order (module docstring). Immutable, compared by
    value (memo key); NodeResourcesFit's PreFilter state."""

    checks: tuple[ResourceCheck, ...] = ()

    def clone(self) -> ResourcePlan:
        return self


@runtime_checkable
class ResourceFilterPlugin(FilterPlugin, Protocol):
    """A filter whose verdict is its ``ResourcePlan`` under its ``ResourceFit``: it
    depends on a node's pods only through their summed requests and only gets
    stricter as pods are added (the batched dry run relies on it)."""

    @property
    def resource_fit(self) -> ResourceFit:
        """The evaluator the plugin's Filter uses."""
        ...

    def resource_plan(self, state: CycleState, pod: PodInfo) -> ResourcePlan | None:
        """The plan PreFilter declared for this cycle (None: PreFilter did not run)."""
        ...


def status_for_mask(plan: ResourcePlan, mask: int) -> Status:
    """The Status of a non-zero failure mask: reasons pods first, then the failed
    checks in order; unresolvable when bit 1 is set."""
    reasons = [REASON_TOO_MANY_PODS] if mask & POD_BIT else []
    reasons.extend(c.reason for i, c in enumerate(plan.checks) if mask >> (2 + i) & 1)
    code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if mask & UNRESOLVABLE_BIT else Code.UNSCHEDULABLE
    return Status(code, *reasons)


def node_mask(plan: ResourcePlan, node: NodeInfo) -> int:
    """The failure mask of ``node`` (Python ints, any amount)."""
    mask = POD_BIT if len(node.pods) + 1 > node.allocatable.allowed_pod_number else 0
    alloc, used = node.allocatable, node.requested
    unresolvable = False
    for i, check in enumerate(plan.checks):
        a = alloc.get(check.resource)
        if check.need > a - used.get(check.resource):
            mask |= 1 << (2 + i)
            unresolvable = unresolvable or check.need > a
    return mask | UNRESOLVABLE_BIT if unresolvable else mask


class ResourceFit:
    """The one evaluator of resource plans. Memos per (plan, axis width) on one table
    (columns, statuses, allocatable columns, kept verdicts) live as long as the
    evaluator and are dropped when it is handed another table."""

    __slots__ = ("_last", "_plans", "_table")

    def __init__(self) -> None:
        self._table: NodeTable | None = None
        self._plans: dict[tuple[ResourcePlan, int], _OnTable] = {}
        self._last: _OnTable | None = None

    @staticmethod
    def node(plan: ResourcePlan, node: NodeInfo) -> Status:
        """The Filter status of one node (SUCCESS when the pod fits)."""
        mask = node_mask(plan, node)
        return status_for_mask(plan, mask) if mask else SUCCESS

    def rows(self, plan: ResourcePlan, table: NodeTable, rows: IntArray | None) -> Verdicts | None:
        """The verdicts of ``rows`` with their current requests (``rows`` None: every
        slot, free slots pass). The index may be a shared read-only array."""
        on = self._on(plan, table)
        return on.current(table, rows) if on.bits is not None else None

    def what_if(
        self, plan: ResourcePlan, table: NodeTable, rows: IntArray, requested: IntArray
    ) -> Verdicts | None:
        """The verdicts of ``rows`` if their summed requests were ``requested``
        (``(len(rows), width)`` on the table's resource axis)."""
        on = self._on(plan, table)
        if on.bits is None:
            return None
        if len(rows) <= _SMALL:
            alloc = table.allocatable
            masks = [
                on.mask_of(alloc[r].tolist(), q)
                for r, q in zip(rows.tolist(), requested.tolist(), strict=True)
            ]
            return on.verdicts_of_list(masks)
        alloc_t, over = on.alloc_cols(table, rows)
        fail = alloc_t - np.ascontiguousarray(requested[:, on.cols].T) < on.need_c
        return on.verdicts(len(rows), fail, over)

    def what_if_row(
        self, plan: ResourcePlan, table: NodeTable, row: int, requested: Sequence[int]
    ) -> Status:
        """``what_if`` for one row (requests as plain ints), as a Status."""
        on = self._on(plan, table)
        mask = on.mask_of(table.allocatable[row].tolist(), requested)
        return on.status(mask) if mask else SUCCESS

    def reprieve(
        self,
        plan: ResourcePlan,
        table: NodeTable,
        rows: IntArray,
        base: IntArray,
        victims: IntArray,
    ) -> BoolArray:
        """The dry run's greedy reprieve. ``base[i]``: the summed requests of
        ``rows[i]`` with every potential victim gone (the row passes with them);
        ``victims[i, j]``: the j-th potential victim's request vector, most important
        first (zeros past the last: adding nothing keeps a row passing). Victim j is
        added back when the row still passes with it, and stays added. Returns
        ``slots[j, i]`` (slot-major): the j-th potential victim of row i stays a victim."""
        on = self._on(plan, table)
        n, m = victims.shape[0], victims.shape[1]
        if on.always:
            return np.ones((m, n), dtype=np.bool_)
        if n <= _SMALL:
            return on.reprieve_small(table, rows, base, victims)
        cols = on.cols
        alloc_t, _ = on.alloc_cols(table, rows)
        free = alloc_t - np.ascontiguousarray(base[:, cols].T)
        reqs = np.ascontiguousarray(victims[:, :, cols].transpose(1, 2, 0))  # (slot, col, row)
        need_c = on.need_c
        slots = np.empty((m, n), dtype=np.bool_)
        for j in range(m):
            after = free - reqs[j]
            ok = np.logical_and.reduce(after >= need_c, axis=0)
            np.logical_not(ok, out=slots[j])
            np.copyto(free, after, where=ok)
        return slots

    def _on(self, plan: ResourcePlan, table: NodeTable) -> _OnTable:
        """The plan on this table's axis (columns are append-only: the width pins
        the mapping); consecutive calls usually ask for the same plan object."""
        width = len(table.resources)
        last = self._last
        if last is not None and last.plan is plan and last.width == width and self._table is table:
            return last
        if self._table is not table:
            self._table = table
            self._plans = {}
        key = (plan, width)
        on = self._plans.get(key)
        if on is None:
            if len(self._plans) >= _MAX_PLANS:
                self._plans.clear()
            on = self._plans[key] = _OnTable(plan, table)
        self._last = on
        return on


class _SlotVerdicts(RowEntry):
    """Every slot's status id (-1: fits or free) and how many fail."""

    __slots__ = ("n_fail", "sid")

    def __init__(self, sid: npt.NDArray[np.int32], n_fail: int) -> None:
        self.sid = sid
        self.n_fail = n_fail


class _OnTable:
    """One plan on one table's resource axis, and its memos. ``cols[0]`` is ``pods``
    (need 1), then the checks with a column and an int64 need; a check without
    either fails everywhere, its bits are in ``always``."""

    __slots__ = (
        "_alloc",
        "_alloc_key",
        "_ids",
        "_kept",
        "_statuses",
        "always",
        "bits",
        "cols",
        "need_c",
        "plan",
        "terms",
        "width",
    )

    def __init__(self, plan: ResourcePlan, table: NodeTable) -> None:
        self.plan = plan
        self.width = len(table.resources)
        always = 0
        cols, needs, bits = [COL_PODS], [1], [POD_BIT]
        for i, check in enumerate(plan.checks):
            col = table.res_index.get(check.resource)
            need = check.need
            if col is None or not _INT64_MIN <= need <= _INT64_MAX:
                if need > 0:  # fails everywhere: every amount is 0 or below the need
                    always |= 1 << (2 + i) | UNRESOLVABLE_BIT
                continue
            cols.append(col)
            needs.append(need)
            bits.append(1 << (2 + i))
        self.always = always
        self.cols: IntArray = np.array(cols, dtype=np.int64)
        need_v = np.array(needs, dtype=np.int64)
        self.need_c: IntArray = need_v[:, None]
        self.terms = list(zip(bits[1:], cols[1:], needs[1:], strict=True))
        """(bit, column, need) of each check with a column: the Python form."""
        self.bits: IntArray | None = (
            np.array(bits, dtype=np.int64) if len(plan.checks) <= MAX_MASK_CHECKS else None
        )
        """Per column its mask bit (None: the masks do not fit an int64)."""
        self._statuses: list[Status] = []
        self._ids: dict[int, int] = {}
        """Failure mask -> index of its status in ``_statuses``."""
        self._alloc_key: tuple[IntArray, int, int] | None = None
        self._alloc: tuple[IntArray, IntArray] = (self.need_c[:, :0], need_v[:0])
        """``allocatable[:, cols]`` transposed (contiguous), and per slot the OR of the
        bits of the checks (not ``pods``) whose need exceeds its allocatable, for
        ``_alloc_key`` = (the table's matrix, its layout and node generations)."""
        self._kept: RowAnswers[_SlotVerdicts] = RowAnswers("resource_verdicts", 1, too_many=4)
        """Every slot's verdict, once the plan came back (``current``)."""

    # -- masks and statuses -------------------------------------------------
    def mask_of(self, alloc: Sequence[int], requested: Sequence[int]) -> int:
        """The failure mask of one row with allocatable ``alloc`` and summed
        requests ``requested`` (plain ints over the axis)."""
        mask = self.always | (POD_BIT if requested[COL_PODS] >= alloc[COL_PODS] else 0)
        unresolvable = False
        for bit, col, need in self.terms:
            a = alloc[col]
            if need > a - requested[col]:
                mask |= bit
                unresolvable = unresolvable or need > a
        return mask | UNRESOLVABLE_BIT if unresolvable else mask

    def masks(self, fail: BoolArray, over: IntArray) -> IntArray:
        """The masks of rows whose (column, row) failure matrix is ``fail``; ``over``:
        their bits of checks whose need exceeds the allocatable."""
        assert self.bits is not None
        masks: IntArray = self.bits @ fail
        masks |= ((masks & over) != 0).astype(np.int64) << 1
        if self.always:
            masks |= self.always
        return masks

    def status_id(self, mask: int) -> int:
        i = self._ids.get(mask)
        if i is None:
            i = self._ids[mask] = len(self._statuses)
            self._statuses.append(status_for_mask(self.plan, mask))
        return i

    def status(self, mask: int) -> Status:
        """The (shared) Status of a non-zero mask."""
        return self._statuses[self.status_id(mask)]

    def verdicts(self, n: int, fail: BoolArray, over: IntArray) -> Verdicts:
        """Verdicts of ``n`` rows from their failure matrix (masks of failing rows only)."""
        if self.always:
            pos = np.arange(n)
        else:
            pos = np.logical_or.reduce(fail, axis=0).nonzero()[0]
            if len(pos) == 0:
                return Verdicts(pass_index(n), ())
            if len(pos) < n:
                fail = fail.take(pos, axis=1)
                over = over.take(pos)
        masks = self.masks(fail, over)
        index = np.full(n, -1, dtype=np.int32)
        first = int(masks[0])
        if len(masks) == 1 or bool((masks == first).all()):
            # Usually every failing row fails the same way: one status, no np.unique.
            index[pos] = 0
            return Verdicts(index, (self.status(first),))
        uniq, inverse = np.unique(masks, return_inverse=True)
        index[pos] = inverse.astype(np.int32)
        return Verdicts(index, [self.status(int(m)) for m in uniq])

    def verdicts_of_list(self, masks: list[int]) -> Verdicts:
        """``verdicts`` from plain masks (statuses by ascending mask, as np.unique)."""
        uniq = sorted({m for m in masks if m})
        if not uniq:
            return Verdicts(pass_index(len(masks)), ())
        at = {m: i for i, m in enumerate(uniq)}
        at[0] = -1
        index = np.array([at[m] for m in masks], dtype=np.int32)
        return Verdicts(index, [self.status(m) for m in uniq])

    def alloc_cols(self, table: NodeTable, rows: IntArray) -> tuple[IntArray, IntArray]:
        """``allocatable[rows][:, cols].T`` as a (column, row) matrix, and per row the
        bits of the checks it cannot meet even empty."""
        at, over = self._alloc_all(table)
        return at.take(rows, axis=1), over.take(rows)

    def _alloc_all(self, table: NodeTable) -> tuple[IntArray, IntArray]:
        """``alloc_cols`` of every slot (kept while the matrix and its nodes are)."""
        key = self._alloc_key
        src = table.allocatable
        if (
            key is None
            or key[0] is not src
            or key[1] != table.layout_generation
            or key[2] != table.node_generation
        ):
            at = np.ascontiguousarray(src[:, self.cols].T)
            over = np.zeros(at.shape[1], dtype=np.int64)
            if self.bits is not None:
                big = self.need_c[1:] > at[1:]
                # Distinct powers of two: their sum is their OR.
                over = np.where(big, self.bits[1:, None], 0).sum(axis=0)
            self._alloc = (at, over)
            self._alloc_key = (src, table.layout_generation, table.node_generation)
        return self._alloc

    def reprieve_small(
        self, table: NodeTable, rows: IntArray, base: IntArray, victims: IntArray
    ) -> BoolArray:
        """``ResourceFit.reprieve`` in plain Python (a few rows)."""
        n, m = victims.shape[0], victims.shape[1]
        if n == 0:
            return np.zeros((m, 0), dtype=np.bool_)
        cols = self.cols
        alloc = table.allocatable.take(rows, axis=0)[:, cols].tolist()
        base_c = base[:, cols].tolist()
        reqs = victims[:, :, cols].tolist()
        need = self.need_c[:, 0].tolist()
        out: list[list[bool]] = []
        for i in range(n):
            free = [a - b for a, b in zip(alloc[i], base_c[i], strict=True)]
            stays: list[bool] = []
            for req in reqs[i]:
                after = [f - q for f, q in zip(free, req, strict=True)]
                if all(x >= q for x, q in zip(after, need, strict=True)):
                    free = after
                    stays.append(False)
                else:
                    stays.append(True)
            out.append(stays)
        slots: BoolArray = np.array(out, dtype=np.bool_).reshape(n, m).T
        return slots

    # -- every slot's verdict, kept across cycles ----------------------------
    def current(self, table: NodeTable, rows: IntArray | None) -> Verdicts:
        """Verdicts of ``rows`` with the table's requests (None: every slot). From the
        plan's second cycle on, every slot's status id is kept and updated from the
        change log."""
        kept, changed = self._kept.lookup(None, table)
        if kept is None:
            if rows is not None and not self._kept.met_before(None, table):
                # A plan met in one cycle only is evaluated on the rows asked for.
                return self._evaluate(table, rows)
            kept = self._kept.put(None, table, self._build(table))
        elif changed:
            self._update_rows(table, kept, set(changed))
        if kept.n_fail == 0:
            return Verdicts(pass_index(table.capacity if rows is None else len(rows)), ())
        if rows is None:
            return Verdicts(kept.sid.copy(), list(self._statuses))
        return Verdicts(kept.sid[rows], list(self._statuses))

    def _evaluate(self, table: NodeTable, rows: IntArray) -> Verdicts:
        """The verdicts of ``rows`` from scratch (masks for failing rows only)."""
        fail = self.need_c > table.free.take(rows, axis=0)[:, self.cols].T
        return self.verdicts(len(rows), fail, self._alloc_all(table)[1].take(rows))

    def _build(self, table: NodeTable) -> _SlotVerdicts:
        """Every slot's status id, from scratch (free slots: -1)."""
        fail = self.need_c > table.free[:, self.cols].T
        failing = np.logical_or.reduce(fail, axis=0) | bool(self.always)
        pos = (failing & table.alive).nonzero()[0]
        sid = np.full(table.capacity, -1, dtype=np.int32)
        if len(pos):
            masks = self.masks(fail.take(pos, axis=1), self._alloc_all(table)[1].take(pos))
            uniq, inverse = np.unique(masks, return_inverse=True)
            ids = np.array([self.status_id(int(m)) for m in uniq], dtype=np.int32)
            sid[pos] = ids[inverse]
        return _SlotVerdicts(sid, len(pos))

    def _update_rows(self, table: NodeTable, kept: _SlotVerdicts, rows: set[int]) -> None:
        """Re-evaluate a few changed rows in plain Python (cheaper than numpy calls)."""
        sid = kept.sid
        alive = table.alive
        alloc, requested = table.allocatable, table.requested
        for r in rows:
            new = -1
            if alive[r]:
                mask = self.mask_of(alloc[r].tolist(), requested[r].tolist())
                if mask:
                    new = self.status_id(mask)
            old = int(sid[r])
            if new != old:
                sid[r] = new
                kept.n_fail += (new >= 0) - (old >= 0)

"""ResourceFit, the one evaluator of resource plans: upstream's fitsRequest table
(fit_test.go TestEnoughRequests, TestNotEnoughRequests, TestStorageRequests,
TestRestartableInitContainers, v1.36) through every entry point — per node, table
rows (whole table and a chunk, first and kept across calls), what-if with statuses
(the plain-Python branch for a few rows and the numpy one), what-if on one row,
what-if pass-only, and the dry run's reprieve — and a property that every entry
point agrees with a plain statement of fitsRequest on random tables and random
hypothetical requests."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.types import Pod, PodSpec
from kubesched.framework.config import NodeResourcesFitArgs
from kubesched.framework.interfaces import Verdicts
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.resources import (
    MAX_MASK_CHECKS,
    REASON_TOO_MANY_PODS,
    ResourceCheck,
    ResourceFit,
    ResourcePlan,
)
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.noderesources.fit_plan import IgnoredResources, fit_plan
from tests.builders import build_table
from tests.hypothesis_profiles import scaled
from tests.plugins.noderesources.helpers import Res, node_with, resource_pod
from tests.plugins.noderesources.test_fit_filter import (
    ENOUGH_REQUESTS,
    NODE_ALLOC,
    NOT_ENOUGH_REQUESTS,
    ONE_POD_ALLOC,
    RESTARTABLE_INIT_CONTAINERS,
    SIDECAR_ALLOC,
    STORAGE_REQUESTS,
)
from tests.plugins.noderesources.test_vector_equivalence import (
    Cluster,
    _table,
    clusters,
    fit_args,
    pod_specs,
)


def reference(plan: ResourcePlan, table: NodeTable, row: int, requested: Sequence[int]) -> Status:
    """fitsRequest on plain numbers: the row's allocatable, ``requested`` its summed
    requests (the pods column counts pods); a resource without a column is 0."""
    alloc = table.allocatable[row].tolist()
    col = table.res_index
    reasons = []
    if requested[col["pods"]] + 1 > alloc[col["pods"]]:
        reasons.append(REASON_TOO_MANY_PODS)
    unresolvable = False
    for check in plan.checks:
        c = col.get(check.resource)
        a, u = (0, 0) if c is None else (alloc[c], requested[c])
        if check.need > a - u:
            reasons.append(check.reason)
            unresolvable = unresolvable or check.need > a
    if not reasons:
        return SUCCESS
    code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE
    return Status(code, *reasons)


def _statuses(v: Verdicts | None) -> list[Status]:
    assert v is not None
    return [SUCCESS if i < 0 else v.statuses[i] for i in v.index.tolist()]


def what_if_routes(
    fit: ResourceFit, plan: ResourcePlan, table: NodeTable, rows: IntArray, requested: IntArray
) -> list[Status]:
    """The statuses of ``rows`` with summed requests ``requested`` from every what-if
    entry point (asserted equal to ``reference``), each on a few rows (plain Python)
    and on more (numpy)."""
    want = [reference(plan, table, r, q) for r, q in zip(rows, requested.tolist(), strict=True)]
    many, many_req = np.tile(rows, 5), np.tile(requested, (5, 1))
    if len(plan.checks) > MAX_MASK_CHECKS:
        assert fit.what_if(plan, table, rows, requested) is None
    else:
        assert _statuses(fit.what_if(plan, table, rows, requested)) == want
        assert _statuses(fit.what_if(plan, table, many, many_req)) == want * 5
        for k in range(len(rows)):
            one = fit.what_if(plan, table, rows[k : k + 1], requested[k : k + 1])
            assert _statuses(one) == [want[k]]
    for k, row in enumerate(rows.tolist()):
        assert fit.what_if_row(plan, table, row, requested[k].tolist()) == want[k]
    return want


def current_routes(fit: ResourceFit, plan: ResourcePlan, table: NodeTable) -> list[Status]:
    """Every live row's status with its current requests, from every entry point
    (per node, rows over the whole table and over a rotated chunk, each asked
    twice so the kept verdicts are built and read, and the what-ifs)."""
    rows = table.order
    want = [ResourceFit.node(plan, info) for info in table.ordered_infos()]
    rotated = np.roll(rows, len(rows) // 2)
    for _ in range(2):
        if len(plan.checks) > MAX_MASK_CHECKS:
            assert fit.rows(plan, table, rows) is None
            continue
        assert _statuses(fit.rows(plan, table, rows)) == want
        assert (
            _statuses(fit.rows(plan, table, rotated))
            == np.roll(np.array(want, dtype=object), len(rows) // 2).tolist()
        )
        whole = fit.rows(plan, table, None)
        assert whole is not None and len(whole.index) == table.capacity
        assert _statuses(Verdicts(whole.index[rows], whole.statuses)) == want
    assert what_if_routes(fit, plan, table, rows, table.requested[rows]) == want
    return want


def reprieve_routes(
    fit: ResourceFit,
    plan: ResourcePlan,
    table: NodeTable,
    rows: IntArray,
    base: IntArray,
    victims: IntArray,
) -> list[list[bool]]:
    """``reprieve`` on a few rows and on more, asserted equal to the greedy loop
    over ``reference``: victim j is added back when the row still fits with it.
    Returns per row which victims stay."""
    want: list[list[bool]] = []
    for i, row in enumerate(rows.tolist()):
        cur = base[i].tolist()
        stays = []
        for v in victims[i].tolist():
            cand = [a + b for a, b in zip(cur, v, strict=True)]
            fits = reference(plan, table, row, cand).is_success()
            stays.append(not fits)
            if fits:
                cur = cand
        want.append(stays)
    got = fit.reprieve(plan, table, rows, base, victims)
    assert got.shape == (victims.shape[1], len(rows))
    assert got.T.tolist() == want
    many = fit.reprieve(
        plan, table, np.tile(rows, 5), np.tile(base, (5, 1)), np.tile(victims, (5, 1, 1))
    )
    assert many.T.tolist() == want * 5
    return want


# --------------------------------------------------------------------------- upstream's table


TOO_MANY_PODS = Status(Code.UNSCHEDULABLE, REASON_TOO_MANY_PODS)
DEFAULT_ARGS = NodeResourcesFitArgs()
# (pod, existing pod or None, args, node allocatable, want), from test_fit_filter's tables.
CASES = (
    [
        pytest.param(pod_, existing, args, NODE_ALLOC, want, id=p.id)
        for p in ENOUGH_REQUESTS
        for pod_, existing, args, want in [p.values]
    ]
    + [
        pytest.param(pod_, existing, DEFAULT_ARGS, ONE_POD_ALLOC, TOO_MANY_PODS, id=p.id)
        for p in NOT_ENOUGH_REQUESTS
        for pod_, existing in [p.values]
    ]
    + [
        pytest.param(pod_, existing, DEFAULT_ARGS, NODE_ALLOC, want, id=p.id)
        for p in STORAGE_REQUESTS
        for pod_, existing, want in [p.values]
    ]
    + [
        pytest.param(pod_, None, DEFAULT_ARGS, SIDECAR_ALLOC, want, id=p.id)
        for p in RESTARTABLE_INIT_CONTAINERS
        for pod_, want in [p.values]
    ]
)


@pytest.mark.parametrize(("pod_", "existing", "args", "alloc", "want"), CASES)
def test_fits_request_through_every_entry_point(
    pod_: Pod, existing: Pod | None, args: NodeResourcesFitArgs, alloc: Res, want: Status
) -> None:
    table = build_table([node_with("n1", alloc)], [] if existing is None else [existing])
    ignored = IgnoredResources(
        frozenset(args.ignored_resources), frozenset(args.ignored_resource_groups)
    )
    plan = fit_plan(PodInfo(pod_).request, ignored)
    fit = ResourceFit()
    assert current_routes(fit, plan, table) == [want]
    if existing is None:
        return
    # The existing pod as the only potential victim: reprieved exactly when the pod
    # fits next to it (when the node holds the pod without it at all).
    rows = table.order
    base = table.requested[rows] - table.request_vector(PodInfo(existing))
    if reference(plan, table, int(rows[0]), base[0].tolist()).is_success():
        victims = table.requested[rows][:, None, :] - base[:, None, :]
        assert reprieve_routes(fit, plan, table, rows, base, victims) == [[not want.is_success()]]


def test_a_need_equal_to_the_allocatable_is_resolvable() -> None:
    """Unresolvable needs ``need > allocatable``: a failed need equal to the node's
    allocatable could fit once the node is empty."""
    table = build_table(
        [node_with("n1", {"cpu": "10m", "memory": 20, "pods": 3})],
        [resource_pod("existing", {"cpu": "5m", "memory": 1}, node="n1")],
    )
    plan = ResourcePlan(
        (
            ResourceCheck("cpu", 10, "Insufficient cpu"),
            ResourceCheck("memory", 20, "Insufficient memory"),
        )
    )
    want = Status(Code.UNSCHEDULABLE, "Insufficient cpu", "Insufficient memory")
    assert current_routes(ResourceFit(), plan, table) == [want]


def test_kept_verdicts_follow_the_table_change_log() -> None:
    """``rows`` keeps every slot's verdict once a plan comes back and updates the rows
    the table logs as changed (pods added and removed, a node added)."""
    table = build_table([node_with(f"n{i}", {"cpu": "4m", "pods": 3}) for i in range(8)])
    plan = ResourcePlan((ResourceCheck("cpu", 2, "Insufficient cpu"),))
    fit = ResourceFit()

    def check() -> None:
        rows = table.order
        want = [reference(plan, table, r, table.requested[r].tolist()) for r in rows.tolist()]
        for _ in range(2):
            assert _statuses(fit.rows(plan, table, rows)) == want

    check()
    pods = [PodInfo(resource_pod(f"p{i}", {"cpu": "3m"}, node="n1")) for i in range(3)]
    for pi in pods:
        table.add_pod(table.row_of["n1"], pi)
        check()
    table.remove_pod(table.row_of["n1"], pods[0])
    check()
    table.add_node(NodeInfo(node_with("n9", {"cpu": "1m", "pods": 3})))
    check()


def test_a_need_beyond_int64_fails_everywhere_unresolvable() -> None:
    table = build_table([node_with("n1", {"cpu": "4", "memory": 2**40, "pods": 10})])
    plan = ResourcePlan(
        (
            ResourceCheck("cpu", 1000, "Insufficient cpu"),
            ResourceCheck("memory", 2**70, "Insufficient memory"),
        )
    )
    want = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "Insufficient memory")
    assert current_routes(ResourceFit(), plan, table) == [want]


def test_a_plan_too_wide_for_a_mask_answers_per_row_only() -> None:
    """Beyond ``MAX_MASK_CHECKS`` checks the batched status routes answer None (the
    caller takes the per-node path); per node, one row, pass-only and reprieve answer."""
    names = [f"example.com/r{i:02d}" for i in range(MAX_MASK_CHECKS + 1)]
    table = build_table([node_with("n1", {"pods": 10, **dict.fromkeys(names, 2)})])
    plan = ResourcePlan(tuple(ResourceCheck(n, 1, f"Insufficient {n}") for n in names))
    assert current_routes(ResourceFit(), plan, table) == [SUCCESS]
    tight = ResourcePlan((*plan.checks, ResourceCheck(names[-1] + "x", 1, "Insufficient x")))
    rows = table.order
    assert current_routes(ResourceFit(), tight, table)[0].code == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    )
    victims = np.ones((1, 3, table.requested.shape[1]), dtype=np.int64)
    reprieve_routes(ResourceFit(), plan, table, rows, table.requested[rows], victims)


def test_statuses_are_shared_between_calls_and_routes() -> None:
    table = build_table([node_with(f"n{i}", {"cpu": "1", "pods": 10}) for i in range(6)])
    plan = ResourcePlan((ResourceCheck("cpu", 2000, "Insufficient cpu"),))
    fit = ResourceFit()
    rows = table.order
    a, b = fit.rows(plan, table, rows), fit.what_if(plan, table, rows, table.requested[rows])
    assert a is not None and b is not None
    assert a.statuses[0] is b.statuses[0]
    assert fit.what_if_row(plan, table, int(rows[0]), [0] * len(table.resources)) is a.statuses[0]


# --------------------------------------------------------------------------- property


@settings(max_examples=scaled(200), deadline=None)
@given(cluster=clusters(), spec=pod_specs(), args=fit_args(), data=st.data())
def test_every_entry_point_agrees_on_random_tables(
    cluster: Cluster, spec: PodSpec, args: NodeResourcesFitArgs, data: st.DataObject
) -> None:
    table = _table(cluster)
    ignored = IgnoredResources(
        frozenset(args.ignored_resources), frozenset(args.ignored_resource_groups)
    )
    plan = fit_plan(PodInfo(Pod("incoming", spec=spec)).request, ignored)
    fit = ResourceFit()
    current_routes(fit, plan, table)
    live = sorted(table.row_of.values())
    rows = np.array(
        data.draw(st.lists(st.sampled_from(live), min_size=0, max_size=7)), dtype=np.int64
    )
    width = table.requested.shape[1]
    # Hypothetical requests: the rows' requests with random amounts off or added.
    delta = data.draw(
        st.lists(
            st.integers(-(2**33), 2**33), min_size=len(rows) * width, max_size=len(rows) * width
        )
    )
    requested = table.requested[rows] + np.array(delta, dtype=np.int64).reshape(len(rows), width)
    what_if_routes(fit, plan, table, rows, requested)
    # Reprieve: random potential victims (non-negative requests, one pod each) on top
    # of random bases.
    m = data.draw(st.integers(0, 4))
    amounts = data.draw(
        st.lists(
            st.integers(0, 2**31), min_size=len(rows) * m * width, max_size=len(rows) * m * width
        )
    )
    victims = np.array(amounts, dtype=np.int64).reshape(len(rows), m, width)
    victims[:, :, table.res_index["pods"]] = 1
    base = np.maximum(requested, 0)
    reprieve_routes(fit, plan, table, rows, base, victims)

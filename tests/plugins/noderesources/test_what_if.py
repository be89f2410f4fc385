"""Property: NodeResourcesFit's what-if forms (``filter_what_if``,
``filter_what_if_row``), which preemption's batched dry run
uses on "requested minus victims plus nominated pods" matrices, give exactly
what fitsRequest gives on the same numbers (``tests.framework.test_resources.
reference``): same pass/fail, same statuses (reasons, code)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.types import Container, Node, Pod, PodSpec
from kubesched.framework.config import NodeResourcesFitArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.noderesources import Fit
from tests.builders import build_table
from tests.fakes import FakeHandle
from tests.framework.test_resources import reference
from tests.hypothesis_profiles import scaled
from tests.plugins.noderesources.test_vector_equivalence import (
    Cluster,
    _table,
    clusters,
    fit_args,
    pod_specs,
)


def _statuses(index: np.ndarray, statuses: object) -> list[Status]:
    got = list(statuses)  # type: ignore[call-overload]
    return [Status(Code.SUCCESS) if i < 0 else got[i] for i in index.tolist()]


def _check(
    table: NodeTable, plugin: Fit, pi: PodInfo, rows: np.ndarray, requested: np.ndarray
) -> None:
    state = CycleState()
    plugin.pre_filter(state, pi, table)
    plan = plugin.resource_plan(state, pi)
    assert plan is not None
    want = [
        reference(plan, table, r, q) for r, q in zip(rows.tolist(), requested.tolist(), strict=True)
    ]
    got = plugin.filter_what_if(state, pi, rows, requested)
    assert got is not None
    assert _statuses(got.index, got.statuses) == want
    for k, row in enumerate(rows.tolist()):
        assert plugin.filter_what_if_row(state, pi, row, requested[k].tolist()) == want[k]


@settings(max_examples=scaled(200), deadline=None)
@given(cluster=clusters(), spec=pod_specs(), fit=fit_args(), data=st.data())
def test_what_if_forms_match_the_mask_path(
    cluster: Cluster, spec: PodSpec, fit: NodeResourcesFitArgs, data: st.DataObject
) -> None:
    table = _table(cluster)
    plugin = Fit(fit, FakeHandle(table))
    pi = PodInfo(Pod("incoming", spec=spec))
    live = sorted(table.row_of.values())
    rows = np.array(
        data.draw(st.lists(st.sampled_from(live), min_size=0, max_size=12)), dtype=np.int64
    )
    # What-if matrices: the rows' requests with random amounts taken off or added.
    delta = data.draw(
        st.lists(
            st.integers(-(2**33), 2**33),
            min_size=len(rows) * table.requested.shape[1],
            max_size=len(rows) * table.requested.shape[1],
        )
    )
    requested = table.requested[rows] + np.array(delta, dtype=np.int64).reshape(
        len(rows), table.requested.shape[1]
    )
    _check(table, plugin, pi, rows, table.requested[rows])
    _check(table, plugin, pi, rows, requested)


@pytest.mark.parametrize(
    ("pods", "cpu", "want"),
    [
        pytest.param(0, 0, Status(Code.SUCCESS), id="room for the pod"),
        pytest.param(4, 0, Status(Code.UNSCHEDULABLE, "Too many pods"), id="too many pods alone"),
        pytest.param(
            0,
            3500,
            Status(Code.UNSCHEDULABLE, "Insufficient cpu"),
            id="insufficient cpu is resolvable",
        ),
        pytest.param(
            4,
            3500,
            Status(Code.UNSCHEDULABLE, "Too many pods", "Insufficient cpu"),
            id="both reasons in upstream order",
        ),
    ],
)
def test_filter_what_if_statuses(pods: int, cpu: int, want: Status) -> None:
    table = build_table([Node("n1", allocatable={"cpu": 4000, "memory": 2**30, "pods": 4})], [])
    plugin = Fit(NodeResourcesFitArgs(), FakeHandle(table))
    pi = PodInfo(Pod("p", spec=PodSpec(containers=(Container("c", requests={"cpu": 1000}),))))
    rows = np.array([table.row_of["n1"]], dtype=np.int64)
    requested = table.requested[rows].copy()
    requested[0, table.res_index["pods"]] = pods
    requested[0, table.res_index["cpu"]] = cpu
    state = CycleState()
    plugin.pre_filter(state, pi, table)
    got = plugin.filter_what_if(state, pi, rows, requested)
    assert got is not None
    assert _statuses(got.index, got.statuses) == [want]

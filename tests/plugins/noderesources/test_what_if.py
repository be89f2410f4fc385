"""Property: NodeResourcesFit's what-if forms (``filter_what_if``,
``passes_what_if``, ``what_if_columns``), which preemption's batched dry run
uses on "requested minus victims plus nominated pods" matrices, give exactly
what the reference mask path (``failure_masks`` + ``verdicts_from_masks``)
gives on the same matrices: same pass/fail, same statuses (reasons, code)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.types import Container, Node, Pod, PodSpec
from kubesched.framework.config import NodeResourcesFitArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.snapshot import build_table
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.noderesources import Fit
from kubesched.plugins.noderesources.fit import PRE_FILTER_STATE_KEY
from kubesched.plugins.noderesources.fit_check import (
    PodRequest,
    _plan,
    failure_masks,
    verdicts_from_masks,
)
from tests.fakes import FakeHandle
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
    req = state.get(PRE_FILTER_STATE_KEY)
    assert isinstance(req, PodRequest)
    masks = failure_masks(req, table.allocatable[rows], requested, table.res_index)
    assert masks is not None
    want = verdicts_from_masks(req, masks)
    got = plugin.filter_what_if(state, pi, rows, requested)
    assert got is not None
    assert _statuses(got.index, got.statuses) == _statuses(want.index, want.statuses)
    plan = _plan(req, table)
    if plan.need is not None:
        # The plain-Python form for a few rows, on any number of rows.
        small = plan.verdicts_small(table, rows, requested)
        assert _statuses(small.index, small.statuses) == _statuses(want.index, want.statuses)
    # One row at a time, as Python scalars (None only without the column form).
    for k, row in enumerate(rows.tolist()):
        one = plugin.filter_what_if_row(state, pi, row, requested[k].tolist())
        if plan.need_cols is None:
            assert one is None
        else:
            assert one == _statuses(want.index, want.statuses)[k]
    passes = plugin.passes_what_if(state, pi, rows, requested)
    assert passes is not None
    assert passes.tolist() == (masks == 0).tolist()
    columns = plugin.what_if_columns(state, pi)
    if columns is not None:
        cols, need = columns
        free = table.allocatable[rows][:, cols] - requested[:, cols]
        assert (free >= need).all(axis=1).tolist() == (masks == 0).tolist()


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

"""Framework.run_filter_what_if_row (one row, Python scalars where the filters
offer them) answers exactly as run_filter_what_if on that row: the first
failing plugin's status (static filters read off their table verdicts, then
NodeResourcesFit on the given summed requests), or SUCCESS."""

from __future__ import annotations

import random

import numpy as np
import pytest

from kubesched.api.types import NO_SCHEDULE
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.framework.types import PodInfo
from kubesched.scheduler.cache import Cache
from kubesched.scheduler.registry import in_tree_registry
from tests.builders import make_node, make_pod
from tests.fakes import FakeNominator
from tests.scheduler.harness import build_framework, in_tree_profile


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_one_row_answers_as_the_batch_form(seed: int) -> None:
    rng = random.Random(seed)
    cache = Cache()
    for i in range(30):
        node = make_node(f"n{i:02d}").capacity(cpu="4", memory="8Gi", pods=rng.choice((3, 110)))
        if rng.random() < 0.3:
            node = node.taint("dedicated", "x", NO_SCHEDULE)
        cache.add_node(node.obj())
    fwk = build_framework(
        in_tree_profile(), in_tree_registry(), table=cache.table, nominator=FakeNominator()
    )
    table = cache.table
    cpu, mem, pods = (table.res_index[r] for r in ("cpu", "memory", "pods"))
    seen = set()
    for k in range(40):
        pod = PodInfo(make_pod(f"p{k}").req(cpu=rng.choice(("1", "3", "5")), memory="1Gi").obj())
        state = CycleState()
        _, s, _ = fwk.run_pre_filter_plugins(state, pod)
        assert s.is_success()
        for row in sorted(table.row_of.values()):
            requested = table.requested[row].copy()
            requested[cpu] = rng.choice((0, 1000, 2500, 3500, 5000))
            requested[mem] = rng.choice((0, 2**30, 8 * 2**30))
            requested[pods] = rng.choice((0, 2, 3))
            batch = fwk.run_filter_what_if(
                state, pod, np.array([row], dtype=np.int64), requested[None, :]
            )
            assert batch is not None
            index, statuses = batch
            one = fwk.run_filter_what_if_row(state, pod, row, requested)
            assert one is not None
            if index[0] < 0:
                assert one.is_success()
            else:
                want = statuses[int(index[0])]
                assert (one.code, one.reasons, one.plugin) == (want.code, want.reasons, want.plugin)
            seen.add((one.code, one.plugin))
    # Both a static filter and NodeResourcesFit rejected some rows, and some passed.
    assert (Code.SUCCESS, "") in seen
    assert any(p == "TaintToleration" for _, p in seen)
    assert any(p == "NodeResourcesFit" for _, p in seen)

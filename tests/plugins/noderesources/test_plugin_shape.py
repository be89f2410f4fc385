"""The noderesources plugins implement the framework Protocols the runtime looks for."""

from __future__ import annotations

from kubesched.framework.config import (
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    ScoringStrategy,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    EnqueueExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    VectorFilterPlugin,
    VectorScorePlugin,
)
from kubesched.framework.types import PodInfo
from kubesched.plugins.noderesources import (
    BALANCED_ALLOCATION_NAME,
    FIT_NAME,
    BalancedAllocation,
    Fit,
)
from tests.builders import build_table
from tests.fakes import FakeHandle
from tests.plugins.noderesources.helpers import cap_node, node_set, req_pod


def test_fit_implements_its_extension_points() -> None:
    fit: VectorFilterPlugin = Fit(None, FakeHandle())
    assert isinstance(fit, PreFilterPlugin)
    assert isinstance(fit, VectorFilterPlugin)
    assert isinstance(fit, PreScorePlugin)
    assert isinstance(fit, VectorScorePlugin)
    assert isinstance(fit, EnqueueExtensions)
    assert Fit.name == FIT_NAME == "NodeResourcesFit"


def test_balanced_allocation_implements_its_extension_points() -> None:
    ba: VectorScorePlugin = BalancedAllocation()
    assert isinstance(ba, PreScorePlugin)
    assert isinstance(ba, VectorScorePlugin)
    assert not isinstance(ba, PreFilterPlugin)
    assert BalancedAllocation.name == BALANCED_ALLOCATION_NAME == "NodeResourcesBalancedAllocation"


def test_vector_score_defers_to_the_per_node_error_without_resources() -> None:
    table = build_table([cap_node("n1", {"cpu": "1"})])
    ns = node_set(table, ["n1"])
    pi = PodInfo(req_pod("p", {"cpu": "1"}))
    fit = Fit(NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(resources=())), FakeHandle())
    assert fit.score_vector(CycleState(), pi, ns) is None
    ba = BalancedAllocation(NodeResourcesBalancedAllocationArgs(resources=()))
    assert ba.score_vector(CycleState(), pi, ns) is None


def test_plugins_accept_the_factory_signature() -> None:
    assert Fit(NodeResourcesFitArgs(), FakeHandle()).args == NodeResourcesFitArgs()
    assert BalancedAllocation(None, None).args == NodeResourcesBalancedAllocationArgs()

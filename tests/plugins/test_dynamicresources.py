"""DynamicResources for pods without ResourceClaims (upstream dynamicresources
TestPlugin "empty" / "empty-with-extended-resources-enabled" / "missing-class",
Test_isSchedulableAfterPodChange, Test_isSchedulableAfterClaimChange), and the
v1.36 default profile with the plugin wired in, end to end through
``Scheduler`` / ``Simulation``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import numpy as np
import pytest

from kubesched.api.types import NodeSelectorRequirement, Pod
from kubesched.framework.config import POST_FILTER, PRE_FILTER, SchedulerConfig
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kubesched.framework.interfaces import (
    EnqueueExtensions,
    Handle,
    NodeSet,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ReservePlugin,
    ScoreExtensions,
    VectorFilterPlugin,
    VectorScorePlugin,
)
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.results import NodeScore, NodeToStatus
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.dynamicresources import (
    DEVICE_CLASS,
    ERR_NOT_FOUND,
    MSG_NO_CLAIMS,
    NAME,
    RESOURCE_CLAIM,
    RESOURCE_SLICE,
    STATE_KEY,
    DynamicResources,
    is_schedulable_after_claim_change,
    is_schedulable_after_pod_change,
)
from kubesched.runtime.derived_forms import FilterForms
from kubesched.runtime.framework import PluginFactory
from kubesched.scheduler.config import default_config
from kubesched.scheduler.registry import in_tree_registry
from kubesched.sim.simulation import Simulation
from tests.builders import NodeBuilder, PodBuilder, build_table, make_node, make_pod
from tests.fakes import FakeHandle
from tests.plugins.fakes import check_filter, check_score, table_infos
from tests.scheduler.harness import build_framework, profile

NOT_FOUND = Status(Code.ERROR, ERR_NOT_FOUND)
NO_CLAIMS = Status(Code.UNSCHEDULABLE, MSG_NO_CLAIMS)


def plugin() -> DynamicResources:
    return DynamicResources(None, cast(Handle, FakeHandle()))


def nodes_table() -> NodeTable:
    return build_table(
        [
            make_node("worker").capacity(cpu="4", memory="8Gi", pods=10).obj(),
            make_node("worker-2").capacity(cpu="8", memory="16Gi", pods=10).obj(),
            make_node("worker-3")
            .capacity_map({"cpu": "2", "memory": "4Gi", "pods": "10", "example.com/gpu": "2"})
            .obj(),
        ]
    )


CLAIMLESS_PODS = [
    pytest.param(make_pod("foo"), id="TestPlugin/empty"),
    pytest.param(
        make_pod("foo").req_map({"cpu": "1", "example.com/gpu": "1"}),
        id="TestPlugin/empty-with-extended-resources-enabled: no DeviceClass maps the resource",
    ),
    pytest.param(make_pod("foo").req(cpu="2", memory="1Gi").priority(100), id="requests only"),
    pytest.param(make_pod("foo").host_port(8080).node_selector(zone="a"), id="ports and selector"),
]


# --------------------------------------------------------------------------- per point


@pytest.mark.parametrize("pod", CLAIMLESS_PODS)
def test_claimless_pod_at_every_extension_point(pod: PodBuilder) -> None:
    """PreEnqueue Success; PreFilter writes the empty state and says Skip; Filter
    passes everywhere; PostFilter Unschedulable "no new claims to deallocate";
    Score 0 everywhere (normalised: still 0); Reserve/PreBind Success,
    PreBindPreFlight Skip."""
    pl = plugin()
    pi = pod.info()
    table = nodes_table()
    state = CycleState()

    assert pl.pre_enqueue(pi.pod) == SUCCESS

    result, status = pl.pre_filter(state, pi, table)
    assert (result, status.code) == (None, Code.SKIP)
    assert state.get(STATE_KEY) is not None, "PreFilter must write the state before Skip"

    assert set(check_filter(pl, state, pi, table).values()) == {SUCCESS}

    post_result, post = pl.post_filter(state, pi, NodeToStatus())
    assert post_result is None
    assert (post.code, post.message()) == (Code.UNSCHEDULABLE, "no new claims to deallocate")

    pre, scores = check_score(pl, state, pi, table)
    assert pre == SUCCESS  # no PreScore: nothing can skip Score
    assert scores == {"worker": 0, "worker-2": 0, "worker-3": 0}

    assert pl.reserve(state, pi, "worker") == SUCCESS
    assert pl.unreserve(state, pi, "worker") is None  # type: ignore[func-returns-value]
    assert pl.pre_bind(state, pi, "worker") == SUCCESS


def test_post_filter_after_own_pre_filter_ran() -> None:
    """TestPlugin/missing-class: whenever PreFilter ran (even when it failed the pod
    itself, as with a missing DeviceClass) the state has no claims yet, so PostFilter
    says "no new claims to deallocate". A claim-less pod reaches the same state."""
    pl = plugin()
    pi = make_pod("my-pod").info()
    state = CycleState()
    pl.pre_filter(state, pi, nodes_table())
    _, status = pl.post_filter(state, pi, NodeToStatus())
    assert status == NO_CLAIMS
    assert status.code == Code.UNSCHEDULABLE


def test_state_clone_is_shared() -> None:
    """Upstream stateData.Clone returns the same pointer; preemption's dry run and the
    nominated-pods pass read the same (empty) state from a cloned CycleState."""
    pl = plugin()
    pi = make_pod("p").info()
    state = CycleState()
    pl.pre_filter(state, pi, nodes_table())
    clone = state.clone()
    assert clone.get(STATE_KEY) is state.get(STATE_KEY)
    _, status = pl.post_filter(clone, pi, NodeToStatus())
    assert status == NO_CLAIMS


# --------------------------------------------------------------------------- missing state


def _post_filter(pl: DynamicResources, s: CycleState, pi: PodInfo) -> Status:
    return pl.post_filter(s, pi, NodeToStatus())[1]


def _score(pl: DynamicResources, s: CycleState, pi: PodInfo) -> Status:
    score, status = pl.score(s, pi, table_infos(nodes_table())[0])
    assert score == 0
    return status


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(_post_filter, id="PostFilter: getStateData fails, statusError(ErrNotFound)"),
        pytest.param(
            lambda pl, s, pi: pl.filter(s, pi, table_infos(nodes_table())[0]),
            id="Filter",
        ),
        pytest.param(_score, id="Score"),
        pytest.param(lambda pl, s, pi: pl.reserve(s, pi, "worker"), id="Reserve"),
        pytest.param(lambda pl, s, pi: pl.pre_bind(s, pi, "worker"), id="PreBind"),
    ],
)
def test_missing_state_is_an_error(
    call: Callable[[DynamicResources, CycleState, PodInfo], Status],
) -> None:
    """Without PreFilter's state (an earlier PreFilter returned
    UnschedulableAndUnresolvable, so this one never ran) every point reads
    ErrNotFound and returns it as an Error status: message exactly "not found"."""
    status = call(plugin(), CycleState(), make_pod("p").info())
    assert status == NOT_FOUND
    assert status.code == Code.ERROR


def test_vector_forms_defer_to_the_exact_path_without_state() -> None:
    pl = plugin()
    pi = make_pod("p").info()
    table = nodes_table()
    rows = np.array(sorted(table.row_of.values()), dtype=np.int64)
    assert pl.filter_vector(CycleState(), pi, table) is None
    assert pl.score_vector(CycleState(), pi, NodeSet(table, rows)) is None


# --------------------------------------------------------------------------- normalisation


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        pytest.param([0, 0, 0], [0, 0, 0], id="claim-less: all zero stays zero (reverse=false)"),
        pytest.param(
            [16, 15, 14],
            [100, 93, 87],
            id="TestPlugin/prioritized list scores 16,15,14 normalise to 100,93,87",
        ),
        pytest.param([], [], id="no nodes"),
    ],
)
def test_normalize_score_is_default_normalize(raw: list[int], want: list[int]) -> None:
    pl = plugin()
    ext = pl.score_extensions()
    assert isinstance(ext, ScoreExtensions)
    scores = [NodeScore(f"n{i}", s) for i, s in enumerate(raw)]
    assert ext.normalize_score(CycleState(), make_pod("p").info(), scores) == SUCCESS
    assert [s.score for s in scores] == want


# --------------------------------------------------------------------------- shape


def test_extension_points_match_upstream_assertions() -> None:
    """``var _ fwk.XPlugin = &DynamicResources{}``: PreEnqueue, PreFilter, Filter,
    PostFilter, Score, Reserve, EnqueueExtensions, PreBind; no PreScore."""
    pl = plugin()
    assert pl.name == NAME == "DynamicResources"
    for proto in (
        PreEnqueuePlugin,
        PreFilterPlugin,
        VectorFilterPlugin,
        PostFilterPlugin,
        VectorScorePlugin,
        ReservePlugin,
        PreBindPlugin,
        EnqueueExtensions,
    ):
        assert isinstance(pl, proto), proto.__name__
    assert not isinstance(pl, PreScorePlugin)
    assert pl.pre_filter_extensions() is None  # type: ignore[func-returns-value]
    assert FilterForms.of(pl).static_vector is not None


def test_events_to_register() -> None:
    """EventsToRegister with SchedulerQueueingHints on (v1.36 default)."""
    got = [(e.event, e.hint) for e in plugin().events_to_register()]
    add_update = ActionType.ADD | ActionType.UPDATE
    assert got == [
        (
            ClusterEvent(
                EventResource.NODE,
                ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE,
            ),
            None,
        ),
        (ClusterEvent(RESOURCE_CLAIM, add_update), is_schedulable_after_claim_change),
        (
            ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
            is_schedulable_after_pod_change,
        ),
        (ClusterEvent(DEVICE_CLASS, add_update), None),
        (ClusterEvent(RESOURCE_SLICE, add_update), None),
    ]


_POD = make_pod("my-pod").uid("1234").obj()
_OTHER = make_pod("my-pod2").uid("12342").obj()


@pytest.mark.parametrize(
    ("new", "want"),
    [
        pytest.param(_POD, QueueingHint.QUEUE, id="Test_isSchedulableAfterPodChange/complete"),
        pytest.param(_OTHER, QueueingHint.SKIP, id="Test_isSchedulableAfterPodChange/wrong-pod"),
        pytest.param(
            None,
            QueueingHint.QUEUE,
            id="Test_isSchedulableAfterPodChange/backoff-wrong-new-object (error counts as Queue)",
        ),
    ],
)
def test_pod_change_hint(new: Pod | None, want: QueueingHint) -> None:
    assert is_schedulable_after_pod_change(_POD, None, new) == want


def test_claim_change_hint_on_non_claim_objects() -> None:
    """Test_isSchedulableAfterClaimChange/backoff-wrong-new-object: any object that
    is not a ResourceClaim (all kubesched can deliver) is an error, i.e. Queue."""
    node = make_node("n").obj()
    for old, new in ((None, _POD), (None, node), (node, node)):
        assert is_schedulable_after_claim_change(_POD, old, new) == QueueingHint.QUEUE


# --------------------------------------------------------------------------- runtime


def test_runtime_skips_its_filter_and_joins_post_filter_reasons() -> None:
    """RunPreFilterPlugins records the Skip (Filter never runs); RunPostFilterPlugins
    joins the reasons of Unschedulable results in plugin order."""

    class Rejecting:
        name = "Rejecting"

        def post_filter(self, state, pod, statuses):  # type: ignore[no-untyped-def]
            return None, Status(Code.UNSCHEDULABLE, "preemption: not eligible")

    def rejecting(args: object, handle: object) -> Rejecting:
        return Rejecting()

    registry: dict[str, PluginFactory] = {NAME: DynamicResources, "Rejecting": rejecting}
    fwk = build_framework(
        profile({PRE_FILTER: [NAME], POST_FILTER: [NAME, "Rejecting"]}),
        registry,
        table=nodes_table(),
    )
    state = CycleState()
    pi = make_pod("p").info()
    _, status, _ = fwk.run_pre_filter_plugins(state, pi)
    assert status == SUCCESS
    assert NAME in state.skip_filter_plugins
    _, post = fwk.run_post_filter_plugins(state, pi, NodeToStatus())
    assert (post.code, post.plugin) == (Code.UNSCHEDULABLE, NAME)
    assert post.message() == "no new claims to deallocate, preemption: not eligible"


# --------------------------------------------------------------------------- end to end


def registry(with_dra: bool = True) -> dict[str, PluginFactory]:
    reg = dict(in_tree_registry())
    if not with_dra:
        del reg[NAME]
    return reg


def config(reg: dict[str, PluginFactory]) -> SchedulerConfig:
    return default_config(supported=reg.keys())


def failed_scheduling(sim: Simulation, pod: str) -> list[str]:
    return [
        e.message
        for e in sim.record.events
        if e.reason == "FailedScheduling" and e.object == f"default/{pod}"
    ]


def run(
    pods: list[Pod], nodes: list[NodeBuilder] | None = None, with_dra: bool = True
) -> Simulation:
    reg = registry(with_dra)
    sim = Simulation(config(reg), reg)
    for n in nodes or [make_node("worker").capacity(cpu="4", memory="16Gi", pods=110)]:
        sim.cluster.create_node(n.obj())
    for p in pods:
        sim.cluster.create_pod(p)
    sim.run()
    return sim


def test_default_profile_expands_dynamic_resources_where_upstream_does() -> None:
    prof = config(registry()).profiles[0]
    names = {pt: [r.name for r in prof.enabled(pt)] for pt in prof.plugins}
    assert names["preEnqueue"] == ["SchedulingGates", NAME, "DefaultPreemption"]
    assert names["postFilter"] == [NAME, "DefaultPreemption"]
    assert NAME in names["preFilter"] and NAME in names["filter"]
    assert NAME not in names["preScore"]
    assert (NAME, 2) in [(r.name, r.weight) for r in prof.enabled("score")]
    # VolumeBinding comes first in upstream's default multiPoint list.
    assert names["reserve"] == ["VolumeBinding", NAME]
    assert names["preBind"] == ["VolumeBinding", NAME]


def test_v1_36_message_of_a_preemption_refused_by_policy_never() -> None:
    """examples/preemption/policy-never.yaml: etl (priority 1000000,
    preemptionPolicy Never) does not fit next to low-0. DynamicResources' PostFilter
    says "no new claims to deallocate", DefaultPreemption's says it is not eligible;
    RunPostFilterPlugins joins both with ", "."""
    sim = run(
        [
            make_pod("low-0").req(cpu="3", memory="256Mi").node("worker").obj(),
            make_pod("etl")
            .req(cpu="2", memory="256Mi")
            .priority(1000000)
            .preemption_policy("Never")
            .obj(),
        ]
    )
    assert failed_scheduling(sim, "etl") == [
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
        "preemption: not eligible due to preemptionPolicy=Never."
    ]


def test_v1_36_message_when_preemption_is_not_helpful() -> None:
    sim = run([make_pod("big").req(cpu="8").obj()])
    assert failed_scheduling(sim, "big") == [
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    ]


def test_successful_preemption_drops_the_dra_reason() -> None:
    """DefaultPreemption returns Success, which RunPostFilterPlugins returns as is:
    the Unschedulable reason of DynamicResources before it is not kept."""
    sim = run(
        [
            make_pod("low").req(cpu="3").node("worker").obj(),
            make_pod("high").req(cpu="2").priority(1000).obj(),
        ]
    )
    assert failed_scheduling(sim, "high")[0] == "0/1 nodes are available: 1 Insufficient cpu."
    assert sim.cluster.pods["default/high"].node_name == "worker"


def test_prefilter_rejection_before_dra_makes_post_filter_fail_with_not_found() -> None:
    """NodeAffinity's PreFilter returns UnschedulableAndUnresolvable ("pod affinity
    terms conflict") before DynamicResources' PreFilter runs, so no state is
    written. DynamicResources is the first PostFilter plugin: its Error "not found"
    ends RunPostFilterPlugins (DefaultPreemption never runs) and becomes the
    PostFilter message."""
    conflict = make_pod("p").node_affinity_term(
        fields=(
            NodeSelectorRequirement("metadata.name", "In", ("a",)),
            NodeSelectorRequirement("metadata.name", "In", ("b",)),
        )
    )
    with_dra = run([conflict.obj()])
    assert failed_scheduling(with_dra, "p") == [
        "0/1 nodes are available: pod affinity terms conflict. not found"
    ]
    without = run([conflict.obj()], with_dra=False)
    assert failed_scheduling(without, "p") == [
        "0/1 nodes are available: pod affinity terms conflict. preemption: 0/1 nodes are "
        "available: 1 Preemption is not helpful for scheduling."
    ]


def test_placements_do_not_change() -> None:
    """Score 0 with weight 2 adds nothing: every pod lands where it lands without
    the plugin (same scores, so the same tie-breaks from the same random stream)."""
    nodes = [
        make_node("a").capacity(cpu="4", memory="8Gi", pods=10).label("zone", "z1"),
        make_node("b").capacity(cpu="8", memory="16Gi", pods=10).label("zone", "z2"),
        make_node("c").capacity(cpu="2", memory="16Gi", pods=10).label("zone", "z1"),
    ]
    pods = [
        make_pod(f"p{i}")
        .req(cpu=f"{(i % 3) + 1}00m", memory=f"{(i % 4) + 1}00Mi")
        .priority(i % 2)
        .obj()
        for i in range(12)
    ] + [
        make_pod("pref")
        .req(cpu="500m")
        .preferred_node_affinity(10, NodeSelectorRequirement("zone", "In", ("z1",)))
        .obj()
    ]

    def placements(with_dra: bool) -> dict[str, str]:
        sim = run(pods, nodes, with_dra=with_dra)
        return {k: p.node_name for k, p in sim.cluster.pods.items()}

    got = placements(True)
    assert all(got.values())
    assert got == placements(False)

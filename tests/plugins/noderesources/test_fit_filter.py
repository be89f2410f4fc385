"""NodeResourcesFit Filter: re-expresses upstream fit_test.go TestEnoughRequests,
TestNotEnoughRequests, TestStorageRequests, TestRestartableInitContainers and
TestPreFilterDisabled (v1.36: Unresolvable when the request exceeds the node's
total allocatable). Each case runs the per-node and the vector path."""

from __future__ import annotations

import pytest

from kubesched.api.types import Pod
from kubesched.framework.config import NodeResourcesFitArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.resources import ResourceCheck, ResourceFit, ResourcePlan
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.noderesources import Fit
from kubesched.plugins.noderesources.fit import PRE_FILTER_STATE_KEY
from kubesched.plugins.noderesources.fit_plan import (
    REASON_TOO_MANY_PODS,
    fit_plan,
    insufficient_reason,
)
from tests.fakes import FakeHandle
from tests.plugins.noderesources.helpers import (
    EXT_A,
    EXT_B,
    HUGEPAGES_A,
    K8S_IO_A,
    K8S_IO_B,
    Res,
    filter_both,
    node_with,
    resource_pod,
)

OK = Status(Code.SUCCESS)
CPU_R = insufficient_reason("cpu")
MEM_R = insufficient_reason("memory")
EPH_R = insufficient_reason("ephemeral-storage")

# makeAllocatableResources(10, 20, 32, 5, 20, 5)
NODE_ALLOC: Res = {
    "cpu": "10m",
    "memory": 20,
    "pods": 32,
    EXT_A: 5,
    "ephemeral-storage": 20,
    HUGEPAGES_A: 5,
}


def unsched(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, *reasons)


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)


def pod(*containers: Res, **kw: object) -> Pod:
    return resource_pod("p", *containers, **kw)  # type: ignore[arg-type]


def existing(*containers: Res) -> Pod:
    return resource_pod("existing", *containers, node="n1")


def c(cpu: int = 0, mem: int = 0, **scalar: int) -> Res:
    """One container's requests: milli-CPU, memory bytes, scalars by keyword."""
    r: Res = {"cpu": f"{cpu}m", "memory": mem}
    for k, v in scalar.items():
        r[_SCALARS[k]] = v
    return r


DRA_RES = "extended.resource.dra.io/something"
_SCALARS = {
    "a": EXT_A,
    "b": EXT_B,
    "kio_a": K8S_IO_A,
    "kio_b": K8S_IO_B,
    "hp": HUGEPAGES_A,
    "dra": DRA_RES,
}


ENOUGH_REQUESTS = [
    pytest.param(
        pod(),
        existing(c(10, 20)),
        NodeResourcesFitArgs(),
        OK,
        id="TestEnoughRequests/no resources requested always fits",
    ),
    pytest.param(
        pod(c(1, 1)),
        existing(c(10, 20)),
        NodeResourcesFitArgs(),
        unsched(CPU_R, MEM_R),
        id="TestEnoughRequests/too many resources fails",
    ),
    pytest.param(
        pod(c(1, 1), init=[c(3, 1)]),
        existing(c(8, 19)),
        NodeResourcesFitArgs(),
        unsched(CPU_R),
        id="TestEnoughRequests/too many resources fails due to init container cpu",
    ),
    pytest.param(
        pod(c(1, 1), init=[c(3, 1), c(2, 1)]),
        existing(c(8, 19)),
        NodeResourcesFitArgs(),
        unsched(CPU_R),
        id="TestEnoughRequests/too many resources fails due to highest init container cpu",
    ),
    pytest.param(
        pod(c(1, 1), init=[c(1, 3)]),
        existing(c(9, 19)),
        NodeResourcesFitArgs(),
        unsched(MEM_R),
        id="TestEnoughRequests/too many resources fails due to init container memory",
    ),
    pytest.param(
        pod(c(1, 1), init=[c(1, 3), c(1, 2)]),
        existing(c(9, 19)),
        NodeResourcesFitArgs(),
        unsched(MEM_R),
        id="TestEnoughRequests/too many resources fails due to highest init container memory",
    ),
    pytest.param(
        pod(c(1, 1), init=[c(1, 1)]),
        existing(c(9, 19)),
        NodeResourcesFitArgs(),
        OK,
        id="TestEnoughRequests/init container fits because it's the max, not sum",
    ),
    pytest.param(
        pod(c(1, 1), init=[c(1, 1), c(1, 1)]),
        existing(c(9, 19)),
        NodeResourcesFitArgs(),
        OK,
        id="TestEnoughRequests/multiple init containers fit because it's the max",
    ),
    pytest.param(
        pod(c(1, 1)),
        existing(c(5, 5)),
        NodeResourcesFitArgs(),
        OK,
        id="TestEnoughRequests/both resources fit",
    ),
    pytest.param(
        pod(c(2, 1)),
        existing(c(9, 5)),
        NodeResourcesFitArgs(),
        unsched(CPU_R),
        id="TestEnoughRequests/one resource memory fits",
    ),
    pytest.param(
        pod(c(1, 2)),
        existing(c(5, 19)),
        NodeResourcesFitArgs(),
        unsched(MEM_R),
        id="TestEnoughRequests/one resource cpu fits",
    ),
    pytest.param(
        pod(c(5, 1)),
        existing(c(5, 19)),
        NodeResourcesFitArgs(),
        OK,
        id="TestEnoughRequests/equal edge case",
    ),
    pytest.param(
        pod(c(4, 1), init=[c(5, 1)]),
        existing(c(5, 19)),
        NodeResourcesFitArgs(),
        OK,
        id="TestEnoughRequests/equal edge case for init container",
    ),
    pytest.param(
        pod({EXT_A: 1}),
        existing({}),
        NodeResourcesFitArgs(),
        OK,
        id="TestEnoughRequests/extended resource fits",
    ),
    pytest.param(
        pod({}, init=[{EXT_A: 1}]),
        existing({}),
        NodeResourcesFitArgs(),
        OK,
        id="TestEnoughRequests/extended resource fits for init container",
    ),
    pytest.param(
        pod(c(1, 1, a=10)),
        existing(c(0, 0, a=0)),
        NodeResourcesFitArgs(),
        unresolvable(insufficient_reason(EXT_A)),
        id="TestEnoughRequests/extended resource capacity enforced",
    ),
    pytest.param(
        pod({}, init=[c(1, 1, a=10)]),
        existing(c(0, 0, a=0)),
        NodeResourcesFitArgs(),
        unresolvable(insufficient_reason(EXT_A)),
        id="TestEnoughRequests/extended resource capacity enforced for init container",
    ),
    pytest.param(
        pod(c(1, 1, a=1)),
        existing(c(0, 0, a=5)),
        NodeResourcesFitArgs(),
        unsched(insufficient_reason(EXT_A)),
        id="TestEnoughRequests/extended resource allocatable enforced",
    ),
    pytest.param(
        pod({}, init=[c(1, 1, a=1)]),
        existing(c(0, 0, a=5)),
        NodeResourcesFitArgs(),
        unsched(insufficient_reason(EXT_A)),
        id="TestEnoughRequests/extended resource allocatable enforced for init container",
    ),
    pytest.param(
        pod(c(1, 1, a=3), c(1, 1, a=3)),
        existing(c(0, 0, a=2)),
        NodeResourcesFitArgs(),
        unresolvable(insufficient_reason(EXT_A)),
        id="TestEnoughRequests/extended resource allocatable enforced for multiple containers",
    ),
    pytest.param(
        pod({}, init=[c(1, 1, a=3), c(1, 1, a=3)]),
        existing(c(0, 0, a=2)),
        NodeResourcesFitArgs(),
        OK,
        id="TestEnoughRequests/extended resource allocatable admits multiple init containers",
    ),
    pytest.param(
        pod({}, init=[c(1, 1, a=6), c(1, 1, a=3)]),
        existing(c(0, 0, a=2)),
        NodeResourcesFitArgs(),
        unresolvable(insufficient_reason(EXT_A)),
        id="TestEnoughRequests/extended resource allocatable enforced for multiple init containers",
    ),
    pytest.param(
        pod(c(1, 1, b=1)),
        existing(c(0, 0)),
        NodeResourcesFitArgs(),
        unresolvable(insufficient_reason(EXT_B)),
        id="TestEnoughRequests/extended resource allocatable enforced for unknown resource",
    ),
    pytest.param(
        pod({}, init=[c(1, 1, b=1)]),
        existing(c(0, 0)),
        NodeResourcesFitArgs(),
        unresolvable(insufficient_reason(EXT_B)),
        id="TestEnoughRequests/extended resource enforced for unknown resource for init container",
    ),
    pytest.param(
        pod(c(1, 1, kio_a=10)),
        existing(c(0, 0)),
        NodeResourcesFitArgs(),
        unresolvable(insufficient_reason(K8S_IO_A)),
        id="TestEnoughRequests/kubernetes.io resource capacity enforced",
    ),
    pytest.param(
        pod({}, init=[c(1, 1, kio_b=10)]),
        existing(c(0, 0)),
        NodeResourcesFitArgs(),
        unresolvable(insufficient_reason(K8S_IO_B)),
        id="TestEnoughRequests/kubernetes.io resource capacity enforced for init container",
    ),
    pytest.param(
        pod(c(1, 1, hp=10)),
        existing(c(0, 0, hp=0)),
        NodeResourcesFitArgs(),
        unresolvable(insufficient_reason(HUGEPAGES_A)),
        id="TestEnoughRequests/hugepages resource capacity enforced",
    ),
    pytest.param(
        pod({}, init=[c(1, 1, hp=10)]),
        existing(c(0, 0, hp=0)),
        NodeResourcesFitArgs(),
        unresolvable(insufficient_reason(HUGEPAGES_A)),
        id="TestEnoughRequests/hugepages resource capacity enforced for init container",
    ),
    pytest.param(
        pod(c(1, 1, hp=3), c(1, 1, hp=3)),
        existing(c(0, 0, hp=2)),
        NodeResourcesFitArgs(),
        unresolvable(insufficient_reason(HUGEPAGES_A)),
        id="TestEnoughRequests/hugepages resource allocatable enforced for multiple containers",
    ),
    pytest.param(
        pod(c(1, 1, b=1)),
        existing(c(0, 0)),
        NodeResourcesFitArgs(ignored_resources=(EXT_B,)),
        OK,
        id="TestEnoughRequests/skip checking ignored extended resource",
    ),
    pytest.param(
        pod(c(1, 1), overhead={"cpu": "3m", "memory": 13}),
        existing(c(5, 5)),
        NodeResourcesFitArgs(),
        OK,
        id="TestEnoughRequests/resources + pod overhead fits",
    ),
    pytest.param(
        pod(c(1, 1), overhead={"cpu": "1m", "memory": 15}),
        existing(c(5, 5)),
        NodeResourcesFitArgs(),
        unsched(MEM_R),
        id="TestEnoughRequests/requests + overhead does not fit for memory",
    ),
    pytest.param(
        pod(c(1, 1, b=1, kio_a=1)),
        existing(c(0, 0)),
        NodeResourcesFitArgs(ignored_resource_groups=("example.com",)),
        unresolvable(insufficient_reason(K8S_IO_A)),
        id="TestEnoughRequests/skip checking ignored extended resource via resource groups",
    ),
    pytest.param(
        pod(c(1, 1, a=0)),
        existing(c(0, 0, a=6)),
        NodeResourcesFitArgs(),
        OK,
        id="TestEnoughRequests/skip checking extended resource request with quantity zero",
    ),
    pytest.param(
        pod({EXT_A: 1}),
        existing(c(20, 30, a=1)),
        NodeResourcesFitArgs(),
        OK,
        id="TestEnoughRequests/skip checking resource request with quantity zero",
    ),
    pytest.param(
        pod(c(1, 1), pod_level={"cpu": "1m", "memory": 2}),
        existing(c(5, 5)),
        NodeResourcesFitArgs(),
        OK,
        id="TestEnoughRequests/both pod-level and container-level resources fit",
    ),
    pytest.param(
        pod(c(1, 1), pod_level={"cpu": "7m", "memory": 2}),
        existing(c(5, 5)),
        NodeResourcesFitArgs(),
        unsched(CPU_R),
        id="TestEnoughRequests/pod-level cpu resource not fit",
    ),
    pytest.param(
        pod(c(1, 1), pod_level={"cpu": "3m", "memory": 2}),
        existing(c(5, 19)),
        NodeResourcesFitArgs(),
        unsched(MEM_R),
        id="TestEnoughRequests/pod-level memory resource not fit",
    ),
    pytest.param(
        pod(pod_level={"cpu": "3m", "memory": 2, HUGEPAGES_A: 5}),
        None,
        NodeResourcesFitArgs(),
        OK,
        id="TestEnoughRequests/pod-level hugepages resource fit",
    ),
    pytest.param(
        pod(c(1, 1, hp=3), pod_level={"cpu": "3m", "memory": 2, HUGEPAGES_A: 5}),
        None,
        NodeResourcesFitArgs(),
        OK,
        id="TestEnoughRequests/both pod-level and container-level hugepages resource fit",
    ),
    pytest.param(
        pod(pod_level={"cpu": "3m", "memory": 2, HUGEPAGES_A: 10}),
        None,
        NodeResourcesFitArgs(),
        unresolvable(insufficient_reason(HUGEPAGES_A)),
        id="TestEnoughRequests/pod-level hugepages resource not fit",
    ),
    pytest.param(
        pod(c(1, 1), init=[c(1, 1)], pod_level={"cpu": "3m", "memory": 2}),
        existing(c(5, 19)),
        NodeResourcesFitArgs(),
        unsched(MEM_R),
        id="TestEnoughRequests/one pod-level cpu resource fits and all containers fit",
    ),
    pytest.param(
        pod(c(1, 1, dra=1)),
        existing(c(0, 0)),
        NodeResourcesFitArgs(),
        unresolvable(insufficient_reason(DRA_RES)),
        id="TestEnoughRequests/extended resource backed by DRA not enabled",
    ),
]


@pytest.mark.parametrize(("pod_", "existing_pod", "args", "want"), ENOUGH_REQUESTS)
def test_enough_requests(
    pod_: Pod, existing_pod: Pod | None, args: NodeResourcesFitArgs, want: Status
) -> None:
    nodes = [node_with("n1", NODE_ALLOC)]
    pods = [existing_pod] if existing_pod is not None else []
    assert filter_both(Fit(args, FakeHandle()), pod_, nodes, pods) == [want]


def test_insufficient_resource_details_match_upstream() -> None:
    """TestEnoughRequests/extended resource allocatable enforced for multiple containers:
    upstream's InsufficientResource (requested 6, used 2, capacity 5, unresolvable)
    is the plan's check of 6 failing on a node with 5 allocatable, 2 used."""
    from tests.builders import build_table

    table = build_table([node_with("n1", NODE_ALLOC)], [existing(c(0, 0, a=2))])
    info = table.infos[table.row_of["n1"]]
    assert info is not None
    plan = fit_plan(PodInfo(pod(c(1, 1, a=3), c(1, 1, a=3))).request)
    assert plan.checks == (
        ResourceCheck("cpu", 2, CPU_R),
        ResourceCheck("memory", 2, MEM_R),
        ResourceCheck(EXT_A, 6, insufficient_reason(EXT_A)),
    )
    assert ResourceFit.node(plan, info) == unresolvable(insufficient_reason(EXT_A))


# makeAllocatableResources(10, 20, 1, 0, 0, 0)
ONE_POD_ALLOC: Res = {
    "cpu": "10m",
    "memory": 20,
    "pods": 1,
    EXT_A: 0,
    "ephemeral-storage": 0,
    HUGEPAGES_A: 0,
}


NOT_ENOUGH_REQUESTS = [
    pytest.param(
        pod(),
        existing(c(10, 20)),
        id="TestNotEnoughRequests/even without specified resources, "
        "predicate fails when there's no space for additional pod",
    ),
    pytest.param(
        pod(c(1, 1)),
        existing(c(5, 5)),
        id="TestNotEnoughRequests/even if both resources fit, no space for additional pod",
    ),
    pytest.param(
        pod(c(5, 1)),
        existing(c(5, 19)),
        id="TestNotEnoughRequests/even for equal edge case, no space for additional pod",
    ),
    pytest.param(
        pod(c(5, 1), init=[c(5, 1)]),
        existing(c(5, 19)),
        id="TestNotEnoughRequests/equal edge case, no space for additional pod, init container",
    ),
]


@pytest.mark.parametrize(("pod_", "existing_pod"), NOT_ENOUGH_REQUESTS)
def test_not_enough_requests(pod_: Pod, existing_pod: Pod) -> None:
    nodes = [node_with("n1", ONE_POD_ALLOC)]
    assert filter_both(Fit(None, FakeHandle()), pod_, nodes, [existing_pod]) == [
        unsched(REASON_TOO_MANY_PODS)
    ]


def test_too_many_pods_is_never_unresolvable_and_keeps_other_reasons() -> None:
    """ "Too many pods" comes first and alone never makes the status unresolvable."""
    nodes = [node_with("n1", {"cpu": "2m", "memory": 20, "pods": 0})]
    assert filter_both(Fit(None, FakeHandle()), pod(c(1, 1)), nodes) == [
        unsched(REASON_TOO_MANY_PODS)
    ]
    assert filter_both(Fit(None, FakeHandle()), pod(c(3, 1)), nodes) == [
        unresolvable(REASON_TOO_MANY_PODS, CPU_R)
    ]


STORAGE_REQUESTS = [
    pytest.param(
        pod(c(1, 1)),
        existing(c(2, 10)),
        OK,
        id="TestStorageRequests/empty storage requested, and pod fits",
    ),
    pytest.param(
        pod({"ephemeral-storage": 25}),
        existing(c(2, 2)),
        unresolvable(EPH_R),
        id="TestStorageRequests/storage ephemeral local storage request exceeds allocatable",
    ),
    pytest.param(
        pod(),
        existing({"cpu": "2m", "memory": 2, "ephemeral-storage": 10}),
        OK,
        id="TestStorageRequests/ephemeral local storage is sufficient",
    ),
    pytest.param(
        pod({"ephemeral-storage": 10}), existing(c(2, 2)), OK, id="TestStorageRequests/pod fits"
    ),
    pytest.param(
        pod({"ephemeral-storage": 11}),
        existing({"ephemeral-storage": 10}),
        unsched(EPH_R),
        id="ephemeral storage short now but not in total is resolvable",
    ),
]


@pytest.mark.parametrize(("pod_", "existing_pod", "want"), STORAGE_REQUESTS)
def test_storage_requests(pod_: Pod, existing_pod: Pod, want: Status) -> None:
    nodes = [node_with("n1", NODE_ALLOC)]
    assert filter_both(Fit(None, FakeHandle()), pod_, nodes, [existing_pod]) == [want]


# makeAllocatableResources(2, 0, 1, 0, 0, 0); SidecarContainers is GA.
SIDECAR_ALLOC: Res = {
    "cpu": "2m",
    "memory": 0,
    "pods": 1,
    EXT_A: 0,
    "ephemeral-storage": 0,
    HUGEPAGES_A: 0,
}
RESTARTABLE_INIT_CONTAINERS = [
    pytest.param(
        pod({}),
        OK,
        id="TestRestartableInitContainers/allow pod without restartable init containers",
    ),
    pytest.param(
        pod({}, sidecars=[{}]),
        OK,
        id="TestRestartableInitContainers/allow pod with restartable init containers",
    ),
    pytest.param(
        pod({"cpu": "1m"}, sidecars=[{"cpu": "1m"}]),
        OK,
        id="TestRestartableInitContainers/allow pod if the total requested resources "
        "do not exceed the node's allocatable resources",
    ),
    pytest.param(
        pod({"cpu": "1m"}, sidecars=[{"cpu": "2m"}]),
        unresolvable(CPU_R),
        id="TestRestartableInitContainers/not allow pod if the total requested "
        "resources do exceed the node's allocatable resources",
    ),
]


@pytest.mark.parametrize(("pod_", "want"), RESTARTABLE_INIT_CONTAINERS)
def test_restartable_init_containers(pod_: Pod, want: Status) -> None:
    nodes = [node_with("n1", SIDECAR_ALLOC)]
    assert filter_both(Fit(None, FakeHandle()), pod_, nodes) == [want]


def test_pre_filter_disabled() -> None:
    """TestPreFilterDisabled: Filter without PreFilter state is an Error (no rejection)."""
    from kubesched.framework.types import NodeInfo

    plugin = Fit(None, FakeHandle())
    st = plugin.filter(CycleState(), PodInfo(pod()), NodeInfo(node_with("n1", {})))
    assert st.code == Code.ERROR
    assert PRE_FILTER_STATE_KEY in st.message()
    from tests.builders import build_table

    assert plugin.filter_vector(CycleState(), PodInfo(pod()), build_table([])) is None


def test_pre_filter_has_no_extensions_and_succeeds() -> None:
    plugin = Fit(None, FakeHandle())
    state = CycleState()
    from kubesched.framework.nodetable import NodeTable

    result, st = plugin.pre_filter(state, PodInfo(pod(c(1, 1))), NodeTable())
    assert result is None and st.is_success()
    assert plugin.pre_filter_extensions() is None
    assert isinstance(state.read(PRE_FILTER_STATE_KEY), ResourcePlan)


def test_vector_filter_statuses_are_shared_per_failure_combination() -> None:
    """Nodes failing the same way share one Status; passing rows are -1. (Unused
    table rows fail too -- they have no pod capacity -- and the runtime masks them.)"""
    from tests.builders import build_table

    nodes = [
        node_with("ok", {"cpu": "10m", "memory": 20, "pods": 5}),
        node_with("cpu1", {"cpu": "1m", "memory": 20, "pods": 5}),
        node_with("cpu2", {"cpu": "2m", "memory": 20, "pods": 5}),
        node_with("both", {"cpu": "1m", "memory": 1, "pods": 5}),
    ]
    table = build_table(nodes)
    plugin = Fit(None, FakeHandle())
    state = CycleState()
    pi = PodInfo(pod(c(5, 5)))
    plugin.pre_filter(state, pi, table)
    v = plugin.filter_vector(state, pi, table)
    assert v is not None
    idx = {n.name: int(v.index[table.row_of[n.name]]) for n in nodes}
    assert idx["ok"] == -1
    assert idx["cpu1"] == idx["cpu2"] != idx["both"]
    assert v.statuses[idx["cpu1"]] == unresolvable(CPU_R)
    assert v.statuses[idx["both"]] == unresolvable(CPU_R, MEM_R)
    assert len({i for i in idx.values() if i >= 0}) == 2


def test_what_if_evaluates_requested_matrices() -> None:
    """Preemption-style what-if: removing a victim's request from ``requested``
    turns "Insufficient cpu" (resolvable) into a fit."""
    import numpy as np

    from tests.builders import build_table

    victim = resource_pod("victim", c(8, 1), node="n1")
    table = build_table([node_with("n1", NODE_ALLOC)], [victim])
    plugin = Fit(None, FakeHandle(table))
    state = CycleState()
    pi = PodInfo(pod(c(5, 1)))
    plugin.pre_filter(state, pi, table)
    rows = np.array([table.row_of["n1"]], dtype=np.int64)
    v = plugin.filter_what_if(state, pi, rows, table.requested[rows])
    assert v is not None and v.statuses[v.index[0]] == unsched(CPU_R)
    vec = table.request_vector(PodInfo(victim))
    without_victim = table.requested[rows].copy()
    without_victim[0, : len(vec)] -= vec
    v = plugin.filter_what_if(state, pi, rows, without_victim)
    assert v is not None and v.index[0] == -1

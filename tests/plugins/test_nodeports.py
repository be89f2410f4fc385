"""NodePorts (upstream node_ports TestNodePorts, TestPreFilterDisabled,
Test_isSchedulableAfterPodDeleted) on both paths."""

from __future__ import annotations

import pytest

from kubesched.api.types import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.derive import Derived
from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.status import SKIP, SUCCESS, Code, Status, unschedulable
from kubesched.plugins.nodeports import (
    ERR_REASON,
    NodePorts,
    is_schedulable_after_pod_deleted,
)
from tests.builders import PodBuilder, build_table, make_node, make_pod
from tests.fakes import FakeHandle
from tests.plugins.fakes import check_filter

CONFLICT = unschedulable("node(s) didn't have free ports for the requested pod ports")


def with_ports(b: PodBuilder, *specs: str) -> PodBuilder:
    """Ports as upstream's newPod: "PROTO/hostIP/port"."""
    for spec in specs:
        proto, ip, port = spec.split("/")
        b = b.host_port(int(port), proto, ip)
    return b


def ported(name: str, *specs: str, node: str = "") -> Pod:
    b = with_ports(make_pod(name), *specs)
    if node:
        b = b.node(node)
    return b.obj()


@pytest.mark.parametrize(
    ("want_ports", "used_ports", "want"),
    [
        pytest.param(
            ("UDP/127.0.0.1/8080",), ("UDP/127.0.0.1/9090",), SUCCESS, id="TestNodePorts/other port"
        ),
        pytest.param(
            ("UDP/127.0.0.1/8080",),
            ("UDP/127.0.0.1/8080",),
            CONFLICT,
            id="TestNodePorts/same udp port",
        ),
        pytest.param(
            ("TCP/127.0.0.1/8080",),
            ("TCP/127.0.0.1/8080",),
            CONFLICT,
            id="TestNodePorts/same tcp port",
        ),
        pytest.param(
            ("TCP/127.0.0.1/8080",),
            ("TCP/127.0.0.2/8080",),
            SUCCESS,
            id="TestNodePorts/different host ip",
        ),
        pytest.param(
            ("UDP/127.0.0.1/8080",),
            ("TCP/127.0.0.1/8080",),
            SUCCESS,
            id="TestNodePorts/different protocol",
        ),
        pytest.param(
            ("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
            ("UDP/127.0.0.1/8080",),
            CONFLICT,
            id="TestNodePorts/second udp port conflict",
        ),
        pytest.param(
            ("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
            ("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"),
            CONFLICT,
            id="TestNodePorts/first tcp port conflict",
        ),
        pytest.param(
            ("TCP/0.0.0.0/8001",),
            ("TCP/127.0.0.1/8001",),
            CONFLICT,
            id="TestNodePorts/first tcp port conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            ("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
            ("TCP/127.0.0.1/8001",),
            CONFLICT,
            id="TestNodePorts/TCP hostPort conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            ("TCP/127.0.0.1/8001",),
            ("TCP/0.0.0.0/8001",),
            CONFLICT,
            id="TestNodePorts/second tcp port conflict to 0.0.0.0 hostIP",
        ),
        pytest.param(
            ("UDP/127.0.0.1/8001",),
            ("TCP/0.0.0.0/8001",),
            SUCCESS,
            id="TestNodePorts/second different protocol",
        ),
        pytest.param(
            ("UDP/127.0.0.1/8001",),
            ("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"),
            CONFLICT,
            id="TestNodePorts/UDP hostPort conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            ("TCP//8001",), ("TCP/10.1.1.1/8001",), CONFLICT, id="empty hostIP means 0.0.0.0"
        ),
    ],
)
def test_filter(want_ports: tuple[str, ...], used_ports: tuple[str, ...], want: Status) -> None:
    nodes = [make_node("m1").obj(), make_node("free").obj()]
    table = build_table(nodes, [ported("existing", *used_ports, node="m1")])
    pl = NodePorts(None, FakeHandle(table))
    state = CycleState()
    pod = with_ports(make_pod("p"), *want_ports).info()
    _, pre = pl.pre_filter(state, pod, table)
    assert pre == SUCCESS
    got = check_filter(pl, state, pod, table)
    assert got == {"m1": want, "free": SUCCESS}
    assert got["m1"].code == want.code


def test_pre_filter_skips_pod_without_host_ports() -> None:
    """TestNodePorts/skip filter: no host ports (a container port without hostPort too)."""
    table = build_table([make_node("m1").obj()])
    state = CycleState()
    result, status = NodePorts(None, FakeHandle(table)).pre_filter(
        state, make_pod("p").info(), table
    )
    assert (result, status) == (None, SKIP)
    assert state.get("PreFilterNodePorts") is None


def test_filter_without_pre_filter_state_is_an_error() -> None:
    """TestPreFilterDisabled: the state is missing; the vector path defers to the exact one."""
    table = build_table([make_node("m1").obj()])
    pl = NodePorts(None, FakeHandle(table))
    pod = make_pod("p").info()
    got = pl.filter(CycleState(), pod, table.infos[0])  # type: ignore[arg-type]
    assert got.code == Code.ERROR
    assert got.message() == 'reading "PreFilterNodePorts" from cycleState: not found'
    assert Derived().filter(pl, CycleState(), pod, table) is None


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        pytest.param(
            "not-a-pod",
            QueueingHint.QUEUE,
            id="Test_isSchedulableAfterPodDeleted/backoff-wrong-old-object",
        ),
        pytest.param(
            make_pod("d").obj(),
            QueueingHint.SKIP,
            id="Test_isSchedulableAfterPodDeleted/skip-queue-on-unscheduled",
        ),
        pytest.param(
            make_pod("d").node("fake-node").obj(),
            QueueingHint.SKIP,
            id="Test_isSchedulableAfterPodDeleted/skip-queue-on-non-hostport",
        ),
        pytest.param(
            make_pod("d").node("fake-node").host_port(8081).obj(),
            QueueingHint.SKIP,
            id="Test_isSchedulableAfterPodDeleted/skip-queue-on-unrelated-hostport",
        ),
        pytest.param(
            make_pod("d").node("fake-node").host_port(8080).obj(),
            QueueingHint.QUEUE,
            id="Test_isSchedulableAfterPodDeleted/queue-on-released-hostport",
        ),
        pytest.param(
            make_pod("d").nominated("fake-node").host_port(8080).obj(),
            QueueingHint.QUEUE,
            id="a nominated deleted pod counts as scheduled",
        ),
    ],
)
def test_pod_deleted_hint(deleted: object, want: QueueingHint) -> None:
    pod = make_pod("p").host_port(8080).obj()
    assert is_schedulable_after_pod_deleted(pod, deleted, None) == want  # type: ignore[arg-type]


def test_events_and_reason() -> None:
    events = NodePorts(None, FakeHandle()).events_to_register()
    assert [(e.event.resource, e.event.action_type, e.hint is not None) for e in events] == [
        (EventResource.POD, ActionType.DELETE, True),
        (EventResource.NODE, ActionType.ADD, False),
    ]
    assert ERR_REASON == "node(s) didn't have free ports for the requested pod ports"

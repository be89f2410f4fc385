"""NodeName Filter (upstream node_name TestNodeName) on the exact and vector paths."""

from __future__ import annotations

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import NODE_ADD
from kubesched.framework.status import SUCCESS, Status, unresolvable
from kubesched.plugins.nodename import ERR_REASON, NodeName
from tests.builders import build_table, make_node, make_pod
from tests.fakes import FakeHandle
from tests.plugins.fakes import check_filter

MISMATCH = unresolvable("node(s) didn't match the requested node name")


@pytest.mark.parametrize(
    ("pod_node", "want_foo", "want_bar"),
    [
        pytest.param("", SUCCESS, SUCCESS, id="TestNodeName/no host specified"),
        pytest.param("foo", SUCCESS, MISMATCH, id="TestNodeName/host matches"),
        pytest.param("baz", MISMATCH, MISMATCH, id="TestNodeName/host doesn't match"),
    ],
)
def test_filter(pod_node: str, want_foo: Status, want_bar: Status) -> None:
    table = build_table([make_node("foo").obj(), make_node("bar").obj()])
    builder = make_pod("p")
    if pod_node:
        builder = builder.node(pod_node)
    pod = builder.info()
    got = check_filter(NodeName(None, FakeHandle(table)), CycleState(), pod, table)
    assert got == {"foo": want_foo, "bar": want_bar}
    assert all(s.code == w.code for s, w in zip(got.values(), (want_foo, want_bar), strict=True))


def test_reason_and_events() -> None:
    assert ERR_REASON == "node(s) didn't match the requested node name"
    events = NodeName(None, FakeHandle()).events_to_register()
    assert [e.event for e in events] == [NODE_ADD]
    assert events[0].hint is None

"""SchedulingGates PreEnqueue (upstream scheduling_gates TestPreEnqueue) and its hint."""

from __future__ import annotations

import pytest

from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.status import SUCCESS, Status, unresolvable
from kubesched.plugins.schedulinggates import SchedulingGates, is_schedulable_after_gates_eliminated
from tests.builders import PodBuilder, make_pod
from tests.fakes import FakeHandle


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(
            make_pod("p"), SUCCESS, id="TestPreEnqueue/pod does not carry scheduling gates"
        ),
        pytest.param(
            make_pod("p").scheduling_gates("foo", "bar"),
            unresolvable("waiting for scheduling gates: [foo bar]"),
            id="TestPreEnqueue/pod carries scheduling gates",
        ),
        pytest.param(
            make_pod("p").scheduling_gates("only"),
            unresolvable("waiting for scheduling gates: [only]"),
            id="a single gate",
        ),
    ],
)
def test_pre_enqueue(pod: PodBuilder, want: Status) -> None:
    got = SchedulingGates(None, FakeHandle()).pre_enqueue(pod.obj())
    assert got == want
    assert got.code == want.code


def test_hint_and_events() -> None:
    gated = make_pod("p").uid("u1").scheduling_gates("g").obj()
    ungated = make_pod("p").uid("u1").obj()
    other = make_pod("q").uid("u2").obj()
    hint = is_schedulable_after_gates_eliminated
    assert hint(gated, gated, ungated) == QueueingHint.QUEUE
    assert hint(gated, other, other) == QueueingHint.SKIP
    events = SchedulingGates(None, FakeHandle()).events_to_register()
    assert [(e.event.resource, e.event.action_type) for e in events] == [
        (EventResource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    ]

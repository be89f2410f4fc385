"""The discrete-event engine (sim/engine.py): a heap of (time, priority, seq, action).

Contract under test: actions run in (time, priority, scheduling order); ``run_due``
runs everything due at ``now``, including actions that running actions schedule
for ``now``; nothing is ever scheduled in the past.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.sim.engine import PRIO_CLUSTER, PRIO_LATE, Engine

S = 1_000_000_000


def drain(engine: Engine) -> None:
    """Drive the engine as the simulation does: jump to the next time, run what is due."""
    while (t := engine.next_time()) is not None:
        engine.now = t
        engine.run_due()


def recorder(log: list[str], name: str) -> Callable[[], None]:
    def action() -> None:
        log.append(name)

    return action


@pytest.mark.parametrize(
    ("scheduled", "expected"),
    [
        pytest.param(
            [("c", 3 * S, PRIO_CLUSTER), ("a", 1 * S, PRIO_CLUSTER), ("b", 2 * S, PRIO_CLUSTER)],
            ["a", "b", "c"],
            id="different times run in time order whatever the order they were scheduled in",
        ),
        pytest.param(
            [("late", S, PRIO_LATE), ("x", S, PRIO_CLUSTER), ("y", S, PRIO_CLUSTER)],
            ["x", "y", "late"],
            id="at one time a lower priority value runs first",
        ),
        pytest.param(
            [("first", S, PRIO_CLUSTER), ("second", S, PRIO_CLUSTER), ("third", S, PRIO_CLUSTER)],
            ["first", "second", "third"],
            id="equal time and priority run in scheduling order (seq)",
        ),
        pytest.param(
            [("t2-late", 2 * S, PRIO_LATE), ("t1-late", S, PRIO_LATE), ("t2", 2 * S, PRIO_CLUSTER)],
            ["t1-late", "t2", "t2-late"],
            id="time wins over priority",
        ),
    ],
)
def test_ordering(scheduled: list[tuple[str, int, int]], expected: list[str]) -> None:
    engine = Engine()
    log: list[str] = []
    for name, t, prio in scheduled:
        engine.at(t, recorder(log, name), prio)
    drain(engine)
    assert log == expected


@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.sampled_from([PRIO_CLUSTER, PRIO_LATE])),
        max_size=30,
    )
)
def test_property_order_is_time_priority_then_seq(entries: list[tuple[int, int]]) -> None:
    engine = Engine()
    log: list[int] = []
    for i, (t, prio) in enumerate(entries):
        engine.at(t * S, lambda i=i: log.append(i), prio)  # type: ignore[misc]
    drain(engine)
    expected = sorted(range(len(entries)), key=lambda i: (entries[i][0], entries[i][1], i))
    assert log == expected


def test_run_due_runs_actions_scheduled_for_now_by_other_actions() -> None:
    engine = Engine()
    log: list[str] = []

    def parent() -> None:
        log.append("parent")
        engine.at(engine.now, recorder(log, "child-now"))
        engine.after(0, recorder(log, "child-after-0"), PRIO_LATE)
        engine.after(S, recorder(log, "child-later"))

    engine.now = 5 * S
    engine.at(5 * S, parent)
    ran = engine.run_due()
    assert log == ["parent", "child-now", "child-after-0"]
    assert ran == 3
    # The one scheduled for later stays queued, at its own time.
    assert engine.next_time() == 6 * S
    assert len(engine) == 1


def test_child_with_higher_priority_runs_before_an_already_queued_late_action() -> None:
    # A cluster change caused at t by a cluster action still precedes the PRIO_LATE
    # work of t: priority is compared before seq.
    engine = Engine()
    log: list[str] = []

    def parent() -> None:
        log.append("parent")
        engine.at(engine.now, recorder(log, "child"), PRIO_CLUSTER)

    engine.at(0, recorder(log, "late"), PRIO_LATE)
    engine.at(0, parent, PRIO_CLUSTER)
    engine.run_due()
    assert log == ["parent", "child", "late"]


def test_run_due_runs_nothing_that_is_not_due() -> None:
    engine = Engine()
    log: list[str] = []
    engine.at(2 * S, recorder(log, "later"))
    engine.now = 2 * S - 1
    assert engine.run_due() == 0
    assert log == []
    engine.now = 2 * S
    assert engine.run_due() == 1
    assert log == ["later"]
    assert engine.next_time() is None
    assert len(engine) == 0


def test_overdue_actions_run_too() -> None:
    engine = Engine()
    log: list[str] = []
    engine.at(S, recorder(log, "a"))
    engine.at(2 * S, recorder(log, "b"))
    engine.now = 10 * S
    assert engine.run_due() == 2
    assert log == ["a", "b"]


def test_scheduling_in_the_past_is_clamped_to_now() -> None:
    engine = Engine()
    engine.now = 10 * S
    log: list[str] = []
    engine.at(3 * S, recorder(log, "past"))
    assert engine.next_time() == 10 * S
    engine.run_due()
    assert log == ["past"]


def test_after_is_relative_to_now() -> None:
    engine = Engine()
    engine.now = 7 * S
    engine.after(3 * S, lambda: None)
    assert engine.next_time() == 10 * S

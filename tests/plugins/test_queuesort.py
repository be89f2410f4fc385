"""PrioritySort.less (upstream queuesort TestLess)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kubesched.api.types import Pod
from kubesched.plugins.queuesort import PrioritySort
from tests.builders import make_pod
from tests.fakes import FakeHandle


@dataclass
class Queued:
    pod: Pod
    timestamp: int


LOW, HIGH = 10, 100
T1, T2 = 1_000, 2_000


def q(priority: int, ts: int) -> Queued:
    return Queued(make_pod(f"p{priority}-{ts}").priority(priority).obj(), ts)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        pytest.param(
            q(LOW, T1), q(HIGH, T2), False, id="TestLess/p1.priority less than p2.priority"
        ),
        pytest.param(
            q(HIGH, T1), q(LOW, T2), True, id="TestLess/p1.priority greater than p2.priority"
        ),
        pytest.param(
            q(HIGH, T1),
            q(HIGH, T2),
            True,
            id="TestLess/equal priority. p1 is added to schedulingQ earlier than p2",
        ),
        pytest.param(
            q(HIGH, T2),
            q(HIGH, T1),
            False,
            id="TestLess/equal priority. p2 is added to schedulingQ earlier than p1",
        ),
        pytest.param(
            q(HIGH, T1), q(HIGH, T1), False, id="equal priority and timestamp is not less"
        ),
        pytest.param(q(-5, T1), q(0, T2), False, id="negative priority sorts after zero"),
        pytest.param(q(HIGH, T2), q(LOW, T1), True, id="priority wins over an earlier timestamp"),
    ],
)
def test_less(a: Queued, b: Queued, expected: bool) -> None:
    assert PrioritySort(None, FakeHandle()).less(a, b) is expected


def test_name() -> None:
    assert PrioritySort.name == "PrioritySort"

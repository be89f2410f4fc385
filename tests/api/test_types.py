"""Pod.copy copies every field (a new slot must be added to it); Pod.preemption_condition."""

from __future__ import annotations

import pytest

from kubesched.api.types import Pod, PodCondition

SCHEDULED = PodCondition("PodScheduled", "True")
PREEMPTED = PodCondition("DisruptionTarget", "True", "PreemptionByScheduler", "preempting")
PREEMPTED_FALSE = PodCondition("DisruptionTarget", "False", "PreemptionByScheduler")
TAINT = PodCondition("DisruptionTarget", "True", "DeletionByTaintManager")


def test_copy_copies_every_slot_and_owns_its_conditions() -> None:
    p = Pod("a", "ns", uid="u", labels={"x": "y"}, priority=5, node_name="n", start_time=3)
    p.conditions.append(PodCondition("PodScheduled", "True"))
    c = p.copy()
    for slot in Pod.__slots__:
        assert getattr(c, slot) == getattr(p, slot), slot
    c.conditions.append(PodCondition("Ready", "True"))
    assert len(p.conditions) == 1


@pytest.mark.parametrize(
    ("conditions", "want"),
    [
        pytest.param([], None, id="no condition"),
        pytest.param([SCHEDULED, PREEMPTED], PREEMPTED, id="set by the scheduler"),
        pytest.param(
            [PREEMPTED_FALSE], PREEMPTED_FALSE, id="whatever its status (the caller looks)"
        ),
        pytest.param([TAINT], None, id="another reason"),
        pytest.param([TAINT, PREEMPTED], None, id="only the first DisruptionTarget counts"),
        pytest.param(
            [PodCondition("Ready", "False", "PreemptionByScheduler")], None, id="another type"
        ),
    ],
)
def test_preemption_condition(conditions: list[PodCondition], want: PodCondition | None) -> None:
    assert Pod("a", conditions=conditions).preemption_condition() is want

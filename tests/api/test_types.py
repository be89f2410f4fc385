"""Pod.copy copies every field (a new slot must be added to it)."""

from __future__ import annotations

from kubesched.api.types import Pod, PodCondition


def test_copy_copies_every_slot_and_owns_its_conditions() -> None:
    p = Pod("a", "ns", uid="u", labels={"x": "y"}, priority=5, node_name="n", start_time=3)
    p.conditions.append(PodCondition("PodScheduled", "True"))
    c = p.copy()
    for slot in Pod.__slots__:
        assert getattr(c, slot) == getattr(p, slot), slot
    c.conditions.append(PodCondition("Ready", "True"))
    assert len(p.conditions) == 1

"""The scheduler never sees a Succeeded or Failed pod (its pod informer's field
selector is ``status.phase!=Succeeded,status.phase!=Failed``, pkg/scheduler/
scheduler.go): such a pod is neither queued nor cached, and a watched pod that
becomes terminal leaves the informer's view, which the event handlers receive as
a deletion (deletePodFromSchedulingQueue / deleteAssignedPodFromCache)."""

from __future__ import annotations

import pytest

from kubesched.api.types import Pod
from tests.builders import make_node, make_pod
from tests.scheduler.test_scheduler import Rig


def queued(rig: Rig) -> int:
    return sum(rig.sched.queue.pending_pods().values())


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_an_added_unbound_terminal_pod_is_not_queued(phase: str) -> None:
    rig = Rig()
    rig.nodes(make_node("n1").capacity(cpu="4", memory="8Gi", pods=10).obj())
    rig.pods(make_pod("done").req(cpu="1").phase(phase).obj())
    assert queued(rig) == 0
    assert not rig.cycle()


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_an_added_bound_terminal_pod_is_not_cached(phase: str) -> None:
    rig = Rig()
    rig.nodes(make_node("n1").capacity(cpu="1", memory="8Gi", pods=10).obj())
    rig.pods(make_pod("done").req(cpu="1").node("n1").phase(phase).obj())
    assert rig.sched.cache.pod_count() == 0
    assert rig.sched.cache.pod_info(rig.pod("done").uid) is None


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_a_pending_pod_that_becomes_terminal_leaves_the_queue(phase: str) -> None:
    rig = Rig()
    rig.pods(make_pod("p").req(cpu="1").obj())
    assert queued(rig) == 1
    old = rig.pod("p")
    new: Pod = old.copy()
    new.phase = phase
    rig.sched.on_pod_update(old, new)
    assert queued(rig) == 0

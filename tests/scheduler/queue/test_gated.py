"""PreEnqueue gating: gated pods live in the unschedulable pool and move only on
their gating plugin's events or on updates of the pod itself."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from kubesched.api.types import Pod
from kubesched.framework.events import (
    UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
    EventObject,
    EventResource,
    QueueingHint,
)
from kubesched.framework.status import Code, Status
from kubesched.scheduler.queue.events import (
    BACKOFF_COMPLETE,
    FORCE_ACTIVATE_LABEL,
    UNSCHEDULED_POD_UPDATE,
)
from kubesched.scheduler.queue.scheduling_queue import PreEnqueueFn
from tests.builders import make_pod
from tests.scheduler.queue.helpers import (
    SECOND,
    allowlist_pre_enqueue,
    clone,
    hint_queue,
    make_queue,
    where,
)

PLUGIN = "preEnqueuePlugin"


def _chain(*allowlists: Sequence[str]) -> PreEnqueueFn:
    """Several upstream allowlist PreEnqueue plugins, run in order."""
    plugins = [allowlist_pre_enqueue(*a, plugin=PLUGIN) for a in allowlists]

    def run(pod: Pod) -> Status:
        for p in plugins:
            s = p(pod)
            if not s.is_success():
                return s
        return Status(Code.SUCCESS)

    return run


POD_P = make_pod("p").label("p", "").obj()
POD_BAR = make_pod("bar").label("bar", "").obj()
ADD = "UnschedulablePodAdd"


@pytest.mark.parametrize(
    ("pre_enqueue", "pod", "event", "from_backoff", "want_success"),
    [
        pytest.param(
            None,
            POD_P,
            ADD,
            False,
            True,
            id="TestPriorityQueue_moveToActiveQ/no plugins registered",
        ),
        pytest.param(
            _chain([], []),
            POD_P,
            ADD,
            False,
            False,
            id="TestPriorityQueue_moveToActiveQ/pod name not in allowlists",
        ),
        pytest.param(
            _chain(["foo", "bar"], ["foo"]),
            POD_BAR,
            ADD,
            False,
            False,
            id="TestPriorityQueue_moveToActiveQ/pod failed one preEnqueue plugin",
        ),
        pytest.param(
            _chain(["foo", "bar"], ["foo"]),
            POD_BAR,
            BACKOFF_COMPLETE,
            True,
            True,
            id=(
                "TestPriorityQueue_moveToActiveQ/"
                "moved from backoffQ after backoff, PreEnqueue not run"
            ),
        ),
        pytest.param(
            _chain(["foo", "bar"], ["foo"]),
            POD_BAR,
            FORCE_ACTIVATE_LABEL,
            False,
            False,
            id="TestPriorityQueue_moveToActiveQ/activated from unschedulablePods fails PreEnqueue",
        ),
        pytest.param(
            _chain(["foo", "bar"], ["foo"]),
            POD_BAR,
            FORCE_ACTIVATE_LABEL,
            True,
            True,
            id="TestPriorityQueue_moveToActiveQ/activated from backoffQ, PreEnqueue not run",
        ),
        pytest.param(
            _chain(["foo", "bar"], ["bar"]),
            POD_BAR,
            ADD,
            False,
            True,
            id="TestPriorityQueue_moveToActiveQ/pod passed all preEnqueue plugins",
        ),
    ],
)
def test_move_to_active_q(
    pre_enqueue: PreEnqueueFn | None, pod: Pod, event: str, from_backoff: bool, want_success: bool
) -> None:
    q, _ = make_queue(
        pre_enqueue=pre_enqueue, pod_initial_backoff=30 * SECOND, pod_max_backoff=60 * SECOND
    )
    assert q._move_to_active_q(q.new_queued_pod_info(pod), event, from_backoff) is want_success
    want_pool = 0 if want_success else 1
    assert len(q.unschedulable_pods()) == want_pool
    assert q.pending_pods()["gated"] == want_pool
    q.update(pod, clone(pod, annotations={"foo": ""}))  # an unrelated update keeps it there
    assert len(q.unschedulable_pods()) == want_pool


@pytest.mark.parametrize(
    ("pre_enqueue", "pod", "want_success"),
    [
        pytest.param(
            None, POD_P, True, id="TestPriorityQueue_moveToBackoffQ/no plugins registered"
        ),
        pytest.param(
            _chain([], []),
            POD_P,
            False,
            id="TestPriorityQueue_moveToBackoffQ/pod name not in allowlists",
        ),
        pytest.param(
            _chain(["foo", "bar"], ["foo"]),
            POD_BAR,
            False,
            id="TestPriorityQueue_moveToBackoffQ/pod failed one preEnqueue plugin",
        ),
        pytest.param(
            _chain(["foo", "bar"], ["bar"]),
            POD_BAR,
            True,
            id="TestPriorityQueue_moveToBackoffQ/pod passed all preEnqueue plugins",
        ),
    ],
)
def test_move_to_backoff_q(pre_enqueue: PreEnqueueFn | None, pod: Pod, want_success: bool) -> None:
    q, _ = make_queue(
        pre_enqueue=pre_enqueue, pod_initial_backoff=30 * SECOND, pod_max_backoff=60 * SECOND
    )
    pinfo = q.new_queued_pod_info(pod)
    assert q._move_to_backoff_q(pinfo, ADD) is want_success
    assert where(q, pod) == ("backoff" if want_success else "unschedulable")


SCHEDULING_GATES = "SchedulingGates"
GATES_ELIMINATED = ClusterEvent(
    EventResource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
)


def _gates(pod: Pod) -> Status:
    if pod.spec.scheduling_gates:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "gated", plugin=SCHEDULING_GATES)
    return Status(Code.SUCCESS)


def _gates_hint(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
    """SchedulingGates' hint: the pod itself lost its last gate."""
    if isinstance(new, Pod) and new.uid == pod.uid and not new.spec.scheduling_gates:
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def test_gated_set_upon_creation_and_unset_upon_update() -> None:
    """Test_queuedPodInfo_gatedSetUponCreationAndUnsetUponUpdate."""
    q, _ = make_queue(reg={SCHEDULING_GATES: [(GATES_ELIMINATED, _gates_hint)]}, pre_enqueue=_gates)
    gated = make_pod("p").scheduling_gates("hello world").obj()
    q.add(gated)
    stored = q.get_pod("p", "default")
    assert stored is not None and stored.gated() and stored.gating_plugin == SCHEDULING_GATES
    assert stored.gating_plugin_events == (GATES_ELIMINATED,)
    # Cluster events the gating plugin did not register never move it.
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
    assert where(q, gated) == "unschedulable"
    ungated = clone(gated, spec=replace(gated.spec, scheduling_gates=()))
    q.update(gated, ungated)
    popped = q.pop()
    assert popped is not None and popped.pod is ungated and not popped.gated()
    assert popped.initial_attempt_timestamp is not None


def _pinfo_in_pool(q: object, pod: Pod) -> None:
    pinfo = q.new_queued_pod_info(pod)  # type: ignore[attr-defined]
    pinfo.unschedulable_count += 1
    q._unsched.add_or_update(pinfo, ADD)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("step", "want"),
    [
        pytest.param(
            3 * SECOND,
            {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 1},
            id="TestPendingPodsMetric/Ungated to Gated transition into moveToActiveQ",
        ),
        pytest.param(
            0,
            {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 1},
            id="TestPendingPodsMetric/Ungated to Gated transition into moveToBackoffQ",
        ),
    ],
)
def test_pending_pods_gated_transition(step: int, want: dict[str, int]) -> None:
    q, clock = make_queue(
        reg={PLUGIN: [(UNSCHEDULED_POD_UPDATE, hint_queue)]},
        pre_enqueue=allowlist_pre_enqueue("queueable"),
    )
    pod = make_pod("x-1", "ns1").label("queueable", "").obj()
    _pinfo_in_pool(q, pod)
    clock.step(step)
    q._pre_enqueue = allowlist_pre_enqueue("")  # gate every pod
    q.update(pod, clone(pod, labels={"queueable": ""}))
    assert q.pending_pods() == want
    # ... and back: ungate, update again.
    q._pre_enqueue = allowlist_pre_enqueue("queueable")
    q.update(pod, clone(pod, labels={"queueable": ""}))
    after = {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 0}
    after["active" if step else "backoff"] = 1
    assert q.pending_pods() == after


def test_pending_pods_after_move_all() -> None:
    """TestPendingPodsMetric/add pods to unschedulablePods and then move all to activeQ."""
    q, clock = make_queue(
        reg={PLUGIN: [(UNSCHEDULED_POD_UPDATE, hint_queue)]},
        pre_enqueue=allowlist_pre_enqueue("queueable"),
    )
    for i in range(1, 51):
        _pinfo_in_pool(q, make_pod(f"x-{i}", f"ns{i}").label("queueable", "").obj())
    for i in range(1, 11):
        q.add(make_pod(f"y-{i}", f"ns{i}").label("failme", "").obj())
    assert q.pending_pods() == {"active": 0, "backoff": 0, "unschedulable": 50, "gated": 10}
    clock.step(3 * SECOND)
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
    assert q.pending_pods() == {"active": 50, "backoff": 0, "unschedulable": 0, "gated": 10}
    for i in range(1, 3):
        q.delete(make_pod(f"y-{i}", f"ns{i}").obj())
    assert q.pending_pods()["gated"] == 8

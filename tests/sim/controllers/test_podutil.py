"""Pod predicates and orderings the controllers share (sim/controllers/podutil.py),
against upstream pkg/controller/controller_utils_test.go (TestSortingActivePods,
TestSortingActivePodsWithRanks, TestActivePodFiltering),
controller_ref_manager_test.go (TestClaimPods) and replica_set_test.go
(TestGetPodsToDelete).
"""

from __future__ import annotations

import pytest

from kubesched.api.types import LabelSelector, Pod
from kubesched.sim.controllers.podutil import (
    ADOPT,
    OWNED,
    RELEASE,
    claim,
    is_active,
    pods_to_delete,
)
from tests.builders import make_pod

S = 10**9
NOW = 10_000 * S


def _pod(
    name: str,
    node: str = "",
    phase: str = "",
    ready: bool | None = None,
    cost: int | None = None,
    start: int | None = None,
    created: int = 0,
) -> Pod:
    b = make_pod(name).uid(name).created(created)
    if node:
        b.node(node)
    if phase:
        b.phase(phase)
    if ready is False:
        b.condition("Ready", "False")
    if start is not None:
        b.start_time(start)
    p = b.obj()
    if cost is not None:
        p.annotations = {"controller.kubernetes.io/pod-deletion-cost": str(cost)}
    return p


@pytest.mark.parametrize(
    ("first", "second", "reason"),
    [
        pytest.param(
            _pod("a"),
            _pod("b", node="n1"),
            "unassigned",
            id="TestSortingActivePods/unassigned first",
        ),
        pytest.param(
            _pod("a", node="n1", phase="Pending"),
            _pod("b", node="n1", phase="Running"),
            "pending",
            id="TestSortingActivePods/Pending before Running",
        ),
        pytest.param(
            _pod("a", node="n1", phase="Unknown"),
            _pod("b", node="n1", phase="Running"),
            "unknown",
            id="TestSortingActivePods/Unknown before Running",
        ),
        pytest.param(
            _pod("a", node="n1", ready=False),
            _pod("b", node="n1"),
            "not ready",
            id="TestSortingActivePods/not ready before ready",
        ),
        pytest.param(
            _pod("a", node="n1", cost=1),
            _pod("b", node="n1", cost=5),
            "cost",
            id="TestSortingActivePodsWithRanks/lower pod-deletion-cost first",
        ),
        pytest.param(
            _pod("a", node="n1", start=NOW - 10 * S),
            _pod("b", node="n1", start=NOW - 1000 * S),
            "ready for less time",
            id="TestSortingActivePodsWithRanks/ready for less time first (log buckets)",
        ),
        pytest.param(
            _pod("a", node="n1", start=NOW - 10 * S, created=NOW - 10 * S),
            _pod("b", node="n1", start=NOW - 10 * S, created=NOW - 1000 * S),
            "newer",
            id="TestSortingActivePodsWithRanks/newer first",
        ),
    ],
)
def test_deletion_order(first: Pod, second: Pod, reason: str) -> None:
    """The first pod is deleted first, whatever the input order."""
    for candidates in ([first, second], [second, first]):
        assert pods_to_delete(candidates, candidates, 1, NOW) == [first], reason


def test_doubled_up_pods_go_first() -> None:
    """TestSortingActivePodsWithRanks: a pod sharing its node with more active related
    pods is deleted first (getPodsRankedByRelatedPodsOnSameNode)."""
    lone = _pod("lone", node="n1", start=NOW - 5 * S)
    crowded = _pod("crowded", node="n2", start=NOW - 5 * S)
    sibling = _pod("sibling", node="n2", start=NOW - 5 * S)
    assert pods_to_delete([lone, crowded], [lone, crowded, sibling], 1, NOW) == [crowded]


def test_same_log_bucket_ties_break_by_uid() -> None:
    """LogarithmicScaleDown: ages in the same power-of-two bucket compare by uid."""
    a = _pod("a", node="n1", start=NOW - 10 * S - 1)
    b = _pod("b", node="n1", start=NOW - 9 * S)  # log2 of both ages is 33
    assert pods_to_delete([b, a], [a, b], 1, NOW) == [a]


def test_deleting_all_keeps_the_order() -> None:
    """TestGetPodsToDelete: no sorting when every candidate goes."""
    pods = [_pod("x", node="n1"), _pod("y")]
    assert pods_to_delete(pods, pods, 2, NOW) == pods


@pytest.mark.parametrize(
    ("pod_", "active"),
    [
        pytest.param(make_pod("p").obj(), True, id="TestActivePodFiltering/pending"),
        pytest.param(make_pod("p").node("n").obj(), True, id="TestActivePodFiltering/running"),
        pytest.param(
            make_pod("p").phase("Succeeded").obj(), False, id="TestActivePodFiltering/succeeded"
        ),
        pytest.param(
            make_pod("p").phase("Failed").obj(), False, id="TestActivePodFiltering/failed"
        ),
        pytest.param(
            make_pod("p").terminating(5).obj(), False, id="TestActivePodFiltering/terminating"
        ),
    ],
)
def test_active(pod_: Pod, active: bool) -> None:
    assert is_active(pod_) is active


SELECTOR = LabelSelector({"app": "web"})


@pytest.mark.parametrize(
    ("pod_", "outcome"),
    [
        pytest.param(
            make_pod("p").labels(app="web").owner("ReplicaSet", "rs", "rs-uid").obj(),
            OWNED,
            id="TestClaimPods/Claim pods with correct label",
        ),
        pytest.param(
            make_pod("p").labels(app="web").obj(),
            ADOPT,
            id="TestClaimPods/orphan matching the selector is adopted",
        ),
        pytest.param(
            make_pod("p").labels(app="other").owner("ReplicaSet", "rs", "rs-uid").obj(),
            RELEASE,
            id="TestClaimPods/Controller releases claimed pods when selector doesn't match",
        ),
        pytest.param(
            make_pod("p").labels(app="web").terminating(5).obj(),
            None,
            id="TestClaimPods/Controller does not claim orphaned pods marked for deletion",
        ),
        pytest.param(
            make_pod("p").labels(app="web").owner("ReplicaSet", "other", "other-uid").obj(),
            None,
            id="TestClaimPods/Controller does not claim pods of another controller",
        ),
        pytest.param(
            make_pod("p").labels(app="web").namespace("elsewhere").obj(),
            None,
            id="TestClaimPods/orphan of another namespace",
        ),
    ],
)
def test_claim(pod_: Pod, outcome: str | None) -> None:
    assert claim(pod_, "rs-uid", "default", SELECTOR) == outcome

"""framework.preemption.policy: DefaultPreemption's victim selection as data.

``VictimOrder`` stands for upstream DefaultPreemption's ``IsEligiblePod`` and
``MoreImportantPod`` function fields (and ``OrderedScoreFuncs``); None means
upstream's default. The references below are written from upstream
(pkg/scheduler/util MoreImportantPod, GetPodStartTime; default_preemption.go
isPreemptionAllowed), independently of the code under test.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.types import Node
from kubesched.framework.preemption import VictimOrder
from kubesched.framework.preemption.victims import Victims
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.defaultpreemption import (
    DEFAULT_VICTIM_ORDER,
    filter_pods_with_pdb_violation,
)
from tests.builders import make_pod
from tests.hypothesis_profiles import scaled

NOW = 100


def _pod(name: str, prio: int, start: int | None = None) -> PodInfo:
    b = make_pod(name).uid(name).priority(prio)
    if start is not None:
        b.start_time(start)
    return PodInfo(b.obj())


def upstream_more_important_pod(a: PodInfo, b: PodInfo, now: int) -> bool:
    """util.MoreImportantPod: higher priority; on equal priority the earlier
    GetPodStartTime (status.startTime, or now when unset)."""
    pa, pb = a.pod.priority, b.pod.priority
    if pa != pb:
        return pa > pb
    ta = now if a.pod.start_time is None else a.pod.start_time
    tb = now if b.pod.start_time is None else b.pod.start_time
    return ta < tb


def _as_cmp(more: Callable[[PodInfo, PodInfo, int], bool], now: int) -> Callable[..., int]:
    def cmp(a: PodInfo, b: PodInfo) -> int:
        return -1 if more(a, b, now) else 1 if more(b, a, now) else 0

    return cmp


_pods = st.lists(
    st.tuples(st.sampled_from([-5, 0, 7]), st.sampled_from([None, 50, 100, 150])),
    min_size=0,
    max_size=8,
).map(lambda specs: [_pod(f"p{i}", prio, start) for i, (prio, start) in enumerate(specs)])


@settings(max_examples=scaled(200), deadline=None)
@given(pods=_pods)
def test_default_sort_key_orders_as_upstream_more_important_pod(pods: list[PodInfo]) -> None:
    """The default order's plain key sorts exactly as a sort by upstream's comparator
    (stable, equal pods keep their NodeInfo order), unset start times counting as now."""
    got = sorted(pods, key=DEFAULT_VICTIM_ORDER.sort_key(NOW))
    want = sorted(pods, key=functools.cmp_to_key(_as_cmp(upstream_more_important_pod, NOW)))
    assert [p.pod.name for p in got] == [p.pod.name for p in want]


@settings(max_examples=scaled(100), deadline=None)
@given(pods=_pods)
def test_custom_more_important_pod_is_the_sort_comparator(pods: list[PodInfo]) -> None:
    """A custom MoreImportantPod (here: by name, descending) orders the victims."""

    def by_name_desc(a: PodInfo, b: PodInfo, now: int) -> bool:
        return a.pod.name > b.pod.name

    order = VictimOrder(filter_pods_with_pdb_violation, more_important_pod=by_name_desc)
    got = sorted(pods, key=order.sort_key(NOW))
    assert [p.pod.name for p in got] == sorted((p.pod.name for p in pods), reverse=True)


NODE = NodeInfo(Node("node1"))


@pytest.mark.parametrize(
    ("eligible", "victim_prio", "preemptor_prio", "expected"),
    [
        pytest.param(None, 1, 2, True, id="isPreemptionAllowed lower priority, default"),
        pytest.param(None, 2, 2, False, id="isPreemptionAllowed equal priority never"),
        pytest.param(None, 3, 2, False, id="isPreemptionAllowed higher priority never"),
        pytest.param(lambda n, v, p: False, 1, 2, False, id="IsEligiblePod refuses"),
        pytest.param(lambda n, v, p: True, 2, 2, False, id="IsEligiblePod cannot allow equal"),
    ],
)
def test_allows_is_lower_priority_then_is_eligible_pod(
    eligible: Callable[[NodeInfo, PodInfo, PodInfo], bool] | None,
    victim_prio: int,
    preemptor_prio: int,
    expected: bool,
) -> None:
    order = VictimOrder(filter_pods_with_pdb_violation, is_eligible_pod=eligible)
    victim, preemptor = _pod("v", victim_prio), _pod("p", preemptor_prio)
    assert order.allows(NODE, victim, preemptor) is expected


def test_is_eligible_pod_sees_node_victim_and_preemptor() -> None:
    seen: list[tuple[str, str, str]] = []

    def eligible(node: NodeInfo, victim: PodInfo, preemptor: PodInfo) -> bool:
        seen.append((node.name, victim.pod.name, preemptor.pod.name))
        return True

    order = VictimOrder(filter_pods_with_pdb_violation, is_eligible_pod=eligible)
    assert order.allows(NODE, _pod("v", 1), _pod("p", 2))
    assert seen == [("node1", "v", "p")]


def _funcs(victims: dict[str, Victims]) -> list[Callable[[str], int]]:
    return [lambda node: len(victims[node].pods)]


@pytest.mark.parametrize(
    ("order", "default_policy", "default_order"),
    [
        pytest.param(DEFAULT_VICTIM_ORDER, True, True, id="upstream defaults"),
        pytest.param(
            VictimOrder(filter_pods_with_pdb_violation, is_eligible_pod=lambda n, v, p: True),
            False,
            True,
            id="custom IsEligiblePod: victims not all lower-priority pods, order default",
        ),
        pytest.param(
            VictimOrder(
                filter_pods_with_pdb_violation, more_important_pod=upstream_more_important_pod
            ),
            False,
            False,
            id="custom MoreImportantPod (even an equal one): neither is default",
        ),
        pytest.param(
            VictimOrder(filter_pods_with_pdb_violation, ordered_score_funcs=_funcs),
            True,
            False,
            id="custom OrderedScoreFuncs: victims default, pick not by stats",
        ),
    ],
)
def test_defaults_are_read_off_the_data(
    order: VictimOrder, default_policy: bool, default_order: bool
) -> None:
    """What the batched dry run may assume follows from the fields alone (None =
    upstream's default), never from the plugin's class."""
    assert order.default_policy is default_policy
    assert order.default_order is default_order

"""Taint/toleration matching (upstream core/v1 TestTolerationToleratesTaint and
component-helpers TestFindMatchingUntoleratedTaint semantics)."""

from __future__ import annotations

import pytest

from kubesched.api.taints import (
    count_intolerable_prefer_no_schedule,
    do_not_schedule_taint,
    find_matching_untolerated_taint,
    prefer_no_schedule_tolerations,
    tolerates_taint,
    tolerates_unschedulable,
    tolerations_tolerate_taint,
)
from kubesched.api.types import Taint, Toleration

NS, PNS, NE = "NoSchedule", "PreferNoSchedule", "NoExecute"


@pytest.mark.parametrize(
    ("toleration", "taint", "want"),
    [
        pytest.param(
            Toleration("foo", "Exists", effect=NS),
            Taint("foo", "", NS),
            True,
            id="TestTolerationToleratesTaint/same key and effect, Exists, taint without value",
        ),
        pytest.param(
            Toleration("foo", "Exists", effect=NS),
            Taint("foo", "bar", NS),
            True,
            id="TestTolerationToleratesTaint/same key and effect, Exists, taint with value",
        ),
        pytest.param(
            Toleration("foo", "Equal", "bar", NS),
            Taint("foo", "bar", NS),
            True,
            id="TestTolerationToleratesTaint/same key, effect and value, Equal",
        ),
        pytest.param(
            Toleration("foo", "Equal", "value1", NS),
            Taint("foo", "value2", NS),
            False,
            id="TestTolerationToleratesTaint/same key and effect, Equal, different value",
        ),
        pytest.param(
            Toleration("foo", "Equal", "bar", NE),
            Taint("foo", "bar", NS),
            False,
            id="TestTolerationToleratesTaint/same key and value, different effect",
        ),
        pytest.param(
            Toleration("foo", "", "bar", NS),
            Taint("foo", "bar", NS),
            True,
            id="empty operator means Equal",
        ),
        pytest.param(
            Toleration("foo", "Equal", "bar"),
            Taint("foo", "bar", PNS),
            True,
            id="empty toleration effect matches every effect",
        ),
        pytest.param(
            Toleration("", "Exists"),
            Taint("anything", "v", NE),
            True,
            id="empty key with Exists matches every taint",
        ),
        pytest.param(
            Toleration("", "Exists", effect=NS),
            Taint("anything", "v", NE),
            False,
            id="empty key with Exists still needs the effect",
        ),
        pytest.param(
            Toleration("", "Equal", "v"),
            Taint("anything", "v", NS),
            True,
            id="empty key with Equal matches by value (matching does not validate)",
        ),
        pytest.param(
            Toleration("foo", "Gt", "5"),
            Taint("foo", "10", NS),
            False,
            id="Gt never matches with the comparison-operators gate off",
        ),
        pytest.param(
            Toleration("foo", "Sometimes", "bar"),
            Taint("foo", "bar", NS),
            False,
            id="unknown operator never matches",
        ),
        pytest.param(
            Toleration("foo", "Exists"),
            Taint("foo2", "", NS),
            False,
            id="different key does not match",
        ),
    ],
)
def test_tolerates_taint(toleration: Toleration, taint: Taint, want: bool) -> None:
    assert tolerates_taint(toleration, taint) is want


@pytest.mark.parametrize(
    ("op", "tol_value", "taint_value", "want"),
    [
        pytest.param("Gt", "5", "10", True, id="Gt: taint 10 > 5"),
        pytest.param("Gt", "5", "5", False, id="Gt: equal is not greater"),
        pytest.param("Lt", "5", "-3", True, id="Lt: negative taint value"),
        pytest.param("Lt", "5", "05", False, id="Lt: leading zero is not canonical"),
        pytest.param("Lt", "5", "-0", False, id="Lt: -0 is not canonical"),
        pytest.param("Gt", "+1", "5", False, id="Gt: plus sign is not canonical"),
        pytest.param("Gt", "1", "9223372036854775808", False, id="Gt: out of int64 range"),
        pytest.param("Gt", "1", "abc", False, id="Gt: not a number"),
    ],
)
def test_comparison_operators_with_gate_on(
    op: str, tol_value: str, taint_value: str, want: bool
) -> None:
    tol = Toleration("foo", op, tol_value)
    assert (
        tolerates_taint(tol, Taint("foo", taint_value, NS), enable_comparison_operators=True)
        is want
    )


def test_find_matching_untolerated_taint_returns_first_in_node_order() -> None:
    taints = (Taint("a", "1", PNS), Taint("b", "2", NS), Taint("c", "3", NE))
    tols = (Toleration("b", "Exists"),)
    assert find_matching_untolerated_taint(taints, tols, do_not_schedule_taint) == Taint(
        "c", "3", NE
    )
    assert find_matching_untolerated_taint(taints, tols) == Taint("a", "1", PNS)
    assert find_matching_untolerated_taint(taints, (Toleration("", "Exists"),)) is None
    assert find_matching_untolerated_taint((), tols) is None


def test_prefer_no_schedule_helpers() -> None:
    tols = (
        Toleration("a", "Exists", effect=NS),
        Toleration("b", "Exists"),
        Toleration("c", "Exists", effect=PNS),
    )
    assert prefer_no_schedule_tolerations(tols) == tols[1:]
    taints = (Taint("b", "", PNS), Taint("x", "", PNS), Taint("y", "", NS), Taint("z", "", PNS))
    assert count_intolerable_prefer_no_schedule(taints, tols[1:]) == 2
    assert tolerations_tolerate_taint(tols, Taint("c", "v", PNS))
    assert not tolerations_tolerate_taint((), Taint("c", "v", PNS))


def test_tolerates_unschedulable() -> None:
    assert tolerates_unschedulable((Toleration("node.kubernetes.io/unschedulable", effect=NS),))
    assert not tolerates_unschedulable((Toleration("node.kubernetes.io/unschedulable", effect=NE),))
    assert not tolerates_unschedulable(())

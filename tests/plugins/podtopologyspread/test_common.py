"""PodTopologySpread constraints: parsing and defaults, matchLabelKeys, the default
selector (upstream helper.DefaultSelector as far as kubesched can know it),
plugin args, and the node-inclusion helpers."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kubesched.api.types import (
    LABEL_HOSTNAME,
    LABEL_ZONE,
    LabelSelector,
    LabelSelectorRequirement,
    OwnerReference,
    Pod,
    PodSpec,
    TopologySpreadConstraint,
)
from kubesched.framework.config import NodeAffinityArgs, PodTopologySpreadArgs
from kubesched.plugins.podtopologyspread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    SYSTEM_DEFAULT_CONSTRAINTS,
    PodTopologySpread,
)
from kubesched.plugins.podtopologyspread.common import (
    ConstraintError,
    ConstraintSource,
    Selector,
    default_selector,
    filter_constraints,
)
from kubesched.scheduler.config import SYSTEM_DEFAULT_CONSTRAINTS as CONFIG_DEFAULTS
from tests.builders import build_table, selector
from tests.plugins.podtopologyspread.harness import FOO, LIST, SYSTEM, SelectorReader, plugin

DNS = "DoNotSchedule"
SA = "ScheduleAnyway"


def owned(kind: str, api_version: str = "apps/v1", name: str = "rs1", **labels: str) -> Pod:
    return Pod(
        "p",
        labels=labels,
        owner_references=(OwnerReference(api_version, kind, name, name, True),),
    )


def test_reason_strings() -> None:
    assert (
        ERR_REASON_CONSTRAINTS_NOT_MATCH == "node(s) didn't match pod topology spread constraints"
    )
    assert ERR_REASON_NODE_LABEL_NOT_MATCH == (
        "node(s) didn't match pod topology spread constraints (missing required label)"
    )


def test_system_default_constraints_match_the_scheduler_config_copy() -> None:
    def fields(c: TopologySpreadConstraint) -> tuple[object, ...]:
        return (c.max_skew, c.topology_key, c.when_unsatisfiable, c.label_selector)

    assert [fields(c) for c in SYSTEM_DEFAULT_CONSTRAINTS] == [
        (3, LABEL_HOSTNAME, SA, None),
        (5, LABEL_ZONE, SA, None),
    ]
    assert [fields(c) for c in SYSTEM_DEFAULT_CONSTRAINTS] == [fields(c) for c in CONFIG_DEFAULTS]


def test_filter_constraints_keeps_one_kind_in_order() -> None:
    cs = filter_constraints(
        [
            TopologySpreadConstraint(1, "a", DNS, FOO),
            TopologySpreadConstraint(2, "b", SA, FOO),
            TopologySpreadConstraint(3, "c", DNS, None, min_domains=2),
        ],
        {},
        DNS,
    )
    assert [(c.topology_key, c.max_skew, c.min_domains) for c in cs] == [("a", 1, 1), ("c", 3, 2)]
    assert cs[1].selector.key == ("nothing",)


@pytest.mark.parametrize(
    ("sel", "keys", "labels", "matches", "empty"),
    [
        pytest.param(None, ("app",), {"app": "a"}, {"app": "a"}, False, id="nil selector: nothing"),
        pytest.param(LabelSelector(), (), {}, {"x": "y"}, True, id="empty selector: everything"),
        pytest.param(
            LabelSelector(), ("app",), {"app": "a"}, {"app": "a"}, False, id="empty plus key: app=a"
        ),
        pytest.param(
            selector(app="a"), ("tier",), {}, {"app": "a"}, False, id="key absent: not merged"
        ),
    ],
)
def test_match_label_keys_merge(
    sel: LabelSelector | None,
    keys: tuple[str, ...],
    labels: dict[str, str],
    matches: dict[str, str],
    empty: bool,
) -> None:
    (c,) = filter_constraints(
        [TopologySpreadConstraint(1, "zone", DNS, sel, match_label_keys=keys)], labels, DNS
    )
    assert c.selector.is_empty() == empty
    assert c.selector.matches(matches) == (sel is not None)
    if keys and labels:
        assert not c.selector.matches({**matches, keys[0]: "other"})


def test_conflicting_match_label_key_selects_nothing() -> None:
    (c,) = filter_constraints(
        [TopologySpreadConstraint(1, "zone", DNS, selector(app="a"), match_label_keys=("app",))],
        {"app": "b"},
        DNS,
    )
    assert not c.selector.matches({"app": "a"})
    assert not c.selector.matches({"app": "b"})


def test_bad_selector_raises_upstream_message() -> None:
    bad = LabelSelector(match_expressions=(LabelSelectorRequirement("app", "Foo", ("x",)),))
    with pytest.raises(ConstraintError, match='"Foo" is not a valid pod selector operator'):
        filter_constraints([TopologySpreadConstraint(1, "zone", DNS, bad)], {}, DNS)
    pod = Pod(
        "p", spec=PodSpec(topology_spread_constraints=(TopologySpreadConstraint(1, "z", SA, bad),))
    )
    with pytest.raises(
        ConstraintError, match=r"^obtaining pod's soft topology spread constraints: "
    ):
        ConstraintSource((), None).soft(pod)


@pytest.mark.parametrize(
    ("pod", "reader", "want"),
    [
        pytest.param(Pod("p", labels={"a": "b"}), None, None, id="no controller: empty"),
        pytest.param(
            owned("ReplicaSet", app="w"),
            None,
            {"app": "w"},
            id="ReplicaSet, plain reader: pod labels",
        ),
        pytest.param(
            owned("ReplicaSet", app="w", x="y"),
            SelectorReader({"rs1": selector(app="w")}),
            {"app": "w"},
            id="ReplicaSet, reader knows it: its selector",
        ),
        pytest.param(
            owned("ReplicaSet", app="w"),
            SelectorReader({}),
            None,
            id="ReplicaSet the reader does not know: empty",
        ),
        pytest.param(
            owned("ReplicaSet", "extensions/v1beta1", app="w"),
            None,
            None,
            id="ReplicaSet of another API group version: empty",
        ),
        pytest.param(
            owned("StatefulSet", app="w"),
            SelectorReader({"rs1": selector(app="w")}),
            {"app": "w"},
            id="StatefulSet, reader knows it: its selector",
        ),
        pytest.param(
            owned("StatefulSet", app="w"), None, None, id="StatefulSet, plain reader: empty"
        ),
        pytest.param(
            owned("ReplicationController", "v1", app="w"),
            SelectorReader({"rs1": selector(app="w")}),
            {"app": "w"},
            id="ReplicationController, reader knows it: its selector",
        ),
        pytest.param(owned("Job", "batch/v1", app="w"), None, None, id="Job: empty"),
    ],
)
def test_default_selector(pod: Pod, reader: object, want: dict[str, str] | None) -> None:
    sel = default_selector(pod, reader)
    if want is None:
        assert sel.is_empty()
    else:
        assert not sel.is_empty()
        assert sel.matches(want)
        assert not sel.matches({})


def test_default_constraints_need_a_selector_and_follow_the_pod_labels() -> None:
    source = ConstraintSource(SYSTEM_DEFAULT_CONSTRAINTS, None)
    assert source.soft(Pod("p", labels={"app": "w"})) == ()
    a = source.soft(owned("ReplicaSet", app="w"))
    assert [(c.topology_key, c.max_skew) for c in a] == [(LABEL_HOSTNAME, 3), (LABEL_ZONE, 5)]
    assert source.hard(owned("ReplicaSet", app="w")) == ()
    b = source.soft(owned("ReplicaSet", app="v"))
    assert b[0].selector.matches({"app": "v"}) and not b[0].selector.matches({"app": "w"})


def test_constraints_are_cached_per_spec_and_match_label_values() -> None:
    spec = PodSpec(
        topology_spread_constraints=(
            TopologySpreadConstraint(1, "zone", DNS, LabelSelector(), match_label_keys=("v",)),
        )
    )
    source = ConstraintSource((), None)
    a1 = source.hard(Pod("a1", labels={"v": "1"}, spec=spec))
    a2 = source.hard(Pod("a2", labels={"v": "1"}, spec=spec))
    b = source.hard(Pod("b", labels={"v": "2"}, spec=spec))
    assert a1 is a2
    assert (
        b is not a1 and b[0].selector.matches({"v": "2"}) and not b[0].selector.matches({"v": "1"})
    )


def test_plugin_args() -> None:
    table = build_table([])
    assert plugin(table, SYSTEM).default_constraints == SYSTEM_DEFAULT_CONSTRAINTS
    assert plugin(table, None).system_defaulted
    listed = PodTopologySpreadArgs((TopologySpreadConstraint(1, "rack", DNS),), "List")
    p = plugin(table, listed)
    assert not p.system_defaulted and p.default_constraints == listed.default_constraints
    assert plugin(table, LIST).default_constraints == ()
    with pytest.raises(TypeError, match="want args to be of type PodTopologySpreadArgs"):
        PodTopologySpread(NodeAffinityArgs(), None)  # type: ignore[arg-type]
    assert PodTopologySpread.name == "PodTopologySpread"


def test_selector_keys_identify_requirements() -> None:
    a = Selector(selector(app="a"))
    b = Selector(replace(selector(app="a")))
    assert a.key == b.key
    assert Selector(None).key != Selector(LabelSelector()).key

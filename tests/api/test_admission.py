"""API-server admission of PriorityClasses and Pods (upstream-behaviour.md R1.2–R1.7)."""

from __future__ import annotations

import pytest

from kubesched.api.admission import (
    HIGHEST_USER_DEFINABLE_PRIORITY,
    POD_SCHEDULED,
    REASON_SCHEDULING_GATED,
    SCHEDULING_GATED_MESSAGE,
    SYSTEM_CLUSTER_CRITICAL,
    SYSTEM_CRITICAL_PRIORITY,
    SYSTEM_NODE_CRITICAL,
    SYSTEM_PRIORITY_CLASSES,
    PriorityClasses,
    admit_pod,
    prepare_pod_for_create,
    validate_priority_class,
)
from kubesched.api.errors import InputError
from kubesched.api.types import (
    Affinity,
    LabelSelector,
    LabelSelectorRequirement,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodCondition,
    PodSpec,
    PriorityClass,
    TopologySpreadConstraint,
)
from tests.builders import make_pod, selector

DEFAULT1 = PriorityClass("default1", 1000, global_default=True)
DEFAULT2 = PriorityClass("default2", 2000, global_default=True)
NONDEFAULT1 = PriorityClass("nondefault1", 2000, description="Just a test priority class")
NEVER_DEFAULT = PriorityClass(
    "nopreemptionpolicy", 2000, global_default=True, preemption_policy="Never"
)
LOWER = PriorityClass("lower", 2000, preemption_policy="PreemptLowerPriority")


def classes(*pcs: PriorityClass) -> PriorityClasses:
    reg = PriorityClasses()
    for pc in pcs:
        reg.add(pc)
    return reg


# --------------------------------------------------------------------------- constants


def test_constants_match_upstream() -> None:
    assert HIGHEST_USER_DEFINABLE_PRIORITY == 1_000_000_000
    assert SYSTEM_CRITICAL_PRIORITY == 2_000_000_000
    by_name = {pc.name: pc for pc in SYSTEM_PRIORITY_CLASSES}
    assert by_name[SYSTEM_NODE_CRITICAL].value == 2_000_001_000
    assert by_name[SYSTEM_CLUSTER_CRITICAL].value == 2_000_000_000
    assert not any(pc.global_default for pc in SYSTEM_PRIORITY_CLASSES)
    assert all(pc.preemption_policy == "PreemptLowerPriority" for pc in SYSTEM_PRIORITY_CLASSES)


def test_registry_has_builtin_system_classes() -> None:
    reg = PriorityClasses()
    assert SYSTEM_NODE_CRITICAL in reg and SYSTEM_CLUSTER_CRITICAL in reg
    assert len(reg) == 2
    assert reg.default() is None


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("pc", "expected"),
    [
        pytest.param(PriorityClass("gold", 1000), [], id="a user class is valid"),
        pytest.param(PriorityClass("neg", -(2**31)), [], id="negative values are allowed"),
        pytest.param(PriorityClass("top", 1_000_000_000), [], id="exactly 1e9 is allowed"),
        pytest.param(
            PriorityClass("too-high", 1_000_000_001),
            ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"],
            id="a user class above 1e9 is forbidden",
        ),
        pytest.param(
            PriorityClass(SYSTEM_NODE_CRITICAL, 2_000_001_000),
            [],
            id="the exact system class is valid",
        ),
        pytest.param(
            PriorityClass(SYSTEM_NODE_CRITICAL, 5),
            [
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved "
                "for system use only. error: value of system-node-critical PriorityClass must be "
                "2000001000"
            ],
            id="a system name with another value is forbidden",
        ),
        pytest.param(
            PriorityClass(SYSTEM_CLUSTER_CRITICAL, 2_000_000_000, global_default=True),
            [
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved "
                "for system use only. error: globalDefault of system-cluster-critical "
                "PriorityClass must be false"
            ],
            id="a system name as global default is forbidden",
        ),
        pytest.param(
            PriorityClass("system-test", HIGHEST_USER_DEFINABLE_PRIORITY + 1),
            [
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved "
                "for system use only. error: system-test is not a known system priority class"
            ],
            id="an unknown system- name is forbidden (and its value is not checked again)",
        ),
        pytest.param(
            PriorityClass("gold", 10, preemption_policy="Sometimes"),
            [
                'preemptionPolicy: Unsupported value: "Sometimes": supported values: '
                '"PreemptLowerPriority", "Never"'
            ],
            id="an unknown preemptionPolicy is unsupported",
        ),
        pytest.param(
            PriorityClass("gold", 10, preemption_policy=""),
            ["preemptionPolicy: Required value"],
            id="an empty preemptionPolicy is required",
        ),
        pytest.param(
            PriorityClass("too-high", 2_000_000_000, preemption_policy="x"),
            [
                "value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
                'preemptionPolicy: Unsupported value: "x": supported values: '
                '"PreemptLowerPriority", "Never"',
            ],
            id="all errors are reported in upstream's order",
        ),
    ],
)
def test_validate_priority_class(pc: PriorityClass, expected: list[str]) -> None:
    assert validate_priority_class(pc) == expected


# --------------------------------------------------------------------------- registry


def test_add_rejects_invalid_class_with_field_and_object() -> None:
    with pytest.raises(InputError) as exc:
        PriorityClasses().add(PriorityClass("too-high", 1_000_000_001))
    assert exc.value.obj == "priorityclass too-high"
    assert exc.value.field == "value"
    assert exc.value.message == (
        "Forbidden: maximum allowed value of a user defined priority is 1000000000"
    )


@pytest.mark.parametrize(
    ("existing", "new", "error"),
    [
        pytest.param(
            [], DEFAULT1, None, id="TestPriorityClassAdmission/create operator with default class"
        ),
        pytest.param(
            [DEFAULT1],
            DEFAULT2,
            "PriorityClass default1 is already marked as default. Only one default can exist",
            id="TestPriorityClassAdmission/create operator with one existing default class",
        ),
        pytest.param([DEFAULT1], NONDEFAULT1, None, id="a non-default class next to a default one"),
    ],
)
def test_add_global_default(
    existing: list[PriorityClass], new: PriorityClass, error: str | None
) -> None:
    reg = classes(*existing)
    if error is None:
        reg.add(new)
        assert reg.get(new.name) is new
        return
    with pytest.raises(InputError) as exc:
        reg.add(new)
    assert exc.value.message == error
    assert exc.value.field == "globalDefault"
    assert reg.get(new.name) is None


def test_add_accepts_a_copy_of_a_builtin_class() -> None:
    reg = PriorityClasses()
    reg.add(PriorityClass(SYSTEM_CLUSTER_CRITICAL, SYSTEM_CRITICAL_PRIORITY, description="dumped"))
    assert len(reg) == 2
    cluster_critical = reg.get(SYSTEM_CLUSTER_CRITICAL)
    assert cluster_critical is not None and cluster_critical.description != "dumped"


def test_add_rejects_a_second_class_of_the_same_name() -> None:
    reg = classes(NONDEFAULT1)
    with pytest.raises(InputError, match='"nondefault1" already exists'):
        reg.add(PriorityClass("nondefault1", 5))


def test_default_is_the_lowest_value_among_global_defaults() -> None:
    """TestDefaultPriority/multiple default classes resolves to the minimum value among them:
    ``add`` cannot create two defaults, so build the race state directly."""
    reg = classes(DEFAULT2)
    reg._by_name[DEFAULT1.name] = DEFAULT1  # the state a create race leaves behind
    assert reg.default() is DEFAULT1


# --------------------------------------------------------------------------- pods


def _pod(pc_name: str = "", namespace: str = "namespace") -> Pod:
    return (
        make_pod("p", namespace).priority_class(pc_name).obj()
        if pc_name
        else make_pod("p", namespace).obj()
    )


@pytest.mark.parametrize(
    ("existing", "pc_name", "spec_priority", "spec_policy", "want"),
    [
        pytest.param(
            [DEFAULT1, NONDEFAULT1],
            "default1",
            None,
            None,
            (1000, "default1", "PreemptLowerPriority"),
            id="TestPodAdmission/Pod with priority class",
        ),
        pytest.param(
            [DEFAULT1],
            "",
            None,
            None,
            (1000, "default1", "PreemptLowerPriority"),
            id="TestPodAdmission/Pod without priority class takes the default class and its name",
        ),
        pytest.param(
            [],
            "",
            None,
            None,
            (0, "", "PreemptLowerPriority"),
            id="TestPodAdmission/pod without priority class and no existing priority class",
        ),
        pytest.param(
            [NONDEFAULT1],
            "",
            None,
            None,
            (0, "", "PreemptLowerPriority"),
            id="TestPodAdmission/pod without priority class and no default class",
        ),
        pytest.param(
            [],
            SYSTEM_CLUSTER_CRITICAL,
            None,
            None,
            (2_000_000_000, SYSTEM_CLUSTER_CRITICAL, "PreemptLowerPriority"),
            id="TestPodAdmission/pod with a system priority class (built in)",
        ),
        pytest.param(
            [],
            SYSTEM_NODE_CRITICAL,
            None,
            None,
            (2_000_001_000, SYSTEM_NODE_CRITICAL, "PreemptLowerPriority"),
            id="TestPodAdmission/pod with system critical priority in non-system namespace",
        ),
        pytest.param(
            [NONDEFAULT1],
            "",
            0,
            None,
            (0, "", "PreemptLowerPriority"),
            id="TestPodAdmission/pod with priority that matches computed priority",
        ),
        pytest.param(
            [DEFAULT2],
            "",
            2000,
            None,
            (2000, "default2", "PreemptLowerPriority"),
            id="TestPodAdmission/pod with priority that matches default priority",
        ),
        pytest.param(
            [],
            SYSTEM_CLUSTER_CRITICAL,
            2_000_000_000,
            None,
            (2_000_000_000, SYSTEM_CLUSTER_CRITICAL, "PreemptLowerPriority"),
            id="TestPodAdmission/pod with priority that matches resolved priority",
        ),
        pytest.param(
            [NEVER_DEFAULT],
            "nopreemptionpolicy",
            2000,
            None,
            (2000, "nopreemptionpolicy", "Never"),
            id="TestPodAdmission/pod with nil preemption policy takes the class's Never",
        ),
        pytest.param(
            [NEVER_DEFAULT],
            "",
            None,
            None,
            (2000, "nopreemptionpolicy", "Never"),
            id="a pod without class takes the default class's preemption policy",
        ),
        pytest.param(
            [LOWER],
            "lower",
            2000,
            "PreemptLowerPriority",
            (2000, "lower", "PreemptLowerPriority"),
            id="TestPodAdmission/pod with preemption policy that matches resolved policy",
        ),
    ],
)
def test_admit_pod(
    existing: list[PriorityClass],
    pc_name: str,
    spec_priority: int | None,
    spec_policy: str | None,
    want: tuple[int, str, str],
) -> None:
    pod = _pod(pc_name)
    pod.preemption_policy = spec_policy or "PreemptLowerPriority"
    admit_pod(pod, classes(*existing), spec_priority, spec_policy)
    assert (pod.priority, pod.priority_class_name, pod.preemption_policy) == want


@pytest.mark.parametrize(
    ("existing", "pc_name", "spec_priority", "spec_policy", "field", "message"),
    [
        pytest.param(
            [DEFAULT1, NONDEFAULT1],
            "non-existing",
            None,
            None,
            "spec.priorityClassName",
            "no PriorityClass with name non-existing was found",
            id="TestPodAdmission/Pod with non-existing priority class",
        ),
        pytest.param(
            [DEFAULT1],
            "default1",
            5,
            None,
            "spec.priority",
            "the integer value of priority (5) must not be provided in pod spec; priority "
            "admission controller computed 1000 from the given PriorityClass name",
            id="TestPodAdmission/pod with integer priority different from its class",
        ),
        pytest.param(
            [],
            "",
            1000,
            None,
            "spec.priority",
            "the integer value of priority (1000) must not be provided in pod spec; priority "
            "admission controller computed 0 from the given PriorityClass name",
            id="TestPodAdmission/pod with integer priority and no class",
        ),
        pytest.param(
            [LOWER],
            "lower",
            2000,
            "Never",
            "spec.preemptionPolicy",
            "the string value of PreemptionPolicy (Never) must not be provided in pod spec; "
            "priority admission controller computed PreemptLowerPriority from the given "
            "PriorityClass name",
            id="TestPodAdmission/pod with preemption policy that doesn't match resolved policy",
        ),
        pytest.param(
            [],
            "",
            None,
            "Never",
            "spec.preemptionPolicy",
            "the string value of PreemptionPolicy (Never) must not be provided in pod spec; "
            "priority admission controller computed PreemptLowerPriority from the given "
            "PriorityClass name",
            id="with no default class the computed policy is PreemptLowerPriority: Never rejected",
        ),
    ],
)
def test_admit_pod_rejects(
    *,
    existing: list[PriorityClass],
    pc_name: str,
    spec_priority: int | None,
    spec_policy: str | None,
    field: str,
    message: str,
) -> None:
    pod = _pod(pc_name)
    before = (pod.priority, pod.priority_class_name, pod.preemption_policy)
    with pytest.raises(InputError) as exc:
        admit_pod(pod, classes(*existing), spec_priority, spec_policy)
    assert exc.value.field == field
    assert exc.value.message == message
    assert exc.value.obj == "pod namespace/p"
    assert (pod.priority, pod.priority_class_name, pod.preemption_policy) == before


def test_admit_error_renders_one_line_with_object_and_field() -> None:
    with pytest.raises(InputError) as exc:
        admit_pod(make_pod("web-1").priority_class("gold").obj(), PriorityClasses(), None, None)
    assert str(exc.value) == (
        "pod default/web-1: spec.priorityClassName: no PriorityClass with name gold was found"
    )


# --------------------------------------------------------------------------- create mutations


def _term(
    sel: LabelSelector | None, match: tuple[str, ...] = (), mismatch: tuple[str, ...] = ()
) -> PodAffinityTerm:
    return PodAffinityTerm(sel, "zone", match_label_keys=match, mismatch_label_keys=mismatch)


def _anti_pod(term: PodAffinityTerm, **labels: str) -> Pod:
    spec = PodSpec(affinity=Affinity(pod_anti_affinity=PodAffinity(required=(term,))))
    return Pod("p", labels=labels, spec=spec)


def _exprs(sel: LabelSelector | None) -> list[tuple[str, str, tuple[str, ...]]]:
    assert sel is not None
    return [(r.key, r.operator, r.values) for r in sel.match_expressions]


def test_match_and_mismatch_label_keys_merge_into_affinity_selector() -> None:
    pod = _anti_pod(
        _term(selector(app="x"), match=("version",), mismatch=("tenant", "absent")),
        version="v1",
        tenant="t1",
    )
    prepare_pod_for_create(pod)
    aff = pod.spec.affinity
    assert aff is not None and aff.pod_anti_affinity is not None
    term = aff.pod_anti_affinity.required[0]
    assert _exprs(term.label_selector) == [("version", "In", ("v1",)), ("tenant", "NotIn", ("t1",))]
    assert term.label_selector is not None and dict(term.label_selector.match_labels) == {
        "app": "x"
    }


def test_label_keys_are_not_merged_into_a_nil_selector() -> None:
    pod = _anti_pod(_term(None, match=("version",)), version="v1")
    spec = pod.spec
    prepare_pod_for_create(pod)
    aff = pod.spec.affinity
    assert aff is not None and aff.pod_anti_affinity is not None
    assert aff.pod_anti_affinity.required[0].label_selector is None
    assert pod.spec is spec


def test_match_label_keys_merge_into_topology_spread_selector_and_share_results() -> None:
    base = (
        make_pod("a")
        .labels(app="x", hash="h1")
        .spread(1, "zone", "DoNotSchedule", selector(app="x"), match_label_keys=("hash",))
        .obj()
    )
    twin = Pod("b", labels={"app": "x", "hash": "h1"}, spec=base.spec)
    other = Pod("c", labels={"app": "x", "hash": "h2"}, spec=base.spec)
    for p in (base, twin, other):
        prepare_pod_for_create(p)
    c: TopologySpreadConstraint = base.spec.topology_spread_constraints[0]
    assert _exprs(c.label_selector) == [("hash", "In", ("h1",))]
    assert twin.spec is base.spec, "pods of one template with equal label values share the spec"
    assert _exprs(other.spec.topology_spread_constraints[0].label_selector) == [
        ("hash", "In", ("h2",))
    ]


def test_pod_without_label_keys_keeps_its_spec() -> None:
    pod = make_pod("p").spread(1, "zone", "DoNotSchedule", selector(app="x")).obj()
    spec = pod.spec
    prepare_pod_for_create(pod)
    assert pod.spec is spec
    assert pod.conditions == []


def test_scheduling_gated_condition_is_added_once() -> None:
    pod = make_pod("p").scheduling_gates("g1").obj()
    prepare_pod_for_create(pod)
    cond = pod.condition(POD_SCHEDULED)
    assert cond is not None
    assert (cond.status, cond.reason, cond.message) == (
        "False",
        REASON_SCHEDULING_GATED,
        SCHEDULING_GATED_MESSAGE,
    )
    prepare_pod_for_create(pod)
    assert len(pod.conditions) == 1


def test_scheduling_gated_condition_not_added_over_existing_pod_scheduled() -> None:
    pod = make_pod("p").scheduling_gates("g1").condition(POD_SCHEDULED, "True").obj()
    prepare_pod_for_create(pod)
    assert pod.conditions == [pod.conditions[0]] and pod.conditions[0].status == "True"
    assert isinstance(pod.conditions[0], PodCondition)


def test_requirement_type_is_label_selector_requirement() -> None:
    pod = _anti_pod(_term(selector(app="x"), match=("version",)), version="v1")
    prepare_pod_for_create(pod)
    aff = pod.spec.affinity
    assert aff is not None and aff.pod_anti_affinity is not None
    sel = aff.pod_anti_affinity.required[0].label_selector
    assert sel is not None and all(
        isinstance(r, LabelSelectorRequirement) for r in sel.match_expressions
    )

"""The retention policy's ownership rules (sim/controllers/claim_owners.py) against
upstream's table tests in pkg/controller/statefulset/stateful_set_utils_test.go:
TestMatchesRef, TestHasOwnerRef, TestHasStaleOwnerRef, TestHasUnexpectedController,
TestNonController, TestIsClaimOwnerUpToDate, TestClaimOwnerUpToDateEdgeCases,
TestUpdateClaimOwnerRefForSetAndPod, TestUpdateClaimControllerRef,
TestGetParentNameAndOrdinal (getOrdinal). Cases, names and expectations are
upstream's; a Python test per table, one ``pytest.param`` per case."""

from __future__ import annotations

from collections import Counter

import pytest

from kubesched.api.claim_templates import DELETE, RETAIN, RetentionPolicy
from kubesched.api.types import OwnerReference
from kubesched.sim.controllers.claim_owners import (
    Obj,
    SetView,
    get_ordinal,
    has_non_controller_owner,
    has_owner_ref,
    has_stale_owner_ref,
    has_unexpected_controller,
    is_claim_owner_up_to_date,
    matches_ref,
    pod_obj,
    updated_owner_refs,
)


def ref(api: str, kind: str, name: str, uid: str = "", controller: bool = False) -> OwnerReference:
    return OwnerReference(api, kind, name, uid, controller)


def view(name: str, uid: str, scaled: str, deleted: str, replicas: int = 1) -> SetView:
    return SetView(
        name, uid, RetentionPolicy(when_deleted=deleted, when_scaled=scaled), 0, replicas
    )


def controller_ref_to(obj: Obj) -> OwnerReference:
    """addControllerRef's reference (metav1.NewControllerRef)."""
    return OwnerReference(obj.api_version, obj.kind, obj.name, obj.uid, True)


# --------------------------------------------------------------------------- getOrdinal


@pytest.mark.parametrize(
    ("name", "ordinal"),
    [
        pytest.param("foo-1", 1, id="TestGetParentNameAndOrdinal/member"),
        pytest.param("1-bar", -1, id="TestGetParentNameAndOrdinal/non-member"),
        # statefulPodRegex "(.*)-([0-9]+)$" and strconv.ParseInt(.., 10, 32):
        pytest.param("my-set-20", 20, id="greedy-prefix"),
        pytest.param("web-007", 7, id="leading-zeros-parse"),
        pytest.param("web-2147483647", 2147483647, id="int32-max"),
        pytest.param("web-2147483648", -1, id="int32-overflow"),
    ],
)
def test_get_ordinal(name: str, ordinal: int) -> None:
    assert get_ordinal(name) == ordinal


# --------------------------------------------------------------------------- matchesRef


POD_FRED = Obj("v1", "Pod", "fred", "abc")


@pytest.mark.parametrize(
    ("reference", "obj", "match"),
    [
        pytest.param(ref("v1", "Pod", "fred", "abc"), POD_FRED, True, id="full match"),
        pytest.param(
            ref("v1", "Pod", "fred", "abc"),
            Obj("v1", "Pod", "fred", "not-matching"),
            True,
            id="match without UID",
        ),
        pytest.param(
            ref("v1", "Pod", "fred", "abc"),
            Obj("v1", "Pod", "joan", "abc"),
            False,
            id="mismatch name",
        ),
        pytest.param(ref("beta2", "Pod", "fred", "abc"), POD_FRED, False, id="wrong schema"),
    ],
)
def test_matches_ref(reference: OwnerReference, obj: Obj, match: bool) -> None:
    """TestMatchesRef."""
    assert matches_ref(reference, obj) is match


# --------------------------------------------------------------------------- hasOwnerRef

TARGET_REFS = (
    ref("", "", "", "123", True),
    ref("", "", "", "456", False),
    ref("", "", "", "789"),
)


@pytest.mark.parametrize(
    ("uid", "has"),
    [
        pytest.param("123", True, id="TestHasOwnerRef/123"),
        pytest.param("456", True, id="TestHasOwnerRef/456"),
        pytest.param("789", True, id="TestHasOwnerRef/789"),
        pytest.param("012", False, id="TestHasOwnerRef/012"),
    ],
)
def test_has_owner_ref(uid: str, has: bool) -> None:
    assert has_owner_ref(TARGET_REFS, uid) is has


@pytest.mark.parametrize(
    ("owner", "stale"),
    [
        pytest.param(pod_obj("bob", "123"), False, id="TestHasStaleOwnerRef/ownerA"),
        pytest.param(pod_obj("shirley", "789"), True, id="TestHasStaleOwnerRef/ownerB"),
        pytest.param(pod_obj("yvonne", "345"), False, id="TestHasStaleOwnerRef/ownerC"),
    ],
)
def test_has_stale_owner_ref(owner: Obj, stale: bool) -> None:
    refs = (ref("v1", "Pod", "bob", "123"), ref("v1", "Pod", "shirley", "456"))
    assert has_stale_owner_ref(refs, owner) is stale


# ----------------------------------------------------------------- hasUnexpectedController


@pytest.mark.parametrize(
    ("refs", "unexpected"),
    [
        pytest.param(
            (ref("chipmunks/v1", "CustomController", "simon", "other-uid", True),),
            True,
            id="custom controller",
        ),
        pytest.param(
            (ref("chipmunks/v1", "CustomController", "simon", "other-uid", False),),
            False,
            id="custom non-controller",
        ),
        pytest.param(
            (ref("chipmunks/v1", "CustomController", "simon", "other-uid"),),
            False,
            id="custom unspecified controller",
        ),
        pytest.param(
            (ref("v1", "Pod", "simon", "other-uid", True),), True, id="other pod controller"
        ),
        pytest.param(
            (ref("apps/v1", "Set", "simon", "other-uid", True),), True, id="other set controller"
        ),
        pytest.param(
            (ref("apps/v1", "StatefulSet", "set", "set-uid", True),),
            False,
            id="own set controller",
        ),
        pytest.param(
            (ref("apps/v1", "StatefulSet", "set", "stale-uid", True),),
            True,
            id="own set controller, stale uid",
        ),
        pytest.param((ref("v1", "Pod", "pod", "pod-uid", True),), False, id="own pod controller"),
        pytest.param(
            (ref("v1", "Pod", "pod", "stale-uid", True),),
            True,
            id="own pod controller, stale uid",
        ),
        pytest.param(
            (
                ref("v1", "Pod", "pod", "pod-uid", True),
                ref("chipmunks/v1", "CustomController", "simon", "other-uid", True),
            ),
            True,
            id="own controller and another",
        ),
        pytest.param(
            (
                ref("v1", "Pod", "pod", "pod-uid", True),
                ref("chipmunks/v1", "CustomController", "simon", "other-uid", False),
            ),
            False,
            id="own controller and a non-controller",
        ),
    ],
)
def test_has_unexpected_controller(refs: tuple[OwnerReference, ...], unexpected: bool) -> None:
    """TestHasUnexpectedController: never under Retain/Retain (the default policy);
    the table's answer under the three other policies."""
    pod = pod_obj("pod", "pod-uid")
    assert has_unexpected_controller(refs, view("set", "set-uid", RETAIN, RETAIN), pod) is False
    for scaled, deleted in ((DELETE, RETAIN), (RETAIN, DELETE), (DELETE, DELETE)):
        got = has_unexpected_controller(refs, view("set", "set-uid", scaled, deleted), pod)
        assert got is unexpected, (scaled, deleted)


@pytest.mark.parametrize(
    ("refs", "non_controller"),
    [
        pytest.param(
            (ref("v1", "Pod", "pod", "pod", True), ref("apps/v1", "Set", "set", "set", True)),
            False,
            id="set and pod controller",
        ),
        pytest.param(
            (ref("v1", "Pod", "pod", "pod"), ref("apps/v1", "Set", "set", "set", True)),
            True,
            id="set controller, pod noncontroller",
        ),
        pytest.param(
            (ref("v1", "Pod", "pod", "pod", True), ref("apps/v1", "Set", "set", "set")),
            True,
            id="set noncontroller, pod controller",
        ),
        pytest.param((ref("apps/v1", "Set", "set", "set", True),), False, id="set controller"),
        pytest.param((ref("v1", "Pod", "pod", "pod", True),), False, id="pod controller"),
        pytest.param((), False, id="nothing"),
        pytest.param((ref("apps/v1", "Set", "set", "set"),), True, id="set noncontroller"),
        pytest.param(
            (ref("apps/v1", "Set", "set", "set", False),), True, id="set noncontroller with ptr"
        ),
        pytest.param((ref("v1", "pod", "pod", "pod"),), True, id="pod noncontroller"),
        pytest.param((ref("v1", "pod", "pod", "not-matching"),), False, id="other noncontroller"),
    ],
)
def test_has_non_controller_owner(refs: tuple[OwnerReference, ...], non_controller: bool) -> None:
    """TestNonController."""
    got = has_non_controller_owner(refs, view("set", "set", RETAIN, RETAIN), pod_obj("pod", "pod"))
    assert got is non_controller


# --------------------------------------------------------------------------- isClaimOwnerUpToDate


@pytest.mark.parametrize(
    ("scaled", "deleted", "needs_pod_ref", "needs_set_ref", "replicas", "ordinal"),
    [
        pytest.param(RETAIN, RETAIN, False, False, 0, 0, id="retain"),
        pytest.param(RETAIN, DELETE, False, True, 0, 0, id="on SS delete"),
        pytest.param(DELETE, RETAIN, True, False, 2, 2, id="on scaledown only, condemned"),
        pytest.param(DELETE, RETAIN, False, False, 2, 1, id="on scaledown only, remains"),
        pytest.param(DELETE, DELETE, True, False, 2, 2, id="on both, condemned"),
        pytest.param(DELETE, DELETE, False, True, 2, 1, id="on both, remains"),
    ],
)
@pytest.mark.parametrize("other_refs", [False, True], ids=["", "others"])
@pytest.mark.parametrize("pod_ref", [False, True], ids=["", "podRef"])
@pytest.mark.parametrize("set_ref", [False, True], ids=["", "setRef"])
def test_is_claim_owner_up_to_date(
    scaled: str,
    deleted: str,
    needs_pod_ref: bool,
    needs_set_ref: bool,
    replicas: int,
    ordinal: int,
    other_refs: bool,
    pod_ref: bool,
    set_ref: bool,
) -> None:
    """TestIsClaimOwnerUpToDate: up to date exactly when the pod and set references
    are the ones the policy wants (other owners, not controllers, do not matter)."""
    pod = pod_obj(f"pod-{ordinal}", "pod-123")
    sts = view("stateful-set", "ss-456", scaled, deleted, replicas)
    refs: list[OwnerReference] = []
    if pod_ref:
        refs.append(controller_ref_to(pod))
    if set_ref:
        refs.append(controller_ref_to(sts.obj))
    if other_refs:
        refs += [ref("v1", "Pod", "rand1", "rand1-uid"), ref("v1", "Pod", "rand2", "rand2-uid")]
    expected = pod_ref == needs_pod_ref and set_ref == needs_set_ref
    assert is_claim_owner_up_to_date(tuple(refs), sts, pod) is expected


@pytest.mark.parametrize(
    ("refs", "scaled", "deleted", "match"),
    [
        pytest.param(
            (ref("v1", "Pod", "pod-1", "pod-123", True),),
            DELETE,
            DELETE,
            True,
            id="normal controller, pod",
        ),
        pytest.param(
            (ref("v1", "Pod", "pod-1", "pod-123"),),
            DELETE,
            DELETE,
            False,
            id="non-controller causes policy mismatch, pod",
        ),
        pytest.param(
            (ref("v1", "Pod", "pod-1", "pod-stale", True),),
            DELETE,
            DELETE,
            True,
            id="stale controller does not affect policy, pod",
        ),
        pytest.param(
            (
                ref("v1", "Pod", "pod-1", "pod-123", True),
                ref("v1", "Pod", "Random", "random", True),
            ),
            DELETE,
            DELETE,
            False,
            id="unexpected controller causes policy mismatch, pod",
        ),
        pytest.param(
            (ref("apps/v1", "StatefulSet", "stateful-set", "ss-456", True),),
            RETAIN,
            DELETE,
            True,
            id="normal controller, set",
        ),
        pytest.param(
            (ref("appsv1", "StatefulSet", "stateful-set", "ss-456"),),
            RETAIN,
            DELETE,
            False,
            id="non-controller causes policy mismatch, set",
        ),
        pytest.param(
            (ref("apps/v1", "StatefulSet", "stateful-set", "set-stale", True),),
            RETAIN,
            DELETE,
            True,
            id="stale controller ignored, set",
        ),
        pytest.param(
            (
                ref("apps/v1", "StatefulSet", "stateful-set", "ss-456", True),
                ref("apps/v1", "StatefulSet", "Random", "random", True),
            ),
            RETAIN,
            DELETE,
            False,
            id="unexpected controller causes policy mismatch, set",
        ),
    ],
)
def test_claim_owner_up_to_date_edge_cases(
    refs: tuple[OwnerReference, ...], scaled: str, deleted: str, match: bool
) -> None:
    """TestClaimOwnerUpToDateEdgeCases (pod-1 of a 1-replica set: condemned)."""
    sts = view("stateful-set", "ss-456", scaled, deleted, replicas=1)
    assert is_claim_owner_up_to_date(refs, sts, pod_obj("pod-1", "pod-123")) is match


# --------------------------------------------------------- updateClaimOwnerRefForSetAndPod


@pytest.mark.parametrize(
    ("scaled", "deleted", "condemned", "needs_pod_ref", "needs_set_ref", "unexpected"),
    [
        pytest.param(RETAIN, RETAIN, False, False, False, False, id="retain"),
        pytest.param(RETAIN, DELETE, False, False, True, False, id="delete with set"),
        pytest.param(
            DELETE, RETAIN, False, False, False, False, id="delete with scaledown, not condemned"
        ),
        pytest.param(DELETE, RETAIN, True, True, False, False, id="delete on scaledown, condemned"),
        pytest.param(DELETE, DELETE, False, False, True, False, id="delete on both, not condemned"),
        pytest.param(DELETE, DELETE, True, True, False, False, id="delete on both, condemned"),
        pytest.param(DELETE, DELETE, True, False, False, True, id="unexpected controller"),
    ],
)
@pytest.mark.parametrize("variation", range(8))
def test_update_claim_owner_ref_for_set_and_pod(
    scaled: str,
    deleted: str,
    condemned: bool,
    needs_pod_ref: bool,
    needs_set_ref: bool,
    unexpected: bool,
    variation: int,
) -> None:
    """TestUpdateClaimOwnerRefForSetAndPod: afterwards the pod, or the set, is a
    controller of the claim exactly when the policy wants it (a 5-replica set:
    pod-8 is condemned, pod-1 is not)."""
    sts = view("ss", "ss-123", scaled, deleted, replicas=5)
    pod = pod_obj("pod-8" if condemned else "pod-1", "pod-456")
    refs: list[OwnerReference] = []
    if variation & 1:
        refs.append(controller_ref_to(pod))
    if variation & 2:
        refs.append(controller_ref_to(sts.obj))
    if variation & 3:  # upstream's `extraOwner := (variations & 3) != 0`
        refs.append(ref("custom/v1", "random", "random", "abc"))
    if unexpected:
        refs.append(ref("custom/v1", "Unknown", "unknown", "xyz", True))
    got = updated_owner_refs(tuple(refs), sts, pod)

    def controls(uid: str) -> bool:
        for r in got:
            if r.uid == uid:
                return r.controller
        return False

    assert controls("pod-456") is needs_pod_ref
    assert controls("ss-123") is needs_set_ref


@pytest.mark.parametrize(
    ("original", "expected"),
    [
        pytest.param(
            (ref("apps/v1", "StatefulSet", "sts", "123", True), ref("someone", "Else", "foo")),
            (ref("apps/v1", "StatefulSet", "sts", "123", True), ref("someone", "Else", "foo")),
            id="set correctly",
        ),
        pytest.param(
            (ref("apps/v1", "StatefulSet", "sts", "123"),),
            (ref("apps/v1", "StatefulSet", "sts", "123", True),),
            id="missing controller",
        ),
        pytest.param(
            (ref("someone", "else", "sts", "456"),),
            (
                ref("someone", "else", "sts", "456"),
                ref("apps/v1", "StatefulSet", "sts", "123", True),
            ),
            id="matching name but missing",
        ),
        pytest.param((), (ref("apps/v1", "StatefulSet", "sts", "123", True),), id="not present"),
        # A reference to the set without its uid is a stale one: scrubbed, nothing added.
        pytest.param(
            (ref("apps/v1", "StatefulSet", "sts", "", True),), (), id="controller, but no UID"
        ),
        pytest.param((ref("apps/v1", "StatefulSet", "sts"),), (), id="neither controller nor UID"),
    ],
)
def test_update_claim_controller_ref(
    original: tuple[OwnerReference, ...], expected: tuple[OwnerReference, ...]
) -> None:
    """TestUpdateClaimControllerRef (Delete/Delete, pod-0 of a 1-replica set: the set
    controls the claim). Compared as upstream's ownerRefsChanged does: the same
    (apiVersion, kind, name) references, in any order."""
    sts = view("sts", "123", DELETE, DELETE, replicas=1)
    got = updated_owner_refs(original, sts, pod_obj("pod-0", "456"))

    def key(r: OwnerReference) -> tuple[str, str, str]:
        return (r.api_version, r.kind, r.name)

    assert Counter(map(key, got)) == Counter(map(key, expected))

"""``why_pending``: groups, samples, the folded tail and the preemption split,
on hand-built diagnoses (explicit, absent and deferred node statuses)."""

from __future__ import annotations

import numpy as np

from kubesched.api.types import Pod
from kubesched.explain.pending import MAX_GROUPS, why_pending
from kubesched.framework.results import Diagnosis, FitError, LazyNodeToStatus, NodeToStatus
from kubesched.framework.status import Code, Status

NAMES = [f"n{i}" for i in range(10)]
FIT = "NodeResourcesFit"


def fit_error(statuses: NodeToStatus, n: int = len(NAMES), **diag: str) -> FitError:
    return FitError(Pod("p", "default"), n, Diagnosis(statuses, **diag))


def test_groups_count_every_reason_with_samples_in_recorded_order() -> None:
    cpu = Status(Code.UNSCHEDULABLE, "Insufficient cpu", plugin=FIT)
    both = Status(Code.UNSCHEDULABLE, "Insufficient cpu", "Insufficient memory", plugin=FIT)
    taint = Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "node(s) had untolerated taint(s)",
        plugin="TaintToleration",
    )
    statuses = NodeToStatus(
        {"n4": cpu, "n1": both, "n2": cpu, "n7": taint, "n3": cpu, "n0": both},
        absent=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "not evaluated", plugin=""),
    )
    got = why_pending(fit_error(statuses), NAMES)
    by_reason = {g["reason"]: g for g in got["reasons"]}
    assert [g["reason"] for g in got["reasons"]] == [
        "Insufficient cpu",  # 5 nodes (two carry two reasons)
        "not evaluated",  # 4 absent nodes: n5, n6, n8, n9
        "Insufficient memory",
        "node(s) had untolerated taint(s)",
    ]
    assert by_reason["Insufficient cpu"]["nodes"] == 5
    assert by_reason["Insufficient cpu"]["sampleNodes"] == ["n4", "n1", "n2"]
    assert by_reason["Insufficient memory"]["sampleNodes"] == ["n1", "n0"]
    assert by_reason["not evaluated"] == {
        "plugin": None,
        "code": "UnschedulableAndUnresolvable",
        "reason": "not evaluated",
        "nodes": 4,
        "sampleNodes": ["n5", "n6", "n8"],
    }
    assert by_reason["node(s) had untolerated taint(s)"]["plugin"] == "TaintToleration"
    assert got["dominantReason"] == "Insufficient cpu"
    assert got["preemptionMayHelp"] == 5
    assert got["preemptionCannotHelp"] == 5  # one tainted, four never evaluated
    assert got["otherReasons"] == 0
    assert "preFilter" not in got and "postFilter" not in got


def test_many_reasons_are_folded_and_stay_bounded() -> None:
    names = [f"n{i}" for i in range(40)]
    statuses = NodeToStatus(
        {
            n: Status(Code.UNSCHEDULABLE, f"reason {i % 20:02d}", plugin="P")
            for i, n in enumerate(names)
        }
    )
    got = why_pending(fit_error(statuses, len(names)), names)
    assert len(got["reasons"]) == MAX_GROUPS
    assert got["otherReasons"] == 20 - MAX_GROUPS
    assert all(len(g["sampleNodes"]) == 2 for g in got["reasons"])
    assert got["reasons"][0]["reason"] == "reason 00"  # ties: by plugin, code, reason


def test_deferred_statuses_are_counted_without_a_per_node_walk_of_their_own() -> None:
    lazy = LazyNodeToStatus()
    cpu = Status(Code.UNSCHEDULABLE, "Insufficient cpu", plugin=FIT)
    sel = Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "node(s) didn't match Pod's node affinity/selector",
        plugin="NodeAffinity",
    )
    lazy.defer(tuple(NAMES), np.arange(10), np.array([0, 1] * 5), [cpu, sel])
    got = why_pending(fit_error(lazy), NAMES)
    assert [(g["reason"], g["nodes"], g["sampleNodes"]) for g in got["reasons"]] == [
        # a tie: by plugin name
        ("node(s) didn't match Pod's node affinity/selector", 5, ["n1", "n3", "n5"]),
        ("Insufficient cpu", 5, ["n0", "n2", "n4"]),
    ]
    assert (got["preemptionMayHelp"], got["preemptionCannotHelp"]) == (5, 5)


def test_pre_filter_and_post_filter_messages_are_named() -> None:
    statuses = NodeToStatus(
        absent=Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "node(s) didn't satisfy plugin(s) [NodeAffinity]",
            plugin="NodeAffinity",
        )
    )
    diag = Diagnosis(
        statuses,
        unschedulable_plugins={"NodeAffinity"},
        pre_filter_msg="node(s) didn't satisfy plugin(s) [NodeAffinity]",
        post_filter_msg="preemption: not eligible",
    )
    got = why_pending(FitError(Pod("p", "default"), 3, diag), NAMES[:3])
    assert got["preFilter"] == {
        "plugins": ["NodeAffinity"],
        "message": "node(s) didn't satisfy plugin(s) [NodeAffinity]",
    }
    assert got["postFilter"] == "preemption: not eligible"
    assert got["reasons"][0]["nodes"] == 3
    assert got["reasons"][0]["sampleNodes"] == ["n0", "n1", "n2"]
    assert (got["preemptionMayHelp"], got["preemptionCannotHelp"]) == (0, 3)

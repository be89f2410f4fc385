"""Why a scheduling attempt failed: the node × plugin diagnosis, summarised.

``why_pending`` turns the ``FitError`` of one failed attempt into plain data
whose size does not grow with the cluster: statuses are grouped by
(plugin, code, reason) with a node count and at most ``SAMPLE_NODES`` node
names each, at most ``MAX_GROUPS`` groups (the rest folded into
``otherNodes``), the dominant reason, and how many nodes preemption could help
(``Unschedulable``) or not (``UnschedulableAndUnresolvable``).

The counts are the ones upstream's FitError histogram is made of, so a
group's ``nodes`` equals the number before its reason in the
FailedScheduling message (a node whose status carries two reasons counts in
two groups, as it does in that message).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from kubesched.framework.results import FitError, NodeToStatus
from kubesched.framework.status import Code, Status

SAMPLE_NODES: Final = 3
"""Node names kept per group."""

MAX_GROUPS: Final = 16
"""Groups kept per attempt (the largest); the others are counted only."""


def why_pending(fit: FitError, node_names: Sequence[str]) -> dict[str, Any]:
    """The summary of one FitError; ``node_names`` are the snapshot's nodes in
    order (for naming nodes the attempt never evaluated)."""
    diag = fit.diagnosis
    statuses = diag.node_to_status
    out: dict[str, Any] = {"numAllNodes": fit.num_all_nodes}
    if diag.pre_filter_msg:
        out["preFilter"] = {
            "plugins": sorted(diag.unschedulable_plugins),
            "message": diag.pre_filter_msg,
        }
    groups = _groups(statuses, fit.num_all_nodes, node_names)
    out["reasons"] = groups[:MAX_GROUPS]
    out["otherReasons"] = len(groups) - len(out["reasons"])
    out["dominantReason"] = groups[0]["reason"] if groups else None
    helps, cannot = _by_code(statuses, fit.num_all_nodes)
    out["preemptionMayHelp"] = helps
    out["preemptionCannotHelp"] = cannot
    if diag.post_filter_msg:
        out["postFilter"] = diag.post_filter_msg
    return out


def _groups(
    statuses: NodeToStatus, num_all_nodes: int, node_names: Sequence[str]
) -> list[dict[str, Any]]:
    """(plugin, code, reason) groups, largest first, then by plugin and reason."""
    counts: dict[tuple[str, str, str], int] = {}
    for status, n in statuses.status_counts():
        for key in _keys(status):
            counts[key] = counts.get(key, 0) + n
    absent = num_all_nodes - len(statuses)
    if absent > 0:
        for key in _keys(statuses.absent):
            counts[key] = counts.get(key, 0) + absent
    order = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    kept = dict(order[:MAX_GROUPS])
    samples = _samples(statuses, set(kept), node_names, absent > 0)
    return [
        {
            "plugin": plugin or None,
            "code": code,
            "reason": reason,
            "nodes": n,
            "sampleNodes": samples.get((plugin, code, reason), []),
        }
        for (plugin, code, reason), n in order
    ]


def _keys(status: Status) -> list[tuple[str, str, str]]:
    code = status.code.upstream_name
    return [(status.plugin, code, r) for r in status.reasons]


def _samples(
    statuses: NodeToStatus,
    wanted: set[tuple[str, str, str]],
    node_names: Sequence[str],
    has_absent: bool,
) -> dict[tuple[str, str, str], list[str]]:
    """Up to SAMPLE_NODES node names per wanted group, in the order the
    attempt recorded them (then snapshot order for unevaluated nodes)."""
    out: dict[tuple[str, str, str], list[str]] = {k: [] for k in wanted}
    open_ = set(wanted)
    for name, status in statuses:
        if not open_:
            break
        for key in _keys(status):
            if key in open_:
                names = out[key]
                names.append(name)
                if len(names) == SAMPLE_NODES:
                    open_.discard(key)
    absent_keys = [k for k in _keys(statuses.absent) if k in open_] if has_absent else []
    if absent_keys:
        explicit = statuses.explicit
        for name in node_names:
            if not absent_keys:
                break
            if name in explicit:
                continue
            for key in list(absent_keys):
                out[key].append(name)
                if len(out[key]) == SAMPLE_NODES:
                    absent_keys.remove(key)
    return out


def _by_code(statuses: NodeToStatus, num_all_nodes: int) -> tuple[int, int]:
    """Nodes whose status preemption may resolve, and nodes it cannot."""
    helps = cannot = 0
    for status, n in statuses.status_counts():
        if status.code == Code.UNSCHEDULABLE:
            helps += n
        elif status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            cannot += n
    absent = num_all_nodes - len(statuses)
    if absent > 0:
        if statuses.absent.code == Code.UNSCHEDULABLE:
            helps += absent
        elif statuses.absent.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            cannot += absent
    return helps, cannot

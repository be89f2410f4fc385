"""What would make a pending pod fit: the nearest nodes and the smallest change.

``what_would_fit`` runs every active Filter plugin of the pod's profile on
every node (not only up to the first rejection, as a scheduling cycle does),
so each node gets the full list of plugins that reject the pod. For the
plugins users most often fight, it says what would have to change:

- ``NodeResourcesFit``: per resource, how much is missing (the plugin's own
  ``ResourcePlan``: need minus what the node has left), and "Too many pods";
- ``TaintToleration``: the NoSchedule/NoExecute taints the pod does not
  tolerate (tolerate them, or remove them);
- ``NodeAffinity``: the ``nodeSelector`` labels the node lacks, and of the
  required node-affinity terms the one that fails on the fewest expressions;
- ``PodTopologySpread``: per DoNotSchedule constraint, the skew placing the pod
  there would make against ``maxSkew``, counted as upstream's default policies
  count (eligible nodes: those with the key that match the pod's node
  selector and affinity; pods of the namespace matching the selector);
- any other plugin: its reasons.

A pod a PreEnqueue plugin holds back (``spec.schedulingGates``) is named
first (``preEnqueue``): no node is tried before that passes.

Nodes are ranked by how many plugins reject the pod, then by how much
resource is missing (relative to the node's allocatable), then in snapshot
order; the first ``NEAREST`` are reported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from kubesched.api.quantity import format_bytes, format_milli_cpu
from kubesched.api.selectors import (
    label_selector_matches,
    match_node_selector_map,
    node_selector_term_matches,
    required_node_affinity_matches,
)
from kubesched.api.taints import do_not_schedule_taint, tolerations_tolerate_taint
from kubesched.api.types import CPU, EPHEMERAL_STORAGE, MEMORY, NodeSelectorTerm, Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.resources import ResourceFilterPlugin, ResourcePlan
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.framework import Framework

NEAREST: Final = 3
"""Nodes reported."""

DO_NOT_SCHEDULE: Final = "DoNotSchedule"


def what_would_fit(fwk: Framework, pod: Pod, nodes: Sequence[NodeInfo]) -> dict[str, Any]:
    """The nearest nodes for ``pod`` among ``nodes`` (the cluster as it is now)."""
    state = CycleState()
    info = PodInfo(pod)
    out: dict[str, Any] = {}
    gate = fwk.run_pre_enqueue_plugins(pod)
    if not gate.is_success():
        out["preEnqueue"] = {"plugin": gate.plugin, "message": gate.message()}
    _, pre, _ = fwk.run_pre_filter_plugins(state, info)
    if not pre.is_success():
        out["preFilter"] = {"plugin": pre.plugin, "message": pre.message()}
    plans = [
        p.resource_plan(state, info)
        for p in fwk.filter_plugins
        if isinstance(p, ResourceFilterPlugin)
    ]
    plan = next((p for p in plans if p is not None), None)
    ranked: list[tuple[int, float, int, dict[str, Any]]] = []
    skip = state.skip_filter_plugins
    active = [p for p in fwk.filter_plugins if p.name not in skip]
    for order, node in enumerate(nodes):
        blockers: list[dict[str, Any]] = []
        for p in active:
            s = p.filter(state, info, node)
            if s.is_success() or s.is_skip():
                continue
            blockers.append(_change(p.name, list(s.reasons), pod, node, nodes, plan))
        shortfall = sum(b.get("relativeShortfall", 0.0) for b in blockers)
        for b in blockers:
            b.pop("relativeShortfall", None)
        entry = {"node": node.name, "blockers": blockers}
        ranked.append((len(blockers), shortfall, order, entry))
    ranked.sort(key=lambda r: r[:3])
    out["fitsNow"] = [r[3]["node"] for r in ranked if r[0] == 0][:NEAREST]
    out["nearest"] = [r[3] for r in ranked if r[0] > 0][:NEAREST]
    return out


def _change(
    plugin: str,
    reasons: list[str],
    pod: Pod,
    node: NodeInfo,
    nodes: Sequence[NodeInfo],
    plan: ResourcePlan | None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"plugin": plugin, "reasons": reasons}
    if plugin == "NodeResourcesFit" and plan is not None:
        out.update(_resources(plan, node))
    elif plugin == "TaintToleration":
        out["untoleratedTaints"] = [
            f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"
            for t in (node.node.taints if node.node is not None else ())
            if do_not_schedule_taint(t) and not tolerations_tolerate_taint(pod.spec.tolerations, t)
        ]
    elif plugin == "NodeAffinity":
        out.update(_affinity(pod, node))
    elif plugin == "PodTopologySpread":
        out["constraints"] = _spread(pod, node, nodes)
    return out


def _labels(node: NodeInfo) -> Mapping[str, str]:
    return node.node.labels if node.node is not None else {}


def _resources(plan: ResourcePlan, node: NodeInfo) -> dict[str, Any]:
    """What is missing, per resource of the plan, and relative to the node's size."""
    missing: list[dict[str, Any]] = []
    relative = 0.0
    if len(node.pods) + 1 > node.allocatable.allowed_pod_number:
        missing.append({"resource": "pods", "missing": "1"})
        relative += 1.0
    for check in plan.checks:
        alloc = node.allocatable.get(check.resource)
        short = check.need - (alloc - node.requested.get(check.resource))
        if short <= 0:
            continue
        if check.resource == CPU:
            text = format_milli_cpu(short)
        elif check.resource in (MEMORY, EPHEMERAL_STORAGE):
            text = format_bytes(short)
        else:
            text = str(short)
        entry: dict[str, Any] = {"resource": check.resource, "missing": text}
        if check.need > alloc:
            entry["exceedsAllocatable"] = True  # no eviction can help
        missing.append(entry)
        relative += short / alloc if alloc else float(short)
    return {"missing": missing, "relativeShortfall": relative}


def _affinity(pod: Pod, node: NodeInfo) -> dict[str, Any]:
    labels = _labels(node)
    out: dict[str, Any] = {}
    selector = pod.spec.node_selector
    if selector and not match_node_selector_map(selector, labels):
        out["nodeSelector"] = [
            {"label": f"{k}={v}", "node": labels.get(k)}
            for k, v in sorted(selector.items())
            if labels.get(k) != v
        ]
    affinity = pod.spec.affinity
    required = (
        affinity.node_affinity.required
        if affinity is not None and affinity.node_affinity is not None
        else None
    )
    if required is not None and required.terms:
        best: list[str] | None = None
        for term in required.terms:
            failing = [
                f"{r.key} {r.operator} {list(r.values)}"
                for r in term.match_expressions
                if not node_selector_term_matches(
                    NodeSelectorTerm(match_expressions=(r,)), node.name, labels
                )
            ]
            failing += [
                f"{r.key} {r.operator} {list(r.values)}"
                for r in term.match_fields
                if not node_selector_term_matches(
                    NodeSelectorTerm(match_fields=(r,)), node.name, labels
                )
            ]
            if failing and (best is None or len(failing) < len(best)):
                best = failing
        if best:
            out["requiredTermFailing"] = best
    return out


def _spread(pod: Pod, node: NodeInfo, nodes: Sequence[NodeInfo]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for c in pod.spec.topology_spread_constraints:
        if c.when_unsatisfiable != DO_NOT_SCHEDULE:
            continue
        key = c.topology_key
        domain = _labels(node).get(key)
        if domain is None:
            out.append({"topologyKey": key, "nodeLacksKey": True})
            continue
        counts: dict[str, int] = {}
        for n in nodes:
            value = _labels(n).get(key)
            if (
                value is None
                or n.node is None
                or not required_node_affinity_matches(pod.spec, n.node)
            ):
                continue
            matching = sum(
                1
                for p in n.pods
                if p.pod.namespace == pod.namespace
                and label_selector_matches(c.label_selector, p.pod.labels)
            )
            counts[value] = counts.get(value, 0) + matching
        if not counts:
            continue
        self_match = 1 if label_selector_matches(c.label_selector, pod.labels) else 0
        skew = counts.get(domain, 0) + self_match - min(counts.values())
        out.append(
            {
                "topologyKey": key,
                "domain": domain,
                "matchingPods": counts.get(domain, 0),
                "fewestInADomain": min(counts.values()),
                "skew": skew,
                "maxSkew": c.max_skew,
            }
        )
    return out

"""``kubesched explain``'s text: one pod's life and its attempts, laid out like
``kubectl describe pod`` (``Key:  value`` lines, indented sections).

Reads only plain data: the pod's entry of the SimulationResult (``pods[]``)
and its entry of ``explanations``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubesched.cli.render import tabulate


def _field(key: str, value: object, indent: str = "") -> str:
    return f"{indent}{key + ':':<21}{value}"


def _seconds(t: float | None) -> str:
    return "<none>" if t is None else f"{t:g}s"


def describe(
    pod: dict[str, Any],
    explanation: dict[str, Any] | None,
    preemptions: Sequence[dict[str, Any]] = (),
    fits: dict[str, Any] | None = None,
) -> str:
    """The text for one pod life; ``preemptions`` are the result's entries in
    which the pod preempted or was a victim; ``fits`` what would make it fit."""
    lines = [
        _field("Name", pod["name"]),
        _field("Namespace", pod["namespace"]),
        _field("UID", pod["uid"]),
        _field("Priority", pod["priority"]),
        _field("Priority Class Name", pod["priorityClassName"] or "<none>"),
        _field("Status", pod["phase"]),
        _field("Node", pod["nodeName"] or "<none>"),
        _field("Nominated Node", pod["nominatedNodeName"] or "<none>"),
        _field("Created", _seconds(pod["createdAt"])),
        _field("Scheduled", _seconds(pod["scheduledAt"])),
    ]
    if pod["deletedAt"] is not None:
        lines.append(_field("Deleted", f"{_seconds(pod['deletedAt'])} ({pod['deletionReason']})"))
    me = f"{pod['namespace']}/{pod['name']}"
    for p in preemptions:
        if p["preemptor"] == me:
            victims = ", ".join(p["victims"])
            lines.append(
                _field("Preempted", f"{victims} on {p['node']} at {_seconds(p['time'])}")
                + f" ({p['numPDBViolations']} PDB violation(s))"
            )
        else:
            lines.append(
                _field("Preempted By", f"{p['preemptor']} on {p['node']} at {_seconds(p['time'])}")
            )
    if explanation is None:
        lines.append(_field("Attempts", "none (never popped from the scheduling queue)"))
        return "\n".join(lines) + "\n"
    history: Sequence[dict[str, Any]] = explanation["history"]
    shown = "" if len(history) == explanation["attempts"] else f" ({len(history)} kept)"
    lines.append(_field("Attempts", f"{explanation['attempts']}{shown}"))
    if explanation["queue"]:
        left = "" if len(explanation["queue"]) == explanation["queueMoves"] else " (some left out)"
        lines.append(f"Queue{left}:")
        rows = [["TIME", "QUEUE", "EVENT", "HINT", "WAITING FOR"]]
        for m in explanation["queue"]:
            waiting = ", ".join(m.get("waitingFor", [])) or "-"
            rows.append([_seconds(m["time"]), m["queue"], m["event"], m.get("hint", "-"), waiting])
        lines.extend("  " + line for line in tabulate(rows).splitlines())
    for attempt in history:
        lines.append("")
        lines.extend(_attempt(attempt))
    if fits is not None:
        lines.append("")
        lines.extend(_fits(fits))
    return "\n".join(lines) + "\n"


def _fits(f: dict[str, Any]) -> list[str]:
    out = ["What would make it fit (the cluster at the end of the run):"]
    if "preEnqueue" in f:
        g = f["preEnqueue"]
        out.append(f"  PreEnqueue {g['plugin']}: {g['message']} (no node is tried until it passes)")
    if "preFilter" in f:
        out.append(f"  PreFilter {f['preFilter']['plugin']}: {f['preFilter']['message']}")
    if f["fitsNow"]:
        out.append(f"  Every Filter plugin admits it now on {', '.join(f['fitsNow'])}")
    for n in f["nearest"]:
        out.append(f"  {n['node']}:")
        for b in n["blockers"]:
            out.append(f"    {b['plugin']}: {_blocker(b)}")
    return out


def _blocker(b: dict[str, Any]) -> str:
    if "missing" in b:
        parts = [
            f"{m['missing']} more {m['resource']}"
            + (" (more than the node's allocatable)" if m.get("exceedsAllocatable") else "")
            for m in b["missing"]
        ]
        return "needs " + ", ".join(parts)
    if "untoleratedTaints" in b:
        return "tolerate (or remove) " + ", ".join(b["untoleratedTaints"])
    if "nodeSelector" in b or "requiredTermFailing" in b:
        parts = [
            f"label {s['label']} (node has {s['node'] or 'none'})"
            for s in b.get("nodeSelector", [])
        ]
        parts += [f"affinity {e}" for e in b.get("requiredTermFailing", [])]
        return "node lacks " + "; ".join(parts)
    if "constraints" in b:
        parts = [
            f"{c['topologyKey']}={c['domain']}: skew {c['skew']} > maxSkew {c['maxSkew']}"
            if "skew" in c
            else f"node has no label {c['topologyKey']}"
            for c in b["constraints"]
        ]
        return "; ".join(parts) or "; ".join(b["reasons"])
    return "; ".join(b["reasons"])


def _attempt(a: dict[str, Any]) -> list[str]:
    head = f"Attempt {a['attempt']} at {_seconds(a['time'])}: {a['result']}"
    if a["result"] == "Scheduled":
        out = [head + f" on {a['node']}"]
        out.append(f"  {a['feasibleNodes']} feasible of {a['evaluatedNodes']} evaluated node(s)")
        if a.get("tiedNodes"):
            sample = ", ".join(a["sampleTiedNodes"])
            out.append(
                f"  {a['tiedNodes']} node(s) tied for the best score ({sample}, ...);"
                " the pick among them is random, as upstream's"
            )
        if a["scores"]:
            out.append("  Scores of the chosen node (weighted):")
            out.extend(f"    {p:<32}{s}" for p, s in a["scores"].items())
        return out
    out = [head, f"  Message: {a['message']}"]
    if "preFilter" in a:
        pf = a["preFilter"]
        plugins = ", ".join(pf["plugins"]) or "<none>"
        out.append(f"  Rejected at PreFilter by {plugins}: {pf['message']}")
    if a.get("reasons"):
        out.append("  Why, by plugin (nodes):")
        rows = [["PLUGIN", "CODE", "REASON", "NODES", "FOR EXAMPLE"]]
        for g in a["reasons"]:
            rows.append(
                [
                    g["plugin"] or "<none>",
                    g["code"],
                    g["reason"],
                    str(g["nodes"]),
                    ", ".join(g["sampleNodes"]) or "-",
                ]
            )
        out.extend("    " + line for line in tabulate(rows).splitlines())
        if a["otherReasons"]:
            out.append(f"    ... and {a['otherReasons']} more reason(s)")
        out.append(
            f"  Preemption may help on {a['preemptionMayHelp']} node(s)"
            f" (Unschedulable); cannot on {a['preemptionCannotHelp']}"
            " (UnschedulableAndUnresolvable)"
        )
    if "preemption" in a:
        out.extend(_preemption(a["preemption"]))
    if "nominatedNode" in a:
        out.append(f"  Preemption nominated node {a['nominatedNode']}")
    return out


def _preemption(p: dict[str, Any]) -> list[str]:
    out = [
        f"  Preemption: dry run from offset {p['offset']}, looking for {p['numCandidates']}"
        f" candidate(s); found {p['candidatesFound']}"
    ]
    for r in p.get("dryRunRejected", []):
        out.append(f"    not a candidate ({r['nodes']} node(s)): {r['reason']}")
    if p.get("candidates"):
        rows = [
            [
                "NODE",
                "VICTIMS",
                "PDB VIOLATIONS",
                "HIGHEST PRIORITY",
                "PRIORITY SUM",
                "EARLIEST START",
            ]
        ]
        for c in p["candidates"]:
            start = "-" if c["earliestStartTime"] is None else f"{c['earliestStartTime']:g}s"
            rows.append(
                [
                    c["node"],
                    ", ".join(c["victims"]) or "-",
                    str(c["pdbViolations"]),
                    str(c["highestPriority"]),
                    str(c["prioritySum"]),
                    start,
                ]
            )
        out.extend("    " + line for line in tabulate(rows).splitlines())
    for n in p.get("narrowing", []):
        names = ", ".join(n["sampleEliminated"])
        out.append(f"    {n['criterion']}: eliminated {n['eliminated']} ({names})")
    decided = p.get("decidedBy")
    if "chosen" in p:
        why = f"decided by {decided}" if decided else "decided by the plugin's own criteria"
        if decided == "only candidate":
            why = "the only candidate"
        if "runnerUp" in p:
            why += (
                f": {p['chosenValue']} against {p['runnerUpValue']} on {p['runnerUp']}"
                " (the runner-up)"
            )
        elif "tiedCandidates" in p:
            why += f" among {p['tiedCandidates']} equal candidates"
        out.append(f"    Chose {p['chosen']}, {why}")
        for pod in p["chosenNodePods"]:
            pdb = " (violates a PodDisruptionBudget)" if pod.get("violatesPDB") else ""
            out.append(f"      {pod['pod']} (priority {pod['priority']}): {pod['verdict']}{pdb}")
    return out

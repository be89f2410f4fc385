"""``--report FILE.html``: one self-contained HTML page of a SimulationResult.

Plots are Plotly figures (plotly.py writes them, plotly.js draws them; the
library is inlined once, so the page opens offline, with zoom and hover on
every plot). Plotly was chosen over matplotlib (static images, no hover over
thousands of pods), Bokeh (heavier to inline, a server for most interaction)
and Altair/Vega (needs a separate renderer to inline offline).

The page reads only the document (``build_result``'s plain data), so a saved
``-o json`` gives the same page (``kubesched report RESULT.json``):

- the run's summary (pods by outcome, preemptions, simulated time, seed);
- a timeline per node: each pod's stay there (bound to deleted or the end),
  coloured by priority class, preemptions marked;
- Pending pods over time per priority class;
- requested share of each node resource over time (when the document has
  ``nodes``, from ``--show nodes``, and pods' ``requests``);
- the scheduling delay (bound minus created) per priority class;
- victims per preemptor;
- the preemptions table, linked to the explanations when the document has
  them (``--explain``).

The output is deterministic: the same document gives the same bytes.
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any, Final

import plotly.graph_objects as go
import plotly.io as pio

from kubesched.api.quantity import parse_quantity
from kubesched.report.metrics import resource_order

PALETTE: Final = (
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
)  # fmt: skip
NO_CLASS: Final = "(no class)"
PODS: Final = "pods"
_CONFIG: Final = {"displaylogo": False, "responsive": True}
_CSS: Final = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.9em; }
td, th { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }
.plot { min-height: 360px; }
.summary td:first-child { font-weight: 600; }
tr.differs td { background: #fff3cd; }
"""


def _class(p: dict[str, Any]) -> str:
    return str(p.get("priorityClassName") or NO_CLASS)


def _colours(pods: Sequence[dict[str, Any]]) -> dict[str, str]:
    classes = sorted({_class(p) for p in pods}, key=lambda c: (c == NO_CLASS, c))
    return {c: PALETTE[i % len(PALETTE)] for i, c in enumerate(classes)}


def timeline(doc: dict[str, Any], colours: dict[str, str]) -> go.Figure:
    end = doc["simulatedSeconds"]
    fig = go.Figure()
    by_class: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in doc["pods"]:
        if p["nodeName"] and p["scheduledAt"] is not None:
            by_class[_class(p)].append(p)
    for cls, pods in sorted(by_class.items()):
        starts = [max(p["scheduledAt"], 0.0) for p in pods]
        stops = [p["deletedAt"] if p["deletedAt"] is not None else end for p in pods]
        fig.add_trace(
            go.Bar(
                name=cls,
                orientation="h",
                y=[p["nodeName"] for p in pods],
                base=starts,
                x=[max(b - a, 0.0) for a, b in zip(starts, stops, strict=True)],
                marker_color=colours[cls],
                hovertext=[
                    f"{p['namespace']}/{p['name']} (priority {p['priority']})" for p in pods
                ],
                hoverinfo="text+x",
            )
        )
    pre = doc["preemptions"]
    if pre:
        fig.add_trace(
            go.Scatter(
                name="preemption",
                mode="markers",
                x=[p["time"] for p in pre],
                y=[p["node"] for p in pre],
                marker={"symbol": "x", "size": 11, "color": "black"},
                hovertext=[f"{p['preemptor']} evicts {', '.join(p['victims'])}" for p in pre],
                hoverinfo="text",
            )
        )
    fig.update_layout(barmode="overlay", xaxis_title="simulated seconds", yaxis_title="node")
    return fig


def pending_series(
    doc: dict[str, Any], group: Callable[[dict[str, Any]], str] = _class
) -> dict[str, tuple[list[float], list[int]]]:
    """Pending pods over time per ``group`` of pod (by default its priority class):
    step points (times, counts), +1 when a pod is created, -1 when it is bound or
    leaves while pending; from 0 to the end of the run."""
    changes: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for p in doc["pods"]:
        stop = p["scheduledAt"] if p["scheduledAt"] is not None else p["deletedAt"]
        if stop is not None and stop <= p["createdAt"]:
            continue  # never pending (created bound)
        changes[group(p)].append((p["createdAt"], 1))
        if stop is not None:
            changes[group(p)].append((stop, -1))
    out = {}
    for key, steps in sorted(changes.items()):
        steps.sort()
        xs, ys, n = [0.0], [0], 0
        for t, d in steps:
            n += d
            xs.append(t)
            ys.append(n)
        xs.append(doc["simulatedSeconds"])
        ys.append(n)
        out[key] = (xs, ys)
    return out


def pending_over_time(doc: dict[str, Any], colours: dict[str, str]) -> go.Figure:
    """A step line per priority class (``pending_series``)."""
    fig = go.Figure()
    for cls, (xs, ys) in pending_series(doc).items():
        fig.add_trace(
            go.Scatter(name=cls, x=xs, y=ys, mode="lines", line_shape="hv", line_color=colours[cls])
        )
    fig.update_layout(xaxis_title="simulated seconds", yaxis_title="pending pods")
    return fig


def allocation(doc: dict[str, Any]) -> go.Figure | None:
    """Requested share of the cluster's allocatable over time, one line per
    resource the nodes have and some bound pod requests (``pods``: pod count)."""
    nodes = doc.get("nodes")
    if not nodes or not any("requests" in p for p in doc["pods"]):
        return None
    total: dict[str, float] = defaultdict(float)
    for n in nodes:
        for r, v in n["allocatable"].items():
            total[r] += float(parse_quantity(v))
    steps: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for p in doc["pods"]:
        if p["scheduledAt"] is None or not p["nodeName"]:
            continue
        amounts = {r: float(parse_quantity(v)) for r, v in (p.get("requests") or {}).items()}
        amounts[PODS] = 1.0
        for r, amount in amounts.items():
            if amount and total.get(r):
                steps[r].append((max(p["scheduledAt"], 0.0), amount))
                if p["deletedAt"] is not None:
                    steps[r].append((p["deletedAt"], -amount))
    fig = go.Figure()
    for r in sorted(steps, key=resource_order):
        xs, ys, used = [0.0], [0.0], 0.0
        for t, d in sorted(steps[r]):
            used += d
            xs.append(t)
            ys.append(100.0 * used / total[r])
        xs.append(doc["simulatedSeconds"])
        ys.append(ys[-1])
        fig.add_trace(go.Scatter(name=r, x=xs, y=ys, mode="lines", line_shape="hv"))
    fig.update_layout(xaxis_title="simulated seconds", yaxis_title="% of allocatable requested")
    return fig


def delays(doc: dict[str, Any], colours: dict[str, str]) -> go.Figure:
    fig = go.Figure()
    by_class: dict[str, list[float]] = defaultdict(list)
    for p in doc["pods"]:
        if p["scheduledAt"] is not None and p["scheduledAt"] >= p["createdAt"]:
            by_class[_class(p)].append(p["scheduledAt"] - p["createdAt"])
    for cls, values in sorted(by_class.items()):
        fig.add_trace(go.Box(name=cls, y=values, boxpoints="all", marker_color=colours[cls]))
    fig.update_layout(yaxis_title="scheduling delay (s)", showlegend=False)
    return fig


def victims(doc: dict[str, Any]) -> go.Figure:
    counts: dict[str, int] = defaultdict(int)
    for p in doc["preemptions"]:
        counts[p["preemptor"]] += len(p["victims"])
    names = sorted(counts, key=lambda k: (-counts[k], k))
    fig = go.Figure(go.Bar(x=names, y=[counts[k] for k in names], marker_color=PALETTE[2]))
    fig.update_layout(xaxis_title="preemptor", yaxis_title="victims")
    return fig


def _summary(doc: dict[str, Any]) -> str:
    pods = doc["pods"]
    rows = [
        ("pods", len(pods)),
        ("scheduled", sum(p["scheduledAt"] is not None for p in pods)),
        (
            "pending at the end",
            sum(p["phase"] == "Pending" and p["deletedAt"] is None for p in pods),
        ),
        ("preempted", sum(p["deletionReason"] == "Preempted" for p in pods)),
        ("preemptions", len(doc["preemptions"])),
        ("simulated seconds", doc["simulatedSeconds"]),
        ("seed", doc["seed"]),
    ]
    cells = "".join(f"<tr><td>{html.escape(k)}</td><td>{v}</td></tr>" for k, v in rows)
    return f'<table class="summary">{cells}</table>'


def _preemptions_table(doc: dict[str, Any]) -> str:
    explained = {f"{e['namespace']}/{e['name']}" for e in doc.get("explanations", [])}
    rows = []
    for p in doc["preemptions"]:
        who = html.escape(p["preemptor"])
        if p["preemptor"] in explained:
            who = f'<a href="#why-{who}">{who}</a>'
        rows.append(
            f"<tr><td>{p['time']:g}</td><td>{who}</td><td>{html.escape(p['node'])}</td>"
            f"<td>{html.escape(', '.join(p['victims']))}</td><td>{p['numPDBViolations']}</td></tr>"
        )
    head = (
        "<tr><th>time (s)</th><th>preemptor</th><th>node</th><th>victims</th>"
        "<th>PDB violations</th></tr>"
    )
    return f"<table>{head}{''.join(rows)}</table>" if rows else "<p>No preemption.</p>"


def _explanations(doc: dict[str, Any]) -> str:
    parts = []
    for e in doc.get("explanations", []):
        key = f"{e['namespace']}/{e['name']}"
        last = e["history"][-1] if e["history"] else None
        line = ""
        if last is not None:
            line = last.get("message") or f"Scheduled on {last.get('node')}"
        pre = next((a["preemption"] for a in reversed(e["history"]) if "preemption" in a), None)
        extra = ""
        if pre is not None and "chosen" in pre:
            extra = (
                f"<br>preemption chose {html.escape(pre['chosen'])}: "
                f"{html.escape(str(pre.get('decidedBy')))}"
            )
        parts.append(
            f'<li id="why-{html.escape(key)}"><b>{html.escape(key)}</b>: {e["attempts"]} '
            f"attempt(s); last: {html.escape(line)}{extra}</li>"
        )
    return f"<ul>{''.join(parts)}</ul>" if parts else ""


def figure_html(fig: go.Figure, div_id: str, first: bool) -> str:
    """``fig`` as a plot ``div``; ``first``: the page's first plot carries plotly.js."""
    fig.update_layout(template="plotly_white", margin={"l": 60, "r": 20, "t": 30, "b": 50})
    out: str = pio.to_html(
        fig,
        include_plotlyjs=first,
        full_html=False,
        div_id=div_id,
        config=_CONFIG,
        validate=False,
    )
    return f'<div class="plot">{out}</div>'


def render(doc: dict[str, Any], title: str = "kubesched simulation") -> str:
    """The page for one SimulationResult document."""
    colours = _colours(doc["pods"])
    figures: list[tuple[str, str, go.Figure | None]] = [
        ("timeline", "Pods per node over time", timeline(doc, colours)),
        ("pending", "Pending pods per priority class", pending_over_time(doc, colours)),
        ("allocation", "Requested share of allocatable", allocation(doc)),
        ("delay", "Scheduling delay per priority class", delays(doc, colours)),
        ("victims", "Victims per preemptor", victims(doc)),
    ]
    body = [f"<h1>{html.escape(title)}</h1>", "<h2>Summary</h2>", _summary(doc)]
    first = True
    for div_id, heading, fig in figures:
        if fig is None:
            continue
        body.append(f"<h2>{html.escape(heading)}</h2>")
        body.append(figure_html(fig, div_id, first))
        first = False
    body.append("<h2>Preemptions</h2>")
    body.append(_preemptions_table(doc))
    why = _explanations(doc)
    if why:
        body.append("<h2>Explanations</h2>")
        body.append(why)
    return page(title, body)


def page(title: str, body: Sequence[str]) -> str:
    """The self-contained page around ``body``'s HTML parts."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )
